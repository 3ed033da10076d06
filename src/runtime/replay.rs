//! Replaying a logged stream: tables encoded as a fresh model's stream or as the continuation
//! of a checkpoint's, replayed in file or seeded order by [`crate::eval::Prequential`], with
//! the stream's counters kept and the model saved by a [`CheckpointPolicy`]. The command
//! line's `replay` is this module plus flags and presentation.
//!
//! Streaming semantics: every row is scored once and learnt at most once. A label the model
//! has not met is a new class: the row is scored among the classes the model knows, the
//! model grows, then learns it. A checkpoint is written between rows, atomically, so a crash
//! leaves the previous one; it records the rows seen and the classes met so far, so a replay
//! of the remaining rows from it continues bit for bit where the saved model stopped, growing
//! where the uninterrupted replay grows.
//! What is held: the model, and a batch of rows. Input files are opened, not read; a first
//! pass learns the stream's categories and classes, and the replay reads, encodes and
//! replays a batch (8,192 rows) at a time, so memory does not grow with the stream, except
//! for a shuffled order or a multi-label stream, encoded whole ([`Rows::encoded`]). The
//! caller sees each row as it is replayed. An input file that changes while it is replayed
//! is an error at its end.

use std::path::Path;
use std::time::Instant;

use crate::checkpoint::{self, StreamState};
use crate::columnar::{
    Encoded, StreamEncoder, Table, encode_with_spec, grow_spec, infer_spec, infer_spec_declared,
};
use crate::core::{ClassSet, Dataset, Encodings, Rng, StreamSpec};
use crate::learner::{Classifier, Config};
use crate::model::{Model, ModelConfig};
use crate::runtime::OperatorStats;
use crate::{Error, Result};

pub use crate::runtime::live::CheckpointPolicy;

/// A model and the stream it replays: built fresh, or resumed from a checkpoint.
pub struct Session {
    /// The model.
    pub model: Model,
    /// Its config, encodings and counters (what a checkpoint holds), and the spec of the
    /// whole stream: every category and class its rows bring.
    pub stream: StreamState,
    /// The rows to replay.
    pub rows: Rows,
}

/// A replay's rows. They stay in their tables (in memory, or in files read again on each
/// pass) until they are encoded: whole ([`Rows::encoded`]) or a batch at a time
/// ([`Rows::for_each_chunk`]).
pub struct Rows {
    /// The spec the rows are encoded for from the first: the model's.
    start: StreamSpec,
    tables: Vec<Table>,
    label: String,
    encodings: Encodings,
}

impl Session {
    /// A fresh model of `config` (seeded with `seed`) over `tables`, labelled by `label`.
    ///
    /// The model starts with the `classes` declared, in their order, or with every class of
    /// the tables (sorted by name) if `None`. A class of the tables outside a declared set
    /// is listed after it, in the order the rows bring them, and the model grows when it
    /// meets one ([`crate::Classifier::add_class`]).
    pub fn fresh(
        tables: &[Table], config: ModelConfig, seed: u64, label: &str, encodings: Encodings,
        classes: Option<&[String]>,
    ) -> Result<Self> {
        config.validate()?;
        let inferred = match classes {
            None => infer_spec(tables, label, &encodings)?,
            Some(names) => infer_spec_declared(tables, label, &encodings, names)?,
        };
        let start = match classes {
            None => inferred.clone(),
            Some(_) if inferred.is_multi_label() => {
                return Err(Error::config(
                    "classes",
                    "a multi-label stream's labels are its label columns' names",
                ));
            }
            Some(names) => StreamSpec {
                classes: ClassSet::new(names.to_vec())?,
                ..inferred.clone()
            },
        };
        let model = config.build(&start, seed)?;
        // Beyond a declared set, the classes in the order the rows bring them.
        let whole = match classes {
            None => inferred,
            Some(_) => grow_spec(tables, &start, label, &encodings)?,
        };
        let stream = StreamState {
            config,
            spec: whole,
            encodings,
            label: label.to_string(),
            stats: OperatorStats::default(),
            position: None,
            delayed: None,
        };
        let rows = Rows::new(tables, start, &stream);
        Ok(Session {
            model,
            stream,
            rows,
        })
    }

    /// The model saved at `path`, to continue over `tables` (the rows after those it saw).
    pub fn resume(tables: &[Table], path: &Path) -> Result<Self> {
        let (model, stream) = checkpoint::load(path)?;
        let start = stream.spec.clone();
        // The stream's spec grows with the categories and classes these rows reveal.
        let whole = grow_spec(tables, &start, &stream.label, &stream.encodings)
            .map_err(|e| checkpoint::not_fitting(path, e))?;
        let stream = StreamState {
            spec: whole,
            ..stream
        };
        let rows = Rows::new(tables, start, &stream);
        Ok(Session {
            model,
            stream,
            rows,
        })
    }
}

impl Rows {
    fn new(tables: &[Table], start: StreamSpec, stream: &StreamState) -> Self {
        Rows {
            start,
            tables: tables.to_vec(),
            label: stream.label.clone(),
            encodings: stream.encodings.clone(),
        }
    }

    /// Number of rows to replay.
    pub fn n_rows(&self) -> usize {
        self.tables.iter().map(Table::n_rows).sum()
    }

    /// The rows, encoded whole (for a shuffled order, or a multi-label stream).
    pub fn encoded(&self) -> Result<Encoded> {
        encode_with_spec(&self.tables, &self.start, &self.label, &self.encodings)
    }

    /// The rows of a multiclass stream, encoded a batch at a time and handed to `each` in
    /// order: what [`crate::eval::Prequential::run_chunks`] replays with only a batch in
    /// memory.
    pub fn for_each_chunk(&self, each: &mut dyn FnMut(Dataset) -> Result<()>) -> Result<()> {
        StreamEncoder::new(&self.tables, &self.start, &self.label, &self.encodings)?
            .for_each_chunk(each)
    }
}

/// Counts the rows of a replay and saves its model by a [`CheckpointPolicy`].
pub struct Checkpointer<'a> {
    policy: Option<CheckpointPolicy>,
    stream: StreamState,
    unknown_label_rows: &'a [usize],
    saved_at: Option<usize>,
    /// Rows replayed at the last save, and when it was.
    saved_rows: u64,
    last_save: Instant,
    /// Rows the model had learnt before this replay.
    learnt_before: u64,
}

impl<'a> Checkpointer<'a> {
    /// The counters and checkpoints of a replay of `stream`'s rows, whose rows
    /// `unknown_label_rows` have a label outside the model's classes.
    pub fn new(
        policy: Option<CheckpointPolicy>, stream: &StreamState, unknown_label_rows: &'a [usize],
    ) -> Self {
        Checkpointer {
            policy,
            stream: stream.clone(),
            unknown_label_rows,
            saved_at: None,
            saved_rows: 0,
            last_save: Instant::now(),
            learnt_before: stream.stats.rows_learnt,
        }
    }

    /// After the row at replay `position` (row `row` of the data) was scored, and learnt if
    /// `labelled`; `model_current` says whether `model` is as that row left it (a
    /// checkpoint due meanwhile waits for the row that does: the last of rows given to the
    /// model together, [`crate::eval::RowOutcome::model_current`]).
    pub fn after_row(
        &mut self, position: usize, row: usize, labelled: bool, model_current: bool,
        model: &mut Model,
    ) -> Result<()> {
        self.stream.stats.rows_seen += 1;
        if labelled {
            // A batch model scores labelled rows without learning them (it counts them).
            self.stream.stats.rows_learnt += u64::from(model.learns_online());
        } else if self.unknown_label_rows.binary_search(&row).is_ok() {
            self.stream.stats.unknown_labels += 1;
        }
        if let Some(policy) = &self.policy
            && model_current
            && policy.due(
                position as u64 + 1 - self.saved_rows,
                self.last_save.elapsed(),
            )
        {
            checkpoint::save(&policy.path, model, &self.state_of(model)?)?;
            self.saved_at = Some(position);
            self.saved_rows = position as u64 + 1;
            self.last_save = Instant::now();
        }
        Ok(())
    }

    /// The stream's state as `model` has it: the classes it has met so far, the first of the
    /// stream's (which lists the classes in the order the model grows by).
    fn state_of(&self, model: &Model) -> Result<StreamState> {
        Ok(StreamState {
            spec: self.stream.spec.first_classes(model.n_classes())?,
            ..self.stream.clone()
        })
    }

    /// Under a label delay, the rows learnt were `learnt` (those whose label came in time),
    /// not every labelled row: the count the checkpoint keeps.
    pub fn learnt_under_delay(&mut self, learnt: u64) {
        self.stream.stats.rows_learnt = self.learnt_before + learnt;
    }

    /// At the end of `rows` rows: saves the final checkpoint unless the last row already did,
    /// and returns where, with the rows the model has seen.
    pub fn finish(&mut self, rows: usize, model: &mut Model) -> Result<Option<(&Path, u64)>> {
        let Some(CheckpointPolicy { path, .. }) = &self.policy else {
            return Ok(None);
        };
        if self.saved_at != rows.checked_sub(1) {
            checkpoint::save(path, model, &self.state_of(model)?)?;
        }
        Ok(Some((path, self.stream.stats.rows_seen)))
    }
}

/// The replay order: file order (`None`), or a seeded shuffle within the training part and
/// within the test part (the test rows stay after the training rows).
pub fn order(n: usize, test_start: Option<usize>, shuffle: Option<u64>) -> Option<Vec<usize>> {
    shuffle.map(|seed| {
        let mut order: Vec<usize> = (0..n).collect();
        let mut rng = Rng::new(seed);
        let split = test_start.unwrap_or(n).min(n);
        let (train, test) = order.split_at_mut(split);
        rng.shuffle(train);
        rng.shuffle(test);
        order
    })
}
