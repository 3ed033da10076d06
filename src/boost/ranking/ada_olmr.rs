//! Ada.OLMR: the adaptive online multi-label ranking booster of Jung & Tewari (2018),
//! Algorithm 3, as specified in ALGORITHMS.md §6.
//!
//! * Votes: `s^i = s^{i−1} + α^i h^i` with learner distributions `h^i`; expert `i` ranks by
//!   `s^i`, and the booster by an expert drawn by Hedge on the rank loss (`η_H = 1`).
//! * Costs: the gradient of the logistic surrogate
//!   `L_log^Y(s) = w_Y Σ_{l∈Y, r∉Y} log(1 + e^{s_r − s_l})` at `s^{i−1}` (\[JT\] eq. 8), fed to
//!   learner `i` by the `RelevantLabels` reduction (weight `max c − c[l]` per relevant `l`).
//! * `α^i` follows projected online gradient descent on `[−2, 2]` with `η_t = eta0/√t`, the
//!   derivative being `c^{i+1}·h^i` at this row's pre-update `α` (\[JT\] §3.2).

use std::fmt;

use serde::{Deserialize, Serialize};

use super::{LabelSplit, learn_relevant};
use crate::boost::hedge::Hedge;
use crate::boost::ogd::Interval;
use crate::boost::{
    BoosterConfig, ExpertSelection, LeadMember, Members, Waking, WeightScale, lead_note,
};
use crate::core::math::{TieBreak, argmax, sigmoid, softmax};
use crate::core::{Rng, zeroed};
use crate::drift::{Change, DriftConfig, Watch};
use crate::learner::{Classifier, Ranker};
use crate::{Error, Result};

/// Hyper-parameters of [`AdaOlmr`] (ALGORITHMS.md §6).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdaOlmrConfig<W> {
    /// Number of weak learners `N`.
    pub n_learners: usize,
    /// `B`: learner weights live in `[−B, B]`.
    pub alpha_bound: f64,
    /// OGD step constant: `η_t = eta0/√t`.
    pub eta0: f64,
    /// Hedge rate `η_H`.
    pub hedge_rate: f64,
    /// Which expert ranks.
    pub expert_selection: ExpertSelection,
    /// Per-learner weight scale.
    pub weight_scale: WeightScale,
    /// Tie rule of `ExpertSelection::Best`.
    pub tie_break: TieBreak,
    /// The weak learners' config.
    pub weak: W,
    /// The first member as a Hoeffding adaptive tree of the members' own tree, where they
    /// are trees: its split nodes watch their error and swap in subtrees grown after a
    /// change (`crate::boost::LeadMember::as_lead`). Its costs are those at `s^0 = 0`, so
    /// its windows move only when the stream does. `false` (the paper's) in a config
    /// written without it; a named `--drift-detector` clears it.
    #[serde(default)]
    pub lead_adapts: bool,
    /// The detector the adaptive first member wakes on every other member when it first
    /// swaps a subtree in (`crate::boost::Turn`) and on the ranker's own rank loss; `None`
    /// in a config written without it. A named `--drift-detector` clears it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lead_wakes: Option<DriftConfig>,
}

impl<W> AdaOlmrConfig<W> {
    /// The paper's defaults (100 learners, `α ∈ [−2, 2]`, `η_t = 1/√t`) over `weak`.
    pub fn new(weak: W) -> Self {
        AdaOlmrConfig {
            n_learners: 100,
            alpha_bound: 2.0,
            eta0: 1.0,
            hedge_rate: 1.0,
            expert_selection: ExpertSelection::Sample,
            weight_scale: WeightScale::Constant(1.0),
            tie_break: TieBreak::Random,
            weak,
            lead_adapts: false,
            lead_wakes: None,
        }
    }
}

impl<W: LeadMember> fmt::Display for AdaOlmrConfig<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "AdaOLMR(N={}, alpha in [-{b}, {b}], eta0={}, hedge={:?}, weight scale={}{}) over {}",
            self.n_learners,
            self.eta0,
            self.expert_selection,
            self.weight_scale,
            lead_note(None, self.lead_adapts, self.lead_wakes.as_ref(), &self.weak),
            self.weak,
            b = self.alpha_bound,
        )
    }
}

/// Per-row buffers, reused so that the streaming path allocates nothing.
#[derive(Debug, Clone, Default)]
struct Workspace {
    s: Vec<f64>,
    h: Vec<f64>,
    c: Vec<f64>,
    c_next: Vec<f64>,
    split: LabelSplit,
    mask: Vec<bool>,
}

impl<W> BoosterConfig for AdaOlmrConfig<W> {
    booster_members!(AdaOlmr, n_learners);

    fn lead_adapts(&self) -> bool {
        self.lead_adapts
    }

    fn lead_wakes(&self) -> Option<&DriftConfig> {
        self.lead_wakes.as_ref()
    }

    fn validate_booster(&self) -> Result<()> {
        let positive = |v: f64| v > 0.0 && v.is_finite();
        if !positive(self.alpha_bound) {
            return Err(Error::config("alpha_bound", "must be > 0"));
        }
        if !positive(self.eta0) {
            return Err(Error::config("eta0", "must be > 0"));
        }
        if !(self.hedge_rate >= 0.0 && self.hedge_rate.is_finite()) {
            return Err(Error::config("hedge_rate", "must be >= 0"));
        }
        self.weight_scale.require_fixed("ada-olmr")
    }

    fn assemble_over<L: Classifier + Clone>(&self, mut m: Members<L>) -> Result<Self::Over<L>> {
        let n = m.len();
        let (watch, sleeping) = m.experts_watch()?;
        Ok(AdaOlmr {
            k: m.k,
            work: Workspace::default(),
            feasible: Interval::symmetric(self.alpha_bound),
            eta0: self.eta0,
            expert_selection: self.expert_selection,
            tie_break: self.tie_break,
            scales: self.weight_scale.draw(n, &mut m.rng).into_fixed(),
            learners: m.learners,
            alpha: vec![0.0; n],
            hedge: Hedge::new(n, self.hedge_rate),
            watch,
            sleeping,
            rows: 0,
            restarted_at: 0,
            rng: m.rng,
        })
    }
}

tune!(AdaOlmrConfig {
    Learners => n_learners,
    WeightScale => weight_scale,
    Expert => expert_selection,
} first: lead_adapts, lead_wakes);

/// The Ada.OLMR ranker over weak learners `L`. Build it from an [`AdaOlmrConfig`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AdaOlmr<L> {
    k: usize,
    /// The row's vectors, reused (not state: a restored model builds them anew).
    #[serde(skip)]
    work: Workspace,
    feasible: Interval,
    eta0: f64,
    expert_selection: ExpertSelection,
    tie_break: TieBreak,
    scales: Vec<f64>,
    learners: Vec<L>,
    /// Learner weights `α^i` (\[JT\] Algorithm 3), one per learner.
    alpha: Vec<f64>,
    /// Hedge over the experts, on the rank loss.
    hedge: Hedge,
    /// The detector on the ranker's own rank loss, where its learners are replaced on a
    /// drift: a drift restarts Hedge and the clock of the α steps, as Adaboost.OLM's
    /// (`crate::boost::hedge::PrefixExperts::watching`, `multiclass::ada_olm`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    watch: Option<Watch>,
    /// That detector while the members' response sleeps until the first member adapts
    /// (`crate::boost::Turn`); `None` once woken, or where no response sleeps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sleeping: Option<Watch>,
    /// Labelled rows seen.
    rows: u64,
    /// The row after which Hedge last restarted (0: never): the steps' `t` counts from it.
    #[serde(default)]
    restarted_at: u64,
    rng: Rng,
}

/// The cost vector `c = ∇L_log^Y(s)` (\[JT\] eq. 8): `c[l] = −w_Y Σ_{r∉Y} σ(s_r − s_l)` for
/// `l ∈ Y`, `c[r] = w_Y Σ_{l∈Y} σ(s_r − s_l)` for `r ∉ Y`; it sums to zero.
pub fn logistic_cost(s: &[f64], split: &LabelSplit, c: &mut [f64]) {
    c.iter_mut().for_each(|v| *v = 0.0);
    let w = split.pair_weight();
    for &l in &split.relevant {
        let mut own = 0.0;
        for &r in &split.irrelevant {
            let p = w * sigmoid(s[r] - s[l]);
            own += p;
            c[r] += p;
        }
        c[l] = -own;
    }
}

impl<L: Classifier> AdaOlmr<L> {
    /// Learner weights `α^i`.
    pub fn alphas(&self) -> &[f64] {
        &self.alpha
    }

    /// Times Hedge restarted on a drift of the ranker's own rank loss.
    pub fn restarts(&self) -> u64 {
        self.watch.as_ref().map_or(0, |w| w.drifts)
    }

    /// Hedge's weights over the experts.
    pub fn hedge(&self) -> &Hedge {
        &self.hedge
    }

    fn take_work(&mut self) -> Workspace {
        let mut work = std::mem::take(&mut self.work);
        if work.s.len() != self.k {
            zeroed(
                self.k,
                [&mut work.s, &mut work.h, &mut work.c, &mut work.c_next],
            );
        }
        work
    }

    /// One test-then-train step (ALGORITHMS.md §6): the expert is drawn first (Hedge's
    /// weights only change at the end of the row), its scores `s^{i_t}` go to `out`, and
    /// with a label set each learner learns right after its pre-update prediction, its cost
    /// `c^i` depending only on the learners before it.
    fn step(
        &mut self, x: &[f64], relevant: Option<&[bool]>, weight: f64, mut out: Option<&mut [f64]>,
    ) {
        let mut work = self.take_work();
        let labelled = relevant
            .filter(|m| m.len() == self.k && weight > 0.0 && weight.is_finite())
            .map(|m| work.split.fill(m))
            .is_some();
        let learning = labelled && work.split.has_pairs();
        let n = self.learners.len();
        if !labelled && out.is_none() {
            self.work = work;
            return;
        }
        // Only a prediction draws an expert: learning alone consumes no randomness.
        let chosen = out.is_some().then(|| match self.expert_selection {
            ExpertSelection::Sample => self.hedge.sample(&mut self.rng),
            ExpertSelection::Best => self.hedge.best(self.tie_break, &mut self.rng),
            ExpertSelection::Last => n - 1,
        });
        if labelled {
            self.rows += 1;
        }
        let eta = self.eta0 / ((self.rows - self.restarted_at).max(1) as f64).sqrt();
        // The ensemble's own rank loss on this row, as its choice of expert makes it: the
        // experts' losses weighted as the deterministic scores weigh them (watched only).
        let chosen_weights = (learning && self.watch.is_some()).then(|| self.expert_weights());
        let mut own_loss = 0.0;
        let Workspace {
            s,
            h,
            c,
            c_next,
            split,
            ..
        } = &mut work;
        s.iter_mut().for_each(|v| *v = 0.0);
        if learning {
            logistic_cost(s, split, c);
        }
        let mut waking = Waking::new(self.sleeping.is_some());
        for (i, learner) in self.learners.iter_mut().enumerate() {
            if learning {
                let scale = self.scales[i] * weight;
                waking.take_turn(i, scale, |turn| {
                    let adapted = turn.begin(learner);
                    learn_relevant(learner, x, split, c, scale, h);
                    adapted
                });
            } else {
                learner.predict_proba(x, h);
            }
            let alpha_old = self.alpha[i];
            s.iter_mut()
                .zip(h.iter())
                .for_each(|(s, h)| *s += alpha_old * h);
            if chosen == Some(i)
                && let Some(out) = out.as_deref_mut()
            {
                out.copy_from_slice(s);
            }
            if learning {
                // f'(α_old) = c^{i+1}·h^i, with c^{i+1} the gradient at s^i ([JT] §3.2).
                logistic_cost(s, split, c_next);
                let slope: f64 = c_next.iter().zip(h.iter()).map(|(c, h)| c * h).sum();
                self.alpha[i] = self.feasible.step(alpha_old, weight * slope, eta);
                let loss = split.rank_loss(s);
                self.hedge.charge(i, weight * loss);
                if let Some(w) = &chosen_weights {
                    own_loss += w[i] * loss;
                }
                std::mem::swap(c, c_next);
            }
        }
        if learning {
            self.hedge.end_round();
            if let Some(watch) = &mut self.watch
                && watch.update(own_loss.clamp(0.0, 1.0)) == Some(Change::Drift)
            {
                self.hedge.restart();
                self.restarted_at = self.rows;
            }
        }
        // The ranker's own detector starts on the row after the wake's.
        if waking.woke() {
            self.watch = self.sleeping.take();
        }
        self.work = work;
    }

    /// The weight of each expert in the deterministic scores: Hedge's distribution
    /// (`Sample`), the lowest-index best expert (`Best`), or the last one.
    fn expert_weights(&self) -> Vec<f64> {
        let n = self.learners.len();
        match self.expert_selection {
            ExpertSelection::Sample => self.hedge.probabilities().to_vec(),
            ExpertSelection::Best => {
                let mut w = vec![0.0; n];
                w[argmax(self.hedge.log_weights())] = 1.0;
                w
            }
            ExpertSelection::Last => {
                let mut w = vec![0.0; n];
                w[n - 1] = 1.0;
                w
            }
        }
    }
}

ensemble!(AdaOlmr<L> over learners, rows rows, weights alpha, hedge hedge);

impl<L: Classifier> Ranker for AdaOlmr<L> {
    fn n_labels(&self) -> usize {
        self.k
    }

    fn learn_labels(&mut self, x: &[f64], relevant: &[bool], weight: f64) {
        self.step(x, Some(relevant), weight, None);
    }

    /// The expected scores under the expert choice, `Σ_i p_i s^i`.
    fn predict_scores(&self, x: &[f64], out: &mut [f64]) {
        let weights = self.expert_weights();
        let (mut s, mut h) = (vec![0.0; self.k], vec![0.0; self.k]);
        out.iter_mut().for_each(|v| *v = 0.0);
        for ((learner, &alpha), &p) in self.learners.iter().zip(&self.alpha).zip(&weights) {
            learner.predict_proba(x, &mut h);
            s.iter_mut().zip(&h).for_each(|(s, h)| *s += alpha * h);
            if p > 0.0 {
                out.iter_mut().zip(&s).for_each(|(o, s)| *o += p * s);
            }
        }
    }

    fn learn_predict_scores(
        &mut self, x: &[f64], relevant: Option<&[bool]>, weight: f64, out: &mut [f64],
    ) {
        self.step(x, relevant, weight, Some(out));
    }
}

// The singleton reduction: class `y` is the label set `{y}`; the class probabilities are
// the softmax of the scores (the logistic surrogate reads score gaps as log-odds).
classifier_via_ranker!(AdaOlmr, softmax);
