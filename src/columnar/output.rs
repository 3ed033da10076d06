//! Writing per-row results as CSV or Parquet.

use std::collections::HashMap;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, FixedSizeListArray, Float64Array, StringArray, UInt64Array};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use arrow::error::ArrowError;
use arrow::record_batch::RecordBatch;
use arrow::util::display::{ArrayFormatter, FormatOptions};
use parquet::arrow::ArrowWriter;

use super::input::FileFormat;
use crate::{Error, Result};

/// One output row per replayed row: the row's index in the input, its truth as the input
/// gives it (if known), what was predicted before learning it, and a number per class or
/// label. As [`ScoredRows::predictions`] (a multiclass stream: `label`, `prediction`,
/// `p_<class>`) or [`ScoredRows::rankings`] (a multi-label stream: `relevant`, `predicted`,
/// `score_<label>`, label sets written as `;`-separated names).
#[derive(Debug, Clone)]
pub struct ScoredRows {
    /// Names of the truth and prediction columns, and the prefix of the per-name columns.
    columns: [&'static str; 3],
    /// Class or label names, in id order.
    names: Vec<String>,
    /// 0-based input row numbers, in replay order.
    rows: Vec<u64>,
    truths: Vec<Option<String>>,
    predicted: Vec<String>,
    /// `names.len()` per row.
    values: Vec<f64>,
}

impl ScoredRows {
    fn new(columns: [&'static str; 3], names: &[String]) -> Self {
        ScoredRows {
            columns,
            names: names.to_vec(),
            rows: Vec::new(),
            truths: Vec::new(),
            predicted: Vec::new(),
            values: Vec::new(),
        }
    }

    /// Predictions of a multiclass stream of these classes.
    pub fn predictions(classes: &[String]) -> Self {
        Self::new(["label", "prediction", "p_"], classes)
    }

    /// Rankings of a multi-label stream over these labels.
    pub fn rankings(labels: &[String]) -> Self {
        Self::new(["relevant", "predicted", "score_"], labels)
    }

    /// Records one row: its input row number, its truth, the prediction and a number per
    /// name.
    pub fn push(&mut self, row: u64, truth: Option<String>, predicted: String, values: &[f64]) {
        self.rows.push(row);
        self.truths.push(truth);
        self.predicted.push(predicted);
        self.values.extend_from_slice(values);
    }

    /// Records one ranked row: its relevant labels (if known), its scores and the predicted
    /// set, both sets as masks over the labels.
    pub fn push_ranking(
        &mut self, row: u64, relevant: Option<&[bool]>, scores: &[f64], predicted: &[bool],
    ) {
        let names = |mask: &[bool]| {
            let on = self.names.iter().zip(mask).filter(|(_, on)| **on);
            on.map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(";")
        };
        let (relevant, predicted) = (relevant.map(names), names(predicted));
        self.push(row, relevant, predicted, scores);
    }

    /// The rows as a record batch: `row`, the truth and prediction columns, then a column
    /// per name (floats written with enough digits to read back exactly).
    pub fn to_batch(&self) -> Result<RecordBatch> {
        let [truth, prediction, prefix] = self.columns;
        let mut fields = vec![
            Field::new("row", DataType::UInt64, false),
            Field::new(truth, DataType::Utf8, true),
            Field::new(prediction, DataType::Utf8, false),
        ];
        let mut columns: Vec<ArrayRef> = vec![
            Arc::new(UInt64Array::from(self.rows.clone())),
            Arc::new(StringArray::from(self.truths.clone())),
            Arc::new(StringArray::from(self.predicted.clone())),
        ];
        let k = self.names.len();
        for (c, name) in self.names.iter().enumerate() {
            fields.push(Field::new(
                format!("{prefix}{name}"),
                DataType::Float64,
                false,
            ));
            let column: Float64Array = self
                .values
                .iter()
                .skip(c)
                .step_by(k.max(1))
                .copied()
                .collect();
            columns.push(Arc::new(column));
        }
        RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
            .map_err(|e| Error::config("predictions", e.to_string()))
    }
}

/// Per-row results held until they are written as one record batch.
pub trait BatchRows {
    /// Rows held.
    fn held(&self) -> usize;

    /// The rows held as a record batch.
    fn batch(&self) -> Result<RecordBatch>;

    /// Lets the rows held go (they have been written).
    fn clear(&mut self);
}

impl BatchRows for ScoredRows {
    fn held(&self) -> usize {
        self.rows.len()
    }

    fn batch(&self) -> Result<RecordBatch> {
        self.to_batch()
    }

    fn clear(&mut self) {
        self.rows.clear();
        self.truths.clear();
        self.predicted.clear();
        self.values.clear();
    }
}

/// Per-row results written to a file as they are produced: held `rows` go out as one batch
/// every [`RowsWriter::FLUSH_ROWS`] rows, so memory stays flat; the file takes its path when
/// [`RowsWriter::finish`] ends it (see [`BatchWriter`]).
pub struct RowsWriter<R> {
    file: BatchWriter,
    /// The rows not yet written.
    pub rows: R,
}

impl<R: BatchRows> RowsWriter<R> {
    /// Rows per batch written.
    pub const FLUSH_ROWS: usize = 8192;

    /// Creates `path` (at once, so a path that cannot be written fails before any work).
    pub fn create(path: &Path, rows: R) -> Result<Self> {
        Ok(RowsWriter {
            file: BatchWriter::create(path)?,
            rows,
        })
    }

    /// Writes the rows held once there are a batch of them.
    pub fn flush_if_full(&mut self) -> Result<()> {
        if self.rows.held() >= Self::FLUSH_ROWS {
            self.file.write(&self.rows.batch()?)?;
            self.rows.clear();
        }
        Ok(())
    }

    /// Writes the rows still held and ends the file.
    pub fn finish(mut self) -> Result<()> {
        self.file.write(&self.rows.batch()?)?;
        self.file.finish()
    }
}

/// Writes a batch to `path`, as Parquet if the extension says so, else as CSV with a header.
pub fn write_batch(path: &Path, batch: &RecordBatch) -> Result<()> {
    let mut writer = BatchWriter::create(path)?;
    writer.write(batch)?;
    writer.finish()
}

/// `batch` with its nested columns (lists, structs, maps), which CSV has no cells for, as
/// text: `[0.1, 0.9]`, `{a: 1}`, as Arrow displays them.
fn csv_cells(batch: &RecordBatch) -> std::result::Result<RecordBatch, ArrowError> {
    if !batch
        .schema()
        .fields()
        .iter()
        .any(|f| f.data_type().is_nested())
    {
        return Ok(batch.clone());
    }
    let options = FormatOptions::default();
    let mut fields = Vec::new();
    let mut columns = Vec::new();
    for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
        if field.data_type().is_nested() {
            let shown = ArrayFormatter::try_new(column.as_ref(), &options)?;
            let text: StringArray = (0..column.len())
                .map(|i| column.is_valid(i).then(|| shown.value(i).to_string()))
                .collect();
            fields.push(Field::new(field.name(), DataType::Utf8, true));
            columns.push(Arc::new(text) as ArrayRef);
        } else {
            fields.push(field.as_ref().clone());
            columns.push(column.clone());
        }
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
}

/// Writes record batches to a file as they come, as Parquet if the extension says so, else
/// as CSV with a header: nothing is held beyond the batch being written. The batches go to a
/// temporary file beside the path ([`crate::files::partial_path`]), created at once (so a
/// path that cannot be written fails before any work) and renamed over the path by
/// [`BatchWriter::finish`]: a command that fails or is killed leaves an existing file as it
/// was (and a killed one's temporary file, removed by the next write of that path). Or to
/// standard output ([`BatchWriter::stdout`]), as an Arrow IPC stream or CSV, flushed after
/// every batch.
pub struct BatchWriter {
    path: PathBuf,
    format: Format,
    state: Writing,
    /// The temporary file being written, to be renamed over `path` (none on standard output).
    partial: Option<(PathBuf, File)>,
}

/// The format of a [`BatchWriter`] on standard output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum PipeFormat {
    /// An Arrow IPC stream (what `pyarrow.ipc.open_stream` and `arrow-ipc` read).
    Ipc,
    /// CSV with a header.
    Csv,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Csv,
    Parquet,
    Ipc,
}

type Sink = Box<dyn std::io::Write + Send>;

enum Writing {
    /// The sink, before the first batch gives the schema.
    Created(Option<Sink>),
    Csv(Box<arrow::csv::Writer<Sink>>),
    Parquet(Box<ArrowWriter<Sink>>),
    Ipc(Box<arrow::ipc::writer::StreamWriter<Sink>>),
}

impl BatchWriter {
    /// Starts writing `path` (which keeps its old contents until [`BatchWriter::finish`]).
    pub fn create(path: &Path) -> Result<Self> {
        let partial = crate::files::partial_path(path);
        let io = |source| Error::Io {
            path: path.to_path_buf(),
            source,
        };
        let file = File::create(&partial).map_err(io)?;
        let kept = file.try_clone().map_err(io)?;
        let format = match FileFormat::of(path) {
            FileFormat::Csv => Format::Csv,
            FileFormat::Parquet => Format::Parquet,
        };
        Ok(BatchWriter {
            path: path.to_path_buf(),
            format,
            state: Writing::Created(Some(Box::new(std::io::BufWriter::new(file)))),
            partial: Some((partial, kept)),
        })
    }

    /// Writes to standard output in `format`, flushing after every batch so that a reader
    /// at the other end of a pipe gets each batch as it is written.
    pub fn stdout(format: PipeFormat) -> Self {
        BatchWriter::pipe(Box::new(std::io::stdout()), format)
    }

    /// Writes to `sink` (a pipe, a socket, a buffer) in `format`, flushing after every batch.
    pub fn pipe(sink: Box<dyn std::io::Write + Send>, format: PipeFormat) -> Self {
        BatchWriter {
            path: PathBuf::from("<pipe>"),
            format: match format {
                PipeFormat::Ipc => Format::Ipc,
                PipeFormat::Csv => Format::Csv,
            },
            state: Writing::Created(Some(sink)),
            partial: None,
        }
    }

    fn format_error(&self, e: impl std::fmt::Display) -> Error {
        Error::Format {
            file: self.path.clone(),
            message: e.to_string(),
        }
    }

    /// Appends `batch` (every batch has the first one's schema).
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        if let Writing::Created(sink) = &mut self.state {
            let sink = sink.take().expect("a sink until the first batch");
            self.state = match self.format {
                Format::Csv => Writing::Csv(Box::new(
                    arrow::csv::WriterBuilder::new()
                        .with_header(true)
                        .build(sink),
                )),
                Format::Parquet => Writing::Parquet(Box::new(
                    ArrowWriter::try_new(sink, batch.schema(), None)
                        .map_err(|e| self.format_error(e))?,
                )),
                Format::Ipc => Writing::Ipc(Box::new(
                    arrow::ipc::writer::StreamWriter::try_new(sink, &batch.schema())
                        .map_err(|e| self.format_error(e))?,
                )),
            };
        }
        let written = match &mut self.state {
            Writing::Csv(w) => csv_cells(batch)
                .and_then(|b| w.write(&b))
                .map_err(|e| e.to_string()),
            // One row group per batch: the writer holds no more than a batch in memory.
            Writing::Parquet(w) => w
                .write(batch)
                .and_then(|()| w.flush())
                .map_err(|e| e.to_string()),
            Writing::Ipc(w) => w.write(batch).map_err(|e| e.to_string()),
            Writing::Created(_) => unreachable!("a writer was made above"),
        };
        written.map_err(|e| self.format_error(e))?;
        if self.partial.is_none() {
            // arrow's CSV writer flushes its sink after every batch itself.
            let flushed = match &mut self.state {
                Writing::Ipc(w) => w.get_mut().flush(),
                _ => Ok(()),
            };
            flushed.map_err(|e| self.format_error(e))?;
        }
        Ok(())
    }

    /// Ends the file (Parquet's footer) and puts it in place of the path, flushed to disk; a
    /// file that got no batch is empty.
    pub fn finish(mut self) -> Result<()> {
        let state = std::mem::replace(&mut self.state, Writing::Created(None));
        let ended = match state {
            Writing::Parquet(w) => w
                .into_inner()
                .map_err(|e| e.to_string())
                .and_then(|mut sink| sink.flush().map_err(|e| e.to_string())),
            Writing::Ipc(mut w) => w
                .finish()
                .and_then(|()| w.get_mut().flush().map_err(Into::into))
                .map_err(|e| e.to_string()),
            Writing::Csv(w) => w.into_inner().flush().map_err(|e| e.to_string()),
            Writing::Created(Some(mut sink)) => sink.flush().map_err(|e| e.to_string()),
            Writing::Created(None) => Ok(()),
        };
        ended.map_err(|e| self.format_error(e))?;
        match self.partial.take() {
            Some((partial, file)) => crate::files::put_in_place(&partial, &file, &self.path),
            None => Ok(()),
        }
    }
}

impl Drop for BatchWriter {
    /// A writer dropped before [`BatchWriter::finish`] (its command failed) leaves the path
    /// as it was and removes its temporary file.
    fn drop(&mut self) {
        if let Some((partial, _)) = self.partial.take() {
            let _ = std::fs::remove_file(partial);
        }
    }
}

/// `values` as a list of `k` floats per row.
pub(crate) fn fixed_list(values: Vec<f64>, k: usize) -> FixedSizeListArray {
    let item = Arc::new(Field::new("item", DataType::Float64, false));
    FixedSizeListArray::new(item, k as i32, Arc::new(Float64Array::from(values)), None)
}

/// Key of the class names in the metadata of the probabilities field.
pub const CLASSES_KEY: &str = "streamboost.classes";

/// Column `name` of one number per class (or label) a row, the classes' names in its
/// metadata under [`CLASSES_KEY`].
fn per_class_field(name: String, classes: &[String]) -> Field {
    let item = Arc::new(Field::new("item", DataType::Float64, false));
    let names = serde_json::to_string(classes).expect("strings serialize");
    Field::new(
        name,
        DataType::FixedSizeList(item, classes.len() as i32),
        false,
    )
    .with_metadata(HashMap::from([(CLASSES_KEY.to_string(), names)]))
}

/// The schema of a ranker's output over `input` with label prefix `label` and these labels:
/// the input's columns, then `<label>_scores` (a score per label; the names under
/// [`CLASSES_KEY`] in its metadata) and `predicted_<label>`, the predicted set (the labels
/// scoring above the mean score, [`crate::eval::ranking::predicted_set`]).
pub fn ranking_output_schema(input: &Schema, label: &str, labels: &[String]) -> SchemaRef {
    let scores = per_class_field(format!("{label}_scores"), labels);
    let set = Field::new(
        format!("predicted_{label}"),
        DataType::List(Arc::new(Field::new("item", DataType::Utf8, true))),
        false,
    );
    let mut fields: Vec<Arc<Field>> = input.fields().iter().cloned().collect();
    fields.push(Arc::new(scores));
    fields.push(Arc::new(set));
    Arc::new(Schema::new_with_metadata(fields, input.metadata().clone()))
}

/// The schema of an operator's output over `input` with label column `label` and these
/// classes: the input's columns, then `predicted_<label>` (the label's type; text when the
/// input has no label column) and `predicted_<label>_probs`, whose metadata names the
/// classes under [`CLASSES_KEY`].
pub fn output_schema(input: &Schema, label: &str, classes: &[String]) -> SchemaRef {
    let label_type = input
        .field_with_name(label)
        .map_or(DataType::Utf8, |f| f.data_type().clone());
    let probs_field = per_class_field(format!("predicted_{label}_probs"), classes);
    let mut fields: Vec<Arc<Field>> = input.fields().iter().cloned().collect();
    fields.push(Arc::new(Field::new(
        format!("predicted_{label}"),
        label_type,
        false,
    )));
    fields.push(Arc::new(probs_field));
    Arc::new(Schema::new_with_metadata(fields, input.metadata().clone()))
}
