//! One model per key: a [`BoostOperator`] for each value of a key column, each fed its own
//! rows in order, as `PARTITION BY key` gives each partition its own model.

use std::collections::HashMap;
use std::fmt;
use std::path::PathBuf;

use arrow::array::{Array, AsArray, UInt32Array};
use arrow::compute::{interleave_record_batch, take_record_batch};
use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;

use super::operator::{BatchOperator, BoostOperator, output_schema};
use super::rows::utf8;
use crate::learner::{Classifier, Ranker};
use crate::{Error, Result};

/// Builds the operator of a key seen for the first time (`None` is the null key).
pub type OperatorFactory<M> = Box<dyn FnMut(Option<&str>) -> Result<BoostOperator<M>> + Send>;

/// A [`BoostOperator`] per value of the key column. A batch's rows are split by key, each
/// key's rows go through its own operator in their order, and the outputs are put back in
/// the input's row order. Keys are compared by their text (after a cast to UTF-8); the
/// null key is a key of its own.
pub struct KeyedOperator<M> {
    key: String,
    key_column: usize,
    schema: SchemaRef,
    factory: OperatorFactory<M>,
    operators: HashMap<Option<String>, BoostOperator<M>>,
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
            key_column,
            schema: output_schema(&input, label, classes),
            factory,
            operators: HashMap::new(),
        })
    }

    /// The operator of each key met so far.
    pub fn operators(&self) -> impl Iterator<Item = (Option<&str>, &BoostOperator<M>)> {
        self.operators.iter().map(|(k, op)| (k.as_deref(), op))
    }

    /// The operator of `key`, made on first use.
    fn operator(&mut self, key: Option<&str>) -> Result<&mut BoostOperator<M>> {
        let owned = key.map(str::to_string);
        if !self.operators.contains_key(&owned) {
            let op = (self.factory)(key)?;
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
        let keys = utf8(
            batch.column(self.key_column).as_ref(),
            &PathBuf::from("record batch"),
            &self.key,
        )?;
        let keys = keys.as_string::<i32>();
        let key_of = |r: usize| keys.is_valid(r).then(|| keys.value(r));
        let n = batch.num_rows();
        if n == 0 || (1..n).all(|r| key_of(r) == key_of(0)) {
            // One key in the batch, as when the input is clustered by key: no split.
            return self.operator(key_of(0))?.process(batch);
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
            let part = take_record_batch(batch, &UInt32Array::from(rows))
                .expect("row indices are in range");
            outputs.push(self.operator(key)?.process(&part)?);
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
