//! From Arrow tables to a stream of rows: the feature schema and class set are read off the
//! inputs, then every cell becomes an `f64` (numbers as themselves, categories as codes, nulls
//! as `NaN`).
//!
//! Column kinds: integer, float, decimal and boolean columns are numeric; string and
//! dictionary columns are nominal, their categories coded in order of first appearance
//! across the inputs. The class set is the label column's distinct values, sorted
//! (numerically when every value is a number), so class ids do not depend on row order.

use std::collections::HashMap;
use std::path::PathBuf;

use arrow::array::{Array, AsArray};
use arrow::compute::cast;
use arrow::datatypes::{DataType, Float64Type};

use super::input::{Table, read_table};
use crate::core::{ClassSet, Dataset, Feature, FeatureKind, StreamSpec};
use crate::{Error, Result};

/// Reads `paths` in order and encodes them as one stream labelled by column `label`.
/// Columns named in `force_nominal` are nominal whatever their type (integer-coded
/// categories, for instance).
pub fn load_stream(paths: &[PathBuf], label: &str, force_nominal: &[String]) -> Result<Dataset> {
    let tables = paths
        .iter()
        .map(|p| read_table(p))
        .collect::<Result<Vec<_>>>()?;
    encode_tables(&tables, label, force_nominal)
}

/// Whether a column of this type is nominal (`Some(true)`), numeric (`Some(false)`) or
/// neither (`None`).
fn nominal_type(t: &DataType) -> Option<bool> {
    match t {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => Some(true),
        DataType::Dictionary(_, v) => nominal_type(v).filter(|&n| n),
        DataType::Null | DataType::Boolean => Some(false),
        t if t.is_numeric() => Some(false),
        _ => None,
    }
}

/// Encodes tables that share their columns into one stream.
pub fn encode_tables(tables: &[Table], label: &str, force_nominal: &[String]) -> Result<Dataset> {
    let first = tables
        .first()
        .ok_or_else(|| Error::config("input", "no input file given"))?;
    let columns: Vec<String> = first
        .schema
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    let feature_cols: Vec<usize> = (0..columns.len())
        .filter(|&i| columns[i] != label)
        .collect();
    let mut nominal = Vec::with_capacity(feature_cols.len());
    for &i in &feature_cols {
        let field = first.schema.field(i);
        if force_nominal.contains(field.name()) {
            nominal.push(true);
            continue;
        }
        nominal.push(nominal_type(field.data_type()).ok_or_else(|| {
            Error::UnsupportedColumnType {
                file: first.path.clone(),
                column: field.name().clone(),
                data_type: field.data_type().to_string(),
            }
        })?);
    }
    for table in tables {
        check_columns(
            table,
            first,
            &columns,
            &feature_cols,
            &nominal,
            label,
            force_nominal,
        )?;
    }

    // Categories and classes, in order of first appearance.
    let mut categories: Vec<Dictionary> = vec![Dictionary::default(); feature_cols.len()];
    let mut classes = Dictionary::default();
    for table in tables {
        for batch in &table.batches {
            for (f, &i) in feature_cols.iter().enumerate() {
                if nominal[f] {
                    for v in strings(batch.column(i)).iter().flatten() {
                        categories[f].code(v);
                    }
                }
            }
            let label_index = batch.schema().index_of(label).expect("checked above");
            for v in strings(batch.column(label_index)).iter().flatten() {
                classes.code(v);
            }
        }
    }
    let class_names = sorted_class_names(classes.names.clone());
    if class_names.len() < 2 {
        return Err(Error::TooFewClasses {
            file: first.path.clone(),
            column: label.to_string(),
            found: class_names.len(),
        });
    }
    let class_ids: HashMap<&str, usize> = class_names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    let features: Vec<Feature> = feature_cols
        .iter()
        .zip(&nominal)
        .zip(&categories)
        .map(|((&i, &is_nominal), dict)| Feature {
            name: columns[i].clone(),
            kind: if is_nominal {
                FeatureKind::Nominal {
                    categories: dict.names.clone(),
                }
            } else {
                FeatureKind::Numeric
            },
        })
        .collect();
    let spec = StreamSpec::new(features, ClassSet::new(class_names.clone())?);

    let d = feature_cols.len();
    let n: usize = tables.iter().map(Table::n_rows).sum();
    let mut values = vec![f64::NAN; n * d];
    let mut labels = Vec::with_capacity(n);
    let mut offset = 0;
    for table in tables {
        for batch in &table.batches {
            for (f, &i) in feature_cols.iter().enumerate() {
                let name = &columns[i];
                let column = batch.column(batch.schema().index_of(name).expect("checked"));
                if nominal[f] {
                    for (r, v) in strings(column).iter().enumerate() {
                        if let Some(v) = v {
                            values[(offset + r) * d + f] = categories[f].ids[v] as f64;
                        }
                    }
                } else {
                    let floats = cast(column, &DataType::Float64).map_err(|e| {
                        Error::UnsupportedColumnType {
                            file: table.path.clone(),
                            column: name.clone(),
                            data_type: format!("{} ({e})", column.data_type()),
                        }
                    })?;
                    let floats = floats.as_primitive::<Float64Type>();
                    for r in 0..floats.len() {
                        if floats.is_valid(r) {
                            values[(offset + r) * d + f] = floats.value(r);
                        }
                    }
                }
            }
            let label_index = batch.schema().index_of(label).expect("checked");
            labels.extend(
                strings(batch.column(label_index))
                    .iter()
                    .map(|v| v.as_ref().map(|v| class_ids[v.as_str()])),
            );
            offset += batch.num_rows();
        }
    }
    Dataset::from_parts(spec, values, labels)
}

/// Checks that `table` has the columns of `first`, with compatible kinds.
fn check_columns(
    table: &Table,
    first: &Table,
    columns: &[String],
    feature_cols: &[usize],
    nominal: &[bool],
    label: &str,
    force_nominal: &[String],
) -> Result<()> {
    let schema = &table.schema;
    if schema.index_of(label).is_err() {
        return Err(Error::MissingColumn {
            file: table.path.clone(),
            column: label.to_string(),
            available: schema.fields().iter().map(|f| f.name().clone()).collect(),
        });
    }
    let names: Vec<&String> = schema.fields().iter().map(|f| f.name()).collect();
    if names.len() != columns.len() || names.iter().zip(columns).any(|(a, b)| *a != b) {
        return Err(Error::SchemaMismatch {
            file: table.path.clone(),
            first: first.path.clone(),
            detail: format!(
                "columns [{}] instead of [{}]",
                names
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                columns.join(", ")
            ),
        });
    }
    for (f, &i) in feature_cols.iter().enumerate() {
        let field = schema.field(i);
        let kind = if force_nominal.contains(field.name()) {
            Some(true)
        } else {
            nominal_type(field.data_type())
        };
        // An all-null column reads as Null (or as strings in CSV inference): it fits any kind.
        let all_null = table
            .batches
            .iter()
            .all(|b| b.column(i).null_count() == b.num_rows());
        if kind != Some(nominal[f]) && !all_null {
            return Err(Error::SchemaMismatch {
                file: table.path.clone(),
                first: first.path.clone(),
                detail: format!(
                    "column `{}` is {} here but {} in the first input",
                    field.name(),
                    field.data_type(),
                    first.schema.field(i).data_type()
                ),
            });
        }
    }
    Ok(())
}

/// A column's values as optional strings (nulls are `None`).
fn strings(column: &dyn Array) -> Vec<Option<String>> {
    let utf8 = cast(column, &DataType::Utf8).expect("every supported type casts to Utf8");
    utf8.as_string::<i32>()
        .iter()
        .map(|v| v.map(str::to_string))
        .collect()
}

fn sorted_class_names(mut names: Vec<String>) -> Vec<String> {
    let numbers: Option<Vec<f64>> = names.iter().map(|n| n.trim().parse().ok()).collect();
    match numbers {
        Some(nums) if nums.iter().all(|x: &f64| x.is_finite()) => {
            let mut pairs: Vec<(f64, String)> = nums.into_iter().zip(names).collect();
            pairs.sort_by(|a, b| a.0.total_cmp(&b.0).then_with(|| a.1.cmp(&b.1)));
            pairs.into_iter().map(|(_, n)| n).collect()
        }
        _ => {
            names.sort();
            names
        }
    }
}

/// Codes for strings in order of first appearance.
#[derive(Debug, Clone, Default)]
struct Dictionary {
    names: Vec<String>,
    ids: HashMap<String, usize>,
}

impl Dictionary {
    fn code(&mut self, v: &str) -> usize {
        if let Some(&id) = self.ids.get(v) {
            return id;
        }
        let id = self.names.len();
        self.names.push(v.to_string());
        self.ids.insert(v.to_string(), id);
        id
    }
}
