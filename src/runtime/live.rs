//! Live models: a model bound to a checkpoint file and a policy for when to commit it, so
//! that what it learns outlives a query or a process.
//!
//! A [`LiveModel`] is a [`Cursor`] over a [`Model`], the config it was built from, and
//! a [`CheckpointPolicy`]: the checkpoint's path, and a commit every N rows, every T seconds,
//! or both (and always when its owner says the stream ended). The owner processes batches
//! and asks [`LiveModel::due`] between them; [`LiveModel::commit`] writes the checkpoint
//! atomically with the [`Position`] the owner reached, so the checkpoint says both what the
//! model knows and which input rows it knows.
//!
//! Streaming semantics:
//! * **Commit.** A checkpoint is written between batches, through the atomic write of
//!   [`crate::checkpoint`]: a crash at any point leaves the previous checkpoint, whole.
//!   [`LiveModel::commit`] returns once the commit is in place. [`LiveModel::commit_behind`]
//!   returns once the model's state is taken, and a thread writes it while the model learns
//!   on; [`LiveModel::settle`] waits for it. One commit is written at a time: the next waits
//!   for the one before it and returns its error if it failed (the checkpoint is then the
//!   commit before, whole, and the next commit writes a new base). A live model dropped
//!   while a commit is being written lets the write finish before it lets the lock go.
//! * **Restart.** Loading gives the model, its counters and its position as of the last
//!   commit; rows after that position are taken again by a state that has not learnt them,
//!   so a restarted stream ends bit-identical to an uninterrupted one. Whatever the model
//!   learnt after its last commit is lost with the process, by design: it is learnt again.
//! * **Cancel.** Dropping a live model commits nothing; its owner commits first if the rows
//!   it took should count (the `run` job does, on SIGINT or SIGTERM).
//! * **One owner.** A live model holds its checkpoint's lock (`<path>.lock`
//!   beside it) while it lives: a live model of another process on the same checkpoint is
//!   refused with [`Error::Locked`] naming the holder. The operating system releases the
//!   lock when its process ends, so a crash leaves no lock to clear by hand.
//! * **Bounded.** A live model holds its model, one batch's buffers and a hash per tree node
//!   (8 bytes each); a commit writes the nodes that changed since the last one, and the whole
//!   model every [`ChainLimits::max_deltas`] commits ([`crate::checkpoint::chain`]; sizes in
//!   RESULTS.md, "Commits that cost what changed").
//! * **Restart** of a model without a key goes on with the chain it was read from: its next
//!   commit is a delta on the same base.
//!
//! A keyed live model ([`LiveModel::keyed`]) holds one model per value of a key column and
//! commits to a keyed checkpoint ([`crate::runtime::keyed::checkpoint`]): a directory of one
//! checkpoint per key and a manifest, the commit point, replaced atomically. A commit writes
//! the keys that took rows since the last one, then the manifest with the position; a key
//! is loaded from its file when it first appears. The semantics above hold per key. Keys
//! are held within [`CheckpointPolicy::memory_budget`]: beyond it, the least recently used
//! are spilled to the directory and loaded back when they reappear, exactly as they were
//! (see [`crate::runtime::keyed`]); a spill is as durable as a commit, no more (a crash
//! before the next commit discards it, and the key's rows since are learnt again).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;

use crate::checkpoint::{self, Chain, ChainLimits, StreamState};
use crate::files::OwnerLock;
use crate::model::{Model, ModelConfig};
use crate::runtime::KeyedStore;
use crate::runtime::OperatorStats;
use crate::runtime::Position;
use crate::runtime::keyed::checkpoint::lock;
use crate::runtime::{BatchOperator, Cursor, KeyMemory, KeyedOperator};
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
    /// A keyed model's memory budget in bytes: beyond it, keys are spilled to the keyed
    /// checkpoint's directory, least recently used first ([`crate::runtime::keyed`]).
    /// `None`: [`CheckpointPolicy::default_memory_budget`].
    pub memory_budget: Option<u64>,
    /// When a model without a key writes a new base rather than a delta of what changed
    /// ([`crate::checkpoint::chain`]).
    pub chain: ChainLimits,
}

impl CheckpointPolicy {
    /// The default period of time-based commits: a crash loses at most this much work, and
    /// a commit of 100 grown trees (most of a second, RESULTS.md) costs a few percent of it.
    pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(60);

    /// Saves at `path` every [`CheckpointPolicy::DEFAULT_INTERVAL`] and at the end: the
    /// default of `streamboost run` and of a live model in `streamboost sql`.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        CheckpointPolicy {
            interval: Some(Self::DEFAULT_INTERVAL),
            ..Self::at_end(path)
        }
    }

    /// Saves at `path` at the end only.
    pub fn at_end(path: impl Into<PathBuf>) -> Self {
        CheckpointPolicy {
            path: path.into(),
            every: None,
            interval: None,
            memory_budget: None,
            chain: ChainLimits::default(),
        }
    }

    /// A keyed model's memory budget when none is given: half of the machine's physical
    /// memory (the rest is for the process's batches, the allocator's slack and other
    /// work); unbounded where the machine does not say (not Linux).
    pub fn default_memory_budget() -> Option<u64> {
        let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
        let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
        let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kib * 1024 / 2)
    }

    /// The memory budget of a keyed model under this policy, in bytes (`None`: unbounded).
    pub fn keyed_memory_budget(&self) -> Option<u64> {
        self.memory_budget.or_else(Self::default_memory_budget)
    }

    /// Checks the period, and that the file can be written where it is named (its directory
    /// exists, it is not a directory unless a keyed checkpoint's), so that a bad path fails
    /// before the first row rather than after the whole stream.
    pub fn validate(&self) -> Result<()> {
        if self.every == Some(0) {
            return Err(Error::config("checkpoint_every", "must be >= 1"));
        }
        if self.interval == Some(Duration::ZERO) {
            return Err(Error::config("checkpoint_interval", "must be > 0"));
        }
        if self.memory_budget == Some(0) {
            return Err(Error::config("memory_budget", "must be > 0"));
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
        if self.path.is_dir() && !KeyedStore::is_keyed(&self.path) {
            return Err(unwritable(
                "cannot save a checkpoint here: it is a directory, and not a keyed checkpoint",
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
    /// The commit being written (declared first: fields drop in order, and this one must
    /// finish before the lock below is let go).
    writing: Writing,
    /// This process's hold on the checkpoint (see the module doc).
    _owner: Arc<OwnerLock>,
    scorer: Scorer,
    config: ModelConfig,
    label: String,
    policy: CheckpointPolicy,
    rows_since_commit: u64,
    last_commit: Instant,
    commits: u64,
    last_commit_time: Duration,
    /// All commits' time and bytes written.
    commit_time: Duration,
    commit_bytes: u64,
    /// The checkpoint chain a model without a key continues (`None`: its next commit writes
    /// a new base); while a commit is being written, the chain before it.
    chain: Option<Chain>,
}

/// The thread writing a live model's last commit, until it is settled. Dropped (with its live
/// model) before the checkpoint's lock is let go, it lets the write finish first.
#[derive(Default)]
struct Writing(Option<std::thread::JoinHandle<Result<(checkpoint::Written, Chain)>>>);

impl Drop for Writing {
    fn drop(&mut self) {
        if let Some(writer) = self.0.take() {
            let _ = writer.join();
        }
    }
}

/// What a live model scores with: one model, or one per key, kept in a keyed checkpoint
/// directory ([`KeyedStore`]).
enum Scorer {
    One(Box<Cursor<Model>>),
    Keyed {
        operators: Box<KeyedOperator<Model>>,
        /// Shared by the live models of one keyed model (a query's partitions), which commit
        /// their own keys to it.
        store: SharedStore,
    },
}

/// A keyed live model's hold on the store it shares: the live model is one of the store's
/// users, reporting the keys it holds in memory between batches, and none once it is dropped
/// (its keys leave memory with it).
struct SharedStore {
    store: Arc<Mutex<KeyedStore>>,
    user: u64,
}

impl SharedStore {
    fn new(store: Arc<Mutex<KeyedStore>>) -> Self {
        let user = lock(&store).new_user();
        SharedStore { store, user }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, KeyedStore> {
        lock(&self.store)
    }

    fn report(&self, memory: &KeyMemory) {
        let (keys, bytes) = (memory.resident_keys, memory.resident_bytes);
        self.lock().report_resident(self.user, keys, bytes);
    }
}

impl Drop for SharedStore {
    fn drop(&mut self) {
        self.lock().report_resident(self.user, 0, 0);
    }
}

impl LiveModel {
    /// A live model of `model` and `stream` (a checkpoint's, or a fresh model's), reading
    /// batches of `input` (`source` naming it in errors). The operator goes on from the
    /// stream's counters and position; with `learn_once_by`, it learns each row once by
    /// that ordering column ([`Cursor::learn_once_by`]).
    pub fn new(
        model: Model, stream: StreamState, learn_once_by: Option<&str>, policy: CheckpointPolicy,
        input: SchemaRef, source: impl Into<PathBuf>,
    ) -> Result<Self> {
        policy.validate()?;
        let owner = OwnerLock::acquire(&policy.path, false)?;
        let mut operator = Cursor::continuing(model, &stream, input, source)?;
        if let Some(ts) = learn_once_by {
            operator.learn_once_by(ts)?;
        }
        Ok(LiveModel::of(
            Scorer::One(Box::new(operator)),
            stream.config,
            stream.label,
            policy,
            owner,
        ))
    }

    /// A live model with one model per value of column `key`, kept in the keyed checkpoint
    /// `store` (whose directory is `policy.path`): a key's model is loaded from it when the
    /// key first appears, or starts fresh; a commit writes the keys that took rows since the
    /// last. With `learn_once_by`, each key's rows are learnt once by that ordering column
    /// ([`Cursor::learn_once_by`]).
    pub fn keyed(
        store: Arc<Mutex<KeyedStore>>, key: &str, learn_once_by: Option<&str>,
        policy: CheckpointPolicy, input: SchemaRef, source: impl Into<PathBuf>,
    ) -> Result<Self> {
        policy.validate()?;
        let owner = OwnerLock::acquire(&policy.path, false)?;
        let template = lock(&store).manifest().template.clone();
        let source = source.into();
        let factory = {
            let (store, key, once) = (
                store.clone(),
                key.to_string(),
                learn_once_by.map(String::from),
            );
            move |value: Option<&str>, input: &SchemaRef| {
                let (model, stream) = lock(&store).load_or_fresh(value)?;
                let origin = format!("{} {key}={}", source.display(), value.unwrap_or("NULL"));
                let mut op = Cursor::continuing(model, &stream, input.clone(), origin)?;
                if let Some(ts) = &once {
                    op.learn_once_by(ts)?;
                }
                Ok(op)
            }
        };
        let mut operators = KeyedOperator::new(
            input,
            key,
            &template.label,
            template.spec.classes.names(),
            Box::new(factory),
        )?;
        if let Some(budget) = policy.keyed_memory_budget() {
            let (store, config) = (store.clone(), template.config.clone());
            let spill = move |evicted: Vec<(Option<&str>, &mut Cursor<Model>)>| {
                let evicted = evicted.into_iter().map(|(key, op)| {
                    let stream = op.stream_state(&config);
                    (key, op.model_mut(), stream)
                });
                lock(&store).spill(evicted)
            };
            let budget = usize::try_from(budget).unwrap_or(usize::MAX);
            operators.bound_memory(budget, Box::new(spill));
        }
        let operators = Box::new(operators);
        let store = SharedStore::new(store);
        let scorer = Scorer::Keyed { operators, store };
        Ok(LiveModel::of(
            scorer,
            template.config,
            template.label,
            policy,
            owner,
        ))
    }

    fn of(
        scorer: Scorer, config: ModelConfig, label: String, policy: CheckpointPolicy,
        owner: Arc<OwnerLock>,
    ) -> Self {
        LiveModel {
            _owner: owner,
            scorer,
            config,
            label,
            policy,
            rows_since_commit: 0,
            last_commit: Instant::now(),
            commits: 0,
            last_commit_time: Duration::ZERO,
            commit_time: Duration::ZERO,
            commit_bytes: 0,
            chain: None,
            writing: Writing::default(),
        }
    }

    /// Continues `chain` (the one [`checkpoint::load_chain`] read the model from): the next
    /// commit writes a delta on its base rather than a new base.
    pub fn continuing(mut self, chain: Option<Chain>) -> Self {
        self.chain = chain;
        self
    }

    /// The live model committed at `policy.path`, reading batches of `input`.
    pub fn load(
        policy: CheckpointPolicy, input: SchemaRef, source: impl Into<PathBuf>,
    ) -> Result<Self> {
        let (model, stream, chain) = checkpoint::load_chain(&policy.path)?;
        let path = policy.path.clone();
        LiveModel::new(model, stream, None, policy, input, source)
            .map(|live| live.continuing(chain))
            .map_err(|e| checkpoint::not_fitting(&path, e))
    }

    /// The same live model on batches of another `input` schema; an input that does not fit
    /// is refused and the live model given back unchanged with the error.
    pub fn rebind(
        mut self, input: SchemaRef, source: impl Into<PathBuf>,
    ) -> std::result::Result<Self, (Box<Self>, Error)> {
        let source = source.into();
        let (scorer, failed) = match self.scorer {
            Scorer::One(operator) => match operator.rebind(input, source) {
                Ok(operator) => (Scorer::One(Box::new(operator)), None),
                Err(failed) => (Scorer::One(Box::new(failed.0)), Some(failed.1)),
            },
            Scorer::Keyed { operators, store } => {
                let (operators, failed) = match operators.rebind(input, &source) {
                    Ok(operators) => (operators, None),
                    Err(failed) => (failed.0, Some(failed.1)),
                };
                let operators = Box::new(operators);
                (Scorer::Keyed { operators, store }, failed)
            }
        };
        self.scorer = scorer;
        match failed {
            None => Ok(self),
            Some(e) => Err((Box::new(self), e)),
        }
    }

    /// Scores (and learns, where labelled) every row of `batch` in order; the batch with the
    /// prediction columns appended.
    pub fn process(&mut self, batch: &RecordBatch) -> Result<RecordBatch> {
        self.take(batch, |operator, batch| operator.process(batch))
    }

    /// Learns a batch of labels that arrive after their events; one outcome row per label
    /// row ([`Cursor::labels`]); a keyed model's go to their key's model.
    pub fn labels(&mut self, batch: &RecordBatch) -> Result<RecordBatch> {
        self.take(batch, |operator, batch| operator.labels(batch))
    }

    /// `batch` through `f` on the one operator or the keyed ones, its rows counted toward the
    /// next commit.
    fn take(
        &mut self, batch: &RecordBatch,
        f: impl FnOnce(&mut dyn BatchOperator, &RecordBatch) -> Result<RecordBatch>,
    ) -> Result<RecordBatch> {
        let out = match &mut self.scorer {
            Scorer::One(operator) => f(operator.as_mut(), batch)?,
            Scorer::Keyed { operators, store } => {
                let out = f(operators.as_mut(), batch)?;
                store.report(&operators.memory());
                out
            }
        };
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

    /// Writes the checkpoint, with `position` if given (else the one it had), and returns
    /// once it is in place: [`LiveModel::commit_behind`], then [`LiveModel::settle`].
    pub fn commit(&mut self, position: Option<Position>) -> Result<()> {
        self.commit_behind(position)?;
        self.settle()
    }

    /// Begins a commit, with `position` if given (else the one it had), after waiting for
    /// the one before it to be in place (its error, if it failed, is returned here). A model
    /// without a key returns once its state is taken ([`crate::checkpoint::prepare`]: the
    /// nodes that changed since its last commit, as a delta, or a new base) while a thread
    /// of its own writes it; the commit is in place once [`LiveModel::settle`] returns, and
    /// the model may learn meanwhile. A keyed model writes the keys that took rows since its
    /// last commit, then the manifest, before returning.
    pub fn commit_behind(&mut self, position: Option<Position>) -> Result<()> {
        let start = Instant::now();
        self.finish_write()?;
        match &mut self.scorer {
            Scorer::One(operator) => {
                if let Some(position) = position {
                    operator.set_position(position);
                }
                let prepared = operator.prepare_commit(
                    &self.policy.path,
                    &self.config,
                    self.chain.as_ref(),
                    &self.policy.chain,
                );
                let writer = std::thread::Builder::new()
                    .name("streamboost-commit".into())
                    .spawn(move || prepared.write())
                    .map_err(|source| Error::Io {
                        path: self.policy.path.clone(),
                        source,
                    })?;
                self.writing.0 = Some(writer);
            }
            Scorer::Keyed { operators, store } => {
                let config = &self.config;
                let changed: Vec<_> = operators
                    .touched()
                    .into_iter()
                    .map(|(key, op)| {
                        let stream = op.stream_state(config);
                        (key, op.model_mut(), stream)
                    })
                    .collect();
                store.lock().commit(changed, position)?;
                operators.clear_touched();
            }
        }
        self.last_commit_time = start.elapsed();
        self.commit_time += self.last_commit_time;
        self.last_commit = Instant::now();
        self.rows_since_commit = 0;
        self.commits += 1;
        Ok(())
    }

    /// Waits until the commit begun by [`LiveModel::commit_behind`], if any, is in place. On
    /// its error the checkpoint is the commit before it, whole, and the next commit writes a
    /// new base.
    pub fn settle(&mut self) -> Result<()> {
        let start = Instant::now();
        let settled = self.finish_write();
        self.commit_time += start.elapsed();
        settled
    }

    /// Joins the commit's writer, if one is running, and takes in the chain it ends.
    fn finish_write(&mut self) -> Result<()> {
        let Some(writer) = self.writing.0.take() else {
            return Ok(());
        };
        match writer.join() {
            Ok(Ok((written, chain))) => {
                self.chain = Some(chain);
                self.commit_bytes += written.bytes;
                Ok(())
            }
            Ok(Err(e)) => {
                self.chain = None;
                Err(e)
            }
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }

    /// How far the model has taken its input, as of the last commit or as set since (a
    /// keyed model's: its manifest's, as of the last commit).
    pub fn position(&self) -> Option<Position> {
        match &self.scorer {
            Scorer::One(operator) => operator.position().cloned(),
            Scorer::Keyed { store, .. } => store.lock().manifest().position.clone(),
        }
    }

    /// The stream's counters (a keyed model's: summed over the keys it holds).
    pub fn stats(&self) -> OperatorStats {
        match &self.scorer {
            Scorer::One(operator) => operator.stats(),
            Scorer::Keyed { operators, .. } => operators
                .operators()
                .map(|(_, op)| op.stats())
                .fold(OperatorStats::default(), |a, b| a.add(&b)),
        }
    }

    /// The labels met outside the model's class set since this live model was made, in the
    /// order met (a keyed model's: over the keys it holds); their rows are scored, not learnt.
    pub fn unknown_classes(&self) -> Vec<String> {
        let mut classes: Vec<String> = Vec::new();
        let mut add = |op: &Cursor<Model>| {
            for class in op.unknown_classes() {
                if !classes.contains(class) {
                    classes.push(class.clone());
                }
            }
        };
        match &self.scorer {
            Scorer::One(operator) => add(operator),
            Scorer::Keyed { operators, .. } => operators.operators().for_each(|(_, op)| add(op)),
        }
        classes
    }

    /// The live model with a keyed model's batches spread over `threads` threads, key by key
    /// ([`KeyedOperator::set_threads`]); one model is unchanged.
    pub fn spread_keys(mut self, threads: usize) -> Self {
        if let Scorer::Keyed { operators, .. } = &mut self.scorer {
            operators.set_threads(threads);
        }
        self
    }

    /// A keyed model's keys in memory and what went through it (`None` for one model).
    pub fn key_memory(&self) -> Option<KeyMemory> {
        match &self.scorer {
            Scorer::One(_) => None,
            Scorer::Keyed { operators, .. } => Some(operators.memory()),
        }
    }

    /// What the model's drift response has done over its life (checkpoints keep the
    /// counts): learners replaced and subtrees swapped in; `None` for a model without a
    /// drift response. A keyed model's are its committed keys' (the manifest keeps each
    /// key's) and what its keys did since its last commit; another live model sharing the
    /// store (a query's other partition) adds its keys' at its own commits.
    pub fn drift_counts(&self) -> Option<crate::eval::DriftCounts> {
        match &self.scorer {
            Scorer::One(cursor) => crate::eval::DriftCounts::of(cursor.model()),
            Scorer::Keyed { operators, store } => {
                let committed = store.lock().drift();
                match operators.drift_since_cleared() {
                    Some(since) => Some(committed + since),
                    None => committed.any().then_some(committed),
                }
            }
        }
    }

    /// Commits begun so far, and how long the last one held its caller up
    /// ([`LiveModel::commit_behind`]'s time, or [`LiveModel::commit`]'s up to the write).
    pub fn commits(&self) -> (u64, Duration) {
        (self.commits, self.last_commit_time)
    }

    /// All the time commits held their callers up (waits in [`LiveModel::settle`]
    /// included), and the bytes written by those in place (a model without a key: its bases
    /// and deltas; a keyed model's are not counted here).
    pub fn commit_totals(&self) -> (Duration, u64) {
        (self.commit_time, self.commit_bytes)
    }

    /// The model and its stream state, as a checkpoint would hold them (`None` for a keyed
    /// model: its keys are in its store).
    pub fn snapshot(&self) -> Option<(Model, StreamState)> {
        match &self.scorer {
            Scorer::One(operator) => Some((
                operator.model().clone(),
                operator.stream_state(&self.config),
            )),
            Scorer::Keyed { .. } => None,
        }
    }

    /// The label column.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// The checkpoint's path.
    pub fn path(&self) -> &Path {
        &self.policy.path
    }
}

/// A live model drives `stream::ScoredStream` (feature `stream`) like any operator: it commits
/// between batches when its policy asks, and when the input ends. Its position stays the one
/// it was loaded with (or set through [`LiveModel::commit`] by an owner that knows its
/// input's offsets).
impl BatchOperator for LiveModel {
    fn schema(&self) -> SchemaRef {
        match &self.scorer {
            Scorer::One(operator) => operator.schema(),
            Scorer::Keyed { operators, .. } => operators.schema(),
        }
    }

    fn process(&mut self, batch: &RecordBatch) -> Result<RecordBatch> {
        let out = LiveModel::process(self, batch)?;
        if self.due() {
            self.commit(None)?;
        }
        Ok(out)
    }

    fn labels(&mut self, batch: &RecordBatch) -> Result<RecordBatch> {
        let out = LiveModel::labels(self, batch)?;
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

    /// A keyed live model reports the keys it holds in memory to its store between
    /// batches, spills under a small budget, and reports none once dropped.
    #[test]
    fn a_keyed_live_model_reports_its_resident_keys_to_its_store() {
        use crate::synth::KeyedEvents;
        let dir = tempfile::tempdir().unwrap();
        let config = ModelConfig::from_json(serde_json::json!({
            "algorithm": "ada-olm", "n_learners": 3
        }))
        .unwrap();
        let template = StreamState {
            config,
            spec: KeyedEvents::spec(),
            encodings: Default::default(),
            label: "label".into(),
            stats: Default::default(),
            position: None,
            delayed: None,
        };
        let store = Arc::new(Mutex::new(
            KeyedStore::create(dir.path(), template, 1).unwrap(),
        ));
        let mut events = KeyedEvents::new(200, 1.1, 0.05, 3).unwrap();
        let first = events.batch(100);
        let policy = CheckpointPolicy {
            memory_budget: Some(40_000),
            ..CheckpointPolicy::at_end(dir.path())
        };
        let mut live =
            LiveModel::keyed(store.clone(), "key", None, policy, first.schema(), "events").unwrap();
        for batch in std::iter::once(first).chain((0..9).map(|_| events.batch(100))) {
            live.process(&batch).unwrap();
            let memory = live.key_memory().unwrap();
            let reported = lock(&store).resident();
            assert_eq!(reported, (memory.resident_keys, memory.resident_bytes));
        }
        assert!(lock(&store).resident().0 > 0);
        assert!(lock(&store).spilled_keys() > 0, "a 40 kB budget spills");
        live.commit(None).unwrap();
        assert_eq!(
            lock(&store).spilled_keys(),
            0,
            "a commit takes the spills in"
        );
        drop(live);
        assert_eq!(lock(&store).resident(), (0, 0));
    }

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
