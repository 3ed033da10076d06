//! `boost_score` and `boost_predict` on a Ballista cluster (feature `ballista`).
//!
//! Ballista runs a DataFusion plan over a scheduler and executors: the client sends the
//! logical plan to the scheduler, which plans it physically, cuts it into stages at every
//! repartitioning, and sends each stage's tasks to executors. Plans cross processes as
//! protobuf, so the `boost_score` node and its exec travel through extension codecs:
//! [`BoostLogicalCodec`] and [`BoostPhysicalCodec`], which wrap Ballista's own codecs
//! (shuffles, file formats) and handle the two `boost_score` nodes themselves.
//!
//! What travels is the query's arguments and its model, self-contained: a fresh model as its
//! JSON config, classes and seed; a checkpoint by its path, which every executor loads
//! (checkpoints on shared storage: a network file system or the same path on every
//! machine; object stores are not read yet). A live model does not travel: it commits to
//! one directory from one process, so planning it for a cluster is an error naming the
//! model. `boost_predict` resolves its model by name in the executor's registry, so the
//! executors register the same checkpoints under the same names.
//!
//! Where it runs: without a key the node requires a single partition, so the whole scored
//! stream goes to one task on one executor (EXPLAIN says so); with a key it requires hash
//! partitioning by the key, which Ballista provides with a shuffle, and each partition's keys
//! are scored on whichever executor runs that partition. Predictions equal a single
//! machine's: each model sees the same rows in the same `ts` order.
//!
//! Streaming semantics are Ballista's: a query is a batch job. A task that fails is retried
//! from its stage's input, and since a query over a config or checkpoint model is a pure
//! function of its input (nothing is learnt beyond the query), a retried task emits the same
//! rows. Nothing is committed; a cancelled query leaves nothing behind.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use ballista::prelude::{SessionConfigExt, SessionContextExt};
use ballista_core::serde::{BallistaLogicalExtensionCodec, BallistaPhysicalExtensionCodec};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::TableProvider;
use datafusion::common::{DataFusionError, Result as DfResult, TableReference, plan_err};
use datafusion::datasource::file_format::FileFormatFactory;
use datafusion::execution::{SessionState, TaskContext};
use datafusion::logical_expr::{Extension, LogicalPlan};
use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion_proto::logical_plan::LogicalExtensionCodec;
use datafusion_proto::physical_plan::{PhysicalExtensionCodec, PhysicalProtoConverterExtension};
use serde::{Deserialize, Serialize};

use super::delayed::BoostScoreDelayedNode;
use super::registry::{ModelRegistry, ModelSource};
use super::score::{Arguments, BoostScoreExec, BoostScoreNode};
use super::{register_all, register_functions, to_df};
use crate::model::ModelConfig;

/// What starts a `boost_score` node's bytes, so the codecs tell them from Ballista's own.
const MAGIC: &[u8] = b"streamboost.boost_score.v1\n";

/// A `boost_score` node or exec as it crosses processes.
#[derive(Serialize, Deserialize)]
struct WireScore {
    args: Arguments,
    model: PortableModel,
}

/// A model as another machine can rebuild it.
#[derive(Serialize, Deserialize)]
enum PortableModel {
    /// A fresh model.
    Config {
        config: Box<ModelConfig>,
        classes: Vec<String>,
        seed: u64,
    },
    /// A trained model, loaded from this path by whoever decodes it.
    Checkpoint { path: PathBuf },
}

impl PortableModel {
    fn of(name: &str, source: &ModelSource) -> DfResult<Self> {
        match source {
            ModelSource::Config {
                config,
                classes,
                seed,
            } => Ok(PortableModel::Config {
                config: config.clone(),
                classes: classes.clone(),
                seed: *seed,
            }),
            ModelSource::Checkpoint { path, .. } => Ok(PortableModel::Checkpoint {
                path: std::path::absolute(path).unwrap_or_else(|_| path.clone()),
            }),
            ModelSource::Live(_) => plan_err!(
                "boost_score('{name}'): `{name}` is a live model, which commits to one \
                 directory from one process and cannot run on a cluster; register its \
                 checkpoint as a model to score with it there"
            ),
        }
    }

    fn source(self, checkpoints: &LoadedCheckpoints) -> DfResult<ModelSource> {
        match self {
            PortableModel::Config {
                config,
                classes,
                seed,
            } => Ok(ModelSource::Config {
                config,
                classes,
                seed,
            }),
            PortableModel::Checkpoint { path } => checkpoints.get(&path),
        }
    }
}

/// The checkpoints a codec has loaded, by path, kept while their file is unchanged: a
/// process decodes a stage's plan once per task, and loads a model once, not once per
/// partition. A commit replaces a checkpoint by renaming a new file over it, which changes
/// its length or modification time, so a stale model is never served.
#[derive(Debug, Default)]
struct LoadedCheckpoints(Mutex<HashMap<PathBuf, (FileStamp, ModelSource)>>);

/// A file's length and modification time.
type FileStamp = (u64, Option<SystemTime>);

impl LoadedCheckpoints {
    /// Checkpoints kept at most; beyond, the cache starts afresh.
    const CAPACITY: usize = 16;

    fn get(&self, path: &Path) -> DfResult<ModelSource> {
        let Ok(meta) = std::fs::metadata(path) else {
            // The loader's error names the file and what is wrong with it.
            return ModelSource::checkpoint(path).map_err(to_df);
        };
        let stamp = (meta.len(), meta.modified().ok());
        let mut cache = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((seen, source)) = cache.get(path)
            && *seen == stamp
        {
            return Ok(source.clone());
        }
        let source = ModelSource::checkpoint(path).map_err(to_df)?;
        if cache.len() >= Self::CAPACITY {
            cache.clear();
        }
        cache.insert(path.to_path_buf(), (stamp, source.clone()));
        Ok(source)
    }
}

fn encode(args: &Arguments, source: &ModelSource, buf: &mut Vec<u8>) -> DfResult<()> {
    let wire = WireScore {
        args: args.clone(),
        model: PortableModel::of(&args.model, source)?,
    };
    buf.extend_from_slice(MAGIC);
    serde_json::to_writer(buf, &wire).map_err(|e| DataFusionError::External(Box::new(e)))
}

fn decode(bytes: &[u8], checkpoints: &LoadedCheckpoints) -> DfResult<(Arguments, ModelSource)> {
    let wire: WireScore = serde_json::from_slice(bytes).map_err(|e| {
        DataFusionError::Plan(format!("a boost_score plan node that does not decode: {e}"))
    })?;
    Ok((wire.args, wire.model.source(checkpoints)?))
}

fn only_input<T: Clone>(inputs: &[T]) -> DfResult<T> {
    match inputs {
        [input] => Ok(input.clone()),
        _ => plan_err!("boost_score has one input, got {}", inputs.len()),
    }
}

fn delayed_unsupported<T>() -> DfResult<T> {
    plan_err!(
        "boost_score_delayed does not run on a Ballista cluster: it joins two streams in \
         arrival order on one machine"
    )
}

/// Ballista's logical codec, and `boost_score`'s node.
#[derive(Debug, Default)]
pub struct BoostLogicalCodec {
    ballista: BallistaLogicalExtensionCodec,
    checkpoints: LoadedCheckpoints,
}

impl LogicalExtensionCodec for BoostLogicalCodec {
    fn try_decode(
        &self, buf: &[u8], inputs: &[LogicalPlan], ctx: &TaskContext,
    ) -> DfResult<Extension> {
        let Some(bytes) = buf.strip_prefix(MAGIC) else {
            return self.ballista.try_decode(buf, inputs, ctx);
        };
        let (args, source) = decode(bytes, &self.checkpoints)?;
        let registry = ModelRegistry::of_one(&args.model, source);
        let node = BoostScoreNode::try_new(only_input(inputs)?, registry, args)?;
        Ok(Extension {
            node: Arc::new(node),
        })
    }

    fn try_encode(&self, node: &Extension, buf: &mut Vec<u8>) -> DfResult<()> {
        if let Some(node) = node.node.as_any().downcast_ref::<BoostScoreNode>() {
            let source = node.registry.get(&node.args.model).map_err(to_df)?;
            return encode(&node.args, &source, buf);
        }
        if node.node.as_any().is::<BoostScoreDelayedNode>() {
            return delayed_unsupported();
        }
        self.ballista.try_encode(node, buf)
    }

    fn try_decode_table_provider(
        &self, buf: &[u8], table_ref: &TableReference, schema: SchemaRef, ctx: &TaskContext,
    ) -> DfResult<Arc<dyn TableProvider>> {
        self.ballista
            .try_decode_table_provider(buf, table_ref, schema, ctx)
    }

    fn try_encode_table_provider(
        &self, table_ref: &TableReference, node: Arc<dyn TableProvider>, buf: &mut Vec<u8>,
    ) -> DfResult<()> {
        self.ballista
            .try_encode_table_provider(table_ref, node, buf)
    }

    fn try_decode_file_format(
        &self, buf: &[u8], ctx: &TaskContext,
    ) -> DfResult<Arc<dyn FileFormatFactory>> {
        self.ballista.try_decode_file_format(buf, ctx)
    }

    fn try_encode_file_format(
        &self, buf: &mut Vec<u8>, node: Arc<dyn FileFormatFactory>,
    ) -> DfResult<()> {
        self.ballista.try_encode_file_format(buf, node)
    }
}

/// Ballista's physical codec, and `boost_score`'s exec.
#[derive(Debug, Default)]
pub struct BoostPhysicalCodec {
    ballista: BallistaPhysicalExtensionCodec,
    checkpoints: LoadedCheckpoints,
}

impl PhysicalExtensionCodec for BoostPhysicalCodec {
    fn try_decode(
        &self, buf: &[u8], inputs: &[Arc<dyn ExecutionPlan>], ctx: &TaskContext,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        let Some(bytes) = buf.strip_prefix(MAGIC) else {
            return self.ballista.try_decode(buf, inputs, ctx, proto_converter);
        };
        let (args, source) = decode(bytes, &self.checkpoints)?;
        Ok(Arc::new(BoostScoreExec::try_new(
            only_input(inputs)?,
            source,
            args,
        )?))
    }

    fn try_encode(
        &self, node: Arc<dyn ExecutionPlan>, buf: &mut Vec<u8>,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> DfResult<()> {
        if let Some(exec) = node.downcast_ref::<BoostScoreExec>() {
            return encode(&exec.args, &exec.source, buf);
        }
        if node
            .downcast_ref::<super::delayed::BoostScoreDelayedExec>()
            .is_some()
        {
            return delayed_unsupported();
        }
        self.ballista.try_encode(node, buf, proto_converter)
    }
}

/// `config` with Ballista's settings and the streamboost codecs.
pub fn ballista_config(config: SessionConfig) -> SessionConfig {
    config
        .upgrade_for_ballista()
        .with_ballista_logical_extension_codec(Arc::new(BoostLogicalCodec::default()))
        .with_ballista_physical_extension_codec(Arc::new(BoostPhysicalCodec::default()))
}

/// A session state for a Ballista client, scheduler or executor: `config` with the
/// streamboost codecs, every streamboost SQL function over `registry`, and the query
/// planner that plans `boost_score`.
pub fn session_state(config: SessionConfig, registry: &ModelRegistry) -> DfResult<SessionState> {
    let ctx = SessionContext::new_with_config(ballista_config(config));
    register_all(&ctx, registry)?;
    Ok(ctx.state())
}

/// A session on an in-process Ballista cluster (a scheduler and an executor with
/// `parallelism` task slots, in this process), over the models of `registry`.
pub async fn standalone(registry: &ModelRegistry, parallelism: usize) -> DfResult<SessionContext> {
    let config =
        SessionConfig::new_with_ballista().with_ballista_standalone_parallelism(parallelism);
    let ctx = SessionContext::standalone_with_state(session_state(config, registry)?).await?;
    client_functions(ctx, registry)
}

/// A session on the Ballista cluster whose scheduler is at `url` (`df://host:port`), over
/// the models of `registry`. The scheduler and executors must know the streamboost codecs
/// and functions (see `examples/ballista_cluster.rs`).
pub async fn remote(
    url: &str, registry: &ModelRegistry, config: SessionConfig,
) -> DfResult<SessionContext> {
    let ctx = SessionContext::remote_with_state(url, session_state(config, registry)?).await?;
    client_functions(ctx, registry)
}

/// A Ballista client's session with the streamboost functions again: Ballista's upgrade of a
/// session state replaces its functions with its own defaults.
fn client_functions(ctx: SessionContext, registry: &ModelRegistry) -> DfResult<SessionContext> {
    register_functions(&ctx, registry)?;
    Ok(ctx)
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::datatypes::{DataType, Field, Schema};

    use super::*;
    use crate::model::Algorithm;

    /// A checkpoint of a fresh model over one numeric feature, saved at `path`.
    fn save_checkpoint(path: &Path) {
        let fresh = ModelSource::Config {
            config: Box::new(Algorithm::AdaOlm.default_config()),
            classes: vec!["a".into(), "b".into()],
            seed: 1,
        };
        let features = Schema::new(vec![Field::new("x", DataType::Float64, true)]);
        let (mut model, stream) = fresh.start(&features, "label", false).unwrap();
        crate::checkpoint::save(path, &mut model, &stream).unwrap();
    }

    fn frozen(source: &ModelSource) -> crate::sql::live::Frozen {
        source.frozen().expect("a checkpoint")
    }

    #[test]
    fn a_checkpoint_is_loaded_once_while_its_file_is_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.parquet");
        save_checkpoint(&path);
        let cache = LoadedCheckpoints::default();
        let (a, b) = (cache.get(&path).unwrap(), cache.get(&path).unwrap());
        assert!(Arc::ptr_eq(&frozen(&a), &frozen(&b)), "loaded once");
        // A commit renames a new file over it: loaded again.
        std::thread::sleep(std::time::Duration::from_millis(20));
        save_checkpoint(&path);
        let c = cache.get(&path).unwrap();
        assert!(
            !Arc::ptr_eq(&frozen(&a), &frozen(&c)),
            "the new file is read"
        );
        // A missing file is the loader's error, naming it.
        let err = cache.get(&dir.path().join("gone.parquet")).unwrap_err();
        assert!(err.to_string().contains("gone.parquet"), "{err}");
    }
}
