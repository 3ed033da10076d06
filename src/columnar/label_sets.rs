//! Label sets of multi-label streams, read from record batches.
//!
//! A multi-label table holds each row's relevant set in one of two layouts:
//! - **flag columns**: in place of a label column `L`, one 0/1 column per label named
//!   `L_<label name>` (MULAN's layout as converted to CSV: `label_amazed-suprised`, …). The
//!   labels are the flag columns, in column order.
//! - **a list column**: the label column `L` itself is a list of label names (Arrow
//!   `List`/`LargeList`/`FixedSizeList` of strings, dictionaries or numbers, as Parquet files
//!   and SQL tables hold them). The labels are every name met, sorted as class names are
//!   (so label ids do not depend on row order); an empty list is the empty set.
//!
//! A null (a null flag, or a null list) makes the row's set unknown: the row is scored, not
//! learnt. A set naming a label outside the model's class set is likewise scored only, and
//! reported as an unknown label, as a multiclass row with an unknown class is. Any other
//! value (a flag other than 0/1, a null name inside a list) is an error naming the file,
//! row and column.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use arrow::array::{Array, AsArray, Float64Array};
use arrow::compute::cast;
use arrow::datatypes::{DataType, Field, Float64Type, Schema};
use arrow::record_batch::RecordBatch;

use super::input::nominal_type;
use crate::core::StreamSpec;
use crate::{Error, Result};

/// The name of the column holding label `name` of label prefix `label`.
pub fn flag_column(label: &str, name: &str) -> String {
    format!("{label}_{name}")
}

/// How a multi-label table holds its label sets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LabelSetLayout {
    /// `<label>_<name>` 0/1 columns; the label names, in column order.
    Flags(Vec<String>),
    /// Column `<label>` holds a list of label names per row.
    List,
}

/// The multi-label layout of a table with label column (or prefix) `label`, or `None` for a
/// multiclass table: a list-typed `label` column, else `label_*` flag columns when there is
/// no `label` column at all.
pub fn label_set_layout(schema: &Schema, label: &str) -> Option<LabelSetLayout> {
    if let Ok(field) = schema.field_with_name(label) {
        return is_name_list(field.data_type()).then_some(LabelSetLayout::List);
    }
    let prefix = format!("{label}_");
    let names: Vec<String> = schema
        .fields()
        .iter()
        .filter_map(|f| f.name().strip_prefix(&prefix).map(str::to_string))
        .filter(|n| !n.is_empty())
        .collect();
    (!names.is_empty()).then_some(LabelSetLayout::Flags(names))
}

/// Whether a column of this type holds lists of label names.
fn is_name_list(t: &DataType) -> bool {
    match t {
        DataType::List(item) | DataType::LargeList(item) | DataType::FixedSizeList(item, _) => {
            nominal_type(item.data_type()).is_some()
        }
        _ => false,
    }
}

/// A list column as `List<Utf8>`, so every list type reads the same way.
fn name_lists(column: &dyn Array) -> std::result::Result<arrow::array::ListArray, String> {
    let target = DataType::List(Arc::new(Field::new_list_field(DataType::Utf8, true)));
    let lists = cast(column, &target).map_err(|e| e.to_string())?;
    Ok(lists.as_list::<i32>().clone())
}

/// The names listed in row `r` of `lists` (`None` for a null name), read in place: no
/// array is sliced per row.
fn listed(lists: &arrow::array::ListArray, r: usize) -> impl Iterator<Item = Option<&str>> + '_ {
    let names = lists.values().as_string::<i32>();
    let offsets = lists.value_offsets();
    (offsets[r] as usize..offsets[r + 1] as usize)
        .map(move |i| names.is_valid(i).then(|| names.value(i)))
}

/// The distinct label names in the list column `column` of `batch`, added to `names`.
/// A null name is an error naming `source`, the row (counted from `first_row`) and column.
pub(super) fn collect_list_labels(
    column: &dyn Array, name: &str, source: &Path, first_row: u64, names: &mut Vec<String>,
) -> Result<()> {
    let lists = name_lists(column).map_err(|e| Error::UnsupportedColumnType {
        file: source.to_path_buf(),
        column: name.to_string(),
        data_type: format!("{} ({e})", column.data_type()),
    })?;
    for r in 0..lists.len() {
        if lists.is_null(r) {
            continue;
        }
        for item in listed(&lists, r) {
            let item = item.ok_or_else(|| null_name(source, first_row + r as u64, name))?;
            if !names.iter().any(|n| n == item) {
                names.push(item.to_string());
            }
        }
    }
    Ok(())
}

fn null_name(source: &Path, row: u64, column: &str) -> Error {
    Error::MalformedRow {
        file: source.to_path_buf(),
        // The header (if any) is line 1.
        line: Some(row + 2),
        column: Some(column.to_string()),
        message: "a label set holds a null label name".into(),
    }
}

/// Reads the label sets of a multi-label spec from batches of one schema.
#[derive(Debug, Clone)]
pub struct LabelSetReader {
    source: SetSource,
}

#[derive(Debug, Clone)]
enum SetSource {
    /// Input column of each label, in label order, and its name.
    Flags {
        columns: Vec<usize>,
        names: Vec<String>,
    },
    /// Input column of the lists, its name, and the label id of each name.
    List {
        column: usize,
        name: String,
        ids: HashMap<String, usize>,
    },
}

impl LabelSetReader {
    /// Finds the label sets of `spec` in `schema`, in either layout; `None` if the input has
    /// neither a list column `label` nor any of the flag columns (a stream to score only).
    /// Some but not all of the flag columns is an error, as is a `label` column that is not
    /// a list.
    pub fn new(
        spec: &StreamSpec, schema: &Schema, label: &str, source: &Path,
    ) -> Result<Option<Self>> {
        if let Ok(column) = schema.index_of(label) {
            let field = schema.field(column);
            if !is_name_list(field.data_type()) {
                return Err(Error::UnsupportedColumnType {
                    file: source.to_path_buf(),
                    column: label.to_string(),
                    data_type: format!(
                        "{} (a multi-label model needs a list of label names here, or \
                         `{label}_<name>` 0/1 columns instead)",
                        field.data_type()
                    ),
                });
            }
            let ids = spec.classes.ids();
            let name = label.to_string();
            return Ok(Some(LabelSetReader {
                source: SetSource::List { column, name, ids },
            }));
        }
        let names: Vec<String> = spec
            .classes
            .names()
            .iter()
            .map(|n| flag_column(label, n))
            .collect();
        let found: Vec<Option<usize>> = names.iter().map(|n| schema.index_of(n).ok()).collect();
        if found.iter().all(Option::is_none) {
            return Ok(None);
        }
        let columns = found
            .iter()
            .zip(&names)
            .map(|(i, n)| i.ok_or_else(|| Error::missing_column(source, n, schema)))
            .collect::<Result<Vec<_>>>()?;
        Ok(Some(LabelSetReader {
            source: SetSource::Flags { columns, names },
        }))
    }

    /// Reads the sets of `batch` for a spec of `k` labels: `masks` gets `k` flags per row,
    /// `known` one flag per row (false: score only). Returns the rows (0-based in the batch)
    /// whose set names a label outside the class set; they are not known. Errors name
    /// `source` and count rows from `first_row` (0-based data rows).
    pub fn read(
        &self, batch: &RecordBatch, source: &Path, first_row: u64, k: usize, masks: &mut Vec<bool>,
        known: &mut Vec<bool>,
    ) -> Result<Vec<usize>> {
        let n = batch.num_rows();
        masks.clear();
        masks.resize(n * k, false);
        known.clear();
        known.resize(n, true);
        match &self.source {
            SetSource::Flags { columns, names } => {
                for (l, (&c, name)) in columns.iter().zip(names).enumerate() {
                    let flags = flag_values(batch.column(c), name, source)?;
                    for r in 0..n {
                        if !flags.is_valid(r) {
                            known[r] = false;
                            continue;
                        }
                        match flags.value(r) {
                            0.0 => {}
                            1.0 => masks[r * k + l] = true,
                            v => {
                                return Err(Error::MalformedRow {
                                    file: source.to_path_buf(),
                                    // The header is line 1.
                                    line: Some(first_row + r as u64 + 2),
                                    column: Some(name.clone()),
                                    message: format!("a label flag must be 0 or 1, found {v}"),
                                });
                            }
                        }
                    }
                }
                Ok(Vec::new())
            }
            SetSource::List { column, name, ids } => {
                let column = batch.column(*column);
                let lists = name_lists(column).map_err(|e| Error::UnsupportedColumnType {
                    file: source.to_path_buf(),
                    column: name.clone(),
                    data_type: format!("{} ({e})", column.data_type()),
                })?;
                let mut unknown = Vec::new();
                for r in 0..n {
                    if lists.is_null(r) {
                        known[r] = false;
                        continue;
                    }
                    for item in listed(&lists, r) {
                        let item =
                            item.ok_or_else(|| null_name(source, first_row + r as u64, name))?;
                        match ids.get(item) {
                            Some(&l) => masks[r * k + l] = true,
                            None => known[r] = false,
                        }
                    }
                    if !known[r] {
                        unknown.push(r);
                    }
                }
                Ok(unknown)
            }
        }
    }
}

/// The values of a 0/1 flag column as numbers (text is parsed; blank text is null).
fn flag_values(column: &dyn Array, name: &str, source: &Path) -> Result<Float64Array> {
    let bad_type = |e: &dyn std::fmt::Display| Error::UnsupportedColumnType {
        file: source.to_path_buf(),
        column: name.to_string(),
        data_type: format!("{} ({e})", column.data_type()),
    };
    Ok(match column.data_type() {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => {
            let text = cast(column, &DataType::Utf8).map_err(|e| bad_type(&e))?;
            text.as_string::<i32>()
                .iter()
                .map(|v| {
                    v.map(str::trim)
                        .filter(|v| !v.is_empty())
                        .map(|v| v.parse::<f64>().unwrap_or(f64::NAN))
                })
                .collect()
        }
        _ => cast(column, &DataType::Float64)
            .map_err(|e| bad_type(&e))?
            .as_primitive::<Float64Type>()
            .clone(),
    })
}
