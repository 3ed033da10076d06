//! One model per key: a [`BoostOperator`] for each value of a key column, each fed its own
//! rows in order, as `PARTITION BY key` gives each partition its own model.

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::path::PathBuf;

use arrow::array::{Array, AsArray, UInt32Array};
use arrow::compute::{interleave_record_batch, take_record_batch};
use arrow::datatypes::{DataType, SchemaRef};
use arrow::record_batch::RecordBatch;

use super::delayed::outcome_schema;
use super::operator::{BatchOperator, BoostOperator, output_schema};
use super::rows::utf8;
use crate::learner::{Classifier, Ranker};
use crate::{Error, Result};

/// Builds the operator of a key seen for the first time (`None` is the null key), for
/// batches of the given input schema.
pub type OperatorFactory<M> =
    Box<dyn FnMut(Option<&str>, &SchemaRef) -> Result<BoostOperator<M>> + Send>;

/// A [`BoostOperator`] per value of the key column. A batch's rows are split by key, each
/// key's rows go through its own operator in their order, and the outputs are put back in
/// the input's row order. Keys are compared by their text (after a cast to UTF-8); the
/// null key is a key of its own.
pub struct KeyedOperator<M> {
    key: String,
    label: String,
    key_column: usize,
    input: SchemaRef,
    schema: SchemaRef,
    factory: OperatorFactory<M>,
    operators: HashMap<Option<String>, BoostOperator<M>>,
    /// Keys that took rows since [`KeyedOperator::clear_touched`] was last called.
    touched: BTreeSet<Option<String>>,
}

impl<M: Classifier + Ranker> KeyedOperator<M> {
    /// One operator per value of column `key` of `input`, each made by `factory` when its
    /// key first appears. Every operator must have the output schema of `input`, `label`
    /// and `classes`.
    pub fn new(
        input: SchemaRef,
        key: &str,
        label: &str,
        classes: &[String],
        factory: OperatorFactory<M>,
    ) -> Result<Self> {
        let key_column = input
            .index_of(key)
            .map_err(|_| Error::missing_column("record batch", key, &input))?;
        Ok(KeyedOperator {
            key: key.to_string(),
            label: label.to_string(),
            key_column,
            schema: output_schema(&input, label, classes),
            input,
            factory,
            operators: HashMap::new(),
            touched: BTreeSet::new(),
        })
    }

    /// The keys that took rows since [`KeyedOperator::clear_touched`] was last called, in
    /// key order (the null key first), and their operators.
    pub fn touched(&mut self) -> Vec<(Option<&str>, &mut BoostOperator<M>)> {
        let touched = &self.touched;
        let mut operators: Vec<_> = self
            .operators
            .iter_mut()
            .filter(|(k, _)| touched.contains(*k))
            .map(|(k, op)| (k.as_deref(), op))
            .collect();
        operators.sort_by(|a, b| a.0.cmp(&b.0));
        operators
    }

    /// Forgets which keys took rows (after their state was saved).
    pub fn clear_touched(&mut self) {
        self.touched.clear();
    }

    /// The same operators on batches of another `input` schema (the next file of a job),
    /// `source` naming it in errors. An input that does not fit is refused, and the
    /// operators given back as they were, with the error.
    pub fn rebind(
        mut self,
        input: SchemaRef,
        source: &std::path::Path,
    ) -> std::result::Result<Self, Box<(Self, Error)>> {
        let key_column = match input.index_of(&self.key) {
            Ok(i) => i,
            Err(_) => {
                let e = Error::missing_column(source, self.key.clone(), &input);
                return Err(Box::new((self, e)));
            }
        };
        let old = self.input.clone();
        let mut rebound = HashMap::with_capacity(self.operators.len());
        let mut failed = None;
        for (key, op) in std::mem::take(&mut self.operators) {
            if failed.is_some() {
                rebound.insert(key, op);
                continue;
            }
            match op.rebind(input.clone(), source) {
                Ok(op) => {
                    rebound.insert(key, op);
                }
                Err(e) => {
                    let (op, e) = *e;
                    failed = Some((key.clone(), e));
                    rebound.insert(key, op);
                }
            }
        }
        if let Some((failed_key, e)) = failed {
            // Every key reads the same columns, so the first refusal is everyone's: the keys
            // already moved go back to the schema they came from, which they were bound to.
            for (key, op) in rebound {
                let op = match op.input_schema() == &old || key == failed_key {
                    true => op,
                    false => op.rebind(old.clone(), source).unwrap_or_else(|e| e.0),
                };
                self.operators.insert(key, op);
            }
            return Err(Box::new((self, e)));
        }
        self.operators = rebound;
        self.schema = match self.operators.values().next() {
            Some(op) => op.schema(),
            None => self.schema,
        };
        self.key_column = key_column;
        self.input = input;
        Ok(self)
    }

    /// The operator of each key met so far.
    pub fn operators(&self) -> impl Iterator<Item = (Option<&str>, &BoostOperator<M>)> {
        self.operators.iter().map(|(k, op)| (k.as_deref(), op))
    }

    /// The operator of `key`, made on first use.
    fn operator(&mut self, key: Option<&str>) -> Result<&mut BoostOperator<M>> {
        let owned = key.map(str::to_string);
        if !self.operators.contains_key(&owned) {
            let op = (self.factory)(key, &self.input)?;
            if op.schema() != self.schema {
                return Err(Error::config(
                    "key",
                    format!(
                        "the operator made for key {key:?} of `{}` has another output schema",
                        self.key
                    ),
                ));
            }
            self.operators.insert(owned.clone(), op);
        }
        Ok(self.operators.get_mut(&owned).expect("inserted above"))
    }
}

impl<M: Classifier + Ranker> BatchOperator for KeyedOperator<M> {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn process(&mut self, batch: &RecordBatch) -> Result<RecordBatch> {
        let schema = self.schema.clone();
        self.by_key(batch, self.key_column, schema, |op, rows| op.process(rows))
    }

    /// Labels that arrive after their events go to their key's operator (the key column is
    /// in the labels too): one pending store per key, saved with that key's model, so a key
    /// is committed, evicted and restored whole.
    fn labels(&mut self, batch: &RecordBatch) -> Result<RecordBatch> {
        let key_column = batch
            .schema()
            .index_of(&self.key)
            .map_err(|_| Error::missing_column("labels", self.key.clone(), &batch.schema()))?;
        let predicted = self
            .schema
            .field_with_name(&format!("predicted_{}", self.label));
        let label_type = predicted.map_or(DataType::Utf8, |f| f.data_type().clone());
        let schema = outcome_schema(&batch.schema(), &self.label, &label_type);
        self.by_key(batch, key_column, schema, |op, rows| op.labels(rows))
    }
}

impl<M: Classifier + Ranker> KeyedOperator<M> {
    /// `apply` over the rows of each key of `batch` (key column `key_column`), in their
    /// order; the outputs (of `schema`) put back in the batch's row order.
    fn by_key(
        &mut self,
        batch: &RecordBatch,
        key_column: usize,
        schema: SchemaRef,
        mut apply: impl FnMut(&mut BoostOperator<M>, &RecordBatch) -> Result<RecordBatch>,
    ) -> Result<RecordBatch> {
        let keys = utf8(
            batch.column(key_column).as_ref(),
            &PathBuf::from("record batch"),
            &self.key,
        )?;
        let keys = keys.as_string::<i32>();
        let key_of = |r: usize| keys.is_valid(r).then(|| keys.value(r));
        let n = batch.num_rows();
        if n == 0 {
            return Ok(RecordBatch::new_empty(schema));
        }
        if (1..n).all(|r| key_of(r) == key_of(0)) {
            // One key in the batch, as when the input is clustered by key: no split.
            self.touched.insert(key_of(0).map(str::to_string));
            return apply(self.operator(key_of(0))?, batch);
        }
        // Group the rows by key, groups in order of first appearance.
        let mut index: HashMap<Option<&str>, usize> = HashMap::new();
        let mut groups: Vec<Vec<u32>> = Vec::new();
        let mut row_group = Vec::with_capacity(n);
        for r in 0..n {
            let g = *index.entry(key_of(r)).or_insert_with(|| {
                groups.push(Vec::new());
                groups.len() - 1
            });
            groups[g].push(r as u32);
            row_group.push(g);
        }
        let mut outputs = Vec::with_capacity(groups.len());
        for rows in groups {
            let key = key_of(rows[0] as usize);
            self.touched.insert(key.map(str::to_string));
            let part = take_record_batch(batch, &UInt32Array::from(rows))
                .expect("row indices are in range");
            outputs.push(apply(self.operator(key)?, &part)?);
        }
        // Row r of the batch is the next unused row of its group's output.
        let mut next = vec![0usize; outputs.len()];
        let order: Vec<(usize, usize)> = row_group
            .iter()
            .map(|&g| {
                next[g] += 1;
                (g, next[g] - 1)
            })
            .collect();
        let outputs: Vec<&RecordBatch> = outputs.iter().collect();
        interleave_record_batch(&outputs, &order).map_err(|e| Error::Format {
            file: PathBuf::from("record batch"),
            message: e.to_string(),
        })
    }
}

impl<M> fmt::Debug for KeyedOperator<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyedOperator")
            .field("key", &self.key)
            .field("keys", &self.operators.len())
            .finish_non_exhaustive()
    }
}
