//! DataFusion SQL over named models.
//!
//! | SQL | what |
//! |---|---|
//! | `SELECT * FROM boost_score('m', (SELECT …), 'label', 'ts' [, 'key'])` | test-then-train in `ts` order as a plan node, one model per key ([`score`]) |
//! | `SELECT * FROM boost_score_delayed('m', (SELECT …), (SELECT …), 'label', 'id', 'ts' [, 'outcomes'])` | events scored on arrival, labels learnt when they come later ([`delayed`]) |
//! | `boost_prequential('m', label, f1, …) OVER ([PARTITION BY key] ORDER BY ts)` | the same as a window function, one model per partition ([`prequential`]) |
//! | `boost_predict('m', f1, …)`, `boost_predict_proba('m', f1, …)` | scoring with a frozen trained model ([`predict`]) |
//! | `SELECT * FROM boost_models()` | the registered models ([`models`]) |
//!
//! Models are registered by name in a [`ModelRegistry`]: a config with its class set (a
//! fresh model per query), a checkpoint, or a live model ([`live`]). [`register_all`] adds
//! every function to a session. Training through SQL changes only a live model (and only
//! through `boost_score` without a key); over any other model a query is a pure function
//! of its input and the registry. With the `ballista` feature, `sql::distributed` runs the same
//! SQL on a Ballista cluster.

/// What the `boost_score` plan nodes share: inside a logical node's
/// `UserDefinedLogicalNodeCore` impl, its name, schema, (no) expressions and EXPLAIN line;
/// for an exec, its EXPLAIN line (`DisplayAs`) and, inside its `ExecutionPlan` impl, its
/// name, cached plan properties and (no) expressions.
macro_rules! boost_exec {
    (node $name:literal) => {
        fn name(&self) -> &str {
            $name
        }

        fn schema(&self) -> &DFSchemaRef {
            &self.schema
        }

        fn expressions(&self) -> Vec<Expr> {
            vec![]
        }

        fn fmt_for_explain(&self, f: &mut fmt::Formatter) -> fmt::Result {
            write!(f, "{}: {}", $name, self.args)
        }
    };
    (display $t:ident) => {
        impl DisplayAs for $t {
            fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
                write!(f, "{}: {}", stringify!($t), self.args)
            }
        }
    };
    (plan) => {
        fn name(&self) -> &str {
            Self::static_name()
        }

        fn properties(&self) -> &Arc<PlanProperties> {
            &self.properties
        }

        fn apply_expressions(
            &self, _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> DfResult<TreeNodeRecursion>,
        ) -> DfResult<TreeNodeRecursion> {
            // No expressions: the operator reads its columns (key included) by name, and the
            // ordering and the partitioning are requirements on the inputs.
            Ok(TreeNodeRecursion::Continue)
        }
    };
}

pub mod delayed;
#[cfg(feature = "ballista")]
pub mod distributed;
pub mod live;
pub mod models;
pub mod predict;
pub mod prequential;
pub mod registry;
pub mod score;
pub mod sources;

use std::sync::Arc;

use datafusion::arrow::array::{Array, AsArray, RecordBatch, RecordBatchOptions};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Schema};
use datafusion::common::{DataFusionError, Result as DfResult, ScalarValue};
use datafusion::execution::session_state::SessionStateBuilder;
use datafusion::logical_expr::{ColumnarValue, ScalarUDF, WindowUDF};
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_expr::expressions::Literal;
use datafusion::prelude::SessionContext;

pub use registry::{ModelRegistry, ModelSource};

/// Registers every streamboost SQL function in `ctx`, over the models of `registry`.
///
/// `boost_score` is a plan node of its own, so this also sets the session's query planner
/// to DataFusion's with [`score::BoostScoreExtensionPlanner`]; a session that needs a query
/// planner of its own adds that extension planner to it instead.
pub fn register_all(ctx: &SessionContext, registry: &ModelRegistry) -> DfResult<()> {
    {
        let state = ctx.state_ref();
        let mut state = state.write();
        *state = SessionStateBuilder::new_from_existing(state.clone())
            .with_query_planner(Arc::new(score::BoostQueryPlanner))
            .build();
    }
    ctx.register_relation_planner(Arc::new(score::BoostScoreRelation::new(registry.clone())))?;
    register_functions(ctx, registry)
}

/// Registers the streamboost window, scalar and table functions in `ctx`, over the models of
/// `registry`; not the `boost_score` relation nor the query planner. What a Ballista client
/// needs again after Ballista's upgrade of its session, which replaces the functions and
/// keeps the relation planners.
pub fn register_functions(ctx: &SessionContext, registry: &ModelRegistry) -> DfResult<()> {
    let (scalars, windows) = functions(registry);
    scalars.into_iter().for_each(|f| ctx.register_udf(f));
    windows.into_iter().for_each(|f| ctx.register_udwf(f));
    ctx.register_udtf(
        "boost_models",
        Arc::new(models::BoostModels::new(registry.clone())),
    );
    Ok(())
}

/// The scalar functions (`boost_predict`, `boost_predict_proba`) and the window function
/// (`boost_prequential`) over the models of `registry`: what [`register_functions`] registers,
/// and what another engine takes through DataFusion's FFI (the Python package hands them to
/// datafusion-python).
pub fn functions(registry: &ModelRegistry) -> (Vec<ScalarUDF>, Vec<WindowUDF>) {
    let scalars = [false, true]
        .map(|proba| ScalarUDF::new_from_impl(predict::BoostPredict::new(registry.clone(), proba)));
    let window = WindowUDF::new_from_impl(prequential::BoostPrequential::new(registry.clone()));
    (scalars.into(), vec![window])
}

/// The model name a function was given: its first argument, a string literal.
pub(crate) fn model_name(first: Option<&ScalarValue>) -> Option<String> {
    first?.try_as_str().flatten().map(str::to_string)
}

/// The model name a scalar function was given as its first argument: a string literal, or
/// the column of its value a literal becomes when it crosses DataFusion's FFI
/// (datafusion-python), holding it on every row.
pub(crate) fn model_name_of(first: &ColumnarValue) -> Option<String> {
    match first {
        ColumnarValue::Scalar(value) => model_name(Some(value)),
        ColumnarValue::Array(column) => {
            let text = cast(column, &DataType::Utf8).ok()?;
            let text = text.as_string::<i32>();
            let value = (!text.is_empty() && text.null_count() == 0).then(|| text.value(0))?;
            text.iter()
                .all(|v| v == Some(value))
                .then(|| value.to_string())
        }
    }
}

/// The text of a literal argument of a window function: DataFusion's own `Literal`, or an
/// expression of no column that evaluates to one (a literal that crossed DataFusion's FFI).
pub(crate) fn literal_text(expr: &Arc<dyn PhysicalExpr>) -> Option<String> {
    if let Some(literal) = expr.downcast_ref::<Literal>() {
        return model_name(Some(literal.value()));
    }
    let one_row = RecordBatchOptions::new().with_row_count(Some(1));
    let batch =
        RecordBatch::try_new_with_options(Arc::new(Schema::empty()), vec![], &one_row).ok()?;
    model_name_of(&expr.evaluate(&batch).ok()?)
}

/// A streamboost error as DataFusion's.
pub(crate) fn to_df(e: crate::Error) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}

/// An error of a scored stream as DataFusion's: the input's own error when it came from
/// upstream, the operator's otherwise.
pub(crate) fn from_stream_error(e: crate::Error) -> DataFusionError {
    match e {
        crate::Error::InputStream { source } => match source.downcast::<DataFusionError>() {
            Ok(e) => *e,
            Err(other) => DataFusionError::External(other),
        },
        e => to_df(e),
    }
}

/// The requirement that an input come sorted by `ts`, ascending, nulls last: the order a
/// scoring node learns its rows in.
pub(crate) fn ascending(
    ts: &std::sync::Arc<dyn datafusion::physical_expr::PhysicalExpr>,
) -> Option<datafusion::physical_expr::OrderingRequirements> {
    use datafusion::physical_expr::{
        LexRequirement, OrderingRequirements, PhysicalSortRequirement,
    };
    let nulls_last = datafusion::arrow::compute::SortOptions {
        descending: false,
        nulls_first: false,
    };
    let ts = PhysicalSortRequirement::new(ts.clone(), Some(nulls_last));
    LexRequirement::new([ts]).map(OrderingRequirements::new)
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::array::{ArrayRef, StringArray};
    use datafusion::physical_expr::expressions::{Column, lit};

    use super::*;

    /// A model name reads the same as a literal and as the constant column a literal becomes
    /// across DataFusion's FFI; a column that varies, or holds a null, names no model.
    #[test]
    fn a_model_name_reads_from_a_literal_or_its_constant_column() {
        let scalar = ColumnarValue::Scalar(ScalarValue::from("m"));
        assert_eq!(model_name_of(&scalar).as_deref(), Some("m"));
        let column = |values: Vec<Option<&str>>| {
            let array: ArrayRef = Arc::new(StringArray::from(values));
            ColumnarValue::Array(array)
        };
        assert_eq!(
            model_name_of(&column(vec![Some("m"); 3])).as_deref(),
            Some("m")
        );
        assert_eq!(model_name_of(&column(vec![Some("m"), Some("n")])), None);
        assert_eq!(model_name_of(&column(vec![Some("m"), None])), None);
        assert_eq!(model_name_of(&column(vec![])), None);
        assert_eq!(literal_text(&lit("m")).as_deref(), Some("m"));
        let not_literal: Arc<dyn PhysicalExpr> = Arc::new(Column::new("model", 0));
        assert_eq!(literal_text(&not_literal), None);
    }
}
