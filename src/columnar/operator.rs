//! The model as an Arrow record-batch operator: batches in, the same batches out with the
//! model's predictions appended, rows processed in order (test, then train).
//!
//! For a label column `y` the operator appends `predicted_y` (the label's type) and
//! `predicted_y_probs` (a fixed-size list of per-class probabilities; the class names are in
//! that field's metadata under [`CLASSES_KEY`], as a JSON array). A row whose label is
//! present and in the class set is predicted, then learnt; a row whose label is null, or
//! absent from the input's schema, is only scored; a row whose label is not in the class set
//! is only scored and counted in [`OperatorStats::unknown_labels`]. Every input row gets
//! exactly one output row, in order. Features follow [`RowEncoder`]'s rules.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, FixedSizeListArray, Float64Array, StringArray, UInt32Array,
};
use arrow::compute::{cast, take};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use arrow::record_batch::RecordBatch;

use super::encode::infer_spec;
use super::input::Table;
use super::label_sets::LabelSetReader;
use super::rows::{RowEncoder, map_bytes, utf8};
use super::waiting::Waiting;
use crate::checkpoint::{self, StreamState};
use crate::core::math::argmax;
use crate::core::{ClassId, FeatureKind, StreamSpec, vec_bytes};
use crate::core::{Encodings, OperatorStats, Position};
use crate::eval::ranking::predicted_set;
use crate::learner::{Classifier, Config, Ranker};
use crate::model::{Model, ModelConfig};
use crate::runtime::delay::DelayedState;
use crate::weak::Structure;
use crate::{Error, Result};

/// Key of the class names in the metadata of the probabilities field.
pub const CLASSES_KEY: &str = "streamboost.classes";

/// Record batches in; the same rows out, in order, with predictions appended. What
/// `stream::ScoredStream` (feature `stream`) and the SQL plan node drive: a [`BoostOperator`], or a
/// [`super::KeyedOperator`] with one per key.
pub trait BatchOperator {
    /// The output schema, known before the first batch.
    fn schema(&self) -> SchemaRef;

    /// Scores (and learns from) every row of `batch` in order; returns its output rows.
    fn process(&mut self, batch: &RecordBatch) -> Result<RecordBatch>;

    /// Learns from a batch of labels that arrive after their events; one outcome row per
    /// label row ([`BoostOperator::labels`]). An operator that takes its labels in the event
    /// rows refuses it.
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

impl<M: Classifier + Ranker> BatchOperator for BoostOperator<M> {
    fn schema(&self) -> SchemaRef {
        BoostOperator::schema(self)
    }

    fn process(&mut self, batch: &RecordBatch) -> Result<RecordBatch> {
        BoostOperator::process(self, batch)
    }

    fn labels(&mut self, batch: &RecordBatch) -> Result<RecordBatch> {
        BoostOperator::labels(self, batch)
    }
}

/// Learning each row once, by an ordering column: the rows at or before the largest value
/// learnt when the operator started are scored, not learnt.
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

/// Where the rows' targets come from and how predictions are written.
enum Targets {
    /// One class per row.
    Classes {
        /// Input index of the label column, if the input has one.
        label_column: Option<usize>,
        class_ids: HashMap<String, ClassId>,
        /// The class names as an array of the label's type, for `take`.
        class_values: ArrayRef,
    },
    /// A label set per row (a list column or `<label>_<name>` flag columns), if the input
    /// has them.
    LabelSets(Option<LabelSetReader>),
}

/// A model applied to record batches in order: a [`Classifier`] on a multiclass stream, a
/// [`Ranker`] on a multi-label one.
pub struct BoostOperator<M> {
    model: M,
    /// The stream the model was built for; its categories grow with the encoder's.
    spec: StreamSpec,
    encodings: Encodings,
    encoder: RowEncoder,
    label: String,
    targets: Targets,
    input_schema: SchemaRef,
    schema: SchemaRef,
    /// Names the input in errors.
    source: PathBuf,
    stats: OperatorStats,
    /// The labels met outside the class set, in the order met (at most
    /// [`BoostOperator::NAMED_UNKNOWN_CLASSES`]; all are counted in `stats`).
    unknown_classes: Vec<String>,
    /// How far a live model has taken its input, saved with it.
    position: Option<Position>,
    /// The ordering column by which rows are learnt once, if asked
    /// ([`BoostOperator::learn_once_by`]).
    once: Option<LearnOnce>,
    /// Encoded rows of the current batch, reused.
    rows: Vec<f64>,
    /// One row's probabilities, reused.
    probs: Vec<f64>,
    /// Labels that arrive after their events, if asked ([`BoostOperator::delay_labels`]).
    delayed: Option<Box<DelayedState>>,
}

impl<M: Structure> BoostOperator<M> {
    /// Bytes this operator holds: its model's heap, its buffers, its waiting events, and its
    /// stream description (its spec, row encoder, class lookup and output schema). The
    /// estimate a keyed model's memory budget counts; `benchmarks/key_bytes.rs` sets it
    /// beside what a counting allocator measures.
    pub fn heap_bytes(&self) -> usize {
        let targets = match &self.targets {
            Targets::Classes {
                class_ids,
                class_values,
                ..
            } => map_bytes(class_ids) + class_values.get_array_memory_size(),
            // A multi-label reader holds a few names and indices.
            Targets::LabelSets(_) => self.spec.classes.names().len() * 64,
        };
        let schema = (self.schema.fields().iter())
            .map(|f| std::mem::size_of::<Field>() + f.name().capacity() + 16)
            .sum::<usize>();
        std::mem::size_of::<Self>()
            + self.model.heap_bytes()
            + vec_bytes(&self.rows)
            + vec_bytes(&self.probs)
            + self.delayed.as_ref().map_or(0, |d| d.bytes())
            + self.spec.heap_bytes()
            + self.encoder.heap_bytes()
            + targets
            + schema
            + self.label.capacity()
            + self.source.as_os_str().len()
    }
}

impl<M: Classifier + Ranker> BoostOperator<M> {
    /// An operator for batches of `input` schema, scoring with `model` (built for `spec`)
    /// and learning from column `label` (or, for a multi-label stream, the `<label>_<name>`
    /// columns) when the input has it. `source` names the input in errors.
    pub fn new(
        model: M, spec: &StreamSpec, input: SchemaRef, label: &str, encodings: &Encodings,
        source: impl Into<PathBuf>,
    ) -> Result<Self> {
        let source = source.into();
        if model.n_classes() != spec.n_classes() {
            return Err(Error::config(
                "model",
                format!(
                    "predicts {} classes but the stream has {}",
                    model.n_classes(),
                    spec.n_classes()
                ),
            ));
        }
        let (encoder, targets, schema) = bind(spec, &input, label, encodings, &source)?;
        Ok(BoostOperator {
            model,
            spec: spec.clone(),
            encodings: encodings.clone(),
            encoder,
            label: label.to_string(),
            targets,
            input_schema: input,
            schema,
            source,
            stats: OperatorStats::default(),
            unknown_classes: Vec::new(),
            position: None,
            once: None,
            rows: Vec::new(),
            probs: vec![0.0; spec.n_classes()],
            delayed: None,
        })
    }

    /// The output schema: the input's columns, then the two prediction columns.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// The schema of the batches it reads.
    pub fn input_schema(&self) -> &SchemaRef {
        &self.input_schema
    }

    /// The model.
    pub fn model(&self) -> &M {
        &self.model
    }

    /// The model, to save it (a save takes a tree's nodes out and puts them back).
    pub(crate) fn model_mut(&mut self) -> &mut M {
        &mut self.model
    }

    /// The model, consuming the operator.
    pub fn into_model(self) -> M {
        self.model
    }

    /// The label column.
    pub fn label(&self) -> &str {
        &self.label
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
        let index = self
            .input_schema
            .index_of(ts)
            .map_err(|_| Error::missing_column(self.source.clone(), ts, &self.input_schema))?;
        let data_type = self.input_schema.field(index).data_type();
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
    /// the model is refused, and the operator given back unchanged with the error.
    pub fn rebind(
        mut self, input: SchemaRef, source: impl Into<PathBuf>,
    ) -> std::result::Result<Self, Box<(Self, Error)>> {
        let source = source.into();
        if input.fields() == self.input_schema.fields() {
            // The same columns (the next file of a stream): the encoder and targets hold.
            self.input_schema = input;
            self.source = source;
            return Ok(self);
        }
        // The categories met so far, which the new encoder goes on from.
        let spec = self.spec();
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
        match bind(&spec, &input, &self.label, &self.encodings, &source) {
            Ok((encoder, targets, schema)) => {
                if let (Some(once), Some(i)) = (&mut self.once, once_index) {
                    once.index = i;
                }
                self.spec = spec;
                self.encoder = encoder;
                self.targets = targets;
                self.schema = schema;
                self.input_schema = input;
                self.source = source;
                Ok(self)
            }
            Err(e) => Err(Box::new((self, e))),
        }
    }

    /// Counters of the stream so far.
    pub fn stats(&self) -> OperatorStats {
        self.stats
    }

    /// Unknown labels named at most by [`BoostOperator::unknown_classes`].
    pub const NAMED_UNKNOWN_CLASSES: usize = 100;

    /// The labels this operator met outside its class set (scored, not learnt), in the
    /// order met, since it was made (not saved with the model).
    pub fn unknown_classes(&self) -> &[String] {
        &self.unknown_classes
    }

    pub(super) fn stats_mut(&mut self) -> &mut OperatorStats {
        &mut self.stats
    }

    /// Names the input in errors.
    pub(super) fn source(&self) -> &Path {
        &self.source
    }

    pub(super) fn delayed(&self) -> Option<&DelayedState> {
        self.delayed.as_deref()
    }

    pub(super) fn take_delayed(&mut self) -> Option<Box<DelayedState>> {
        self.delayed.take()
    }

    pub(super) fn set_delayed(&mut self, delayed: Option<Box<DelayedState>>) {
        self.delayed = delayed;
    }

    /// The class names as values of the label column's type, in class order.
    pub(super) fn class_values(&self) -> ArrayRef {
        match &self.targets {
            Targets::Classes { class_values, .. } => class_values.clone(),
            Targets::LabelSets(_) => {
                Arc::new(StringArray::from_iter_values(self.spec.classes.names()))
            }
        }
    }

    /// The stream as seen so far: the model's features with every category met (new ones
    /// after the spec's, in order of appearance) and its class set.
    pub fn spec(&self) -> StreamSpec {
        let mut spec = self.spec.clone();
        for (j, feature) in spec.features.iter_mut().enumerate() {
            if let FeatureKind::Nominal { categories } = &mut feature.kind {
                *categories = self.encoder.categories(j).to_vec();
            }
        }
        spec
    }

    /// Scores every row of `batch` in order, learning from those with a known label, and
    /// returns the batch with the prediction columns appended.
    pub fn process(&mut self, batch: &RecordBatch) -> Result<RecordBatch> {
        self.with_waiting(batch, |op, waiting| op.process_waiting(batch, waiting))
    }

    /// [`BoostOperator::process`], where a row without a label of its own is, when
    /// `waiting` is given, scored and kept waiting for the label that comes later.
    fn process_waiting(
        &mut self, batch: &RecordBatch, mut waiting: Option<&mut Waiting<'_>>,
    ) -> Result<RecordBatch> {
        if batch.schema().fields() != self.input_schema.fields() {
            return Err(Error::SchemaMismatch {
                file: PathBuf::from("record batch"),
                first: PathBuf::from("the operator's input schema"),
                detail: format!(
                    "got columns {:?}, expected {:?}",
                    batch
                        .schema()
                        .fields()
                        .iter()
                        .map(|f| f.name())
                        .collect::<Vec<_>>(),
                    self.input_schema
                        .fields()
                        .iter()
                        .map(|f| f.name())
                        .collect::<Vec<_>>()
                ),
            });
        }
        let first_row = self.stats.rows_seen;
        self.encoder
            .encode(batch, &self.source, first_row, &mut self.rows)?;
        let (learnt, last_ts) = match &self.once {
            Some(once) => once.learnt(batch, &self.source)?,
            None => (Vec::new(), None),
        };
        let mut columns: Vec<ArrayRef> = batch.columns().to_vec();
        match &self.targets {
            Targets::Classes { .. } => {
                self.classify(batch, &learnt, waiting.as_deref_mut(), &mut columns)?
            }
            Targets::LabelSets(_) if waiting.is_some() => {
                return Err(Error::config(
                    "label",
                    "labels that arrive later are for multiclass streams; a multi-label \
                     stream carries its label sets in the event rows",
                ));
            }
            Targets::LabelSets(_) => self.rank(batch, &learnt, &mut columns)?,
        }
        self.stats.rows_seen += batch.num_rows() as u64;
        if self.once.is_some() {
            let position = self.position.get_or_insert_with(|| Position {
                file: "sql".to_string(),
                ..Position::default()
            });
            position.rows = self.stats.rows_learnt;
            position.ts = position.ts.max(last_ts);
        }
        RecordBatch::try_new(self.schema.clone(), columns).map_err(|e| Error::Format {
            file: PathBuf::from("record batch"),
            message: e.to_string(),
        })
    }

    /// Multiclass rows: `predicted_<label>` and `predicted_<label>_probs`. Rows flagged in
    /// `learnt` (when it is not empty) are scored only; rows without a label wait in
    /// `waiting`, when given, for theirs.
    fn classify(
        &mut self, batch: &RecordBatch, learnt: &[bool], mut waiting: Option<&mut Waiting<'_>>,
        columns: &mut Vec<ArrayRef>,
    ) -> Result<()> {
        let Targets::Classes {
            label_column,
            class_ids,
            class_values,
        } = &self.targets
        else {
            unreachable!("called for multiclass streams")
        };
        let n = batch.num_rows();
        let labels = match label_column {
            Some(i) => Some(utf8(batch.column(*i), &self.source, &self.label)?),
            None => None,
        };
        let labels = labels.as_ref().map(|l| l.as_string::<i32>());
        let (d, k) = (self.encoder.width(), self.probs.len());
        // Per-batch output buffers; nothing is allocated per row.
        let mut predicted = Vec::with_capacity(n);
        let mut probs = Vec::with_capacity(n * k);
        let learns = self.model.learns_online();
        let before = |r: usize| learnt.get(r) == Some(&true);
        let ys: Vec<Option<ClassId>> = (0..n)
            .map(|r| match labels {
                _ if before(r) => None,
                Some(l) if l.is_valid(r) => match class_ids.get(l.value(r)) {
                    Some(&y) => Some(y),
                    None => {
                        self.stats.unknown_labels += 1;
                        let class = l.value(r);
                        if self.unknown_classes.len() < Self::NAMED_UNKNOWN_CLASSES
                            && !self.unknown_classes.iter().any(|c| c == class)
                        {
                            self.unknown_classes.push(class.to_string());
                        }
                        None
                    }
                },
                _ => None,
            })
            .collect();
        // No label in the row: under delayed labels it is scored and waits for one.
        let waits = |r: usize| {
            ys[r].is_none() && waiting.is_some() && !labels.is_some_and(|l| l.is_valid(r))
        };
        let waits: Vec<bool> = (0..n).map(waits).collect();
        let mut r = 0;
        while r < n {
            let x = &self.rows[r * d..(r + 1) * d];
            if before(r) {
                // A row learnt before (a stream fed again): scored by the model as it is,
                // changing nothing in it, not even its generator's state.
                self.model.predict_proba(x, &mut self.probs);
                predicted.push(argmax(&self.probs) as u32);
                probs.extend_from_slice(&self.probs);
                r += 1;
                continue;
            }
            if waits[r] {
                let waiting = waiting
                    .as_deref_mut()
                    .expect("a row waits only with a store");
                let (class, learnt_now) = waiting.event(r, &mut self.model, x, &mut self.probs)?;
                predicted.push(class as u32);
                probs.extend_from_slice(&self.probs);
                self.stats.rows_learnt += u64::from(learnt_now && learns);
                r += 1;
                continue;
            }
            // Rows that are scored then learnt one after the other go to the model together
            // (a model may use two threads for them, `Classifier::learn_predict_rows`).
            let end = (r..n).find(|&e| before(e) || waits[e]).unwrap_or(n);
            let xs: Vec<&[f64]> = (r..end).map(|e| &self.rows[e * d..(e + 1) * d]).collect();
            let first = predicted.len();
            predicted.resize(first + (end - r), 0);
            let mut classes = vec![0; end - r];
            let from = probs.len();
            probs.resize(from + (end - r) * k, 0.0);
            self.model
                .learn_predict_rows(&xs, &ys[r..end], 1.0, &mut probs[from..], &mut classes);
            for (slot, class) in predicted[first..].iter_mut().zip(classes) {
                *slot = class as u32;
            }
            let labelled = ys[r..end].iter().filter(|y| y.is_some()).count();
            self.stats.rows_learnt += labelled as u64 * u64::from(learns);
            r = end;
        }
        let ids = UInt32Array::from(predicted);
        columns.push(take(class_values, &ids, None).expect("ids are class ids"));
        columns.push(Arc::new(fixed_list(probs, k)));
        Ok(())
    }

    /// Multi-label rows: `<label>_scores` and `predicted_<label>` (the predicted set). Rows
    /// flagged in `learnt` (when it is not empty) are scored only.
    fn rank(
        &mut self, batch: &RecordBatch, learnt: &[bool], columns: &mut Vec<ArrayRef>,
    ) -> Result<()> {
        let Targets::LabelSets(reader) = &self.targets else {
            unreachable!("called for multi-label streams")
        };
        let n = batch.num_rows();
        let (d, k) = (self.encoder.width(), self.probs.len());
        let (mut masks, mut known) = (Vec::new(), vec![false; n]);
        if let Some(reader) = reader {
            let unknown = reader.read(
                batch,
                &self.source,
                self.stats.rows_seen,
                k,
                &mut masks,
                &mut known,
            )?;
            self.stats.unknown_labels += unknown.len() as u64;
        }
        let names = self.spec.classes.names();
        let mut scores = Vec::with_capacity(n * k);
        let mut sets = arrow::array::ListBuilder::new(arrow::array::StringBuilder::new());
        let mut set = Vec::with_capacity(k);
        let learns = self.model.learns_online();
        for r in 0..n {
            let x = &self.rows[r * d..(r + 1) * d];
            let seen = learnt.get(r) == Some(&true);
            let relevant = (known[r] && !seen).then(|| &masks[r * k..(r + 1) * k]);
            match seen {
                // Learnt before: scored, changing nothing (see `classify`).
                true => self.model.predict_scores(x, &mut self.probs),
                false => self
                    .model
                    .learn_predict_scores(x, relevant, 1.0, &mut self.probs),
            }
            scores.extend_from_slice(&self.probs);
            predicted_set(&self.probs, &mut set);
            for (name, _) in names.iter().zip(&set).filter(|(_, on)| **on) {
                sets.values().append_value(name);
            }
            sets.append(true);
            self.stats.rows_learnt += u64::from(relevant.is_some() && learns);
        }
        columns.push(Arc::new(fixed_list(scores, k)));
        columns.push(Arc::new(sets.finish()));
        Ok(())
    }
}

/// `values` as a list of `k` floats per row.
fn fixed_list(values: Vec<f64>, k: usize) -> FixedSizeListArray {
    let item = Arc::new(Field::new("item", DataType::Float64, false));
    FixedSizeListArray::new(item, k as i32, Arc::new(Float64Array::from(values)), None)
}

/// What an operator needs to read batches of `input` for a model of `spec`: the feature
/// encoder, the label reader and the output schema.
fn bind(
    spec: &StreamSpec, input: &SchemaRef, label: &str, encodings: &Encodings, source: &Path,
) -> Result<(RowEncoder, Targets, SchemaRef)> {
    let encoder = RowEncoder::new(spec, input, encodings, source)?;
    if spec.is_multi_label() {
        let reader = LabelSetReader::new(spec, input, label, source)?;
        let schema = ranking_output_schema(input, label, spec.classes.names());
        return Ok((encoder, Targets::LabelSets(reader), schema));
    }
    let schema = output_schema(input, label, spec.classes.names());
    let label_type = schema.field(input.fields().len()).data_type().clone();
    let names = StringArray::from_iter_values(spec.classes.names());
    let class_values = cast(&names, &label_type).map_err(|e| Error::SchemaMismatch {
        file: source.to_path_buf(),
        first: PathBuf::from("the model's class set"),
        detail: format!("class names do not fit label column `{label}` of type {label_type}: {e}"),
    })?;
    let targets = Targets::Classes {
        label_column: input.index_of(label).ok(),
        class_ids: spec.classes.ids(),
        class_values,
    };
    Ok((encoder, targets, schema))
}

/// Column `name` of one number per class (or label) a row, the classes' names in its
/// metadata under [`CLASSES_KEY`].
fn per_class_field(name: String, classes: &[String]) -> Field {
    let item = Arc::new(Field::new("item", DataType::Float64, false));
    let names = serde_json::to_string(classes).expect("strings serialize");
    Field::new(
        name,
        DataType::FixedSizeList(item, classes.len() as i32),
        false,
    )
    .with_metadata(HashMap::from([(CLASSES_KEY.to_string(), names)]))
}

/// The schema of a ranker's output over `input` with label prefix `label` and these labels:
/// the input's columns, then `<label>_scores` (a score per label; the names under
/// [`CLASSES_KEY`] in its metadata) and `predicted_<label>`, the predicted set (the labels
/// scoring above the mean score, [`predicted_set`]).
pub fn ranking_output_schema(input: &Schema, label: &str, labels: &[String]) -> SchemaRef {
    let scores = per_class_field(format!("{label}_scores"), labels);
    let set = Field::new(
        format!("predicted_{label}"),
        DataType::List(Arc::new(Field::new("item", DataType::Utf8, true))),
        false,
    );
    let mut fields: Vec<Arc<Field>> = input.fields().iter().cloned().collect();
    fields.push(Arc::new(scores));
    fields.push(Arc::new(set));
    Arc::new(Schema::new_with_metadata(fields, input.metadata().clone()))
}

/// The schema of an operator's output over `input` with label column `label` and these
/// classes: the input's columns, then `predicted_<label>` (the label's type; text when the
/// input has no label column) and `predicted_<label>_probs`, whose metadata names the
/// classes under [`CLASSES_KEY`].
pub fn output_schema(input: &Schema, label: &str, classes: &[String]) -> SchemaRef {
    let label_type = input
        .field_with_name(label)
        .map_or(DataType::Utf8, |f| f.data_type().clone());
    let probs_field = per_class_field(format!("predicted_{label}_probs"), classes);
    let mut fields: Vec<Arc<Field>> = input.fields().iter().cloned().collect();
    fields.push(Arc::new(Field::new(
        format!("predicted_{label}"),
        label_type,
        false,
    )));
    fields.push(Arc::new(probs_field));
    Arc::new(Schema::new_with_metadata(fields, input.metadata().clone()))
}

impl BoostOperator<Model> {
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
        checkpoint::save(path, &mut self.model, &stream)
    }

    /// The stream state a checkpoint of this operator holds, for a model of `config`.
    pub fn stream_state(&self, config: &ModelConfig) -> StreamState {
        StreamState {
            config: config.clone(),
            spec: self.spec(),
            encodings: self.encodings.clone(),
            label: self.label.clone(),
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
        let op = BoostOperator::continuing(model, &stream, input, source)
            .map_err(|e| checkpoint::not_fitting(path, e))?;
        Ok((op, stream.config))
    }

    /// An operator that goes on with `model` and `stream` (a checkpoint's contents): its
    /// spec, label, encodings, counters and position.
    pub fn continuing(
        model: Model, stream: &StreamState, input: SchemaRef, source: impl Into<PathBuf>,
    ) -> Result<Self> {
        let mut op = BoostOperator::new(
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

impl<M> std::fmt::Debug for BoostOperator<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BoostOperator")
            .field("label", &self.label)
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Config;
    use crate::core::{ClassSet, Feature};
    use crate::weak::HoeffdingTreeConfig;
    use arrow::array::{Int64Array, StringArray};

    fn spec() -> StreamSpec {
        StreamSpec::new(
            vec![Feature::numeric("x"), Feature::nominal("c", ["a", "b"])],
            ClassSet::new(["1", "2"]).unwrap(),
        )
    }

    fn operator<M: Classifier + Ranker>(
        model: M, spec: &StreamSpec, input: &RecordBatch,
    ) -> BoostOperator<M> {
        BoostOperator::new(
            model,
            spec,
            input.schema(),
            "label",
            &Encodings::default(),
            "t",
        )
        .unwrap()
    }

    fn batch(x: Vec<Option<f64>>, c: Vec<Option<&str>>, y: Vec<Option<i64>>) -> RecordBatch {
        RecordBatch::try_from_iter([
            ("x", Arc::new(Float64Array::from(x)) as ArrayRef),
            ("c", Arc::new(StringArray::from(c)) as ArrayRef),
            ("label", Arc::new(Int64Array::from(y)) as ArrayRef),
        ])
        .unwrap()
    }

    #[test]
    fn one_output_row_per_input_row_and_label_typed_predictions() {
        let spec = spec();
        let model = HoeffdingTreeConfig::default().build(&spec, 1).unwrap();
        let input = batch(
            vec![Some(1.0), None, Some(f64::NAN), Some(3.0)],
            vec![Some("a"), Some("zzz"), None, Some("b")],
            vec![Some(1), Some(2), None, Some(7)],
        );
        let mut op = operator(model, &spec, &input);
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
        assert_eq!(op.encoder.categories(1), ["a", "b", "zzz"]);
    }

    #[test]
    fn same_predictions_as_the_model_called_directly() {
        let spec = spec();
        let config = HoeffdingTreeConfig {
            grace_period: 5.0,
            ..Default::default()
        };
        let mut direct = config.build(&spec, 3).unwrap();
        let model = config.build(&spec, 3).unwrap();
        let xs: Vec<f64> = (0..200).map(|i| (i % 17) as f64).collect();
        let cs: Vec<&str> = (0..200)
            .map(|i| if i % 3 == 0 { "a" } else { "b" })
            .collect();
        let ys: Vec<i64> = xs.iter().map(|&x| if x > 8.0 { 2 } else { 1 }).collect();
        let input = batch(
            xs.iter().copied().map(Some).collect(),
            cs.iter().copied().map(Some).collect(),
            ys.iter().copied().map(Some).collect(),
        );
        let mut op = operator(model, &spec, &input);
        let mut outs = Vec::new();
        for start in (0..200).step_by(64) {
            let len = 64.min(200 - start);
            outs.push(op.process(&input.slice(start, len)).unwrap());
        }
        let mut p = [0.0; 2];
        let mut r = 0;
        for out in &outs {
            let predicted = out.column(3).as_primitive::<arrow::datatypes::Int64Type>();
            for i in 0..out.num_rows() {
                let code = if cs[r] == "a" { 0.0 } else { 1.0 };
                let y = (ys[r] - 1) as usize;
                let expected = direct.learn_predict(&[xs[r], code], Some(y), 1.0, &mut p);
                assert_eq!(predicted.value(i), expected as i64 + 1);
                r += 1;
            }
        }
        assert_eq!(r, 200);
    }

    #[test]
    fn wrong_column_type_and_missing_feature_are_named() {
        let spec = spec();
        let model = HoeffdingTreeConfig::default().build(&spec, 1).unwrap();
        let bad = RecordBatch::try_from_iter([
            ("x", Arc::new(StringArray::from(vec!["1"])) as ArrayRef),
            ("c", Arc::new(StringArray::from(vec!["a"])) as ArrayRef),
        ])
        .unwrap();
        let refused = |schema| {
            let encodings = Encodings::default();
            BoostOperator::new(model.clone(), &spec, schema, "label", &encodings, "t").unwrap_err()
        };
        let err = refused(bad.schema());
        assert!(
            err.to_string().contains("column `x` has type Utf8"),
            "{err}"
        );
        let missing = RecordBatch::try_from_iter([(
            "x",
            Arc::new(Float64Array::from(vec![1.0])) as ArrayRef,
        )])
        .unwrap();
        let err = refused(missing.schema());
        assert!(
            matches!(&err, Error::MissingColumn { column, .. } if column == "c"),
            "{err}"
        );
    }
}
