//! `boost_prequential('model', label, feature, …) OVER ([PARTITION BY key] ORDER BY ts)`:
//! the prequential surface as a window function. Each partition gets its own copy of the
//! named model (a fresh one for a registered config, the checkpoint's for a loaded one) and
//! streams its rows through a [`Cursor`] in window order: every row is predicted,
//! then learnt when its label is known. The result is the prediction, of the label's type.
//!
//! Rows are processed as they arrive (bounded execution): the output of a row depends
//! only on the rows before it, so DataFusion streams the window on unbounded input with
//! bounded buffering. A query never changes the registered model.

use std::ops::Range;
use std::sync::Arc;

use datafusion::arrow::array::ArrayRef;
use datafusion::arrow::datatypes::{Field, FieldRef, Schema, SchemaRef};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::common::{Result as DfResult, ScalarValue, plan_err};
use datafusion::logical_expr::function::{PartitionEvaluatorArgs, WindowUDFFieldArgs};
use datafusion::logical_expr::{PartitionEvaluator, Signature, Volatility, WindowUDFImpl};

use super::registry::ModelRegistry;
use super::{literal_text, to_df};
use crate::model::Model;
use crate::runtime::Cursor;

/// The `boost_prequential` window function.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct BoostPrequential {
    signature: Signature,
    registry: ModelRegistry,
}

impl BoostPrequential {
    /// The function over the models of `registry`.
    pub fn new(registry: ModelRegistry) -> Self {
        BoostPrequential {
            signature: Signature::variadic_any(Volatility::Immutable),
            registry,
        }
    }
}

impl WindowUDFImpl for BoostPrequential {
    fn name(&self) -> &str {
        "boost_prequential"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn field(&self, args: WindowUDFFieldArgs) -> DfResult<FieldRef> {
        let fields = args.input_fields();
        if fields.len() < 3 {
            return plan_err!(
                "boost_prequential('model', label, feature, ...) takes a model name, a label and at least one feature"
            );
        }
        Ok(Arc::new(Field::new(
            args.name(),
            fields[1].data_type().clone(),
            true,
        )))
    }

    fn partition_evaluator(
        &self, args: PartitionEvaluatorArgs,
    ) -> DfResult<Box<dyn PartitionEvaluator>> {
        let Some(name) = literal_text(&args.input_exprs()[0]) else {
            return plan_err!(
                "{}: the first argument must be a model name in quotes",
                self.name()
            );
        };
        let fields: Vec<Arc<Field>> = args.input_fields()[1..]
            .iter()
            .map(|f| Arc::new(f.as_ref().clone().with_nullable(true)))
            .collect();
        let label = fields[0].name().clone();
        let schema: SchemaRef = Arc::new(Schema::new(fields));
        let operator = self
            .registry
            .get(&name)
            .and_then(|source| {
                source.operator(
                    schema.clone(),
                    &label,
                    &[],
                    &format!("boost_prequential('{name}')"),
                )
            })
            .map_err(to_df)?;
        Ok(Box::new(Evaluator { operator, schema }))
    }
}

/// One partition's model, fed its rows in order.
#[derive(Debug)]
struct Evaluator {
    operator: Cursor<Model>,
    /// The label, then the features.
    schema: SchemaRef,
}

impl Evaluator {
    /// Predicts-then-learns `rows` of the argument columns; returns the predictions.
    fn process(&mut self, values: &[ArrayRef], rows: Range<usize>) -> DfResult<ArrayRef> {
        let n = self.schema.fields().len();
        // values[0] is the model name; ORDER BY columns may follow the arguments.
        let columns: Vec<ArrayRef> = values[1..=n]
            .iter()
            .map(|a| a.slice(rows.start, rows.len()))
            .collect();
        let batch = RecordBatch::try_new(self.schema.clone(), columns)?;
        let out = self.operator.process(&batch).map_err(to_df)?;
        Ok(out.column(n).clone())
    }
}

impl PartitionEvaluator for Evaluator {
    fn evaluate_all(&mut self, values: &[ArrayRef], num_rows: usize) -> DfResult<ArrayRef> {
        self.process(values, 0..num_rows)
    }

    fn evaluate(&mut self, values: &[ArrayRef], range: &Range<usize>) -> DfResult<ScalarValue> {
        let row = range.start..range.start + 1;
        ScalarValue::try_from_array(&self.process(values, row)?, 0)
    }

    fn supports_bounded_execution(&self) -> bool {
        true
    }

    fn uses_window_frame(&self) -> bool {
        false
    }

    fn is_causal(&self) -> bool {
        true
    }
}
