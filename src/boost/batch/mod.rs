//! Batch multiclass boosting of \[MS\] (Mukherjee & Schapire, "A Theory of Multiclass
//! Boosting", JMLR 2013): AdaBoost.MM over a cost-sensitive weak learner, trained on a
//! logged table held in memory (spec §12).
//!
//! The weak-learning contract of \[MS\] is cost-sensitive: given a cost matrix `C` (a row per
//! example, a column per label), a weak learner returns a hypothesis `h` that approximately
//! minimises `Σ_i C(i, h(x_i))` ([`CostSensitive`]). [`greedy_tree`] is \[MS\]'s "Greedy"
//! tree; [`Reduction`] makes any online weighted learner (a Hoeffding tree, naive Bayes) one. Three boosters use it: AdaBoost.MM ([`train`]), the OS strategy with the exact
//! potentials OnlineMBBM uses ([`train_os`]), and AdaBoost.M1 in its SAMME form
//! ([`train_samme`]), the baseline \[MS\] compare with.

mod boost;
mod columns;
pub mod greedy_tree;
pub mod mh;
pub mod tree;

pub use boost::{BatchBoost, BatchBoostConfig, BatchSummary, Method};
pub use columns::SortedColumns;
pub use greedy_tree::{GreedyTree, GreedyTreeConfig};
pub use mh::{MhStump, train_mh};

use serde::{Deserialize, Serialize};

use super::multiclass::potential::PotentialEngine;
use crate::core::ClassId;
use crate::learner::{Classifier, Config};
use crate::{Error, Result};

/// This family's rows of the model catalogue, handed on to the next family's macro (see
/// [`crate::model`], which invokes the chain and sees each family's module by name): a new
/// algorithm here is its file, its `mod` line and a row below.
macro_rules! batch_rows {
    ($next:ident $(, $rest:ident)*; $($rows:tt)*) => { $next! { $($rest),*; $($rows)*
        BatchBoost("batch-boost"): batch::BatchBoostConfig => batch::BatchBoost, classifier
            by |c| by_name(c.method.algorithm_name()),
                |m| by_name(m.config().method.algorithm_name()); {
            /// AdaBoost.MM (\[MS\] §7), trained in batch over greedy cost-sensitive trees.
            AdaBoostMm = "adaboost-mm" (Batch, Multiclass) => batch::BatchBoostConfig::new(batch::Method::Mm),
            /// AdaBoost.M1 (SAMME), trained in batch over greedy cost-sensitive trees.
            AdaBoostM1 = "adaboost-m1" (Batch, Multiclass) => batch::BatchBoostConfig::new(batch::Method::M1),
            /// AdaBoost.MH (Schapire & Singer), trained in batch over real-valued stumps.
            AdaBoostMh = "adaboost-mh" (Batch, Multiclass) => batch::BatchBoostConfig::new(batch::Method::Mh),
            /// \[MS\]'s OS strategy (edge γ), trained in batch over greedy cost-sensitive trees.
            OsStrategy = "os-strategy" (Batch, Multiclass)
                => batch::BatchBoostConfig::new(batch::Method::Os { gamma: 0.1 }),
        }
    } };
}
pub(crate) use batch_rows;

/// A cost matrix: `m` rows of `k` costs, row-major (\[MS\] §3: `C(i, l)` is the cost of
/// predicting `l` on example `i`).
#[derive(Debug, Clone, PartialEq)]
pub struct CostMatrix {
    k: usize,
    values: Vec<f64>,
}

impl CostMatrix {
    /// `m` rows of `k` zeros.
    pub fn zeros(m: usize, k: usize) -> Self {
        CostMatrix {
            k,
            values: vec![0.0; m * k],
        }
    }

    /// Values per row (labels, for a cost matrix).
    pub fn k(&self) -> usize {
        self.k
    }

    /// Row `i`'s costs.
    pub fn row(&self, i: usize) -> &[f64] {
        &self.values[i * self.k..(i + 1) * self.k]
    }

    /// Row `i`'s costs, to set them.
    pub fn row_mut(&mut self, i: usize) -> &mut [f64] {
        &mut self.values[i * self.k..(i + 1) * self.k]
    }

    /// Every value set to `v`.
    pub fn fill(&mut self, v: f64) {
        self.values.fill(v);
    }

    /// Every value multiplied by `factor`.
    pub fn scale(&mut self, factor: f64) {
        self.values.iter_mut().for_each(|v| *v *= factor);
    }
}

/// A batch weak learner under \[MS\]'s cost-sensitive contract.
pub trait CostSensitive {
    /// What it returns.
    type Hypothesis: Hypothesis;

    /// A hypothesis approximately minimising `Σ_j C(j, h(x_j))` over the rows of `table`
    /// (the row at position `j` has cost row `j` of `costs`).
    fn fit(&self, table: &SortedColumns, costs: &CostMatrix) -> Result<Self::Hypothesis>;
}

/// A label for a row of features.
pub trait Hypothesis {
    /// The predicted label of `x`.
    fn predict(&self, x: &[f64]) -> ClassId;

    /// Adds this hypothesis's vote of weight `weight` for `x` to `out` (one score a label):
    /// `weight` for its label, unless it rates every label.
    fn vote(&self, x: &[f64], weight: f64, out: &mut [f64]) {
        out[self.predict(x)] += weight;
    }
}

/// Any online weighted learner as a cost-sensitive one, through the `AllLabelsReward`
/// reduction of spec §1.4: each row `i` is learnt once per label `l` with reward
/// `ρ_l = max_{l'} C(i,l') − C(i,l) > 0` as its weight, so that a learner that estimates
/// weighted label frequencies predicts the argmin of the expected cost. A fresh model of
/// `config` (seeded with `seed`) is trained per round, in one pass over the rows in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Reduction<C> {
    /// The weighted learner's config.
    pub config: C,
    /// The seed each round's model is built with.
    pub seed: u64,
}

/// A weighted learner trained through [`Reduction`].
#[derive(Debug, Clone)]
pub struct Reduced<M>(pub M);

impl<M: Classifier> Hypothesis for Reduced<M> {
    fn predict(&self, x: &[f64]) -> ClassId {
        self.0.predict(x)
    }
}

impl<C: Config> CostSensitive for Reduction<C> {
    type Hypothesis = Reduced<C::Model>;

    fn fit(&self, table: &SortedColumns, costs: &CostMatrix) -> Result<Self::Hypothesis> {
        let mut model = self.config.build(table.data().spec(), self.seed)?;
        for j in 0..table.len() {
            let row = costs.row(j);
            let most = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            for (l, &c) in row.iter().enumerate() {
                let reward = most - c;
                if reward > 0.0 {
                    model.learn(table.row(j), l, reward);
                }
            }
        }
        Ok(Reduced(model))
    }
}

/// What AdaBoost.MM does with a round whose edge is not positive (\[MS\]: the weak-learning
/// condition failed for this cost matrix).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NonPositiveEdge {
    /// End training with the rounds so far.
    #[default]
    Stop,
    /// Drop the hypothesis and go on (useful with a randomised weak learner only: the cost
    /// matrix does not change).
    Discard,
}

/// The parameters of a batch booster (AdaBoost.MM, [`train`]; AdaBoost.M1, [`train_samme`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AdaBoostMmConfig {
    /// Rounds `T`.
    pub rounds: usize,
    /// What a round with `δ_t ≤ 0` does.
    pub non_positive_edge: NonPositiveEdge,
}

impl Default for AdaBoostMmConfig {
    fn default() -> Self {
        AdaBoostMmConfig {
            rounds: 100,
            non_positive_edge: NonPositiveEdge::Stop,
        }
    }
}

/// One round of training, as reported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Round {
    /// The edge `δ_t` of the hypothesis on the round's cost matrix (AdaBoost.M1: its edge
    /// over random guessing, `1 − ε_t k/(k−1)` for weighted error `ε_t`; AdaBoost.MH: the
    /// `δ` with `√(1−δ²) = Z_t`; none for the OS strategy, whose costs are potentials).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta: Option<f64>,
    /// Its weight `α_t` (0 for a discarded hypothesis).
    pub alpha: f64,
    /// The global shift `G*` subtracted from the exponents of the cost matrix: the matrix of
    /// \[MS\] eq. 7 is the one used times `exp(G*)`.
    pub shift: f64,
    /// AdaBoost.MM: the bound on the training loss after this round,
    /// `(k−1) Π_{τ≤t} √(1−δ_τ²)` (a factor `√(1−δ_t²)` per round, spec §12.3), which also
    /// bounds the training error; AdaBoost.MH: `k Π_{τ≤t} Z_τ` ([`mh`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss_bound: Option<f64>,
    /// The OS strategy: the mean potential `φ_{T−t}^{y_i}(s_t(i))` over the rows after this
    /// round, the training error expected if every remaining round's predictions were
    /// drawn from the baseline `u_γ^{y_i}` (\[MS\] Thm. 5); at the last round, the training
    /// error (ties counted as errors).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub potential: Option<f64>,
    /// The training error after this round.
    pub train_error: f64,
}

impl Round {
    /// A round that leaves the training error at `train_error`, its other figures unset
    /// (a hypothesis of weight 0, no shift, bound or potential).
    fn ending_at(train_error: f64) -> Round {
        Round {
            delta: None,
            alpha: 0.0,
            shift: 0.0,
            loss_bound: None,
            potential: None,
            train_error,
        }
    }
}

/// The rounds of a training run, each shown to the caller's observer as it ends.
struct Rounds<'a> {
    on_round: &'a mut dyn FnMut(&Round),
    rounds: Vec<Round>,
}

impl<'a> Rounds<'a> {
    fn new(on_round: &'a mut dyn FnMut(&Round), capacity: usize) -> Self {
        Rounds {
            on_round,
            rounds: Vec::with_capacity(capacity),
        }
    }

    fn record(&mut self, round: Round) {
        (self.on_round)(&round);
        self.rounds.push(round);
    }

    /// Ends a round whose hypothesis `h` earned weight `alpha`, or none for a non-positive
    /// edge: keeps `h` in `model`, records `round` with that weight, and says whether
    /// training goes on under `rule`.
    fn end<H>(
        &mut self, model: &mut WeightedVote<H>, h: H, alpha: Option<f64>, round: Round,
        rule: NonPositiveEdge,
    ) -> bool {
        if let Some(alpha) = alpha {
            model.push(h, alpha);
        }
        self.record(Round {
            alpha: alpha.unwrap_or(0.0),
            ..round
        });
        alpha.is_some() || rule != NonPositiveEdge::Stop
    }
}

/// A trained batch booster (AdaBoost.MM or AdaBoost.M1): `H(x) = argmax_l Σ_t α_t 1[h_t(x) = l]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WeightedVote<H> {
    k: usize,
    hypotheses: Vec<(H, f64)>,
}

impl<H> WeightedVote<H> {
    /// A vote over `k` labels with no hypotheses yet.
    pub fn new(k: usize) -> Self {
        WeightedVote {
            k,
            hypotheses: Vec::new(),
        }
    }

    /// Adds a hypothesis of weight `alpha`.
    pub fn push(&mut self, h: H, alpha: f64) {
        self.hypotheses.push((h, alpha));
    }

    /// Labels.
    pub fn k(&self) -> usize {
        self.k
    }

    /// The hypotheses and their weights, in round order.
    pub fn hypotheses(&self) -> &[(H, f64)] {
        &self.hypotheses
    }
}

impl<H: Hypothesis> WeightedVote<H> {
    /// The vote `f(x, l) = Σ_t α_t h_t(x, l)` of the first `rounds` hypotheses for every
    /// label, into `out` (`h_t(x, l) = 1[h_t(x) = l]` for a hypothesis that names a label).
    pub fn scores_after(&self, rounds: usize, x: &[f64], out: &mut [f64]) {
        out.fill(0.0);
        for (h, alpha) in self.hypotheses.iter().take(rounds) {
            h.vote(x, *alpha, out);
        }
    }
}

/// Trains AdaBoost.MM (\[MS\] §7, spec §12.3) on the rows of `table` with `learner`;
/// returns the model and a report per round, each also given to `on_round` as it ends.
pub fn train<L: CostSensitive>(
    config: &AdaBoostMmConfig, table: &SortedColumns, learner: &L, on_round: &mut dyn FnMut(&Round),
) -> Result<(WeightedVote<L::Hypothesis>, Vec<Round>)> {
    check_rounds(config.rounds)?;
    let (m, k, labels) = (table.len(), table.k(), table.labels());
    // f_t(i, l) = Σ_{τ≤t} α_τ 1[h_τ(x_i) = l].
    let mut f = CostMatrix::zeros(m, k);
    let mut costs = CostMatrix::zeros(m, k);
    let mut model = WeightedVote::new(k);
    let mut report = Rounds::new(on_round, config.rounds);
    let mut bound = (k - 1) as f64;
    let mut predictions = vec![0; m];
    for _ in 0..config.rounds {
        let shift = cost_matrix(&f, labels, &mut costs);
        let h = learner.fit(table, &costs)?;
        predict_all(&h, table, &mut predictions);
        let delta = edge(&costs, labels, &predictions);
        let alpha = (delta > 0.0).then(|| {
            // δ = 1 (a perfect hypothesis) would give an infinite weight.
            let clamped = delta.min(1.0 - 1e-12);
            let alpha = 0.5 * ((1.0 + clamped) / (1.0 - clamped)).ln();
            for (j, &l) in predictions.iter().enumerate() {
                f.row_mut(j)[l] += alpha;
            }
            bound *= (1.0 - clamped * clamped).sqrt();
            alpha
        });
        let round = Round {
            delta: Some(delta),
            shift,
            loss_bound: Some(bound),
            ..Round::ending_at(train_error(&f, labels))
        };
        if !report.end(&mut model, h, alpha, round, config.non_positive_edge) {
            break;
        }
    }
    Ok((model, report.rounds))
}

/// Trains AdaBoost.M1 in its multiclass SAMME form (Zhu, Zou, Rosset & Hastie 2009), the
/// first baseline \[MS\] compares with, over the same cost-sensitive weak learner: each round
/// fits the weighted 0/1 loss (`C(i, l) = w_i` for `l ≠ y_i`, 0 for `y_i`), takes
/// `α_t = ln((1−ε_t)/ε_t) + ln(k−1)` for weighted error `ε_t`, multiplies the weights of the
/// rows it gets wrong by `e^{α_t}`, and stops (or discards, by `config`) when
/// `ε_t ≥ 1 − 1/k`.
pub fn train_samme<L: CostSensitive>(
    config: &AdaBoostMmConfig, table: &SortedColumns, learner: &L, on_round: &mut dyn FnMut(&Round),
) -> Result<(WeightedVote<L::Hypothesis>, Vec<Round>)> {
    check_rounds(config.rounds)?;
    let (m, k, labels) = (table.len(), table.k(), table.labels());
    let mut weights = vec![1.0 / m as f64; m];
    let mut f = CostMatrix::zeros(m, k);
    let mut costs = CostMatrix::zeros(m, k);
    let mut model = WeightedVote::new(k);
    let mut report = Rounds::new(on_round, config.rounds);
    let mut predictions = vec![0; m];
    for _ in 0..config.rounds {
        for (j, &y) in labels.iter().enumerate() {
            let row = costs.row_mut(j);
            row.fill(weights[j]);
            row[y] = 0.0;
        }
        let h = learner.fit(table, &costs)?;
        predict_all(&h, table, &mut predictions);
        let total: f64 = weights.iter().sum();
        let wrong: f64 = (0..m)
            .filter(|&j| predictions[j] != labels[j])
            .map(|j| weights[j])
            .sum();
        let error = wrong / total;
        let delta = 1.0 - error * k as f64 / (k - 1) as f64;
        let alpha = (delta > 0.0).then(|| {
            // ε = 0 (a perfect hypothesis) would give an infinite weight.
            let error = error.max(1e-12);
            let alpha = ((1.0 - error) / error).ln() + ((k - 1) as f64).ln();
            for j in 0..m {
                f.row_mut(j)[predictions[j]] += alpha;
                if predictions[j] != labels[j] {
                    weights[j] *= alpha.exp();
                }
            }
            let sum: f64 = weights.iter().sum();
            weights.iter_mut().for_each(|w| *w /= sum);
            alpha
        });
        let round = Round {
            delta: Some(delta),
            ..Round::ending_at(train_error(&f, labels))
        };
        if !report.end(&mut model, h, alpha, round, config.non_positive_edge) {
            break;
        }
    }
    Ok((model, report.rounds))
}

/// The OS strategy's parameters (\[MS\] §6, spec §12.1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OsConfig {
    /// Rounds `T`, fixed in advance (the potentials depend on the rounds left).
    pub rounds: usize,
    /// The edge `γ` over random the weak learner is assumed to have (baseline `u_γ`).
    pub gamma: f64,
}

/// Trains the OS strategy (\[MS\] Thm. 5, spec §12.1): `T` rounds of weight 1, the cost of
/// predicting `l` on row `i` at round `t` (from 0) being `φ_{T−t−1}^{y_i}(s_t(i) + e_l)`,
/// with `s_t(i)` the row's votes so far and `φ` the 0-1 loss potentials of the exact engine
/// OnlineMBBM uses ([`PotentialEngine`]); `H` is the plurality vote. Each round reports its
/// mean potential ([`Round::potential`]).
pub fn train_os<L: CostSensitive>(
    config: &OsConfig, table: &SortedColumns, learner: &L, on_round: &mut dyn FnMut(&Round),
) -> Result<(WeightedVote<L::Hypothesis>, Vec<Round>)> {
    crate::boost::check_gamma(config.gamma)?;
    let rounds = config.rounds;
    check_rounds(rounds)?;
    let (m, k, labels) = (table.len(), table.k(), table.labels());
    let mut engine = PotentialEngine::new(k, config.gamma, rounds);
    let mut votes = vec![vec![0i64; k]; m];
    let mut f = CostMatrix::zeros(m, k);
    let mut costs = CostMatrix::zeros(m, k);
    let mut model = WeightedVote::new(k);
    let mut report = Rounds::new(on_round, rounds);
    for t in 0..rounds {
        let left = rounds - t - 1;
        for (j, &y) in labels.iter().enumerate() {
            engine.cost_row(left, &votes[j], y, costs.row_mut(j));
        }
        let h = learner.fit(table, &costs)?;
        let mut potential = 0.0;
        for j in 0..m {
            let l = h.predict(table.row(j));
            votes[j][l] += 1;
            f.row_mut(j)[l] += 1.0;
            potential += engine.phi(left, &votes[j], labels[j]);
        }
        model.push(h, 1.0);
        report.record(Round {
            alpha: 1.0,
            potential: Some(potential / m as f64),
            ..Round::ending_at(train_error(&f, labels))
        });
    }
    Ok((model, report.rounds))
}

fn check_rounds(rounds: usize) -> Result<()> {
    if rounds == 0 {
        return Err(Error::config("rounds", "must be >= 1"));
    }
    Ok(())
}

/// `h`'s label for every row of `table`, into `out`.
fn predict_all<H: Hypothesis>(h: &H, table: &SortedColumns, out: &mut [ClassId]) {
    for (j, p) in out.iter_mut().enumerate() {
        *p = h.predict(table.row(j));
    }
}

/// The cost matrix of \[MS\] eq. 7 for the votes `f`: `C(i, l) = exp(f(i,l) − f(i,y_i) − G*)`
/// for `l ≠ y_i` and `C(i, y_i) = −Σ_{l≠y_i} C(i, l)`, with the global shift
/// `G* = max_{i, l≠y_i} f(i,l) − f(i,y_i)` so that no exponent overflows. The algorithm is
/// invariant to a global positive scale of `C` (the edge is a ratio, the weak learner's
/// argmin unchanged); a per-row scale would change it (spec §12.3). Returns `G*`.
fn cost_matrix(f: &CostMatrix, labels: &[ClassId], costs: &mut CostMatrix) -> f64 {
    let mut shift = f64::NEG_INFINITY;
    for (i, &y) in labels.iter().enumerate() {
        let row = f.row(i);
        for (l, &v) in row.iter().enumerate() {
            if l != y {
                shift = shift.max(v - row[y]);
            }
        }
    }
    for (i, &y) in labels.iter().enumerate() {
        let (row, out) = (f.row(i), costs.row_mut(i));
        let mut sum = 0.0;
        for l in 0..row.len() {
            if l != y {
                out[l] = (row[l] - row[y] - shift).exp();
                sum += out[l];
            }
        }
        out[y] = -sum;
    }
    shift
}

/// The edge of predictions `h` on `costs` (\[MS\] eq. 7's `δ_t`):
/// `−Σ_i C(i, h_i) / Σ_i Σ_{l≠y_i} C(i, l)`, in `[−1, 1]`.
fn edge(costs: &CostMatrix, labels: &[ClassId], h: &[ClassId]) -> f64 {
    let (mut paid, mut total) = (0.0, 0.0);
    for (i, (&y, &l)) in labels.iter().zip(h).enumerate() {
        let row = costs.row(i);
        paid += row[l];
        total -= row[y];
    }
    if total > 0.0 { -paid / total } else { 0.0 }
}

/// The share of rows whose largest vote is not their label (a tie counts as an error).
fn train_error(f: &CostMatrix, labels: &[ClassId]) -> f64 {
    let wrong = labels
        .iter()
        .enumerate()
        .filter(|&(i, &y)| {
            let row = f.row(i);
            row.iter().enumerate().any(|(l, &v)| l != y && v >= row[y])
        })
        .count();
    wrong as f64 / labels.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cost_rows_are_minimal_on_the_true_label_and_sum_to_zero() {
        let labels = [0, 2, 1];
        let mut f = CostMatrix::zeros(3, 3);
        f.row_mut(0).copy_from_slice(&[0.3, 1.2, -0.4]);
        f.row_mut(1).copy_from_slice(&[2.0, 0.0, 0.5]);
        f.row_mut(2).copy_from_slice(&[0.0, 0.0, 0.0]);
        let mut c = CostMatrix::zeros(3, 3);
        let shift = cost_matrix(&f, &labels, &mut c);
        assert_eq!(shift, 2.0 - 0.5);
        for (i, &y) in labels.iter().enumerate() {
            let row = c.row(i);
            assert!(row.iter().enumerate().all(|(l, &v)| l == y || v > row[y]));
            assert!(row.iter().sum::<f64>().abs() < 1e-12);
        }
        // Every exponent is at most 0 after the global shift: the largest cost is 1.
        let largest = (0..3)
            .flat_map(|i| c.row(i).to_vec())
            .fold(f64::MIN, f64::max);
        assert!((largest - 1.0).abs() < 1e-15);
        // The edge of the true labels is 1, of the worst labels below 0.
        assert!((edge(&c, &labels, &labels) - 1.0).abs() < 1e-12);
        assert!(edge(&c, &labels, &[1, 0, 0]) < 0.0);
    }

    #[test]
    fn the_os_strategys_last_potential_is_its_training_error() {
        let data = crate::synth::mixed(300, 0.1, 0.05, 3);
        let config = OsConfig {
            rounds: 12,
            gamma: 0.1,
        };
        let tree = greedy_tree::GreedyTreeConfig { max_leaves: 4 };
        let table = SortedColumns::new(&data).unwrap();
        let (model, report) = train_os(&config, &table, &tree, &mut |_| {}).unwrap();
        assert_eq!((model.hypotheses().len(), report.len()), (12, 12));
        let last = report.last().unwrap();
        // φ_0^y(s) is 1 exactly when some other label has as many votes as y.
        assert!(
            (last.potential.unwrap() - last.train_error).abs() < 1e-12,
            "{last:?}"
        );
        // Potentials are probabilities.
        assert!(
            report
                .iter()
                .all(|r| (0.0..=1.0).contains(&r.potential.unwrap()))
        );
        assert!(last.train_error < 0.3, "{last:?}");
    }

    #[test]
    fn any_weighted_learner_boosts_through_the_reduction() {
        use crate::weak::NaiveBayesConfig;
        let data = crate::synth::mixed(600, 0.05, 0.0, 4);
        let learner = Reduction {
            config: NaiveBayesConfig::default(),
            seed: 1,
        };
        let config = AdaBoostMmConfig {
            rounds: 15,
            ..AdaBoostMmConfig::default()
        };
        let table = SortedColumns::new(&data).unwrap();
        let (model, report) = train(&config, &table, &learner, &mut |_| {}).unwrap();
        assert!(
            report
                .iter()
                .all(|r| r.train_error <= r.loss_bound.unwrap())
        );
        // Rounds go on while the edge is positive, and stop at the first that is not.
        let kept = model.hypotheses().len();
        assert!(kept >= 2, "{report:?}");
        assert!(report[..kept].iter().all(|r| r.delta.unwrap() > 0.0));
        // The costs reach the learner: the second round's model is another hypothesis.
        let (first, second) = (&model.hypotheses()[0].0, &model.hypotheses()[1].0);
        let differ = (0..data.len())
            .filter(|&i| first.predict(data.row(i)) != second.predict(data.row(i)))
            .count();
        assert!(differ > 0);
    }

    #[test]
    fn with_two_labels_adaboost_mm_is_adaboost() {
        // With k = 2, eq. 7's cost of the wrong label is e^{−margin}, so δ_t = 1 − 2ε_t for
        // the error ε_t weighted by e^{−margin}, and α_t = ½ ln((1−ε_t)/ε_t): AdaBoost's.
        let data = crate::synth::mixed_binary(500, 0.1, 0.05, 6);
        let table = SortedColumns::new(&data).unwrap();
        let config = AdaBoostMmConfig {
            rounds: 10,
            ..AdaBoostMmConfig::default()
        };
        let tree = greedy_tree::GreedyTreeConfig { max_leaves: 3 };
        let (model, report) = train(&config, &table, &tree, &mut |_| {}).unwrap();
        assert_eq!(model.hypotheses().len(), 10, "{report:?}");
        let mut margin = vec![0.0f64; table.len()];
        for (h, alpha) in model.hypotheses() {
            let (mut wrong, mut total) = (0.0f64, 0.0f64);
            for (j, m) in margin.iter().enumerate() {
                let w = (-m).exp();
                total += w;
                if h.predict(table.row(j)) != table.labels()[j] {
                    wrong += w;
                }
            }
            let error = wrong / total;
            let adaboost = 0.5 * ((1.0 - error) / error).ln();
            assert!(
                (alpha - adaboost).abs() < 1e-9,
                "{alpha} against {adaboost}"
            );
            for (j, m) in margin.iter_mut().enumerate() {
                let right = h.predict(table.row(j)) == table.labels()[j];
                *m += if right { *alpha } else { -alpha };
            }
        }
        assert!(report.iter().all(|r| {
            let d = r.delta.unwrap();
            (-1.0..=1.0).contains(&d)
        }));
    }

    /// \[MS\] Lemma 1 (spec §12.2): for the exponential loss `L(s) = Σ_{l≠y} e^{η(s_l−s_y)}`
    /// and the baseline `u_γ`, the potential after `t` more rounds is
    /// `φ_t(s) = κ^t L(s)` with `κ = 1 + ((1−γ)/k)(e^η + e^{−η} − 2) − (1−e^{−η})γ`, and
    /// the OS costs `φ_t(s + e_l) − φ_t(s)` are eq. 5/6's matrix times `κ^t`. Checked here
    /// against the recursion `φ_t(s) = Σ_l u_γ(l) φ_{t−1}(s + e_l)` that defines the
    /// potentials, by brute force. (The exact engine of [`PotentialEngine`] computes the 0-1
    /// loss's potentials only, so the closed form is checked against the recursion it
    /// implements rather than against the engine itself.)
    #[test]
    fn the_exponential_potential_has_lemma_1s_closed_form() {
        fn recursion(s: &mut [f64], y: usize, t: usize, b: &[f64], eta: f64) -> f64 {
            if t == 0 {
                return (0..s.len())
                    .filter(|&l| l != y)
                    .map(|l| (eta * (s[l] - s[y])).exp())
                    .sum();
            }
            (0..s.len())
                .map(|l| {
                    s[l] += 1.0;
                    let v = recursion(s, y, t - 1, b, eta);
                    s[l] -= 1.0;
                    b[l] * v
                })
                .sum()
        }
        for (k, gamma, eta) in [(3, 0.1, 0.3f64), (4, 0.2, 0.7), (5, 0.05, 1.1)] {
            let y = 1;
            let mut b = vec![(1.0 - gamma) / k as f64; k];
            b[y] += gamma;
            let kappa = 1.0 + ((1.0 - gamma) / k as f64) * (eta.exp() + (-eta).exp() - 2.0)
                - (1.0 - (-eta).exp()) * gamma;
            let mut s: Vec<f64> = (0..k).map(|l| ((l * 7) % 5) as f64 - 2.0).collect();
            let loss = |s: &[f64]| -> f64 {
                (0..k)
                    .filter(|&l| l != y)
                    .map(|l| (eta * (s[l] - s[y])).exp())
                    .sum()
            };
            for t in 0..5 {
                let exact = recursion(&mut s, y, t, &b, eta);
                let closed = kappa.powi(t as i32) * loss(&s);
                assert!((exact - closed).abs() < 1e-12 * closed, "k {k}, t {t}");
                // The OS cost of each label over φ_t(s), against eq. 5/6 at f = η s.
                for l in 0..k {
                    let mut next = s.clone();
                    next[l] += 1.0;
                    let cost = kappa.powi(t as i32) * (loss(&next) - loss(&s));
                    let ratio = |j: usize| (eta * (s[j] - s[y])).exp();
                    let eq6 = if l == y {
                        ((-eta).exp() - 1.0) * (0..k).filter(|&j| j != y).map(ratio).sum::<f64>()
                    } else {
                        (eta.exp() - 1.0) * ratio(l)
                    };
                    let scaled = kappa.powi(t as i32) * eq6;
                    assert!((cost - scaled).abs() < 1e-12 * scaled.abs().max(1.0), "{l}");
                }
            }
        }
    }
}
