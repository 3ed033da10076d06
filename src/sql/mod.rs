//! DataFusion SQL over named models.
//!
//! | SQL | what |
//! |---|---|
//! | `boost_prequential('m', label, f1, …) OVER ([PARTITION BY key] ORDER BY ts)` | test-then-train in window order, one model per partition ([`prequential`]) |
//! | `boost_predict('m', f1, …)`, `boost_predict_proba('m', f1, …)` | scoring with a frozen trained model ([`predict`]) |
//! | `SELECT * FROM boost_models()` | the registered models ([`models`]) |
//!
//! Models are registered by name in a [`ModelRegistry`]: a config with its class set (a
//! fresh model per query), or a checkpoint. [`register_all`] adds every function to a
//! session. Training through SQL never changes a registered model, so a query is a pure
//! function of its input and the registry.

pub mod models;
pub mod predict;
pub mod prequential;
pub mod registry;

use std::sync::Arc;

use datafusion::common::{DataFusionError, ScalarValue};
use datafusion::logical_expr::{ScalarUDF, WindowUDF};
use datafusion::prelude::SessionContext;

pub use registry::{ModelRegistry, ModelSource};

/// Registers every streamboost SQL function in `ctx`, over the models of `registry`.
pub fn register_all(ctx: &SessionContext, registry: &ModelRegistry) {
    ctx.register_udwf(WindowUDF::new_from_impl(
        prequential::BoostPrequential::new(registry.clone()),
    ));
    for proba in [false, true] {
        ctx.register_udf(ScalarUDF::new_from_impl(predict::BoostPredict::new(
            registry.clone(),
            proba,
        )));
    }
    ctx.register_udtf(
        "boost_models",
        Arc::new(models::BoostModels::new(registry.clone())),
    );
}

/// The model name a function was given: its first argument, a string literal.
pub(crate) fn model_name(first: Option<&ScalarValue>) -> Option<String> {
    first?.try_as_str().flatten().map(str::to_string)
}

/// A streamboost error as DataFusion's.
pub(crate) fn to_df(e: crate::Error) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}
