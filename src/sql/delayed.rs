//! `SELECT * FROM boost_score_delayed('model', (SELECT … events), (SELECT … labels), 'label',
//! 'id', 'ts' [, 'outcomes'])`: delayed labels in SQL, the events and the labels as two
//! relations, planned as a node of its own over both.
//!
//! The events are scored when they arrive, in `ts` order; the labels (columns `id`, `label`
//! and `ts`) are learnt when they arrive, also in `ts` order, each for the event of its id
//! ([`crate::runtime::Cursor::labels`]); a label at `ts` is learnt before the events
//! after `ts` and before an event at the same `ts` ([`crate::runtime::TimeMerge`]). The
//! result is the events with `predicted_<label>` and `predicted_<label>_probs` appended; with
//! `'outcomes'`, it is instead the labels with the class predicted for each one's event,
//! what the label did and whether the prediction was right. An event row that carries its
//! own label is test-then-train. The model's features are the events' columns other than
//! the label, `id` and `ts` (a checkpoint's model reads its own).
//!
//! Planning: both inputs are required as one partition each, sorted by `ts` ascending
//! (DataFusion adds the sorts and merges only where an input does not provide them, so
//! inputs declared sorted, such as unbounded streams, are taken as they arrive). The node is
//! unbounded if either input is. A query is a pure function of its inputs and the registered
//! model: the registered model is not changed (a live model is refused: its pending events
//! would have to be committed with it, which only a live job does).

use std::fmt;
use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, SchemaRef};
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DFSchema, DFSchemaRef, DataFusionError, Result as DfResult, plan_err};
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{Expr, LogicalPlan, UserDefinedLogicalNodeCore};
use datafusion::physical_expr::expressions::col;
use datafusion::physical_expr::{EquivalenceProperties, OrderingRequirements, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, Distribution, ExecutionPlan, ExecutionPlanProperties,
    InputDistributionRequirements, Partitioning, PlanProperties, SendableRecordBatchStream,
};
use futures::StreamExt;

use super::registry::{ModelRegistry, ModelSource};
use super::{ascending, from_stream_error, to_df};
use crate::runtime::delay::{DelayColumns, DelayedState, PendingLimits};
use crate::runtime::outcome_schema;
use crate::runtime::stream::{DelayedBatch, DelayedStream};

/// The function's name in SQL.
pub const NAME: &str = "boost_score_delayed";
/// How it is called.
pub const USAGE: &str = "boost_score_delayed('model', (SELECT events), (SELECT labels), 'label', 'id', 'ts' [, 'outcomes'])";

/// What `boost_score_delayed` was asked for.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Hash)]
pub(super) struct DelayedArguments {
    pub model: String,
    pub label: String,
    pub id: String,
    pub ts: String,
    /// Return the labels' outcomes rather than the scored events.
    pub outcomes: bool,
}

impl DelayedArguments {
    fn origin(&self) -> String {
        format!("{NAME}('{}')", self.model)
    }

    fn columns(&self) -> DelayColumns {
        DelayColumns {
            id: self.id.clone(),
            time: self.ts.clone(),
        }
    }
}

impl fmt::Display for DelayedArguments {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "model={}, label={}, id={}, order_by={}{}",
            self.model,
            self.label,
            self.id,
            self.ts,
            if self.outcomes { ", outcomes" } else { "" }
        )
    }
}

/// The schema of the node's output: the scored events, or the labels' outcomes.
fn output_schema(
    source: &ModelSource, events: &datafusion::arrow::datatypes::Schema,
    labels: &datafusion::arrow::datatypes::Schema, args: &DelayedArguments,
) -> SchemaRef {
    let scored = source.output_schema(events, &args.label);
    if !args.outcomes {
        return scored;
    }
    // The predicted class has the type the events' prediction column has.
    let label_type = scored
        .field_with_name(&format!("predicted_{}", args.label))
        .map_or(DataType::Utf8, |f| f.data_type().clone());
    outcome_schema(labels, &args.label, &label_type)
}

/// The logical node over the events and the labels.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BoostScoreDelayedNode {
    events: LogicalPlan,
    labels: LogicalPlan,
    registry: ModelRegistry,
    args: DelayedArguments,
    schema: DFSchemaRef,
}

impl BoostScoreDelayedNode {
    pub(super) fn try_new(
        events: LogicalPlan, labels: LogicalPlan, registry: ModelRegistry, args: DelayedArguments,
    ) -> DfResult<Self> {
        let source = registry.get(&args.model).map_err(to_df)?;
        if matches!(source, ModelSource::Live(_)) {
            return plan_err!(
                "{}: a live model learns delayed labels in a `streamboost run` job; \
                 score with a config or a checkpoint here",
                args.origin()
            );
        }
        let required = [
            ("events", &events, vec![&args.id, &args.ts]),
            ("labels", &labels, vec![&args.id, &args.label, &args.ts]),
        ];
        for (which, plan, columns) in required {
            for column in columns {
                if plan.schema().field_with_unqualified_name(column).is_err() {
                    return plan_err!(
                        "{}: the {which} have no column `{column}` (columns: {})",
                        args.origin(),
                        plan.schema()
                            .fields()
                            .iter()
                            .map(|f| f.name().as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    );
                }
            }
        }
        if source.is_multi_label(events.schema().as_arrow(), &args.label) {
            return plan_err!(
                "{}: delayed labels are for multiclass streams",
                args.origin()
            );
        }
        let out = output_schema(
            &source,
            events.schema().as_arrow(),
            labels.schema().as_arrow(),
            &args,
        );
        let passed = if args.outcomes { &labels } else { &events };
        let qualified = passed
            .schema()
            .iter()
            .map(|(q, f)| (q.cloned(), f.clone()))
            .chain(
                out.fields()
                    .iter()
                    .skip(passed.schema().fields().len())
                    .map(|f| (None, f.clone())),
            )
            .collect();
        let schema = DFSchema::new_with_metadata(qualified, passed.schema().metadata().clone())?;
        Ok(BoostScoreDelayedNode {
            events,
            labels,
            registry,
            args,
            schema: Arc::new(schema),
        })
    }

    /// Its physical plan over the physical plans of its inputs.
    pub(super) fn exec(
        &self, events: Arc<dyn ExecutionPlan>, labels: Arc<dyn ExecutionPlan>,
    ) -> DfResult<BoostScoreDelayedExec> {
        let source = self.registry.get(&self.args.model).map_err(to_df)?;
        BoostScoreDelayedExec::try_new(events, labels, source, self.args.clone())
    }
}

impl PartialOrd for BoostScoreDelayedNode {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        match self.args.partial_cmp(&other.args) {
            Some(std::cmp::Ordering::Equal) => {
                (&self.events, &self.labels).partial_cmp(&(&other.events, &other.labels))
            }
            order => order,
        }
    }
}

impl UserDefinedLogicalNodeCore for BoostScoreDelayedNode {
    boost_exec!(node "BoostScoreDelayed");

    fn inputs(&self) -> Vec<&LogicalPlan> {
        vec![&self.events, &self.labels]
    }

    fn with_exprs_and_inputs(&self, exprs: Vec<Expr>, inputs: Vec<LogicalPlan>) -> DfResult<Self> {
        let Ok([events, labels]) = <[_; 2]>::try_from(inputs) else {
            return plan_err!("BoostScoreDelayed takes two inputs");
        };
        if !exprs.is_empty() {
            return plan_err!("BoostScoreDelayed takes no expressions");
        }
        BoostScoreDelayedNode::try_new(events, labels, self.registry.clone(), self.args.clone())
    }
}

/// The physical node: the events and the labels through one
/// [`crate::runtime::Cursor`] under delayed labels, merged by time.
#[derive(Debug)]
pub struct BoostScoreDelayedExec {
    events: Arc<dyn ExecutionPlan>,
    labels: Arc<dyn ExecutionPlan>,
    source: ModelSource,
    args: DelayedArguments,
    ts: [Arc<dyn PhysicalExpr>; 2],
    properties: Arc<PlanProperties>,
}

impl BoostScoreDelayedExec {
    fn try_new(
        events: Arc<dyn ExecutionPlan>, labels: Arc<dyn ExecutionPlan>, source: ModelSource,
        args: DelayedArguments,
    ) -> DfResult<Self> {
        let schema = output_schema(&source, &events.schema(), &labels.schema(), &args);
        let ts = [
            col(&args.ts, &events.schema())?,
            col(&args.ts, &labels.schema())?,
        ];
        let unbounded = events.boundedness().is_unbounded() || labels.boundedness().is_unbounded();
        let properties = PlanProperties::new(
            EquivalenceProperties::new(schema),
            Partitioning::UnknownPartitioning(1),
            EmissionType::Incremental,
            if unbounded {
                Boundedness::Unbounded {
                    requires_infinite_memory: false,
                }
            } else {
                Boundedness::Bounded
            },
        );
        Ok(BoostScoreDelayedExec {
            events,
            labels,
            source,
            args,
            ts,
            properties: Arc::new(properties),
        })
    }
}

boost_exec!(display BoostScoreDelayedExec);

impl ExecutionPlan for BoostScoreDelayedExec {
    boost_exec!(plan);

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.events, &self.labels]
    }

    fn input_distribution_requirements(&self) -> InputDistributionRequirements {
        InputDistributionRequirements::new(vec![
            Distribution::SinglePartition,
            Distribution::SinglePartition,
        ])
    }

    fn required_input_ordering(&self) -> Vec<Option<OrderingRequirements>> {
        self.ts.iter().map(ascending).collect()
    }

    fn maintains_input_order(&self) -> Vec<bool> {
        vec![!self.args.outcomes, self.args.outcomes]
    }

    fn with_new_children(
        self: Arc<Self>, children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        let [events, labels] = <[_; 2]>::try_from(children)
            .map_err(|_| DataFusionError::Plan("BoostScoreDelayedExec has two inputs".into()))?;
        let (source, args) = (self.source.clone(), self.args.clone());
        Ok(Arc::new(Self::try_new(events, labels, source, args)?))
    }

    fn execute(
        &self, partition: usize, context: Arc<TaskContext>,
    ) -> DfResult<SendableRecordBatchStream> {
        if partition != 0 {
            return plan_err!("BoostScoreDelayedExec has one partition, not {partition}");
        }
        let events = self.events.execute(0, context.clone())?;
        let labels = self.labels.execute(0, context)?;
        let args = &self.args;
        let not_features = [args.id.as_str(), args.ts.as_str()];
        let mut operator = self
            .source
            .operator(
                self.events.schema(),
                &args.label,
                &not_features,
                &args.origin(),
            )
            .map_err(to_df)?;
        if operator.delay_stats().is_none() {
            let state =
                DelayedState::new(args.columns(), PendingLimits::default()).map_err(to_df)?;
            operator.delay_labels(state).map_err(to_df)?;
        }
        let outcomes = args.outcomes;
        let stream =
            DelayedStream::new(events, labels, operator, &args.ts).filter_map(move |out| {
                let kept = match out {
                    Ok(DelayedBatch::Scored(b)) if !outcomes => Some(Ok(b)),
                    Ok(DelayedBatch::Outcomes(b)) if outcomes => Some(Ok(b)),
                    Ok(_) => None,
                    Err(e) => Some(Err(from_stream_error(e))),
                };
                std::future::ready(kept)
            });
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            self.schema(),
            stream,
        )))
    }
}
