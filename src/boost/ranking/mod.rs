//! Multi-label ranking boosters of Jung & Tewari (2018), "Online Boosting Algorithms for
//! Multi-label Ranking" (\[JT\]): OnlineBMR with exact pairwise potentials and Ada.OLMR.
//!
//! Both are [`Ranker`]s. They are also [`crate::Classifier`]s through the singleton
//! reduction: a multiclass row with label `y` is a multi-label row with `Y = {y}`, and the
//! scores, turned into a distribution, are the class probabilities.
//!
//! The pieces both share live here: the split of a row's labels into relevant and
//! irrelevant ones, the rank loss, and how a cost vector reaches single-label weak learners.

/// The singleton reduction as a `Classifier` for a ranker `$t<L>` with fields `k`,
/// `learners` and `work.mask` (a reused mask): class `y` is learnt as the set `{y}`, and `$to_proba` turns
/// the ranker's scores into class probabilities in place.
macro_rules! classifier_via_ranker {
    ($t:ident, $to_proba:path) => {
        impl<L: $crate::Classifier> $crate::Classifier for $t<L> {
            fn n_classes(&self) -> usize {
                self.k
            }

            /// A label never relevant so far: the members grow and the per-row tables,
            /// derived from `k`, are rebuilt; the weights are per learner and stay.
            fn add_class(&mut self) -> $crate::Result<()> {
                $crate::boost::add_class_to_members(&mut self.k, &mut self.learners)?;
                self.work = Default::default();
                Ok(())
            }

            fn learn(&mut self, x: &[f64], y: $crate::core::ClassId, weight: f64) {
                if y >= self.k {
                    return;
                }
                let mut mask = std::mem::take(&mut self.work.mask);
                $crate::boost::ranking::singleton(&mut mask, y, self.k);
                $crate::Ranker::learn_labels(self, x, &mask, weight);
                self.work.mask = mask;
            }

            fn predict_proba(&self, x: &[f64], out: &mut [f64]) {
                $crate::Ranker::predict_scores(self, x, out);
                $to_proba(out);
            }

            fn learn_predict(
                &mut self, x: &[f64], y: Option<$crate::core::ClassId>, weight: f64,
                out: &mut [f64],
            ) -> $crate::core::ClassId {
                let y = y.filter(|&y| y < self.k);
                let mut mask = std::mem::take(&mut self.work.mask);
                if let Some(y) = y {
                    $crate::boost::ranking::singleton(&mut mask, y, self.k);
                }
                let relevant = y.map(|_| mask.as_slice());
                $crate::Ranker::learn_predict_scores(self, x, relevant, weight, out);
                self.work.mask = mask;
                $to_proba(out);
                $crate::core::math::argmax(out)
            }
        }
    };
}

pub mod ada_olmr;
pub mod bmr;
pub mod potential;

pub use ada_olmr::{AdaOlmr, AdaOlmrConfig};
pub use bmr::{OnlineBmr, OnlineBmrConfig, RankingLoss};
pub use potential::{PairLoss, PairPotential, WalkTables};

use crate::core::ClassId;
use crate::learner::{Classifier, Ranker};

/// The weak learner of \[JT\]'s experiments: a tree of \[JGT\]'s experiments over a random
/// subset of 20 features, fixed per tree.
pub fn paper_tree() -> crate::weak::HoeffdingTreeConfig {
    crate::weak::HoeffdingTreeConfig {
        feature_subset: Some(20),
        ..crate::weak::HoeffdingTreeConfig::jgt_paper()
    }
}

/// Scores closer than this count as tied in the rank loss (\[JT\] counts a tie as ½;
/// ALGORITHMS.md §5.2).
pub const TIE_EPS: f64 = 1e-9;

/// A row's labels split into the relevant set `Y` and its complement, with the pair weight
/// `w_Y = 1/(|Y|·|Y^c|)` (\[JT\] §3.1). Reused from row to row.
#[derive(Debug, Clone, Default)]
pub struct LabelSplit {
    /// `Y`, ascending.
    pub relevant: Vec<ClassId>,
    /// `Y^c`, ascending.
    pub irrelevant: Vec<ClassId>,
}

impl LabelSplit {
    /// The split of a mask (`relevant[l]`).
    pub fn of(relevant: &[bool]) -> Self {
        let mut split = LabelSplit::default();
        split.fill(relevant);
        split
    }

    /// Refills the split from a mask.
    pub fn fill(&mut self, relevant: &[bool]) {
        self.relevant.clear();
        self.irrelevant.clear();
        for (l, &r) in relevant.iter().enumerate() {
            if r {
                self.relevant.push(l);
            } else {
                self.irrelevant.push(l);
            }
        }
    }

    /// Whether there is at least one (relevant, irrelevant) pair: rows with `Y = ∅` or
    /// `Y = [k]` carry no ranking information and are not learnt (ALGORITHMS.md §5.2).
    pub fn has_pairs(&self) -> bool {
        !self.relevant.is_empty() && !self.irrelevant.is_empty()
    }

    /// `w_Y = 1/(|Y|·|Y^c|)`.
    pub fn pair_weight(&self) -> f64 {
        1.0 / (self.relevant.len() * self.irrelevant.len()) as f64
    }

    /// The rank loss `L_rnk^Y(s) = w_Y Σ_{l∈Y, r∉Y} [1(s_l < s_r) + ½·1(s_l = s_r)]`
    /// (\[JT\] §3.1), ties within [`TIE_EPS`]; 0 without pairs.
    pub fn rank_loss(&self, s: &[f64]) -> f64 {
        if !self.has_pairs() {
            return 0.0;
        }
        let mut wrong = 0.0;
        for &l in &self.relevant {
            for &r in &self.irrelevant {
                let d = s[l] - s[r];
                if d.abs() <= TIE_EPS {
                    wrong += 0.5;
                } else if d < 0.0 {
                    wrong += 1.0;
                }
            }
        }
        wrong * self.pair_weight()
    }
}

/// Trains a single-label learner from a cost vector `c` by the `RelevantLabels` reduction
/// (ALGORITHMS.md §1.4, \[JT\] §4): each relevant label `l` is learnt with weight
/// `(max c − c[l])·scale`; zero weights are skipped. The first relevant label goes through
/// [`Classifier::learn_predict`], so `h` receives the learner's pre-update distribution and
/// the row is routed once for both phases.
pub(crate) fn learn_relevant<L: Classifier>(
    learner: &mut L, x: &[f64], split: &LabelSplit, c: &[f64], scale: f64, h: &mut [f64],
) {
    let top = c.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mut predicted = false;
    for &l in &split.relevant {
        let w = (top - c[l]) * scale;
        if !(w > 0.0 && w.is_finite()) {
            continue;
        }
        if predicted {
            learner.learn(x, l, w);
        } else {
            learner.learn_predict(x, Some(l), w, h);
            predicted = true;
        }
    }
    if !predicted {
        learner.predict_proba(x, h);
    }
}

/// A multiclass learner used as a ranker (the weak learners' view in \[JT\], and the
/// single-learner baseline): its class probabilities are the scores, and a label set is
/// learnt as one example per relevant label, sharing the row's weight equally.
pub fn learn_labels_as_classifier<C: Classifier + ?Sized>(
    model: &mut C, x: &[f64], relevant: &[bool], weight: f64,
) {
    let m = relevant.iter().filter(|&&r| r).count();
    if !(m > 0 && m < relevant.len() && weight > 0.0 && weight.is_finite()) {
        return;
    }
    let w = weight / m as f64;
    for (l, _) in relevant.iter().enumerate().filter(|(_, r)| **r) {
        model.learn(x, l, w);
    }
}

/// The mask of the single label `y` of `k`, into `mask`.
pub(crate) fn singleton(mask: &mut Vec<bool>, y: ClassId, k: usize) {
    mask.clear();
    mask.resize(k, false);
    mask[y] = true;
}

/// `Ranker` for the learners and boosters that are classifiers, through
/// [`learn_labels_as_classifier`]: their class probabilities are their scores.
macro_rules! ranker_via_classifier {
    ($(<$($g:ident),*> $t:ty),* $(,)?) => {$(
        impl<$($g),*> Ranker for $t where $t: Classifier {
            fn n_labels(&self) -> usize {
                self.n_classes()
            }

            fn learn_labels(&mut self, x: &[f64], relevant: &[bool], weight: f64) {
                learn_labels_as_classifier(self, x, relevant, weight);
            }

            fn predict_scores(&self, x: &[f64], out: &mut [f64]) {
                self.predict_proba(x, out);
            }
        }
    )*};
}

use crate::boost::bagging::OzaBag;
use crate::boost::binary::{OgBoost, OsBoost};
use crate::boost::multiclass::{AdaBoostOlm, BinaryBundle, OnlineMbbm};
use crate::boost::oza::OzaBoost;
use crate::weak::{HoeffdingTree, NaiveBayes, Perceptron, WeakLearner};

/// This family's rows of the model catalogue, handed on to the next family's macro (see
/// [`crate::model`], which invokes the chain and sees each family's module by name): a new
/// algorithm here is its file, its `mod` line and a row below.
macro_rules! ranking_rows {
    ($next:ident $(, $rest:ident)*; $($rows:tt)*) => { $next! { $($rest),*; $($rows)*
        Bmr("bmr"): ranking::OnlineBmrConfig<WeakLearnerConfig> => ranking::OnlineBmr<WeakLearner>, ranker {
            /// OnlineBMR (\[JT\] Algorithm 2; multi-label ranking) with exact potentials.
            // Both rankers: the first member an adaptive tree whose first swap wakes the
            // others; Agrawal 0.921 → 0.957, no label-set set moved (RESULTS.md, "The
            // boosters without a lead").
            Bmr = "bmr" (Booster, Ranking) => ranking::OnlineBmrConfig { lead_adapts: true, lead_wakes: boost::lead_wakes(), ..ranking::OnlineBmrConfig::new(ranking::paper_tree().into()) },
        }
        AdaOlmr("ada-olmr"): ranking::AdaOlmrConfig<WeakLearnerConfig> => ranking::AdaOlmr<WeakLearner>, ranker {
            /// Ada.OLMR (\[JT\] Algorithm 3; multi-label ranking).
            AdaOlmr = "ada-olmr" (Booster, Ranking) => ranking::AdaOlmrConfig { lead_adapts: true, lead_wakes: boost::lead_wakes(), ..ranking::AdaOlmrConfig::new(ranking::paper_tree().into()) },
        }
    } };
}
pub(crate) use ranking_rows;

ranker_via_classifier!(
    <> WeakLearner,
    <> HoeffdingTree,
    <> NaiveBayes,
    <> Perceptron,
    <L> AdaBoostOlm<L>,
    <L> OnlineMbbm<L>,
    <L> OzaBoost<L>,
    <L> BinaryBundle<L>,
    <L> OsBoost<L>,
    <L> OgBoost<L>,
    <L> OzaBag<L>,
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_loss_counts_ties_as_half() {
        let split = LabelSplit::of(&[true, false, true, false]);
        assert_eq!(split.pair_weight(), 0.25);
        // Pairs (0,1) right, (0,3) tie, (2,1) wrong, (2,3) wrong.
        let s = [2.0, 1.0, 0.0, 2.0];
        assert_eq!(split.rank_loss(&s), (0.5 + 1.0 + 1.0) / 4.0);
        assert_eq!(LabelSplit::of(&[true, true]).rank_loss(&s[..2]), 0.0);
    }
}
