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
//! [`DelayedStream`] does the same for events and labels that arrive apart: two input
//! streams, merged by their time column ([`TimeMerge`]), events scored and labels learnt
//! ([`crate::runtime::Cursor::labels`]); it yields the scored events and, for each
//! label batch, its outcomes. The same cancel safety holds: the model has learnt exactly
//! the label batches whose outcomes were returned.
//!
//! Any `Stream` of `Result<RecordBatch, E>` fits, DataFusion's `SendableRecordBatchStream`
//! among them. The input must be `Unpin` (pin a stream that is not with `Box::pin`).

use std::pin::Pin;
use std::task::{Context, Poll};

use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;
use futures::{Stream, StreamExt};

use crate::runtime::{BatchOperator, Side, TimeMerge};
use crate::{Error, Result};

/// A stream of record batches: the input of the streams below.
pub trait BatchInput: Stream<Item = std::result::Result<RecordBatch, Self::Error>> + Unpin {
    /// What the stream fails with.
    type Error: std::error::Error + Send + Sync + 'static;
}

impl<T, E> BatchInput for T
where
    T: Stream<Item = std::result::Result<RecordBatch, E>> + Unpin,
    E: std::error::Error + Send + Sync + 'static,
{
    type Error = E;
}

/// The output of a [`BatchOperator`] (a [`crate::runtime::Cursor`], or a
/// [`crate::runtime::KeyedOperator`]) applied to each batch of `input`, in order.
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

impl<S: BatchInput, O: BatchOperator + Unpin> Stream for ScoredStream<S, O> {
    type Item = Result<RecordBatch>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if let Some(paused) = pause(this.done, &mut this.yielded, cx) {
            return paused;
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

/// What a [`DelayedStream`] yields.
#[derive(Debug, Clone)]
pub enum DelayedBatch {
    /// Events, with their predictions appended.
    Scored(RecordBatch),
    /// Labels, with what each did ([`crate::runtime::outcome_schema`]).
    Outcomes(RecordBatch),
}

/// A [`BatchOperator`] under delayed labels over a stream of events and a stream of labels,
/// merged by their time column (see the module doc).
pub struct DelayedStream<S, L, O> {
    events: S,
    labels: L,
    operator: O,
    merge: TimeMerge,
    yielded: bool,
    done: bool,
}

impl<S, L, O> DelayedStream<S, L, O> {
    /// Scores the `events` and learns the `labels` with `operator` (whose delayed labels
    /// are set, [`crate::runtime::Cursor::delay_labels`]), in the order of their
    /// column `time`.
    pub fn new(events: S, labels: L, operator: O, time: &str) -> Self {
        DelayedStream {
            events,
            labels,
            operator,
            merge: TimeMerge::new(time),
            yielded: true,
            done: false,
        }
    }

    /// The operator, with its model, counters and pending events as far as the streams have
    /// gone.
    pub fn operator(&self) -> &O {
        &self.operator
    }

    /// The operator back, e.g. to checkpoint it.
    pub fn into_operator(self) -> O {
        self.operator
    }
}

impl<S, L, O> Stream for DelayedStream<S, L, O>
where
    S: BatchInput,
    L: BatchInput<Error = S::Error>,
    O: BatchOperator + Unpin,
{
    type Item = Result<DelayedBatch>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if let Some(paused) = pause(this.done, &mut this.yielded, cx) {
            return paused;
        }
        loop {
            if let Some((side, rows)) = this.merge.step() {
                this.yielded = false;
                let out = match side {
                    Side::Events => this.operator.process(&rows).map(DelayedBatch::Scored),
                    Side::Labels => this.operator.labels(&rows).map(DelayedBatch::Outcomes),
                };
                // An error stops the stream: later rows must not be learnt out of order.
                this.done = out.is_err();
                return Poll::Ready(Some(out));
            }
            let Some(side) = this.merge.needs() else {
                this.done = true;
                return match this.operator.finish() {
                    Ok(()) => Poll::Ready(None),
                    Err(e) => Poll::Ready(Some(Err(e))),
                };
            };
            let polled = match side {
                Side::Events => this.events.poll_next_unpin(cx),
                Side::Labels => this.labels.poll_next_unpin(cx),
            };
            let pushed = match polled {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(None) => {
                    this.merge.end(side);
                    Ok(())
                }
                Poll::Ready(Some(Err(e))) => Err(Error::InputStream {
                    source: Box::new(e),
                }),
                Poll::Ready(Some(Ok(batch))) => {
                    let name = match side {
                        Side::Events => "events",
                        Side::Labels => "labels",
                    };
                    this.merge.push(side, batch, std::path::Path::new(name))
                }
            };
            if let Err(e) = pushed {
                this.done = true;
                return Poll::Ready(Some(Err(e)));
            }
        }
    }
}

/// What a stream's `poll_next` returns before it reads its input, if anything: the end once
/// it is `done`, or `Pending` to give the executor a turn between two batches (a batch is
/// CPU work, and a stream that never returns `Pending` would starve the tasks beside it),
/// with the waker already woken.
fn pause<T>(done: bool, yielded: &mut bool, cx: &mut Context<'_>) -> Option<Poll<Option<T>>> {
    if done {
        return Some(Poll::Ready(None));
    }
    if *yielded {
        return None;
    }
    *yielded = true;
    cx.waker().wake_by_ref();
    Some(Poll::Pending)
}
