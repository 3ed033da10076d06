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

/// Rows per record batch when reading.
const BATCH_ROWS: usize = 8192;

/// One input file, read whole.
#[derive(Debug, Clone)]
pub struct Table {
    /// Where it came from.
    pub path: PathBuf,
    /// Its schema.
    pub schema: SchemaRef,
    /// Its rows, in file order.
    pub batches: Vec<RecordBatch>,
}

impl Table {
    /// Number of data rows.
    pub fn n_rows(&self) -> usize {
        self.batches.iter().map(RecordBatch::num_rows).sum()
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

/// Reads a CSV (with header) or Parquet file. An empty file, or one with a header and no
/// data rows, is [`Error::EmptyInput`].
pub fn read_table(path: &Path) -> Result<Table> {
    let table = match FileFormat::of(path) {
        FileFormat::Csv => read_csv(path)?,
        FileFormat::Parquet => read_parquet(path)?,
    };
    if table.n_rows() == 0 {
        return Err(Error::EmptyInput {
            file: path.to_path_buf(),
        });
    }
    Ok(table)
}

fn open(path: &Path) -> Result<File> {
    File::open(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })
}

fn read_csv(path: &Path) -> Result<Table> {
    read_csv_from(path, || open(path))
}

/// Reads CSV text held in memory (e.g. a data set bundled in the binary), named `name` in
/// messages.
pub fn read_csv_bytes(name: &Path, bytes: &[u8]) -> Result<Table> {
    let table = read_csv_from(name, || Ok(std::io::Cursor::new(bytes)))?;
    if table.n_rows() == 0 {
        return Err(Error::EmptyInput {
            file: name.to_path_buf(),
        });
    }
    Ok(table)
}

/// Reads CSV from a source opened twice: once to infer the types, once to decode.
fn read_csv_from<R: std::io::Read>(path: &Path, open: impl Fn() -> Result<R>) -> Result<Table> {
    let format = Format::default().with_header(true);
    // Types are inferred from every row: a column whose first thousand values are integers
    // and whose later ones are decimals must not fail half way through the stream.
    let (schema, _) = format
        .infer_schema(open()?, None)
        .map_err(|e| csv_error(path, None, e))?;
    if schema.fields().is_empty() {
        return Err(Error::EmptyInput {
            file: path.to_path_buf(),
        });
    }
    Error::check_unique_columns(path, &schema)?;
    let schema = Arc::new(schema);
    let reader = ReaderBuilder::new(schema.clone())
        .with_format(format)
        .with_batch_size(BATCH_ROWS)
        .build(open()?)
        .map_err(|e| csv_error(path, Some(&schema), e))?;
    let batches = reader
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| csv_error(path, Some(&schema), e))?;
    Ok(Table {
        path: path.to_path_buf(),
        schema,
        batches,
    })
}

fn read_parquet(path: &Path) -> Result<Table> {
    files::without_panics(path, || read_parquet_checked(path))
}

fn read_parquet_checked(path: &Path) -> Result<Table> {
    let format_error = |e: &dyn std::fmt::Display| Error::Format {
        file: path.to_path_buf(),
        message: format!("not a readable Parquet file: {e}"),
    };
    let builder = ParquetRecordBatchReaderBuilder::try_new_with_options(
        open(path)?,
        files::parquet_options(),
    )
    .map_err(|e| format_error(&e))?
    .with_batch_size(BATCH_ROWS);
    let schema = builder.schema().clone();
    Error::check_unique_columns(path, &schema)?;
    let batches = builder
        .build()
        .map_err(|e| format_error(&e))?
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| format_error(&e))?;
    Ok(Table {
        path: path.to_path_buf(),
        schema,
        batches,
    })
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
