//! `boost_models()`: a table of the registered models.

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, StringArray, UInt32Array, UInt64Array};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::common::{Result as DfResult, plan_err};
use datafusion::datasource::MemTable;

use super::registry::{ModelRegistry, ModelSource};

/// The `boost_models` table function.
#[derive(Debug)]
pub struct BoostModels {
    registry: ModelRegistry,
}

impl BoostModels {
    /// The table of `registry`'s models.
    pub fn new(registry: ModelRegistry) -> Self {
        BoostModels { registry }
    }
}

impl TableFunctionImpl for BoostModels {
    fn call_with_args(&self, args: TableFunctionArgs) -> DfResult<Arc<dyn TableProvider>> {
        if !args.exprs().is_empty() {
            return plan_err!("boost_models() takes no arguments");
        }
        let schema = Arc::new(Schema::new(vec![
            Field::new("name", DataType::Utf8, false),
            Field::new("algorithm", DataType::Utf8, false),
            Field::new("rows_seen", DataType::UInt64, true),
            Field::new("classes", DataType::Utf8, false),
            Field::new("checkpoint", DataType::Utf8, true),
            Field::new("format_version", DataType::UInt32, true),
        ]));
        let entries = self.registry.entries();
        let (mut names, mut algorithms, mut rows, mut classes, mut paths, mut versions) =
            (vec![], vec![], vec![], vec![], vec![], vec![]);
        for (name, source) in entries {
            names.push(name);
            match source {
                ModelSource::Config {
                    config, classes: c, ..
                } => {
                    algorithms.push(config.algorithm().to_string());
                    rows.push(None);
                    classes.push(c.join(","));
                    paths.push(None);
                    versions.push(None);
                }
                ModelSource::Checkpoint {
                    path,
                    metadata,
                    stream,
                    ..
                } => {
                    algorithms.push(metadata.algorithm.clone());
                    rows.push(Some(metadata.rows_seen));
                    classes.push(stream.spec.classes.names().join(","));
                    paths.push(Some(path.display().to_string()));
                    versions.push(Some(metadata.format_version));
                }
            }
        }
        let columns: Vec<ArrayRef> = vec![
            Arc::new(StringArray::from(names)),
            Arc::new(StringArray::from(algorithms)),
            Arc::new(UInt64Array::from(rows)),
            Arc::new(StringArray::from(classes)),
            Arc::new(StringArray::from(paths)),
            Arc::new(UInt32Array::from(versions)),
        ];
        let batch = RecordBatch::try_new(schema.clone(), columns)?;
        Ok(Arc::new(MemTable::try_new(schema, vec![vec![batch]])?))
    }
}
