//! `boost_predict('model', feature, …)` and `boost_predict_proba('model', feature, …)`:
//! scoring with a frozen snapshot of a trained (checkpoint-loaded) model. Features are
//! matched to the model's by column name. Scoring never changes the model, so the
//! functions are safe in any partition and give the same result whatever the plan.
//! The prediction is the class name; the probabilities are a list in class order (the
//! class names are in `boost_models()`).

use std::path::Path;
use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, Float64Builder, ListBuilder, StringBuilder};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::common::{Result as DfResult, exec_err, plan_err};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDFImpl, Signature, Volatility,
};

use super::registry::{ModelRegistry, ModelSource};
use super::{model_name_of, to_df};
use crate::Classifier;
use crate::columnar::RowEncoder;
use crate::core::math::argmax;

/// `boost_predict` (`proba = false`) or `boost_predict_proba` (`proba = true`).
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct BoostPredict {
    signature: Signature,
    registry: ModelRegistry,
    proba: bool,
}

impl BoostPredict {
    /// The function over the models of `registry`.
    pub fn new(registry: ModelRegistry, proba: bool) -> Self {
        BoostPredict {
            signature: Signature::variadic_any(Volatility::Stable),
            registry,
            proba,
        }
    }
}

impl ScalarUDFImpl for BoostPredict {
    fn name(&self) -> &str {
        if self.proba {
            "boost_predict_proba"
        } else {
            "boost_predict"
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, arg_types: &[DataType]) -> DfResult<DataType> {
        if arg_types.len() < 2 {
            return plan_err!(
                "{}('model', feature, ...) takes a model name and its features",
                self.name()
            );
        }
        Ok(if self.proba {
            DataType::List(Arc::new(Field::new("item", DataType::Float64, true)))
        } else {
            DataType::Utf8
        })
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        let Some(name) = model_name_of(&args.args[0]) else {
            return exec_err!(
                "{}: the first argument must be a model name in quotes",
                self.name()
            );
        };
        let source = self.registry.get(&name).map_err(to_df)?;
        if let ModelSource::Live(slot) = &source
            && slot.store().is_some()
        {
            return exec_err!(
                "{}: model `{name}` is one model per key; score it with boost_score(…, 'key')",
                self.name()
            );
        }
        let Some(frozen) = source.frozen() else {
            return exec_err!(
                "{}: model `{name}` has not been trained; load a checkpoint to score with it",
                self.name()
            );
        };
        let (model, stream) = (&frozen.0, &frozen.1);
        let fields: Vec<Arc<Field>> = args.arg_fields[1..]
            .iter()
            .map(|f| Arc::new(f.as_ref().clone().with_nullable(true)))
            .collect();
        let schema = Arc::new(Schema::new(fields));
        let columns = ColumnarValue::values_to_arrays(&args.args[1..])?;
        let batch = RecordBatch::try_new(schema.clone(), columns)?;
        let source_name = format!("{}('{name}')", self.name());
        let mut encoder = RowEncoder::new(&stream.spec, &schema, &stream.encodings, &source_name)
            .map_err(to_df)?;
        let mut rows = Vec::new();
        encoder
            .encode(&batch, Path::new(&source_name), 0, &mut rows)
            .map_err(to_df)?;
        let (d, k) = (encoder.width(), model.n_classes());
        let n = batch.num_rows();
        let xs: Vec<&[f64]> = (0..n).map(|r| &rows[r * d..(r + 1) * d]).collect();
        let mut proba = vec![0.0; n * k];
        model.predict_proba_rows(&xs, &mut proba);
        let out: ArrayRef = if self.proba {
            let mut list = ListBuilder::with_capacity(Float64Builder::with_capacity(n * k), n);
            for p in proba.chunks_exact(k) {
                list.append_value(p.iter().map(|&v| Some(v)));
            }
            Arc::new(list.finish())
        } else {
            let mut names = StringBuilder::with_capacity(n, n * 8);
            for p in proba.chunks_exact(k) {
                names.append_value(stream.spec.classes.name(argmax(p)));
            }
            Arc::new(names.finish())
        };
        Ok(ColumnarValue::Array(out))
    }
}
