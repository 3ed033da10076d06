//! Locating the shared data sets and spec oracles; the operator the tests build.
//!
//! Data sets: `$STREAMBOOST_DATASETS`, default `../shared/datasets` beside the checkout.
//! Oracles: `$STREAMBOOST_ORACLES`, default `../shared/spec/oracles`. Where they are absent
//! (a fresh clone), the tests that need them print why and return.

use std::path::PathBuf;

fn shared(var: &str, default: &str) -> PathBuf {
    std::env::var_os(var).map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join(default)
    })
}

/// `relative` under the shared folder named by `var`, or `None` (with a note) if absent.
fn find(var: &str, default: &str, relative: &str) -> Option<PathBuf> {
    let path = shared(var, default).join(relative);
    if path.exists() {
        Some(path)
    } else {
        eprintln!("skipped: {} not found (set {var})", path.display());
        None
    }
}

/// The path of a shared data set file, or `None` (with a note) if it is not there.
#[cfg(feature = "columnar")]
pub fn dataset(relative: &str) -> Option<PathBuf> {
    find("STREAMBOOST_DATASETS", "shared/datasets", relative)
}

/// The path of a spec oracle file, or `None` (with a note) if it is not there.
pub fn oracle(name: &str) -> Option<PathBuf> {
    find("STREAMBOOST_ORACLES", "shared/spec/oracles", name)
}

/// The rows of a CSV oracle after its header, split into fields.
pub fn oracle_csv(name: &str) -> Option<Vec<Vec<String>>> {
    let text = std::fs::read_to_string(oracle(name)?).unwrap();
    let rows = text.lines().skip(1);
    Some(
        rows.map(|l| l.split(',').map(str::to_string).collect())
            .collect(),
    )
}

/// The rows of a CSV oracle after its header, split into fields, which must number `count`.
pub fn oracle_rows(name: &str, count: usize) -> Option<Vec<Vec<String>>> {
    let rows = oracle_csv(name)?;
    assert_eq!(rows.len(), count, "rows of {name}");
    Some(rows)
}

/// Parses a JSON oracle.
pub fn oracle_json(name: &str) -> Option<serde_json::Value> {
    let path = oracle(name)?;
    Some(serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap())
}

/// An operator over batches of `schema` with `model`, for `data`'s stream, learning from its
/// column `label`, with fresh encodings; `source` names the input in errors.
#[cfg(feature = "columnar")]
pub fn operator<M: streamboost::Classifier + streamboost::Ranker>(
    model: M, data: &streamboost::core::Dataset, schema: arrow::datatypes::SchemaRef,
    source: impl Into<PathBuf>,
) -> streamboost::runtime::Cursor<M> {
    let encodings = streamboost::columnar::Encodings::default();
    streamboost::runtime::Cursor::new(model, data.spec(), schema, "label", &encodings, source)
        .unwrap()
}

/// The classes and class probabilities an operator's output `batch` predicts.
#[cfg(feature = "columnar")]
pub fn prediction_columns(
    batch: &arrow::record_batch::RecordBatch,
) -> (
    &arrow::array::StringArray,
    &arrow::array::FixedSizeListArray,
) {
    use arrow::array::AsArray;
    let column = |name| batch.column_by_name(name).unwrap();
    (
        column("predicted_label").as_string::<i32>(),
        column("predicted_label_probs").as_fixed_size_list(),
    )
}

/// The values of string column `column` across `batches`, in order (a null is an error).
#[cfg(feature = "columnar")]
pub fn strings(batches: &[arrow::record_batch::RecordBatch], column: &str) -> Vec<String> {
    use arrow::array::AsArray;
    let values = batches
        .iter()
        .flat_map(|b| b.column_by_name(column).unwrap().as_string::<i32>());
    values.map(|v| v.unwrap().to_string()).collect()
}

/// How many rows of `batches` hold `true` in boolean column `column`.
#[cfg(feature = "columnar")]
pub fn count_true(batches: &[arrow::record_batch::RecordBatch], column: &str) -> usize {
    use arrow::array::AsArray;
    let values = batches
        .iter()
        .flat_map(|b| b.column_by_name(column).unwrap().as_boolean());
    values.filter(|v| *v == Some(true)).count()
}

/// The names of a schema's fields, in order.
#[cfg(feature = "columnar")]
pub fn field_names(schema: &arrow::datatypes::Schema) -> Vec<&str> {
    schema.fields().iter().map(|f| f.name().as_str()).collect()
}

/// `batch` with `column` under `field`: in place of the column of that name, or appended.
#[cfg(feature = "columnar")]
pub fn with_column(
    batch: &arrow::record_batch::RecordBatch, field: arrow::datatypes::Field,
    column: arrow::array::ArrayRef,
) -> arrow::record_batch::RecordBatch {
    use arrow::datatypes::{Field, Schema};
    let schema = batch.schema();
    let mut fields: Vec<Field> = schema.fields().iter().map(|f| f.as_ref().clone()).collect();
    let mut columns = batch.columns().to_vec();
    match schema.index_of(field.name()) {
        Ok(i) => (fields[i], columns[i]) = (field, column),
        Err(_) => {
            fields.push(field);
            columns.push(column);
        }
    }
    arrow::record_batch::RecordBatch::try_new(std::sync::Arc::new(Schema::new(fields)), columns)
        .unwrap()
}

/// Asserts that `change` leaves `model` as it was, to the last bit of its serialized state.
pub fn assert_unchanged<M: serde::Serialize>(
    model: &mut M, what: &str, change: impl FnOnce(&mut M),
) {
    let before = serde_json::to_string(model).unwrap();
    change(model);
    assert_eq!(
        before,
        serde_json::to_string(model).unwrap(),
        "{what} changed the model"
    );
}

/// A fresh model of `config` (built with `seed`) over batches of `schema` for stream `spec`,
/// learning column `label`, with fresh encodings: a keyed operator's factory's new key.
#[cfg(feature = "columnar")]
pub fn fresh_operator(
    config: &streamboost::model::ModelConfig, seed: u64, spec: &streamboost::core::StreamSpec,
    schema: arrow::datatypes::SchemaRef, source: &str,
) -> streamboost::Result<streamboost::runtime::Cursor<streamboost::model::Model>> {
    use streamboost::Config;
    let encodings = streamboost::columnar::Encodings::default();
    let model = config.build(spec, seed)?;
    streamboost::runtime::Cursor::new(model, spec, schema, "label", &encodings, source)
}
