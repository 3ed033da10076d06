//! One model per key: a [`Cursor`] for each value of a key column, each fed its own
//! rows in order, as `PARTITION BY key` gives each partition its own model.
//!
//! **Bounded memory.** With a budget ([`KeyedOperator::bound_memory`]), the keys' operators
//! are held within a number of bytes (as [`Cursor::heap_bytes`] estimates them).
//! Between batches, when the resident keys exceed the budget, the least recently used are
//! evicted until they fit in nine tenths of it (so that eviction comes in rounds, not at
//! every batch): a key that took rows since it was last written is handed to the
//! [`SpillFn`] first (a live model writes it to its keyed checkpoint's directory), a key that
//! did not is dropped, its state being on disk already. The key's next row loads it back
//! through the [`OperatorFactory`], so an evicted key goes on exactly as if it had stayed:
//! eviction changes no prediction (a test replays a stream under a budget that evicts at
//! every batch). Ties in recency are broken by key, so which keys go is deterministic.

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::path::PathBuf;

use arrow::array::{Array, AsArray, UInt32Array};
use arrow::compute::{interleave_record_batch, take_record_batch};
use arrow::datatypes::{DataType, SchemaRef};
use arrow::record_batch::RecordBatch;

pub mod checkpoint;

use crate::columnar::{output_schema, utf8};
use crate::eval::DriftCounts;
use crate::learner::{Classifier, Ranker};
use crate::runtime::{BatchOperator, Cursor, outcome_schema};
use crate::weak::Structure;
use crate::{Error, Result};

/// Builds the operator of a key seen for the first time (`None` is the null key), for
/// batches of the given input schema.
pub type OperatorFactory<M> = Box<dyn FnMut(Option<&str>, &SchemaRef) -> Result<Cursor<M>> + Send>;

/// Writes evicted keys' operators where the [`OperatorFactory`] will find them again.
pub type SpillFn<M> = Box<dyn FnMut(Vec<(Option<&str>, &mut Cursor<M>)>) -> Result<()> + Send>;

/// What a keyed operator's memory holds and what went through it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KeyMemory {
    /// Keys whose operators are in memory.
    pub resident_keys: usize,
    /// Their estimated bytes.
    pub resident_bytes: usize,
    /// Operators made by the factory (a key met for the first time, or again after it was
    /// evicted).
    pub loads: u64,
    /// Evicted keys that had learnt since last written, and were written.
    pub spills: u64,
    /// Evicted keys that had not, and were dropped.
    pub drops: u64,
}

/// A key's operator in memory.
struct Resident<M> {
    operator: Cursor<M>,
    /// Its estimated bytes, as of the last batch it took.
    bytes: usize,
    /// The batch it last took rows in.
    last_used: u64,
    /// Its model's drift counts when last looked at (`None`: the model has no drift
    /// response).
    drift: Option<DriftCounts>,
}

impl<M: Classifier + Ranker + Structure> Resident<M> {
    /// What the model's drift response did since the last look.
    fn drift_since_look(&mut self) -> Option<DriftCounts> {
        let earlier = self.drift?;
        let now = DriftCounts::of(self.operator.model())?;
        self.drift = Some(now);
        Some(now.since(earlier))
    }
}

impl<M: Structure> Resident<M> {
    /// `rows` through `apply` on the operator, its bytes estimated again after.
    fn take(
        &mut self, rows: &RecordBatch,
        apply: &impl Fn(&mut Cursor<M>, &RecordBatch) -> Result<RecordBatch>,
    ) -> Result<RecordBatch> {
        let out = apply(&mut self.operator, rows);
        self.bytes = self.operator.heap_bytes();
        out
    }
}

/// A [`Cursor`] per value of the key column. A batch's rows are split by key, each
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
    operators: HashMap<Option<String>, Resident<M>>,
    /// Keys that took rows since [`KeyedOperator::clear_touched`] was last called (or, for an
    /// evicted key, since it was spilled): whose state in memory is newer than on disk.
    touched: BTreeSet<Option<String>>,
    /// What the keys' drift responses did since [`KeyedOperator::clear_touched`] was last
    /// called (`None` while no key with a drift response was met).
    drift: Option<DriftCounts>,
    /// The memory budget in bytes, and where evicted keys go.
    budget: Option<(usize, SpillFn<M>)>,
    /// Batches taken; the clock of least-recent use.
    batches: u64,
    memory: KeyMemory,
    /// Threads a batch's keys are spread over.
    threads: usize,
}

impl<M: Classifier + Ranker + Structure> KeyedOperator<M> {
    /// One operator per value of column `key` of `input`, each made by `factory` when its
    /// key first appears. Every operator must have the output schema of `input`, `label`
    /// and `classes`.
    pub fn new(
        input: SchemaRef, key: &str, label: &str, classes: &[String], factory: OperatorFactory<M>,
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
            drift: None,
            budget: None,
            batches: 0,
            memory: KeyMemory::default(),
            threads: 1,
        })
    }

    /// The keys that took rows since [`KeyedOperator::clear_touched`] was last called, in
    /// key order (the null key first), and their operators.
    pub fn touched(&mut self) -> Vec<(Option<&str>, &mut Cursor<M>)> {
        let touched = &self.touched;
        let mut operators: Vec<_> = self
            .operators
            .iter_mut()
            .filter(|(k, _)| touched.contains(*k))
            .map(|(k, r)| (k.as_deref(), &mut r.operator))
            .collect();
        operators.sort_by(|a, b| a.0.cmp(&b.0));
        operators
    }

    /// Forgets which keys took rows, and what their drift responses did (after their
    /// state was saved).
    pub fn clear_touched(&mut self) {
        self.touched.clear();
        self.drift = self.drift.map(|_| DriftCounts::default());
    }

    /// What the keys' drift responses did (learners replaced, subtrees swapped) since
    /// [`KeyedOperator::clear_touched`] was last called, evicted keys included; `None` while
    /// no key with a drift response was met.
    pub fn drift_since_cleared(&self) -> Option<DriftCounts> {
        self.drift
    }

    fn note_drift(&mut self, since: Option<DriftCounts>) {
        if let Some(since) = since {
            self.drift = Some(self.drift.unwrap_or_default() + since);
        }
    }

    /// The same operators on batches of another `input` schema (the next file of a job),
    /// `source` naming it in errors. An input that does not fit is refused, and the
    /// operators given back as they were, with the error.
    pub fn rebind(
        mut self, input: SchemaRef, source: &std::path::Path,
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
        for (key, mut r) in std::mem::take(&mut self.operators) {
            if failed.is_none() {
                match r.operator.rebind(input.clone(), source) {
                    Ok(op) => r.operator = op,
                    Err(e) => {
                        let (op, e) = *e;
                        failed = Some((key.clone(), e));
                        r.operator = op;
                    }
                }
            }
            rebound.insert(key, r);
        }
        if let Some((failed_key, e)) = failed {
            // Every key reads the same columns, so the first refusal is everyone's: the keys
            // already moved go back to the schema they came from, which they were bound to.
            for (key, mut r) in rebound {
                if r.operator.input_schema() != &old && key != failed_key {
                    r.operator = (r.operator.rebind(old.clone(), source)).unwrap_or_else(|e| e.0);
                }
                self.operators.insert(key, r);
            }
            return Err(Box::new((self, e)));
        }
        self.operators = rebound;
        self.schema = match self.operators.values().next() {
            Some(r) => r.operator.schema(),
            None => self.schema,
        };
        self.key_column = key_column;
        self.input = input;
        Ok(self)
    }

    /// The operator of each key in memory.
    pub fn operators(&self) -> impl Iterator<Item = (Option<&str>, &Cursor<M>)> {
        self.operators
            .iter()
            .map(|(k, r)| (k.as_deref(), &r.operator))
    }

    /// `key`'s operator, made (or loaded back) on first use in memory; the key is marked as
    /// used by the current batch and as having learnt.
    fn resident(&mut self, key: Option<&str>) -> Result<&mut Resident<M>> {
        let owned = key.map(str::to_string);
        self.touched.insert(owned.clone());
        if !self.operators.contains_key(&owned) {
            let op = (self.factory)(key, &self.input)?;
            self.memory.loads += 1;
            if op.schema() != self.schema {
                return Err(Error::config(
                    "key",
                    format!(
                        "the operator made for key {key:?} of `{}` has another output schema",
                        self.key
                    ),
                ));
            }
            let resident = Resident {
                bytes: op.heap_bytes(),
                drift: DriftCounts::of(op.model()),
                operator: op,
                last_used: 0,
            };
            self.note_drift(resident.drift.map(|_| DriftCounts::default()));
            self.memory.resident_bytes += resident.bytes;
            self.operators.insert(owned.clone(), resident);
        }
        let resident = self.operators.get_mut(&owned).expect("inserted above");
        resident.last_used = self.batches;
        Ok(resident)
    }

    /// Over budget, evicts the least recently used keys until they fit in nine tenths of it.
    fn enforce_budget(&mut self) -> Result<()> {
        let Some((budget, _)) = &self.budget else {
            return Ok(());
        };
        let budget = *budget;
        if self.memory.resident_bytes <= budget {
            return Ok(());
        }
        let target = budget - budget / 10;
        let mut order: Vec<(u64, Option<String>)> = (self.operators.iter())
            .map(|(k, r)| (r.last_used, k.clone()))
            .collect();
        order.sort_unstable();
        let mut evicted = Vec::new();
        let mut bytes = self.memory.resident_bytes;
        for (_, key) in order {
            if bytes <= target {
                break;
            }
            let r = self.operators.remove(&key).expect("a resident key");
            bytes -= r.bytes;
            evicted.push((key, r));
        }
        self.evict(evicted)
    }

    /// Takes `evicted` out of memory, writing those that learnt since they were last written
    /// in one spill. If the spill fails, every key stays, and the error is returned.
    fn evict(&mut self, mut evicted: Vec<(Option<String>, Resident<M>)>) -> Result<()> {
        let (_, spill) = self.budget.as_mut().expect("evicting under a budget");
        let dirty: Vec<_> = (evicted.iter_mut())
            .filter(|(key, _)| self.touched.contains(key))
            .map(|(key, r)| (key.as_deref(), &mut r.operator))
            .collect();
        let spills = dirty.len() as u64;
        let spilled = match spills {
            0 => Ok(()),
            _ => spill(dirty),
        };
        if let Err(e) = spilled {
            self.operators.extend(evicted);
            return Err(e);
        }
        self.memory.spills += spills;
        self.memory.drops += evicted.len() as u64 - spills;
        for (key, r) in evicted {
            self.touched.remove(&key);
            self.memory.resident_bytes -= r.bytes;
        }
        Ok(())
    }
}

impl<M: Classifier + Ranker + Structure> BatchOperator for KeyedOperator<M> {
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

impl<M: Classifier + Ranker + Structure> KeyedOperator<M> {
    /// `apply` over the rows of each key of `batch` (key column `key_column`), in their
    /// order; the outputs (of `schema`) put back in the batch's row order.
    fn by_key(
        &mut self, batch: &RecordBatch, key_column: usize, schema: SchemaRef,
        apply: impl Fn(&mut Cursor<M>, &RecordBatch) -> Result<RecordBatch> + Sync,
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
        self.batches += 1;
        if (1..n).all(|r| key_of(r) == key_of(0)) {
            // One key in the batch, as when the input is clustered by key: no split.
            let resident = self.resident(key_of(0))?;
            let before = resident.bytes;
            let out = resident.take(batch, &apply);
            let after = resident.bytes;
            let drift = resident.drift_since_look();
            self.note_drift(drift);
            self.memory.resident_bytes = self.memory.resident_bytes - before + after;
            let out = out?;
            self.enforce_budget()?;
            return Ok(out);
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
        let keys: Vec<Option<&str>> = groups.iter().map(|rows| key_of(rows[0] as usize)).collect();
        for &key in &keys {
            self.resident(key)?;
        }
        let outputs = self.apply_by_key(&keys, batch, groups, &apply)?;
        self.enforce_budget()?;
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

    /// `apply` on each key's operator (all resident) with its rows of `batch` (`groups[i]`:
    /// key `i`'s row indices), spread over the operator's threads, each operator's bytes
    /// estimated again after: keys are independent, and each key's rows stay in their order,
    /// so the outputs are the same whatever the threads.
    fn apply_by_key(
        &mut self, keys: &[Option<&str>], batch: &RecordBatch, groups: Vec<Vec<u32>>,
        apply: &(impl Fn(&mut Cursor<M>, &RecordBatch) -> Result<RecordBatch> + Sync),
    ) -> Result<Vec<RecordBatch>> {
        // The batch's operators leave the map for the pass (a thread owns each), and return.
        let mut taken: Vec<(Option<String>, Resident<M>, Vec<u32>)> = (keys.iter().zip(groups))
            .map(|(key, rows)| {
                let key = key.map(str::to_string);
                let resident = self.operators.remove(&key).expect("made resident above");
                (key, resident, rows)
            })
            .collect();
        let before: usize = taken.iter().map(|(_, r, _)| r.bytes).sum();
        let run = |share: &mut [(Option<String>, Resident<M>, Vec<u32>)]| {
            (share.iter_mut())
                .map(|(_, r, rows)| {
                    let part = take_record_batch(batch, &UInt32Array::from(std::mem::take(rows)))
                        .expect("row indices are in range");
                    r.take(&part, apply)
                })
                .collect::<Vec<Result<RecordBatch>>>()
        };
        // Contiguous shares of about equal rows, one per thread.
        let threads = self.threads.min(taken.len()).max(1);
        let outputs: Vec<Result<RecordBatch>> = if threads == 1 {
            run(&mut taken)
        } else {
            let (total, mut rows) = (batch.num_rows().max(1), 0);
            let mut cuts = vec![0];
            for (i, (_, _, group)) in taken.iter().enumerate() {
                if rows * threads >= total * cuts.len() {
                    cuts.push(i);
                }
                rows += group.len();
            }
            cuts.push(taken.len());
            let mut shares = Vec::with_capacity(threads);
            let mut rest = taken.as_mut_slice();
            for pair in cuts.windows(2) {
                let (share, tail) = rest.split_at_mut(pair[1] - pair[0]);
                shares.push(share);
                rest = tail;
            }
            // On rayon's pool, where a bundle of boosters inside a key's model takes its
            // own members' tasks too, rather than on threads of its own beside that pool.
            use rayon::prelude::*;
            let outputs: Vec<Vec<Result<RecordBatch>>> = shares.into_par_iter().map(run).collect();
            outputs.into_iter().flatten().collect()
        };
        let after: usize = taken.iter().map(|(_, r, _)| r.bytes).sum();
        self.memory.resident_bytes = self.memory.resident_bytes - before + after;
        for (_, r, _) in &mut taken {
            let drift = r.drift_since_look();
            self.note_drift(drift);
        }
        self.operators
            .extend(taken.into_iter().map(|(key, r, _)| (key, r)));
        outputs.into_iter().collect()
    }
}

impl<M> KeyedOperator<M> {
    /// Spreads each batch's keys over `threads` shares of about equal rows (1, the default:
    /// none), run on rayon's pool (as many threads as cores, or `RAYON_NUM_THREADS`). Outputs
    /// and models are the same whatever the count; worth it where a batch holds many keys
    /// and the model is costly per row.
    pub fn set_threads(&mut self, threads: usize) {
        self.threads = threads.max(1);
    }

    /// Holds the keys' operators within `bytes` (see the module doc): between batches, the
    /// least recently used keys are evicted, those with unwritten state through `spill`.
    pub fn bound_memory(&mut self, bytes: usize, spill: SpillFn<M>) {
        self.budget = Some((bytes, spill));
    }

    /// What is in memory, and the loads and evictions so far.
    pub fn memory(&self) -> KeyMemory {
        KeyMemory {
            resident_keys: self.operators.len(),
            ..self.memory
        }
    }
}

impl<M> fmt::Debug for KeyedOperator<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyedOperator")
            .field("key", &self.key)
            .field("memory", &self.memory())
            .finish_non_exhaustive()
    }
}
