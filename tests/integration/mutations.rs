//! Short, seeded variants of `fuzz/`'s targets: damaged checkpoints, damaged CSV and Parquet
//! inputs, and generated record batches. Each must end in a result or a typed error; no
//! panic may be raised in streamboost's own code (a dependency's reader may panic on
//! damaged bytes, which the readers' guard turns into [`Error::Format`]).

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Once};

use arrow::array::{
    ArrayRef, DictionaryArray, Float64Array, ListBuilder, StringArray, StringBuilder,
};
use arrow::datatypes::{DataType, Field, Int32Type, Schema};
use arrow::record_batch::RecordBatch;
use proptest::prelude::*;
use streamboost::checkpoint;
use streamboost::columnar::{Encodings, Table, encode_tables, read_csv_bytes, read_table};
use streamboost::learner::{Classifier, Config, Ranker};
use streamboost::model::{Model, ModelConfig};
use streamboost::runtime::Cursor;
use streamboost::runtime::replay::Session;
use streamboost::{Error, Result};

thread_local! {
    static OWN_PANICS: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f`, returning what it returns and where streamboost's own code (paths under `src/`)
/// panicked on this thread meanwhile, caught or not.
fn own_panics<T>(f: impl FnOnce() -> T) -> (T, Vec<String>) {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if let Some(at) = info.location().filter(|l| l.file().starts_with("src/")) {
                OWN_PANICS.with(|p| p.borrow_mut().push(format!("{at}: {info}")));
            }
            previous(info);
        }));
    });
    OWN_PANICS.with(|p| p.borrow_mut().clear());
    let out = f();
    (out, OWN_PANICS.with(|p| p.borrow_mut().drain(..).collect()))
}

fn car() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/car.csv")
}

/// The first rows of the bundled data set, as CSV text.
fn car_head() -> Vec<u8> {
    let text = std::fs::read_to_string(car()).unwrap();
    text.lines()
        .take(80)
        .flat_map(|l| format!("{l}\n").into_bytes())
        .collect()
}

fn small(algorithm: &str) -> ModelConfig {
    ModelConfig::from_json(serde_json::json!({"algorithm": algorithm, "n_learners": 3})).unwrap()
}

/// A model trained on `car_head`, saved: the bytes mutations start from.
fn checkpoint_bytes(dir: &Path) -> Vec<u8> {
    let table = read_csv_bytes("car.csv".as_ref(), &car_head()).unwrap();
    let mut session = Session::fresh(
        &[table],
        small("ada-olm"),
        1,
        "label",
        Encodings::default(),
        None,
    )
    .unwrap();
    replay(&mut session.model, &session.rows.encoded().unwrap().data);
    let path = dir.join("good.parquet");
    checkpoint::save(&path, &mut session.model, &session.stream).unwrap();
    std::fs::read(path).unwrap()
}

fn replay(model: &mut Model, data: &streamboost::core::Dataset) {
    let mut out = vec![0.0; data.spec().n_classes()];
    for i in 0..data.len() {
        if data.spec().is_multi_label() {
            model.learn_predict_scores(data.row(i), data.label_set(i), 1.0, &mut out);
        } else {
            model.predict_proba(data.row(i), &mut out);
            if let Some(y) = data.label(i) {
                model.learn(data.row(i), y, 1.0);
            }
        }
    }
}

/// Reads, encodes and replays a table; the outcome is only whether it panicked.
fn read_and_replay(table: Result<Table>) {
    let Ok(table) = table else { return };
    let tables = [table];
    let Ok(data) = encode_tables(&tables, "label", &Encodings::default()) else {
        return;
    };
    let algorithm = if data.spec().is_multi_label() {
        "ada-olmr"
    } else {
        "ada-olm"
    };
    if let Ok(mut s) = Session::fresh(
        &tables,
        small(algorithm),
        1,
        "label",
        Encodings::default(),
        None,
    ) && let Ok(encoded) = s.rows.encoded()
    {
        replay(&mut s.model, &encoded.data);
    }
}

/// An edit of a byte string: overwrite, insert or delete at a position.
#[derive(Debug, Clone)]
enum Edit {
    Set(prop::sample::Index, u8),
    Insert(prop::sample::Index, Vec<u8>),
    Delete(prop::sample::Index, usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    let token = prop::sample::select(vec![
        b",".to_vec(),
        b"\n".to_vec(),
        b"\"".to_vec(),
        b"NaN".to_vec(),
        b"-inf".to_vec(),
        b"1e308".to_vec(),
        b"oops".to_vec(),
        b"label".to_vec(),
        vec![0xff, 0xfe],
        vec![0],
    ]);
    prop_oneof![
        (any::<prop::sample::Index>(), any::<u8>()).prop_map(|(i, b)| Edit::Set(i, b)),
        (any::<prop::sample::Index>(), token).prop_map(|(i, t)| Edit::Insert(i, t)),
        (any::<prop::sample::Index>(), 1usize..64).prop_map(|(i, n)| Edit::Delete(i, n)),
    ]
}

fn apply(bytes: &mut Vec<u8>, edits: &[Edit]) {
    for e in edits {
        if bytes.is_empty() {
            return;
        }
        match e {
            Edit::Set(i, b) => {
                let i = i.index(bytes.len());
                bytes[i] ^= b.max(&1);
            }
            Edit::Insert(i, t) => {
                let i = i.index(bytes.len());
                bytes.splice(i..i, t.iter().copied());
            }
            Edit::Delete(i, n) => {
                let i = i.index(bytes.len());
                bytes.drain(i..(i + n).min(bytes.len()));
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn a_damaged_checkpoint_loads_or_is_refused(edits in prop::collection::vec(edit(), 1..6)) {
        let dir = tempfile::tempdir().unwrap();
        let mut bytes = checkpoint_bytes(dir.path());
        apply(&mut bytes, &edits);
        let path = dir.path().join("damaged.parquet");
        std::fs::write(&path, &bytes).unwrap();
        let (loaded, panics) = own_panics(|| checkpoint::load(&path));
        prop_assert!(panics.is_empty(), "{panics:?}");
        match loaded {
            Ok((model, stream)) => {
                let mut p = vec![0.0; model.n_classes()];
                model.predict_proba(&vec![0.0; stream.spec.n_features()], &mut p);
            }
            Err(e) => prop_assert!(
                matches!(
                    e,
                    Error::CorruptCheckpoint { .. }
                        | Error::TruncatedCheckpoint { .. }
                        | Error::CheckpointVersion { .. }
                        | Error::Format { .. }
                ),
                "{e}"
            ),
        }
    }

    #[test]
    fn a_damaged_csv_input_replays_or_is_refused(edits in prop::collection::vec(edit(), 1..8)) {
        let mut bytes = car_head();
        apply(&mut bytes, &edits);
        let ((), panics) =
            own_panics(|| read_and_replay(read_csv_bytes("damaged.csv".as_ref(), &bytes)));
        prop_assert!(panics.is_empty(), "{panics:?}");
    }

    #[test]
    fn a_damaged_parquet_input_replays_or_is_refused(edits in prop::collection::vec(edit(), 1..6)) {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("car.parquet");
        let table = read_csv_bytes("car.csv".as_ref(), &car_head()).unwrap();
        streamboost::columnar::write_batch(&good, &table.to_batch().unwrap()).unwrap();
        let mut bytes = std::fs::read(&good).unwrap();
        apply(&mut bytes, &edits);
        let path = dir.path().join("damaged.parquet");
        std::fs::write(&path, &bytes).unwrap();
        let ((), panics) = own_panics(|| read_and_replay(read_table(&path)));
        prop_assert!(panics.is_empty(), "{panics:?}");
    }

    #[test]
    fn generated_batches_get_one_output_row_each_or_an_error(
        first in labelled_batch(),
        later in prop::collection::vec(prop_oneof![labelled_batch(), batch()], 0..3),
    ) {
        let ((), panics) = own_panics(|| run_operator(&first, &later));
        prop_assert!(panics.is_empty(), "{panics:?}");
    }
}

/// A column of one of the types the operator meets, with nulls, NaN and infinities.
fn column() -> impl Strategy<Value = (String, ArrayRef)> {
    let name = prop::sample::select(vec!["a", "b", "c", "label", "label_x", "label_y"]);
    let word = prop::option::of(prop::sample::select(vec!["x", "y", "zz", "", "1.5", "nan"]));
    let number = prop::option::of(prop_oneof![
        any::<f64>(),
        Just(f64::NAN),
        Just(f64::INFINITY),
        -3.0..3.0f64
    ]);
    let array = prop_oneof![
        prop::collection::vec(number, 12).prop_map(|v| Arc::new(Float64Array::from(v)) as ArrayRef),
        prop::collection::vec(word.clone(), 12)
            .prop_map(|v| Arc::new(StringArray::from(v)) as ArrayRef),
        prop::collection::vec(word.clone(), 12).prop_map(|v| {
            Arc::new(v.into_iter().collect::<DictionaryArray<Int32Type>>()) as ArrayRef
        }),
        prop::collection::vec(prop::option::of(prop::collection::vec(word, 0..3)), 12).prop_map(
            |v| {
                let mut list = ListBuilder::new(StringBuilder::new());
                for set in v {
                    match set {
                        None => list.append_null(),
                        Some(words) => {
                            for w in words {
                                list.values().append_option(w);
                            }
                            list.append(true);
                        }
                    }
                }
                Arc::new(list.finish()) as ArrayRef
            }
        ),
    ];
    (name.prop_map(String::from), array)
}

/// A batch of generated columns (of any names: the label may be missing or repeated).
fn batch() -> impl Strategy<Value = RecordBatch> {
    prop::collection::vec(column(), 1..5).prop_map(to_batch)
}

/// Feature columns and a label column: one class per row, or a label set per row.
fn labelled_batch() -> impl Strategy<Value = RecordBatch> {
    let features = prop::collection::vec(column(), 1..4).prop_map(|columns| {
        columns
            .into_iter()
            .enumerate()
            .map(|(i, (_, a))| (format!("f{i}"), a))
            .collect::<Vec<_>>()
    });
    let label = column().prop_filter_map("a label column", |(_, a)| {
        matches!(a.data_type(), DataType::Utf8 | DataType::List(_)).then(|| ("label".into(), a))
    });
    (features, label).prop_map(|(mut columns, label)| {
        columns.push(label);
        to_batch(columns)
    })
}

fn to_batch(columns: Vec<(String, ArrayRef)>) -> RecordBatch {
    {
        let fields: Vec<Field> = columns
            .iter()
            .map(|(n, a)| Field::new(n, a.data_type().clone(), true))
            .collect();
        let arrays = columns.into_iter().map(|(_, a)| a).collect();
        RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays).unwrap()
    }
}

/// A model built from `first`, then `first` and `later` through its operator.
fn run_operator(first: &RecordBatch, later: &[RecordBatch]) {
    let table = Table::new("generated", first.schema(), vec![first.clone()]);
    let encodings = Encodings::default();
    let Ok(data) = encode_tables(&[table], "label", &encodings) else {
        return;
    };
    let algorithm = if data.spec().is_multi_label() {
        "ada-olmr"
    } else {
        "ada-olm"
    };
    let model = small(algorithm).build(data.spec(), 1).unwrap();
    let Ok(mut op) = Cursor::new(
        model,
        data.spec(),
        first.schema(),
        "label",
        &encodings,
        "generated",
    ) else {
        return;
    };
    for b in std::iter::once(first).chain(later) {
        if let Ok(out) = op.process(b) {
            assert_eq!(out.num_rows(), b.num_rows());
        }
    }
}
