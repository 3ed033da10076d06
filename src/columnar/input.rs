//! Reading CSV and Parquet files into Arrow record batches, in file order.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::csv::reader::{Format, ReaderBuilder};
use arrow::datatypes::{DataType, Schema, SchemaRef};
use arrow::error::ArrowError;
use arrow::record_batch::RecordBatch;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use crate::{Error, Result, files};

/// Rows per record batch when reading, at most.
const BATCH_ROWS: usize = 8192;
/// Cells per record batch when reading, at most: a reader holds buffers for a whole batch
/// (arrow's CSV decoder an offset per cell, allocated up front), so a wide file is read in
/// batches of fewer rows. 64 columns still take [`BATCH_ROWS`] rows at a time.
const BATCH_CELLS: usize = 64 * BATCH_ROWS;

/// Rows per batch of a table of `columns` columns (between 16 and [`BATCH_ROWS`]).
fn batch_rows(columns: usize) -> usize {
    (BATCH_CELLS / columns.max(1)).clamp(16, BATCH_ROWS)
}

/// Refuses a table wider than [`limits::COLUMNS`](crate::core::limits::COLUMNS), before a
/// batch of it is read.
fn check_width(path: &Path, schema: &Schema) -> Result<()> {
    let (limit, n) = (crate::core::limits::COLUMNS, schema.fields().len());
    match n > limit.get() {
        true => Err(Error::Format {
            file: path.to_path_buf(),
            message: format!("the number of columns {}", limit.exceeded(n, limit.get())),
        }),
        false => Ok(()),
    }
}

/// One input: its schema and row count, and its rows, held in memory or read again from its
/// file on each pass ([`Table::batches`]).
#[derive(Debug, Clone)]
pub struct Table {
    /// Where it came from.
    pub path: PathBuf,
    /// Its schema.
    pub schema: SchemaRef,
    rows: usize,
    source: Source,
}

/// Where a table's rows are.
#[derive(Debug, Clone)]
enum Source {
    /// In memory.
    Batches(Vec<RecordBatch>),
    /// In the file at the table's path, read on each pass.
    File(FileFormat),
}

/// A table's rows in file order, batch by batch.
pub type Batches<'a> = Box<dyn Iterator<Item = Result<RecordBatch>> + 'a>;

impl Table {
    /// A table of rows held in memory.
    pub fn new(path: impl Into<PathBuf>, schema: SchemaRef, batches: Vec<RecordBatch>) -> Self {
        Table {
            path: path.into(),
            schema,
            rows: batches.iter().map(RecordBatch::num_rows).sum(),
            source: Source::Batches(batches),
        }
    }

    /// Number of data rows.
    pub fn n_rows(&self) -> usize {
        self.rows
    }

    /// Column `name` as numbers appended to `out`, a value per row (NaN where null or not a
    /// number), for a column read beside the features (a label's delay, say).
    pub fn numbers_into(&self, name: &str, out: &mut Vec<f32>) -> Result<()> {
        let missing = || Error::Format {
            file: self.path.clone(),
            message: format!("no column `{name}`"),
        };
        self.schema.index_of(name).map_err(|_| missing())?;
        out.reserve(self.rows);
        for batch in self.batches()? {
            let batch = batch?;
            let column = batch.column_by_name(name).ok_or_else(missing)?;
            let numbers = arrow::compute::cast(column, &arrow::datatypes::DataType::Float32)
                .map_err(|e| Error::Format {
                    file: self.path.clone(),
                    message: format!("column `{name}` is not numeric: {e}"),
                })?;
            let numbers = numbers
                .as_any()
                .downcast_ref::<arrow::array::Float32Array>()
                .expect("cast to Float32");
            out.extend(numbers.iter().map(|v| v.unwrap_or(f32::NAN)));
        }
        Ok(())
    }

    /// Every row as one batch (read into memory if the table is a file's).
    pub fn to_batch(&self) -> Result<RecordBatch> {
        let batches = self.batches()?.collect::<Result<Vec<_>>>()?;
        arrow::compute::concat_batches(&self.schema, &batches).map_err(|e| Error::Format {
            file: self.path.clone(),
            message: e.to_string(),
        })
    }

    /// Every row, in memory, in batches of `rows` (the last one shorter): a logged stream cut
    /// as a source that delivers small batches would deliver it.
    pub fn batches_of(&self, rows: usize) -> Result<Vec<RecordBatch>> {
        let all = self.to_batch()?;
        let starts = (0..all.num_rows()).step_by(rows.max(1));
        Ok(starts
            .map(|i| all.slice(i, rows.min(all.num_rows() - i)))
            .collect())
    }

    /// The rows, in batches of at most 8,192, in file order: from memory, or read from the
    /// file again (an error names the file, line and column as [`read_table`]'s do; a file
    /// whose row count changed since it was opened is an error at its end).
    pub fn batches(&self) -> Result<Batches<'_>> {
        match &self.source {
            Source::Batches(batches) => Ok(Box::new(batches.iter().cloned().map(Ok))),
            Source::File(format) => {
                let rows = match format {
                    FileFormat::Csv => {
                        csv_batches(&self.path, self.schema.clone(), || open(&self.path))?
                    }
                    FileFormat::Parquet => parquet_batches(&self.path)?.1,
                };
                Ok(Box::new(Counted {
                    rows,
                    path: &self.path,
                    expected: self.rows,
                    seen: 0,
                }))
            }
        }
    }
}

/// A file's batches, checked against the row count the file had when it was opened.
struct Counted<'a> {
    rows: Batches<'static>,
    path: &'a Path,
    expected: usize,
    seen: usize,
}

impl Iterator for Counted<'_> {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.rows.next() {
            Some(Ok(batch)) => {
                self.seen += batch.num_rows();
                Some(Ok(batch))
            }
            None if self.seen != self.expected => {
                let (seen, expected) =
                    (self.seen, std::mem::replace(&mut self.expected, self.seen));
                Some(Err(Error::Format {
                    file: self.path.to_path_buf(),
                    message: format!(
                        "changed while it was read: {seen} rows now, {expected} when opened"
                    ),
                }))
            }
            other => other,
        }
    }
}

/// File formats streamboost reads and writes, chosen by file extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileFormat {
    /// Comma-separated values with a header row.
    Csv,
    /// Apache Parquet.
    Parquet,
}

impl FileFormat {
    /// The format a path's extension names (`.parquet`/`.pq` → Parquet, anything else CSV).
    pub fn of(path: &Path) -> Self {
        match path.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("parquet") || e.eq_ignore_ascii_case("pq") => {
                FileFormat::Parquet
            }
            _ => FileFormat::Csv,
        }
    }
}

/// Reads a CSV (with header) or Parquet file whole into memory. An empty file, or one with
/// a header and no data rows, is [`Error::EmptyInput`].
pub fn read_table(path: &Path) -> Result<Table> {
    let (schema, batches) = match FileFormat::of(path) {
        FileFormat::Csv => {
            let schema = csv_schema(path, || open(path))?;
            (schema.clone(), csv_batches(path, schema, || open(path))?)
        }
        FileFormat::Parquet => parquet_batches(path)?,
    };
    let table = Table::new(path, schema, batches.collect::<Result<Vec<_>>>()?);
    if table.n_rows() == 0 {
        return Err(Error::EmptyInput {
            file: path.to_path_buf(),
        });
    }
    Ok(table)
}

/// Opens a CSV (with header) or Parquet file to be read batch by batch, on each pass over
/// it, so that only the batch in hand is in memory. Its schema and row count are read now
/// (a CSV file is parsed through once, so a malformed row is an error here, before any
/// row is used). An empty file, or one with a header and no data rows, is
/// [`Error::EmptyInput`].
pub fn open_table(path: &Path) -> Result<Table> {
    let format = FileFormat::of(path);
    let (schema, rows) = match format {
        FileFormat::Csv => {
            let schema = csv_schema(path, || open(path))?;
            let mut rows = 0;
            for batch in csv_batches(path, schema.clone(), || open(path))? {
                rows += batch?.num_rows();
            }
            (schema, rows)
        }
        FileFormat::Parquet => {
            let (schema, _, rows) = parquet_batches_counted(path)?;
            (schema, rows)
        }
    };
    if rows == 0 {
        return Err(Error::EmptyInput {
            file: path.to_path_buf(),
        });
    }
    Ok(Table {
        path: path.to_path_buf(),
        schema,
        rows,
        source: Source::File(format),
    })
}

fn open(path: &Path) -> Result<File> {
    File::open(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// Reads CSV text held in memory (e.g. a data set bundled in the binary), named `name` in
/// messages.
pub fn read_csv_bytes(name: &Path, bytes: &[u8]) -> Result<Table> {
    let source = || Ok(std::io::Cursor::new(bytes));
    let schema = csv_schema(name, source)?;
    let batches = csv_batches(name, schema.clone(), source)?.collect::<Result<Vec<_>>>()?;
    let table = Table::new(name, schema, batches);
    if table.n_rows() == 0 {
        return Err(Error::EmptyInput {
            file: name.to_path_buf(),
        });
    }
    Ok(table)
}

/// The schema of CSV text, its types inferred from every row: a column whose first thousand
/// values are integers and whose later ones are decimals must not fail half way through
/// the stream.
fn csv_schema<R: std::io::Read>(path: &Path, open: impl Fn() -> Result<R>) -> Result<SchemaRef> {
    let (schema, _) = Format::default()
        .with_header(true)
        .infer_schema(open()?, None)
        .map_err(|e| csv_error(path, None, e))?;
    if schema.fields().is_empty() {
        return Err(Error::EmptyInput {
            file: path.to_path_buf(),
        });
    }
    Error::check_unique_columns(path, &schema)?;
    check_width(path, &schema)?;
    Ok(Arc::new(schema))
}

/// CSV text decoded with `schema`, batch by batch.
fn csv_batches<'a, R: std::io::Read + 'a>(
    path: &Path, schema: SchemaRef, open: impl Fn() -> Result<R>,
) -> Result<Batches<'a>> {
    let reader = ReaderBuilder::new(schema.clone())
        .with_format(Format::default().with_header(true))
        .with_batch_size(batch_rows(schema.fields().len()))
        .build(open()?)
        .map_err(|e| csv_error(path, Some(&schema), e))?;
    let path = path.to_path_buf();
    Ok(Box::new(reader.map(move |batch| {
        batch.map_err(|e| csv_error(&path, Some(&schema), e))
    })))
}

/// A Parquet file's batches. The reader runs under [`files::without_panics`], batch by
/// batch: a decoder that panics on damaged bytes is an error naming the file.
fn parquet_batches(path: &Path) -> Result<(SchemaRef, Batches<'static>)> {
    let (schema, batches, _) = parquet_batches_counted(path)?;
    Ok((schema, batches))
}

fn parquet_batches_counted(path: &Path) -> Result<(SchemaRef, Batches<'static>, usize)> {
    let format_error = |path: &Path, e: &dyn std::fmt::Display| Error::Format {
        file: path.to_path_buf(),
        message: format!("not a readable Parquet file: {e}"),
    };
    let (schema, reader, rows) = files::without_panics(path, || {
        let builder = ParquetRecordBatchReaderBuilder::try_new_with_options(
            open(path)?,
            files::parquet_options(),
        )
        .map_err(|e| format_error(path, &e))?;
        let schema = builder.schema().clone();
        Error::check_unique_columns(path, &schema)?;
        check_width(path, &schema)?;
        let builder = builder.with_batch_size(batch_rows(schema.fields().len()));
        let rows = usize::try_from(builder.metadata().file_metadata().num_rows()).unwrap_or(0);
        let reader = builder.build().map_err(|e| format_error(path, &e))?;
        Ok((schema, reader, rows))
    })?;
    let path = path.to_path_buf();
    let mut reader = Some(reader);
    let batches = std::iter::from_fn(move || {
        let mut r = reader.take()?;
        let next = files::without_panics(&path, || {
            r.next().transpose().map_err(|e| format_error(&path, &e))
        });
        match next {
            Ok(Some(batch)) => {
                reader = Some(r);
                Some(Ok(batch))
            }
            Ok(None) => None,
            // After an error (or a panic inside the reader) the reader is not used again.
            Err(e) => Some(Err(e)),
        }
    });
    Ok((schema, Box::new(batches), rows))
}

/// Turns an arrow-csv error into [`Error::MalformedRow`] with the line and column it names.
/// arrow-csv reports 1-based line numbers counting the header ("… at line 7", "for line 7")
/// and 0-based column indices ("for column 2"); the column index is mapped to its name.
fn csv_error(path: &Path, schema: Option<&Schema>, e: ArrowError) -> Error {
    let message = e.to_string();
    let number_after = |key: &str| -> Option<u64> {
        let at = message.find(key)? + key.len();
        let digits: String = message[at..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse().ok()
    };
    let line = number_after("at line ").or_else(|| number_after("for line "));
    let column = number_after("for column ").map(|i| {
        schema
            .and_then(|s| s.fields().get(i as usize))
            .map_or_else(|| format!("#{i}"), |f| f.name().clone())
    });
    // The csv crate calls a row's fields "records": said in a CSV user's words.
    let fields = match (number_after("Expected "), number_after("found ")) {
        (Some(expected), Some(found)) if message.contains("unequal lengths") => Some(format!(
            "the row has {found} fields where the header has {expected}"
        )),
        _ => None,
    };
    let message = fields.unwrap_or(message);
    if line.is_none() && column.is_none() {
        return Error::Format {
            file: path.to_path_buf(),
            message,
        };
    }
    Error::MalformedRow {
        file: path.to_path_buf(),
        line,
        column,
        message,
    }
}

/// Whether a column of this type is nominal (`Some(true)`), numeric (`Some(false)`) or
/// neither (`None`).
pub(crate) fn nominal_type(t: &DataType) -> Option<bool> {
    match t {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => Some(true),
        DataType::Dictionary(_, v) => nominal_type(v).filter(|&n| n),
        DataType::Null | DataType::Boolean => Some(false),
        t if t.is_numeric() => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An opened file is read on each pass, a batch at a time, and gives what a whole read
    /// gives; a file whose rows changed in number since it was opened is an error at its end.
    #[test]
    fn an_opened_file_is_read_on_each_pass_and_must_not_change() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rows.csv");
        let rows = |n: usize| {
            let body: String = (0..n).map(|i| format!("{i},{}\n", i % 3)).collect();
            format!("x,label\n{body}")
        };
        std::fs::write(&path, rows(20_000)).unwrap();
        let opened = open_table(&path).unwrap();
        assert_eq!(opened.n_rows(), 20_000);
        let whole = read_table(&path).unwrap();
        for _ in 0..2 {
            let batches = opened
                .batches()
                .unwrap()
                .collect::<Result<Vec<_>>>()
                .unwrap();
            assert_eq!(batches.len(), 3, "8,192 rows a batch");
            assert_eq!(opened.to_batch().unwrap(), whole.to_batch().unwrap());
        }
        std::fs::write(&path, rows(20_001)).unwrap();
        let last = opened.batches().unwrap().last().unwrap();
        assert!(
            matches!(&last, Err(Error::Format { message, .. })
                if message.contains("changed while it was read")),
            "{last:?}"
        );
    }
}
