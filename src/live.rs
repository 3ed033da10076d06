//! Live models: a model bound to a checkpoint file and a policy for when to commit it, so
//! that what it learns outlives a query or a process.
//!
//! A [`LiveModel`] is a [`BoostOperator`] over a [`Model`], the config it was built from, and
//! a [`CheckpointPolicy`]: the checkpoint's path, and a commit every N rows, every T seconds,
//! or both (and always when its owner says the stream ended). The owner processes batches
//! and asks [`LiveModel::due`] between them; [`LiveModel::commit`] writes the checkpoint
//! atomically with the [`Position`] the owner reached, so the checkpoint says both what the
//! model knows and which input rows it knows.
//!
//! Streaming semantics:
//! * **Commit.** A checkpoint is written between batches, through the atomic write of
//!   [`crate::checkpoint`]: a crash at any point leaves the previous checkpoint, whole.
//! * **Restart.** Loading gives the model, its counters and its position as of the last
//!   commit; rows after that position are taken again by a state that has not learnt them,
//!   so a restarted stream ends bit-identical to an uninterrupted one. Whatever the model
//!   learnt after its last commit is lost with the process, by design: it is learnt again.
//! * **Cancel.** Dropping a live model commits nothing; its owner commits first if the rows
//!   it took should count (the `run` job does, on SIGINT or SIGTERM).
//! * **Bounded.** A live model holds its model and one batch's buffers; a commit writes the
//!   whole model (its size is the checkpoint's, see RESULTS.md).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;

use crate::checkpoint::{self, StreamState};
use crate::columnar::{BatchOperator, BoostOperator};
use crate::core::{OperatorStats, Position};
use crate::model::{Model, ModelConfig};
use crate::{Error, Result};

/// Where and how often a model is saved.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckpointPolicy {
    /// The checkpoint file, replaced atomically at each save.
    pub path: PathBuf,
    /// Also save after every this many rows (else only at the end).
    pub every: Option<u64>,
    /// Also save when this much time has passed since the last save (checked between
    /// batches).
    pub interval: Option<Duration>,
}

impl CheckpointPolicy {
    /// Saves at `path` at the end only.
    pub fn at_end(path: impl Into<PathBuf>) -> Self {
        CheckpointPolicy {
            path: path.into(),
            every: None,
            interval: None,
        }
    }

    /// Checks the period, and that the file can be written where it is named (its directory
    /// exists, it is not a directory), so that a bad path fails before the first row rather
    /// than after the whole stream.
    pub fn validate(&self) -> Result<()> {
        if self.every == Some(0) {
            return Err(Error::config("checkpoint_every", "must be >= 1"));
        }
        if self.interval == Some(Duration::ZERO) {
            return Err(Error::config("checkpoint_interval", "must be > 0"));
        }
        let unwritable = |why: &str| Error::Io {
            path: self.path.clone(),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, why.to_string()),
        };
        let dir = self.path.parent().filter(|d| !d.as_os_str().is_empty());
        if !dir.unwrap_or(Path::new(".")).is_dir() {
            return Err(unwritable(
                "cannot save a checkpoint here: its directory does not exist",
            ));
        }
        if self.path.is_dir() {
            return Err(unwritable(
                "cannot save a checkpoint here: it is a directory",
            ));
        }
        Ok(())
    }

    /// Whether a save is due after `rows` rows and `elapsed` time since the last one.
    pub fn due(&self, rows: u64, elapsed: Duration) -> bool {
        self.every.is_some_and(|every| rows >= every)
            || self.interval.is_some_and(|interval| elapsed >= interval)
    }
}

/// A model bound to a checkpoint and a [`CheckpointPolicy`] (see the module doc).
pub struct LiveModel {
    operator: BoostOperator<Model>,
    config: ModelConfig,
    policy: CheckpointPolicy,
    rows_since_commit: u64,
    last_commit: Instant,
    commits: u64,
    last_commit_time: Duration,
}

impl LiveModel {
    /// A live model of `model` and `stream` (a checkpoint's, or a fresh model's), reading
    /// batches of `input` (`source` naming it in errors). The operator goes on from the
    /// stream's counters and position.
    pub fn new(
        model: Model,
        stream: StreamState,
        policy: CheckpointPolicy,
        input: SchemaRef,
        source: impl Into<PathBuf>,
    ) -> Result<Self> {
        policy.validate()?;
        let operator = BoostOperator::continuing(model, &stream, input, source)?;
        Ok(LiveModel {
            operator,
            config: stream.config,
            policy,
            rows_since_commit: 0,
            last_commit: Instant::now(),
            commits: 0,
            last_commit_time: Duration::ZERO,
        })
    }

    /// The live model committed at `policy.path`, reading batches of `input`.
    pub fn load(
        policy: CheckpointPolicy,
        input: SchemaRef,
        source: impl Into<PathBuf>,
    ) -> Result<Self> {
        let (model, stream) = checkpoint::load(&policy.path)?;
        let path = policy.path.clone();
        LiveModel::new(model, stream, policy, input, source)
            .map_err(|e| checkpoint::not_fitting(&path, e))
    }

    /// The same live model on batches of another `input` schema; an input that does not fit
    /// is refused and the live model given back unchanged with the error.
    pub fn rebind(
        mut self,
        input: SchemaRef,
        source: impl Into<PathBuf>,
    ) -> std::result::Result<Self, (Box<Self>, Error)> {
        let operator = self.operator;
        match operator.rebind(input, source) {
            Ok(operator) => {
                self.operator = operator;
                Ok(self)
            }
            Err(failed) => {
                let (operator, e) = *failed;
                self.operator = operator;
                Err((Box::new(self), e))
            }
        }
    }

    /// Scores (and learns, where labelled) every row of `batch` in order; the batch with the
    /// prediction columns appended.
    pub fn process(&mut self, batch: &RecordBatch) -> Result<RecordBatch> {
        let out = self.operator.process(batch)?;
        self.rows_since_commit += batch.num_rows() as u64;
        Ok(out)
    }

    /// Rows left before the row-count policy asks for a commit (`None`: no row count).
    /// An owner that cuts its batches there commits at the same rows whatever the batches.
    pub fn rows_until_due(&self) -> Option<u64> {
        self.policy
            .every
            .map(|every| every.saturating_sub(self.rows_since_commit).max(1))
    }

    /// Whether the policy asks for a commit now.
    pub fn due(&self) -> bool {
        self.policy
            .due(self.rows_since_commit, self.last_commit.elapsed())
    }

    /// Writes the checkpoint, with `position` if given (else the one it had).
    pub fn commit(&mut self, position: Option<Position>) -> Result<()> {
        if let Some(position) = position {
            self.operator.set_position(position);
        }
        let start = Instant::now();
        self.operator.save(&self.policy.path, &self.config)?;
        self.last_commit_time = start.elapsed();
        self.last_commit = Instant::now();
        self.rows_since_commit = 0;
        self.commits += 1;
        Ok(())
    }

    /// How far the model has taken its input, as of the last commit or as set since.
    pub fn position(&self) -> Option<&Position> {
        self.operator.position()
    }

    /// The stream's counters.
    pub fn stats(&self) -> OperatorStats {
        self.operator.stats()
    }

    /// Commits so far, and how long the last one took.
    pub fn commits(&self) -> (u64, Duration) {
        (self.commits, self.last_commit_time)
    }

    /// The operator.
    pub fn operator(&self) -> &BoostOperator<Model> {
        &self.operator
    }

    /// The checkpoint's path.
    pub fn path(&self) -> &Path {
        &self.policy.path
    }
}

/// A live model drives [`crate::stream::ScoredStream`] like any operator: it commits
/// between batches when its policy asks, and when the input ends. Its position stays the one
/// it was loaded with (or set through [`LiveModel::commit`] by an owner that knows its
/// input's offsets).
impl BatchOperator for LiveModel {
    fn schema(&self) -> SchemaRef {
        self.operator.schema()
    }

    fn process(&mut self, batch: &RecordBatch) -> Result<RecordBatch> {
        let out = LiveModel::process(self, batch)?;
        if self.due() {
            self.commit(None)?;
        }
        Ok(out)
    }

    fn finish(&mut self) -> Result<()> {
        self.commit(None)
    }
}

impl std::fmt::Debug for LiveModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveModel")
            .field("path", &self.policy.path)
            .field("stats", &self.stats())
            .field("position", &self.position())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_policy_is_due_by_rows_or_by_time() {
        let mut policy = CheckpointPolicy::at_end("m.parquet");
        assert!(
            !policy.due(u64::MAX, Duration::from_secs(3600)),
            "at the end only"
        );
        policy.every = Some(100);
        assert!(!policy.due(99, Duration::ZERO));
        assert!(policy.due(100, Duration::ZERO));
        policy.interval = Some(Duration::from_secs(60));
        assert!(policy.due(1, Duration::from_secs(60)));
        assert!(!policy.due(1, Duration::from_secs(59)));
    }

    #[test]
    fn a_policy_refuses_zero_periods_and_unwritable_paths() {
        let dir = std::env::temp_dir();
        let mut policy = CheckpointPolicy::at_end(dir.join("m.parquet"));
        policy.validate().unwrap();
        policy.every = Some(0);
        assert!(policy.validate().is_err());
        policy.every = None;
        policy.interval = Some(Duration::ZERO);
        assert!(policy.validate().is_err());
        let policy = CheckpointPolicy::at_end(dir.join("no-such-dir/m.parquet"));
        assert!(policy.validate().is_err());
        assert!(
            CheckpointPolicy::at_end(&dir).validate().is_err(),
            "a directory"
        );
    }
}
