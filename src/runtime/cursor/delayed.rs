//! Delayed labels over record batches: an operator scores *event* batches as they arrive and
//! learns from *label* batches that come later ([`crate::runtime::delay`] has the semantics).
//!
//! [`Cursor::delay_labels`] turns an operator's stream into events: a row whose own
//! label is null (or that has no label column) is scored and waits under its id, at its time,
//! in a pending store that is part of the operator's state (and of its checkpoint); a row
//! that carries its label is test-then-train, as without delay. [`Cursor::labels`]
//! takes a batch of labels (id, label, time columns) and returns one *outcome* row for each
//! label row, in order: the input's columns, then the class predicted for the event when it
//! arrived, what the label did (`learnt`, `held`, `unmatched`, `unknown-label`, `null-id`) and
//! whether the prediction was right — what a monitoring dashboard wants.
//!
//! **Order.** The caller interleaves the two inputs by time: a label of time `t` is given
//! before any event of a time after `t` ([`crate::runtime::stream::DelayedStream`] merges two streams
//! so). Each input's time column must not decrease; a time that does, or a null time, is an
//! error naming the row and column.
//!
//! **Restart, cancel, crash.** The pending events and held labels are saved with the model
//! ([`crate::checkpoint::StreamState::delayed`]); a restart from a checkpoint goes on with the
//! events that waited at that commit, so a stream fed again from the commit's position ends
//! as an uninterrupted one. What arrived after the last commit is lost with the process and
//! must be fed again. The store is bounded ([`PendingLimits`]); what leaves it unlearnt is
//! counted ([`DelayStats`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, BooleanArray, StringArray, UInt32Array};
use arrow::compute::{cast, take};
use arrow::datatypes::{DataType, Field, Float64Type, Int64Type, Schema, SchemaRef};
use arrow::record_batch::RecordBatch;

use super::Cursor;
use crate::columnar::{BoostOperator, utf8};
use crate::core::ClassId;
use crate::learner::{Classifier, Ranker};
use crate::runtime::delay::{DelayStats, DelayedLearner, DelayedState, LabelOutcome};
use crate::{Error, Result};

/// The values of column `name` of `batch` as times, checked to be present and not to
/// decrease from `last` on; updates `last`.
fn times(
    batch: &RecordBatch, name: &str, source: &Path, last: &mut Option<f64>,
) -> Result<Vec<f64>> {
    let column = batch
        .column_by_name(name)
        .ok_or_else(|| Error::missing_column(source, name, &batch.schema()))?;
    let unsupported = |e: arrow::error::ArrowError| Error::UnsupportedColumnType {
        file: source.to_path_buf(),
        column: name.to_string(),
        data_type: format!("{} ({e}), not a time", column.data_type()),
    };
    let values: Vec<Option<f64>> = match column.data_type() {
        DataType::Timestamp(..) | DataType::Date32 | DataType::Date64 => {
            let ints = cast(column, &DataType::Int64).map_err(unsupported)?;
            ints.as_primitive::<Int64Type>()
                .iter()
                .map(|v| v.map(|v| v as f64))
                .collect()
        }
        _ => {
            let floats = cast(column, &DataType::Float64).map_err(unsupported)?;
            floats.as_primitive::<Float64Type>().iter().collect()
        }
    };
    values
        .into_iter()
        .enumerate()
        .map(|(r, t)| {
            let bad = |what: &str| Error::InvalidRow {
                row: r as u64,
                message: format!("{}: column `{name}` {what}", source.display()),
            };
            let t = t.filter(|t| !t.is_nan()).ok_or_else(|| bad("is null"))?;
            if last.is_some_and(|l| t < l) {
                return Err(bad(&format!(
                    "goes back in time ({t} after {})",
                    last.unwrap_or_default()
                )));
            }
            *last = Some(t);
            Ok(t)
        })
        .collect()
}

/// What a label row did, as the `outcome` column spells it.
fn outcome_name(outcome: &LabelOutcome<String>) -> &'static str {
    match outcome {
        LabelOutcome::Learnt(_) => "learnt",
        LabelOutcome::Held => "held",
        LabelOutcome::Unmatched => "unmatched",
    }
}

/// The schema of the outcome rows for label batches of schema `labels`: its columns, then
/// `predicted_<label>` (as the label column's type), `outcome` and `correct`.
pub fn outcome_schema(labels: &Schema, label: &str, label_type: &DataType) -> SchemaRef {
    let mut fields: Vec<Field> = labels.fields().iter().map(|f| f.as_ref().clone()).collect();
    fields.push(Field::new(
        format!("predicted_{label}"),
        label_type.clone(),
        true,
    ));
    fields.push(Field::new("outcome", DataType::Utf8, false));
    fields.push(Field::new("correct", DataType::Boolean, true));
    Arc::new(Schema::new(fields))
}

impl<M: Classifier + Ranker> Cursor<M> {
    /// From now on, a row without its label is an event that waits for a label from
    /// [`Cursor::labels`], tied to it by `columns` (see the module doc); `state` is a
    /// checkpoint's, or a fresh [`DelayedState::new`]. Multi-label streams are refused.
    pub fn delay_labels(&mut self, state: DelayedState) -> Result<()> {
        if self.op.spec().is_multi_label() {
            return Err(Error::config(
                "label",
                "labels that arrive later are for multiclass streams; a multi-label stream \
                 carries its label sets in the event rows",
            ));
        }
        for column in [&state.columns.id, &state.columns.time] {
            if self.input_schema().index_of(column).is_err() {
                return Err(Error::missing_column(
                    self.op.source().to_path_buf(),
                    column.clone(),
                    self.input_schema(),
                ));
            }
        }
        self.delayed = Some(Box::new(state));
        Ok(())
    }

    /// What became of the events and labels, under delayed labels.
    pub fn delay_stats(&self) -> Option<DelayStats> {
        self.delayed.as_deref().map(DelayedState::stats)
    }

    /// The events of `batch` for [`BoostOperator::process`], under delayed labels: their
    /// ids and times, then `f` with the operator and them.
    pub(super) fn with_waiting<T>(
        &mut self, batch: &RecordBatch,
        f: impl FnOnce(&mut BoostOperator<M>, Option<&mut Waiting<'_>>) -> Result<T>,
    ) -> Result<T> {
        let Some(mut state) = self.delayed.take() else {
            return f(&mut self.op, None);
        };
        let result = (|| {
            let source = self.op.source().to_path_buf();
            let id_column = batch.column_by_name(&state.columns.id).ok_or_else(|| {
                Error::missing_column(&source, &state.columns.id, &batch.schema())
            })?;
            let ids = utf8(id_column, &source, &state.columns.id)?;
            let mut last = state.last_times.0;
            let times = times(batch, &state.columns.time, &source, &mut last)?;
            let mut waiting = Waiting {
                learner: &mut state.learner,
                ids: ids.as_string::<i32>(),
                times: &times,
            };
            let out = f(&mut self.op, Some(&mut waiting))?;
            state.last_times.0 = last;
            Ok(out)
        })();
        self.delayed = Some(state);
        result
    }

    /// Learns from a batch of labels (the id, label and time columns, in time order; other
    /// columns pass through) and returns one outcome row per label row, in order (see the
    /// module doc). A label outside the class set is counted in
    /// [`crate::runtime::OperatorStats::unknown_labels`], as in an event row.
    pub fn labels(&mut self, batch: &RecordBatch) -> Result<RecordBatch> {
        let Some(mut state) = self.delayed.take() else {
            return Err(Error::config(
                "labels",
                "the operator takes its labels in the event rows; call delay_labels first",
            ));
        };
        let result = self.learn_labels(&mut state, batch);
        self.delayed = Some(state);
        result
    }

    fn learn_labels(
        &mut self, state: &mut DelayedState, batch: &RecordBatch,
    ) -> Result<RecordBatch> {
        let source = PathBuf::from(format!("labels of {}", self.op.source().display()));
        let (label, columns) = (self.label().to_string(), state.columns.clone());
        let column = |name: &str| {
            batch
                .column_by_name(name)
                .ok_or_else(|| Error::missing_column(&source, name, &batch.schema()))
        };
        let ids = utf8(column(&columns.id)?, &source, &columns.id)?;
        let labels = utf8(column(&label)?, &source, &label)?;
        let (ids, labels) = (ids.as_string::<i32>(), labels.as_string::<i32>());
        let mut last = state.last_times.1;
        let times = times(batch, &columns.time, &source, &mut last)?;
        let class_ids = self.spec().classes.ids();
        let n = batch.num_rows();
        let (mut predicted, mut outcome, mut correct) = (
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
        );
        let learns = self.model().learns_online();
        for (r, &time) in times.iter().enumerate() {
            let (mut class, mut right) = (None, None);
            let name = if ids.is_null(r) {
                state.learner.count_null_id();
                "null-id"
            } else {
                match labels
                    .is_valid(r)
                    .then(|| class_ids.get(labels.value(r)))
                    .flatten()
                {
                    None => {
                        self.stats.unknown_labels += 1;
                        "unknown-label"
                    }
                    Some(&y) => {
                        let id = ids.value(r).to_string();
                        let result = state.learner.label(self.model_mut(), &id, y, time)?;
                        if let LabelOutcome::Learnt(event) = &result {
                            class = Some(event.predicted as u32);
                            right = Some(event.predicted == y);
                            self.stats.rows_learnt += u64::from(learns);
                        }
                        outcome_name(&result)
                    }
                }
            };
            predicted.push(class);
            outcome.push(name);
            correct.push(right);
        }
        state.last_times.1 = last;
        let class_values = self.op.class_values();
        let schema = outcome_schema(&batch.schema(), &label, class_values.data_type());
        let mut out: Vec<ArrayRef> = batch.columns().to_vec();
        out.push(take(&class_values, &UInt32Array::from(predicted), None).expect("class ids"));
        out.push(Arc::new(StringArray::from(outcome)));
        out.push(Arc::new(BooleanArray::from(correct)));
        RecordBatch::try_new(schema, out).map_err(|e| Error::Format {
            file: source,
            message: e.to_string(),
        })
    }
}

/// Which of the two inputs of a delayed-label stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The events, scored on arrival.
    Events,
    /// The labels, learnt on arrival.
    Labels,
}

/// Interleaves an event input and a label input by their time column, as the delayed-label
/// order wants: a label of time `t` goes before every event of a time after `t`, and
/// before an event of time `t` too (so a delay of 0 learns before the next event). Batches
/// are cut where the other input's next time falls; each input keeps its own order. A step
/// is decided only when both inputs have a batch waiting, or one has ended: an input that
/// is slow holds the other back, as any merge by time must.
#[derive(Debug)]
pub struct TimeMerge {
    time: String,
    heads: [Option<Head>; 2],
    ended: [bool; 2],
}

#[derive(Debug)]
struct Head {
    batch: RecordBatch,
    times: Vec<f64>,
    offset: usize,
}

impl TimeMerge {
    /// A merge by column `time` of both inputs.
    pub fn new(time: &str) -> Self {
        TimeMerge {
            time: time.to_string(),
            heads: [None, None],
            ended: [false, false],
        }
    }

    /// The input that must give a batch (or end) before the next step, if any: `None` once
    /// both have ended and everything was taken, or while a step is ready.
    pub fn needs(&self) -> Option<Side> {
        [Side::Events, Side::Labels]
            .into_iter()
            .find(|&side| self.heads[side as usize].is_none() && !self.ended[side as usize])
    }

    /// The next batch of `side` (`source` names it in errors); an empty batch is skipped.
    pub fn push(&mut self, side: Side, batch: RecordBatch, source: &Path) -> Result<()> {
        debug_assert!(
            self.heads[side as usize].is_none(),
            "one batch waits per input"
        );
        if batch.num_rows() == 0 {
            return Ok(());
        }
        let times = times(&batch, &self.time, source, &mut None)?;
        self.heads[side as usize] = Some(Head {
            batch,
            times,
            offset: 0,
        });
        Ok(())
    }

    /// `side` has ended.
    pub fn end(&mut self, side: Side) {
        self.ended[side as usize] = true;
    }

    /// Whether both inputs have ended and every row was taken.
    pub fn is_done(&self) -> bool {
        self.ended == [true, true] && self.heads.iter().all(Option::is_none)
    }

    /// The next rows to process, in order, if they can be decided now.
    pub fn step(&mut self) -> Option<(Side, RecordBatch)> {
        let first = |side: Side| {
            self.heads[side as usize]
                .as_ref()
                .map(|h| h.times[h.offset])
        };
        let (side, until) = match (first(Side::Events), first(Side::Labels)) {
            // Labels at or before the next event's time go first.
            (Some(e), Some(l)) if l <= e => (Side::Labels, Bound::AtMost(e)),
            (Some(_), Some(l)) => (Side::Events, Bound::Before(l)),
            (Some(_), None) if self.ended[Side::Labels as usize] => (Side::Events, Bound::All),
            (None, Some(_)) if self.ended[Side::Events as usize] => (Side::Labels, Bound::All),
            _ => return None,
        };
        let head = self.heads[side as usize].as_mut().expect("a head");
        let end = head.times[head.offset..]
            .iter()
            .position(|&t| !until.admits(t))
            .map_or(head.times.len(), |i| head.offset + i);
        let rows = head.batch.slice(head.offset, end - head.offset);
        head.offset = end;
        if end == head.times.len() {
            self.heads[side as usize] = None;
        }
        Some((side, rows))
    }
}

/// How far a step takes an input's rows.
#[derive(Debug, Clone, Copy)]
enum Bound {
    AtMost(f64),
    Before(f64),
    All,
}

impl Bound {
    fn admits(self, t: f64) -> bool {
        match self {
            Bound::AtMost(b) => t <= b,
            Bound::Before(b) => t < b,
            Bound::All => true,
        }
    }
}

/// The events of one batch as [`BoostOperator::process`] meets them: their ids and times.
pub struct Waiting<'a> {
    pub(super) learner: &'a mut DelayedLearner<String>,
    pub(super) ids: &'a StringArray,
    pub(super) times: &'a [f64],
}

impl Waiting<'_> {
    /// Scores event row `r` (features `x`) with `model`, writing its probabilities to `out`;
    /// it then waits for its label, unless its id is null (scored only, counted). Returns
    /// the predicted class and whether the event was learnt at once (its label came first).
    pub(crate) fn event<M: Classifier + ?Sized>(
        &mut self, r: usize, model: &mut M, x: &[f64], out: &mut [f64],
    ) -> Result<(ClassId, bool)> {
        if self.ids.is_null(r) {
            self.learner.count_null_id();
            return Ok((model.learn_predict(x, None, 1.0, out), false));
        }
        let id = self.ids.value(r).to_string();
        let (predicted, early) = self.learner.event(model, id, self.times[r], x, out)?;
        Ok((predicted, early.is_some()))
    }
}
