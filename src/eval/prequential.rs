//! Prequential evaluation (test-then-train; Dawid 1984, Gama et al. 2013): every row is
//! predicted before its label is used, then learnt. This is the protocol of all three papers.

use std::fmt;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::metrics::{ClassMetrics, ConfusionMatrix};
use crate::core::{ClassId, Dataset, StreamSpec};
use crate::learner::Classifier;
use crate::runtime::delay::{DelayStats, DelayedLearner, LabelDelay, LabelOutcome, PendingLimits};
use crate::{Error, Result};

/// Settings of a prequential run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Prequential {
    /// The final fraction of the stream reported separately (the papers report the last 20%).
    pub final_fraction: f64,
    /// Rows per point of the learning curve; `None`: a hundredth of the stream.
    pub window: Option<usize>,
    /// Importance weight given to every labelled row.
    pub weight: f64,
    /// Rows at or after this position of the replay form a test part, reported on its own
    /// (`test` in the report); the model keeps learning through it, as in \[JT\]'s protocol.
    #[serde(default)]
    pub test_start: Option<usize>,
    /// When each row's label arrives ([`crate::runtime::delay`]): `None`, or a delay of 0 rows, is
    /// test-then-train. Under a delay, a row is predicted on arrival and learnt when its
    /// label arrives; each prediction is scored against that label, and the rows whose
    /// label never arrives (or whose event expired from the store first) are not scored.
    #[serde(skip)]
    pub delay: Option<LabelDelay>,
    /// Bounds of the store where rows wait for their labels.
    #[serde(skip)]
    pub pending: PendingLimits,
    /// Every this many rows (a checkpoint's interval), the observer of
    /// [`Prequential::run_with`] needs the model as that row left it: rows given to the model
    /// together ([`Classifier::learn_predict_rows`]) never run past such a row. `None`: the
    /// observer reads the model only where [`RowOutcome::model_current`] says so.
    #[serde(skip)]
    pub observe_every: Option<u64>,
}

impl Default for Prequential {
    fn default() -> Self {
        Prequential {
            final_fraction: 0.2,
            window: None,
            weight: 1.0,
            test_start: None,
            delay: None,
            pending: PendingLimits::default(),
            observe_every: None,
        }
    }
}

/// Where the final fraction starts and the rows per curve point, for a replay of `n` rows.
pub(super) struct Layout {
    pub n: usize,
    pub first_final: usize,
    pub window: usize,
}

/// Grows `model` until it knows class `y`, first met at `row` of `data`.
fn grow<M: Classifier + ?Sized>(
    model: &mut M, y: ClassId, spec: &StreamSpec, row: usize,
) -> Result<()> {
    while model.n_classes() <= y {
        model.add_class().map_err(|e| Error::InvalidRow {
            row: row as u64,
            message: format!(
                "label `{}` is a class the model has not met, and it cannot learn it: {e}",
                spec.classes.names()[y]
            ),
        })?;
    }
    Ok(())
}

impl Prequential {
    pub(super) fn layout(&self, n: usize) -> Layout {
        let final_count = ((n as f64) * self.final_fraction).ceil() as usize;
        Layout {
            n,
            first_final: n - final_count.min(n),
            window: self.window.unwrap_or((n / 100).max(1)),
        }
    }

    /// The position of the first row of the final fraction of a stream of `n` rows.
    pub fn first_final(&self, n: usize) -> usize {
        self.layout(n).first_final
    }

    /// Whether the row at `position` belongs to the test part.
    #[inline]
    pub(super) fn in_test(&self, position: usize) -> bool {
        self.test_start.is_some_and(|t| position >= t)
    }
}

impl Throughput {
    pub(super) fn of(rows: usize, seconds: f64) -> Self {
        Throughput {
            seconds,
            rows_per_second: if seconds > 0.0 {
                rows as f64 / seconds
            } else {
                0.0
            },
        }
    }
}

/// What happened to one row, passed to the caller's observer.
#[derive(Debug, Clone, Copy)]
pub struct RowOutcome<'a> {
    /// Position in the replay (0-based).
    pub position: usize,
    /// Index of the row in the input (0-based, inputs taken in order).
    pub row: usize,
    /// The true label, if known.
    pub label: Option<ClassId>,
    /// The prediction made before learning.
    pub predicted: ClassId,
    /// Class probabilities of that prediction.
    pub proba: &'a [f64],
    /// Whether the model the observer gets is as this row left it. Rows are given to the
    /// model several at a time ([`Classifier::learn_predict_rows`]); the observer sees each
    /// after the last of them, so only that last one sees its own model. A row after which
    /// [`Prequential::observe_every`] asks for the model is always a last one.
    pub model_current: bool,
}

/// Accuracy and kappa over a set of rows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Labelled rows counted.
    pub rows: u64,
    /// Correct predictions.
    pub correct: u64,
    /// `correct / rows` (`null` without rows).
    pub accuracy: Option<f64>,
    /// Cohen's kappa (`null` where undefined).
    pub kappa: Option<f64>,
}

impl Summary {
    fn of(m: &ConfusionMatrix) -> Self {
        Summary {
            rows: m.total(),
            correct: m.correct(),
            accuracy: m.accuracy(),
            kappa: m.kappa(),
        }
    }
}

/// Metrics over the final fraction of the stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FinalFraction {
    /// The fraction, e.g. 0.2.
    pub fraction: f64,
    /// Position of the first row counted (rows at or after it are the final fraction).
    pub first_position: u64,
    /// Labelled rows counted.
    pub rows: u64,
    /// Correct predictions.
    pub correct: u64,
    /// `correct / rows`.
    pub accuracy: Option<f64>,
    /// Cohen's kappa.
    pub kappa: Option<f64>,
}

/// Wall-clock cost of the predict-and-learn loop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Throughput {
    /// Seconds spent in the loop.
    pub seconds: f64,
    /// Rows per second.
    pub rows_per_second: f64,
}

impl fmt::Display for Throughput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (rate, seconds) = (self.rows_per_second, self.seconds);
        write!(f, "throughput      {rate:.0} rows/s ({seconds:.3} s)")
    }
}

/// One point of the learning curve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CurvePoint {
    /// Rows processed so far.
    pub rows: u64,
    /// Accuracy over all labelled rows so far.
    pub cumulative_accuracy: Option<f64>,
    /// Accuracy over the labelled rows of the last window.
    pub window_accuracy: Option<f64>,
}

/// The outcome of a prequential run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PrequentialReport {
    /// Rows processed (labelled or not).
    pub rows: u64,
    /// Class names, in id order.
    pub classes: Vec<String>,
    /// Over the whole stream.
    pub cumulative: Summary,
    /// Over the final fraction.
    pub final_fraction: FinalFraction,
    /// Over the test part (`--test`), if there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub test: Option<Summary>,
    /// Per-class precision / recall / F1 over the whole stream.
    pub per_class: Vec<ClassMetrics>,
    /// Confusion matrix over the whole stream: `confusion[true][predicted]`.
    pub confusion: Vec<Vec<u64>>,
    /// Learning curve (also written as CSV by `--curve`; `streamboost plot` reads it here).
    #[serde(default)]
    pub curve: Vec<CurvePoint>,
    /// Speed.
    pub throughput: Throughput,
    /// Under a label delay: what became of the rows and their labels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<DelayStats>,
}

impl Prequential {
    /// Checks the settings.
    pub fn validate(&self) -> Result<()> {
        if !(self.final_fraction > 0.0 && self.final_fraction <= 1.0) {
            return Err(Error::config("final_fraction", "must be in (0, 1]"));
        }
        if self.window == Some(0) {
            return Err(Error::config("window", "must be >= 1"));
        }
        if !(self.weight > 0.0 && self.weight.is_finite()) {
            return Err(Error::config("weight", "must be > 0"));
        }
        Ok(())
    }

    /// Replays `data` through `model` in `order` (input order if `None`): each row is
    /// predicted, reported to `on_row`, then learnt if labelled. Only the loop is timed.
    pub fn run<M: Classifier + ?Sized>(
        &self, model: &mut M, data: &Dataset, order: Option<&[usize]>,
        mut on_row: impl FnMut(&RowOutcome<'_>),
    ) -> Result<PrequentialReport> {
        self.run_with(model, data, order, |outcome, _| {
            on_row(outcome);
            Ok(())
        })
    }

    /// [`Prequential::run`] whose observer also gets the model (to checkpoint it, for
    /// instance) and may stop the run with an error. The model is as the row left it where
    /// [`RowOutcome::model_current`] says so, and always after every
    /// [`Prequential::observe_every`] rows. Its time counts in the throughput.
    pub fn run_with<M: Classifier + ?Sized>(
        &self, model: &mut M, data: &Dataset, order: Option<&[usize]>,
        mut after_row: impl FnMut(&RowOutcome<'_>, &mut M) -> Result<()>,
    ) -> Result<PrequentialReport> {
        let n = order.map_or(data.len(), <[usize]>::len);
        let mut run = Run::start(self, model, data.spec(), n)?;
        let mut rows = Vec::with_capacity(RUN_ROWS);
        let mut position = 0;
        while position < n {
            let end = position + run.run_rows(n - position);
            rows.clear();
            rows.extend((position..end).map(|p| {
                let row = order.map_or(p, |o| o[p]);
                (row, row)
            }));
            run.rows(model, data, &rows, &mut after_row)?;
            position = end;
        }
        run.drain(model)?;
        Ok(run.finish(data.spec().classes.names()))
    }

    /// [`Prequential::run_with`] over a stream that comes in chunks, in order, such as
    /// `columnar::StreamEncoder`'s batches, so that only a chunk is in memory:
    /// `spec` is the whole stream's (every class it will bring, for the metrics) and `n` its
    /// number of rows (for the final fraction and the curve's window). `chunks` calls the
    /// function it is given on each chunk in turn.
    pub fn run_chunks<M: Classifier + ?Sized>(
        &self, model: &mut M, spec: &StreamSpec, n: usize,
        chunks: impl FnOnce(&mut dyn FnMut(Dataset) -> Result<()>) -> Result<()>,
        mut after_row: impl FnMut(&RowOutcome<'_>, &mut M) -> Result<()>,
    ) -> Result<PrequentialReport> {
        let mut run = Run::start(self, model, spec, n)?;
        let mut next = 0;
        let mut rows = Vec::with_capacity(RUN_ROWS);
        chunks(&mut |chunk: Dataset| {
            let mut r = 0;
            while r < chunk.len() {
                let end = r + run.run_rows(chunk.len() - r);
                rows.clear();
                rows.extend((r..end).map(|r| (r, next + r)));
                run.rows(model, &chunk, &rows, &mut after_row)?;
                r = end;
            }
            next += chunk.len();
            Ok(())
        })?;
        if next != n {
            return Err(Error::config(
                "stream",
                format!("{next} rows replayed where {n} were announced"),
            ));
        }
        run.drain(model)?;
        Ok(run.finish(spec.classes.names()))
    }
}

/// Rows at most given to the model at a time ([`Run::rows`]): enough for a model on two
/// threads to keep both busy (a thread started per run, not per row).
const RUN_ROWS: usize = 256;

/// A prequential run under way: its counters, curve and clock.
struct Run<'p> {
    prequential: &'p Prequential,
    layout: Layout,
    position: usize,
    all: ConfusionMatrix,
    last: ConfusionMatrix,
    test: ConfusionMatrix,
    window_rows: u64,
    window_correct: u64,
    curve: Vec<CurvePoint>,
    proba: Vec<f64>,
    /// A run's probabilities and predictions ([`Run::rows`]).
    run_proba: Vec<f64>,
    run_predicted: Vec<ClassId>,
    delayed: Option<Delayed>,
    start: Instant,
}

/// A replay under a label delay: the rows waiting for their labels, and the labels due.
struct Delayed {
    learner: DelayedLearner<u64>,
    /// Labels to come: (arrival time's bits, position, class). Arrival times are not
    /// negative, so their bits order as they do; equal times come in row order.
    due: BinaryHeap<Reverse<(u64, u64, ClassId)>>,
}

impl<'p> Run<'p> {
    /// Checks `model` against a stream of `spec` and `n` rows and starts the clock.
    fn start<M: Classifier + ?Sized>(
        prequential: &'p Prequential, model: &M, spec: &StreamSpec, n: usize,
    ) -> Result<Self> {
        prequential.validate()?;
        let k = spec.n_classes();
        if model.n_classes() > k {
            return Err(Error::config(
                "classes",
                format!("model has {} classes, data {}", model.n_classes(), k),
            ));
        }
        if spec.is_multi_label() {
            return Err(Error::config(
                "task",
                "a multi-label stream is replayed with Prequential::run_ranking",
            ));
        }
        let layout = prequential.layout(n);
        Ok(Run {
            prequential,
            curve: Vec::with_capacity(n / layout.window + 1),
            layout,
            position: 0,
            all: ConfusionMatrix::new(k),
            last: ConfusionMatrix::new(k),
            test: ConfusionMatrix::new(k),
            window_rows: 0,
            window_correct: 0,
            proba: vec![0.0; k],
            run_proba: Vec::new(),
            run_predicted: Vec::new(),
            delayed: match &prequential.delay {
                None | Some(LabelDelay::Rows(0)) => None,
                Some(_) => Some(Delayed {
                    learner: DelayedLearner::new(prequential.pending, prequential.weight)?,
                    due: BinaryHeap::new(),
                }),
            },
            start: Instant::now(),
        })
    }

    /// Rows to take together from a position `left` rows before the end: up to
    /// [`RUN_ROWS`], ending at the next row after which the observer needs the model
    /// ([`Prequential::observe_every`]).
    fn run_rows(&self, left: usize) -> usize {
        let every = self
            .prequential
            .observe_every
            .map_or(usize::MAX, |e| e as usize);
        let to_observed = every - self.position % every;
        left.min(RUN_ROWS).min(to_observed)
    }

    /// Rows `rows` of `data`, each `(row, input index)`, in order, as [`Run::row`] takes them
    /// one by one: consecutive rows that need nothing between them (no label delay, no
    /// class the model has not met) go to the model together
    /// ([`Classifier::learn_predict_rows`]).
    fn rows<M: Classifier + ?Sized>(
        &mut self, model: &mut M, data: &Dataset, rows: &[(usize, usize)],
        after_row: &mut impl FnMut(&RowOutcome<'_>, &mut M) -> Result<()>,
    ) -> Result<()> {
        let mut start = 0;
        while start < rows.len() {
            let known = model.n_classes();
            let together = match self.delayed {
                Some(_) => 0,
                None => rows[start..]
                    .iter()
                    .take_while(|&&(row, _)| data.label(row).is_none_or(|y| y < known))
                    .count(),
            };
            if together < 2 {
                let (row, index) = rows[start];
                self.row(model, data, row, index, after_row)?;
                start += 1;
                continue;
            }
            let run = &rows[start..start + together];
            let xs: Vec<&[f64]> = run.iter().map(|&(row, _)| data.row(row)).collect();
            let labels: Vec<Option<ClassId>> =
                run.iter().map(|&(row, _)| data.label(row)).collect();
            self.run_proba.clear();
            self.run_proba.resize(together * known, 0.0);
            self.run_predicted.clear();
            self.run_predicted.resize(together, 0);
            let weight = self.prequential.weight;
            model.learn_predict_rows(
                &xs,
                &labels,
                weight,
                &mut self.run_proba,
                &mut self.run_predicted,
            );
            for (j, (&(_, index), &label)) in run.iter().zip(&labels).enumerate() {
                self.proba[..known].copy_from_slice(&self.run_proba[j * known..(j + 1) * known]);
                self.proba[known..].fill(0.0);
                let current = j + 1 == together;
                self.settle(
                    model,
                    index,
                    label,
                    self.run_predicted[j],
                    current,
                    after_row,
                )?;
            }
            start += together;
        }
        Ok(())
    }

    /// Row `row` of `data`, known to the caller as input row `index`: predicted, reported
    /// to `after_row`, learnt if labelled.
    fn row<M: Classifier + ?Sized>(
        &mut self, model: &mut M, data: &Dataset, row: usize, index: usize,
        after_row: &mut impl FnMut(&RowOutcome<'_>, &mut M) -> Result<()>,
    ) -> Result<()> {
        let (x, label) = (data.row(row), data.label(row));
        let weight = self.prequential.weight;
        if self.delayed.is_some() {
            self.learn_due(model, self.position as f64)?;
        }
        let known = model.n_classes();
        let proba = &mut self.proba;
        proba[known..].fill(0.0);
        let predicted = match (&mut self.delayed, label) {
            // Under a delay the row is only scored now; its label comes later.
            (Some(delayed), _) => {
                let position = self.position as u64;
                let (predicted, _) = delayed.learner.event(
                    model,
                    position,
                    position as f64,
                    x,
                    &mut proba[..known],
                )?;
                let arrival = self
                    .prequential
                    .delay
                    .as_ref()
                    .and_then(|d| d.arrival(self.position, index));
                if let (Some(y), Some(at)) = (label, arrival) {
                    delayed.due.push(Reverse((at.to_bits(), position, y)));
                }
                predicted
            }
            // A class the model has not met: the row is predicted among the classes it
            // knows (its label is revealed only after), then the model grows and learns.
            (None, Some(y)) if y >= known => {
                let predicted = model.learn_predict(x, None, weight, &mut proba[..known]);
                grow(model, y, data.spec(), index)?;
                model.learn(x, y, weight);
                predicted
            }
            (None, _) => model.learn_predict(x, label, weight, &mut proba[..known]),
        };
        self.settle(model, index, label, predicted, true, after_row)
    }

    /// The row at the current position, input row `index`, predicted `predicted` with
    /// `self.proba`: scored unless its label is delayed, reported to `after_row`, counted
    /// in the curve.
    fn settle<M: Classifier + ?Sized>(
        &mut self, model: &mut M, index: usize, label: Option<ClassId>, predicted: ClassId,
        model_current: bool, after_row: &mut impl FnMut(&RowOutcome<'_>, &mut M) -> Result<()>,
    ) -> Result<()> {
        let position = self.position;
        if let (Some(y), None) = (label, &self.delayed) {
            self.score(position, y, predicted);
        }
        after_row(
            &RowOutcome {
                position,
                row: index,
                label,
                predicted,
                proba: &self.proba,
                model_current,
            },
            model,
        )?;
        self.position += 1;
        if self.position.is_multiple_of(self.layout.window) || self.position == self.layout.n {
            self.curve.push(CurvePoint {
                rows: self.position as u64,
                cumulative_accuracy: self.all.accuracy(),
                window_accuracy: (self.window_rows > 0)
                    .then(|| self.window_correct as f64 / self.window_rows as f64),
            });
            (self.window_rows, self.window_correct) = (0, 0);
        }
        Ok(())
    }

    /// Counts the prediction made for the row at `position` against its label `y`.
    fn score(&mut self, position: usize, y: ClassId, predicted: ClassId) {
        self.all.record(y, predicted);
        if position >= self.layout.first_final {
            self.last.record(y, predicted);
        }
        if self.prequential.in_test(position) {
            self.test.record(y, predicted);
        }
        self.window_rows += 1;
        self.window_correct += u64::from(y == predicted);
    }

    /// Under a delay, learns the rows whose labels arrive at or before `now`, in the order
    /// they arrive, scoring each row's prediction against its label.
    fn learn_due<M: Classifier + ?Sized>(&mut self, model: &mut M, now: f64) -> Result<()> {
        loop {
            let Some(delayed) = self.delayed.as_mut() else {
                return Ok(());
            };
            let Some(&Reverse((at, position, y))) = delayed.due.peek() else {
                return Ok(());
            };
            if f64::from_bits(at) > now {
                return Ok(());
            }
            delayed.due.pop();
            let at = f64::from_bits(at);
            if let LabelOutcome::Learnt(event) = delayed.learner.label(model, &position, y, at)? {
                self.score(position as usize, y, event.predicted);
            }
        }
    }

    /// At the end of the stream: the labels due after the last row still arrive (their
    /// rows were predicted); the rows whose label never arrives leave the store.
    fn drain<M: Classifier + ?Sized>(&mut self, model: &mut M) -> Result<()> {
        self.learn_due(model, f64::INFINITY)?;
        if let Some(d) = &mut self.delayed {
            d.learner.expire_all();
        }
        Ok(())
    }

    /// The report, for classes `names`.
    fn finish(self, names: &[String]) -> PrequentialReport {
        let delay = self.delayed.as_ref().map(|d| d.learner.stats());
        let seconds = self.start.elapsed().as_secs_f64();
        let tail = Summary::of(&self.last);
        let p = self.prequential;
        PrequentialReport {
            rows: self.layout.n as u64,
            classes: names.to_vec(),
            cumulative: Summary::of(&self.all),
            final_fraction: FinalFraction {
                fraction: p.final_fraction,
                first_position: self.layout.first_final as u64,
                rows: tail.rows,
                correct: tail.correct,
                accuracy: tail.accuracy,
                kappa: tail.kappa,
            },
            test: p.test_start.map(|_| Summary::of(&self.test)),
            per_class: self.all.per_class(names),
            confusion: self.all.to_rows(),
            curve: self.curve,
            throughput: Throughput::of(self.layout.n, seconds),
            delay,
        }
    }
}

/// `v` to four decimals, or `n/a`.
pub(crate) fn fmt_opt(v: Option<f64>) -> String {
    v.map_or("n/a".to_string(), |v| format!("{v:.4}"))
}

/// The summary `streamboost replay` prints: accuracy and kappa overall, over the final
/// fraction and the test part, throughput, and per-class precision, recall and F1.
impl fmt::Display for PrequentialReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (all, tail) = (&self.cumulative, &self.final_fraction);
        writeln!(f, "rows            {} ({} labelled)", self.rows, all.rows)?;
        let (accuracy, kappa) = (fmt_opt(all.accuracy), fmt_opt(all.kappa));
        writeln!(f, "accuracy        {accuracy}   kappa {kappa}")?;
        writeln!(
            f,
            "final {:>3}%      {}   kappa {}   ({} rows)",
            (tail.fraction * 100.0).round(),
            fmt_opt(tail.accuracy),
            fmt_opt(tail.kappa),
            tail.rows
        )?;
        if let Some(test) = &self.test {
            let (accuracy, kappa) = (fmt_opt(test.accuracy), fmt_opt(test.kappa));
            writeln!(
                f,
                "test            {accuracy}   kappa {kappa}   ({} rows)",
                test.rows
            )?;
        }
        if let Some(d) = &self.delay {
            writeln!(
                f,
                "delayed labels  {} rows learnt when their label came; {} expired, {} evicted \
                 from a full store, {} replaced, {} labels unmatched; at most {} rows waited",
                d.learnt, d.expired, d.evicted, d.replaced, d.unmatched_labels, d.peak_pending
            )?;
        }
        writeln!(f, "{}", self.throughput)?;
        // A class name wider than a line is cut (the JSON report has it whole).
        const WIDEST: usize = 40;
        let shown = |name: &str| match name.chars().count() > WIDEST {
            true => name.chars().take(WIDEST - 1).chain(['…']).collect(),
            false => name.to_string(),
        };
        let width = self.per_class.iter().map(|c| c.class.chars().count()).max();
        let width = width.unwrap_or(5).clamp(5, WIDEST);
        writeln!(f, "{:<width$}  precision  recall      f1  support", "class")?;
        for c in &self.per_class {
            writeln!(
                f,
                "{:<width$}  {:>9.4}  {:>6.4}  {:>6.4}  {:>7}",
                shown(&c.class),
                c.precision,
                c.recall,
                c.f1,
                c.support
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts the rows it learnt; predicts uniformly.
    struct Counter {
        k: usize,
        learnt: usize,
    }

    impl Classifier for Counter {
        fn n_classes(&self) -> usize {
            self.k
        }
        fn learn(&mut self, _: &[f64], _: ClassId, _: f64) {
            self.learnt += 1;
        }
        fn predict_proba(&self, _: &[f64], out: &mut [f64]) {
            out.fill(1.0 / self.k as f64);
        }
        fn add_class(&mut self) -> Result<()> {
            self.k += 1;
            Ok(())
        }
    }

    /// Rows go to the model in runs; the observer is told which rows see the model as they
    /// left it, and every `observe_every`-th row does.
    #[test]
    fn the_observer_sees_its_own_model_where_told_and_at_every_interval() {
        let data = crate::synth::mixed(1_000, 0.05, 0.0, 3);
        let k = data.spec().n_classes();
        for every in [None, Some(100), Some(7)] {
            let prequential = Prequential {
                observe_every: every,
                ..Prequential::default()
            };
            let mut model = Counter { k, learnt: 0 };
            let mut current = Vec::new();
            prequential
                .run_with(&mut model, &data, None, |outcome, model| {
                    if outcome.model_current {
                        assert_eq!(model.learnt, outcome.position + 1);
                        current.push(outcome.position + 1);
                    }
                    Ok(())
                })
                .unwrap();
            assert_eq!(model.learnt, 1_000);
            assert_eq!(current.last(), Some(&1_000));
            if let Some(every) = every {
                let due = (1..=1_000 / every as usize).map(|i| i * every as usize);
                assert!(
                    due.into_iter().all(|rows| current.contains(&rows)),
                    "{every}"
                );
            } else {
                // Runs of several rows: not every row sees its own model.
                assert!(current.len() < 1_000);
            }
        }
    }
}
