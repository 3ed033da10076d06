//! `SELECT * FROM boost_score('model', (SELECT …), 'label', 'ts' [, 'key'])`: the
//! prequential surface as a relation, planned as a node of its own.
//!
//! The result is the subquery's rows with `predicted_<label>` and `predicted_<label>_probs`
//! appended, each row scored and then learnt (when its label is known) in `ts` order. The
//! model's features are the subquery's columns other than the label, `ts` and the key (a
//! checkpoint's model reads its own). With a key, each key value gets its own copy of the
//! model, as `boost_prequential(…) OVER (PARTITION BY key ORDER BY ts)` does; the two
//! spellings share [`ModelSource::operator`](super::ModelSource::operator) and give the same
//! predictions.
//!
//! Planning, in DataFusion's terms:
//! - a [`RelationPlanner`] turns the table factor into a [`BoostScoreNode`] over the
//!   subquery's plan;
//! - [`BoostScoreExtensionPlanner`] turns that node into a [`BoostScoreExec`], which states
//!   what it needs of its input: one partition without a key, partitioning by the key
//!   with one (DataFusion hash-repartitions for it); rows sorted by `ts` (ascending, nulls last, as a window's `ORDER BY ts`)
//!   within each partition. DataFusion's optimizer adds the sort and the repartitioning
//!   only where the input does not already provide them, so an input declared sorted by
//!   `ts` (an unbounded stream, say) is scored as it arrives, batch by batch.
//!
//! Predicates above the node are not pushed below it, nor are limits: filtering the rows a
//! model learns from would change its predictions. Rows with equal `ts` are taken in the
//! order the sort leaves them, so ties should be broken in `ts` itself for repeatable runs.

use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::catalog::Session;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DFSchema, DFSchemaRef, DataFusionError, Result as DfResult, plan_err};
use datafusion::execution::TaskContext;
use datafusion::execution::context::QueryPlanner;
use datafusion::logical_expr::physical_planning_context::PhysicalPlanningContext;
use datafusion::logical_expr::planner::{
    PlannedRelation, RelationPlanner, RelationPlannerContext, RelationPlanning,
};
use datafusion::logical_expr::{
    Expr, Extension, LogicalPlan, UserDefinedLogicalNode, UserDefinedLogicalNodeCore,
};
use datafusion::physical_expr::expressions::col;
use datafusion::physical_expr::{EquivalenceProperties, OrderingRequirements, PhysicalExpr};
use datafusion::physical_plan::execution_plan::EmissionType;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, Distribution, ExecutionPlan, ExecutionPlanProperties,
    InputDistributionRequirements, PlanProperties, SendableRecordBatchStream,
};
use datafusion::physical_planner::{DefaultPhysicalPlanner, ExtensionPlanner, PhysicalPlanner};
use datafusion::sql::sqlparser::ast::{
    Expr as SqlExpr, FunctionArg, FunctionArgExpr, TableFactor, Value,
};
use futures::StreamExt;
use futures::stream::BoxStream;

use super::delayed;
use super::live::{LiveSlot, Training};
use super::registry::{ModelRegistry, ModelSource};
use super::{ascending, from_stream_error, to_df};
use crate::columnar::label_set_layout;
use crate::runtime::stream::ScoredStream;
use crate::runtime::{BatchOperator, KeyedOperator};

const NAME: &str = "boost_score";
const USAGE: &str = "boost_score('model', (SELECT ...), 'label', 'ts' [, 'key'])";

/// Plans `boost_score(…)` in a `FROM` clause; any other table factor is left to the next
/// planner.
#[derive(Debug)]
pub struct BoostScoreRelation {
    registry: ModelRegistry,
}

impl BoostScoreRelation {
    /// The relation over the models of `registry`.
    pub fn new(registry: ModelRegistry) -> Self {
        BoostScoreRelation { registry }
    }
}

impl RelationPlanner for BoostScoreRelation {
    fn plan_relation(
        &self, relation: TableFactor, context: &mut dyn RelationPlannerContext,
    ) -> DfResult<RelationPlanning> {
        let TableFactor::Table {
            name,
            args: Some(args),
            alias,
            ..
        } = relation
        else {
            return Ok(RelationPlanning::Original(Box::new(relation)));
        };
        let called = match name.0.as_slice() {
            [part] => part
                .as_ident()
                .map(|ident| context.normalize_ident(ident.clone())),
            _ => None,
        };
        let delayed = called.as_deref() == Some(delayed::NAME);
        if !(delayed || called.as_deref() == Some(NAME)) {
            let relation = TableFactor::Table {
                name,
                args: Some(args),
                alias,
                with_hints: vec![],
                version: None,
                with_ordinality: false,
                partitions: vec![],
                json_path: None,
                sample: None,
                index_hints: vec![],
            };
            return Ok(RelationPlanning::Original(Box::new(relation)));
        }
        let usage = if delayed { delayed::USAGE } else { USAGE };
        let mut exprs = Vec::with_capacity(args.args.len());
        for arg in args.args {
            match arg {
                FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => exprs.push(e),
                other => return plan_err!("{usage}: unexpected argument {other}"),
            }
        }
        if delayed {
            let plan = self.plan_delayed(exprs, context)?;
            return Ok(RelationPlanning::Planned(Box::new(PlannedRelation::new(
                plan, alias,
            ))));
        }
        if !(4..=5).contains(&exprs.len()) {
            return plan_err!("{USAGE} takes 4 or 5 arguments, got {}", exprs.len());
        }
        let mut exprs = exprs.into_iter();
        let model = text_arg(exprs.next(), "the model name", USAGE)?;
        let SqlExpr::Subquery(query) = exprs.next().expect("checked length") else {
            return plan_err!("{USAGE}: the second argument must be a subquery in parentheses");
        };
        let label = text_arg(exprs.next(), "the label column", USAGE)?;
        let ts = text_arg(exprs.next(), "the ordering column", USAGE)?;
        let key = exprs
            .next()
            .map(|e| text_arg(Some(e), "the key column", USAGE))
            .transpose()?;
        let input = context.plan(TableFactor::Derived {
            lateral: false,
            subquery: query,
            alias: None,
            sample: None,
        })?;
        let node = BoostScoreNode::try_new(
            input,
            self.registry.clone(),
            Arguments {
                model,
                label,
                ts,
                key,
            },
        )?;
        let plan = LogicalPlan::Extension(Extension {
            node: Arc::new(node),
        });
        Ok(RelationPlanning::Planned(Box::new(PlannedRelation::new(
            plan, alias,
        ))))
    }
}

impl BoostScoreRelation {
    /// `boost_score_delayed(…)`'s node over its two subqueries.
    fn plan_delayed(
        &self, exprs: Vec<SqlExpr>, context: &mut dyn RelationPlannerContext,
    ) -> DfResult<LogicalPlan> {
        let usage = delayed::USAGE;
        if !(6..=7).contains(&exprs.len()) {
            return plan_err!("{usage} takes 6 or 7 arguments, got {}", exprs.len());
        }
        let mut exprs = exprs.into_iter();
        let model = text_arg(exprs.next(), "the model name", usage)?;
        let mut subquery = |what: &str| match exprs.next() {
            Some(SqlExpr::Subquery(query)) => context.plan(TableFactor::Derived {
                lateral: false,
                subquery: query,
                alias: None,
                sample: None,
            }),
            _ => plan_err!("{usage}: the {what} must be a subquery in parentheses"),
        };
        let events = subquery("events (second argument)")?;
        let labels = subquery("labels (third argument)")?;
        let label = text_arg(exprs.next(), "the label column", usage)?;
        let id = text_arg(exprs.next(), "the id column", usage)?;
        let ts = text_arg(exprs.next(), "the time column", usage)?;
        let outcomes = match exprs.next() {
            None => false,
            Some(e) => match text_arg(Some(e), "the last argument", usage)?.as_str() {
                "outcomes" => true,
                other => {
                    return plan_err!("{usage}: the last argument is 'outcomes', not '{other}'");
                }
            },
        };
        let args = delayed::DelayedArguments {
            model,
            label,
            id,
            ts,
            outcomes,
        };
        let node =
            delayed::BoostScoreDelayedNode::try_new(events, labels, self.registry.clone(), args)?;
        Ok(LogicalPlan::Extension(Extension {
            node: Arc::new(node),
        }))
    }
}

/// A quoted string argument of the function called as `usage`.
fn text_arg(expr: Option<SqlExpr>, what: &str, usage: &str) -> DfResult<String> {
    match expr {
        Some(SqlExpr::Value(v)) => match v.value {
            Value::SingleQuotedString(s) => Ok(s),
            other => plan_err!("{usage}: {what} must be a quoted string, got {other}"),
        },
        Some(other) => plan_err!("{usage}: {what} must be a quoted string, got {other}"),
        None => plan_err!("{usage}: {what} is missing"),
    }
}

/// What `boost_score` was asked for.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Hash, serde::Serialize, serde::Deserialize)]
pub(super) struct Arguments {
    pub(super) model: String,
    pub(super) label: String,
    pub(super) ts: String,
    pub(super) key: Option<String>,
}

impl Arguments {
    /// Columns that are not features of a fresh model.
    fn not_features(&self) -> Vec<&str> {
        std::iter::once(self.ts.as_str())
            .chain(self.key.as_deref())
            .collect()
    }

    fn origin(&self) -> String {
        format!("{NAME}('{}')", self.model)
    }
}

impl fmt::Display for Arguments {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "model={}, label={}, order_by={}",
            self.model, self.label, self.ts
        )?;
        // Where the model runs: one model is sequential, so it takes one partition (on a
        // cluster, one executor); keyed models spread over partitions by the key's hash.
        match &self.key {
            Some(key) => write!(f, ", key={key}, partitioned by hash of {key}"),
            None => write!(f, ", one model: single partition, one executor"),
        }
    }
}

/// The logical node: its input's rows with the model's predictions appended.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BoostScoreNode {
    input: LogicalPlan,
    pub(super) registry: ModelRegistry,
    pub(super) args: Arguments,
    schema: DFSchemaRef,
}

impl BoostScoreNode {
    pub(super) fn try_new(
        input: LogicalPlan, registry: ModelRegistry, args: Arguments,
    ) -> DfResult<Self> {
        let source = registry.get(&args.model).map_err(to_df)?;
        let columns = std::iter::once(("label", &args.label))
            .chain(std::iter::once(("ordering", &args.ts)))
            .chain(args.key.as_ref().map(|k| ("key", k)));
        for (role, column) in columns {
            // A multi-label stream's label is a prefix of its `<label>_<name>` columns.
            let flags =
                role == "label" && label_set_layout(input.schema().as_arrow(), column).is_some();
            if input.schema().field_with_unqualified_name(column).is_err() && !flags {
                return plan_err!(
                    "{}: the input has no {role} column `{column}` (columns: {})",
                    args.origin(),
                    input
                        .schema()
                        .fields()
                        .iter()
                        .map(|f| f.name().as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
        }
        let in_schema = input.schema();
        let out = source.output_schema(in_schema.as_arrow(), &args.label);
        let qualified = in_schema
            .iter()
            .map(|(q, f)| (q.cloned(), f.clone()))
            .chain(
                out.fields()
                    .iter()
                    .skip(in_schema.fields().len())
                    .map(|f| (None, f.clone())),
            )
            .collect();
        let schema = DFSchema::new_with_metadata(qualified, in_schema.metadata().clone())?;
        Ok(BoostScoreNode {
            input,
            registry,
            args,
            schema: Arc::new(schema),
        })
    }
}

impl PartialOrd for BoostScoreNode {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        match self.args.partial_cmp(&other.args) {
            Some(Ordering::Equal) => self.input.partial_cmp(&other.input),
            order => order,
        }
    }
}

impl UserDefinedLogicalNodeCore for BoostScoreNode {
    boost_exec!(node "BoostScore");

    fn inputs(&self) -> Vec<&LogicalPlan> {
        vec![&self.input]
    }

    fn with_exprs_and_inputs(&self, exprs: Vec<Expr>, inputs: Vec<LogicalPlan>) -> DfResult<Self> {
        if !exprs.is_empty() || inputs.len() != 1 {
            return plan_err!("BoostScore takes no expressions and one input");
        }
        let input = inputs.into_iter().next().expect("one input");
        BoostScoreNode::try_new(input, self.registry.clone(), self.args.clone())
    }
}

/// Turns a [`BoostScoreNode`] into a [`BoostScoreExec`]. [`super::register_all`] installs
/// it; a session with a query planner of its own adds it to that planner's extension
/// planners.
#[derive(Debug, Default)]
pub struct BoostScoreExtensionPlanner;

#[async_trait]
impl ExtensionPlanner for BoostScoreExtensionPlanner {
    async fn plan_extension(
        &self, _planner: &dyn PhysicalPlanner, node: &dyn UserDefinedLogicalNode,
        _logical_inputs: &[&LogicalPlan], physical_inputs: &[Arc<dyn ExecutionPlan>],
        _session: &dyn Session, _planning_ctx: &PhysicalPlanningContext,
    ) -> DfResult<Option<Arc<dyn ExecutionPlan>>> {
        if let Some(node) = node
            .as_any()
            .downcast_ref::<delayed::BoostScoreDelayedNode>()
        {
            let exec = node.exec(physical_inputs[0].clone(), physical_inputs[1].clone())?;
            return Ok(Some(Arc::new(exec)));
        }
        let Some(node) = node.as_any().downcast_ref::<BoostScoreNode>() else {
            return Ok(None);
        };
        let source = node.registry.get(&node.args.model).map_err(to_df)?;
        let exec = BoostScoreExec::try_new(physical_inputs[0].clone(), source, node.args.clone())?;
        Ok(Some(Arc::new(exec)))
    }
}

/// DataFusion's physical planner with [`BoostScoreExtensionPlanner`].
#[derive(Debug, Default)]
pub struct BoostQueryPlanner;

#[async_trait]
impl QueryPlanner for BoostQueryPlanner {
    async fn create_physical_plan(
        &self, logical_plan: &LogicalPlan, session: &dyn Session,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        DefaultPhysicalPlanner::with_extension_planners(vec![Arc::new(BoostScoreExtensionPlanner)])
            .create_physical_plan(logical_plan, session)
            .await
    }
}

/// The physical node: scores and learns each partition's rows in order through a
/// [`crate::runtime::Cursor`] (or one per key), appending the prediction columns.
#[derive(Debug)]
pub struct BoostScoreExec {
    input: Arc<dyn ExecutionPlan>,
    /// The registered model as it was when the query was planned.
    pub(super) source: ModelSource,
    pub(super) args: Arguments,
    ts: Arc<dyn PhysicalExpr>,
    key: Option<Arc<dyn PhysicalExpr>>,
    properties: Arc<PlanProperties>,
    /// This query's claim on training a live model, taken by its first partition and shared
    /// by the others.
    training: Arc<std::sync::Mutex<Option<Arc<Training>>>>,
}

impl BoostScoreExec {
    pub(super) fn try_new(
        input: Arc<dyn ExecutionPlan>, source: ModelSource, args: Arguments,
    ) -> DfResult<Self> {
        let in_schema = input.schema();
        let schema = source.output_schema(&in_schema, &args.label);
        let ts = col(&args.ts, &in_schema)?;
        let key = args
            .key
            .as_deref()
            .map(|k| col(k, &in_schema))
            .transpose()?;
        // Output row i is input row i with two columns appended: the input's orderings and
        // partitioning (expressions over the leading columns) hold for the output.
        let orderings = input.equivalence_properties().oeq_class().iter().cloned();
        let properties = PlanProperties::new(
            EquivalenceProperties::new_with_orderings(schema, orderings),
            input.output_partitioning().clone(),
            EmissionType::Incremental,
            input.boundedness(),
        );
        Ok(BoostScoreExec {
            input,
            source,
            args,
            ts,
            key,
            properties: Arc::new(properties),
            training: Arc::default(),
        })
    }

    /// The query's claim on training live model `slot` (see [`LiveSlot::claim`]).
    fn claim(&self, slot: &Arc<LiveSlot>) -> crate::Result<Arc<Training>> {
        let mut training = self.training.lock().unwrap_or_else(|p| p.into_inner());
        match &*training {
            Some(claim) => Ok(claim.clone()),
            None => {
                let claim = slot.claim()?;
                *training = Some(claim.clone());
                Ok(claim)
            }
        }
    }
}

boost_exec!(display BoostScoreExec);

impl ExecutionPlan for BoostScoreExec {
    boost_exec!(plan);

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    fn input_distribution_requirements(&self) -> InputDistributionRequirements {
        InputDistributionRequirements::new(vec![match &self.key {
            None => Distribution::SinglePartition,
            Some(key) => Distribution::KeyPartitioned(vec![key.clone()]),
        }])
    }

    fn required_input_ordering(&self) -> Vec<Option<OrderingRequirements>> {
        vec![ascending(&self.ts)]
    }

    fn maintains_input_order(&self) -> Vec<bool> {
        vec![true]
    }

    fn benefits_from_input_partitioning(&self) -> Vec<bool> {
        vec![self.key.is_some()]
    }

    fn with_new_children(
        self: Arc<Self>, children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        let [input] = <[_; 1]>::try_from(children)
            .map_err(|_| DataFusionError::Plan("BoostScoreExec has one input".into()))?;
        let (source, args) = (self.source.clone(), self.args.clone());
        Ok(Arc::new(Self::try_new(input, source, args)?))
    }

    fn execute(
        &self, partition: usize, context: Arc<TaskContext>,
    ) -> DfResult<SendableRecordBatchStream> {
        let input = self.input.execute(partition, context)?;
        let in_schema: SchemaRef = self.input.schema();
        let args = &self.args;
        let not_features = args.not_features();
        let origin = args.origin();
        let stream = match (&args.key, &self.source) {
            (key, ModelSource::Live(slot)) => {
                let training = self.claim(slot).map_err(to_df)?;
                let mut policy = slot.policy().clone();
                if key.is_some() {
                    // Each partition holds its own keys: they share the live model's budget.
                    let partitions = self.properties.partitioning.partition_count().max(1);
                    policy.memory_budget = (policy.keyed_memory_budget())
                        .map(|budget| (budget / partitions as u64).max(1));
                }
                let live = slot
                    .train(
                        training,
                        in_schema,
                        &args.label,
                        &not_features,
                        Some(&args.ts),
                        key.as_deref(),
                        None,
                        policy,
                        &origin,
                    )
                    .map_err(to_df)?;
                scored(input, live)
            }
            (None, _) => {
                let operator = self
                    .source
                    .operator(in_schema, &args.label, &not_features, &origin)
                    .map_err(to_df)?;
                scored(input, operator)
            }
            (Some(key), _) => {
                let (source, args) = (self.source.clone(), args.clone());
                let key_column = key.clone();
                let factory = Box::new(move |value: Option<&str>, input: &SchemaRef| {
                    let value = value.unwrap_or("NULL");
                    let origin = format!("{} {key_column}={value}", args.origin());
                    source.operator(input.clone(), &args.label, &args.not_features(), &origin)
                });
                let operator = KeyedOperator::new(
                    in_schema,
                    key,
                    &self.args.label,
                    &self.source.classes(),
                    factory,
                )
                .map_err(to_df)?;
                scored(input, operator)
            }
        };
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            self.schema(),
            stream,
        )))
    }
}

/// `input` through `operator`, with DataFusion's errors.
fn scored<O: BatchOperator + Unpin + Send + 'static>(
    input: SendableRecordBatchStream, operator: O,
) -> BoxStream<'static, DfResult<RecordBatch>> {
    ScoredStream::new(input, operator)
        .map(|r| r.map_err(from_stream_error))
        .boxed()
}

/// `boost_score` as a table: the rows of `input`, sorted by the `ts` column, scored and
/// learnt in that order by a registered model, as
/// `SELECT * FROM boost_score('model', (input), 'label', 'ts')` gives them. A plan node does
/// not cross DataFusion's FFI and a table provider does: this is how another engine
/// (datafusion-python) runs `boost_score`. Each scan runs the query again, with the model's
/// rules (a fresh model anew, a checkpoint's from its state, a live model from its last
/// commit, committing as its policy says).
#[derive(Debug)]
pub struct ScoredTable {
    registry: ModelRegistry,
    args: Arguments,
    input: Vec<RecordBatch>,
    input_schema: SchemaRef,
    schema: SchemaRef,
}

impl ScoredTable {
    /// The table of `input` (batches of `input_schema`) scored by model `model` of
    /// `registry`, labels in column `label`, in the order of column `ts`.
    pub fn new(
        registry: &ModelRegistry, model: &str, input_schema: SchemaRef, input: Vec<RecordBatch>,
        label: &str, ts: &str,
    ) -> crate::Result<Self> {
        let source = registry.get(model)?;
        if input_schema.index_of(ts).is_err() {
            return Err(crate::Error::missing_column("(input)", ts, &input_schema));
        }
        let schema = source.output_schema(&input_schema, label);
        Ok(ScoredTable {
            registry: registry.clone(),
            args: Arguments {
                model: model.to_string(),
                label: label.to_string(),
                ts: ts.to_string(),
                key: None,
            },
            input,
            input_schema,
            schema,
        })
    }
}

#[async_trait]
impl datafusion::catalog::TableProvider for ScoredTable {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> datafusion::logical_expr::TableType {
        datafusion::logical_expr::TableType::View
    }

    async fn scan(
        &self, _state: &dyn Session, projection: Option<&Vec<usize>>, _filters: &[Expr],
        _limit: Option<usize>,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        use datafusion::datasource::memory::MemorySourceConfig;
        use datafusion::physical_expr::{LexOrdering, PhysicalSortExpr};
        use datafusion::physical_plan::projection::ProjectionExec;
        use datafusion::physical_plan::sorts::sort::SortExec;

        // The input in one partition, sorted here: an engine on the far side of the FFI
        // sees this plan whole and cannot add the sort the node requires.
        let input = MemorySourceConfig::try_new_exec(
            std::slice::from_ref(&self.input),
            self.input_schema.clone(),
            None,
        )?;
        let ts = col(&self.args.ts, &self.input_schema)?;
        let ascending = datafusion::arrow::compute::SortOptions {
            descending: false,
            nulls_first: false,
        };
        let ordering =
            LexOrdering::new([PhysicalSortExpr::new(ts, ascending)]).expect("one sort expression");
        let sorted = Arc::new(SortExec::new(ordering, input));
        let source = self.registry.get(&self.args.model).map_err(to_df)?;
        let scored: Arc<dyn ExecutionPlan> =
            Arc::new(BoostScoreExec::try_new(sorted, source, self.args.clone())?);
        let Some(projection) = projection else {
            return Ok(scored);
        };
        let columns = (projection.iter())
            .map(|&i| {
                let name = self.schema.field(i).name();
                Ok((col(name, &self.schema)?, name.clone()))
            })
            .collect::<DfResult<Vec<_>>>()?;
        Ok(Arc::new(ProjectionExec::try_new(columns, scored)?))
    }
}
