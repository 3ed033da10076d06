//! `boost_models()`: a table of the registered models.

use std::sync::Arc;

use datafusion::arrow::array::{
    ArrayRef, BooleanArray, Float64Array, Int64Array, StringArray, UInt32Array, UInt64Array,
};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::common::{Result as DfResult, plan_err};
use datafusion::datasource::MemTable;

use super::registry::{ModelRegistry, ModelSource};

/// What `boost_models()` shows of a keyed live model: its committed keys, rows seen and
/// learnt over them, the largest `ts` learnt, its keys in memory in the queries running now,
/// and its keys spilled since the last commit.
#[derive(Clone, Copy)]
struct KeyedFigures {
    keys: u64,
    seen: u64,
    learnt: u64,
    ts: Option<i64>,
    resident: u64,
    spilled: u64,
}

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
            Field::new("live", DataType::Boolean, false),
            Field::new("rows_learnt", DataType::UInt64, true),
            Field::new("learnt_up_to_ts", DataType::Int64, true),
            Field::new("last_commit_unix", DataType::Float64, true),
            Field::new("keys", DataType::UInt64, true),
            Field::new("resident_keys", DataType::UInt64, true),
            Field::new("spilled_keys", DataType::UInt64, true),
            Field::new("commits", DataType::UInt64, true),
            Field::new("clients", DataType::UInt64, true),
        ]));
        let entries = self.registry.entries();
        let (mut names, mut algorithms, mut rows, mut classes, mut paths, mut versions) =
            (vec![], vec![], vec![], vec![], vec![], vec![]);
        let (mut live, mut learnt, mut up_to, mut committed) = (vec![], vec![], vec![], vec![]);
        let (mut keys, mut resident, mut spilled) = (vec![], vec![], vec![]);
        let (mut commits, mut clients) = (vec![], vec![]);
        for (name, source) in entries {
            names.push(name);
            let frozen = source.frozen();
            live.push(matches!(source, ModelSource::Live(_)));
            let store = match &source {
                ModelSource::Live(slot) => slot.store(),
                _ => None,
            };
            let keyed = store.map(|s| {
                let store = crate::runtime::keyed::checkpoint::lock(&s);
                let ((seen, learnt), entries) = (store.rows(), &store.manifest().keys);
                KeyedFigures {
                    keys: entries.len() as u64,
                    seen,
                    learnt,
                    ts: entries.iter().filter_map(|e| e.ts).max(),
                    resident: store.resident().0 as u64,
                    spilled: store.spilled_keys() as u64,
                }
            });
            keys.push(keyed.map(|k| k.keys));
            resident.push(keyed.map(|k| k.resident));
            spilled.push(keyed.map(|k| k.spilled));
            let keyed_rows = keyed.map(|k| (k.seen, k.learnt));
            learnt.push(match keyed {
                Some(k) => Some(k.learnt),
                None => frozen.as_ref().map(|s| s.1.stats.rows_learnt),
            });
            up_to.push(match keyed {
                Some(k) => k.ts,
                None => frozen.as_ref().and_then(|s| s.1.position.as_ref()?.ts),
            });
            let slot = match &source {
                ModelSource::Live(slot) => Some(slot),
                _ => None,
            };
            commits.push(slot.map(|s| s.commits()));
            clients.push(slot.map(|s| s.clients()));
            committed.push(match &source {
                ModelSource::Live(slot) => slot
                    .committed_at()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map(|d| d.as_secs_f64()),
                _ => None,
            });
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
                    state,
                } => {
                    algorithms.push(metadata.algorithm.clone());
                    rows.push(Some(metadata.rows_seen));
                    classes.push(state.1.spec.classes.names().join(","));
                    paths.push(Some(path.display().to_string()));
                    versions.push(Some(metadata.format_version));
                }
                ModelSource::Live(slot) => {
                    let state = slot.committed();
                    algorithms.push(slot.config().algorithm().to_string());
                    rows.push(match keyed_rows {
                        Some((seen, _)) => Some(seen),
                        None => state.as_ref().map(|s| s.1.stats.rows_seen),
                    });
                    classes.push(ModelSource::Live(slot.clone()).classes().join(","));
                    paths.push(Some(slot.path().display().to_string()));
                    let committed = state.is_some() || keyed_rows.is_some();
                    versions.push(committed.then_some(crate::checkpoint::FORMAT_VERSION));
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
            Arc::new(BooleanArray::from(live)),
            Arc::new(UInt64Array::from(learnt)),
            Arc::new(Int64Array::from(up_to)),
            Arc::new(Float64Array::from(committed)),
            Arc::new(UInt64Array::from(keys)),
            Arc::new(UInt64Array::from(resident)),
            Arc::new(UInt64Array::from(spilled)),
            Arc::new(UInt64Array::from(commits)),
            Arc::new(UInt64Array::from(clients)),
        ];
        let batch = RecordBatch::try_new(schema.clone(), columns)?;
        Ok(Arc::new(MemTable::try_new(schema, vec![vec![batch]])?))
    }
}
