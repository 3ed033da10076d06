//! A model's place in its stream: the [`Cursor`] around a [`BoostOperator`] that owns what
//! outlives a batch — the counters, the position a job reached, learning each row once by an
//! ordering column, the events waiting for their labels — and saves it all with the model.
//! The operator itself only binds columns, encodes, scores, learns and appends.
//!
//! **Restart.** [`Cursor::save`] writes the model and the stream state (categories met,
//! counters, position, waiting events) to one checkpoint; [`Cursor::resume`] goes on from it
//! bit for bit. Under [`Cursor::learn_once_by`], rows at or before the largest ordering value
//! the checkpoint's position records are scored and not learnt again, so a stream fed again
//! after a restart is learnt once.
//!
//! **Cancel and crash.** A cursor holds its state in memory only: what it learnt after its
//! last save is lost with the process and must be fed again (from the saved position); a
//! batch that fails leaves the counters and position as they were before it.
//!
//! **Bounds.** The events waiting for labels are bounded by the store's limits
//! ([`crate::runtime::delay::PendingLimits`]), and what leaves unlearnt is counted; the
//! unknown labels a cursor names are at most [`BoostOperator::NAMED_UNKNOWN_CLASSES`], all of
//! them counted in [`OperatorStats::unknown_labels`].

use std::path::{Path, PathBuf};

use arrow::array::AsArray;
use arrow::compute::cast;
use arrow::datatypes::{DataType, SchemaRef};
use arrow::record_batch::RecordBatch;

mod delayed;

pub use delayed::Waiting;
pub use delayed::{Side, TimeMerge, outcome_schema};

use super::delay::DelayedState;
use crate::checkpoint::{self, StreamState};
use crate::columnar::{BoostOperator, Encodings, Table, infer_spec};
use crate::core::StreamSpec;
use crate::learner::{Config, Ranker};
use crate::model::{Model, ModelConfig};
use crate::weak::Structure;
use crate::{Classifier, Error, Result};

/// Record batches in; the same rows out, in order, with predictions appended. What
/// [`crate::runtime::stream::ScoredStream`] and the SQL plan node drive: a [`Cursor`], or a
/// [`crate::runtime::keyed::KeyedOperator`] with one per key.
pub trait BatchOperator {
    /// The output schema, known before the first batch.
    fn schema(&self) -> SchemaRef;

    /// Scores (and learns from) every row of `batch` in order; returns its output rows.
    fn process(&mut self, batch: &RecordBatch) -> Result<RecordBatch>;

    /// Learns from a batch of labels that arrive after their events; one outcome row per
    /// label row ([`Cursor::labels`]). An operator that takes its labels in the event rows
    /// refuses it.
    fn labels(&mut self, batch: &RecordBatch) -> Result<RecordBatch> {
        let _ = batch;
        Err(Error::config(
            "labels",
            "this operator takes its labels in the event rows",
        ))
    }

    /// The input has ended (not called on cancel or error): a live model commits here.
    fn finish(&mut self) -> Result<()> {
        Ok(())
    }
}

/// Counters of an operator's rows: of one batch, or of a stream so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct OperatorStats {
    /// Rows scored (every input row).
    pub rows_seen: u64,
    /// Rows also learnt (label present and in the class set).
    pub rows_learnt: u64,
    /// Rows whose label was not in the class set (scored only).
    pub unknown_labels: u64,
}

impl OperatorStats {
    /// The counters of two streams together (two keys' models).
    pub fn add(&self, other: &OperatorStats) -> OperatorStats {
        OperatorStats {
            rows_seen: self.rows_seen + other.rows_seen,
            rows_learnt: self.rows_learnt + other.rows_learnt,
            unknown_labels: self.unknown_labels + other.unknown_labels,
        }
    }
}

/// How far a live model has taken its input: the input file it is in, or last finished, and
/// how many of that file's rows it has taken (scored, and learnt if labelled). Files are
/// taken in name order, so every file named before `file` was taken whole. A checkpoint
/// holding a position is the commit point of a job: on restart, the rows it covers are
/// neither learnt nor emitted again.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Position {
    /// The input file's name within its directory (not its path: the directory may move).
    pub file: String,
    /// Rows of that file taken.
    pub rows: u64,
    /// Whether the whole file was taken (its output is then committed, or is committed
    /// first thing on restart).
    pub done: bool,
    /// For a model trained through SQL, the largest ordering value (`ts`) learnt: a later
    /// query learns only rows after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ts: Option<i64>,
    /// Whether the file is in a job's labels directory (labels that arrive after their
    /// events); files of both directories are taken in one name order, labels first on a
    /// tie.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub labels: bool,
    /// For a model trained by named producers (`streamboost serve`'s streams), each
    /// producer's largest ordering value learnt: a producer's rows at or before it are
    /// scored, not learnt again.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub producers: std::collections::BTreeMap<String, i64>,
}

/// Learning each row once, by an ordering column: the rows at or before the largest value
/// learnt when the cursor started are scored, not learnt.
#[derive(Debug, Clone)]
struct LearnOnce {
    column: String,
    index: usize,
    learnt_up_to: Option<i64>,
}

impl LearnOnce {
    /// Whether each row of `batch` was learnt before (its `ts` at or before the mark; empty
    /// when nothing was learnt before), and the batch's largest `ts`.
    fn learnt(&self, batch: &RecordBatch, source: &Path) -> Result<(Vec<bool>, Option<i64>)> {
        let ts = cast(batch.column(self.index), &DataType::Int64).map_err(|e| {
            Error::SchemaMismatch {
                file: source.to_path_buf(),
                first: PathBuf::from("the ordering column"),
                detail: format!("`{}` is not an integer or timestamp: {e}", self.column),
            }
        })?;
        let ts = ts.as_primitive::<arrow::datatypes::Int64Type>();
        let learnt = match self.learnt_up_to {
            Some(mark) => ts.iter().map(|t| t.is_some_and(|t| t <= mark)).collect(),
            None => Vec::new(),
        };
        Ok((learnt, ts.iter().flatten().max()))
    }
}

/// A [`BoostOperator`] at its place in a stream: its counters, its position, learning once
/// by an ordering column, and labels that arrive after their events (see the module doc).
#[derive(Debug)]
pub struct Cursor<M> {
    op: BoostOperator<M>,
    stats: OperatorStats,
    /// How far a live model has taken its input, saved with it.
    position: Option<Position>,
    /// The ordering column by which rows are learnt once, if asked
    /// ([`Cursor::learn_once_by`]).
    once: Option<LearnOnce>,
    /// Labels that arrive after their events, if asked ([`Cursor::delay_labels`]).
    delayed: Option<Box<DelayedState>>,
}

impl<M: Structure> Cursor<M> {
    /// Bytes this cursor holds: its operator's ([`BoostOperator::heap_bytes`]) and its
    /// waiting events. The estimate a keyed model's memory budget counts.
    pub fn heap_bytes(&self) -> usize {
        std::mem::size_of::<Self>() - std::mem::size_of::<BoostOperator<M>>()
            + self.op.heap_bytes()
            + self.delayed.as_ref().map_or(0, |d| d.bytes())
    }
}

impl<M: Classifier + Ranker> Cursor<M> {
    /// A cursor at the start of a stream over a new [`BoostOperator`] (see
    /// [`BoostOperator::new`] for the arguments).
    pub fn new(
        model: M, spec: &StreamSpec, input: SchemaRef, label: &str, encodings: &Encodings,
        source: impl Into<PathBuf>,
    ) -> Result<Self> {
        BoostOperator::new(model, spec, input, label, encodings, source).map(Cursor::at_start)
    }

    /// A cursor at the start of a stream over `op`.
    pub fn at_start(op: BoostOperator<M>) -> Self {
        Cursor {
            op,
            stats: OperatorStats::default(),
            position: None,
            once: None,
            delayed: None,
        }
    }

    /// The operator: columns bound, rows scored and learnt.
    pub fn operator(&self) -> &BoostOperator<M> {
        &self.op
    }

    /// The output schema: the input's columns, then the two prediction columns.
    pub fn schema(&self) -> SchemaRef {
        self.op.schema()
    }

    /// The schema of the batches it reads.
    pub fn input_schema(&self) -> &SchemaRef {
        self.op.input_schema()
    }

    /// The model.
    pub fn model(&self) -> &M {
        self.op.model()
    }

    /// The model, to save it (a save takes a tree's nodes out and puts them back).
    pub(crate) fn model_mut(&mut self) -> &mut M {
        self.op.model_mut()
    }

    /// The model, consuming the cursor.
    pub fn into_model(self) -> M {
        self.op.into_model()
    }

    /// The label column.
    pub fn label(&self) -> &str {
        self.op.label()
    }

    /// The stream as seen so far ([`BoostOperator::spec`]).
    pub fn spec(&self) -> StreamSpec {
        self.op.spec()
    }

    /// Counters of the stream so far.
    pub fn stats(&self) -> OperatorStats {
        self.stats
    }

    /// The labels met outside the class set ([`BoostOperator::unknown_classes`]).
    pub fn unknown_classes(&self) -> &[String] {
        self.op.unknown_classes()
    }

    /// How far a live model has taken its input, if it is told.
    pub fn position(&self) -> Option<&Position> {
        self.position.as_ref()
    }

    /// Records how far the model has taken its input; the next save writes it.
    pub fn set_position(&mut self, position: Position) {
        self.position = Some(position);
    }

    /// Learns each row once across restarts, by ordering column `ts` (an integer or
    /// timestamp column, ascending): rows at or before the largest `ts` the position says
    /// was learnt are scored by the model as it is (`predict_proba`), changing nothing in it,
    /// and the position's `ts` follows the rows taken, so the next save records it. A stream
    /// fed again after a crash, or in two parts, is learnt once, and the model ends as one
    /// fed the stream once, bit for bit.
    pub fn learn_once_by(&mut self, ts: &str) -> Result<()> {
        let input = self.op.input_schema();
        let index = input
            .index_of(ts)
            .map_err(|_| Error::missing_column(self.op.source().to_path_buf(), ts, input))?;
        let data_type = input.field(index).data_type();
        if !(data_type.is_integer() || matches!(data_type, DataType::Timestamp(..))) {
            return Err(Error::config(
                "ts",
                format!("the ordering column `{ts}` is {data_type}, not an integer or timestamp"),
            ));
        }
        self.once = Some(LearnOnce {
            column: ts.to_string(),
            index,
            learnt_up_to: self.position.as_ref().and_then(|p| p.ts),
        });
        Ok(())
    }

    /// The same model, stream, counters and position on batches of another `input` schema
    /// (the next file of a job), `source` naming it in errors. An input that does not fit
    /// the model is refused, and the cursor given back unchanged with the error.
    pub fn rebind(
        mut self, input: SchemaRef, source: impl Into<PathBuf>,
    ) -> std::result::Result<Self, Box<(Self, Error)>> {
        let source = source.into();
        let once_index = match &self.once {
            Some(once) => match input.index_of(&once.column) {
                Ok(i) => Some(i),
                Err(_) => {
                    let e = Error::missing_column(source, once.column.clone(), &input);
                    return Err(Box::new((self, e)));
                }
            },
            None => None,
        };
        if let Err(e) = self.op.rebind(input, source) {
            return Err(Box::new((self, e)));
        }
        if let (Some(once), Some(i)) = (&mut self.once, once_index) {
            once.index = i;
        }
        Ok(self)
    }

    /// Scores every row of `batch` in order, learning from those with a known label (once,
    /// under [`Cursor::learn_once_by`]; a row without its label waits for it under
    /// [`Cursor::delay_labels`]), and returns the batch with the prediction columns appended.
    pub fn process(&mut self, batch: &RecordBatch) -> Result<RecordBatch> {
        let (learnt, last_ts) = match &self.once {
            Some(once) => once.learnt(batch, self.op.source())?,
            None => (Vec::new(), None),
        };
        let first_row = self.stats.rows_seen;
        let (out, counts) = self.with_waiting(batch, |op, waiting| {
            op.process(batch, first_row, &learnt, waiting)
        })?;
        self.stats = self.stats.add(&counts);
        if self.once.is_some() {
            // A model learnt through SQL has no file: its position is its ordering value.
            let position = self.position.get_or_insert_with(|| Position {
                file: "sql".to_string(),
                ..Position::default()
            });
            position.rows = self.stats.rows_learnt;
            position.ts = position.ts.max(last_ts);
        }
        Ok(out)
    }
}

impl<M: Classifier + Ranker> BatchOperator for Cursor<M> {
    fn schema(&self) -> SchemaRef {
        Cursor::schema(self)
    }

    fn process(&mut self, batch: &RecordBatch) -> Result<RecordBatch> {
        Cursor::process(self, batch)
    }

    fn labels(&mut self, batch: &RecordBatch) -> Result<RecordBatch> {
        Cursor::labels(self, batch)
    }
}

impl Cursor<Model> {
    /// A fresh model of `config` (built with `seed`) over `table`'s stream: its features,
    /// categories and classes read from the table with default encodings, column `label`
    /// its label, batches of its schema.
    pub fn for_table(config: &ModelConfig, table: &Table, label: &str, seed: u64) -> Result<Self> {
        let encodings = Encodings::default();
        let spec = infer_spec(std::slice::from_ref(table), label, &encodings)?;
        let model = config.build(&spec, seed)?;
        Self::new(
            model,
            &spec,
            table.schema.clone(),
            label,
            &encodings,
            &table.path,
        )
    }

    /// Saves the model and the stream state (categories met, counters) to a checkpoint.
    pub fn save(&mut self, path: &Path, config: &ModelConfig) -> Result<checkpoint::Metadata> {
        let stream = self.stream_state(config);
        checkpoint::save(path, self.op.model_mut(), &stream)
    }

    /// Takes the next commit of the model and the stream state to the checkpoint chain at
    /// `path`, for any thread to write ([`checkpoint::prepare`]).
    pub fn prepare_commit(
        &mut self, path: &Path, config: &ModelConfig, chain: Option<&checkpoint::Chain>,
        limits: &checkpoint::ChainLimits,
    ) -> checkpoint::Prepared {
        let stream = self.stream_state(config);
        checkpoint::prepare(path, self.op.model_mut(), &stream, chain, limits)
    }

    /// The stream state a checkpoint of this operator holds, for a model of `config`.
    pub fn stream_state(&self, config: &ModelConfig) -> StreamState {
        StreamState {
            config: config.clone(),
            spec: self.spec(),
            encodings: self.op.encodings().clone(),
            label: self.op.label().to_string(),
            stats: self.stats,
            position: self.position.clone(),
            delayed: self.delayed.as_deref().cloned(),
        }
    }

    /// An operator that continues from a checkpoint on batches of `input` schema, with the
    /// checkpoint's counters; also returns the checkpoint's config. An input that lacks a
    /// feature column or holds one in a column of another kind is refused with
    /// [`Error::CheckpointMismatch`].
    pub fn resume(
        path: &Path, input: SchemaRef, source: impl Into<PathBuf>,
    ) -> Result<(Self, ModelConfig)> {
        let (model, stream) = checkpoint::load(path)?;
        let op = Cursor::continuing(model, &stream, input, source)
            .map_err(|e| checkpoint::not_fitting(path, e))?;
        Ok((op, stream.config))
    }

    /// An operator that goes on with `model` and `stream` (a checkpoint's contents): its
    /// spec, label, encodings, counters and position.
    pub fn continuing(
        model: Model, stream: &StreamState, input: SchemaRef, source: impl Into<PathBuf>,
    ) -> Result<Self> {
        let mut op = Cursor::new(
            model,
            &stream.spec,
            input,
            &stream.label,
            &stream.encodings,
            source,
        )?;
        op.stats = stream.stats;
        op.position = stream.position.clone();
        if let Some(delayed) = &stream.delayed {
            op.delay_labels(delayed.clone())?;
        }
        Ok(op)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::columnar::CLASSES_KEY;
    use crate::columnar::operator_tests::{batch, spec};
    use crate::core::FeatureKind;
    use crate::weak::HoeffdingTreeConfig;

    #[test]
    fn one_output_row_per_input_row_and_label_typed_predictions() {
        let spec = spec();
        let model = HoeffdingTreeConfig::default().build(&spec, 1).unwrap();
        let input = batch(
            vec![Some(1.0), None, Some(f64::NAN), Some(3.0)],
            vec![Some("a"), Some("zzz"), None, Some("b")],
            vec![Some(1), Some(2), None, Some(7)],
        );
        let mut op = Cursor::new(
            model,
            &spec,
            input.schema(),
            "label",
            &Encodings::default(),
            "t",
        )
        .unwrap();
        let schema = op.schema();
        let out = op.process(&input).unwrap();
        assert_eq!(out.schema(), schema);
        assert_eq!(out.num_rows(), 4);
        assert_eq!(out.column(3).data_type(), &DataType::Int64);
        let probs = out.column(4).as_fixed_size_list();
        for r in 0..4 {
            let p = probs.value(r);
            let p = p.as_primitive::<arrow::datatypes::Float64Type>();
            assert!((p.values().iter().sum::<f64>() - 1.0).abs() < 1e-12);
        }
        let classes = &schema.field(4).metadata()[CLASSES_KEY];
        assert_eq!(classes, r#"["1","2"]"#);
        // Row 2 has a null label (scored only); row 3's label 7 is not a class.
        assert_eq!(
            op.stats(),
            OperatorStats {
                rows_seen: 4,
                rows_learnt: 2,
                unknown_labels: 1
            }
        );
        let FeatureKind::Nominal { categories } = &op.spec().features[1].kind else {
            unreachable!("c is nominal")
        };
        assert_eq!(categories, &["a", "b", "zzz"]);
    }
}
