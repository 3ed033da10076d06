//! Label sets of multi-label streams, read from record batches.
//!
//! A multi-label table has, in place of a label column `L`, one 0/1 column per label named
//! `L_<label name>` (MULAN's layout as converted to CSV: `label_amazed-suprised`, …). A row's
//! relevant set is the labels whose column holds 1; a null in any of its label columns makes
//! the set unknown (the row is scored, not learnt); any other value is an error naming the
//! file, row and column.

use std::path::Path;

use arrow::array::{Array, AsArray};
use arrow::compute::cast;
use arrow::datatypes::{DataType, Float64Type, Schema};
use arrow::record_batch::RecordBatch;

use crate::core::StreamSpec;
use crate::{Error, Result};

/// The name of the column holding label `name` of label prefix `label`.
pub fn flag_column(label: &str, name: &str) -> String {
    format!("{label}_{name}")
}

/// The label names of a table whose label columns are `label_*`, in column order, or
/// `None` when it has no such column (or has a column named `label` itself).
pub fn flag_labels(schema: &Schema, label: &str) -> Option<Vec<String>> {
    if schema.index_of(label).is_ok() {
        return None;
    }
    let prefix = format!("{label}_");
    let names: Vec<String> = schema
        .fields()
        .iter()
        .filter_map(|f| f.name().strip_prefix(&prefix).map(str::to_string))
        .filter(|n| !n.is_empty())
        .collect();
    (!names.is_empty()).then_some(names)
}

/// Reads the label sets of a multi-label spec from batches of one schema.
#[derive(Debug, Clone)]
pub struct LabelSetReader {
    /// Input column of each label, in label order.
    columns: Vec<usize>,
    names: Vec<String>,
}

impl LabelSetReader {
    /// Finds the column of every label of `spec` in `schema`; `None` if the input has none
    /// of them (a stream to score only). Some but not all of them is an error.
    pub fn new(
        spec: &StreamSpec,
        schema: &Schema,
        label: &str,
        source: &Path,
    ) -> Result<Option<Self>> {
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
            .map(|(i, n)| {
                i.ok_or_else(|| Error::MissingColumn {
                    file: source.to_path_buf(),
                    column: n.clone(),
                    available: schema.fields().iter().map(|f| f.name().clone()).collect(),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Some(LabelSetReader { columns, names }))
    }

    /// The input columns of the labels (features must not use them).
    pub fn columns(&self) -> &[usize] {
        &self.columns
    }

    /// Reads the sets of `batch`: `masks` gets `k` flags per row, `known` one flag per row.
    /// Errors name `source` and count rows from `first_row` (1-based data rows).
    pub fn read(
        &self,
        batch: &RecordBatch,
        source: &Path,
        first_row: u64,
        masks: &mut Vec<bool>,
        known: &mut Vec<bool>,
    ) -> Result<()> {
        let (n, k) = (batch.num_rows(), self.columns.len());
        masks.clear();
        masks.resize(n * k, false);
        known.clear();
        known.resize(n, true);
        for (l, (&c, name)) in self.columns.iter().zip(&self.names).enumerate() {
            let column = batch.column(c);
            let bad_type = |e: &dyn std::fmt::Display| Error::UnsupportedColumnType {
                file: source.to_path_buf(),
                column: name.clone(),
                data_type: format!("{} ({e})", column.data_type()),
            };
            let flags = match column.data_type() {
                DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => {
                    let text = cast(column, &DataType::Utf8).map_err(|e| bad_type(&e))?;
                    let text = text.as_string::<i32>();
                    let parsed: arrow::array::Float64Array = (0..n)
                        .map(|r| {
                            (text.is_valid(r) && !text.value(r).trim().is_empty())
                                .then(|| text.value(r).trim().parse::<f64>().unwrap_or(f64::NAN))
                        })
                        .collect();
                    parsed
                }
                _ => cast(column, &DataType::Float64)
                    .map_err(|e| bad_type(&e))?
                    .as_primitive::<Float64Type>()
                    .clone(),
            };
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
        Ok(())
    }
}
