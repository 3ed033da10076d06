//! Adaboost.OLM: the adaptive online multiclass booster of Jung, Goetz & Tewari (2017),
//! Algorithm 2, as specified in ALGORITHMS.md §3.
//!
//! * Votes: learner `i` votes `l^i` by the expected-cost rule on the cost matrix
//!   `C = ∇L^r(s^{i−1})` of the logistic loss (\[JGT\] eq. 9), and `s^i = s^{i−1} + α^i e_{l^i}`.
//! * Experts: expert `i` predicts `argmax s^i`; the booster predicts with an expert drawn by
//!   Hedge (`λ_i −= 1(ŷ^i ≠ y)`).
//! * Learner weights: `w_i = −C[y][y]/(k−1)` (\[JGT\] Alg. 2 line 14), times the learner's
//!   weight scale.
//! * `α^i` follows projected online gradient descent on `f(α) = L^y(s^{i−1} + α e_{l^i})` over
//!   `[−B, B]` with `η_t = eta0/√t`, `eta0 = 2√2/(k−1)`, using the corrected derivative of
//!   \[JGT\] eq. 10 (ALGORITHMS.md E.2) evaluated at this row's pre-update `α` (E.4).
//!
//! With `k = 2` this is AdaBoost.OL of Beygelzimer, Kale & Luo (2015) (ALGORITHMS.md §7.2).

use std::fmt;

use serde::{Deserialize, Serialize};

use super::cost::{PairwiseCosts, Surrogate};
use crate::boost::hedge::{Hedge, PrefixExperts};
use crate::boost::ogd::Interval;
use crate::boost::two_threads::{self, TwoThreads};
use crate::boost::{
    BoosterConfig, ExpertSelection, LeadMember, LearnerScales, Members, Turn, VoteRule, Waking,
    WeightScale, add_class_to_members, lead_note, wake_experts,
};
use crate::core::math::{TieBreak, argmax, argmax_tie};
use crate::core::{ClassId, Rng};
use crate::drift::{DriftConfig, Watch};
use crate::learner::{Classifier, learnable, predict_rows_by_member};
use crate::weak::hoeffding::Preset;
use crate::{Error, Result};

/// Hyper-parameters of [`AdaBoostOlm`] (ALGORITHMS.md §3.1), generic over the weak learner's
/// config.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdaBoostOlmConfig<W> {
    /// Number of weak learners `N`.
    pub n_learners: usize,
    /// Surrogate loss.
    #[serde(default)]
    pub loss: Surrogate,
    /// `B`: learner weights live in `[−B, B]`; `None` is the surrogate's default (2 for the
    /// logistic and exponential losses, 1 for the square hinge).
    pub alpha_bound: Option<f64>,
    /// OGD step constant for every learner: `η_t = eta0/√t`. `None` is Zinkevich's step
    /// `√2·B/(G_i√t)` with the surrogate's gradient bound `G_i` of learner `i`: the paper's
    /// `2√2/((k−1)√t)` for the logistic loss, and a step shrinking with `i` for the other two
    /// ("a different learning rate for each weak learner", \[JGT-App\] D.1).
    pub eta0: Option<f64>,
    /// Hedge rate `η_H`.
    pub hedge_rate: f64,
    /// Which expert predicts.
    pub expert_selection: ExpertSelection,
    /// How learners vote.
    pub vote_rule: VoteRule,
    /// Per-learner weight scale.
    pub weight_scale: WeightScale,
    /// Tie rule for votes and expert predictions.
    pub tie_break: TieBreak,
    /// The weak learners' config.
    pub weak: W,
    /// The first member as a tree of this preset instead of `weak`, where `weak` is a tree
    /// (for AdaOVA, whose members are bundles of trees, one multiclass tree in place of the
    /// first bundle): the expert "first learner alone" is then that tree,
    /// and Hedge's regret bound keeps the booster near it where the rest adds nothing
    /// ([`crate::boost::LeadMember`]). `None` (every member from `weak`) is the paper's.
    /// Only construction reads it: a checkpoint's members are as they were built.
    #[serde(default)]
    pub lead: Option<Preset>,
    /// The lead as a Hoeffding adaptive tree of its preset (`weak::hat`), where the lead is
    /// a plain tree: its split nodes watch their error and swap in subtrees grown after a
    /// change ([`crate::boost::LeadMember::as_lead`]). `false` in a config written without
    /// it; a named `--drift-detector` clears it.
    #[serde(default)]
    pub lead_adapts: bool,
    /// The detector an adaptive lead wakes on every other member when it first swaps a
    /// subtree in, and on the experts' own error (`crate::boost::Turn`); `None` (the lead's
    /// swaps are the whole response) in a config written without it. A named
    /// `--drift-detector` clears it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lead_wakes: Option<DriftConfig>,
}

impl<W> AdaBoostOlmConfig<W> {
    /// The paper's defaults (100 learners) over the given weak learner.
    pub fn new(weak: W) -> Self {
        AdaBoostOlmConfig {
            n_learners: 100,
            loss: Surrogate::Logistic,
            alpha_bound: None,
            eta0: None,
            hedge_rate: 1.0,
            expert_selection: ExpertSelection::Sample,
            vote_rule: VoteRule::ExpectedCost,
            weight_scale: WeightScale::Constant(1.0),
            tie_break: TieBreak::Random,
            weak,
            lead: None,
            lead_adapts: false,
            lead_wakes: None,
        }
    }

    /// `B`.
    fn bound(&self) -> f64 {
        self.alpha_bound
            .unwrap_or_else(|| self.loss.default_alpha_bound())
    }

    /// The OGD step constant of each of `n` learners for `k` classes: `η_t^i = steps[i]/√t`.
    /// Zinkevich's `η = D/(G√(2t))` with diameter `D = 2B` (ALGORITHMS.md §3.1, §4).
    fn steps(&self, k: usize, n: usize) -> Vec<f64> {
        ogd_steps(self.loss, self.bound(), self.eta0, k, n)
    }
}

/// [`AdaBoostOlmConfig::steps`] for a loss, a bound `B` and an optional constant `eta0`.
fn ogd_steps(loss: Surrogate, b: f64, eta0: Option<f64>, k: usize, n: usize) -> Vec<f64> {
    (1..=n)
        .map(|i| {
            eta0.unwrap_or_else(|| std::f64::consts::SQRT_2 * b / loss.gradient_bound(i, k, b))
        })
        .collect()
}

impl<W: LeadMember> fmt::Display for AdaBoostOlmConfig<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "AdaBoostOLM(N={}, loss={:?}, alpha in [-{b}, {b}], eta0={}, hedge={:?}, vote={:?}, weight scale={}{}) over {}",
            self.n_learners,
            self.loss,
            self.eta0
                .map_or("sqrt(2)*B/G_i".to_string(), |e| e.to_string()),
            self.expert_selection,
            self.vote_rule,
            self.weight_scale,
            lead_note(
                self.lead,
                self.lead_adapts,
                self.lead_wakes.as_ref(),
                &self.weak
            ),
            self.weak,
            b = self.bound(),
        )
    }
}

/// Per-row buffers, reused so that the streaming path allocates nothing.
#[derive(Debug, Clone, Default)]
struct Workspace {
    /// Cumulative votes `s`.
    s: Vec<f64>,
    /// A learner's class probabilities.
    p: Vec<f64>,
    /// Expected cost per label.
    expected: Vec<f64>,
    /// Cost matrix at the current `s`.
    costs: PairwiseCosts,
    /// `l^i` of the current row.
    votes: Vec<ClassId>,
    /// Learner `i`'s weight on the current row, where its learning is put after the
    /// predictions ([`crate::learner::TwoCalls::learn_predicted`]).
    weights: Vec<f64>,
    /// `ŷ^i` of the current row.
    experts: Vec<ClassId>,
}

impl Workspace {
    fn for_model(k: usize, n: usize) -> Self {
        Workspace {
            s: vec![0.0; k],
            p: vec![0.0; k],
            expected: vec![0.0; k],
            costs: PairwiseCosts::default(),
            votes: vec![0; n],
            weights: vec![0.0; n],
            experts: vec![0; n],
        }
    }
}

impl<W> BoosterConfig for AdaBoostOlmConfig<W> {
    booster_members!(AdaBoostOlm, n_learners);

    fn lead(&self) -> Option<Preset> {
        self.lead
    }

    fn lead_adapts(&self) -> bool {
        self.lead_adapts
    }

    fn lead_wakes(&self) -> Option<&DriftConfig> {
        self.lead_wakes.as_ref()
    }

    fn validate_booster(&self) -> Result<()> {
        if self
            .alpha_bound
            .is_some_and(|b| !(b > 0.0 && b.is_finite()))
        {
            return Err(Error::config("alpha_bound", "must be > 0"));
        }
        if self.eta0.is_some_and(|e| !(e > 0.0 && e.is_finite())) {
            return Err(Error::config("eta0", "must be > 0"));
        }
        if !(self.hedge_rate >= 0.0 && self.hedge_rate.is_finite()) {
            return Err(Error::config("hedge_rate", "must be >= 0"));
        }
        self.weight_scale.validate()
    }

    fn assemble_over<L: Classifier + Clone>(&self, mut m: Members<L>) -> Result<Self::Over<L>> {
        let n = m.len();
        let (watch, sleeping) = m.experts_watch()?;
        Ok(AdaBoostOlm {
            rules: Rules {
                k: m.k,
                loss: self.loss,
                feasible: Interval::symmetric(self.bound()),
                steps: self.steps(m.k, n),
                weight_bounds: (1..=n)
                    .map(|i| self.loss.weight_bound(i, m.k, self.bound()))
                    .collect(),
                vote_rule: self.vote_rule,
                tie_break: self.tie_break,
            },
            scales: self.weight_scale.draw(n, &mut m.rng),
            learners: m.learners,
            alpha: vec![0.0; n],
            prefixes: PrefixExperts::new(n, self.hedge_rate, self.expert_selection).watching(watch),
            sleeping,
            rows: 0,
            restarted_at: 0,
            rng: m.rng,
            work: Workspace::default(),
            threads: TwoThreads::default(),
        })
    }
}

tune!(AdaBoostOlmConfig {
    Learners => n_learners,
    WeightScale => weight_scale,
    Surrogate => loss,
    Expert => expert_selection,
    Vote => vote_rule,
} lead: lead, lead_adapts, lead_wakes);

/// What the forward and learn passes read of an [`AdaBoostOlm`] and never change (its
/// fields are the booster's own in a checkpoint).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Rules {
    k: usize,
    loss: Surrogate,
    feasible: Interval,
    /// OGD step constant of each learner: `η_t^i = steps[i]/√t`.
    steps: Vec<f64>,
    /// The bound on `−C[y][y]` that normalises each learner's weight.
    weight_bounds: Vec<f64>,
    vote_rule: VoteRule,
    tie_break: TieBreak,
}

/// The Adaboost.OLM booster over weak learners `L`. Build it from an [`AdaBoostOlmConfig`].
///
/// On a thread of rayon's pool, rows that cost more than 50 µs on one thread and come
/// several at a time ([`Classifier::learn_predict_rows`]) have their trees learn on a second
/// thread, with the outputs and the model of one thread.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AdaBoostOlm<L> {
    #[serde(flatten)]
    rules: Rules,
    scales: LearnerScales,
    learners: Vec<L>,
    /// Learner weights `α^i`.
    alpha: Vec<f64>,
    /// Hedge over the experts, and which one predicts (stored as the fields
    /// `expert_selection` and `hedge`).
    #[serde(flatten)]
    prefixes: PrefixExperts,
    /// Rows learnt (ALGORITHMS.md §0: the first learnt row has `t = 1`).
    rows: u64,
    /// The row after which the experts last restarted (0: never): OGD's clock `t` counts
    /// the rows since (see [`AdaBoostOlm::update`]).
    #[serde(default)]
    restarted_at: u64,
    /// The experts' detector while the members' response sleeps until the lead adapts
    /// (`crate::boost::Turn`); `None` once woken, or where no response sleeps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sleeping: Option<Watch>,
    rng: Rng,
    #[serde(skip)]
    work: Workspace,
    /// One thread or two for rows that come several at a time.
    #[serde(skip)]
    threads: TwoThreads,
}

impl Rules {
    /// Predict phase (ALGORITHMS.md §3.4): fills `work.votes` (`l^i`) and `work.experts`
    /// (`ŷ^i`) for row `x` from the learners' probabilities, which `member(i, w, p)` writes
    /// to `p`. Ties are broken with `tie` and `rng`.
    ///
    /// Given `learning` (the row's label `y`, its weight and the learners' scales), learner
    /// `i` is handed the row's weight for it, `w_i = −C[y][y]/(k−1)` at `s^{i−1}` (§3.4 step
    /// (a)) times its scale, as `Some(w_i)`, also kept in `work.weights`: the member learns
    /// the row right after predicting it, or later ([`crate::learner::TwoCalls::learn_predicted`]). That
    /// weight depends only on the votes and pre-update `α` of learners `< i`, all known
    /// here, so each member routes the row once for both phases.
    ///
    /// Where the members' drift response sleeps until the lead adapts (`asleep`), the
    /// learning members' turns wake it ([`Waking`]); returns whether this row did.
    #[allow(clippy::too_many_arguments)]
    fn forward(
        &self, alpha: &[f64], learning: Option<(ClassId, f64, &mut LearnerScales)>, asleep: bool,
        work: &mut Workspace, tie: TieBreak, rng: &mut Rng,
        mut member: impl FnMut(usize, Turn, &mut [f64]) -> bool,
    ) -> bool {
        let k = self.k;
        work.s.iter_mut().for_each(|v| *v = 0.0);
        work.costs.reset(self.loss, k);
        let mut learning = learning;
        let mut waking = Waking::new(asleep);
        for (i, &alpha_i) in alpha.iter().enumerate() {
            match &mut learning {
                None => _ = member(i, Turn::PREDICT, &mut work.p),
                Some((y, weight, scales)) => {
                    // −C[y][y] at s^{i−1}, kept by the cost matrix.
                    let w = self.loss.normalised_weight(
                        -work.costs.get(*y, *y),
                        self.weight_bounds[i],
                        i + 1,
                        k,
                        self.feasible.hi,
                    );
                    let scale = scales.factor(i, w * *weight);
                    work.weights[i] = scale * w * *weight;
                    waking.take_turn(i, work.weights[i], |turn| member(i, turn, &mut work.p));
                }
            }
            let vote = match self.vote_rule {
                VoteRule::Argmax => argmax_tie(&work.p, tie, rng),
                VoteRule::ExpectedCost => {
                    work.costs
                        .expected_cost_vote(&work.p, &mut work.expected, tie, rng)
                }
            };
            work.votes[i] = vote;
            if alpha_i != 0.0 {
                work.s[vote] += alpha_i;
                work.costs.update(self.loss, &work.s, vote);
            }
            work.experts[i] = argmax_tie(&work.s, tie, rng);
        }
        waking.woke()
    }

    /// Learn phase (ALGORITHMS.md §3.4 steps (b)–(c)) at row `t`, from the votes of
    /// [`Rules::forward`].
    fn update(&self, alpha: &mut [f64], t: u64, y: ClassId, weight: f64, work: &mut Workspace) {
        let root_t = (t as f64).sqrt();
        work.s.iter_mut().for_each(|v| *v = 0.0);
        for (i, alpha_i) in alpha.iter_mut().enumerate() {
            let alpha_old = *alpha_i;
            let vote = work.votes[i];
            // (b) projected OGD step on α^i with the corrected eq. 10 at α_old.
            let g = self.loss.alpha_gradient(&work.s, y, vote, alpha_old);
            *alpha_i = self
                .feasible
                .step(alpha_old, weight * g, self.steps[i] / root_t);
            // (c) s^i with this row's (pre-update) α.
            work.s[vote] += alpha_old;
        }
    }
}

impl<L: Classifier> AdaBoostOlm<L> {
    /// The class probabilities [`Classifier::predict_proba`] gives a row whose learners'
    /// probabilities `member(i, p)` writes: the experts' votes, mixed by Hedge's weights.
    fn vote(&self, out: &mut [f64], member: &mut dyn FnMut(usize, &mut [f64])) {
        let mut work = Workspace::for_model(self.rules.k, self.learners.len());
        let mut rng = Rng::new(0); // not drawn from: TieBreak::Lowest
        self.rules.forward(
            &self.alpha,
            None,
            false,
            &mut work,
            TieBreak::Lowest,
            &mut rng,
            |i, _, p| {
                member(i, p);
                false
            },
        );
        self.prefixes.mixture(&work.experts, out);
    }

    /// Learner weights `α^i`.
    pub fn alphas(&self) -> &[f64] {
        &self.alpha
    }

    /// Hedge's weights over the experts.
    pub fn hedge(&self) -> &Hedge {
        self.prefixes.hedge()
    }

    /// Predicts row `x` and, given a label, has every member learn it ([`Rules::forward`]).
    fn forward_learning(
        &mut self, x: &[f64], target: Option<(ClassId, f64)>, work: &mut Workspace, rng: &mut Rng,
    ) {
        let tie = self.rules.tie_break;
        let learners = &mut self.learners;
        let learning = target.map(|(y, weight)| (y, weight, &mut self.scales));
        let y = target.map(|(y, _)| y);
        let asleep = self.sleeping.is_some();
        let woke = self.rules.forward(
            &self.alpha,
            learning,
            asleep,
            work,
            tie,
            rng,
            |i, turn, p| turn.take(&mut learners[i], x, y, p),
        );
        if woke {
            wake_experts(&mut self.sleeping, Some(&mut self.prefixes));
        }
    }

    /// Learn phase (ALGORITHMS.md §3.4 steps (b)–(d)) from the votes of [`Rules::forward`],
    /// whose members have already learnt the row (step (a)).
    ///
    /// Where the members are replaced on a drift, the experts restart when the booster's own
    /// error drifts (`hedge::PrefixExperts::watching`), and so does OGD's clock: the steps
    /// `η_t = steps/√t` count `t` from the restart, from the `α` reached. Zinkevich's bound
    /// for OGD holds from any start in the feasible interval, so the rows since a restart
    /// are a fresh run of the paper's α-learning (\[JGT\] §3.1), its regret term counted
    /// from the restart, with steps large enough to move `α` after a change where `1/√t` at
    /// a large `t` would barely move it.
    fn update(&mut self, y: ClassId, weight: f64, work: &mut Workspace) {
        self.rows += 1;
        let t = self.rows - self.restarted_at;
        self.rules.update(&mut self.alpha, t, y, weight, work);
        // (d) Hedge losses of the experts.
        if self.prefixes.charge(&work.experts, y, weight) {
            self.restarted_at = self.rows;
        }
    }

    /// The row workspace for `n` learners.
    fn take_work(&mut self, n: usize) -> Workspace {
        let mut work = std::mem::take(&mut self.work);
        if work.votes.len() != n {
            work = Workspace::for_model(self.rules.k, n);
        }
        work
    }
}

ensemble!(AdaBoostOlm<L> over learners, rows rows, weights alpha, experts prefixes);

impl<L: Classifier> Classifier for AdaBoostOlm<L> {
    fn n_classes(&self) -> usize {
        self.rules.k
    }

    /// The members grow; the weights `α^i`, the experts' losses and the row counter `t` are
    /// the booster's and stay. What `k` enters is re-derived for `k + 1`: the gradient
    /// bound `G_i ∝ k − 1` of the OGD steps `η = √2·B/(G_i√t)` (ALGORITHMS.md §3.1, §4; an
    /// explicit `eta0` is a constant and stays) and the weight bounds of \[JGT\] Alg. 2
    /// line 14. A new class has no cumulative vote, so its cost entries start where a
    /// declared class that was never voted for would be.
    fn add_class(&mut self) -> Result<()> {
        let (b, n) = (self.rules.feasible.hi, self.learners.len());
        // The booster keeps its steps, not `eta0`: steps that are the formula's at `k` are
        // the formula's (an explicit constant would have to equal all `n` of them).
        let by_formula = self.rules.steps == ogd_steps(self.rules.loss, b, None, self.rules.k, n);
        add_class_to_members(&mut self.rules.k, &mut self.learners)?;
        if by_formula {
            self.rules.steps = ogd_steps(self.rules.loss, b, None, self.rules.k, n);
        }
        self.rules.weight_bounds = (1..=n)
            .map(|i| self.rules.loss.weight_bound(i, self.rules.k, b))
            .collect();
        self.work = Workspace::default();
        Ok(())
    }

    fn learn(&mut self, x: &[f64], y: ClassId, weight: f64) {
        let Some(target) = learnable(Some(y), weight, self.rules.k) else {
            return;
        };
        let mut work = self.take_work(self.learners.len());
        let mut rng = self.rng.clone();
        self.forward_learning(x, Some(target), &mut work, &mut rng);
        self.rng = rng;
        self.update(y, weight, &mut work);
        self.work = work;
    }

    /// The probability of each class under the expert choice (Hedge's distribution for
    /// `Sample`). Votes inside the chain break ties to the lowest label here, since the model
    /// is not changed (no RNG draw); this path allocates its small workspace per call.
    fn predict_proba(&self, x: &[f64], out: &mut [f64]) {
        self.vote(out, &mut |i, p| self.learners[i].predict_proba(x, p));
    }

    fn predict_proba_rows(&self, xs: &[&[f64]], proba: &mut [f64]) {
        predict_rows_by_member(&self.learners, self.rules.k, xs, proba, |out, member| {
            self.vote(out, member)
        });
    }

    fn learn_predict(
        &mut self, x: &[f64], y: Option<ClassId>, weight: f64, out: &mut [f64],
    ) -> ClassId {
        let target = learnable(y, weight, self.rules.k);
        let mut learners = std::mem::take(&mut self.learners);
        let n = learners.len();
        let predicted = two_threads::LearnsBeside::row(self, n, target, out, |i, turn, p| {
            turn.take(&mut learners[i], x, y, p)
        });
        self.learners = learners;
        debug_assert!(predicted < self.rules.k && argmax(out) < self.rules.k);
        predicted
    }

    /// On two threads (the trees learning on the second) where that pays, one by one
    /// otherwise (`two_threads::learn_predict_rows`). The same outputs and model either way.
    fn learn_predict_rows(
        &mut self, xs: &[&[f64]], ys: &[Option<ClassId>], weight: f64, proba: &mut [f64],
        predicted: &mut [ClassId],
    ) {
        two_threads::learn_predict_rows(self, xs, ys, weight, proba, predicted);
    }
}

impl<L: Classifier> two_threads::LearnsBeside for AdaBoostOlm<L> {
    fn threads(&mut self) -> &mut TwoThreads {
        &mut self.threads
    }

    fn members_vec(&mut self) -> &mut Vec<L> {
        &mut self.learners
    }

    /// Predict phase through `member`, the expert choice, then the learn phase.
    fn row(
        &mut self, n: usize, target: Option<(ClassId, f64)>, out: &mut [f64],
        member: impl FnMut(usize, Turn, &mut [f64]) -> bool,
    ) -> ClassId {
        let tie = self.rules.tie_break;
        let mut work = self.take_work(n);
        let mut rng = self.rng.clone();
        let learning = target.map(|(y, weight)| (y, weight, &mut self.scales));
        let asleep = self.sleeping.is_some();
        let woke = self.rules.forward(
            &self.alpha,
            learning,
            asleep,
            &mut work,
            tie,
            &mut rng,
            member,
        );
        if woke {
            wake_experts(&mut self.sleeping, Some(&mut self.prefixes));
        }
        let chosen = self.prefixes.choose(tie, &mut rng);
        self.rng = rng;
        let predicted = work.experts[chosen];
        self.prefixes.mixture(&work.experts, out);
        if let Some((y, weight)) = target {
            self.update(y, weight, &mut work);
        }
        self.work = work;
        predicted
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learner::Config;
    use crate::weak::WeakLearnerConfig;
    use crate::weak::hoeffding::HoeffdingTreeConfig;

    /// With a response the lead wakes (`crate::boost::Turn`): the wake falls on the same row,
    /// and the members replaced after it are the same, on two threads as on one.
    #[test]
    fn a_response_the_lead_wakes_wakes_on_two_threads_as_on_one() {
        use crate::weak::hoeffding::Preset;
        let config = AdaBoostOlmConfig {
            n_learners: 5,
            lead: Some(Preset::Moa),
            lead_adapts: true,
            lead_wakes: crate::boost::lead_wakes(),
            ..AdaBoostOlmConfig::new(WeakLearnerConfig::from(HoeffdingTreeConfig::jgt_paper()))
        };
        let model = two_threads::tests::two_threads_match_one_on(
            config,
            crate::boost::tests::flipped_at(6_000, 3_000),
        );
        let replaced: u64 = model.learners[1..]
            .iter()
            .map(|m| match m {
                crate::weak::WeakLearner::Adaptive(a) => a.replacements(),
                other => panic!("not a member of the response: {other:?}"),
            })
            .sum();
        assert!(replaced > 0, "the lead woke no member");
    }

    /// Two threads against one ([`two_threads::tests::two_threads_match_one`]).
    #[test]
    fn rows_on_two_threads_predict_and_learn_as_on_one() {
        let mut config =
            AdaBoostOlmConfig::new(WeakLearnerConfig::from(HoeffdingTreeConfig::jgt_paper()));
        config.n_learners = 7;
        config.weight_scale = WeightScale::UnitMean;
        two_threads::tests::two_threads_match_one(config);
    }

    /// Off rayon's pool (a query engine's thread) rows stay on their thread, however slow.
    #[test]
    fn rows_off_the_pool_stay_on_their_thread() {
        let data = crate::synth::mixed(50, 0.05, 0.1, 8);
        let config =
            AdaBoostOlmConfig::new(WeakLearnerConfig::from(HoeffdingTreeConfig::jgt_paper()));
        let mut model = config.build(data.spec(), 3).unwrap();
        let k = data.spec().n_classes();
        let xs: Vec<&[f64]> = (0..data.len()).map(|i| data.row(i)).collect();
        let ys: Vec<Option<ClassId>> = (0..data.len()).map(|i| data.label(i)).collect();
        let (mut proba, mut predicted) = (vec![0.0; xs.len() * k], vec![0; xs.len()]);
        model.learn_predict_rows(&xs, &ys, 1.0, &mut proba, &mut predicted);
        let pace = &model.threads.pace;
        assert!(!pace.split && pace.rows == xs.len() as u64);
        assert!(pace.per_row > std::time::Duration::ZERO);
    }
}
