//! Prequential evaluation (test-then-train; Dawid 1984, Gama et al. 2013): every row is
//! predicted before its label is used, then learnt. This is the protocol of all three papers.

use std::fmt;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::metrics::{ClassMetrics, ConfusionMatrix};
use crate::core::{ClassId, Dataset};
use crate::learner::Classifier;
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
    /// (`test` in the report); the model keeps learning through it, as in [JT]'s protocol.
    #[serde(default)]
    pub test_start: Option<usize>,
}

impl Default for Prequential {
    fn default() -> Self {
        Prequential {
            final_fraction: 0.2,
            window: None,
            weight: 1.0,
            test_start: None,
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
    model: &mut M,
    y: ClassId,
    data: &Dataset,
    row: usize,
) -> Result<()> {
    while model.n_classes() <= y {
        model.add_class().map_err(|e| Error::InvalidRow {
            row: row as u64,
            message: format!(
                "label `{}` is a class the model has not met, and it cannot learn it: {e}",
                data.spec().classes.names()[y]
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
    /// Learning curve (written separately as CSV, not part of the JSON report).
    #[serde(skip)]
    pub curve: Vec<CurvePoint>,
    /// Speed.
    pub throughput: Throughput,
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
        &self,
        model: &mut M,
        data: &Dataset,
        order: Option<&[usize]>,
        mut on_row: impl FnMut(&RowOutcome<'_>),
    ) -> Result<PrequentialReport> {
        self.run_with(model, data, order, |outcome, _| {
            on_row(outcome);
            Ok(())
        })
    }

    /// [`Prequential::run`] whose observer also gets the model after each row has been
    /// learnt (to checkpoint it, for instance) and may stop the run with an error. Its time
    /// counts in the throughput.
    pub fn run_with<M: Classifier + ?Sized>(
        &self,
        model: &mut M,
        data: &Dataset,
        order: Option<&[usize]>,
        mut after_row: impl FnMut(&RowOutcome<'_>, &mut M) -> Result<()>,
    ) -> Result<PrequentialReport> {
        self.validate()?;
        let k = data.spec().n_classes();
        if model.n_classes() > k {
            return Err(Error::config(
                "classes",
                format!("model has {} classes, data {}", model.n_classes(), k),
            ));
        }
        if data.spec().is_multi_label() {
            return Err(Error::config(
                "task",
                "a multi-label stream is replayed with Prequential::run_ranking",
            ));
        }
        let Layout {
            n,
            first_final,
            window,
        } = self.layout(order.map_or(data.len(), <[usize]>::len));

        let mut all = ConfusionMatrix::new(k);
        let mut last = ConfusionMatrix::new(k);
        let mut test = ConfusionMatrix::new(k);
        let (mut window_rows, mut window_correct) = (0u64, 0u64);
        let mut curve = Vec::with_capacity(n / window + 1);
        let mut proba = vec![0.0; k];

        let start = Instant::now();
        for position in 0..n {
            let row = order.map_or(position, |o| o[position]);
            let (x, label) = (data.row(row), data.label(row));
            let known = model.n_classes();
            proba[known..].fill(0.0);
            let predicted = match label {
                // A class the model has not met: the row is predicted among the classes it
                // knows (its label is revealed only after), then the model grows and learns.
                Some(y) if y >= known => {
                    let predicted = model.learn_predict(x, None, self.weight, &mut proba[..known]);
                    grow(model, y, data, row)?;
                    model.learn(x, y, self.weight);
                    predicted
                }
                _ => model.learn_predict(x, label, self.weight, &mut proba[..known]),
            };
            if let Some(y) = label {
                all.record(y, predicted);
                if position >= first_final {
                    last.record(y, predicted);
                }
                if self.in_test(position) {
                    test.record(y, predicted);
                }
                window_rows += 1;
                window_correct += u64::from(y == predicted);
            }
            after_row(
                &RowOutcome {
                    position,
                    row,
                    label,
                    predicted,
                    proba: &proba,
                },
                model,
            )?;
            if (position + 1) % window == 0 || position + 1 == n {
                curve.push(CurvePoint {
                    rows: position as u64 + 1,
                    cumulative_accuracy: all.accuracy(),
                    window_accuracy: (window_rows > 0)
                        .then(|| window_correct as f64 / window_rows as f64),
                });
                (window_rows, window_correct) = (0, 0);
            }
        }
        let seconds = start.elapsed().as_secs_f64();

        let names = data.spec().classes.names();
        let tail = Summary::of(&last);
        Ok(PrequentialReport {
            rows: n as u64,
            classes: names.to_vec(),
            cumulative: Summary::of(&all),
            final_fraction: FinalFraction {
                fraction: self.final_fraction,
                first_position: first_final as u64,
                rows: tail.rows,
                correct: tail.correct,
                accuracy: tail.accuracy,
                kappa: tail.kappa,
            },
            test: self.test_start.map(|_| Summary::of(&test)),
            per_class: all.per_class(names),
            confusion: all.to_rows(),
            curve,
            throughput: Throughput::of(n, seconds),
        })
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
        writeln!(f, "{}", self.throughput)?;
        let width = self.per_class.iter().map(|c| c.class.len()).max();
        let width = width.unwrap_or(5).max(5);
        writeln!(f, "{:<width$}  precision  recall      f1  support", "class")?;
        for c in &self.per_class {
            writeln!(
                f,
                "{:<width$}  {:>9.4}  {:>6.4}  {:>6.4}  {:>7}",
                c.class, c.precision, c.recall, c.f1, c.support
            )?;
        }
        Ok(())
    }
}
