//! The crate's error type. Every variant names what a user needs to find the problem: the file,
//! the row (1-based line for text files, 0-based row index for data rows, as each variant says)
//! and the column.

use std::path::PathBuf;

/// Errors raised by streamboost.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A hyper-parameter is outside its valid range; raised when a model is built.
    #[error("invalid configuration: `{field}` {reason}")]
    InvalidConfig {
        /// The parameter's name as it appears in the config (and on the command line).
        field: &'static str,
        /// What is wrong with it.
        reason: String,
    },

    /// An algorithm name that no configuration answers to.
    #[error("unknown algorithm `{name}` (known: {known})")]
    UnknownAlgorithm {
        /// The name that was asked for.
        name: String,
        /// The names that exist, comma separated.
        known: String,
    },

    /// An input or output file could not be opened, read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },

    /// A text file holds a row that does not parse.
    #[error("{}: malformed row at line {}{}: {message}", file.display(), line.map_or("?".to_string(), |l| l.to_string()), column.as_ref().map(|c| format!(", column `{c}`")).unwrap_or_default())]
    MalformedRow {
        /// The file.
        file: PathBuf,
        /// 1-based line number in the file (the header is line 1), when known.
        line: Option<u64>,
        /// The column, when known.
        column: Option<String>,
        /// The reader's description of the problem.
        message: String,
    },

    /// A file could not be decoded as the format its name announces (Parquet, CSV).
    #[error("{}: {message}", file.display())]
    Format {
        /// The file.
        file: PathBuf,
        /// The decoder's description.
        message: String,
    },

    /// A column the run needs is not in the file.
    #[error("{}: no column `{column}` (columns: {})", file.display(), available.join(", "))]
    MissingColumn {
        /// The file.
        file: PathBuf,
        /// The column that was asked for.
        column: String,
        /// The columns the file has.
        available: Vec<String>,
    },

    /// Two columns share a name: looking columns up by name would silently read the first.
    #[error("{}: columns {first} and {second} are both named `{column}`", file.display())]
    DuplicateColumn {
        /// The file (or stream).
        file: PathBuf,
        /// The repeated name.
        column: String,
        /// 1-based position of its first column.
        first: usize,
        /// 1-based position of the next column with that name.
        second: usize,
    },

    /// A column has a type that cannot be a feature or a label.
    #[error("{}: column `{column}` has type {data_type}, which is neither numeric nor categorical", file.display())]
    UnsupportedColumnType {
        /// The file.
        file: PathBuf,
        /// The column.
        column: String,
        /// The Arrow type found.
        data_type: String,
    },

    /// A later input does not have the columns of the first one.
    #[error("{}: schema differs from {}: {detail}", file.display(), first.display())]
    SchemaMismatch {
        /// The file whose schema differs.
        file: PathBuf,
        /// The file whose schema the stream took.
        first: PathBuf,
        /// What differs.
        detail: String,
    },

    /// The input holds no data rows.
    #[error("{}: no data rows", file.display())]
    EmptyInput {
        /// The file (the first one, when several are all empty).
        file: PathBuf,
    },

    /// The label column holds fewer than two classes: nothing to classify.
    #[error("{}: label column `{column}` has {found} distinct value(s); at least 2 classes are needed", file.display())]
    TooFewClasses {
        /// The first input file.
        file: PathBuf,
        /// The label column.
        column: String,
        /// How many distinct labels were found.
        found: usize,
    },

    /// A value of an ordinal column is not one of the levels declared for it.
    #[error("{}: data row {row}, column `{column}`: `{value}` is not one of the declared levels ({levels})", file.display())]
    UnlistedLevel {
        /// The file.
        file: PathBuf,
        /// 1-based data row in the file (a header line is not counted).
        row: u64,
        /// The column.
        column: String,
        /// The value found.
        value: String,
        /// The declared levels, comma separated.
        levels: String,
    },

    /// A checkpoint file ends before its footer: a partial copy or an interrupted transfer.
    #[error("{}: truncated checkpoint: {detail}", file.display())]
    TruncatedCheckpoint {
        /// The checkpoint file.
        file: PathBuf,
        /// What is missing.
        detail: String,
    },

    /// A checkpoint file whose bytes or contents are damaged or inconsistent.
    #[error("{}: corrupt checkpoint: {detail}", file.display())]
    CorruptCheckpoint {
        /// The checkpoint file.
        file: PathBuf,
        /// What is wrong.
        detail: String,
    },

    /// A checkpoint written in a format this version cannot read.
    #[error("{}: checkpoint format version {found} needs a reader of version {needs} or newer; this build reads versions {oldest} to {newest}", file.display())]
    CheckpointVersion {
        /// The checkpoint file.
        file: PathBuf,
        /// The file's format version.
        found: u32,
        /// The oldest reader version that can read it.
        needs: u32,
        /// The oldest format version this build reads.
        oldest: u32,
        /// The format version this build writes.
        newest: u32,
    },

    /// An input does not fit the stream a checkpoint was taken on.
    #[error("{}: input {} does not fit the checkpoint's stream: {detail}", file.display(), input.display())]
    CheckpointMismatch {
        /// The checkpoint file.
        file: PathBuf,
        /// The input.
        input: PathBuf,
        /// What differs.
        detail: String,
    },

    /// The stream feeding an operator failed.
    #[error("input stream: {source}")]
    InputStream {
        /// The upstream error.
        source: Box<dyn std::error::Error + Send + Sync>,
    },

    /// A command would write over one of its own inputs (or one output over another): refused
    /// before anything is opened for writing.
    #[error("{output_flag} {} would overwrite {input_flag} {}: {why}", output.display(), input.display())]
    OutputOverlapsInput {
        /// The flag naming the output.
        output_flag: &'static str,
        /// The output path.
        output: PathBuf,
        /// The flag naming the input (or the other output).
        input_flag: &'static str,
        /// The input path.
        input: PathBuf,
        /// How they overlap (the same file, a link to it, a directory holding it).
        why: &'static str,
    },

    /// Another process holds a model or an output directory: one job per model.
    #[error("{} is in use by {holder}: one job per model and output directory (stop that job first; a lock whose holder has died is taken over)", path.display())]
    Locked {
        /// The model or directory.
        path: PathBuf,
        /// Who holds it: process id, host and since when, as its lock file says.
        holder: String,
    },

    /// A row's shape does not match the model it is given to.
    #[error("row {row}: {message}")]
    InvalidRow {
        /// 0-based row index in the stream.
        row: u64,
        /// What is wrong.
        message: String,
    },
}

/// `Result` with streamboost's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Shorthand for [`Error::InvalidConfig`].
    pub fn config(field: &'static str, reason: impl Into<String>) -> Self {
        Error::InvalidConfig {
            field,
            reason: reason.into(),
        }
    }

    /// [`Error::DuplicateColumn`] for the first name `schema` repeats, if any.
    #[cfg(feature = "columnar")]
    pub fn check_unique_columns(
        file: impl Into<PathBuf>, schema: &arrow::datatypes::Schema,
    ) -> Result<()> {
        let mut seen = std::collections::HashMap::new();
        for (i, field) in schema.fields().iter().enumerate() {
            if let Some(first) = seen.insert(field.name().as_str(), i) {
                return Err(Error::DuplicateColumn {
                    file: file.into(),
                    column: field.name().clone(),
                    first: first + 1,
                    second: i + 1,
                });
            }
        }
        Ok(())
    }

    /// [`Error::MissingColumn`] for `column`, listing the columns of `schema`.
    #[cfg(feature = "columnar")]
    pub fn missing_column(
        file: impl Into<PathBuf>, column: impl Into<String>, schema: &arrow::datatypes::Schema,
    ) -> Self {
        Error::MissingColumn {
            file: file.into(),
            column: column.into(),
            available: schema.fields().iter().map(|f| f.name().clone()).collect(),
        }
    }
}
