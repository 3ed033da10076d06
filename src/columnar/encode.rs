//! From Arrow tables to a stream of rows: the feature schema and class set are read off the
//! inputs, then every cell becomes an `f64` (numbers as themselves, categories as codes, nulls
//! as `NaN`).
//!
//! Column kinds: integer, float, decimal and boolean columns are numeric; string and
//! dictionary columns are nominal, their categories coded in order of first appearance
//! across the inputs. [`Encodings`] overrides this per column: a column can be declared
//! nominal whatever its type (integer-coded categories), or *ordinal* with its levels in
//! order, which makes it a numeric feature holding each level's rank — threshold splits
//! then respect the order that a multiway split would throw away. The class set is the
//! label column's distinct values, sorted (numerically when every value is a number), so
//! class ids do not depend on row order.

use std::collections::HashMap;
use std::path::PathBuf;

use arrow::array::{Array, AsArray};
use arrow::compute::cast;
use arrow::datatypes::DataType;

use super::input::nominal_type;
use super::input::{Table, read_table};
use super::label_sets::{
    LabelSetLayout, LabelSetReader, collect_list_labels, flag_column, label_set_layout,
};
use super::rows::RowEncoder;
use crate::core::{ClassId, ClassSet, Dataset, Feature, FeatureKind, StreamSpec};
use crate::core::{Encodings, Ordinal};
use crate::{Error, Result};

/// How a feature column becomes numbers.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind<'a> {
    Numeric,
    Nominal,
    Ordinal(&'a Ordinal),
}

impl<'a> Kind<'a> {
    /// The kind of column `field` under `enc`, `None` for an unsupported type.
    fn of(field: &arrow::datatypes::Field, enc: &'a Encodings) -> Option<Kind<'a>> {
        if let Some(o) = enc.ordinal(field.name()) {
            Some(Kind::Ordinal(o))
        } else if enc.nominal.contains(field.name()) {
            Some(Kind::Nominal)
        } else {
            nominal_type(field.data_type()).map(|n| if n { Kind::Nominal } else { Kind::Numeric })
        }
    }
}

/// Reads `paths` in order and encodes them as one stream labelled by column `label`, with
/// the column kinds overridden by `enc`.
pub fn load_stream(paths: &[PathBuf], label: &str, enc: &Encodings) -> Result<Dataset> {
    let tables = paths
        .iter()
        .map(|p| read_table(p))
        .collect::<Result<Vec<_>>>()?;
    encode_tables(&tables, label, enc)
}

/// Encodes tables that share their columns into one stream.
pub fn encode_tables(tables: &[Table], label: &str, enc: &Encodings) -> Result<Dataset> {
    let spec = infer_spec(tables, label, enc)?;
    Ok(encode_with_spec(tables, &spec, label, enc)?.data)
}

/// A stream encoded for a given spec.
#[derive(Debug, Clone)]
pub struct Encoded {
    /// The rows; its spec lists the categories first seen in these tables after the given
    /// spec's.
    pub data: Dataset,
    /// Rows (0-based, ascending) of a multi-label stream whose label set names a label
    /// outside the spec's: kept as rows to score only. (A multiclass stream's class set
    /// grows instead.)
    pub unknown_label_rows: Vec<usize>,
}

/// The feature schema and class set of tables that share their columns: categories and
/// classes in order of first appearance, classes then sorted.
pub fn infer_spec(tables: &[Table], label: &str, enc: &Encodings) -> Result<StreamSpec> {
    infer(tables, label, enc, None)
}

/// [`infer_spec`] for a stream whose classes are declared: the features are read from the
/// tables, the classes are `classes`, in this order (the tables' labels may be null or
/// name fewer of them).
pub fn infer_spec_declared(
    tables: &[Table], label: &str, enc: &Encodings, classes: &[String],
) -> Result<StreamSpec> {
    infer(tables, label, enc, Some(classes))
}

fn infer(
    tables: &[Table], label: &str, enc: &Encodings, declared: Option<&[String]>,
) -> Result<StreamSpec> {
    let first = tables
        .first()
        .ok_or_else(|| Error::config("input", "no input file given"))?;
    let columns: Vec<String> = first
        .schema
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    // A multi-label table has a list-typed label column, or `label_<name>` flag columns
    // instead of a label column.
    let layout = label_set_layout(&first.schema, label);
    let is_target = |name: &str| match &layout {
        Some(LabelSetLayout::Flags(names)) => names.iter().any(|n| flag_column(label, n) == name),
        _ => name == label,
    };
    let feature_cols: Vec<usize> = (0..columns.len())
        .filter(|&i| !is_target(&columns[i]) && !enc.passthrough.contains(&columns[i]))
        .collect();
    for name in enc
        .nominal
        .iter()
        .chain(enc.ordinal.iter().map(|o| &o.column))
        .chain(&enc.passthrough)
    {
        if !columns.contains(name) || is_target(name) {
            return Err(Error::MissingColumn {
                file: first.path.clone(),
                column: name.clone(),
                available: columns.clone(),
            });
        }
    }
    let kinds = feature_cols
        .iter()
        .map(|&i| {
            let field = first.schema.field(i);
            Kind::of(field, enc).ok_or_else(|| Error::UnsupportedColumnType {
                file: first.path.clone(),
                column: field.name().clone(),
                data_type: field.data_type().to_string(),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    for table in tables {
        let target = match layout {
            Some(LabelSetLayout::Flags(_)) => None,
            _ => Some(label),
        };
        check_columns(table, first, &columns, &feature_cols, &kinds, target, enc)?;
    }

    // Categories and classes, in order of first appearance.
    let mut categories: Vec<Dictionary> = vec![Dictionary::default(); feature_cols.len()];
    let mut classes = Dictionary::default();
    let mut listed = Vec::new();
    for table in tables {
        let mut row_in_file = 0u64;
        let mut census = vec![NumberCensus::default(); feature_cols.len()];
        for batch in table.batches()? {
            let batch = batch?;
            for (f, &i) in feature_cols.iter().enumerate() {
                if kinds[f] == Kind::Nominal {
                    // An empty string is a missing value (as in `RowEncoder`).
                    for (r, v) in strings(batch.column(i)).iter().enumerate() {
                        let Some(v) = v.as_deref().filter(|v| !v.is_empty()) else {
                            continue;
                        };
                        categories[f].code(v);
                        census[f].add(row_in_file + r as u64, v);
                    }
                }
            }
            match layout {
                Some(LabelSetLayout::Flags(_)) => {}
                Some(LabelSetLayout::List) => {
                    let label_index = batch.schema().index_of(label).expect("checked above");
                    let column = batch.column(label_index);
                    collect_list_labels(column, label, &table.path, row_in_file, &mut listed)?;
                }
                None => {
                    let label_index = batch.schema().index_of(label).expect("checked above");
                    for v in strings(batch.column(label_index)).iter().flatten() {
                        classes.code(v);
                    }
                }
            }
            row_in_file += batch.num_rows() as u64;
        }
        for (f, census) in census.into_iter().enumerate() {
            let column = feature_cols[f];
            if !enc.nominal.contains(&columns[column]) {
                census.refuse_stray_words(table, column)?;
            }
        }
    }
    let class_names = match (&layout, declared) {
        (Some(LabelSetLayout::Flags(names)), _) => names.clone(),
        (Some(LabelSetLayout::List), _) => sorted_class_names(listed),
        (None, Some(names)) => names.to_vec(),
        (None, None) => sorted_class_names(classes.names.clone()),
    };
    if class_names.len() < 2 {
        return Err(Error::TooFewClasses {
            file: first.path.clone(),
            column: label.to_string(),
            found: class_names.len(),
        });
    }
    let features: Vec<Feature> = feature_cols
        .iter()
        .zip(&kinds)
        .zip(&categories)
        .map(|((&i, kind), dict)| Feature {
            name: columns[i].clone(),
            kind: match kind {
                Kind::Nominal => FeatureKind::Nominal {
                    categories: dict.names.clone(),
                },
                Kind::Numeric | Kind::Ordinal(_) => FeatureKind::Numeric,
            },
        })
        .collect();
    let classes = ClassSet::new(class_names)?;
    Ok(match layout {
        Some(_) => StreamSpec::multi_label(features, classes),
        None => StreamSpec::new(features, classes),
    })
}

/// Encodes tables that share their columns for an existing `spec` (a model's): features are
/// found by name and checked against their kinds, and categories the spec does not know get
/// the next codes. A class the spec does not know gets the next id, in the order the rows
/// bring them, and the returned spec lists it after the spec's own: a model meeting it grows
/// ([`crate::Classifier::add_class`]). (A label set naming a label outside a multi-label
/// spec makes its row one to score only.)
pub fn encode_with_spec(
    tables: &[Table], spec: &StreamSpec, label: &str, enc: &Encodings,
) -> Result<Encoded> {
    if spec.is_multi_label() {
        let encoder = StreamEncoder::new(tables, spec, label, enc)?.encoder;
        return encode_label_sets(tables, spec, label, encoder);
    }
    let n: usize = tables.iter().map(Table::n_rows).sum();
    let mut values = Vec::with_capacity(n * spec.n_features());
    let mut labels = Vec::with_capacity(n);
    let mut encoder = StreamEncoder::new(tables, spec, label, enc)?;
    encoder.for_each_chunk(|chunk| {
        values.extend_from_slice(chunk.rows());
        labels.extend_from_slice(chunk.labels());
        Ok(())
    })?;
    Ok(Encoded {
        data: Dataset::from_parts(encoder.spec()?, values, labels)?,
        unknown_label_rows: Vec::new(),
    })
}

/// `spec` grown by the categories and classes `tables` bring (a pass over them, a batch in
/// memory at a time).
pub fn grow_spec(
    tables: &[Table], spec: &StreamSpec, label: &str, enc: &Encodings,
) -> Result<StreamSpec> {
    if spec.is_multi_label() {
        return Ok(encode_with_spec(tables, spec, label, enc)?
            .data
            .spec()
            .clone());
    }
    let mut encoder = StreamEncoder::new(tables, spec, label, enc)?;
    encoder.for_each_chunk(|_| Ok(()))?;
    encoder.spec()
}

/// A multiclass stream's tables encoded batch by batch for a spec that grows as the rows
/// bring what it does not know: categories get the next codes, classes the next ids, in the
/// order the rows bring them ([`encode_with_spec`]'s rules, one batch in memory at a time).
pub struct StreamEncoder<'a> {
    tables: &'a [Table],
    base: StreamSpec,
    label: String,
    encoder: RowEncoder,
    class_ids: std::collections::HashMap<String, ClassId>,
    class_names: Vec<String>,
}

impl<'a> StreamEncoder<'a> {
    /// An encoder of `tables` (which must share their columns) for `spec`.
    pub fn new(
        tables: &'a [Table], spec: &StreamSpec, label: &str, enc: &Encodings,
    ) -> Result<Self> {
        let first = tables
            .first()
            .ok_or_else(|| Error::config("input", "no input file given"))?;
        let encoder = RowEncoder::new(spec, &first.schema, enc, &first.path)?;
        for table in &tables[1..] {
            if table.schema.fields().iter().map(|f| f.name()).ne(first
                .schema
                .fields()
                .iter()
                .map(|f| f.name()))
            {
                return Err(Error::SchemaMismatch {
                    file: table.path.clone(),
                    first: first.path.clone(),
                    detail: "the columns differ".into(),
                });
            }
            RowEncoder::new(spec, &table.schema, enc, &table.path)?;
        }
        Ok(StreamEncoder {
            tables,
            base: spec.clone(),
            label: label.to_string(),
            encoder,
            class_ids: spec.classes.ids(),
            class_names: spec.classes.names().to_vec(),
        })
    }

    /// Encodes every batch of every table, in order, and hands each to `each` as a
    /// [`Dataset`] of the spec as grown so far.
    pub fn for_each_chunk(&mut self, mut each: impl FnMut(Dataset) -> Result<()>) -> Result<()> {
        let mut values = Vec::new();
        for table in self.tables {
            let label_index = table
                .schema
                .index_of(&self.label)
                .map_err(|_| Error::missing_column(&table.path, &self.label, &table.schema))?;
            let mut row_in_file = 0u64;
            for batch in table.batches()? {
                let batch = batch?;
                self.encoder
                    .encode(&batch, &table.path, row_in_file, &mut values)?;
                let labels = strings(batch.column(label_index))
                    .into_iter()
                    .map(|v| {
                        v.map(|v| {
                            *self.class_ids.entry(v).or_insert_with_key(|v| {
                                self.class_names.push(v.clone());
                                self.class_names.len() - 1
                            })
                        })
                    })
                    .collect();
                each(Dataset::from_parts(
                    self.spec()?,
                    std::mem::take(&mut values),
                    labels,
                )?)?;
                row_in_file += batch.num_rows() as u64;
            }
        }
        Ok(())
    }

    /// The spec with the categories and classes met so far.
    pub fn spec(&self) -> Result<StreamSpec> {
        Ok(StreamSpec {
            classes: ClassSet::new(self.class_names.clone())?,
            ..grown_spec(&self.base, &self.encoder)
        })
    }
}

/// `spec` with the categories `encoder` has met since.
fn grown_spec(spec: &StreamSpec, encoder: &RowEncoder) -> StreamSpec {
    let features = spec
        .features
        .iter()
        .enumerate()
        .map(|(j, f)| Feature {
            name: f.name.clone(),
            kind: match &f.kind {
                FeatureKind::Nominal { .. } => FeatureKind::Nominal {
                    categories: encoder.categories(j).to_vec(),
                },
                FeatureKind::Numeric => FeatureKind::Numeric,
            },
        })
        .collect();
    StreamSpec {
        features,
        ..spec.clone()
    }
}

/// [`encode_with_spec`] for a multi-label spec: every table needs its label sets, in either
/// layout. A set naming a label outside the spec's makes its row one to score only.
fn encode_label_sets(
    tables: &[Table], spec: &StreamSpec, label: &str, mut encoder: RowEncoder,
) -> Result<Encoded> {
    let (d, k) = (spec.n_features(), spec.n_classes());
    let n: usize = tables.iter().map(Table::n_rows).sum();
    let mut values = Vec::with_capacity(n * d);
    let mut sets = Vec::with_capacity(n);
    let mut unknown_label_rows = Vec::new();
    let (mut batch_values, mut masks, mut known) = (Vec::new(), Vec::new(), Vec::new());
    for table in tables {
        let reader =
            LabelSetReader::new(spec, &table.schema, label, &table.path)?.ok_or_else(|| {
                let column = format!("{label} or {}", flag_column(label, "*"));
                Error::missing_column(&table.path, column, &table.schema)
            })?;
        let mut row_in_file = 0u64;
        for batch in table.batches()? {
            let batch = batch?;
            encoder.encode(&batch, &table.path, row_in_file, &mut batch_values)?;
            values.extend_from_slice(&batch_values);
            let unknown =
                reader.read(&batch, &table.path, row_in_file, k, &mut masks, &mut known)?;
            unknown_label_rows.extend(unknown.into_iter().map(|r| sets.len() + r));
            for (r, &is_known) in known.iter().enumerate() {
                sets.push(is_known.then(|| masks[r * k..(r + 1) * k].to_vec()));
            }
            row_in_file += batch.num_rows() as u64;
        }
    }
    Ok(Encoded {
        data: Dataset::from_label_sets(grown_spec(spec, &encoder), values, sets)?,
        unknown_label_rows,
    })
}

/// Checks that `table` has the columns of `first`, with compatible kinds.
fn check_columns(
    table: &Table, first: &Table, columns: &[String], feature_cols: &[usize], kinds: &[Kind],
    label: Option<&str>, enc: &Encodings,
) -> Result<()> {
    let schema = &table.schema;
    if let Some(label) = label
        && schema.index_of(label).is_err()
    {
        return Err(Error::missing_column(&table.path, label, schema));
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
        let kind = Kind::of(field, enc);
        // An all-null column reads as Null (or as strings in CSV inference): it fits any kind.
        let all_null = || -> Result<bool> {
            for batch in table.batches()? {
                let batch = batch?;
                if batch.column(i).null_count() != batch.num_rows() {
                    return Ok(false);
                }
            }
            Ok(true)
        };
        if kind != Some(kinds[f]) && !all_null()? {
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
/// How many of a text column's present values are numbers and how many are not, with the
/// first that is not.
#[derive(Debug, Clone, Default)]
struct NumberCensus {
    numbers: u64,
    words: u64,
    first_word: Option<(u64, String)>,
}

impl NumberCensus {
    /// Counts value `v` of 0-based data row `row`.
    fn add(&mut self, row: u64, v: &str) {
        if v.trim().parse::<f64>().is_ok() {
            self.numbers += 1;
        } else {
            self.words += 1;
            self.first_word.get_or_insert_with(|| (row, v.to_string()));
        }
    }

    /// A column of numbers but for a few values (at most one in a hundred) holds stray
    /// words, not categories (`oops`, `1e308*10`): read as nominal, the whole column would
    /// silently change kind. It is refused, naming the first such cell; `--nominal COL` (or
    /// [`Encodings::nominal`]) reads such a column as categories on purpose.
    fn refuse_stray_words(self, table: &Table, column: usize) -> Result<()> {
        let present = self.numbers + self.words;
        match self.first_word {
            Some((row, word)) if self.words * 100 <= present => {
                let name = table.schema.field(column).name().clone();
                Err(Error::MalformedRow {
                    file: table.path.clone(),
                    // The header is line 1.
                    line: Some(row + 2),
                    message: format!(
                        "`{word}` in a column of numbers ({} of its {present} values); fix the \
                         cell, or declare the column nominal (--nominal {name}) if it holds \
                         categories",
                        self.numbers
                    ),
                    column: Some(name),
                })
            }
            _ => Ok(()),
        }
    }
}

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
