//! Prequential evaluation of label rankers and the multi-label metrics (Tsoumakas et al.
//! 2010, "Mining Multi-label Data"; the rank loss is \[JT\]'s measure).
//!
//! Conventions, per row with relevant set `Y` among `k` labels and scores `s`:
//! * **rank loss** — the fraction of (relevant, irrelevant) pairs ranked wrongly, ties ½
//!   ([`LabelSplit::rank_loss`]); 0 for rows without pairs (`Y = ∅` or all labels), which
//!   still count in the mean, as in \[JT\]'s protocol.
//! * **Hamming loss** — the fraction of labels on which the predicted set differs from `Y`.
//!   The predicted set is [`predicted_set`]: the labels scoring above the mean score.
//! * **one-error**, **coverage**, **average precision** — over rows with `Y ≠ ∅` only (they
//!   are undefined otherwise). Ranks are expected ranks under random tie-breaking:
//!   `rank(l) = 1 + #{j : s_j > s_l} + ½·#{j ≠ l : s_j = s_l}`.

use std::fmt;

use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::prequential::Layout;
use super::prequential::fmt_opt;
use super::{Prequential, Throughput};
use crate::boost::ranking::{LabelSplit, TIE_EPS};
use crate::core::Dataset;
use crate::core::math::argmax;
use crate::learner::Ranker;
use crate::{Error, Result};

/// The labels a ranker predicts as relevant: those scoring above the mean score (none when
/// all scores are equal). Scale-free, so it applies to vote sums and to weighted scores.
pub fn predicted_set(scores: &[f64], out: &mut Vec<bool>) {
    let mean = scores.iter().sum::<f64>() / scores.len() as f64;
    out.clear();
    out.extend(scores.iter().map(|&s| s > mean + TIE_EPS));
}

/// The multi-label measures of one row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RowRanking {
    rank_loss: f64,
    hamming: f64,
    /// One-error, coverage and average precision; `None` when `Y = ∅`.
    ranked: Option<(f64, f64, f64)>,
}

impl RowRanking {
    /// The measures of a row: its label split, its scores and the predicted set. `ranks` is
    /// scratch space.
    pub fn of(
        split: &LabelSplit, relevant: &[bool], scores: &[f64], set: &[bool], ranks: &mut Vec<f64>,
    ) -> Self {
        let wrong = relevant.iter().zip(set).filter(|(a, b)| a != b).count();
        let mut row = RowRanking {
            rank_loss: split.rank_loss(scores),
            hamming: wrong as f64 / scores.len() as f64,
            ranked: None,
        };
        if split.relevant.is_empty() {
            return row;
        }
        let rank = |l: usize| -> f64 {
            let mut r = 1.0;
            for (j, &s) in scores.iter().enumerate() {
                if j != l {
                    let d = s - scores[l];
                    if d.abs() <= TIE_EPS {
                        r += 0.5;
                    } else if d > 0.0 {
                        r += 1.0;
                    }
                }
            }
            r
        };
        ranks.clear();
        ranks.extend(split.relevant.iter().map(|&l| rank(l)));
        let coverage = ranks.iter().copied().fold(0.0, f64::max) - 1.0;
        let mut precision = 0.0;
        for &r in ranks.iter() {
            let above = ranks.iter().filter(|&&o| o <= r).count() as f64;
            precision += above / r;
        }
        let one_error = f64::from(u8::from(!relevant[argmax(scores)]));
        row.ranked = Some((one_error, coverage, precision / ranks.len() as f64));
        row
    }
}

/// Running sums of the multi-label metrics over a set of rows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RankingMetrics {
    rows: u64,
    rank_loss: f64,
    hamming: f64,
    ranked_rows: u64,
    one_error: f64,
    coverage: f64,
    precision: f64,
}

impl RankingMetrics {
    /// Adds one row's measures.
    pub fn add(&mut self, row: &RowRanking) {
        self.rows += 1;
        self.rank_loss += row.rank_loss;
        self.hamming += row.hamming;
        if let Some((one_error, coverage, precision)) = row.ranked {
            self.ranked_rows += 1;
            self.one_error += one_error;
            self.coverage += coverage;
            self.precision += precision;
        }
    }

    /// Records one row: its label split, its scores and the predicted set.
    pub fn record(&mut self, split: &LabelSplit, relevant: &[bool], scores: &[f64], set: &[bool]) {
        self.add(&RowRanking::of(
            split,
            relevant,
            scores,
            set,
            &mut Vec::new(),
        ));
    }

    /// Mean rank loss so far (`None` before any row).
    pub fn rank_loss(&self) -> Option<f64> {
        (self.rows > 0).then(|| self.rank_loss / self.rows as f64)
    }

    /// The means so far.
    pub fn summary(&self) -> RankingSummary {
        let over = |sum: f64, n: u64| (n > 0).then(|| sum / n as f64);
        RankingSummary {
            rows: self.rows,
            rank_loss: over(self.rank_loss, self.rows),
            hamming_loss: over(self.hamming, self.rows),
            one_error: over(self.one_error, self.ranked_rows),
            coverage: over(self.coverage, self.ranked_rows),
            average_precision: over(self.precision, self.ranked_rows),
        }
    }
}

/// Multi-label metrics over a set of rows (`null` where there were no rows to average).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankingSummary {
    /// Labelled rows counted.
    pub rows: u64,
    /// Mean rank loss.
    pub rank_loss: Option<f64>,
    /// Mean Hamming loss of the predicted sets.
    pub hamming_loss: Option<f64>,
    /// Fraction of rows (with `Y ≠ ∅`) whose top label is irrelevant.
    pub one_error: Option<f64>,
    /// Mean depth of the ranking needed to cover `Y`, minus 1.
    pub coverage: Option<f64>,
    /// Mean average precision of the ranking.
    pub average_precision: Option<f64>,
}

/// One point of a ranker's learning curve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankingCurvePoint {
    /// Rows processed so far.
    pub rows: u64,
    /// Mean rank loss over all labelled rows so far.
    pub cumulative_rank_loss: Option<f64>,
    /// Mean rank loss over the labelled rows of the last window.
    pub window_rank_loss: Option<f64>,
}

/// The outcome of a prequential run of a ranker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankingReport {
    /// Rows processed (labelled or not).
    pub rows: u64,
    /// Label names, in id order.
    pub labels: Vec<String>,
    /// Over the whole stream.
    pub cumulative: RankingSummary,
    /// The final fraction, e.g. 0.2.
    pub final_fraction: f64,
    /// Over the final fraction.
    pub last: RankingSummary,
    /// Over the test part (`--test`), if there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub test: Option<RankingSummary>,
    /// Learning curve (also written as CSV by `--curve`; `streamboost plot` reads it here).
    #[serde(default)]
    pub curve: Vec<RankingCurvePoint>,
    /// Speed.
    pub throughput: Throughput,
}

/// What happened to one row of a ranking replay.
#[derive(Debug, Clone, Copy)]
pub struct RankedRow<'a> {
    /// Position in the replay (0-based).
    pub position: usize,
    /// Index of the row in the input (0-based).
    pub row: usize,
    /// The relevant labels, if known.
    pub relevant: Option<&'a [bool]>,
    /// The scores made before learning.
    pub scores: &'a [f64],
    /// The predicted label set.
    pub predicted: &'a [bool],
}

impl Prequential {
    /// Replays a multi-label `data` through `ranker` in `order`: each row is scored,
    /// reported to `after_row` (with the model, after learning), then learnt if its label
    /// set is known. Only the loop is timed.
    pub fn run_ranking<M: Ranker + ?Sized>(
        &self, model: &mut M, data: &Dataset, order: Option<&[usize]>,
        mut after_row: impl FnMut(&RankedRow<'_>, &mut M) -> Result<()>,
    ) -> Result<RankingReport> {
        self.validate()?;
        if self.delay.is_some() {
            return Err(Error::config(
                "label_delay",
                "a delay applies to one label a row; a multi-label stream is replayed \
                 test-then-train",
            ));
        }
        let k = data.spec().n_classes();
        if !data.spec().is_multi_label() {
            return Err(Error::config("task", "the stream has no label sets"));
        }
        if model.n_labels() != k {
            return Err(Error::config(
                "labels",
                format!("model has {} labels, data {k}", model.n_labels()),
            ));
        }
        let Layout {
            n,
            first_final,
            window,
        } = self.layout(order.map_or(data.len(), <[usize]>::len));
        let mut all = RankingMetrics::default();
        let (mut last, mut test, mut recent) = (all.clone(), all.clone(), all.clone());
        let mut curve = Vec::with_capacity(n / window + 1);
        let mut scores = vec![0.0; k];
        let mut set = Vec::with_capacity(k);
        let mut split = LabelSplit::default();
        let mut ranks = Vec::with_capacity(k);

        let start = Instant::now();
        for position in 0..n {
            let row = order.map_or(position, |o| o[position]);
            let (x, relevant) = (data.row(row), data.label_set(row));
            model.learn_predict_scores(x, relevant, self.weight, &mut scores);
            predicted_set(&scores, &mut set);
            if let Some(relevant) = relevant {
                split.fill(relevant);
                let measured = RowRanking::of(&split, relevant, &scores, &set, &mut ranks);
                all.add(&measured);
                recent.add(&measured);
                if position >= first_final {
                    last.add(&measured);
                }
                if self.in_test(position) {
                    test.add(&measured);
                }
            }
            after_row(
                &RankedRow {
                    position,
                    row,
                    relevant,
                    scores: &scores,
                    predicted: &set,
                },
                model,
            )?;
            if (position + 1) % window == 0 || position + 1 == n {
                curve.push(RankingCurvePoint {
                    rows: position as u64 + 1,
                    cumulative_rank_loss: all.rank_loss(),
                    window_rank_loss: recent.rank_loss(),
                });
                recent = RankingMetrics::default();
            }
        }
        let seconds = start.elapsed().as_secs_f64();
        Ok(RankingReport {
            rows: n as u64,
            labels: data.spec().classes.names().to_vec(),
            cumulative: all.summary(),
            final_fraction: self.final_fraction,
            last: last.summary(),
            test: self.test_start.map(|_| test.summary()),
            curve,
            throughput: Throughput::of(n, seconds),
        })
    }
}

/// The summary `streamboost replay` prints for a multi-label stream: the ranking metrics
/// overall, over the final fraction and the test part, and throughput.
impl fmt::Display for RankingReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let line = |f: &mut fmt::Formatter<'_>, name: &str, m: &RankingSummary| {
            writeln!(
                f,
                "{name:<15} rank loss {}   hamming {}   one-error {}   coverage {}   avg precision {}   ({} rows)",
                fmt_opt(m.rank_loss),
                fmt_opt(m.hamming_loss),
                fmt_opt(m.one_error),
                fmt_opt(m.coverage),
                fmt_opt(m.average_precision),
                m.rows
            )
        };
        writeln!(
            f,
            "rows            {} ({} labelled)",
            self.rows, self.cumulative.rows
        )?;
        line(f, "all", &self.cumulative)?;
        let tail = format!("final {:>3}%", (self.final_fraction * 100.0).round());
        line(f, &tail, &self.last)?;
        if let Some(test) = &self.test {
            line(f, "test", test)?;
        }
        writeln!(f, "{}", self.throughput)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_of_one_row() {
        // Y = {0, 2} of 4; scores rank 2 > 0 > 1 > 3, so the ranking is perfect.
        let relevant = [true, false, true, false];
        let split = LabelSplit::of(&relevant);
        let one_row = |scores: &[f64]| {
            let mut set = Vec::new();
            predicted_set(scores, &mut set);
            let mut m = RankingMetrics::default();
            m.record(&split, &relevant, scores, &set);
            (set, m.summary())
        };
        let (set, s) = one_row(&[0.5, 0.3, 0.9, 0.1]);
        assert_eq!(set, vec![true, false, true, false]);
        let losses = |s: &RankingSummary| (s.rank_loss, s.hamming_loss, s.one_error, s.coverage);
        assert_eq!(losses(&s), (Some(0.0), Some(0.0), Some(0.0), Some(1.0)));
        assert_eq!(s.average_precision, Some(1.0));

        // Reversed: label 3 first, then 1, then 0, then 2.
        let (_, s) = one_row(&[0.3, 0.5, 0.1, 0.9]);
        assert_eq!(losses(&s), (Some(1.0), Some(1.0), Some(1.0), Some(3.0)));
        // Relevant ranks 3 and 4: (1/3 + 2/4)/2.
        assert!((s.average_precision.unwrap() - (1.0 / 3.0 + 0.5) / 2.0).abs() < 1e-15);
    }

    #[test]
    fn rows_without_pairs_count_zero_rank_loss_and_skip_ranking_metrics() {
        let mut m = RankingMetrics::default();
        let relevant = [false, false, false];
        let split = LabelSplit::of(&relevant);
        m.record(&split, &relevant, &[0.2, 0.1, 0.7], &[false, false, true]);
        let s = m.summary();
        assert_eq!(s.rank_loss, Some(0.0));
        assert!((s.hamming_loss.unwrap() - 1.0 / 3.0).abs() < 1e-15);
        assert_eq!(s.one_error, None);
    }
}
