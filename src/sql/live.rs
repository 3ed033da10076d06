//! Live models in SQL: a registered model whose training outlives the query.
//!
//! A live model ([`ModelRegistry::register_live`](super::ModelRegistry::register_live)) is
//! a checkpoint path, a [`CheckpointPolicy`], and its last commit (or a fresh model's
//! config until the first). A `boost_score` query over it (without a key) starts from the
//! last commit and commits, through the atomic checkpoint write, whenever the policy asks
//! (between batches) and when its input ends; each commit is also what `boost_predict`
//! scores with from then on, and what `boost_models()` shows.
//!
//! Streaming semantics:
//! * **Exactly-once learning.** A commit records the largest `ts` learnt. A later query
//!   scores every row but learns only rows whose `ts` is after it, so a stream fed in two
//!   queries (or fed again after a crash) learns each row once, and two consecutive queries
//!   over the halves of a stream predict what one query over the whole does.
//! * **One trainer.** A second query training the same live model while one runs is refused
//!   with an error naming the model; queries are never interleaved.
//! * **Cancel and crash.** A query dropped before its end commits nothing after its last
//!   periodic commit; a crashed process leaves the last commit whole. Rows learnt after it
//!   are learnt again by the next query that brings them.
//! * The `ts` column of a query over a live model is an integer or timestamp column.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Instant, SystemTime};

use datafusion::arrow::array::{Array, AsArray, RecordBatch, new_null_array};
use datafusion::arrow::compute::{cast, nullif};
use datafusion::arrow::datatypes::{DataType, Int64Type, SchemaRef};

use crate::checkpoint::{self, StreamState};
use crate::columnar::{BatchOperator, BoostOperator};
use crate::core::Position;
use crate::live::CheckpointPolicy;
use crate::model::{Model, ModelConfig};
use crate::{Error, Result};

/// A model and its stream, shared read-only: a checkpoint's, or a live model's last commit.
pub type Frozen = Arc<(Model, StreamState)>;

/// A live model's shared state in a registry.
#[derive(Debug)]
pub struct LiveSlot {
    name: String,
    policy: CheckpointPolicy,
    /// The last commit (`None`: a fresh model never committed).
    committed: RwLock<Option<Frozen>>,
    /// When it was written.
    committed_at: RwLock<Option<SystemTime>>,
    /// A fresh model's config, classes and seed.
    fresh: Option<(ModelConfig, Vec<String>, u64)>,
    /// Whether a query is training it.
    training: AtomicBool,
}

impl LiveSlot {
    /// The live model `name` at `policy.path`: loaded if the file exists, else fresh.
    pub(crate) fn open(
        name: &str,
        policy: CheckpointPolicy,
        fresh: Option<(ModelConfig, Vec<String>, u64)>,
    ) -> Result<Self> {
        policy.validate()?;
        let committed = if policy.path.exists() {
            Some(Arc::new(checkpoint::load(&policy.path)?))
        } else if fresh.is_none() {
            return Err(Error::config(
                "live",
                format!(
                    "`{}` does not exist and no config was given to create it",
                    policy.path.display()
                ),
            ));
        } else {
            None
        };
        Ok(LiveSlot {
            name: name.to_string(),
            policy,
            committed: RwLock::new(committed),
            committed_at: RwLock::new(None),
            fresh,
            training: AtomicBool::new(false),
        })
    }

    /// The last commit.
    pub fn committed(&self) -> Option<Frozen> {
        self.committed.read().expect("live lock").clone()
    }

    /// When the last commit of this session was written (`None` before the first).
    pub fn committed_at(&self) -> Option<SystemTime> {
        *self.committed_at.read().expect("live lock")
    }

    /// The checkpoint's path.
    pub fn path(&self) -> &std::path::Path {
        &self.policy.path
    }

    /// The fresh model's config, classes and seed (a model never committed is made of them).
    pub fn fresh(&self) -> Option<&(ModelConfig, Vec<String>, u64)> {
        self.fresh.as_ref()
    }

    /// The config a commit records.
    fn config(&self) -> ModelConfig {
        match (self.committed(), &self.fresh) {
            (Some(state), _) => state.1.config.clone(),
            (None, Some((config, _, _))) => config.clone(),
            (None, None) => unreachable!("opened with a checkpoint or a config"),
        }
    }
}

/// A query training a live model: its operator, the `ts` column, and the commits.
pub(crate) struct LiveQuery {
    slot: Arc<LiveSlot>,
    operator: BoostOperator<Model>,
    ts: usize,
    label: Option<usize>,
    /// The largest `ts` learnt when the query started: rows at or before it are scored only.
    learnt_before: Option<i64>,
    /// The largest `ts` learnt so far.
    last_ts: Option<i64>,
    rows_since_commit: u64,
    last_commit: Instant,
}

impl LiveQuery {
    /// Takes the live model for one query, whose input has the ordering column `ts` and
    /// label column `label`; refused while another query trains it.
    pub(crate) fn start(
        slot: Arc<LiveSlot>,
        operator: BoostOperator<Model>,
        input: &SchemaRef,
        ts: &str,
        label: &str,
    ) -> Result<Self> {
        let ts_index = input.index_of(ts).map_err(|_| Error::MissingColumn {
            file: PathBuf::from("query"),
            column: ts.to_string(),
            available: input.fields().iter().map(|f| f.name().clone()).collect(),
        })?;
        let ts_type = input.field(ts_index).data_type();
        if !(ts_type.is_integer() || matches!(ts_type, DataType::Timestamp(..))) {
            return Err(Error::config(
                "ts",
                format!("a live model's ordering column is an integer or timestamp, not {ts_type}"),
            ));
        }
        if slot
            .training
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return Err(Error::config(
                "live",
                format!(
                    "live model `{}` is being trained by another query",
                    slot.name
                ),
            ));
        }
        let learnt_before = operator.position().and_then(|p| p.ts);
        Ok(LiveQuery {
            slot,
            operator,
            ts: ts_index,
            label: input.index_of(label).ok(),
            learnt_before,
            last_ts: learnt_before,
            rows_since_commit: 0,
            last_commit: Instant::now(),
        })
    }

    /// Writes the checkpoint and makes it what the registry scores with.
    fn commit(&mut self) -> Result<()> {
        let config = self.slot.config();
        self.operator.set_position(Position {
            file: "sql".to_string(),
            rows: self.operator.stats().rows_learnt,
            done: false,
            ts: self.last_ts,
        });
        self.operator.save(&self.slot.policy.path, &config)?;
        let state = self.operator.stream_state(&config);
        let frozen = Arc::new((self.operator.model().clone(), state));
        *self.slot.committed.write().expect("live lock") = Some(frozen);
        *self.slot.committed_at.write().expect("live lock") = Some(SystemTime::now());
        self.rows_since_commit = 0;
        self.last_commit = Instant::now();
        Ok(())
    }
}

impl BatchOperator for LiveQuery {
    fn schema(&self) -> SchemaRef {
        self.operator.schema()
    }

    /// Scores every row; learns those after the commit's `ts` (a row at or before it has
    /// its label hidden from the model for this batch).
    fn process(&mut self, batch: &RecordBatch) -> Result<RecordBatch> {
        let as_df = |e: datafusion::arrow::error::ArrowError| Error::config("ts", e.to_string());
        let ts = cast(batch.column(self.ts), &DataType::Int64).map_err(as_df)?;
        let ts = ts.as_primitive::<Int64Type>();
        let input = match (self.learnt_before, self.label) {
            (Some(before), Some(label)) => {
                let seen: datafusion::arrow::array::BooleanArray = ts
                    .iter()
                    .map(|t| Some(t.is_some_and(|t| t <= before)))
                    .collect();
                let mut columns = batch.columns().to_vec();
                columns[label] = if seen.true_count() == batch.num_rows() {
                    new_null_array(columns[label].data_type(), batch.num_rows())
                } else {
                    nullif(&columns[label], &seen).map_err(as_df)?
                };
                RecordBatch::try_new(batch.schema(), columns).map_err(as_df)?
            }
            _ => batch.clone(),
        };
        let mut out = self.operator.process(&input)?;
        if let Some(label) = self.label {
            // The output carries the input's labels, hidden or not.
            let mut columns = out.columns().to_vec();
            columns[label] = batch.column(label).clone();
            out = RecordBatch::try_new(out.schema(), columns).map_err(as_df)?;
        }
        let batch_max = ts.iter().flatten().max();
        self.last_ts = self.last_ts.max(batch_max);
        self.rows_since_commit += batch.num_rows() as u64;
        if self
            .slot
            .policy
            .due(self.rows_since_commit, self.last_commit.elapsed())
        {
            self.commit()?;
        }
        Ok(out)
    }

    fn finish(&mut self) -> Result<()> {
        self.commit()
    }
}

impl Drop for LiveQuery {
    fn drop(&mut self) {
        self.slot.training.store(false, Ordering::Release);
    }
}
