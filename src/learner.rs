//! The central contracts. Weak learners and boosters implement the same [`Classifier`] trait,
//! so a booster is itself a learner and boosters compose (`AdaBoostOlm<AdaBoostOlm<_>>` is a
//! valid type). Hyper-parameters live in [`Config`] structs that build models.
//!
//! Learners only predict and learn: they never print, time themselves or evaluate; the
//! drivers in [`crate::eval`] do that.

use std::fmt::Display;

use serde::{Serialize, de::DeserializeOwned};

use crate::Result;
use crate::core::math::argmax;
use crate::core::{ClassId, Rng, StreamSpec};

/// A weighted online multiclass learner over rows of `f64` (see [`crate::core`] for the row
/// encoding).
///
/// Contract (checked for every learner by `tests/contract.rs`):
/// * `learn` with weight `0` changes nothing; weights are importance weights, not capped at 1;
/// * `predict_proba` writes `n_classes()` non-negative numbers summing to 1;
/// * missing values (`NaN`) and nominal codes never seen before are accepted without panic;
/// * the same config, seed and rows give bit-identical outputs.
pub trait Classifier: Send + Sync {
    /// Number of classes `k`.
    fn n_classes(&self) -> usize;

    /// Learns from row `x` with label `y < k` and importance weight `weight >= 0`.
    fn learn(&mut self, x: &[f64], y: ClassId, weight: f64);

    /// Class probabilities of row `x` into `out` (length `k`), without changing the model.
    /// Deterministic: where an algorithm prescribes a random choice (an expert draw, a random
    /// tie-break) this is the probability of each class under that choice, or the
    /// lowest-index choice where that expectation is not tractable, as each model documents.
    fn predict_proba(&self, x: &[f64], out: &mut [f64]);

    /// [`Classifier::predict_proba`] on rows `xs`, row `j`'s probabilities into
    /// `proba[j·k..(j+1)·k]`: the same numbers as the calls one by one. An ensemble asks
    /// its members member by member, each over a block of rows ([`predict_rows_by_member`]),
    /// so that a member's nodes are read once a block rather than once a row: scoring
    /// without learning (a frozen model in SQL, rows a live model learnt before) at the cost
    /// of a walk down each tree.
    fn predict_proba_rows(&self, xs: &[&[f64]], proba: &mut [f64]) {
        let k = self.n_classes();
        for (j, x) in xs.iter().enumerate() {
            self.predict_proba(x, &mut proba[j * k..(j + 1) * k]);
        }
    }

    /// Adds a class, whose id is `n_classes()` before the call: a label the stream had not
    /// declared has arrived. From here on the model is a `k + 1`-class model whose state for
    /// the new class is that of a class never seen (zero weight in every statistic, its
    /// parameters at their initial values), each model documenting what that is; its state
    /// for the other classes is unchanged. Growth is deterministic, so a stream replayed
    /// with a save and restore anywhere grows, and predicts, as it does without one.
    ///
    /// A model whose number of classes is fixed by its algorithm (the binary boosters)
    /// returns [`crate::Error::InvalidConfig`] on `classes` and is left unchanged.
    fn add_class(&mut self) -> Result<()>;

    /// Whether [`Classifier::learn`] learns. A model trained in batch scores the rows it is
    /// given and only counts them: callers count such rows as seen, not learnt.
    fn learns_online(&self) -> bool {
        true
    }

    /// The most probable class, ties to the lowest id.
    fn predict(&self, x: &[f64]) -> ClassId {
        let mut p = vec![0.0; self.n_classes()];
        self.predict_proba(x, &mut p);
        argmax(&p)
    }

    /// Test-then-train in one call: predicts `x` (the prediction the algorithm makes in its
    /// online protocol, which may draw from the model's RNG, e.g. Hedge's expert sample),
    /// writes the class probabilities to `out`, then, if the label is known, learns from it.
    /// Returns the prediction made before learning.
    ///
    /// Boosters override it to reuse their members' predictions between the two phases
    /// (ALGORITHMS.md §1.1), which is why it is one call rather than a hidden "predict must
    /// precede learn" coupling.
    fn learn_predict(
        &mut self, x: &[f64], y: Option<ClassId>, weight: f64, out: &mut [f64],
    ) -> ClassId {
        self.predict_proba(x, out);
        let predicted = argmax(out);
        if let Some(y) = y {
            self.learn(x, y, weight);
        }
        predicted
    }

    /// This learner as one that learns a row in two calls ([`TwoCalls`]), where it can
    /// (Hoeffding trees, and bundles of them): what lets a booster spread its members over
    /// two threads (`boost::two_threads`). `None` by default.
    fn two_calls(&mut self) -> Option<&mut dyn TwoCalls> {
        None
    }

    /// Whether this learner has answered a change of its stream by changing itself (a
    /// Hoeffding adaptive tree that swapped a subtree in, a learner replaced on a drift):
    /// what a booster's adaptive lead tells the booster (`boost::Turn`). `false` by default.
    fn adapted(&self) -> bool {
        false
    }

    /// Wakes a drift response that sleeps until its booster's lead adapts
    /// (`weak::adaptive`); nothing for a learner without one.
    fn wake(&mut self) {}

    /// [`Classifier::learn_predict`] on rows `xs` in turn, row `j` with label `ys[j]` (`None`
    /// or a class the model knows) and importance weight `weight`: its probabilities go to
    /// `proba[j·k..(j+1)·k]` (`k = n_classes()`) and its prediction to `predicted[j]`.
    ///
    /// The outputs and the model afterwards are those of the calls one by one, which is
    /// what this does unless a model can do better with rows that come several at a time
    /// (Adaboost.OLM, OnlineMBBM and AdaOVA have their trees learn on a second thread).
    fn learn_predict_rows(
        &mut self, xs: &[&[f64]], ys: &[Option<ClassId>], weight: f64, proba: &mut [f64],
        predicted: &mut [ClassId],
    ) {
        learn_predict_each(self, xs, ys, weight, proba, predicted);
    }
}

/// [`Classifier::learn_predict`] in two calls, with its outputs and its model: a booster can
/// then make all its members' predictions on a row, and the random draws that follow them,
/// before any member learns it (a Hoeffding tree keeps the row's leaf between the two). Only
/// the pipelining of one booster over two threads needs it
/// ([`Classifier::two_calls`]).
pub trait TwoCalls {
    /// The first call: the probabilities of row `x` into `out`.
    fn predict_to_learn(&mut self, x: &[f64], out: &mut [f64]);

    /// The second call: learns the row the last [`TwoCalls::predict_to_learn`] predicted,
    /// with label `y` and weight `weight`. Nothing else may happen to the model in between.
    fn learn_predicted(&mut self, x: &[f64], y: ClassId, weight: f64);
}

/// The label and weight of a row a learner of `k` classes learns from: a known label below
/// `k` and a positive, finite weight; `None` means the row is only scored (the contract of
/// [`Classifier::learn`]: a row of weight 0 changes nothing).
#[inline]
pub(crate) fn learnable(y: Option<ClassId>, weight: f64, k: usize) -> Option<(ClassId, f64)> {
    y.filter(|&y| weight > 0.0 && weight.is_finite() && y < k)
        .map(|y| (y, weight))
}

/// [`Classifier::learn_predict`] on rows `xs` in turn: what
/// [`Classifier::learn_predict_rows`] does unless a model does better.
pub(crate) fn learn_predict_each<M: Classifier + ?Sized>(
    model: &mut M, xs: &[&[f64]], ys: &[Option<ClassId>], weight: f64, proba: &mut [f64],
    predicted: &mut [ClassId],
) {
    let k = model.n_classes();
    for (j, (x, &y)) in xs.iter().zip(ys).enumerate() {
        predicted[j] = model.learn_predict(x, y, weight, &mut proba[j * k..(j + 1) * k]);
    }
}

/// The bytes of members' probabilities [`predict_rows_by_member`] holds for a block of rows
/// (`members × rows × k` numbers): about a core's L2 cache, so that they stay in cache
/// beside the member being read. A block is at least [`MIN_BLOCK_ROWS`] rows.
const BLOCK_BYTES: usize = 256 * 1024;
/// The fewest rows of a block, however many members and classes.
const MIN_BLOCK_ROWS: usize = 16;

/// [`Classifier::predict_proba_rows`] of an ensemble of `members` whose vote on one row reads
/// its members' probabilities through `vote(out, member)`, `member(i, p)` writing member
/// `i`'s: the members score a block of rows each in turn (each through its own
/// `predict_proba_rows`, so a booster's boosters do the same inside), and then each row is
/// voted on from what they wrote. The numbers are those of `vote` on one row at a time.
pub(crate) fn predict_rows_by_member<L: Classifier>(
    members: &[L], k: usize, xs: &[&[f64]], proba: &mut [f64],
    vote: impl Fn(&mut [f64], &mut dyn FnMut(usize, &mut [f64])),
) {
    let member_k = members.first().map_or(k, Classifier::n_classes);
    let row_bytes = members.len() * member_k * std::mem::size_of::<f64>();
    let block_rows = (BLOCK_BYTES / row_bytes.max(1)).max(MIN_BLOCK_ROWS);
    let mut block = Vec::new();
    for (b, rows) in xs.chunks(block_rows).enumerate() {
        let per_member = rows.len() * member_k;
        block.resize(members.len() * per_member, 0.0);
        for (m, part) in members.iter().zip(block.chunks_exact_mut(per_member)) {
            m.predict_proba_rows(rows, part);
        }
        for r in 0..rows.len() {
            let j = b * block_rows + r;
            let mut member = |i: usize, p: &mut [f64]| {
                let at = i * per_member + r * member_k;
                p.copy_from_slice(&block[at..at + member_k]);
            };
            vote(&mut proba[j * k..(j + 1) * k], &mut member);
        }
    }
}

/// A weighted online multi-label ranker: it learns from the set of labels relevant to a row
/// and scores every label, higher meaning more relevant (\[JT\] §2).
///
/// A label set is a mask: `relevant[l]` says whether label `l < k` is relevant. Rows whose
/// set is empty or complete have no relevant/irrelevant pair: rankers learn nothing from
/// them (ALGORITHMS.md §5.2), though they still score them.
///
/// Contract (checked for every ranker by `tests/contract.rs`): weight `0` changes nothing;
/// scores are finite; the same config, seed and rows give bit-identical outputs.
pub trait Ranker: Send + Sync {
    /// Number of labels `k`.
    fn n_labels(&self) -> usize;

    /// Learns from row `x` whose relevant labels are marked in `relevant` (length `k`), with
    /// importance weight `weight >= 0`.
    fn learn_labels(&mut self, x: &[f64], relevant: &[bool], weight: f64);

    /// A score per label for row `x` into `out` (length `k`), without changing the model.
    /// Deterministic: a random expert choice is replaced by its expectation, as each model
    /// documents.
    fn predict_scores(&self, x: &[f64], out: &mut [f64]);

    /// Test-then-train in one call: scores `x` as the online protocol prescribes (which may
    /// draw from the model's RNG), writes the scores to `out`, then learns the label set if
    /// it is known. As [`Classifier::learn_predict`], boosters override it to reuse their
    /// members' predictions between the two phases.
    fn learn_predict_scores(
        &mut self, x: &[f64], relevant: Option<&[bool]>, weight: f64, out: &mut [f64],
    ) {
        self.predict_scores(x, out);
        if let Some(relevant) = relevant {
            self.learn_labels(x, relevant, weight);
        }
    }
}

/// Validated hyper-parameters that build a fresh model for a stream.
///
/// The same struct feeds the Rust API, the command line, reports and checkpoints (serde).
/// `build` validates first, so an invalid config never yields a model.
pub trait Config: Clone + Display + Serialize + DeserializeOwned + Send + Sync + 'static {
    /// The model this config builds.
    type Model: Classifier + Clone;

    /// Checks every parameter against its documented range.
    fn validate(&self) -> Result<()>;

    /// Builds a model for `spec`, drawing whatever is random at construction (random
    /// hyper-parameters, feature subsets, the model's own RNG seed) from `rng`.
    fn build_with_rng(&self, spec: &StreamSpec, rng: &mut Rng) -> Result<Self::Model>;

    /// Builds a model from a seed.
    fn build(&self, spec: &StreamSpec, seed: u64) -> Result<Self::Model> {
        self.build_with_rng(spec, &mut Rng::new(seed))
    }

    /// This config for a weak learner whose two-class probabilities a booster reads as the
    /// soft hypothesis `h = p[0] − p[1]` (ALGORITHMS.md §10, `Soft`). Most learners already
    /// give graded probabilities and stay as they are; a margin learner switches from
    /// one-hot probabilities to its clipped margin (WEAK_LEARNERS.md §3).
    fn with_margin_output(&self) -> Self {
        self.clone()
    }
}

/// A booster seen as the ensemble it is: its members, in order, and what it has learnt of
/// them. Implemented once per booster beside its algorithm; through it every booster gets
/// tree access (checkpoints) and an `inspect` summary without being listed anywhere else.
pub trait Ensemble {
    /// A member: a weak learner, or an inner booster (one-vs-all's per-class boosters).
    type Member;

    /// The members, in order.
    fn members(&self) -> &[Self::Member];

    /// The members, to change in place (checkpoints detach and restore their trees).
    fn members_mut(&mut self) -> &mut [Self::Member];

    /// Rows learnt, where the booster counts them.
    fn rows_learnt(&self) -> Option<u64> {
        None
    }

    /// Each member's weight in the vote (α, or the booster's own), where it has them.
    fn member_weights(&self) -> Option<Vec<f64>> {
        None
    }

    /// The probability of each expert, where the booster predicts with experts (Hedge).
    fn expert_probabilities(&self) -> Option<Vec<f64>> {
        None
    }

    /// The ensemble in brief.
    fn summary(&self) -> EnsembleSummary {
        let weights = self.member_weights().map(|w| Spread::of(&w));
        let best_expert = self.expert_probabilities().map(|p| {
            let best = argmax(&p);
            (best, p[best])
        });
        EnsembleSummary {
            members: self.members().len(),
            rows_learnt: self.rows_learnt(),
            weights,
            best_expert,
        }
    }
}

/// A booster's ensemble in brief, as `inspect` prints it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EnsembleSummary {
    /// Number of members.
    pub members: usize,
    /// Rows learnt, where the booster counts them.
    pub rows_learnt: Option<u64>,
    /// The spread of the members' vote weights.
    pub weights: Option<Spread>,
    /// The expert the booster weighs most, and its probability.
    pub best_expert: Option<(usize, f64)>,
}

/// Minimum, mean and maximum of some numbers.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Spread {
    /// The smallest.
    pub min: f64,
    /// The mean.
    pub mean: f64,
    /// The largest.
    pub max: f64,
}

impl Spread {
    /// The spread of `values` (NaN for none).
    pub fn of(values: &[f64]) -> Self {
        Spread {
            min: values.iter().copied().fold(f64::INFINITY, f64::min),
            mean: values.iter().sum::<f64>() / values.len() as f64,
            max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        }
    }
}
