//! The model as an Arrow record-batch operator: batches in, the same batches out with the
//! model's predictions appended, rows processed in order (test, then train).
//!
//! For a label column `y` the operator appends `predicted_y` (the label's type) and
//! `predicted_y_probs` (a fixed-size list of per-class probabilities; the class names are in
//! that field's metadata under [`super::CLASSES_KEY`], as a JSON array). A row whose label is
//! present and in the class set is predicted, then learnt; a row whose label is null, or
//! absent from the input's schema, is only scored; a row whose label is not in the class set
//! is only scored and counted in [`OperatorStats::unknown_labels`] of the batch. Every input row gets
//! exactly one output row, in order. Features follow [`RowEncoder`]'s rules.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, StringArray, UInt32Array};
use arrow::compute::{cast, take};
use arrow::datatypes::{Field, Schema, SchemaRef};
use arrow::record_batch::RecordBatch;

use super::label_sets::LabelSetReader;
use super::output::{fixed_list, output_schema, ranking_output_schema};
use super::rows::{RowEncoder, map_bytes, utf8};
use crate::core::math::argmax;
use crate::core::{ClassId, Encodings, FeatureKind, StreamSpec, vec_bytes};
use crate::learner::{Classifier, Ranker};
use crate::runtime::cursor::{OperatorStats, Waiting};
use crate::weak::Structure;
use crate::{Error, Result};

/// Where the rows' targets come from and how predictions are written.
pub(super) enum Targets {
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
    pub(super) model: M,
    /// The stream the model was built for; its categories grow with the encoder's.
    pub(super) spec: StreamSpec,
    encodings: Encodings,
    pub(super) encoder: RowEncoder,
    label: String,
    pub(super) targets: Targets,
    input_schema: SchemaRef,
    schema: SchemaRef,
    /// Names the input in errors.
    pub(super) source: PathBuf,
    /// The labels met outside the class set, in the order met (at most
    /// [`BoostOperator::NAMED_UNKNOWN_CLASSES`]; all are counted in the batches' counts).
    unknown_classes: Vec<String>,
    /// Encoded rows of the current batch, reused.
    pub(super) rows: Vec<f64>,
    /// One row's probabilities, reused.
    pub(super) probs: Vec<f64>,
}

impl<M: Structure> BoostOperator<M> {
    /// Bytes this operator holds: its model's heap, its buffers, and its stream description (its spec, row encoder, class lookup and output schema). The
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
            unknown_classes: Vec::new(),
            rows: Vec::new(),
            probs: vec![0.0; spec.n_classes()],
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

    /// The same model and stream on batches of another `input` schema (the next file of a
    /// job), `source` naming it in errors. An input that does not fit the model is refused,
    /// and the operator left unchanged.
    pub fn rebind(&mut self, input: SchemaRef, source: impl Into<PathBuf>) -> Result<()> {
        let source = source.into();
        if input.fields() != self.input_schema.fields() {
            // Other columns: a new encoder, from the categories met so far.
            let spec = self.spec();
            let (encoder, targets, schema) =
                bind(&spec, &input, &self.label, &self.encodings, &source)?;
            self.spec = spec;
            self.encoder = encoder;
            self.targets = targets;
            self.schema = schema;
        }
        self.input_schema = input;
        self.source = source;
        Ok(())
    }

    /// Unknown labels named at most by [`BoostOperator::unknown_classes`].
    pub const NAMED_UNKNOWN_CLASSES: usize = 100;

    /// The labels this operator met outside its class set (scored, not learnt), in the
    /// order met, since it was made (not saved with the model).
    pub fn unknown_classes(&self) -> &[String] {
        &self.unknown_classes
    }

    /// Names the input in errors.
    pub(crate) fn source(&self) -> &Path {
        &self.source
    }

    /// How the input's columns are read as features.
    pub fn encodings(&self) -> &Encodings {
        &self.encodings
    }

    /// The class names as values of the label column's type, in class order.
    pub(crate) fn class_values(&self) -> ArrayRef {
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
    /// returns the batch with the prediction columns appended, and what the batch counted.
    /// `first_row` numbers the batch's first row in errors. Rows flagged in `learnt_before`
    /// (when it is not empty) were learnt before: they are scored by the model as it is,
    /// changing nothing in it. A row without a label of its own is, when `waiting` is
    /// given, scored and kept waiting for the label that comes later.
    pub fn process(
        &mut self, batch: &RecordBatch, first_row: u64, learnt_before: &[bool],
        mut waiting: Option<&mut Waiting<'_>>,
    ) -> Result<(RecordBatch, OperatorStats)> {
        if batch.schema().fields() != self.input_schema.fields() {
            let names = |s: &Schema| {
                s.fields()
                    .iter()
                    .map(|f| f.name().clone())
                    .collect::<Vec<_>>()
            };
            return Err(Error::SchemaMismatch {
                file: PathBuf::from("record batch"),
                first: PathBuf::from("the operator's input schema"),
                detail: format!(
                    "got columns {:?}, expected {:?}",
                    names(&batch.schema()),
                    names(&self.input_schema)
                ),
            });
        }
        self.encoder
            .encode(batch, &self.source, first_row, &mut self.rows)?;
        let learnt = learnt_before;
        let mut counts = OperatorStats {
            rows_seen: batch.num_rows() as u64,
            ..OperatorStats::default()
        };
        let mut columns: Vec<ArrayRef> = batch.columns().to_vec();
        match &self.targets {
            Targets::Classes { .. } => self.classify(
                batch,
                learnt,
                waiting.as_deref_mut(),
                &mut counts,
                &mut columns,
            )?,
            Targets::LabelSets(_) if waiting.is_some() => {
                return Err(Error::config(
                    "label",
                    "labels that arrive later are for multiclass streams; a multi-label \
                     stream carries its label sets in the event rows",
                ));
            }
            Targets::LabelSets(_) => {
                self.rank(batch, first_row, learnt, &mut counts, &mut columns)?
            }
        }
        let out =
            RecordBatch::try_new(self.schema.clone(), columns).map_err(|e| Error::Format {
                file: PathBuf::from("record batch"),
                message: e.to_string(),
            })?;
        Ok((out, counts))
    }

    /// Multiclass rows: `predicted_<label>` and `predicted_<label>_probs`. Rows flagged in
    /// `learnt` (when it is not empty) are scored only; rows without a label wait in
    /// `waiting`, when given, for theirs.
    fn classify(
        &mut self, batch: &RecordBatch, learnt: &[bool], mut waiting: Option<&mut Waiting<'_>>,
        counts: &mut OperatorStats, columns: &mut Vec<ArrayRef>,
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
                        counts.unknown_labels += 1;
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
                // Rows learnt before (a stream fed again): scored together by the model as it
                // is, changing nothing in it, not even its generator's state.
                let end = (r..n).find(|&e| !before(e)).unwrap_or(n);
                let xs: Vec<&[f64]> = (r..end).map(|e| &self.rows[e * d..(e + 1) * d]).collect();
                let from = probs.len();
                probs.resize(from + (end - r) * k, 0.0);
                self.model.predict_proba_rows(&xs, &mut probs[from..]);
                predicted.extend(probs[from..].chunks_exact(k).map(|p| argmax(p) as u32));
                r = end;
                continue;
            }
            if waits[r] {
                let waiting = waiting
                    .as_deref_mut()
                    .expect("a row waits only with a store");
                let (class, learnt_now) = waiting.event(r, &mut self.model, x, &mut self.probs)?;
                predicted.push(class as u32);
                probs.extend_from_slice(&self.probs);
                counts.rows_learnt += u64::from(learnt_now && learns);
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
            counts.rows_learnt += labelled as u64 * u64::from(learns);
            r = end;
        }
        let ids = UInt32Array::from(predicted);
        columns.push(take(class_values, &ids, None).expect("ids are class ids"));
        columns.push(Arc::new(fixed_list(probs, k)));
        Ok(())
    }
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

impl<M> std::fmt::Debug for BoostOperator<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BoostOperator")
            .field("label", &self.label)
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::Config;
    use crate::core::{ClassSet, Feature};
    use crate::weak::HoeffdingTreeConfig;
    use arrow::array::{Float64Array, Int64Array, StringArray};

    /// A numeric and a nominal feature, two classes.
    pub(crate) fn spec() -> StreamSpec {
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

    /// A batch of `spec()`'s columns and an integer label.
    pub(crate) fn batch(
        x: Vec<Option<f64>>, c: Vec<Option<&str>>, y: Vec<Option<i64>>,
    ) -> RecordBatch {
        RecordBatch::try_from_iter([
            ("x", Arc::new(Float64Array::from(x)) as ArrayRef),
            ("c", Arc::new(StringArray::from(c)) as ArrayRef),
            ("label", Arc::new(Int64Array::from(y)) as ArrayRef),
        ])
        .unwrap()
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
            let (out, counts) = op
                .process(&input.slice(start, len), start as u64, &[], None)
                .unwrap();
            assert_eq!(
                (counts.rows_seen, counts.rows_learnt),
                (len as u64, len as u64)
            );
            outs.push(out);
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
