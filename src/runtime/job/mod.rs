//! A long-running scoring job: a [`LiveModel`] over a directory of input files, one scored
//! Parquet file out per file in, exactly once across crashes and restarts.
//!
//! **Input.** CSV or Parquet files in the input directory, taken in name order, each once.
//! Only complete files are taken: a writer writes `name.csv.partial` (or any name starting
//! with `.`, or ending in `.partial` or `.tmp`) and renames it when done. Names must sort in
//! arrival order (a timestamp or a sequence number first); a file that arrives with a name
//! sorting before one already taken is rejected. Each file is read whole before any of its
//! rows is used, so a file that cannot be read, or whose columns do not fit the model, is
//! moved to `rejected/` in the input directory with a `<name>.reason.txt` beside it, and the
//! job goes on. Other columns than the model's features and label (an event id, a timestamp)
//! are carried to the output; [`Encodings::passthrough`] keeps such a column out of a fresh
//! model's features.
//!
//! **Labels that arrive later** ([`Job::labels_dir`], [`LiveSource::delayed`]). Label files
//! (an id, the label and a time column) in a second directory are taken with the event files
//! in one name order, a label file before an event file of the same name: names say when
//! each file arrived. An event row without its label is scored and waits in the model's
//! pending store ([`crate::runtime::delay`]); a label row teaches the model its event and
//! gets an *outcome* row in `<output dir>/labels/<stem>.parquet` (the class predicted when the event came, what the
//! label did, whether the prediction was right). The pending store is committed with the
//! model, and the position names the file in either directory, so the exactly-once rules
//! below hold for both. A label file that comes before any event file waits for one (the
//! model's features are an event file's columns).
//!
//! **Output.** `<output dir>/<stem>.parquet` per input file: every input column, then the
//! prediction columns, one row per input row, in input order. It appears whole (renamed into
//! place) once the first commit after its last row is in place; until then its rows are kept
//! in part files under `<output dir>/.parts/`.
//!
//! **Commit.** Between batches, when the [`CheckpointPolicy`] asks (every N rows, every T
//! seconds), when the input directory has nothing more to take for now, and on a stop:
//! first the rows scored since the last commit are written as part files, then the
//! checkpoint records the model with its [`Position`] (file, rows taken, whether the file is
//! done). The checkpoint is the commit point. A commit is not forced at each file's end: a
//! commit of the default model's 510 grown trees holds the job about a tenth of a second
//! and writes about 10 MB (RESULTS.md), so a directory of small files is committed by the
//! policy, not once per file. The model's state is taken at
//! the commit and written by a thread of its own while the model learns on
//! ([`LiveModel::commit_behind`]): one commit is written at a time, the next waits for it,
//! and the outputs of the files a commit covers are assembled once it is in place (at the
//! next commit, when the directory has nothing more to take, or on a stop). On restart:
//! * parts past the checkpoint's position are deleted (their rows are scored again, by the
//!   state that had not learnt them, so with the same predictions);
//! * the outputs of files the checkpoint covers whole are assembled from their parts if they
//!   are not in place yet;
//! * taking resumes at the position: no row is lost, none is learnt twice, none is emitted
//!   twice. A restarted job's outputs and final checkpoint are those of an uninterrupted one,
//!   bit for bit (tested, and by `benchmarks/run_crash.sh` under 100 SIGKILLs).
//!
//! **Stop.** A stop request (the command line's SIGINT or SIGTERM) is honoured between
//! batches: what was taken is committed, and [`Job::run`] returns.
//!
//! **Bounded.** The file being taken is held whole, plus the scored rows since the last
//! commit, and the node rows of the commit being written; a commit writes the nodes that
//! changed since the last one ([`crate::checkpoint::chain`]).

use std::collections::HashSet;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arrow::array::{Array, AsArray, new_null_array};
use arrow::compute::kernels::cmp::eq;
use arrow::datatypes::SchemaRef;
use arrow::datatypes::{DataType, Field, Schema};
use arrow::record_batch::RecordBatch;
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;

use crate::checkpoint::{self, StreamState};
use crate::columnar::{BatchWriter, PipeFormat, Table, read_table};
use crate::core::Encodings;
use crate::files::{Named, OwnerLock, refuse_overlaps, sync_dir, write_atomically};
use crate::learner::{Classifier, Config};
use crate::model::{Model, ModelConfig};
use crate::runtime::KeyedStore;
use crate::runtime::Position;
use crate::runtime::delay::{DelayColumns, DelayedState, PendingLimits};
use crate::runtime::live::{CheckpointPolicy, LiveModel};
use crate::runtime::replay::Session;
use crate::runtime::{BatchOperator, KeyMemory};
use crate::{Error, Result};

mod dir;
mod pipe;

/// A model to start from when the job's checkpoint does not exist yet: built at the first
/// file, whose columns give its features and whose labels give its classes (unless
/// declared). A label outside the class set is counted, and its row scored, not learnt.
#[derive(Debug, Clone)]
pub struct FreshModel {
    /// The model's config.
    pub config: ModelConfig,
    /// The model's seed.
    pub seed: u64,
    /// The label column.
    pub label: String,
    /// How columns are read (and which are passed through).
    pub encodings: Encodings,
    /// The classes, in order (else those of the first file, sorted by name).
    pub classes: Option<Vec<String>>,
}

/// A job: where its files come from and go, its live model, and how it runs.
#[derive(Debug, Clone)]
pub struct Job {
    /// The watched directory.
    pub input_dir: PathBuf,
    /// Where scored files go.
    pub output_dir: PathBuf,
    /// The live model: its checkpoint and policy, the model to start from, its key, and
    /// labels that come apart.
    pub live: LiveSource,
    /// Take what is there and return, rather than watch for more.
    pub once: bool,
    /// How often the directory is looked at for new files.
    pub poll: Duration,
    /// Labels that arrive after their events, as files (the id, label and time columns) in
    /// a second directory (see the module doc); their columns are `live.delayed`'s.
    pub labels_dir: Option<PathBuf>,
}

/// How a stream gets its live model: the checkpoint and when it is committed, the model to
/// start from when the checkpoint does not exist, one model or one per key, and labels that
/// come apart from their events. The directory and pipe jobs make their live models with it,
/// and so does any owner that takes a stream of tables (the Python package's live models).
#[derive(Debug, Clone)]
pub struct LiveSource {
    /// The live model's checkpoint and when it is committed.
    pub policy: CheckpointPolicy,
    /// The model to start from when the checkpoint does not exist.
    pub fresh: FreshModel,
    /// The key column, for one model per key (the checkpoint is then a directory, see
    /// [`crate::runtime::keyed::checkpoint`]); not a feature.
    pub key: Option<String>,
    /// Threads a keyed model spreads each batch's keys over (1: none); outputs and models
    /// are the same whatever the count.
    pub key_threads: usize,
    /// Labels that arrive after their events: the columns that tie them, and how many
    /// events wait for them.
    pub delayed: Option<DelayedLabels>,
}

/// Labels that come apart from their events: the columns that tie a label to its event,
/// and the bounds on the events waiting.
#[derive(Debug, Clone)]
pub struct DelayedLabels {
    /// The id and time columns, in the events and in the labels (not features).
    pub columns: DelayColumns,
    /// How many events wait for their labels, and for how long.
    pub limits: PendingLimits,
}

/// What a job has done so far (since this process started it).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JobStats {
    /// Files taken whole.
    pub files: u64,
    /// Rows taken.
    pub rows: u64,
    /// Files rejected.
    pub rejected: u64,
    /// The first [`JobStats::NAMED_REJECTIONS`] files rejected, each with its reason (the
    /// rest are counted in `rejected`).
    pub rejections: Vec<(String, String)>,
    /// Classes met in labels that the model does not know, in the order met (their rows are
    /// scored, not learnt); at most [`JobStats::NAMED_CLASSES`].
    pub unknown_classes: Vec<String>,
    /// Checkpoints begun (each is in place before the next begins).
    pub commits: u64,
    /// How long the last one held the job up (taking the model's state, and waiting for
    /// the commit before it).
    pub last_commit: Duration,
    /// How long they held the job up in all (waits for a commit to be in place included).
    pub commit_time: Duration,
    /// Bytes written by the commits in place (a model without a key).
    pub commit_bytes: u64,
    /// Label rows taken from the labels directory.
    pub labels: u64,
    /// Labelled rows taken (event rows with their label, and label rows that were learnt).
    pub labelled: u64,
    /// Of those, rows predicted right (before they were learnt).
    pub correct: u64,
    /// The file being taken.
    pub file: Option<String>,
    /// Whether the job stopped on request.
    pub stopped: bool,
    /// A keyed model's keys in memory, and its loads and spills so far.
    pub keys: Option<KeyMemory>,
    /// What the model's drift response has done over its life
    /// ([`crate::runtime::live::LiveModel::drift_counts`]).
    pub drift: Option<crate::eval::DriftCounts>,
}

impl JobStats {
    /// Rejected files named at most (a job that rejects more counts the rest).
    pub const NAMED_REJECTIONS: usize = 1000;
    /// Unknown classes named at most.
    pub const NAMED_CLASSES: usize = 100;
}

/// A stream's model between its tables: not loaded yet (a fresh model, or the checkpoint's,
/// is made at the next table), the checkpoint's as loaded at start (a keyed checkpoint's
/// store), or live.
pub enum Held {
    /// Nothing loaded.
    Unloaded,
    /// The checkpoint's model, its stream and chain.
    Loaded(Box<(Model, StreamState, Option<crate::checkpoint::Chain>)>),
    /// A keyed checkpoint's store.
    Store(Arc<Mutex<KeyedStore>>),
    /// The live model.
    Live(Box<LiveModel>),
}

impl LiveSource {
    /// The checkpoint, read once at start (one model, or a keyed checkpoint's store), and
    /// the position it records.
    pub fn load(&self) -> Result<(Held, Option<Position>)> {
        Ok(match (self.policy.path.exists(), &self.key) {
            (false, _) => (Held::Unloaded, None),
            (true, None) => {
                let state = checkpoint::load_chain(&self.policy.path)?;
                let position = state.1.position.clone();
                (Held::Loaded(Box::new(state)), position)
            }
            (true, Some(_)) => {
                let store = KeyedStore::open(&self.policy.path)?;
                let position = store.manifest().position.clone();
                (Held::Store(Arc::new(Mutex::new(store))), position)
            }
        })
    }

    /// Refuses a checkpoint that cannot be written, one that is not of the kind the key
    /// asks for (a directory for a keyed model, a file otherwise), and a bad config.
    pub fn validate(&self) -> Result<()> {
        self.policy.validate()?;
        let path = &self.policy.path;
        match (&self.key, path.exists(), KeyedStore::is_keyed(path)) {
            (None, _, true) => Err(Error::config(
                "key",
                format!(
                    "`{}` is a keyed checkpoint: name its key column",
                    path.display()
                ),
            )),
            (Some(_), true, false) => Err(Error::config(
                "key",
                format!(
                    "`{}` holds one model, not one per key: a keyed model needs a directory",
                    path.display()
                ),
            )),
            _ => Ok(()),
        }?;
        self.fresh.config.validate()
    }

    /// Refuses a label table without the id, label or time column (or the key, for a keyed
    /// model).
    pub fn check_label_columns(&self, table: &Table, label: &str) -> Result<()> {
        let Some(labels) = &self.delayed else {
            return Ok(());
        };
        let key = self.key.as_deref();
        for column in [
            labels.columns.id.as_str(),
            label,
            labels.columns.time.as_str(),
        ]
        .into_iter()
        .chain(key)
        {
            if table.schema.index_of(column).is_err() {
                return Err(Error::missing_column(&table.path, column, &table.schema));
            }
        }
        Ok(())
    }

    /// `stream` with the source's delayed labels, if it has them and `stream` has not.
    fn with_delayed(&self, mut stream: StreamState) -> Result<StreamState> {
        if let Some(labels) = &self.delayed
            && stream.delayed.is_none()
        {
            stream.delayed = Some(DelayedState::new(labels.columns.clone(), labels.limits)?);
        }
        Ok(stream)
    }

    /// The live model for `table`: the one held, rebound to its columns; or the checkpoint's;
    /// or a fresh one built from it. A table that does not fit is an `Err` inside the
    /// result, with the model given back.
    #[allow(clippy::type_complexity)]
    pub fn bind(
        &self, held: Held, table: &Table, learn_once_by: Option<&str>,
    ) -> Result<std::result::Result<LiveModel, (Held, Error)>> {
        let source = table.path.clone();
        let schema = table.schema.clone();
        let policy = self.policy.clone();
        Ok(match (held, &self.key) {
            (Held::Live(live), _) => live
                .rebind(schema, source)
                .map_err(|(live, e)| (Held::Live(live), e)),
            (held @ (Held::Loaded(_) | Held::Unloaded), None) if self.policy.path.exists() => {
                // A model that does not fit this file is dropped and read again for the next.
                let (model, stream, chain) = match held {
                    Held::Loaded(state) => *state,
                    _ => checkpoint::load_chain(&self.policy.path)?,
                };
                let stream = self.with_delayed(stream)?;
                LiveModel::new(model, stream, learn_once_by, policy, schema, source)
                    .map(|live| live.continuing(chain))
                    .map_err(|e| {
                        (
                            Held::Unloaded,
                            checkpoint::not_fitting(&self.policy.path, e),
                        )
                    })
            }
            (Held::Store(store), Some(key)) => {
                let keyed =
                    LiveModel::keyed(store.clone(), key, learn_once_by, policy, schema, source);
                keyed
                    .map(|live| live.spread_keys(self.key_threads))
                    .map_err(|e| {
                        (
                            Held::Store(store),
                            checkpoint::not_fitting(&self.policy.path, e),
                        )
                    })
            }
            (_, key) => {
                if let Some(key) = key
                    && table.schema.index_of(key).is_err()
                {
                    let e = Error::missing_column(&table.path, key.clone(), &table.schema);
                    return Ok(Err((Held::Unloaded, e)));
                }
                let (model, stream) = match self.fresh_from(table) {
                    Ok((model, stream)) => (model, self.with_delayed(stream)?),
                    Err(e) => return Ok(Err((Held::Unloaded, e))),
                };
                match key {
                    None => LiveModel::new(model, stream, learn_once_by, policy, schema, source),
                    Some(key) => {
                        let store = KeyedStore::create(&self.policy.path, stream, self.fresh.seed)?;
                        let store = Arc::new(Mutex::new(store));
                        LiveModel::keyed(store, key, learn_once_by, policy, schema, source)
                            .map(|live| live.spread_keys(self.key_threads))
                    }
                }
                .map_err(|e| (Held::Unloaded, e))
            }
        })
    }

    /// A fresh model, and its stream, for a stream whose first file is `table` (the key
    /// column, if any, is not a feature).
    fn fresh_from(&self, table: &Table) -> Result<(Model, StreamState)> {
        let f = &self.fresh;
        let mut encodings = f.encodings.clone();
        encodings.passthrough.extend(self.key.clone());
        let table = match &self.delayed {
            None => table,
            Some(labels) => {
                let columns = &labels.columns;
                encodings
                    .passthrough
                    .extend([columns.id.clone(), columns.time.clone()]);
                encodings.passthrough.dedup();
                match (&f.classes, table.schema.index_of(&f.label)) {
                    (_, Ok(_)) => table,
                    (Some(_), Err(_)) => &with_label_column(table, &f.label)?,
                    (None, Err(_)) => {
                        return Err(Error::config(
                            "classes",
                            "events without a label column give a fresh model no classes: \
                             declare them (--classes)",
                        ));
                    }
                }
            }
        };
        let session = Session::fresh(
            std::slice::from_ref(table),
            f.config.clone(),
            f.seed,
            &f.label,
            encodings,
            f.classes.as_deref(),
        )?;
        let spec = session
            .stream
            .spec
            .first_classes(session.model.n_classes())?;
        let stream = StreamState {
            spec,
            ..session.stream
        };
        Ok((session.model, stream))
    }
}

/// `table` (events whose labels come apart) with a null label column `label` appended:
/// what a fresh model of declared classes reads its features from.
fn with_label_column(table: &Table, label: &str) -> Result<Table> {
    let mut fields: Vec<_> = table.schema.fields().iter().cloned().collect();
    fields.push(Arc::new(Field::new(label, DataType::Utf8, true)));
    let schema = Arc::new(Schema::new(fields));
    let mut batches = Vec::new();
    for batch in table.batches()? {
        let batch = batch?;
        let mut columns = batch.columns().to_vec();
        columns.push(new_null_array(&DataType::Utf8, batch.num_rows()));
        batches.push(
            RecordBatch::try_new(schema.clone(), columns)
                .map_err(|e| format_error(&table.path, e))?,
        );
    }
    Ok(Table::new(&table.path, schema, batches))
}

/// Counts labelled rows and correct predictions of a scored batch (the label is column
/// `label`, the prediction the column after the input's).
fn count_correct(out: &RecordBatch, label: Option<usize>, progress: &mut JobStats) {
    let Some(label) = label else {
        return;
    };
    let truth = out.column(label);
    let predicted = out.column(out.num_columns() - 2);
    if truth.data_type() != predicted.data_type() {
        return;
    }
    if let Ok(same) = eq(truth, predicted) {
        progress.labelled += (same.len() - same.null_count()) as u64;
        progress.correct += same.true_count() as u64;
    }
}

fn note_commit(live: &LiveModel, progress: &mut JobStats) {
    let (commits, last) = live.commits();
    progress.commits = commits;
    progress.last_commit = last;
    (progress.commit_time, progress.commit_bytes) = live.commit_totals();
}

fn format_error(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Format {
        file: path.to_path_buf(),
        message: e.to_string(),
    }
}

/// A job of a 3-member Adaboost.OLM over the car data's classes, checkpointed at `model`,
/// reading `input` and writing `output` (the tests of both modes start from it).
#[cfg(test)]
fn car_job(input: PathBuf, output: PathBuf, model: &Path, passthrough: &[&str]) -> Job {
    let config =
        ModelConfig::from_json(serde_json::json!({"algorithm": "ada-olm", "n_learners": 3}))
            .expect("a config");
    let classes = ["acc", "good", "unacc", "vgood"].map(String::from).to_vec();
    Job {
        input_dir: input,
        output_dir: output,
        live: LiveSource {
            policy: CheckpointPolicy::new(model),
            fresh: FreshModel {
                config,
                seed: 1,
                label: "label".into(),
                encodings: Encodings {
                    passthrough: passthrough.iter().map(|c| c.to_string()).collect(),
                    ..Encodings::default()
                },
                classes: Some(classes),
            },
            key: None,
            key_threads: 1,
            delayed: None,
        },
        once: true,
        poll: Duration::from_millis(10),
        labels_dir: None,
    }
}
