//! Live models in SQL: a registered model whose training outlives the query.
//!
//! A live model ([`ModelRegistry::register_live`](super::ModelRegistry::register_live)) is
//! a checkpoint path, a [`CheckpointPolicy`], and its last commit (or a fresh model's
//! config until the first). A `boost_score` query over it starts from the last commit and
//! commits, through the atomic checkpoint write, whenever the policy asks (between batches)
//! and when its input ends; each commit is also what `boost_predict` scores with from then
//! on, and what `boost_models()` shows.
//!
//! With a key (`boost_score(…, 'key')`) the live model is one model per key, its
//! checkpoint a directory ([`crate::runtime::keyed::checkpoint`]): the first keyed query over a fresh
//! live model makes it keyed, and a model committed one way is refused the other way. Each
//! partition of the query (DataFusion hashes the key across partitions) loads the keys it
//! meets and commits those that took rows; `boost_predict` does not serve a keyed model.
//!
//! Streaming semantics:
//! * **Exactly-once learning.** A commit records the largest `ts` learnt (per key, for a
//!   keyed model). A later query scores every row but learns only rows whose `ts` is after
//!   it, so a stream fed in two queries (or fed again after a crash) learns each row once,
//!   and two consecutive queries over the halves of a stream predict what one query over the
//!   whole does.
//! * **One trainer.** A second query training the same live model while one runs is refused
//!   with an error naming the model; queries are never interleaved. A query's partitions
//!   share its claim. Across processes, a registered live model holds its checkpoint's lock
//!   (`<path>.lock`) until the registry is dropped: a `run` job or another process's
//!   registry on the same checkpoint is refused.
//! * **A config for an existing checkpoint** must describe the model it holds (a restart
//!   with the same registration); one that describes another is refused, never ignored.
//! * **Cancel and crash.** A query dropped before its end commits nothing after its last
//!   periodic commit; a crashed process leaves the last commit whole. Rows learnt after it
//!   are learnt again by the next query that brings them.
//! * The `ts` column of a query over a live model is an integer or timestamp column.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::SystemTime;

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::SchemaRef;

use super::registry::ModelSource;
use crate::checkpoint::{self, StreamState};
use crate::files::OwnerLock;
use crate::model::{Model, ModelConfig};
use crate::runtime::BatchOperator;
use crate::runtime::KeyedStore;
use crate::runtime::delay::{DelayColumns, DelayedState, PendingLimits};
use crate::runtime::keyed::checkpoint::lock;
use crate::runtime::live::{CheckpointPolicy, LiveModel};
use crate::{Error, Result};

/// A model and its stream, shared read-only: a checkpoint's, or a live model's last commit.
pub type Frozen = Arc<(Model, StreamState)>;

/// What a live model has committed.
#[derive(Debug)]
enum Committed {
    /// Nothing yet: a fresh model, made of the slot's config at the first query.
    Nothing,
    /// One model's checkpoint.
    One(Frozen),
    /// A keyed checkpoint (a directory of one checkpoint per key), which the queries
    /// training it commit their keys to.
    Keyed(Arc<Mutex<KeyedStore>>),
}

/// A live model's shared state in a registry.
#[derive(Debug)]
pub struct LiveSlot {
    /// This process's hold on the checkpoint: no other process trains it meanwhile.
    _owner: Arc<OwnerLock>,
    name: String,
    policy: CheckpointPolicy,
    committed: RwLock<Committed>,
    /// When it was last written.
    committed_at: RwLock<Option<SystemTime>>,
    /// A fresh model's config, classes and seed.
    fresh: Option<(ModelConfig, Vec<String>, u64)>,
    /// Whether a query is training it.
    training: AtomicBool,
    /// Commits written in this process.
    commits: AtomicU64,
    /// Streams training it now (a query, or `streamboost serve`'s clients).
    clients: AtomicU64,
}

impl LiveSlot {
    /// The live model `name` at `policy.path`: loaded if it exists (a checkpoint file, or a
    /// keyed checkpoint's directory), else fresh; a fresh model's first query makes it one
    /// model, or one per key if the query names a key.
    pub(crate) fn open(
        name: &str, policy: CheckpointPolicy, fresh: Option<(ModelConfig, Vec<String>, u64)>,
    ) -> Result<Self> {
        policy.validate()?;
        let owner = OwnerLock::acquire(&policy.path, false)?;
        let committed = if KeyedStore::is_keyed(&policy.path) {
            Committed::Keyed(Arc::new(Mutex::new(KeyedStore::open(&policy.path)?)))
        } else if policy.path.is_file() {
            Committed::One(Arc::new(checkpoint::load(&policy.path)?))
        } else if fresh.is_none() {
            return Err(Error::config(
                "live",
                format!(
                    "`{}` does not exist and no config was given to create it",
                    policy.path.display()
                ),
            ));
        } else {
            Committed::Nothing
        };
        let held = match &committed {
            Committed::One(state) => Some(state.1.config.clone()),
            Committed::Keyed(store) => Some(lock(store).manifest().template.config.clone()),
            Committed::Nothing => None,
        };
        if let (Some(held), Some((config, _, _))) = (held, &fresh)
            && held != *config
        {
            return Err(Error::config(
                "live",
                format!(
                    "`{name}`: `{}` exists and holds {held}, which is not the model its config \
                     describes ({config}): drop config= to go on with the checkpoint, or name \
                     a new path",
                    policy.path.display()
                ),
            ));
        }
        Ok(LiveSlot {
            _owner: owner,
            name: name.to_string(),
            policy,
            committed: RwLock::new(committed),
            committed_at: RwLock::new(None),
            fresh,
            training: AtomicBool::new(false),
            commits: AtomicU64::new(0),
            clients: AtomicU64::new(0),
        })
    }

    /// The last commit of a model without a key.
    pub fn committed(&self) -> Option<Frozen> {
        match &*self.committed.read().expect("live lock") {
            Committed::One(state) => Some(state.clone()),
            _ => None,
        }
    }

    /// A keyed model's checkpoint.
    pub fn store(&self) -> Option<Arc<Mutex<KeyedStore>>> {
        match &*self.committed.read().expect("live lock") {
            Committed::Keyed(store) => Some(store.clone()),
            _ => None,
        }
    }

    /// What every key of a keyed model starts as (`None` for a model without a key).
    pub fn key_template(&self) -> Option<StreamState> {
        let store = self.store()?;
        let template = crate::runtime::keyed::checkpoint::lock(&store)
            .manifest()
            .template
            .clone();
        Some(template)
    }

    /// When the last commit of this session was written (`None` before the first).
    pub fn committed_at(&self) -> Option<SystemTime> {
        *self.committed_at.read().expect("live lock")
    }

    /// Commits written in this process.
    pub fn commits(&self) -> u64 {
        self.commits.load(Ordering::Acquire)
    }

    /// Streams training it now: a query, or the clients of `streamboost serve` scoring with
    /// it.
    pub fn clients(&self) -> u64 {
        self.clients.load(Ordering::Acquire)
    }

    /// Counts a stream that trains it from now on, until the guard drops.
    pub(crate) fn attach(self: &Arc<Self>) -> Attached {
        self.clients.fetch_add(1, Ordering::AcqRel);
        Attached(self.clone())
    }

    /// The checkpoint's path.
    pub fn path(&self) -> &Path {
        &self.policy.path
    }

    /// The fresh model's config, classes and seed (a model never committed is made of them).
    pub fn fresh(&self) -> Option<&(ModelConfig, Vec<String>, u64)> {
        self.fresh.as_ref()
    }

    /// The config its models are built from.
    pub fn config(&self) -> ModelConfig {
        match (self.committed(), self.key_template(), &self.fresh) {
            (Some(state), _, _) => state.1.config.clone(),
            (None, Some(template), _) => template.config,
            (None, None, Some((config, _, _))) => config.clone(),
            (None, None, None) => unreachable!("opened with a checkpoint or a config"),
        }
    }

    /// Takes the live model for one query's training: refused while another query trains
    /// it. The claim is shared by the query's partitions and ends when the last drops it.
    pub(crate) fn claim(self: &Arc<Self>) -> Result<Arc<Training>> {
        if self
            .training
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return Err(Error::config(
                "live",
                format!(
                    "live model `{}` is being trained by another query",
                    self.name
                ),
            ));
        }
        Ok(Arc::new(Training(self.clone())))
    }

    /// The keyed checkpoint a keyed query trains: the slot's, or one made now from
    /// `template` (a fresh model's first keyed query). A model committed without a key is
    /// refused.
    pub(crate) fn keyed_store(
        &self, template: impl FnOnce() -> Result<StreamState>,
    ) -> Result<Arc<Mutex<KeyedStore>>> {
        let refuse = || {
            Error::config(
                "key",
                format!(
                    "live model `{}` is one model (`{}`), not one per key",
                    self.name,
                    self.policy.path.display()
                ),
            )
        };
        match &*self.committed.read().expect("live lock") {
            Committed::Keyed(store) => return Ok(store.clone()),
            Committed::One(_) => return Err(refuse()),
            Committed::Nothing => {}
        }
        // Made outside the lock: the template is a fresh model's, which reads the slot.
        let template = template()?;
        let mut committed = self.committed.write().expect("live lock");
        match &*committed {
            Committed::Keyed(store) => Ok(store.clone()),
            Committed::One(_) => Err(refuse()),
            Committed::Nothing => {
                let seed = self.fresh.as_ref().map_or(0, |f| f.2);
                let store = KeyedStore::create(&self.policy.path, template, seed)?;
                let store = Arc::new(Mutex::new(store));
                *committed = Committed::Keyed(store.clone());
                Ok(store)
            }
        }
    }

    /// The policy of its commits.
    pub(crate) fn policy(&self) -> &CheckpointPolicy {
        &self.policy
    }

    /// The live model that trains this slot under `training` on batches of `input`,
    /// learning from column `label` (its features: the other columns but `not_features`),
    /// each row once by `learn_once_by`, one model per value of `key` if given, rows without
    /// their labels waiting for them to come later if `delayed` ties them (one model only,
    /// and a model committed with other columns is refused); committed by `policy` (the
    /// slot's, or a share of its keys' memory) and published here.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn train(
        self: &Arc<Self>, training: Arc<Training>, input: SchemaRef, label: &str,
        not_features: &[&str], learn_once_by: Option<&str>, key: Option<&str>,
        delayed: Option<DelayColumns>, policy: CheckpointPolicy, origin: &str,
    ) -> Result<LiveQuery> {
        let source = ModelSource::Live(self.clone());
        if delayed.is_some() && key.is_some() {
            return Err(Error::config(
                "key",
                "labels that come later are learnt by one model, not one per key",
            ));
        }
        let live = match key {
            None => {
                let (model, mut stream) = source.start_on(&input, label, not_features)?;
                match (delayed, &stream.delayed) {
                    (None, _) => {}
                    (Some(columns), None) => {
                        let state = DelayedState::new(columns, PendingLimits::default())?;
                        stream.delayed = Some(state);
                    }
                    (Some(columns), Some(state)) if state.columns != columns => {
                        return Err(Error::config(
                            "delayed",
                            format!(
                                "live model `{}` ties its labels by id `{}` and time `{}`, not \
                                 `{}` and `{}`",
                                self.name,
                                state.columns.id,
                                state.columns.time,
                                columns.id,
                                columns.time
                            ),
                        ));
                    }
                    (Some(_), Some(_)) => {}
                }
                LiveModel::new(model, stream, learn_once_by, policy, input, origin)?
            }
            Some(key) => {
                let store = self.keyed_store(|| {
                    let (_, template) = source.start_on(&input, label, not_features)?;
                    Ok(template)
                })?;
                LiveModel::keyed(store, key, learn_once_by, policy, input, origin)?
            }
        };
        Ok(LiveQuery::new(training, live))
    }
}

/// A stream counted among a live model's clients while it lives ([`LiveSlot::attach`]).
#[derive(Debug)]
pub(crate) struct Attached(Arc<LiveSlot>);

impl Drop for Attached {
    fn drop(&mut self) {
        self.0.clients.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A query's claim on training a live model (see [`LiveSlot::claim`]).
#[derive(Debug)]
pub(crate) struct Training(Arc<LiveSlot>);

impl Drop for Training {
    fn drop(&mut self) {
        self.0.training.store(false, Ordering::Release);
    }
}

/// A query (or one partition of a keyed query) training a live model: its [`LiveModel`],
/// whose commits it also publishes to the registry.
pub(crate) struct LiveQuery {
    training: Arc<Training>,
    live: LiveModel,
    _attached: Attached,
}

impl LiveQuery {
    /// Trains `live` under the claim `training`.
    pub(crate) fn new(training: Arc<Training>, live: LiveModel) -> Self {
        let attached = training.0.attach();
        LiveQuery {
            training,
            live,
            _attached: attached,
        }
    }

    /// Writes the checkpoint and makes it what the registry scores with.
    pub(crate) fn commit(&mut self) -> Result<()> {
        self.commit_at(None)
    }

    /// [`LiveQuery::commit`], with `position` if given (else the one the model has).
    pub(crate) fn commit_at(&mut self, position: Option<crate::runtime::Position>) -> Result<()> {
        self.live.commit(position)?;
        let slot = &self.training.0;
        slot.commits.fetch_add(1, Ordering::AcqRel);
        if let Some(state) = self.live.snapshot() {
            *slot.committed.write().expect("live lock") = Committed::One(Arc::new(state));
        }
        *slot.committed_at.write().expect("live lock") = Some(SystemTime::now());
        Ok(())
    }
}

impl LiveQuery {
    /// How far the model has learnt its input: a model without a key's largest
    /// `learn_once_by` value learnt so far is its `ts` (`None` for a keyed model, whose
    /// positions are its keys').
    #[cfg(feature = "serve")]
    pub(crate) fn position(&self) -> Option<crate::runtime::Position> {
        self.live.position()
    }

    /// Learns a batch of labels that come after their rows ([`LiveModel::labels`]): one
    /// outcome row per label, committing nothing.
    #[cfg(feature = "serve")]
    pub(crate) fn labels(&mut self, batch: &RecordBatch) -> Result<RecordBatch> {
        self.live.labels(batch)
    }

    /// Scores (and learns, where labelled) the rows of `batch`, committing nothing.
    pub(crate) fn take(&mut self, batch: &RecordBatch) -> Result<RecordBatch> {
        self.live.process(batch)
    }

    /// Whether the policy asks for a commit now.
    pub(crate) fn due(&self) -> bool {
        self.live.due()
    }
}

impl BatchOperator for LiveQuery {
    fn schema(&self) -> SchemaRef {
        self.live.schema()
    }

    fn process(&mut self, batch: &RecordBatch) -> Result<RecordBatch> {
        let out = self.take(batch)?;
        if self.due() {
            self.commit()?;
        }
        Ok(out)
    }

    fn finish(&mut self) -> Result<()> {
        self.commit()
    }
}
