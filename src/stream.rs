//! A [`BatchOperator`] over an asynchronous stream of record batches.
//!
//! [`ScoredStream`] pulls a batch from its input, scores and learns it with the operator
//! and yields the result, one batch per poll. Between batches it returns to the executor
//! once (a `Pending` with an immediate wake-up, as `tokio::task::yield_now` does), so a long
//! replay from an always-ready source never starves the other tasks of its runtime. It
//! works under any executor; nothing is spawned.
//!
//! Cancel safety: a batch is processed inside a single poll, between taking it from the
//! input and returning its output, so dropping the stream at any await point leaves the
//! model having learnt exactly the batches whose outputs were returned.
//!
//! Any `Stream` of `Result<RecordBatch, E>` fits, DataFusion's `SendableRecordBatchStream`
//! among them. The input must be `Unpin` (pin a stream that is not with `Box::pin`).

use std::pin::Pin;
use std::task::{Context, Poll};

use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;
use futures::{Stream, StreamExt};

use crate::columnar::BatchOperator;
use crate::{Error, Result};

/// The output of a [`BatchOperator`] (a [`crate::columnar::BoostOperator`], or a
/// [`crate::columnar::KeyedOperator`]) applied to each batch of `input`, in order.
pub struct ScoredStream<S, O> {
    input: S,
    operator: O,
    /// Whether the executor has had its turn since the last batch.
    yielded: bool,
    done: bool,
}

impl<S, O> ScoredStream<S, O> {
    /// Scores and learns every batch of `input` with `operator`.
    pub fn new(input: S, operator: O) -> Self {
        ScoredStream {
            input,
            operator,
            yielded: true,
            done: false,
        }
    }

    /// The output schema (the input's columns and the prediction columns), known before the
    /// first batch.
    pub fn schema(&self) -> SchemaRef
    where
        O: BatchOperator,
    {
        self.operator.schema()
    }

    /// The operator, with its model and counters as far as the stream has gone.
    pub fn operator(&self) -> &O {
        &self.operator
    }

    /// The operator back, e.g. to checkpoint its model once the stream is done.
    pub fn into_operator(self) -> O {
        self.operator
    }
}

impl<S, E, O> Stream for ScoredStream<S, O>
where
    S: Stream<Item = std::result::Result<RecordBatch, E>> + Unpin,
    E: std::error::Error + Send + Sync + 'static,
    O: BatchOperator + Unpin,
{
    type Item = Result<RecordBatch>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if this.done {
            return Poll::Ready(None);
        }
        if !this.yielded {
            this.yielded = true;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        let batch = match this.input.poll_next_unpin(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(None) => {
                this.done = true;
                return match this.operator.finish() {
                    Ok(()) => Poll::Ready(None),
                    Err(e) => Poll::Ready(Some(Err(e))),
                };
            }
            Poll::Ready(Some(Err(e))) => {
                this.done = true;
                return Poll::Ready(Some(Err(Error::InputStream {
                    source: Box::new(e),
                })));
            }
            Poll::Ready(Some(Ok(batch))) => batch,
        };
        this.yielded = false;
        let out = this.operator.process(&batch);
        // An error stops the stream: later rows must not be learnt out of order.
        this.done = out.is_err();
        Poll::Ready(Some(out))
    }
}
