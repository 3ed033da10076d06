//! Record batches to dense rows for a fixed feature schema, batch by batch.
//!
//! A [`RowEncoder`] is made once for a [`StreamSpec`] and an input schema: every feature is
//! found by name, its column's type checked against the feature's kind, and nominal features
//! get a category dictionary seeded with the spec's categories. Each batch is then encoded
//! into a caller's buffer (row-major, `NaN` = missing); the only allocations are the
//! per-batch casts and the names of categories never seen before.
//!
//! Defined behaviour of cell values: a null, an empty string in a nominal column, `NaN` or
//! an infinity is a missing value (the learners' §0 convention); a category not in the
//! dictionary gets the next code (trees treat it as unseen); an ordinal value outside its
//! levels is an error naming the row and column.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use arrow::array::{Array, AsArray};
use arrow::compute::cast;
use arrow::datatypes::{DataType, Float64Type, Schema};
use arrow::record_batch::RecordBatch;

use super::input::nominal_type;
use crate::core::Encodings;
use crate::core::{FeatureKind, MAX_CATEGORY_CODE, StreamSpec, vec_bytes};
use crate::{Error, Result};

/// How one feature's column becomes numbers.
#[derive(Debug, Clone)]
enum Coder {
    Numeric,
    Nominal {
        codes: HashMap<String, u32>,
        names: Vec<String>,
    },
    Ordinal {
        levels: HashMap<String, u32>,
        listed: String,
    },
}

/// Encodes record batches of one schema into rows for one [`StreamSpec`].
#[derive(Debug, Clone)]
pub struct RowEncoder {
    /// Input column index per feature.
    columns: Vec<usize>,
    coders: Vec<Coder>,
    names: Vec<String>,
}

impl RowEncoder {
    /// Bytes its names and category dictionaries hold on the heap (estimated: a hash map's
    /// entries at its capacity, one control byte each).
    pub fn heap_bytes(&self) -> usize {
        let coders = self.coders.iter().map(|c| match c {
            Coder::Numeric => 0,
            Coder::Nominal { codes, names } => map_bytes(codes) + strings_bytes(names),
            Coder::Ordinal { levels, listed } => map_bytes(levels) + listed.capacity(),
        });
        vec_bytes(&self.columns)
            + vec_bytes(&self.coders)
            + coders.sum::<usize>()
            + strings_bytes(&self.names)
    }

    /// Checks that `schema` has every feature of `spec` with a compatible type. `encodings`
    /// declares ordinal columns (numeric features read from their level names).
    pub fn new(
        spec: &StreamSpec, schema: &Schema, encodings: &Encodings, source: impl Into<PathBuf>,
    ) -> Result<Self> {
        let source = source.into();
        // A feature is found by name: a repeated name would read its first column only.
        Error::check_unique_columns(source.clone(), schema)?;
        let mut columns = Vec::with_capacity(spec.n_features());
        let mut coders = Vec::with_capacity(spec.n_features());
        for feature in &spec.features {
            let index = schema
                .index_of(&feature.name)
                .map_err(|_| Error::missing_column(source.clone(), &feature.name, schema))?;
            let field = schema.field(index);
            let coder = match (&feature.kind, encodings.ordinal(&feature.name)) {
                (FeatureKind::Numeric, Some(o)) => Coder::Ordinal {
                    levels: o
                        .levels
                        .iter()
                        .enumerate()
                        .map(|(i, l)| (l.clone(), i as u32))
                        .collect(),
                    listed: o.levels.join(","),
                },
                (FeatureKind::Numeric, None) if nominal_type(field.data_type()) == Some(false) => {
                    Coder::Numeric
                }
                (FeatureKind::Nominal { categories }, _)
                    if nominal_type(field.data_type()).is_some() =>
                {
                    Coder::Nominal {
                        codes: categories
                            .iter()
                            .enumerate()
                            .map(|(i, c)| (c.clone(), i as u32))
                            .collect(),
                        names: categories.clone(),
                    }
                }
                (kind, _) => {
                    return Err(Error::SchemaMismatch {
                        file: source.clone(),
                        first: PathBuf::from("the model's feature schema"),
                        detail: format!(
                            "column `{}` has type {}, but the model reads it as a {} feature",
                            feature.name,
                            field.data_type(),
                            match kind {
                                FeatureKind::Numeric => "numeric",
                                FeatureKind::Nominal { .. } => "nominal",
                            }
                        ),
                    });
                }
            };
            columns.push(index);
            coders.push(coder);
        }
        Ok(RowEncoder {
            columns,
            coders,
            names: spec.features.iter().map(|f| f.name.clone()).collect(),
        })
    }

    /// Number of features per row.
    pub fn width(&self) -> usize {
        self.coders.len()
    }

    /// The categories of feature `j` known so far (spec's first, then new ones in order of
    /// appearance); empty for a numeric feature.
    pub fn categories(&self, j: usize) -> &[String] {
        match &self.coders[j] {
            Coder::Nominal { names, .. } => names,
            _ => &[],
        }
    }

    /// Encodes `batch` into `out` (resized to `rows × width`, row-major). Errors name
    /// `source` and count rows from `first_row`, the position of the batch's first row.
    pub fn encode(
        &mut self, batch: &RecordBatch, source: &Path, first_row: u64, out: &mut Vec<f64>,
    ) -> Result<()> {
        let (n, d) = (batch.num_rows(), self.width());
        out.clear();
        out.resize(n * d, f64::NAN);
        for (j, coder) in self.coders.iter_mut().enumerate() {
            let column = batch.column(self.columns[j]);
            match coder {
                Coder::Numeric => {
                    let floats = cast(column, &DataType::Float64).map_err(|e| {
                        Error::UnsupportedColumnType {
                            file: source.to_path_buf(),
                            column: self.names[j].clone(),
                            data_type: format!("{} ({e})", column.data_type()),
                        }
                    })?;
                    let floats = floats.as_primitive::<Float64Type>();
                    for r in 0..n {
                        if floats.is_valid(r) {
                            out[r * d + j] = floats.value(r);
                        }
                    }
                }
                Coder::Nominal { codes, names } => {
                    for_each_text(column, source, &self.names[j], |r, v| {
                        let code = match codes.get(v) {
                            Some(&c) => Some(c),
                            // A new category gets the next code, up to the codes a tree can
                            // hold; past that it is missing (§0 of WEAK_LEARNERS.md).
                            None if names.len() < MAX_CATEGORY_CODE => {
                                let c = names.len() as u32;
                                codes.insert(v.to_string(), c);
                                names.push(v.to_string());
                                Some(c)
                            }
                            None => None,
                        };
                        if let Some(c) = code {
                            out[r * d + j] = f64::from(c);
                        }
                        Ok(())
                    })?;
                }
                Coder::Ordinal { levels, listed } => {
                    let name = &self.names[j];
                    for_each_text(column, source, name, |r, v| {
                        let rank = levels.get(v).ok_or_else(|| Error::UnlistedLevel {
                            file: source.to_path_buf(),
                            row: first_row + r as u64 + 1,
                            column: name.clone(),
                            value: v.to_string(),
                            levels: listed.clone(),
                        })?;
                        out[r * d + j] = f64::from(*rank);
                        Ok(())
                    })?;
                }
            }
        }
        Ok(())
    }
}

/// Calls `f(row, value)` for every present cell of `column` read as text: not null and not
/// empty (an empty string is a missing value).
fn for_each_text(
    column: &dyn Array, source: &Path, name: &str, mut f: impl FnMut(usize, &str) -> Result<()>,
) -> Result<()> {
    let text = utf8(column, source, name)?;
    let text = text.as_string::<i32>();
    for r in 0..text.len() {
        if text.is_valid(r) && !text.value(r).is_empty() {
            f(r, text.value(r))?;
        }
    }
    Ok(())
}

/// The column as UTF-8 text (one cast per batch; a no-op clone for a UTF-8 column).
pub(crate) fn utf8(
    column: &dyn Array, source: &Path, name: &str,
) -> Result<arrow::array::ArrayRef> {
    cast(column, &DataType::Utf8).map_err(|e| Error::UnsupportedColumnType {
        file: source.to_path_buf(),
        column: name.to_string(),
        data_type: format!("{} ({e})", column.data_type()),
    })
}

/// Bytes a list of strings holds: the list's buffer and each string's.
pub(crate) fn strings_bytes(names: &Vec<String>) -> usize {
    vec_bytes(names) + names.iter().map(String::capacity).sum::<usize>()
}

/// Bytes a map from strings holds (estimated: its entries at its capacity, one control byte
/// each, and each key's string).
pub(crate) fn map_bytes<V>(map: &HashMap<String, V>) -> usize {
    let entries = map.capacity() * (std::mem::size_of::<(String, V)>() + 1);
    entries + map.keys().map(String::capacity).sum::<usize>()
}
