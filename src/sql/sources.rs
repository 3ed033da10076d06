//! What a session registers by path: CSV and Parquet tables, and the JSON file of a fresh
//! model (`{"config": {…}, "classes": […], "seed": 1}`, its classes listed or read from a
//! registered table), as `streamboost sql` and `streamboost serve` take them.

use std::path::{Path, PathBuf};

use datafusion::arrow::array::AsArray;
use datafusion::prelude::{CsvReadOptions, ParquetReadOptions, SessionContext};
use serde::Deserialize;

use crate::columnar::FileFormat;
use crate::model::ModelConfig;
use crate::{Error, Result};

/// A fresh model's registration file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ModelFile {
    /// A config as [`ModelConfig::from_json`] reads it: only what differs from the
    /// algorithm's defaults.
    config: serde_json::Value,
    classes: Classes,
    #[serde(default = "default_seed")]
    seed: u64,
}

/// A fresh model's classes: listed, or learnt from a registered table's column (its
/// distinct non-null values, sorted, as a replay orders the classes it finds).
#[derive(Deserialize)]
#[serde(untagged)]
enum Classes {
    Names(Vec<String>),
    FromTable(TableColumn),
}

/// `{"table": …, "column": …}`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TableColumn {
    table: String,
    column: String,
}

impl Classes {
    async fn names(self, ctx: &SessionContext) -> Result<Vec<String>> {
        let (table, column) = match self {
            Classes::Names(names) => return Ok(names),
            Classes::FromTable(TableColumn { table, column }) => (table, column),
        };
        let quote = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
        let query = format!(
            "SELECT DISTINCT CAST({c} AS VARCHAR) AS class FROM {t} WHERE {c} IS NOT NULL \
             ORDER BY class",
            c = quote(&column),
            t = quote(&table)
        );
        let batches = ctx
            .sql(&query)
            .await
            .map_err(df_error)?
            .collect()
            .await
            .map_err(df_error)?;
        let mut names = Vec::new();
        for batch in &batches {
            let column = datafusion::arrow::compute::cast(
                batch.column(0),
                &datafusion::arrow::datatypes::DataType::Utf8,
            )
            .map_err(df_error)?;
            let column = column.as_string::<i32>();
            names.extend(column.iter().flatten().map(String::from));
        }
        Ok(names)
    }
}

/// A fresh model's registration file: its config, classes and seed.
pub async fn read_model_file(
    path: &Path, ctx: &SessionContext,
) -> Result<(ModelConfig, Vec<String>, u64)> {
    let format = |message: String| Error::Format {
        file: path.to_path_buf(),
        message,
    };
    let file: ModelFile = serde_json::from_value(crate::files::read_json(path)?)
        .map_err(|e| format(e.to_string()))?;
    let config = ModelConfig::from_json(file.config).map_err(|e| format(e.to_string()))?;
    let classes = file
        .classes
        .names(ctx)
        .await
        .map_err(|e| format(format!("its classes: {e}")))?;
    Ok((config, classes, file.seed))
}

/// Registers the CSV or Parquet file (or directory of them) at `path` as table `name`.
pub async fn register_table(ctx: &SessionContext, name: &str, path: &Path) -> Result<()> {
    let location = path.to_string_lossy();
    match FileFormat::of(path) {
        FileFormat::Csv => {
            ctx.register_csv(name, location.as_ref(), CsvReadOptions::new())
                .await
        }
        FileFormat::Parquet => {
            ctx.register_parquet(name, location.as_ref(), ParquetReadOptions::default())
                .await
        }
    }
    .map_err(df_error)
}

fn default_seed() -> u64 {
    1
}

/// A DataFusion error (or any other) as the crate's, of the query.
pub fn df_error(e: impl std::fmt::Display) -> Error {
    Error::Format {
        file: PathBuf::from("query"),
        message: e.to_string(),
    }
}
