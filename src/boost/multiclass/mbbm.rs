//! OnlineMBBM: the optimal online multiclass boost-by-majority of Jung, Goetz & Tewari
//! (2017), Algorithm 1, as specified in ALGORITHMS.md §2, with exact potentials (§P).
//!
//! * Learner `i` (of `N`) sees the integer vote counts `s` of learners `< i` and the cost
//!   matrix `C[r][l] = φ_{N−i}^r(s + e_l)` of the multiclass 0-1 loss under the baseline
//!   `u_γ^r` (\[JGT\] eq. 4), computed exactly by [`PotentialEngine`] instead of the
//!   authors' Monte Carlo.
//! * Votes: with [`VoteRule::Argmax`] (the default) learner `i` votes its most probable
//!   class, and the learn phase needs only the weight of the true label's row: two base
//!   values on one diagonal of the potentials. With [`VoteRule::ExpectedCost`] it votes
//!   `argmin_l Σ_r p[r]·C[r][l]`, the Bayes decision of a learner that believes its class
//!   probabilities `p`, the cost-sensitive decision the theory asks of a weak learner
//!   (\[JGT\] Def. 1) and what the authors' code does; it needs one potential bundle per
//!   distinct vote count (§P.2.6), 3–13 times the cost per row. Argmax votes are the
//!   default because they are also the more accurate on six of the seven data sets
//!   measured with both (benchmarks/RESULTS.md; balance_scale is the exception).
//! * Learning: learner `i` is trained on the true label with weight
//!   `w = Σ_l (C[y][l] − C[y][y])` (\[JGT\] Alg. 1 line 9), `≤ k − 1`, divided by `k − 1`
//!   ([`WeightNorm::KMinusOne`], the a-priori bound standing in for the unknown
//!   `max_t w_t`) and multiplied by the learner's weight scale; rows whose outcome is
//!   already decided (`w = 0`, or within the potentials' rounding:
//!   [`super::potential::WEIGHT_NOISE`]) are skipped.
//! * Prediction: `argmax_l s[l]` over all `N` votes (ties broken by the tie rule), the
//!   paper's. As an option of the library (the default of `--algo mbbm`), the prefix of the
//!   votes that Hedge picks ([`PrefixExperts`]: expert `i` is `argmax` of the first `i`
//!   votes), with a lead tree as learner 1; the learners' weights are the paper's either
//!   way. Hedge's weights are part of the saved state, so a restored model predicts on.
//!
//! `n = N − i` remaining draws follows the paper (the authors' code uses `N − i + 1`,
//! ALGORITHMS.md E.7).

use std::fmt;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::cost::{least_expected_cost, one_hot};
use super::potential::{PotentialEngine, WEIGHT_NOISE};
use crate::boost::hedge::PrefixExperts;
use crate::boost::two_threads::{self, TwoThreads};
use crate::boost::{
    BoosterConfig, ExpertSelection, LeadMember, LearnerScales, Members, Turn, VoteRule, Waking,
    WeightScale, add_class_to_members, all_members, check_gamma, experts_note, lead_note, learn_by,
    wake_experts,
};
use crate::core::math::{TieBreak, argmax_tie};
use crate::core::{ClassId, Rng};
use crate::drift::{DriftConfig, Watch};
use crate::learner::{Classifier, learnable, predict_rows_by_member};
use crate::weak::hoeffding::Preset;
use crate::{Error, Result};

/// How OnlineMBBM normalises the weight `w = Σ_l (C[y][l] − C[y][y])` it passes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum WeightNorm {
    /// `w/(k − 1)`, in `[0, 1]` as the theory's weights are.
    #[default]
    KMinusOne,
    /// `w` as it is.
    Raw,
}

/// Hyper-parameters of [`OnlineMbbm`] (ALGORITHMS.md §2.1), generic over the weak learner's
/// config.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OnlineMbbmConfig<W> {
    /// Number of weak learners `N`.
    pub n_learners: usize,
    /// The assumed edge `γ ∈ (0, 1)` (the paper's grid: 0.3, 0.1, 0.05, 0.01, 0.001).
    pub gamma: f64,
    /// How learners vote.
    pub vote_rule: VoteRule,
    /// Normalisation of the learners' weights.
    pub weight_norm: WeightNorm,
    /// Per-learner weight scale (the authors: `0.1·U[5, 200]`).
    pub weight_scale: WeightScale,
    /// Tie rule for votes and the final prediction.
    pub tie_break: TieBreak,
    /// The certified pruning bound ε of the potentials (ALGORITHMS.md §P.2.8): every
    /// potential is within ε of the exact one. 0 (the default) computes them exactly.
    #[serde(default)]
    pub epsilon_prune: f64,
    /// The weak learners' config.
    pub weak: W,
    /// Which prefix of the members predicts: [`ExpertSelection::Last`] (the default, and the
    /// paper's) votes with all `N`; `Sample` or `Best` weigh the prefixes `1..N` by Hedge on
    /// their 0-1 loss (rate 1), as Adaboost.OLM does ([`PrefixExperts`]). The members learn
    /// exactly as without it.
    #[serde(default = "all_members")]
    pub expert_selection: ExpertSelection,
    /// The first member as a tree of this preset instead of `weak` (see
    /// [`crate::boost::LeadMember`]); with prefix experts, "that tree alone" is an expert.
    /// Only construction reads it.
    #[serde(default)]
    pub lead: Option<Preset>,
    /// The lead as a Hoeffding adaptive tree of its preset (`weak::hat`), where the lead is
    /// a plain tree: its split nodes watch their error and swap in subtrees grown after a
    /// change ([`crate::boost::LeadMember::as_lead`]). `false` in a config written without
    /// it; a named `--drift-detector` clears it.
    #[serde(default)]
    pub lead_adapts: bool,
    /// The detector an adaptive lead wakes on every other member when it first swaps a
    /// subtree in, and on the experts' own error (`crate::boost::Turn`); `None` in a config
    /// written without it. A named `--drift-detector` clears it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lead_wakes: Option<DriftConfig>,
}

impl<W> OnlineMbbmConfig<W> {
    /// The paper's defaults (100 learners, γ = 0.1) over the given weak learner.
    pub fn new(weak: W) -> Self {
        OnlineMbbmConfig {
            n_learners: 100,
            gamma: 0.1,
            vote_rule: VoteRule::Argmax,
            weight_norm: WeightNorm::KMinusOne,
            weight_scale: WeightScale::Constant(1.0),
            tie_break: TieBreak::Random,
            epsilon_prune: 0.0,
            weak,
            expert_selection: ExpertSelection::Last,
            lead: None,
            lead_adapts: false,
            lead_wakes: None,
        }
    }
}

impl<W: LeadMember> fmt::Display for OnlineMbbmConfig<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "OnlineMBBM(N={}, gamma={}, vote={:?}, weights/{:?}, weight scale={}, epsilon={}{}{}) over {}",
            self.n_learners,
            self.gamma,
            self.vote_rule,
            self.weight_norm,
            self.weight_scale,
            self.epsilon_prune,
            experts_note(self.expert_selection),
            lead_note(
                self.lead,
                self.lead_adapts,
                self.lead_wakes.as_ref(),
                &self.weak
            ),
            self.weak
        )
    }
}

/// The potential engine: derived from `(k, γ, N)`, so never saved; built on first use. A
/// mutex lets the read-only scoring path share the cache.
#[derive(Debug, Default)]
struct Engine(Mutex<Option<PotentialEngine>>);

impl Clone for Engine {
    fn clone(&self) -> Self {
        Engine(Mutex::new(self.0.lock().expect("engine lock").clone()))
    }
}

/// Per-row buffers, reused.
#[derive(Debug, Clone, Default)]
struct Workspace {
    /// Vote counts `s`.
    s: Vec<i64>,
    p: Vec<f64>,
    expected: Vec<f64>,
    row: Vec<f64>,
    /// Distinct vote counts and how many labels have each.
    counts: Vec<(i64, usize)>,
    /// The row classes with `p > 0`: their mass and vote count.
    classes: Vec<(f64, i64)>,
    /// The vote counts as `f64`, for the tie rule.
    votes: Vec<f64>,
    /// Each prefix's label `argmax s^i`, where prefix experts are kept.
    experts: Vec<ClassId>,
}

impl<W> BoosterConfig for OnlineMbbmConfig<W> {
    booster_members!(OnlineMbbm, n_learners);

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
        check_gamma(self.gamma)?;
        if !(self.epsilon_prune >= 0.0 && self.epsilon_prune < 1.0) {
            return Err(Error::config("epsilon_prune", "must be in [0, 1)"));
        }
        self.weight_scale.validate()
    }

    fn assemble_over<L: Classifier + Clone>(&self, mut m: Members<L>) -> Result<Self::Over<L>> {
        let (watch, sleeping) = m.experts_watch()?;
        Ok(OnlineMbbm {
            k: m.k,
            gamma: self.gamma,
            vote_rule: self.vote_rule,
            weight_norm: self.weight_norm,
            tie_break: self.tie_break,
            epsilon_prune: self.epsilon_prune,
            prefixes: PrefixExperts::unless_last(m.len(), self.expert_selection)
                .map(|p| p.watching(watch)),
            sleeping,
            scales: self.weight_scale.draw(m.len(), &mut m.rng),
            learners: m.learners,
            rng: m.rng,
            engine: Engine::default(),
            work: Workspace::default(),
            threads: TwoThreads::default(),
        })
    }
}

tune!(OnlineMbbmConfig {
    Learners => n_learners,
    Gamma => gamma,
    WeightScale => weight_scale,
    Vote => vote_rule,
    WeightNorm => weight_norm,
    EpsilonPrune => epsilon_prune,
    Expert => expert_selection,
} lead: lead, lead_adapts, lead_wakes);

/// The OnlineMBBM booster over weak learners `L`. Build it from an [`OnlineMbbmConfig`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OnlineMbbm<L> {
    k: usize,
    gamma: f64,
    vote_rule: VoteRule,
    weight_norm: WeightNorm,
    tie_break: TieBreak,
    #[serde(default)]
    epsilon_prune: f64,
    /// Hedge over the prefixes, where they predict (`None`: all `N` members vote).
    #[serde(default)]
    prefixes: Option<PrefixExperts>,
    /// The experts' detector while the members' response sleeps until the lead adapts
    /// (`crate::boost::Turn`); `None` once woken, or where no response sleeps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sleeping: Option<Watch>,
    scales: LearnerScales,
    learners: Vec<L>,
    rng: Rng,
    #[serde(skip)]
    engine: Engine,
    #[serde(skip)]
    work: Workspace,
    /// One thread or two for rows that come several at a time.
    #[serde(skip)]
    threads: TwoThreads,
}

impl<L: Classifier> OnlineMbbm<L> {
    /// The class probabilities [`Classifier::predict_proba`] gives a row whose learners'
    /// probabilities `member(i, p)` writes.
    fn vote(&self, out: &mut [f64], member: &mut dyn FnMut(usize, &mut [f64])) {
        let mut work = Workspace::default();
        let mut rng = Rng::new(0); // not drawn from: TieBreak::Lowest
        let params = (
            self.vote_rule,
            self.weight_norm,
            TieBreak::Lowest,
            self.prefixes.is_some(),
        );
        let mut slot = self.engine.0.lock().expect("engine lock");
        let n = self.learners.len();
        let engine = slot.get_or_insert_with(|| self.new_engine(n));
        Self::forward(
            self.k,
            params,
            n,
            None,
            false,
            engine,
            &mut work,
            &mut rng,
            |i, _, p| {
                member(i, p);
                false
            },
        );
        match &self.prefixes {
            Some(prefixes) => prefixes.mixture(&work.experts, out),
            None => Self::vote_distribution(&work.s, out),
        }
    }

    /// Potential bundles computed and served from the cache so far.
    pub fn potential_counts(&self) -> (u64, u64) {
        self.engine
            .0
            .lock()
            .expect("engine lock")
            .as_ref()
            .map_or((0, 0), PotentialEngine::counts)
    }

    /// The engine for `n_learners` members (passed: [`Self::run`] holds them apart).
    fn new_engine(&self, n_learners: usize) -> PotentialEngine {
        PotentialEngine::new(self.k, self.gamma, n_learners).with_pruning(self.epsilon_prune)
    }

    /// Predicts a row through `member(i, turn, p)`, learner `i`'s probabilities into `p`
    /// (and, given `learning`, `(y, weight)` and the scales, hands learner `i` its weight on
    /// the row to learn it): returns the final vote counts in `work.s` and, if `params.3`
    /// (prefix experts), each prefix's label in `work.experts`. Learner `i`'s weight depends
    /// only on the votes of learners `< i`, so each member predicts and learns in one call.
    /// Where the members' response sleeps until the lead adapts (`asleep`), the turns wake
    /// it ([`Waking`]); returns whether this row did.
    #[allow(clippy::too_many_arguments)]
    fn forward(
        k: usize, params: (VoteRule, WeightNorm, TieBreak, bool), n_learners: usize,
        learning: Option<(ClassId, f64, &mut LearnerScales)>, asleep: bool,
        engine: &mut PotentialEngine, work: &mut Workspace, rng: &mut Rng,
        mut member: impl FnMut(usize, Turn, &mut [f64]) -> bool,
    ) -> bool {
        let (vote_rule, weight_norm, tie, prefixes) = params;
        work.s.clear();
        work.s.resize(k, 0);
        work.votes.clear();
        work.votes.resize(k, 0.0);
        work.experts.resize(n_learners, 0);
        work.p.resize(k, 0.0);
        work.row.resize(k, 0.0);
        work.expected.resize(k, 0.0);
        let norm = match weight_norm {
            WeightNorm::KMinusOne => (k - 1) as f64,
            WeightNorm::Raw => 1.0,
        };
        let mut learning = learning;
        let mut waking = Waking::new(asleep);
        for i in 0..n_learners {
            let n = n_learners - 1 - i;
            match &mut learning {
                None => _ = member(i, Turn::PREDICT, &mut work.p),
                Some((y, weight, scales)) => {
                    // w = Σ_l (C[y][l] − C[y][y]) at s^{i−1} (Alg. 1 line 9). Expected-cost
                    // votes need row C[y]'s bundle anyway; argmax votes need two base values.
                    let w = match vote_rule {
                        VoteRule::ExpectedCost => {
                            engine.cost_row(n, &work.s, *y, &mut work.row);
                            let cy = work.row[*y];
                            work.row.iter().map(|c| (c - cy).max(0.0)).sum()
                        }
                        VoteRule::Argmax => engine.true_label_weight(n, &work.s, *y),
                    };
                    // A weight within the potentials' rounding is a decided row: zero, not a
                    // speck that would still reach the tree (and its first-seen prior).
                    let w = if w <= WEIGHT_NOISE { 0.0 } else { w };
                    let w = scales.factor(i, *weight * w / norm) * *weight * w / norm;
                    waking.take_turn(i, w, |turn| member(i, turn, &mut work.p));
                }
            }
            let vote = match vote_rule {
                VoteRule::Argmax => argmax_tie(&work.p, tie, rng),
                VoteRule::ExpectedCost => match one_hot(&work.p) {
                    Some(l) => l,
                    None => least_expected_cost_vote(n, engine, work, tie, rng),
                },
            };
            work.s[vote] += 1;
            if prefixes {
                work.votes[vote] += 1.0;
                work.experts[i] = argmax_tie(&work.votes, tie, rng);
            }
        }
        waking.woke()
    }

    /// Class probabilities of the final vote: uniform over the labels with the most votes.
    fn vote_distribution(s: &[i64], out: &mut [f64]) {
        let top = s.iter().copied().max().unwrap_or(0);
        let tied = s.iter().filter(|&&v| v == top).count() as f64;
        for (o, &v) in out.iter_mut().zip(s) {
            *o = if v == top { 1.0 / tied } else { 0.0 };
        }
    }

    fn run(&mut self, x: &[f64], target: Option<(ClassId, f64)>, out: &mut [f64]) -> ClassId {
        let mut learners = std::mem::take(&mut self.learners);
        let y = target.map(|(y, _)| y);
        let n = learners.len();
        let predicted = two_threads::LearnsBeside::row(self, n, target, out, |i, turn, p| {
            turn.take(&mut learners[i], x, y, p)
        });
        self.learners = learners;
        predicted
    }
}

/// The vote of least expected cost `Σ_r p[r]·C[r][l]` at vote counts `work.s` with `n` draws
/// to come (ALGORITHMS.md §1.3), one bundle per distinct count among labels with `p > 0`
/// (§P.2.6). The heaviest row classes come first, and the loop stops once one label's
/// cost, whatever the rows still to come hold (potentials lie in [0, 1]), is below every
/// other label's: the same vote, with fewer bundles when the learner is confident.
fn least_expected_cost_vote(
    n: usize, engine: &mut PotentialEngine, work: &mut Workspace, tie: TieBreak, rng: &mut Rng,
) -> ClassId {
    let Workspace {
        s,
        p,
        expected,
        row,
        counts,
        classes,
        ..
    } = work;
    counts.clear();
    for &v in s.iter() {
        match counts.iter_mut().find(|(c, _)| *c == v) {
            Some(entry) => entry.1 += 1,
            None => counts.push((v, 1)),
        }
    }
    classes.clear();
    for &(x, _) in counts.iter() {
        let mass: f64 = s
            .iter()
            .zip(p.iter())
            .filter(|(v, _)| **v == x)
            .map(|(_, q)| q)
            .sum();
        if mass > 0.0 {
            classes.push((mass, x));
        }
    }
    classes.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut unseen: f64 = classes.iter().map(|c| c.0).sum();
    expected.fill(0.0);
    row.resize(s.len(), 0.0);
    for &(mass, x) in classes.iter() {
        // Every row of the class is row `r` with its labels permuted (§P.1.6): `C[r][r]` is
        // the plus state, and every other label of the class sits at gap 0 from `r`.
        let r = s.iter().position(|&v| v == x).expect("a label per class");
        engine.cost_row(n, s, r, row);
        let same = (r + 1..s.len())
            .find(|&l| s[l] == x)
            .map_or(0.0, |l| row[l]);
        for (l, e) in expected.iter_mut().enumerate() {
            *e += if s[l] == x {
                // Rows r' ≠ l of this class see l one gap lower; row l itself, the plus state.
                let others = mass - p[l];
                let lower = if others > 0.0 { others * same } else { 0.0 };
                lower + p[l] * row[r]
            } else {
                mass * row[l]
            };
        }
        unseen -= mass;
        if let Some(l) = decided(expected, unseen) {
            return l;
        }
    }
    least_expected_cost(expected, p, tie, rng)
}

/// The label whose partial expected cost, plus all the mass `unseen` at the largest cost 1,
/// stays below every other label's partial cost (with a margin far above rounding), if one
/// does: the full sums can then only pick it, and without a tie.
fn decided(partial: &[f64], unseen: f64) -> Option<ClassId> {
    const MARGIN: f64 = 1e-9;
    let mut best = 0;
    for (l, &c) in partial.iter().enumerate() {
        if c < partial[best] {
            best = l;
        }
    }
    let runner_up = partial
        .iter()
        .enumerate()
        .filter(|&(l, _)| l != best)
        .map(|(_, &c)| c)
        .fold(f64::INFINITY, f64::min);
    (partial[best] + unseen.max(0.0) + MARGIN < runner_up).then_some(best)
}

ensemble!(OnlineMbbm<L> over learners, experts prefixes);

impl<L: Classifier> Classifier for OnlineMbbm<L> {
    fn n_classes(&self) -> usize {
        self.k
    }

    /// The members grow, and the potentials `φ_i` of the `k + 1`-dimensional random walk
    /// replace those of `k` (\[JGT\] eq. (5); ALGORITHMS.md §2.2): the engine is derived from
    /// `(k, γ, N)` and rebuilt on its next use. The weight scales are per learner and stay.
    fn add_class(&mut self) -> Result<()> {
        add_class_to_members(&mut self.k, &mut self.learners)?;
        self.engine = Engine::default();
        self.work = Workspace::default();
        Ok(())
    }

    fn learn(&mut self, x: &[f64], y: ClassId, weight: f64) {
        learn_by(self.k, y, weight, |target, out| {
            self.run(x, Some(target), out);
        });
    }

    /// The probability of each class under the tie rule of the final vote, with the votes
    /// inside the chain breaking ties to the lowest label (no RNG draw: the model is not
    /// changed).
    fn predict_proba(&self, x: &[f64], out: &mut [f64]) {
        self.vote(out, &mut |i, p| self.learners[i].predict_proba(x, p));
    }

    fn predict_proba_rows(&self, xs: &[&[f64]], proba: &mut [f64]) {
        predict_rows_by_member(&self.learners, self.k, xs, proba, |out, member| {
            self.vote(out, member)
        });
    }

    fn learn_predict(
        &mut self, x: &[f64], y: Option<ClassId>, weight: f64, out: &mut [f64],
    ) -> ClassId {
        let target = learnable(y, weight, self.k);
        self.run(x, target, out)
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

impl<L: Classifier> two_threads::LearnsBeside for OnlineMbbm<L> {
    fn threads(&mut self) -> &mut TwoThreads {
        &mut self.threads
    }

    fn members_vec(&mut self) -> &mut Vec<L> {
        &mut self.learners
    }

    /// A row's predictions, draws and updates ([`OnlineMbbm::forward`]).
    fn row(
        &mut self, n: usize, target: Option<(ClassId, f64)>, out: &mut [f64],
        member: impl FnMut(usize, Turn, &mut [f64]) -> bool,
    ) -> ClassId {
        let mut work = std::mem::take(&mut self.work);
        let mut rng = self.rng.clone();
        let mut scales = std::mem::take(&mut self.scales);
        let params = (
            self.vote_rule,
            self.weight_norm,
            self.tie_break,
            self.prefixes.is_some(),
        );
        let fresh = || self.new_engine(n);
        let mut slot = self.engine.0.lock().expect("engine lock");
        let engine = slot.get_or_insert_with(fresh);
        let learning = target.map(|(y, weight)| (y, weight, &mut scales));
        let asleep = self.sleeping.is_some();
        let woke = Self::forward(
            self.k, params, n, learning, asleep, engine, &mut work, &mut rng, member,
        );
        drop(slot);
        self.scales = scales;
        if woke {
            wake_experts(&mut self.sleeping, self.prefixes.as_mut());
        }
        let predicted = match &mut self.prefixes {
            Some(prefixes) => {
                let chosen = prefixes.choose(self.tie_break, &mut rng);
                prefixes.mixture(&work.experts, out);
                if let Some((y, weight)) = target {
                    prefixes.charge(&work.experts, y, weight);
                }
                work.experts[chosen]
            }
            None => {
                work.votes.clear();
                work.votes.extend(work.s.iter().map(|&v| v as f64));
                Self::vote_distribution(&work.s, out);
                argmax_tie(&work.votes, self.tie_break, &mut rng)
            }
        };
        self.rng = rng;
        self.work = work;
        predicted
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two threads against one ([`two_threads::tests::two_threads_match_one`]), with prefix
    /// experts and with every member voting.
    #[test]
    fn rows_on_two_threads_predict_and_learn_as_on_one() {
        for expert_selection in [ExpertSelection::Sample, ExpertSelection::Last] {
            let config = OnlineMbbmConfig {
                n_learners: 7,
                expert_selection,
                weight_scale: WeightScale::UnitMean,
                ..OnlineMbbmConfig::new(crate::weak::WeakLearnerConfig::from(
                    crate::weak::HoeffdingTreeConfig::jgt_paper(),
                ))
            };
            two_threads::tests::two_threads_match_one(config);
        }
    }

    /// The vote that stops early is the vote of least expected cost over the full matrix
    /// `C[r][l] = φ_n^r(s + e_l)`, computed row by row.
    #[test]
    fn early_stopping_vote_is_the_full_matrix_vote() {
        let (k, n_max) = (6, 30);
        let mut engine = PotentialEngine::new(k, 0.1, n_max);
        let mut rng = Rng::new(3);
        let mut work = Workspace::default();
        let mut row = vec![0.0; k];
        let mut stopped = 0;
        for trial in 0..400 {
            let n = rng.below(n_max);
            let mut s = vec![0i64; k];
            for _ in 0..rng.below(n_max - n + 1) {
                s[rng.below(k)] += 1;
            }
            // From confident to flat learners.
            let sharp = 1 + trial % 8;
            let mut p: Vec<f64> = (0..k).map(|_| rng.uniform().powi(sharp)).collect();
            let total: f64 = p.iter().sum();
            p.iter_mut().for_each(|x| *x /= total);
            let mut full = vec![0.0; k];
            for (r, &pr) in p.iter().enumerate() {
                engine.cost_row(n, &s, r, &mut row);
                for (e, c) in full.iter_mut().zip(&row) {
                    *e += pr * c;
                }
            }
            let want = least_expected_cost(&full, &p, TieBreak::Lowest, &mut rng);
            work.s = s;
            work.p = p;
            work.expected.resize(k, 0.0);
            let got =
                least_expected_cost_vote(n, &mut engine, &mut work, TieBreak::Lowest, &mut rng);
            assert_eq!(got, want, "trial {trial}");
            stopped +=
                usize::from(work.expected.iter().sum::<f64>() < full.iter().sum::<f64>() - 1e-9);
        }
        assert!(stopped > 0, "the vote never stopped early");
    }
}
