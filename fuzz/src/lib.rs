//! What the fuzz targets share: a scratch file per process, a small replay, and the
//! generated record batches of the operator target.

use std::path::PathBuf;
use std::sync::Arc;

use arbitrary::Arbitrary;
use arrow::array::{
    ArrayRef, BooleanArray, DictionaryArray, Float64Array, Int64Array, ListBuilder, StringArray,
    StringBuilder,
};
use arrow::datatypes::{Field, Int32Type, Schema};
use arrow::record_batch::RecordBatch;
use streamboost::columnar::{Encodings, Table, encode_tables};
use streamboost::core::Dataset;
use streamboost::eval::Prequential;
use streamboost::learner::{Classifier, Config, Ranker};
use streamboost::model::ModelConfig;
use streamboost::runtime::Cursor;
use streamboost::runtime::replay::Session;

/// Lets panics unwind instead of aborting, and prints each panic location once.
///
/// The readers of dependencies (arrow, parquet) can panic on damaged bytes, and
/// streamboost's readers turn such a panic into a typed error (`files::without_panics`).
/// libFuzzer's hook would abort at the panic itself; this one lets the guard do its work, so
/// what is reported is what a user would meet: a panic that escapes the guard still unwinds
/// out of the fuzz target, where libFuzzer counts it as a crash.
pub fn report_caught_panics() {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        let seen = std::sync::Mutex::new(std::collections::HashSet::new());
        std::panic::set_hook(Box::new(move |info| {
            let at = info
                .location()
                .map(|l| format!("{}:{}", l.file(), l.line()))
                .unwrap_or_default();
            if seen.lock().unwrap().insert(at.clone()) {
                eprintln!(
                    "panic (caught by a reader's guard unless a crash follows) at {at}: {info}"
                );
            }
        }));
    });
}

/// A file of this process's own under the system's temporary directory.
pub fn scratch(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("streamboost-fuzz-{}-{name}", std::process::id()))
}

/// A small booster for `data`: Ada.OLMR on a multi-label stream, Adaboost.OLM otherwise.
fn small_config(multi_label: bool) -> ModelConfig {
    let algorithm = if multi_label { "ada-olmr" } else { "ada-olm" };
    ModelConfig::from_json(serde_json::json!({"algorithm": algorithm, "n_learners": 3}))
        .expect("a valid config")
}

/// Replays `tables` test-then-train, labelled by `label`, ignoring the outcome: only
/// panics matter here.
pub fn replay(tables: &[Table], label: &str, encodings: &Encodings) {
    let multi_label = match encode_tables(tables, label, encodings) {
        Ok(data) => data.spec().is_multi_label(),
        Err(_) => return,
    };
    let Ok(session) = Session::fresh(
        tables,
        small_config(multi_label),
        1,
        label,
        encodings.clone(),
        None,
    ) else {
        return;
    };
    let Session {
        mut model,
        stream,
        rows,
    } = session;
    if multi_label {
        if let Ok(encoded) = rows.encoded() {
            replay_rows(&mut model, &encoded.data);
        }
    } else {
        // The replay's own path: a batch encoded at a time.
        let chunks =
            |each: &mut dyn FnMut(Dataset) -> streamboost::Result<()>| rows.for_each_chunk(each);
        let _ = Prequential::default().run_chunks(
            &mut model,
            &stream.spec,
            rows.n_rows(),
            chunks,
            |_, _| Ok(()),
        );
    }
}

fn replay_rows(model: &mut streamboost::model::Model, data: &Dataset) {
    let mut out = vec![0.0; data.spec().n_classes()];
    for i in 0..data.len() {
        let x = data.row(i);
        if data.spec().is_multi_label() {
            model.learn_predict_scores(x, data.label_set(i), 1.0, &mut out);
        } else {
            model.predict_proba(x, &mut out);
            if let Some(y) = data.label(i) {
                model.learn(x, y, 1.0);
            }
        }
    }
}

const NAMES: [&str; 6] = ["label", "a", "b", "c", "label_x", "label_y"];
const WORDS: [&str; 6] = ["x", "y", "zz", "", "1.5", "nan"];

/// A column's type.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Kind {
    /// Float64.
    Float,
    /// Int64.
    Int,
    /// Utf8.
    Text,
    /// Dictionary(Int32, Utf8).
    Dictionary,
    /// Boolean.
    Boolean,
    /// List(Utf8): a label set.
    TextList,
}

/// One generated cell; each column reads it in its own type.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Cell {
    /// Null.
    Null,
    /// Any float, NaN and infinities included.
    Number(f64),
    /// A small integer.
    Small(u8),
    /// One of a few words.
    Word(u8),
}

/// A change of schema between batches.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Drift {
    /// A column removed.
    Drop(u8),
    /// A column's type changed.
    Retype(u8, Kind),
    /// A column renamed.
    Rename(u8, u8),
    /// A column added.
    Add(u8, Kind),
}

/// A batch: a drift of the previous schema, maybe, and its cells, row-major.
#[derive(Arbitrary, Debug)]
pub struct BatchCase {
    drift: Option<Drift>,
    rows: u8,
    cells: Vec<Cell>,
}

/// A schema, a first batch that the model is built from, and the batches that follow.
#[derive(Arbitrary, Debug)]
pub struct Case {
    columns: Vec<(u8, Kind)>,
    batches: Vec<BatchCase>,
}

fn cell_text(c: Cell) -> Option<String> {
    match c {
        Cell::Null => None,
        Cell::Number(v) => Some(v.to_string()),
        Cell::Small(v) => Some(v.to_string()),
        Cell::Word(w) => Some(WORDS[w as usize % WORDS.len()].to_string()),
    }
}

fn column(kind: Kind, cells: &[Cell]) -> ArrayRef {
    match kind {
        Kind::Float => Arc::new(Float64Array::from_iter(cells.iter().map(|c| match *c {
            Cell::Null => None,
            Cell::Number(v) => Some(v),
            Cell::Small(v) => Some(f64::from(v)),
            Cell::Word(w) => Some(f64::from(w) / 7.0),
        }))),
        Kind::Int => Arc::new(Int64Array::from_iter(cells.iter().map(|c| match *c {
            Cell::Null => None,
            Cell::Number(v) => Some(v as i64),
            Cell::Small(v) => Some(i64::from(v % 5)),
            Cell::Word(w) => Some(-i64::from(w)),
        }))),
        Kind::Text => Arc::new(StringArray::from_iter(cells.iter().map(|c| cell_text(*c)))),
        Kind::Dictionary => {
            let texts: Vec<Option<String>> = cells.iter().map(|c| cell_text(*c)).collect();
            Arc::new(DictionaryArray::<Int32Type>::from_iter(
                texts.iter().map(Option::as_deref),
            ))
        }
        Kind::Boolean => Arc::new(BooleanArray::from_iter(cells.iter().map(|c| match *c {
            Cell::Null => None,
            Cell::Number(v) => Some(v > 0.0),
            Cell::Small(v) | Cell::Word(v) => Some(v % 2 == 0),
        }))),
        Kind::TextList => {
            let mut list = ListBuilder::new(StringBuilder::new());
            for c in cells {
                match *c {
                    Cell::Null => list.append_null(),
                    Cell::Number(_) => list.append(true),
                    Cell::Small(n) | Cell::Word(n) => {
                        for i in 0..n % 3 {
                            list.values().append_value(WORDS[(n + i) as usize % 3]);
                        }
                        list.append(true);
                    }
                }
            }
            Arc::new(list.finish())
        }
    }
}

fn apply(columns: &mut Vec<(u8, Kind)>, drift: Drift) {
    let at = |i: u8, n: usize| i as usize % n.max(1);
    match drift {
        Drift::Drop(i) if !columns.is_empty() => {
            columns.remove(at(i, columns.len()));
        }
        Drift::Retype(i, kind) if !columns.is_empty() => {
            let i = at(i, columns.len());
            columns[i].1 = kind;
        }
        Drift::Rename(i, name) if !columns.is_empty() => {
            let i = at(i, columns.len());
            columns[i].0 = name;
        }
        Drift::Add(name, kind) => columns.push((name, kind)),
        _ => {}
    }
}

fn batch(columns: &[(u8, Kind)], case: &BatchCase) -> Option<RecordBatch> {
    let rows = (case.rows % 48) as usize;
    let width = columns.len();
    if width == 0 {
        return None;
    }
    let cell = |r: usize, c: usize| {
        case.cells
            .get((r * width + c) % case.cells.len().max(1))
            .copied()
            .unwrap_or(Cell::Null)
    };
    let mut fields = Vec::new();
    let mut arrays = Vec::new();
    for (c, &(name, kind)) in columns.iter().enumerate() {
        let cells: Vec<Cell> = (0..rows).map(|r| cell(r, c)).collect();
        let array = column(kind, &cells);
        fields.push(Field::new(
            NAMES[name as usize % NAMES.len()],
            array.data_type().clone(),
            true,
        ));
        arrays.push(array);
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays).ok()
}

impl Case {
    /// Builds a model from the first batch and runs every batch through its operator.
    pub fn run(&self) {
        let mut columns: Vec<(u8, Kind)> = self.columns.iter().take(6).copied().collect();
        let Some((first, rest)) = self.batches.split_first() else {
            return;
        };
        let Some(b0) = batch(&columns, first) else {
            return;
        };
        let schema = b0.schema();
        let table = Table::new("fuzz", schema.clone(), vec![b0.clone()]);
        let encodings = Encodings::default();
        let Ok(data) = encode_tables(std::slice::from_ref(&table), "label", &encodings) else {
            return;
        };
        let config = small_config(data.spec().is_multi_label());
        let Ok(model) = config.build(data.spec(), 1) else {
            return;
        };
        let Ok(mut op) =
            Cursor::new(model, data.spec(), schema, "label", &encodings, "fuzz")
        else {
            return;
        };
        let mut batches = vec![b0];
        for case in rest.iter().take(4) {
            if let Some(drift) = case.drift {
                apply(&mut columns, drift);
            }
            batches.extend(batch(&columns, case));
        }
        for b in &batches {
            if let Ok(out) = op.process(b) {
                assert_eq!(out.num_rows(), b.num_rows(), "one output row per input row");
                assert_eq!(out.schema(), op.schema());
            }
        }
    }
}
