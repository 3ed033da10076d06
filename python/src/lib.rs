//! `streamboost._streamboost`: the extension module under the `streamboost` Python package.
//!
//! One class, [`Core`]: a model of the catalogue together with what a Python user never
//! writes down, the description of the stream ([`Stream`]): its features by name, each
//! nominal feature's categories, its labels. The rows are River's dicts (`learn_one`,
//! `predict_proba_one`) or Arrow batches (`learn_many`, `predict_proba_many`, from anything
//! with `__arrow_c_stream__` or `__arrow_c_array__`); both read a cell by the same rules
//! ([`Stream::numeric`], [`Stream::category`]), so a batch learns what its rows would one by
//! one. The Python classes of `streamboost/__init__.py` wrap it.
//!
//! **What the rows fix.** The first row learnt (or the first batch) fixes the features: its
//! keys, in name order, numeric where the value is a number, a boolean or `None`, nominal
//! where it is a string. Later rows may lack any of them (a missing value, as the learners'
//! §0 convention reads `NaN`) or bring others: those are not learnt, and are counted
//! ([`Core::ignored_values`]). A category or a label never met before is learnt from its
//! first row on; a category met first by a prediction is read as unseen and not kept
//! (predictions change nothing).
//!
//! **Labels before two are met.** The catalogue's models have at least two classes. A model
//! built before its second label has a second class named `""` that no row has; it takes the
//! second label's name when that label arrives, and the probabilities reported are those of
//! the labels met, renormalised. A third label adds a class ([`Classifier::add_class`]).
//!
//! **Threads.** The model is behind a mutex, waited for without the GIL; the model's own
//! work on a row or a batch runs without the GIL, so other Python threads go on. A call that
//! panicked poisons the model: later calls raise instead of reading a torn model.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, OnceLock};

use arrow::array::{Array, AsArray, RecordBatch};
use arrow::compute::cast;
use arrow::datatypes::{DataType, Float64Type};
use arrow::ffi_stream::ArrowArrayStreamReader;
use arrow::pyarrow::{FromPyArrow, ToPyArrow};
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::MutexExt;
use pyo3::types::{PyBool, PyBytes, PyDict, PyString};

use streamboost::checkpoint::{self, StreamState};
use streamboost::cli::plot::{Curve, draw};
use streamboost::columnar::Table;
use streamboost::core::{
    ClassId, ClassSet, Encodings, Feature, FeatureKind, MAX_CATEGORY_CODE, StreamSpec,
};
use streamboost::eval::ranking::predicted_set;
use streamboost::eval::{DriftLog, Prequential, RowOutcome};
use streamboost::model::{Algorithm, Learns, Model, ModelConfig, Role};
use streamboost::runtime::OperatorStats;
use streamboost::runtime::delay::{DelayColumns, DelayedState, LabelOutcome, PendingLimits};
use streamboost::runtime::job::{DelayedLabels, FreshModel, Held, Job, LiveSource};
use streamboost::runtime::live::{CheckpointPolicy, LiveModel};
use streamboost::runtime::replay::Session;
use streamboost::weak::Structure;
use streamboost::{Classifier, Config, Error, Ranker};

/// Runs `work` on a thread of the package's rayon pool (the machine's cores, or
/// `RAYON_NUM_THREADS`), made at the first batch call and kept: what a model hands to the
/// pool (a one-vs-all bundle's members, Adaboost.OLM's trees on a second thread) is then
/// spread as in `streamboost replay`, which runs on such a pool. One-row calls stay on the
/// caller's thread, where handing a row to the pool would cost more than it saves.
fn on_the_pool<T: Send>(work: impl FnOnce() -> T + Send) -> T {
    static POOL: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
    let pool = POOL.get_or_init(|| {
        // The stack of a main thread, not a worker's default, as the command line's pool.
        rayon::ThreadPoolBuilder::new()
            .stack_size(8 << 20)
            .thread_name(|i| format!("streamboost-{i}"))
            .build()
            .ok()
    });
    match pool {
        Some(pool) => pool.install(work),
        None => work(),
    }
}

/// The name of the class a model holds before its second label is met.
const UNMET: &str = "";
/// The label column's name in the checkpoints a Python model writes.
const LABEL: &str = "y";

mod sql;

fn py_error(e: Error) -> PyErr {
    match e {
        Error::Io { .. } => PyOSError::new_err(e.to_string()),
        _ => PyValueError::new_err(e.to_string()),
    }
}

/// The config of a fresh model from JSON naming its algorithm and what differs from its
/// defaults ([`ModelConfig::from_json`]); a batch-trained algorithm is refused.
fn parse_config(config: &str) -> PyResult<ModelConfig> {
    let value = serde_json::from_str(config)
        .map_err(|e| PyValueError::new_err(format!("config is not JSON: {e}")))?;
    let config = ModelConfig::from_json(value).map_err(py_error)?;
    config.check_fresh().map_err(py_error)?;
    Ok(config)
}

/// One cell of a row, as a Python value or an Arrow column gives it.
enum Cell<'a> {
    Number(f64),
    Text(&'a str),
}

/// What the rows have shown of the stream: the spec the model was built for, grown by the
/// categories and labels met, and the lookups that read rows by name.
struct Stream {
    spec: StreamSpec,
    index: HashMap<String, usize>,
    /// Per feature, its categories' codes (empty for a numeric feature).
    codes: Vec<HashMap<String, u32>>,
    class_ids: HashMap<String, ClassId>,
    /// Classes that are labels met: all of them but a trailing [`UNMET`] one.
    labels: usize,
    stats: OperatorStats,
    /// Values of features outside the model's, not learnt.
    ignored: u64,
    /// Rows scored now and learnt when their labels come ([`Core::event`], [`Core::label`]).
    delayed: Option<DelayedState>,
}

impl Stream {
    /// The stream of `spec` (a fresh model's, or a checkpoint's, with its counters and
    /// the events waiting for their labels).
    fn of(spec: StreamSpec, stats: OperatorStats, delayed: Option<DelayedState>) -> Self {
        let index = (spec.features.iter().enumerate())
            .map(|(j, f)| (f.name.clone(), j))
            .collect();
        let codes = (spec.features.iter())
            .map(|f| match &f.kind {
                FeatureKind::Nominal { categories } => (categories.iter().enumerate())
                    .map(|(c, name)| (name.clone(), c as u32))
                    .collect(),
                FeatureKind::Numeric => HashMap::new(),
            })
            .collect();
        let names = spec.classes.names();
        let labels = names.len() - usize::from(names.last().is_some_and(|n| n == UNMET));
        Stream {
            class_ids: spec.classes.ids(),
            spec,
            index,
            codes,
            labels,
            stats,
            ignored: 0,
            delayed,
        }
    }

    /// The stream whose features are `features` (name, nominal), taken in name order, with
    /// the labels `classes` (at least one).
    fn first(features: Vec<(String, bool)>, classes: &[String]) -> PyResult<Self> {
        let mut names = classes.to_vec();
        if names.len() == 1 {
            names.push(UNMET.to_string());
        }
        let classes = ClassSet::new(names).map_err(py_error)?;
        Ok(Stream::of(
            StreamSpec::new(features_in_order(features), classes),
            OperatorStats::default(),
            None,
        ))
    }

    /// The multi-label stream whose features are `features` and whose labels are `labels`
    /// (at least two), in name order.
    fn first_ranking(features: Vec<(String, bool)>, mut labels: Vec<String>) -> PyResult<Self> {
        labels.sort();
        labels.dedup();
        let labels = ClassSet::new(labels).map_err(|e| {
            PyValueError::new_err(format!("a ranker's first row names its labels: {e}"))
        })?;
        Ok(Stream::of(
            StreamSpec::multi_label(features_in_order(features), labels),
            OperatorStats::default(),
            None,
        ))
    }

    /// The relevance mask of a label set given as (label, relevant) pairs: a label the
    /// ranker does not rank is refused; one absent is not relevant.
    fn relevance(&self, labels: &[(String, bool)]) -> PyResult<Vec<bool>> {
        let mut relevant = vec![false; self.spec.n_classes()];
        for (name, is) in labels {
            let id = self.class_ids.get(name).ok_or_else(|| {
                PyValueError::new_err(format!(
                    "label {name:?} is not one the ranker ranks ({}): its labels are fixed by \
                     its first row",
                    self.spec.classes.names().join(", ")
                ))
            })?;
            relevant[*id] = *is;
        }
        Ok(relevant)
    }

    /// The value of feature `j` in `cell`; a category met for the first time gets the next
    /// code when `learning` (the rules of the crate's row encoder: an empty string is
    /// missing, codes stop at [`MAX_CATEGORY_CODE`]), and reads as unseen otherwise.
    fn value(&mut self, j: usize, cell: Cell<'_>, learning: bool) -> PyResult<f64> {
        self.check(j, &cell)?;
        let feature = &mut self.spec.features[j];
        match (&mut feature.kind, cell) {
            (FeatureKind::Numeric, Cell::Number(v)) => Ok(v),
            (FeatureKind::Numeric, Cell::Text(_)) => unreachable!("refused by Stream::check"),
            (FeatureKind::Nominal { categories }, cell) => {
                let number;
                let text = match cell {
                    Cell::Text(t) => t,
                    Cell::Number(v) if v.is_nan() => return Ok(f64::NAN),
                    Cell::Number(v) => {
                        number = v.to_string();
                        &number
                    }
                };
                if text.is_empty() {
                    return Ok(f64::NAN);
                }
                let codes = &mut self.codes[j];
                if let Some(&c) = codes.get(text) {
                    return Ok(f64::from(c));
                }
                if !learning || categories.len() >= MAX_CATEGORY_CODE {
                    return Ok(match categories.len() < MAX_CATEGORY_CODE {
                        true => categories.len() as f64,
                        false => f64::NAN,
                    });
                }
                let c = categories.len() as u32;
                codes.insert(text.to_string(), c);
                categories.push(text.to_string());
                Ok(f64::from(c))
            }
        }
    }

    /// The id of label `name`, adding it to `model`'s classes when it is new.
    fn class(&mut self, model: &mut Model, name: &str) -> PyResult<ClassId> {
        if name == UNMET {
            return Err(PyValueError::new_err("a label may not be the empty string"));
        }
        if let Some(&id) = self.class_ids.get(name) {
            return Ok(id);
        }
        let mut names = self.spec.classes.names().to_vec();
        let id = self.labels;
        if id < names.len() {
            names[id] = name.to_string();
        } else {
            model.add_class().map_err(|e| {
                PyValueError::new_err(format!(
                    "label {name:?} is a class the model has not met, and it cannot learn it: {e}"
                ))
            })?;
            names.push(name.to_string());
        }
        self.spec.classes = ClassSet::new(names).map_err(py_error)?;
        self.class_ids.insert(name.to_string(), id);
        self.labels += 1;
        Ok(id)
    }

    /// `proba` over the labels met, renormalised: by the mass of the labels met where the
    /// model holds an unmet class, and in any case so that no probability exceeds 1 by a
    /// rounding error (a vote summed over many members may total `1 + 1e-15`).
    fn label_probabilities(&self, proba: &[f64]) -> Vec<(String, f64)> {
        (self.spec.classes.names().iter().cloned())
            .zip(self.met_probabilities(proba))
            .collect()
    }

    /// [`Stream::label_probabilities`] without the names: what a batch writes, row by row.
    fn met_probabilities<'p>(&self, proba: &'p [f64]) -> impl Iterator<Item = f64> + 'p {
        let met = &proba[..self.labels];
        let total: f64 = met.iter().sum();
        let scale = if total > 0.0 && total.is_finite() {
            1.0 / total
        } else {
            1.0
        };
        met.iter().map(move |p| (p * scale).min(1.0))
    }

    /// A row scored with probabilities `proba` and prediction `predicted`: its
    /// probabilities over the labels met, and its prediction among them (the model's, or,
    /// where the model chose its unmet class, the most probable label met).
    fn scored(&self, proba: &[f64], predicted: ClassId) -> (Vec<f64>, Option<usize>) {
        let p: Vec<f64> = self.met_probabilities(proba).collect();
        let predicted = match predicted < self.labels {
            true => Some(predicted),
            false => (!p.is_empty()).then(|| streamboost::core::math::argmax(&p)),
        };
        (p, predicted)
    }

    /// Row `x` (a dict) into `row`, by feature name. Every value is checked before any
    /// category is added, so a refused row changes nothing.
    fn dict_row(
        &mut self, x: &Bound<'_, PyDict>, row: &mut Vec<f64>, learning: bool,
    ) -> PyResult<()> {
        row.clear();
        row.resize(self.spec.n_features(), f64::NAN);
        // Every value is read and checked before any is used, so a refused row changes
        // nothing; a feature's name is its key, so keys are looked up without a copy.
        let mut cells = Vec::with_capacity(x.len());
        let mut ignored = 0;
        for (key, value) in x.iter() {
            match with_key_name(&key, |k| self.index.get(k).copied())? {
                Some(j) => {
                    let given = given(&value, &self.spec.features[j].name)?;
                    self.check(j, &given.cell()?)?;
                    cells.push((j, given));
                }
                None => ignored += 1,
            }
        }
        for (j, given) in cells {
            row[j] = self.value(j, given.cell()?, learning)?;
        }
        if learning {
            self.ignored += ignored;
        }
        Ok(())
    }

    /// Whether feature `j` can take `cell`: a numeric feature takes no text.
    fn check(&self, j: usize, cell: &Cell<'_>) -> PyResult<()> {
        let feature = &self.spec.features[j];
        match (&feature.kind, cell) {
            (FeatureKind::Numeric, Cell::Text(text)) => Err(PyTypeError::new_err(format!(
                "feature `{}` is numeric (its first value was a number), but a row gives it the \
                 string {text:?}",
                feature.name
            ))),
            _ => Ok(()),
        }
    }

    /// Whether every column of `batch` that is one of the model's features can be read as
    /// that feature, checked before any category is added.
    fn check_batch(&self, batch: &RecordBatch) -> PyResult<()> {
        for field in batch.schema().fields() {
            if let Some(&j) = self.index.get(field.name().as_str())
                && column_kind(field.name(), field.data_type())?
            {
                self.check(j, &Cell::Text("a string"))?;
            }
        }
        Ok(())
    }

    /// Whether `names` (labels, in the order they come) can all be learnt: none is empty,
    /// and a model of two classes meets no third.
    fn check_labels<'n>(
        &self, binary: bool, names: impl IntoIterator<Item = &'n str>,
    ) -> PyResult<()> {
        let mut new = Vec::new();
        for name in names {
            if name == UNMET {
                return Err(PyValueError::new_err("a label may not be the empty string"));
            }
            if !self.class_ids.contains_key(name) && !new.contains(&name) {
                new.push(name);
                if binary && self.labels + new.len() > 2 {
                    return Err(PyValueError::new_err(format!(
                        "label {name:?} is a class the model has not met, and it cannot learn \
                         it: the algorithm learns two classes, and has them"
                    )));
                }
            }
        }
        Ok(())
    }

    /// The rows of `batch` into `rows` (row-major), by column name.
    fn batch_rows(
        &mut self, batch: &RecordBatch, rows: &mut Vec<f64>, learning: bool,
    ) -> PyResult<()> {
        let (n, d) = (batch.num_rows(), self.spec.n_features());
        rows.clear();
        rows.resize(n * d, f64::NAN);
        let schema = batch.schema();
        for (field, column) in schema.fields().iter().zip(batch.columns()) {
            let Some(&j) = self.index.get(field.name().as_str()) else {
                if learning {
                    self.ignored += (column.len() - column.null_count()) as u64;
                }
                continue;
            };
            match column_kind(field.name(), column.data_type())? {
                false => {
                    let numbers = cast(column, &DataType::Float64).map_err(|e| {
                        PyTypeError::new_err(format!("column `{}`: {e}", field.name()))
                    })?;
                    let numbers = numbers.as_primitive::<Float64Type>();
                    for r in (0..n).filter(|&r| numbers.is_valid(r)) {
                        rows[r * d + j] =
                            self.value(j, Cell::Number(numbers.value(r)), learning)?;
                    }
                }
                true => {
                    let texts = cast(column, &DataType::Utf8).map_err(|e| {
                        PyTypeError::new_err(format!("column `{}`: {e}", field.name()))
                    })?;
                    let texts = texts.as_string::<i32>();
                    for r in (0..n).filter(|&r| texts.is_valid(r)) {
                        rows[r * d + j] = self.value(j, Cell::Text(texts.value(r)), learning)?;
                    }
                }
            }
        }
        Ok(())
    }

    fn stream_state(&self, config: &ModelConfig) -> StreamState {
        StreamState {
            config: config.clone(),
            spec: self.spec.clone(),
            encodings: Default::default(),
            label: LABEL.to_string(),
            stats: self.stats,
            position: None,
            delayed: self.delayed.clone(),
        }
    }

    /// The delayed learning of this stream, started with `limits` if it has none.
    fn delayed(&mut self, limits: PendingLimits) -> PyResult<&mut DelayedState> {
        if self.delayed.is_none() {
            let columns = DelayColumns {
                id: "id".to_string(),
                time: "time".to_string(),
            };
            self.delayed = Some(DelayedState::new(columns, limits).map_err(py_error)?);
        }
        Ok(self.delayed.as_mut().expect("set above"))
    }
}

/// Features (name, nominal) in name order, each once: the order of a dict's keys or a
/// batch's columns never matters.
fn features_in_order(mut features: Vec<(String, bool)>) -> Vec<Feature> {
    features.sort();
    features.dedup_by(|a, b| a.0 == b.0);
    (features.into_iter())
        .map(|(name, nominal)| match nominal {
            true => Feature::nominal(name, Vec::<String>::new()),
            false => Feature::numeric(name),
        })
        .collect()
}

/// A dict key as a feature name: a string as it is, anything else as `str()` gives it.
fn key_name(key: &Bound<'_, PyAny>) -> PyResult<String> {
    with_key_name(key, str::to_string)
}

/// `f` of a dict key's feature name ([`key_name`]), without copying a string key.
fn with_key_name<T>(key: &Bound<'_, PyAny>, f: impl FnOnce(&str) -> T) -> PyResult<T> {
    match key.cast::<PyString>() {
        Ok(s) => Ok(f(s.to_str()?)),
        Err(_) => Ok(f(key.str()?.to_str()?)),
    }
}

/// A Python value as a row reads it: a string is text; `None` is a missing number; a
/// boolean is 0 or 1; anything else with a float value (ints, floats, NumPy scalars) is that
/// number.
enum Given<'py> {
    Number(f64),
    Text(Bound<'py, PyString>),
}

impl Given<'_> {
    fn cell(&self) -> PyResult<Cell<'_>> {
        Ok(match self {
            Given::Number(v) => Cell::Number(*v),
            Given::Text(s) => Cell::Text(s.to_str()?),
        })
    }
}

/// What `value`, of feature `key`, is ([`Given`]); any other value is a type error.
fn given<'py>(value: &Bound<'py, PyAny>, key: &str) -> PyResult<Given<'py>> {
    if let Ok(s) = value.cast::<PyString>() {
        return Ok(Given::Text(s.clone()));
    }
    if value.is_none() {
        return Ok(Given::Number(f64::NAN));
    }
    if let Ok(b) = value.cast::<PyBool>() {
        return Ok(Given::Number(f64::from(u8::from(b.is_true()))));
    }
    match value.extract::<f64>() {
        Ok(v) => Ok(Given::Number(v)),
        Err(_) => Err(PyTypeError::new_err(format!(
            "feature `{key}`: a value is a number, a string, a boolean or None, not {}",
            value.get_type().name()?
        ))),
    }
}

/// Whether a column of type `t` is nominal (text) or numeric; other types are an error.
fn column_kind(name: &str, t: &DataType) -> PyResult<bool> {
    match t {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => Ok(true),
        DataType::Dictionary(_, v) => column_kind(name, v),
        t if t.is_numeric() || *t == DataType::Boolean || *t == DataType::Null => Ok(false),
        t => Err(PyTypeError::new_err(format!(
            "column `{name}` has type {t}: features are numbers, booleans or strings"
        ))),
    }
}

/// The record batches of a Python object: anything with `__arrow_c_stream__` (a pyarrow
/// table, a Polars or pandas frame) or `__arrow_c_array__` (a record batch), without a copy.
fn batches_of(data: &Bound<'_, PyAny>) -> PyResult<Vec<RecordBatch>> {
    if data.hasattr("__arrow_c_stream__")? {
        let reader = ArrowArrayStreamReader::from_pyarrow_bound(data)?;
        return (reader.into_iter())
            .map(|b| b.map_err(|e| PyValueError::new_err(e.to_string())))
            .collect();
    }
    if data.hasattr("__arrow_c_array__")? {
        return Ok(vec![RecordBatch::from_pyarrow_bound(data)?]);
    }
    Err(PyTypeError::new_err(format!(
        "expected Arrow data (a pyarrow Table or RecordBatch, a Polars or pandas DataFrame, or \
         anything with __arrow_c_stream__), got {}",
        data.get_type().name()?
    )))
}

/// The probability of each label met, by name.
type LabelProbabilities = Vec<(String, f64)>;

/// Rows scored: the labels met at the end, each row's prediction (its index there) and its
/// probabilities (`rows × labels`).
type Scored = (Vec<String>, Vec<Option<usize>>, Vec<f64>);

/// A model not built yet, or built and learning.
enum State {
    Fresh {
        classes: Vec<String>,
    },
    Built {
        model: Box<Model>,
        stream: Box<Stream>,
    },
}

/// A model of the catalogue with its stream: see the module documentation.
#[pyclass(module = "streamboost._streamboost", frozen)]
struct Core {
    config: ModelConfig,
    seed: u64,
    state: Mutex<State>,
    /// How many events may wait for their labels, and for how long ([`Core::event`]).
    pending: Mutex<PendingLimits>,
}

impl Core {
    /// The model and stream that learn `batches` with labels `y`, one per row: the rows and
    /// labels counted alike, every column and label checked before anything changes, and a
    /// fresh model built for the first batch with its first label as a class. `None` when
    /// there is nothing to learn from: no rows, or a fresh model offered no label.
    fn for_batches<'s>(
        &self, state: &'s mut State, batches: &[RecordBatch], y: &[Option<String>],
    ) -> PyResult<Option<(&'s mut Model, &'s mut Stream)>> {
        let n: usize = batches.iter().map(RecordBatch::num_rows).sum();
        if n != y.len() {
            return Err(PyValueError::new_err(format!(
                "{n} rows but {} labels",
                y.len()
            )));
        }
        let label = y.iter().flatten().next().map(String::as_str);
        let Some(first) = batches.iter().find(|b| b.num_rows() > 0) else {
            return Ok(None);
        };
        if matches!(*state, State::Fresh { .. }) && label.is_none() {
            return Ok(None);
        }
        let binary = self.binary();
        let check = |stream: &Stream| {
            batches.iter().try_for_each(|b| stream.check_batch(b))?;
            stream.check_labels(binary, y.iter().flatten().map(String::as_str))
        };
        let features = || batch_features(first);
        let label = label.unwrap_or(UNMET);
        build(state, &self.config, self.seed, label, features, check).map(Some)
    }

    /// Whether the algorithm learns exactly two classes.
    fn binary(&self) -> bool {
        self.config.algorithm().capabilities().learns == Learns::Binary
    }

    fn state(&self, py: Python<'_>) -> PyResult<MutexGuard<'_, State>> {
        self.state.lock_py_attached(py).map_err(|_| {
            PyRuntimeError::new_err("the model panicked in an earlier call and is no longer usable")
        })
    }

    fn built(config: ModelConfig, seed: u64, model: Model, stream: Stream) -> Self {
        Core {
            config,
            seed,
            state: Mutex::new(State::Built {
                model: Box::new(model),
                stream: Box::new(stream),
            }),
            pending: Mutex::new(PendingLimits::default()),
        }
    }
}

/// The model and stream of `state`, built for the features `features` when it is still
/// fresh (its classes the declared ones, or else the first row's label `label`), once
/// `check` has passed on the stream: a call refused by `check` leaves a fresh model fresh.
fn build<'s>(
    state: &'s mut State, config: &ModelConfig, seed: u64, label: &str,
    features: impl FnOnce() -> PyResult<Vec<(String, bool)>>,
    check: impl FnOnce(&Stream) -> PyResult<()>,
) -> PyResult<(&'s mut Model, &'s mut Stream)> {
    match state {
        State::Fresh { classes } => {
            let first = match classes.is_empty() {
                true if label == UNMET => {
                    return Err(PyValueError::new_err("a label may not be the empty string"));
                }
                true => vec![label.to_string()],
                false => classes.clone(),
            };
            let stream = Stream::first(features()?, &first)?;
            check(&stream)?;
            let model = config.build(&stream.spec, seed).map_err(py_error)?;
            *state = State::Built {
                model: Box::new(model),
                stream: Box::new(stream),
            };
        }
        State::Built { stream, .. } => check(stream)?,
    }
    match state {
        State::Built { model, stream } => Ok((&mut **model, &mut **stream)),
        State::Fresh { .. } => unreachable!("built above"),
    }
}

/// The features of a dict row: its keys, nominal where the value is a string.
fn dict_features(x: &Bound<'_, PyDict>) -> PyResult<Vec<(String, bool)>> {
    (x.iter())
        .map(|(k, v)| {
            let name = key_name(&k)?;
            let nominal = matches!(given(&v, &name)?, Given::Text(_));
            Ok((name, nominal))
        })
        .collect()
}

/// The features of a batch: its columns, nominal where they hold text.
fn batch_features(batch: &RecordBatch) -> PyResult<Vec<(String, bool)>> {
    (batch.schema().fields().iter())
        .map(|f| Ok((f.name().clone(), column_kind(f.name(), f.data_type())?)))
        .collect()
}

/// Checks that `time` does not go back from `last` (events and labels each keep their own
/// clock, as the operator's columns do), and moves `last` on.
fn check_time(last: &mut Option<f64>, time: f64, what: &str) -> PyResult<()> {
    if !time.is_finite() || last.is_some_and(|t| time < t) {
        return Err(PyValueError::new_err(format!(
            "{what} time {time} goes back from {}: times are finite and do not decrease",
            last.unwrap_or(f64::NAN)
        )));
    }
    *last = Some(time);
    Ok(())
}

/// A label for a model that has scored no event: there is nothing it can be for.
fn stream_less_label(time: f64) -> PyResult<()> {
    match time.is_finite() {
        true => Ok(()),
        false => Err(PyValueError::new_err(format!(
            "label time {time} is not finite"
        ))),
    }
}

fn check_weight(w: f64) -> PyResult<f64> {
    match w.is_finite() && w >= 0.0 {
        true => Ok(w),
        false => Err(PyValueError::new_err(format!(
            "a weight is a finite number >= 0, got {w}"
        ))),
    }
}

#[pymethods]
impl Core {
    /// A fresh model of `config` (JSON naming its algorithm and what differs from its
    /// defaults), seeded with `seed`; `classes`, when given, are its first labels.
    #[new]
    #[pyo3(signature = (config, seed, classes=None))]
    fn new(config: &str, seed: u64, classes: Option<Vec<String>>) -> PyResult<Self> {
        let config = parse_config(config)?;
        config.validate().map_err(py_error)?;
        let classes = classes.unwrap_or_default();
        if classes.iter().any(|c| c == UNMET) {
            return Err(PyValueError::new_err("a label may not be the empty string"));
        }
        if classes.len() == 1 {
            return Err(PyValueError::new_err(
                "classes declares at least two labels (or none, to learn them as they come)",
            ));
        }
        Ok(Core {
            config,
            seed,
            state: Mutex::new(State::Fresh { classes }),
            pending: Mutex::new(PendingLimits::default()),
        })
    }

    /// The model of the checkpoint at `path` (a file `streamboost replay --save`, `run` or
    /// `save` wrote), ready to go on.
    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let (model, stream) = py.detach(|| checkpoint::load(&path)).map_err(py_error)?;
        Ok(Core::built(
            stream.config,
            0,
            model,
            Stream::of(stream.spec, stream.stats, stream.delayed),
        ))
    }

    /// The model of checkpoint bytes ([`Core::to_bytes`]).
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: Vec<u8>) -> PyResult<Self> {
        let (model, stream) = py
            .detach(|| checkpoint::load_bytes(Path::new("(pickled model)"), data.into()))
            .map_err(py_error)?;
        Ok(Core::built(
            stream.config,
            0,
            model,
            Stream::of(stream.spec, stream.stats, stream.delayed),
        ))
    }

    /// The model as checkpoint bytes, or `None` while it has learnt nothing.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let mut state = self.state(py)?;
        let State::Built { model, stream } = &mut *state else {
            return Ok(None);
        };
        let stream = stream.stream_state(&self.config);
        let bytes = py
            .detach(|| checkpoint::to_bytes(model, &stream))
            .map_err(py_error)?;
        Ok(Some(PyBytes::new(py, &bytes)))
    }

    /// Saves the model as a checkpoint at `path`, atomically.
    fn save(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        let mut state = self.state(py)?;
        let State::Built { model, stream } = &mut *state else {
            return Err(PyValueError::new_err(
                "the model has learnt nothing yet: there is nothing to save",
            ));
        };
        let stream = stream.stream_state(&self.config);
        py.detach(|| checkpoint::save(&path, model, &stream))
            .map_err(py_error)?;
        Ok(())
    }

    /// The full config, as JSON.
    fn config(&self) -> String {
        serde_json::to_string(&self.config).expect("configs serialize")
    }

    /// The seed the model was built with (0 for a loaded one).
    #[getter]
    fn seed(&self) -> u64 {
        self.seed
    }

    /// The labels met, in class order.
    fn labels(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        Ok(match &*self.state(py)? {
            State::Fresh { classes } => classes.clone(),
            State::Built { stream, .. } => stream.spec.classes.names()[..stream.labels].to_vec(),
        })
    }

    /// The features the model reads: (name, nominal) in order.
    fn features(&self, py: Python<'_>) -> PyResult<Vec<(String, bool)>> {
        Ok(match &*self.state(py)? {
            State::Fresh { .. } => Vec::new(),
            State::Built { stream, .. } => (stream.spec.features.iter())
                .map(|f| (f.name.clone(), f.is_nominal()))
                .collect(),
        })
    }

    /// Rows learnt.
    fn rows_learnt(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(match &*self.state(py)? {
            State::Fresh { .. } => 0,
            State::Built { stream, .. } => stream.stats.rows_learnt,
        })
    }

    /// Values of features outside the model's met so far in rows learnt (not learnt).
    fn ignored_values(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(match &*self.state(py)? {
            State::Fresh { .. } => 0,
            State::Built { stream, .. } => stream.ignored,
        })
    }

    /// Bytes the model holds on the heap (its trees and statistics).
    fn heap_bytes(&self, py: Python<'_>) -> PyResult<usize> {
        Ok(match &*self.state(py)? {
            State::Fresh { .. } => 0,
            State::Built { model, stream } => model.heap_bytes() + stream.spec.heap_bytes(),
        })
    }

    /// Learns row `x` (a dict) with label `y` and weight `w`.
    fn learn_one(&self, py: Python<'_>, x: &Bound<'_, PyDict>, y: &str, w: f64) -> PyResult<()> {
        let w = check_weight(w)?;
        let binary = self.binary();
        let mut state = self.state(py)?;
        let (model, stream) = build(
            &mut state,
            &self.config,
            self.seed,
            y,
            || dict_features(x),
            |stream| stream.check_labels(binary, [y]),
        )?;
        let mut row = Vec::new();
        stream.dict_row(x, &mut row, true)?;
        let y = stream.class(model, y)?;
        py.detach(|| model.learn(&row, y, w));
        stream.stats.rows_seen += 1;
        stream.stats.rows_learnt += 1;
        Ok(())
    }

    /// Learns row `x` (a dict) with its label set, (label, relevant) pairs, and weight `w`:
    /// a ranker's labels are those of its first row.
    fn learn_labels_one(
        &self, py: Python<'_>, x: &Bound<'_, PyDict>, labels: Vec<(String, bool)>, w: f64,
    ) -> PyResult<()> {
        let w = check_weight(w)?;
        let mut state = self.state(py)?;
        if let State::Fresh { .. } = &*state {
            let names = labels.iter().map(|(n, _)| n.clone()).collect();
            let stream = Stream::first_ranking(dict_features(x)?, names)?;
            let model = self
                .config
                .build(&stream.spec, self.seed)
                .map_err(py_error)?;
            *state = State::Built {
                model: Box::new(model),
                stream: Box::new(stream),
            };
        }
        let State::Built { model, stream } = &mut *state else {
            unreachable!("built above")
        };
        let relevant = stream.relevance(&labels)?;
        let mut row = Vec::new();
        stream.dict_row(x, &mut row, true)?;
        py.detach(|| model.learn_labels(&row, &relevant, w));
        stream.stats.rows_seen += 1;
        stream.stats.rows_learnt += 1;
        Ok(())
    }

    /// Learns the rows of `data` (Arrow) in order, row `i` with label set `sets[i]`
    /// ((label, relevant) pairs) and weight `w`: the model afterwards is the one
    /// `learn_labels_one` on each row would leave. Every column and label set is checked
    /// before anything changes; a fresh ranker's labels are those of the first row.
    fn learn_labels_many(
        &self, py: Python<'_>, data: &Bound<'_, PyAny>, sets: Vec<Vec<(String, bool)>>, w: f64,
    ) -> PyResult<()> {
        let w = check_weight(w)?;
        let batches = batches_of(data)?;
        let n: usize = batches.iter().map(RecordBatch::num_rows).sum();
        if n != sets.len() {
            return Err(PyValueError::new_err(format!(
                "{n} rows but {} label sets",
                sets.len()
            )));
        }
        let Some(first) = batches.iter().find(|b| b.num_rows() > 0) else {
            return Ok(());
        };
        let mut state = self.state(py)?;
        let fresh = match &*state {
            State::Fresh { .. } => {
                let names = sets[0].iter().map(|(n, _)| n.clone()).collect();
                let stream = Stream::first_ranking(batch_features(first)?, names)?;
                let model = self
                    .config
                    .build(&stream.spec, self.seed)
                    .map_err(py_error)?;
                Some((model, stream))
            }
            State::Built { .. } => None,
        };
        let relevant = {
            let stream = match (&fresh, &*state) {
                (Some((_, stream)), _) => stream,
                (None, State::Built { stream, .. }) => stream,
                (None, State::Fresh { .. }) => unreachable!("made above"),
            };
            batches.iter().try_for_each(|b| stream.check_batch(b))?;
            (sets.iter().map(|s| stream.relevance(s))).collect::<PyResult<Vec<_>>>()?
        };
        if let Some((model, stream)) = fresh {
            *state = State::Built {
                model: Box::new(model),
                stream: Box::new(stream),
            };
        }
        let State::Built { model, stream } = &mut *state else {
            unreachable!("built above")
        };
        let mut rows = Vec::new();
        let mut relevant = relevant.iter();
        for batch in &batches {
            stream.batch_rows(batch, &mut rows, true)?;
            let d = stream.spec.n_features();
            let sets: Vec<&Vec<bool>> = relevant.by_ref().take(batch.num_rows()).collect();
            py.detach(|| {
                on_the_pool(|| {
                    for (r, relevant) in sets.iter().enumerate() {
                        model.learn_labels(&rows[r * d..(r + 1) * d], relevant, w);
                    }
                })
            });
            stream.stats.rows_seen += sets.len() as u64;
            stream.stats.rows_learnt += sets.len() as u64;
        }
        Ok(())
    }

    /// A ranker's scores for the rows of `data` (Arrow): its labels, the scores row by row
    /// (`rows × labels`), and whether each label is in each row's predicted set; no labels
    /// before the first row.
    fn predict_scores_many(
        &self, py: Python<'_>, data: &Bound<'_, PyAny>,
    ) -> PyResult<(Vec<String>, Vec<f64>, Vec<bool>)> {
        let batches = batches_of(data)?;
        let mut state = self.state(py)?;
        let State::Built { model, stream } = &mut *state else {
            return Ok((Vec::new(), Vec::new(), Vec::new()));
        };
        let (d, k) = (stream.spec.n_features(), stream.spec.n_classes());
        let (mut rows, mut scores, mut sets) = (Vec::new(), Vec::new(), Vec::new());
        for batch in &batches {
            stream.batch_rows(batch, &mut rows, false)?;
            let n = batch.num_rows();
            let start = scores.len();
            scores.resize(start + n * k, 0.0);
            let out = &mut scores[start..];
            py.detach(|| {
                on_the_pool(|| {
                    for (r, out) in out.chunks_exact_mut(k).enumerate() {
                        model.predict_scores(&rows[r * d..(r + 1) * d], out);
                    }
                })
            });
        }
        let mut set = Vec::new();
        for row in scores.chunks_exact(k) {
            predicted_set(row, &mut set);
            sets.extend_from_slice(&set);
        }
        Ok((stream.spec.classes.names().to_vec(), scores, sets))
    }

    /// A ranker's score of each label for row `x` (a dict), and whether the label is in the
    /// predicted set (scoring above the mean, as the crate's multi-label reports predict);
    /// none before the first row.
    fn predict_scores_one(
        &self, py: Python<'_>, x: &Bound<'_, PyDict>,
    ) -> PyResult<Vec<(String, f64, bool)>> {
        let mut state = self.state(py)?;
        let State::Built { model, stream } = &mut *state else {
            return Ok(Vec::new());
        };
        let mut row = Vec::new();
        stream.dict_row(x, &mut row, false)?;
        let mut scores = vec![0.0; stream.spec.n_classes()];
        py.detach(|| model.predict_scores(&row, &mut scores));
        let mut set = Vec::new();
        predicted_set(&scores, &mut set);
        Ok((stream.spec.classes.names().iter().cloned())
            .zip(scores)
            .zip(set)
            .map(|((name, score), is)| (name, score, is))
            .collect())
    }

    /// The probability of each label met for row `x` (a dict): each declared label's the
    /// same before the first row is learnt, none before the first label without them.
    fn predict_proba_one(
        &self, py: Python<'_>, x: &Bound<'_, PyDict>,
    ) -> PyResult<Vec<(String, f64)>> {
        let mut state = self.state(py)?;
        let (model, stream) = match &mut *state {
            State::Built { model, stream } => (model, stream),
            // A model that has learnt nothing gives each declared label the same chance.
            State::Fresh { classes } => {
                let p = 1.0 / classes.len() as f64;
                return Ok(classes.iter().map(|c| (c.clone(), p)).collect());
            }
        };
        let mut row = Vec::new();
        stream.dict_row(x, &mut row, false)?;
        let mut proba = vec![0.0; model.n_classes()];
        py.detach(|| model.predict_proba(&row, &mut proba));
        Ok(stream.label_probabilities(&proba))
    }

    /// Sets how many events may wait for their labels (the oldest are evicted beyond
    /// `max_events` or `max_bytes`), how long they wait (`ttl`, in the units of the times
    /// given; `None`: until evicted) and how long a label that comes before its event is
    /// held for it; for the events from now on.
    #[pyo3(signature = (max_events, max_bytes, ttl, early_label_tolerance))]
    fn set_pending(
        &self, py: Python<'_>, max_events: usize, max_bytes: usize, ttl: Option<f64>,
        early_label_tolerance: f64,
    ) -> PyResult<()> {
        let limits = PendingLimits {
            max_events,
            max_bytes,
            ttl,
            early_label_tolerance,
        };
        limits.validate().map_err(py_error)?;
        *self.pending.lock_py_attached(py).expect("never poisoned") = limits;
        if let State::Built { stream, .. } = &mut *self.state(py)?
            && let Some(delayed) = &mut stream.delayed
        {
            let columns = delayed.columns.clone();
            let waiting = std::mem::replace(
                delayed,
                DelayedState::new(columns, limits).map_err(py_error)?,
            );
            if waiting.stats().pending > 0 {
                *delayed = waiting;
                return Err(PyValueError::new_err(
                    "events are waiting for their labels: set the limits before the first event",
                ));
            }
        }
        Ok(())
    }

    /// Scores event `id` (row `x`, a dict, at `time`) and keeps it until its label comes
    /// ([`Core::label`]); returns the probability of each label met, and the prediction.
    /// An event whose label came first (held) is learnt at once.
    fn event(
        &self, py: Python<'_>, id: String, x: &Bound<'_, PyDict>, time: f64,
    ) -> PyResult<(LabelProbabilities, Option<String>)> {
        let limits = *self.pending.lock_py_attached(py).expect("never poisoned");
        let mut state = self.state(py)?;
        if matches!(&*state, State::Fresh { classes } if classes.is_empty()) {
            return Err(PyValueError::new_err(
                "a model that has met no label cannot score an event: learn a row first, or \
                 declare its classes",
            ));
        }
        let (model, stream) = build(
            &mut state,
            &self.config,
            self.seed,
            UNMET,
            || dict_features(x),
            |_| Ok(()),
        )?;
        let mut row = Vec::new();
        stream.dict_row(x, &mut row, true)?;
        let mut proba = vec![0.0; model.n_classes()];
        let delayed = stream.delayed(limits)?;
        check_time(&mut delayed.last_times.0, time, "event")?;
        let (predicted, early) = py
            .detach(|| delayed.learner.event(model, id, time, &row, &mut proba))
            .map_err(py_error)?;
        stream.stats.rows_seen += 1;
        stream.stats.rows_learnt += u64::from(early.is_some());
        let (p, predicted) = stream.scored(&proba, predicted);
        let names = stream.spec.classes.names();
        let predicted = predicted.map(|c| names[c].clone());
        Ok((names.iter().cloned().zip(p).collect(), predicted))
    }

    /// Label `y` of event `id`, come at `time`: the event is learnt if it waits ("learnt");
    /// else the label is held for it ("held", where early labels are) or counted
    /// ("unmatched"). A label never met before is a class of the model from here on.
    fn label(&self, py: Python<'_>, id: String, y: &str, time: f64) -> PyResult<&'static str> {
        let limits = *self.pending.lock_py_attached(py).expect("never poisoned");
        let binary = self.binary();
        let mut state = self.state(py)?;
        let State::Built { model, stream } = &mut *state else {
            stream_less_label(time)?;
            return Ok("unmatched");
        };
        stream.check_labels(binary, [y])?;
        check_time(&mut stream.delayed(limits)?.last_times.1, time, "label")?;
        let y = stream.class(model, y)?;
        let delayed = stream.delayed(limits)?;
        let outcome = py
            .detach(|| delayed.learner.label(model.as_mut(), &id, y, time))
            .map_err(py_error)?;
        Ok(match outcome {
            LabelOutcome::Learnt(_) => {
                stream.stats.rows_learnt += 1;
                "learnt"
            }
            LabelOutcome::Held => "held",
            LabelOutcome::Unmatched => "unmatched",
        })
    }

    /// What became of the events and labels so far, as JSON (`None` before the first).
    fn delay_stats(&self, py: Python<'_>) -> PyResult<Option<String>> {
        Ok(match &*self.state(py)? {
            State::Built { stream, .. } => (stream.delayed.as_ref())
                .map(|d| serde_json::to_string(&d.stats()).expect("stats serialize")),
            State::Fresh { .. } => None,
        })
    }

    /// Learns the rows of `data` (Arrow) in order, row `i` with label `y[i]` (`None`: not
    /// learnt) and weight `w`: the model afterwards is the one `learn_one` on each row
    /// would leave.
    fn learn_many(
        &self, py: Python<'_>, data: &Bound<'_, PyAny>, y: Vec<Option<String>>, w: f64,
    ) -> PyResult<()> {
        let w = check_weight(w)?;
        let batches = batches_of(data)?;
        let mut state = self.state(py)?;
        let Some((model, stream)) = self.for_batches(&mut state, &batches, &y)? else {
            return Ok(());
        };
        let mut rows = Vec::new();
        let mut labels = y.into_iter();
        for batch in &batches {
            stream.batch_rows(batch, &mut rows, true)?;
            let d = stream.spec.n_features();
            let batch_labels: Vec<Option<String>> =
                labels.by_ref().take(batch.num_rows()).collect();
            // A new label's class is added at its row, as `learn_one` adds it: a booster
            // learns the rows before it with the classes it had then.
            py.detach(|| {
                on_the_pool(|| {
                    for (r, y) in batch_labels.iter().enumerate() {
                        stream.stats.rows_seen += 1;
                        let Some(y) = y else { continue };
                        let y = stream.class(model, y)?;
                        model.learn(&rows[r * d..(r + 1) * d], y, w);
                        stream.stats.rows_learnt += 1;
                    }
                    Ok::<(), PyErr>(())
                })
            })?;
        }
        Ok(())
    }

    /// Scores the rows of `data` (Arrow) test-then-train, as `replay` and the operator do:
    /// each row is predicted before its label `y[i]` (`None`: only scored) is learnt, rows
    /// of known labels together ([`Classifier::learn_predict_rows`]); a row whose label is
    /// new is predicted among the classes known, then the model grows and learns it. Returns
    /// the labels met at the end, each row's predicted label (its index there; none while
    /// no label has been met) and its probabilities over those labels (`rows × labels`,
    /// zero for a label met after the row).
    fn score(
        &self, py: Python<'_>, data: &Bound<'_, PyAny>, y: Vec<Option<String>>, w: f64,
    ) -> PyResult<Scored> {
        let w = check_weight(w)?;
        let batches = batches_of(data)?;
        let n: usize = batches.iter().map(RecordBatch::num_rows).sum();
        let mut state = self.state(py)?;
        let Some((model, stream)) = self.for_batches(&mut state, &batches, &y)? else {
            // Nothing to learn from: a fresh model gives each declared label the same chance.
            let State::Fresh { classes } = &*state else {
                return Ok((Vec::new(), Vec::new(), Vec::new()));
            };
            let p = 1.0 / classes.len().max(1) as f64;
            let predicted = (!classes.is_empty()).then_some(0);
            return Ok((
                classes.clone(),
                vec![predicted; n],
                vec![p; n * classes.len()],
            ));
        };
        let mut rows = Vec::new();
        let mut labels = y.into_iter();
        // Per row: its probabilities over the labels met by then, and its prediction.
        let mut scored: Vec<(Vec<f64>, Option<usize>)> = Vec::with_capacity(n);
        for batch in &batches {
            stream.batch_rows(batch, &mut rows, true)?;
            let d = stream.spec.n_features();
            let batch_labels: Vec<Option<String>> =
                labels.by_ref().take(batch.num_rows()).collect();
            py.detach(|| {
                on_the_pool(|| {
                    let mut r = 0;
                    while r < batch_labels.len() {
                        // The run of rows from `r` whose labels the model knows (or that have none).
                        let mut ids = Vec::new();
                        for y in &batch_labels[r..] {
                            match y.as_deref().map(|y| stream.class_ids.get(y)) {
                                None => ids.push(None),
                                Some(Some(&id)) => ids.push(Some(id)),
                                Some(None) => break,
                            }
                        }
                        let (end, k) = (r + ids.len(), model.n_classes());
                        if end > r {
                            let xs: Vec<&[f64]> =
                                (r..end).map(|i| &rows[i * d..(i + 1) * d]).collect();
                            let mut proba = vec![0.0; xs.len() * k];
                            let mut predicted = vec![0; xs.len()];
                            model.learn_predict_rows(&xs, &ids, w, &mut proba, &mut predicted);
                            for (p, c) in proba.chunks_exact(k).zip(predicted) {
                                scored.push(stream.scored(p, c));
                            }
                        }
                        if let Some(Some(name)) = batch_labels.get(end) {
                            let x = &rows[end * d..(end + 1) * d];
                            let mut proba = vec![0.0; k];
                            let predicted = model.learn_predict(x, None, w, &mut proba);
                            scored.push(stream.scored(&proba, predicted));
                            let y = stream.class(model, name)?;
                            model.learn(x, y, w);
                        }
                        let learnt =
                            ids.iter().flatten().count() + usize::from(end < batch_labels.len());
                        stream.stats.rows_seen +=
                            (end - r + usize::from(end < batch_labels.len())) as u64;
                        stream.stats.rows_learnt += learnt as u64;
                        r = end + 1;
                    }
                    Ok::<(), PyErr>(())
                })
            })?;
        }
        let labels = stream.labels;
        let mut proba = Vec::with_capacity(n * labels);
        let predicted = (scored.into_iter())
            .map(|(p, c)| {
                proba.extend(p.iter().copied().chain(std::iter::repeat(0.0)).take(labels));
                c
            })
            .collect();
        Ok((
            stream.spec.classes.names()[..labels].to_vec(),
            predicted,
            proba,
        ))
    }

    /// Replays the rows of `data` (Arrow, labelled by column `label`) through this fresh
    /// model test-then-train, as `streamboost replay` replays a file: the same stream
    /// description (features in column order, classes sorted by name), the same prequential
    /// driver, so the same report, returned as the JSON `replay --report` writes under
    /// `report`. With `plot` (`.svg` or `.png`), `replay --plot`'s chart of the learning
    /// curve, titled after `name`. The model has then learnt the rows.
    #[pyo3(signature = (data, label, final_fraction=0.2, window=None, plot=None, name="data"))]
    #[allow(clippy::too_many_arguments)]
    fn evaluate(
        &self, py: Python<'_>, data: &Bound<'_, PyAny>, label: &str, final_fraction: f64,
        window: Option<usize>, plot: Option<PathBuf>, name: &str,
    ) -> PyResult<String> {
        if let Some(path) = &plot {
            streamboost::cli::plot::check_path(path).map_err(py_error)?;
        }
        let batches = batches_of(data)?;
        let schema = (batches.first())
            .map(RecordBatch::schema)
            .ok_or_else(|| PyValueError::new_err("no rows to evaluate on"))?;
        let table = Table::new(name, schema, batches);
        let mut state = self.state(py)?;
        let State::Fresh { classes } = &*state else {
            return Err(PyValueError::new_err(
                "a progressive evaluation starts from a fresh model: evaluate model.clone()",
            ));
        };
        let declared = (!classes.is_empty()).then(|| classes.clone());
        let evaluation = Prequential {
            final_fraction,
            window,
            ..Prequential::default()
        };
        let (report, model, stream) = py
            .detach(|| {
                on_the_pool(|| {
                    evaluation.validate()?;
                    let session = Session::fresh(
                        &[table],
                        self.config.clone(),
                        self.seed,
                        label,
                        Encodings::default(),
                        declared.as_deref(),
                    )?;
                    let Session {
                        mut model,
                        mut stream,
                        rows,
                    } = session;
                    let n = rows.n_rows();
                    let chunks = |each: &mut dyn FnMut(_) -> _| rows.for_each_chunk(each);
                    // What the model's drift response replaced, and where: the chart's ticks.
                    let mut drift = DriftLog::default();
                    let after_row = |row: &RowOutcome<'_>, model: &mut Model| {
                        if row.model_current {
                            drift.observe(row.position as u64 + 1, model);
                        }
                        Ok(())
                    };
                    let report =
                        evaluation.run_chunks(&mut model, &stream.spec, n, chunks, after_row)?;
                    if let Some(path) = &plot {
                        let algorithm = self.config.algorithm();
                        let curve = Curve {
                            name: algorithm.name().to_string(),
                            points: (report.curve.iter())
                                .map(|p| (p.rows, p.cumulative_accuracy, p.window_accuracy))
                                .collect(),
                            final_from: Some(evaluation.first_final(n) as u64),
                            replaced_at: (drift.finish())
                                .map_or(Vec::new(), |d| d.events.iter().map(|e| e.row).collect()),
                        };
                        let title = format!("{} on {name}", algorithm.name());
                        draw(path, &title, ("rows", "accuracy"), &[curve])?;
                    }
                    stream.stats.rows_seen = n as u64;
                    stream.stats.rows_learnt = report.cumulative.rows;
                    Ok((report, model, stream))
                })
            })
            .map_err(py_error)?;
        *state = State::Built {
            model: Box::new(model),
            stream: Box::new(Stream::of(stream.spec, stream.stats, stream.delayed)),
        };
        Ok(serde_json::to_string(&report).expect("reports serialize"))
    }

    /// The probabilities of the labels met for the rows of `data` (Arrow): the labels, and
    /// the probabilities row by row (`rows × labels` numbers).
    fn predict_proba_many(
        &self, py: Python<'_>, data: &Bound<'_, PyAny>,
    ) -> PyResult<(Vec<String>, Vec<f64>)> {
        let batches = batches_of(data)?;
        let mut state = self.state(py)?;
        let (model, stream) = match &mut *state {
            State::Built { model, stream } => (model, stream),
            State::Fresh { classes } => {
                let n: usize = batches.iter().map(RecordBatch::num_rows).sum();
                let p = 1.0 / classes.len().max(1) as f64;
                return Ok((classes.clone(), vec![p; n * classes.len()]));
            }
        };
        let (d, k, labels) = (stream.spec.n_features(), model.n_classes(), stream.labels);
        let mut rows = Vec::new();
        let mut out = Vec::new();
        let mut proba = Vec::new();
        for batch in &batches {
            stream.batch_rows(batch, &mut rows, false)?;
            let n = batch.num_rows();
            proba.resize(n * k, 0.0);
            py.detach(|| {
                on_the_pool(|| {
                    let xs: Vec<&[f64]> = (0..n).map(|r| &rows[r * d..(r + 1) * d]).collect();
                    model.predict_proba_rows(&xs, &mut proba);
                })
            });
            for p in proba.chunks_exact(k) {
                out.extend(stream.met_probabilities(p));
            }
        }
        let names = stream.spec.classes.names()[..labels].to_vec();
        Ok((names, out))
    }
}

/// The [`LiveSource`] of a live model (see [`Live::new`]'s arguments), checked.
#[allow(clippy::too_many_arguments)]
fn live_source(
    path: PathBuf, config: &str, seed: u64, label: String, classes: Option<Vec<String>>,
    every: Option<u64>, interval: Option<f64>, key: Option<String>, memory_budget: Option<u64>,
    id: Option<String>, time: Option<String>, pending: (usize, usize, Option<f64>, f64),
    passthrough: Vec<String>,
) -> PyResult<LiveSource> {
    let config = parse_config(config)?;
    let interval = (interval.map(std::time::Duration::try_from_secs_f64))
        .transpose()
        .map_err(|_| PyValueError::new_err("interval is a number of seconds > 0"))?;
    let (max_events, max_bytes, ttl, early_label_tolerance) = pending;
    let limits = PendingLimits {
        max_events,
        max_bytes,
        ttl,
        early_label_tolerance,
    };
    let delayed = match (id, time) {
        (Some(id), Some(time)) => Some(DelayedLabels {
            columns: DelayColumns { id, time },
            limits,
        }),
        (None, None) => None,
        _ => {
            return Err(PyValueError::new_err(
                "labels that come apart need both `id` and `time`",
            ));
        }
    };
    if let Some(d) = &delayed {
        d.limits.validate().map_err(py_error)?;
    }
    let source = LiveSource {
        policy: CheckpointPolicy {
            path,
            every,
            interval,
            memory_budget,
            chain: Default::default(),
        },
        fresh: FreshModel {
            config,
            seed,
            label,
            encodings: Encodings {
                passthrough,
                ..Encodings::default()
            },
            classes,
        },
        key,
        key_threads: 1,
        delayed,
    };
    source.validate().map_err(py_error)?;
    Ok(source)
}

/// A live model: a model bound to a checkpoint and a commit policy, made and kept by the
/// crate's [`LiveSource`] as the `run` job makes its own (from the checkpoint when it
/// exists, else fresh at the first batch; one model, or one per key; labels that come
/// apart), and committed by its policy between batches. Its module doc's semantics are the
/// crate's `runtime::live`: a crash loses what was learnt since the last commit, which a
/// restart learns again; `learn_once_by` keeps a row taken again from being learnt twice.
#[pyclass(module = "streamboost._streamboost", frozen)]
struct Live {
    source: LiveSource,
    learn_once_by: Option<String>,
    /// The model between batches (`None` once closed).
    held: Mutex<Option<Held>>,
}

impl Live {
    /// The live model bound to `batches`' schema, given to `work`, and held again after:
    /// whatever `work` returns, the model is kept (a batch refused leaves it as it was, as
    /// the job's rejected files do).
    fn with_live<T>(
        &self, py: Python<'_>, batches: &[RecordBatch],
        work: impl FnOnce(&mut LiveModel) -> streamboost::Result<T> + Send,
    ) -> PyResult<T>
    where
        T: Send,
    {
        let mut guard = self.held.lock_py_attached(py).map_err(|_| {
            PyRuntimeError::new_err(
                "the live model panicked in an earlier call and is no longer usable",
            )
        })?;
        let held = guard
            .take()
            .ok_or_else(|| PyValueError::new_err("the live model is closed"))?;
        let schema = (batches.first())
            .map(RecordBatch::schema)
            .ok_or_else(|| PyValueError::new_err("no batch given"))?;
        let table = Table::new("(Python data)", schema, batches.to_vec());
        let (source, once) = (&self.source, self.learn_once_by.as_deref());
        let (held, result) = py.detach(|| {
            on_the_pool(|| match source.bind(held, &table, once) {
                Err(e) => (Held::Unloaded, Err(e)),
                Ok(Err((held, e))) => (held, Err(e)),
                Ok(Ok(mut live)) => {
                    let result = work(&mut live);
                    (Held::Live(Box::new(live)), result)
                }
            })
        });
        *guard = Some(held);
        result.map_err(py_error)
    }

    fn live<T>(
        &self, py: Python<'_>, f: impl FnOnce(&mut LiveModel) -> streamboost::Result<T>,
    ) -> PyResult<Option<T>> {
        let mut guard = self.held.lock_py_attached(py).map_err(|_| {
            PyRuntimeError::new_err(
                "the live model panicked in an earlier call and is no longer usable",
            )
        })?;
        match &mut *guard {
            Some(Held::Live(live)) => f(live).map(Some).map_err(py_error),
            Some(_) => Ok(None),
            None => Err(PyValueError::new_err("the live model is closed")),
        }
    }
}

fn to_pyarrow_batches(
    py: Python<'_>, batches: Vec<RecordBatch>,
) -> PyResult<Vec<Bound<'_, PyAny>>> {
    batches.iter().map(|b| b.to_pyarrow(py)).collect()
}

#[pymethods]
impl Live {
    /// A live model at checkpoint `path` (a file; a directory for one model per `key`):
    /// committed every `every` rows and every `interval` seconds (and by `commit`, `close`);
    /// a fresh model of `config` (JSON), `seed` and `classes` (else the first batch's
    /// labels, sorted) when the checkpoint does not exist; labels in column `label`; with
    /// `id` and `time`, labels that come apart (`labels`), `pending` bounding the events
    /// waiting; `passthrough` columns carried, not features.
    #[new]
    #[pyo3(signature = (path, config, seed, label, classes, every, interval, learn_once_by, key, memory_budget, id, time, pending, passthrough))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        path: PathBuf, config: &str, seed: u64, label: String, classes: Option<Vec<String>>,
        every: Option<u64>, interval: Option<f64>, learn_once_by: Option<String>,
        key: Option<String>, memory_budget: Option<u64>, id: Option<String>, time: Option<String>,
        pending: (usize, usize, Option<f64>, f64), passthrough: Vec<String>,
    ) -> PyResult<Self> {
        let source = live_source(
            path,
            config,
            seed,
            label,
            classes,
            every,
            interval,
            key,
            memory_budget,
            id,
            time,
            pending,
            passthrough,
        )?;
        let (held, _) = source.load().map_err(py_error)?;
        Ok(Live {
            source,
            learn_once_by,
            held: Mutex::new(Some(held)),
        })
    }

    /// Scores the rows of `data` (Arrow) in order, learning the labelled ones, and commits
    /// when the policy asks (between batches, the commit written behind the model); the
    /// batches with the prediction columns appended.
    fn process<'py>(
        &self, py: Python<'py>, data: &Bound<'py, PyAny>,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let batches = batches_of(data)?;
        let out = self.with_live(py, &batches, |live| {
            let mut out = Vec::with_capacity(batches.len());
            for batch in &batches {
                out.push(live.process(batch)?);
                if live.due() {
                    live.commit_behind(None)?;
                }
            }
            Ok(out)
        })?;
        to_pyarrow_batches(py, out)
    }

    /// Learns labels that come after their events (the `id`, label and `time` columns): one
    /// outcome row per label row. The model is the one the events were scored by (a label
    /// batch has none of their features).
    fn labels<'py>(
        &self, py: Python<'py>, data: &Bound<'py, PyAny>,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let batches = batches_of(data)?;
        let out = self.live(py, |live| {
            py.detach(|| {
                on_the_pool(|| {
                    let mut out = Vec::with_capacity(batches.len());
                    for batch in &batches {
                        out.push(live.labels(batch)?);
                        if live.due() {
                            live.commit_behind(None)?;
                        }
                    }
                    Ok(out)
                })
            })
        })?;
        let out = out.ok_or_else(|| {
            PyValueError::new_err("no events have been scored yet: labels follow their events")
        })?;
        to_pyarrow_batches(py, out)
    }

    /// Commits now, and returns once the commit is in place (nothing before the first batch).
    fn commit(&self, py: Python<'_>) -> PyResult<()> {
        self.live(py, |live| py.detach(|| live.commit(None)))?;
        Ok(())
    }

    /// Commits, then lets the model and its checkpoint's lock go; later calls are refused.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        self.commit(py)?;
        let mut guard = self.held.lock_py_attached(py).map_err(|_| {
            PyRuntimeError::new_err(
                "the live model panicked in an earlier call and is no longer usable",
            )
        })?;
        *guard = None;
        Ok(())
    }

    /// Rows seen and learnt, labels outside the classes, commits and the seconds they held
    /// the model up, and a keyed model's keys in memory, as JSON.
    fn stats(&self, py: Python<'_>) -> PyResult<String> {
        let stats = self.live(py, |live| {
            let (commits, _) = live.commits();
            let (commit_time, commit_bytes) = live.commit_totals();
            let stats = live.stats();
            Ok(serde_json::json!({
                "rows_seen": stats.rows_seen,
                "rows_learnt": stats.rows_learnt,
                "unknown_labels": stats.unknown_labels,
                "unknown_classes": live.unknown_classes(),
                "commits": commits,
                "commit_seconds": commit_time.as_secs_f64(),
                "commit_bytes": commit_bytes,
                "keys_in_memory": live.key_memory().map(|k| k.resident_keys),
            }))
        })?;
        Ok(stats
            .unwrap_or_else(|| serde_json::json!({"rows_seen": 0, "rows_learnt": 0, "commits": 0}))
            .to_string())
    }
}

/// The `run` job over a directory, once: every complete file of `input_dir` (and of
/// `labels_dir`, for labels that come apart) not taken yet is scored into `output_dir`, one
/// Parquet file per input file, exactly once across crashes and restarts, by the live model
/// at `path` (made as `Live` makes one), committed by its policy; then it returns what it
/// took, as JSON. Watching a directory for more is the command line's (`streamboost run`).
#[pyfunction]
#[pyo3(signature = (input_dir, output_dir, path, config, seed, label, classes, every, interval, key, passthrough, labels_dir, id, time, pending))]
#[allow(clippy::too_many_arguments)]
fn run_once(
    py: Python<'_>, input_dir: PathBuf, output_dir: PathBuf, path: PathBuf, config: &str,
    seed: u64, label: String, classes: Option<Vec<String>>, every: Option<u64>,
    interval: Option<f64>, key: Option<String>, passthrough: Vec<String>,
    labels_dir: Option<PathBuf>, id: Option<String>, time: Option<String>,
    pending: (usize, usize, Option<f64>, f64),
) -> PyResult<String> {
    let source = live_source(
        path,
        config,
        seed,
        label,
        classes,
        every,
        interval,
        key,
        None,
        id,
        time,
        pending,
        passthrough,
    )?;
    if labels_dir.is_some() != source.delayed.is_some() {
        return Err(PyValueError::new_err(
            "labels that come apart need a labels directory, an `id` and a `time`",
        ));
    }
    let job = Job {
        input_dir,
        output_dir,
        live: source,
        once: true,
        poll: std::time::Duration::from_millis(100),
        labels_dir,
    };
    let stop = std::sync::atomic::AtomicBool::new(false);
    let stats = py
        .detach(|| on_the_pool(|| job.run(&stop, &mut |_| {})))
        .map_err(py_error)?;
    Ok(serde_json::json!({
        "files": stats.files,
        "rows": stats.rows,
        "rejected": stats.rejected,
        "rejections": stats.rejections,
        "unknown_classes": stats.unknown_classes,
        "commits": stats.commits,
        "labels": stats.labels,
        "labelled": stats.labelled,
        "correct": stats.correct,
    })
    .to_string())
}

/// The online algorithms of the catalogue: (name, what it is, what it learns —
/// `multiclass`, `binary` or `ranking` —, its default config as JSON).
#[pyfunction]
fn algorithms() -> Vec<(String, String, &'static str, String)> {
    (Algorithm::ALL.iter())
        .filter(|a| a.capabilities().role != Role::Batch)
        .map(|a| {
            let config = serde_json::to_string(&a.default_config()).expect("configs serialize");
            let learns = match a.capabilities().learns {
                Learns::Multiclass => "multiclass",
                Learns::Binary => "binary",
                Learns::Ranking => "ranking",
            };
            (a.name().to_string(), a.about().to_string(), learns, config)
        })
        .collect()
}

/// The crate's version.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _streamboost(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Core>()?;
    m.add_class::<Live>()?;
    m.add_class::<sql::Registry>()?;
    m.add("DATAFUSION_MAJOR", sql::DATAFUSION_MAJOR)?;
    m.add_function(wrap_pyfunction!(algorithms, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(run_once, m)?)?;
    m.add("CLASSES_KEY", streamboost::columnar::CLASSES_KEY)?;
    Ok(())
}
