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
//! **Labels that arrive later** ([`Job::labels`]). Label files (an id, the label and a time
//! column) in a second directory are taken with the event files in one name order, a label
//! file before an event file of the same name: names say when each file arrived. An event
//! row without its label is scored and waits in the model's pending store
//! ([`crate::delay`]); a label row teaches the model its event and gets an *outcome* row in
//! `<output dir>/labels/<stem>.parquet` (the class predicted when the event came, what the
//! label did, whether the prediction was right). The pending store is committed with the
//! model, and the position names the file in either directory, so the exactly-once rules
//! below hold for both. A label file that comes before any event file waits for one (the
//! model's features are an event file's columns).
//!
//! **Output.** `<output dir>/<stem>.parquet` per input file: every input column, then the
//! prediction columns, one row per input row, in input order. It appears whole (renamed into
//! place) at the first commit after its last row; until then its rows are kept in part files
//! under `<output dir>/.parts/`.
//!
//! **Commit.** Between batches, when the [`CheckpointPolicy`] asks (every N rows, every T
//! seconds), when the input directory has nothing more to take for now, and on a stop:
//! first the rows scored since the last commit are written as part files, then the
//! checkpoint records the model with its [`Position`] (file, rows taken, whether the file is
//! done). The checkpoint is the commit point. A commit is not forced at each file's end: a
//! checkpoint of 100 grown trees takes most of a second (RESULTS.md), so a directory of
//! small files is committed by the policy, not once per file. On restart:
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
//! commit; a commit writes the whole model.

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

use crate::checkpoint::{self, KeyedStore, StreamState};
use crate::columnar::{BatchOperator, KeyMemory};
use crate::columnar::{BatchWriter, PipeFormat, Table, read_table};
use crate::core::{Encodings, Position};
use crate::delay::{DelayColumns, DelayedState, PendingLimits};
use crate::files::{Named, OwnerLock, refuse_overlaps, sync_dir, write_atomically};
use crate::learner::{Classifier, Config};
use crate::live::{CheckpointPolicy, LiveModel};
use crate::model::{Model, ModelConfig};
use crate::replay::Session;
use crate::{Error, Result};

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
    /// The live model's checkpoint and when it is committed.
    pub policy: CheckpointPolicy,
    /// The model to start from when the checkpoint does not exist.
    pub fresh: FreshModel,
    /// Take what is there and return, rather than watch for more.
    pub once: bool,
    /// How often the directory is looked at for new files.
    pub poll: Duration,
    /// The key column, for one model per key (the checkpoint is then a directory, see
    /// [`crate::checkpoint::keyed`]); not a feature.
    pub key: Option<String>,
    /// Threads a keyed model spreads each batch's keys over (1: none); outputs and models
    /// are the same whatever the count.
    pub key_threads: usize,
    /// Labels that arrive after their events, as files in a second directory (see the module
    /// doc).
    pub labels: Option<LabelInput>,
}

/// A job's second input: label files beside the event files.
#[derive(Debug, Clone)]
pub struct LabelInput {
    /// The directory of label files (the id, label and time columns).
    pub dir: PathBuf,
    /// The id and time columns, in the events and in the labels (not features).
    pub columns: DelayColumns,
    /// How many events wait for their labels, and for how long.
    pub limits: PendingLimits,
}

/// One input file: its name and its directory. Inputs are taken in this order: by name,
/// then a label file before an event file of the same name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct Input {
    name: String,
    /// In the events directory (else in the labels directory).
    events: bool,
}

impl Input {
    /// The input a position is in.
    fn of(position: &Position) -> Input {
        Input {
            name: position.file.clone(),
            events: !position.labels,
        }
    }

    /// The position at `rows` rows of this input.
    fn at(&self, rows: u64, done: bool) -> Position {
        Position {
            file: self.name.clone(),
            rows,
            done,
            ts: None,
            labels: !self.events,
        }
    }

    /// Whether a job at `position` has taken this input whole.
    fn taken_at(&self, position: Option<&Position>) -> bool {
        position.is_some_and(|p| {
            let at = Input::of(p);
            *self < at || (*self == at && p.done)
        })
    }
}

/// What a job has done so far (since this process started it).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Progress {
    /// Files taken whole.
    pub files: u64,
    /// Rows taken.
    pub rows: u64,
    /// Files rejected.
    pub rejected: u64,
    /// The first [`Progress::NAMED_REJECTIONS`] files rejected, each with its reason (the
    /// rest are counted in `rejected`).
    pub rejections: Vec<(String, String)>,
    /// Classes met in labels that the model does not know, in the order met (their rows are
    /// scored, not learnt); at most [`Progress::NAMED_CLASSES`].
    pub unknown_classes: Vec<String>,
    /// Checkpoints written.
    pub commits: u64,
    /// How long the last one took.
    pub last_commit: Duration,
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
}

impl Progress {
    /// Rejected files named at most (a job that rejects more counts the rest).
    pub const NAMED_REJECTIONS: usize = 1000;
    /// Unknown classes named at most.
    pub const NAMED_CLASSES: usize = 100;
}

/// The job's model between files: not loaded yet (a fresh model, or the checkpoint's, is
/// made at the next file), the checkpoint's as loaded at start (a keyed checkpoint's
/// store), or live.
enum Held {
    Unloaded,
    Loaded(Box<(Model, StreamState)>),
    Store(Arc<Mutex<KeyedStore>>),
    Live(Box<LiveModel>),
}

/// Where a run is: the last position taken (committed, or not yet), and the files taken
/// whole since the last commit, whose outputs are assembled when it comes.
struct Taking {
    position: Option<Position>,
    uncommitted: Vec<Input>,
}

/// Where part files of the output are kept until their file is committed.
const PARTS_DIR: &str = ".parts";
/// Where the outcomes of label files go, in the output directory (and their parts, in
/// [`PARTS_DIR`]).
const LABELS_DIR: &str = "labels";
/// Where rejected input files go, in the input directory.
const REJECTED_DIR: &str = "rejected";

impl Job {
    /// Runs the job until its input is taken (`once`) or `stop` is set, calling `report`
    /// after each batch. Returns what it did. An error that is not a file's own (a failed
    /// commit: a full disk, a read-only directory) ends the job: the last checkpoint stays
    /// valid, and a restart goes on from it.
    pub fn run(&self, stop: &AtomicBool, report: &mut dyn FnMut(&Progress)) -> Result<Progress> {
        self.validate()?;
        let parts = self.output_dir.join(PARTS_DIR);
        std::fs::create_dir_all(&parts).map_err(|source| Error::Io {
            path: parts.clone(),
            source,
        })?;
        // One job per model and output directory, held until this returns.
        let _owners = self.own()?;
        // The checkpoint is read once: for its position now, and as the model at the first
        // file.
        let (mut held, committed) = self.load()?;
        self.recover(committed.as_ref())?;
        let mut progress = Progress::default();
        let mut taking = Taking {
            position: committed,
            uncommitted: Vec::new(),
        };
        // Names at or before the committed position were taken by an earlier run.
        let mut known: HashSet<Input> = HashSet::new();
        let mut first_scan = true;
        loop {
            let pending = self.scan(
                &mut known,
                taking.position.as_ref(),
                first_scan,
                &mut progress,
            )?;
            for input in pending {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let taken;
                (held, taken) =
                    self.take(&input, held, &mut taking, stop, &mut progress, report)?;
                if progress.stopped {
                    return Ok(progress);
                }
                if !taken {
                    // A label file before any event file: it waits, and so do the files after.
                    break;
                }
            }
            // The input is taken for now: what was taken since the last commit is committed.
            if let Held::Live(live) = &mut held
                && !taking.uncommitted.is_empty()
            {
                let at = taking.position.clone().expect("a file was taken");
                self.commit(live, at, &mut taking, &mut progress)?;
                report(&progress);
            }
            first_scan = false;
            if self.once || stop.load(Ordering::Relaxed) {
                progress.stopped = stop.load(Ordering::Relaxed);
                return Ok(progress);
            }
            let idle = Instant::now();
            while idle.elapsed() < self.poll && !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(50).min(self.poll));
            }
        }
    }

    /// Runs the job over an Arrow IPC stream read from `input` (standard input), writing
    /// each scored batch to standard output in `format` as soon as it is scored, until the
    /// stream ends or `stop` is set; commits by the policy, at the end and on a stop. The
    /// input and output directories are not used.
    ///
    /// A pipe has no offsets to resume from, so the checkpoint's position cannot say which
    /// rows were taken: with `learn_once_by` (an ordering column, ascending), a restarted
    /// job fed the stream again from an earlier point scores every row and learns only those
    /// after the committed largest value (per key, for a keyed model): learning is exactly
    /// once, output at least once (rows after the last commit are emitted again, with the
    /// same predictions; deduplicate by id downstream). Without it, a restarted job learns
    /// whatever it is given.
    pub fn run_pipe(
        &self, input: impl std::io::Read + Send + 'static, format: PipeFormat,
        learn_once_by: Option<&str>, stop: &AtomicBool, report: &mut dyn FnMut(&Progress),
    ) -> Result<Progress> {
        self.validate_model()?;
        let _owner = OwnerLock::acquire(&self.policy.path, false)?;
        let source = PathBuf::from("<stdin>");
        // Batches are read on their own thread, so that a stop is seen while the pipe is
        // quiet.
        let (sender, batches) = std::sync::mpsc::sync_channel::<Result<RecordBatch>>(2);
        std::thread::spawn(move || {
            let reader = match arrow::ipc::reader::StreamReader::try_new(input, None) {
                Ok(reader) => reader,
                Err(e) => {
                    let _ = sender.send(Err(format_error(Path::new("<stdin>"), e)));
                    return;
                }
            };
            for batch in reader {
                let batch = batch.map_err(|e| format_error(Path::new("<stdin>"), e));
                if sender.send(batch).is_err() {
                    return;
                }
            }
        });
        let (mut held, _) = self.load()?;
        let mut live: Option<LiveModel> = None;
        let mut output = BatchWriter::stdout(format);
        let mut progress = Progress {
            file: Some(source.display().to_string()),
            ..Progress::default()
        };
        loop {
            let batch = match batches.recv_timeout(Duration::from_millis(100)) {
                Ok(batch) => Some(batch?),
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => None,
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
            };
            if let Some(batch) = batch {
                let model = match live.take() {
                    Some(model) => model,
                    None => {
                        let table = Table::new(&source, batch.schema(), vec![batch.clone()]);
                        let held = std::mem::replace(&mut held, Held::Unloaded);
                        self.bind(held, &table, learn_once_by)?
                            .map_err(|(_, e)| e)?
                    }
                };
                let model = live.insert(model);
                let label = model.schema().index_of(model.label()).ok();
                let out = model.process(&batch)?;
                count_correct(&out, label, &mut progress);
                progress.rows += batch.num_rows() as u64;
                progress.keys = model.key_memory();
                progress.unknown_classes = model.unknown_classes();
                progress.unknown_classes.truncate(Progress::NAMED_CLASSES);
                output.write(&out)?;
            }
            let stopping = stop.load(Ordering::Relaxed);
            if let Some(model) = &mut live
                && (model.due() || stopping)
            {
                model.commit(None)?;
                note_commit(model, &mut progress);
            }
            report(&progress);
            if stopping {
                progress.stopped = true;
                return Ok(progress);
            }
        }
        if let Some(model) = &mut live {
            model.commit(None)?;
            note_commit(model, &mut progress);
        }
        output.finish()?;
        report(&progress);
        Ok(progress)
    }

    /// The checkpoint, read once at start (one model, or a keyed checkpoint's store), and
    /// the position it records.
    fn load(&self) -> Result<(Held, Option<Position>)> {
        Ok(match (self.policy.path.exists(), &self.key) {
            (false, _) => (Held::Unloaded, None),
            (true, None) => {
                let state = checkpoint::load(&self.policy.path)?;
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

    /// Commits the live model at `at`, then assembles the outputs of the files taken whole
    /// since the last commit (all named at or before `at`).
    fn commit(
        &self, live: &mut LiveModel, at: Position, taking: &mut Taking, progress: &mut Progress,
    ) -> Result<()> {
        live.commit(Some(at.clone()))?;
        taking.position = Some(at);
        note_commit(live, progress);
        for input in std::mem::take(&mut taking.uncommitted) {
            self.assemble(&input)?;
        }
        Ok(())
    }

    /// Takes the model and the output directory for this process: a second job on either
    /// is refused ([`Error::Locked`]), a lock left by a job that died is taken over.
    fn own(&self) -> Result<[Arc<OwnerLock>; 2]> {
        Ok([
            OwnerLock::acquire(&self.policy.path, false)?,
            OwnerLock::acquire(&self.output_dir, true)?,
        ])
    }

    /// The job's directories and model, each with the flag that names it on the command line:
    /// what it reads, then what it writes.
    fn paths(&self) -> (Vec<Named<'_>>, Vec<Named<'_>>) {
        let mut inputs = vec![Named::new("--input-dir", &self.input_dir)];
        inputs.extend(self.labels.iter().map(|l| Named::new("--labels", &l.dir)));
        let outputs = vec![
            Named::new("--output-dir", &self.output_dir),
            Named::new("--model", &self.policy.path),
        ];
        (inputs, outputs)
    }

    /// Refuses, before any file is taken, input directories that are not there, outputs that
    /// overlap the inputs or each other (an output directory that is the input directory
    /// would take its own outputs as input on a restart), and a checkpoint that cannot be
    /// written. A missing output directory is created.
    fn validate(&self) -> Result<()> {
        let (inputs, outputs) = self.paths();
        refuse_overlaps(&inputs, &outputs)?;
        std::fs::create_dir_all(&self.output_dir).map_err(|source| Error::Io {
            path: self.output_dir.clone(),
            source,
        })?;
        let labels = self.labels.iter().map(|l| &l.dir);
        for dir in [&self.input_dir].into_iter().chain(labels) {
            if !dir.is_dir() {
                return Err(Error::Io {
                    path: dir.clone(),
                    source: std::io::Error::new(std::io::ErrorKind::NotFound, "not a directory"),
                });
            }
        }
        self.validate_model()
    }

    /// Refuses a checkpoint that cannot be written, one that is not of the kind the key
    /// asks for (a directory for a keyed model, a file otherwise), and a bad config.
    fn validate_model(&self) -> Result<()> {
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

    /// Brings the output directory to the checkpoint's position: assembles the output of a
    /// file the checkpoint says is done, and deletes parts past the position.
    fn recover(&self, position: Option<&Position>) -> Result<()> {
        let mut committed = Vec::new();
        for (input, start, path) in self.parts()? {
            // Files before the position's were taken whole; the position's file up to its
            // rows; anything after is stale, scored again by the state that had not learnt it.
            let at = position.map(Input::of);
            let kept = position
                .zip(at.as_ref())
                .is_some_and(|(p, at)| input < *at || (input == *at && (p.done || start < p.rows)));
            if !kept {
                remove(&path)?;
            } else if input.taken_at(position) || at.as_ref().is_some_and(|at| input < *at) {
                committed.push(input);
            }
        }
        committed.dedup();
        for input in committed {
            self.assemble(&input)?;
        }
        Ok(())
    }

    /// The part files: (input, first row, path), in input order then first row.
    fn parts(&self) -> Result<Vec<(Input, u64, PathBuf)>> {
        let mut parts = Vec::new();
        for events in [true, false] {
            let dir = self.parts_dir(events);
            if !events && !dir.is_dir() {
                continue;
            }
            for entry in read_dir(&dir)? {
                let file_name = entry.file_name().to_string_lossy().into_owned();
                let Some((name, start)) = file_name
                    .strip_suffix(".parquet")
                    .and_then(|s| s.rsplit_once('@'))
                    .and_then(|(name, start)| Some((name.to_string(), start.parse().ok()?)))
                else {
                    continue;
                };
                parts.push((Input { name, events }, start, entry.path()));
            }
        }
        parts.sort();
        Ok(parts)
    }

    /// Where the parts of event files (or of label files) are kept.
    fn parts_dir(&self, events: bool) -> PathBuf {
        let parts = self.output_dir.join(PARTS_DIR);
        if events {
            parts
        } else {
            parts.join(LABELS_DIR)
        }
    }

    /// The directory an input is read from.
    fn dir_of(&self, input: &Input) -> &Path {
        match (&self.labels, input.events) {
            (Some(labels), false) => &labels.dir,
            _ => &self.input_dir,
        }
    }

    /// The input files to take now, in name order: those after the position (and the
    /// position's file, if not done). A file that arrived with a name at or before the
    /// position is rejected.
    fn scan(
        &self, known: &mut HashSet<Input>, position: Option<&Position>, first_scan: bool,
        progress: &mut Progress,
    ) -> Result<Vec<Input>> {
        let mut inputs = Vec::new();
        let labels = self.labels.iter().map(|l| (&l.dir, false));
        for (dir, events) in std::iter::once((&self.input_dir, true)).chain(labels) {
            inputs.extend(
                read_dir(dir)?
                    .into_iter()
                    .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|name| is_input(name))
                    .map(|name| Input { name, events }),
            );
        }
        inputs.sort();
        let mut pending = Vec::new();
        for input in inputs {
            let new = known.insert(input.clone());
            match (input.taken_at(position), new && !first_scan) {
                (false, _) => pending.push(input),
                (true, true) => {
                    let why = "it arrived after a file named later was taken (names must sort \
                               in arrival order)";
                    self.reject(&input, why, progress)?;
                }
                (true, false) => {}
            }
        }
        Ok(pending)
    }

    /// Takes `input` (from the position's row if it is the position's file), committing by
    /// the policy; at its end its last part is written, and its output is assembled at the
    /// next commit. Event rows are scored (and learnt, when they carry their label); label
    /// rows are learnt, each giving its outcome row. Returns the model and whether the file
    /// was taken: a label file is not while no event file has bound the model.
    fn take(
        &self, input: &Input, held: Held, taking: &mut Taking, stop: &AtomicBool,
        progress: &mut Progress, report: &mut dyn FnMut(&Progress),
    ) -> Result<(Held, bool)> {
        let path = self.dir_of(input).join(&input.name);
        let table = match read_table(&path) {
            Ok(table) => table,
            Err(e) => {
                self.reject(input, &e.to_string(), progress)?;
                return Ok((held, true));
            }
        };
        let bound = match (input.events, held) {
            (true, held) => self.bind(held, &table, None)?,
            (false, Held::Live(live)) => Ok(*live),
            // The model is bound by an event file's columns: the first in the directory.
            (false, held) => match self.first_events()? {
                Some(events) => self.bind(held, &events, None)?,
                None => return Ok((held, false)),
            },
        };
        let bound = match (bound, input.events) {
            (Ok(live), false) => match self.check_label_columns(&table, live.label()) {
                Ok(()) => Ok(live),
                Err(e) => Err((Held::Live(Box::new(live)), e)),
            },
            (bound, _) => bound,
        };
        let mut live = match bound {
            Ok(live) => live,
            Err((held, e)) => {
                self.reject(input, &e.to_string(), progress)?;
                return Ok((held, true));
            }
        };
        let start = match &taking.position {
            Some(p) if Input::of(p) == *input && !p.done => p.rows,
            _ => 0,
        };
        progress.file = Some(input.name.clone());
        let label = live.schema().index_of(live.label()).ok();
        let mut pending: Vec<RecordBatch> = Vec::new();
        let (mut part_start, mut row) = (start, 0u64);
        let total = table.n_rows() as u64;
        for batch in table.batches()? {
            let batch = batch?;
            let n = batch.num_rows() as u64;
            let skip = start.saturating_sub(row).min(n);
            let mut at = skip;
            row += skip;
            // The batch is cut where the row-count policy commits, so commits fall on the
            // same rows whatever the input's batches.
            while at < n {
                let len = live.rows_until_due().map_or(n - at, |due| due.min(n - at));
                let rows = batch.slice(at as usize, len as usize);
                let out = match input.events {
                    true => {
                        let out = live.process(&rows)?;
                        count_correct(&out, label, progress);
                        progress.rows += len;
                        out
                    }
                    false => {
                        let out = live.labels(&rows)?;
                        count_outcomes(&out, progress);
                        progress.labels += len;
                        out
                    }
                };
                (at, row) = (at + len, row + len);
                progress.keys = live.key_memory();
                pending.push(out);
                let stopping = stop.load(Ordering::Relaxed);
                if (live.due() || stopping) && row < total {
                    let schema = pending[0].schema();
                    self.write_part(input, part_start, &schema, &pending)?;
                    self.commit(&mut live, input.at(row, false), taking, progress)?;
                    (part_start, pending) = (row, Vec::new());
                    if stopping {
                        progress.stopped = true;
                        report(progress);
                        return Ok((Held::Live(Box::new(live)), true));
                    }
                }
                report(progress);
            }
        }
        // Once per file: a keyed model's classes are gathered over its keys.
        progress.unknown_classes = live.unknown_classes();
        progress.unknown_classes.truncate(Progress::NAMED_CLASSES);
        if !pending.is_empty() || part_start == 0 {
            let schema = match pending.first() {
                Some(batch) => batch.schema(),
                None if input.events => live.schema(),
                None => live
                    .labels(&RecordBatch::new_empty(table.schema.clone()))?
                    .schema(),
            };
            self.write_part(input, part_start, &schema, &pending)?;
        }
        let done = input.at(row, true);
        taking.position = Some(done.clone());
        taking.uncommitted.push(input.clone());
        progress.files += 1;
        if live.due() {
            self.commit(&mut live, done, taking, progress)?;
        }
        report(progress);
        Ok((Held::Live(Box::new(live)), true))
    }

    /// Refuses a label file without the id, label or time column (or the key, for a keyed
    /// model).
    fn check_label_columns(&self, table: &Table, label: &str) -> Result<()> {
        let Some(labels) = &self.labels else {
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

    /// `stream` with the job's delayed labels, if it has them and `stream` has not.
    fn with_delayed(&self, mut stream: StreamState) -> Result<StreamState> {
        if let Some(labels) = &self.labels
            && stream.delayed.is_none()
        {
            stream.delayed = Some(DelayedState::new(labels.columns.clone(), labels.limits)?);
        }
        Ok(stream)
    }

    /// The first event file in the input directory (in name order) that reads, to bind the
    /// model to its columns before a label file is taken; `None` if there is none yet.
    fn first_events(&self) -> Result<Option<Table>> {
        let mut names: Vec<String> = read_dir(&self.input_dir)?
            .into_iter()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|name| is_input(name))
            .collect();
        names.sort();
        Ok(names
            .iter()
            .find_map(|name| read_table(&self.input_dir.join(name)).ok()))
    }

    /// The live model for `table`: the one held, rebound to its columns; or the checkpoint's;
    /// or a fresh one built from it. A table that does not fit is an `Err` inside the
    /// result, with the model given back.
    #[allow(clippy::type_complexity)]
    fn bind(
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
                let (model, stream) = match held {
                    Held::Loaded(state) => *state,
                    _ => checkpoint::load(&self.policy.path)?,
                };
                let stream = self.with_delayed(stream)?;
                LiveModel::new(model, stream, learn_once_by, policy, schema, source).map_err(|e| {
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
        let table = match &self.labels {
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

    /// Writes the scored rows of `name` from row `start` as a part file, atomically.
    fn write_part(
        &self, input: &Input, start: u64, schema: &SchemaRef, batches: &[RecordBatch],
    ) -> Result<()> {
        let dir = self.parts_dir(input.events);
        std::fs::create_dir_all(&dir).map_err(|source| Error::Io {
            path: dir.clone(),
            source,
        })?;
        let path = dir.join(format!("{}@{start:020}.parquet", input.name));
        write_parquet(&path, schema, batches.iter().cloned().map(Ok))
    }

    /// Assembles the output of committed file `name` from its parts, atomically, and
    /// deletes the parts. Nothing to do if it has no parts (already assembled); only the
    /// parts to delete if its output is in place (a stop came while they were deleted).
    fn assemble(&self, input: &Input) -> Result<()> {
        let parts: Vec<PathBuf> = self
            .parts()?
            .into_iter()
            .filter(|(i, _, _)| i == input)
            .map(|(_, _, path)| path)
            .collect();
        let Some(first) = parts.first() else {
            return Ok(());
        };
        let dir = match input.events {
            true => self.output_dir.clone(),
            false => self.output_dir.join(LABELS_DIR),
        };
        std::fs::create_dir_all(&dir).map_err(|source| Error::Io {
            path: dir.clone(),
            source,
        })?;
        let output = dir.join(output_name(&input.name));
        // The output is renamed into place whole, before its parts are removed: if it is
        // there, a stop cut the removal short, and the parts left are already in it (made
        // again from them, it would lose the rows of the parts removed).
        if output.exists() {
            for part in parts {
                remove(&part)?;
            }
            return Ok(());
        }
        if let [only] = &parts[..] {
            std::fs::rename(only, &output).map_err(|source| Error::Io {
                path: output.clone(),
                source,
            })?;
            return sync_dir(&dir);
        }
        let schema = ParquetRecordBatchReaderBuilder::try_new(open(first)?)
            .map_err(|e| format_error(first, e))?
            .schema()
            .clone();
        let mut batches = Vec::new();
        for part in &parts {
            let reader = ParquetRecordBatchReaderBuilder::try_new(open(part)?)
                .and_then(|b| b.build())
                .map_err(|e| format_error(part, e))?;
            for batch in reader {
                batches.push(batch.map_err(|e| format_error(part, e)));
            }
        }
        write_parquet(&output, &schema, batches.into_iter())?;
        for part in parts {
            remove(&part)?;
        }
        Ok(())
    }

    /// Moves `input` to `rejected/` in its directory, with the reason beside it, and counts
    /// it (naming it in `progress`).
    fn reject(&self, input: &Input, why: &str, progress: &mut Progress) -> Result<()> {
        progress.rejected += 1;
        if progress.rejections.len() < Progress::NAMED_REJECTIONS {
            progress
                .rejections
                .push((input.name.clone(), why.to_string()));
        }
        let (from, name) = (self.dir_of(input), &input.name);
        let dir = from.join(REJECTED_DIR);
        std::fs::create_dir_all(&dir).map_err(|source| Error::Io {
            path: dir.clone(),
            source,
        })?;
        let reason = dir.join(format!("{name}.reason.txt"));
        std::fs::write(&reason, format!("{why}\n")).map_err(|source| Error::Io {
            path: reason,
            source,
        })?;
        let to = dir.join(name);
        std::fs::rename(from.join(name), &to).map_err(|source| Error::Io { path: to, source })
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

/// Whether a directory entry named `name` is an input file to take: a CSV or Parquet file
/// that is not being written (no leading `.`, no `.partial` or `.tmp` ending).
fn is_input(name: &str) -> bool {
    !name.starts_with('.') && (name.ends_with(".csv") || name.ends_with(".parquet"))
}

/// The output file of input file `name`: its stem, as Parquet.
fn output_name(name: &str) -> String {
    let stem = name
        .strip_suffix(".csv")
        .or_else(|| name.strip_suffix(".parquet"))
        .unwrap_or(name);
    format!("{stem}.parquet")
}

/// Counts labelled rows and correct predictions of a scored batch (the label is column
/// `label`, the prediction the column after the input's).
fn count_correct(out: &RecordBatch, label: Option<usize>, progress: &mut Progress) {
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

/// Counts the label rows that were learnt, and those whose event was predicted right.
fn count_outcomes(out: &RecordBatch, progress: &mut Progress) {
    if let Some(correct) = out.column_by_name("correct") {
        let correct = correct.as_boolean();
        progress.labelled += (correct.len() - correct.null_count()) as u64;
        progress.correct += correct.true_count() as u64;
    }
}

fn note_commit(live: &LiveModel, progress: &mut Progress) {
    let (commits, last) = live.commits();
    progress.commits = commits;
    progress.last_commit = last;
}

/// Writes `batches` of `schema` as a Parquet file at `path`, atomically.
fn write_parquet(
    path: &Path, schema: &SchemaRef, batches: impl Iterator<Item = Result<RecordBatch>>,
) -> Result<()> {
    write_atomically(path, |file| {
        let props = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .build();
        let mut writer = ArrowWriter::try_new(file, schema.clone(), Some(props))
            .map_err(|e| format_error(path, e))?;
        for batch in batches {
            writer.write(&batch?).map_err(|e| format_error(path, e))?;
        }
        writer.close().map_err(|e| format_error(path, e))?;
        Ok(())
    })
}

fn format_error(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Format {
        file: path.to_path_buf(),
        message: e.to_string(),
    }
}

fn open(path: &Path) -> Result<File> {
    File::open(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })
}

fn remove(path: &Path) -> Result<()> {
    std::fs::remove_file(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })
}

fn read_dir(dir: &Path) -> Result<Vec<std::fs::DirEntry>> {
    let io = |source| Error::Io {
        path: dir.to_path_buf(),
        source,
    };
    std::fs::read_dir(dir)
        .map_err(io)?
        .collect::<std::io::Result<Vec<_>>>()
        .map_err(io)
}
