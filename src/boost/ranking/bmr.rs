//! OnlineBMR: online boost-by-majority for multi-label ranking, Jung & Tewari (2018)
//! Algorithm 2, as specified in ALGORITHMS.md §5.
//!
//! * Votes: every learner votes its distribution `h^i` and `s^i = s^{i−1} + h^i` (`α ≡ 1`);
//!   the booster ranks by `s^N`.
//! * Costs: learner `i` gets `c[l] = φ_{N−i}(s^{i−1} + e_l)` (\[JT\] eq. 2), the potential of
//!   the rank or hinge loss with `N − i` draws left from the baseline `u_γ^Y`, computed
//!   exactly through the pair tables of [`super::potential`] in `O(|Y|·|Y^c|)`.
//! * Training: each relevant label `l` with weight `(max c − c[l])/weight_norm` (the
//!   `RelevantLabels` reduction, \[JT\] §4), times the learner's weight scale.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::potential::{PairLoss, WalkTables};
use super::{LabelSplit, learn_relevant};
use crate::boost::{
    BoosterConfig, LeadMember, Members, Waking, WeightScale, check_gamma, lead_note,
};
use crate::core::zeroed;
use crate::drift::DriftConfig;
use crate::learner::{Classifier, Ranker};
use crate::{Error, Result};

/// The loss whose potentials OnlineBMR uses (\[JT\] §3.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RankingLoss {
    /// The rank loss (ties count ½). \[JT\] Theorem 2 asks for a convex loss when learners
    /// vote distributions; this one suits single-label (one-hot) learners.
    Rank,
    /// The hinge loss `(1 + s_r − s_l)_+`: convex, the paper's choice for its experiments.
    #[default]
    Hinge,
}

impl RankingLoss {
    fn pair_loss(self) -> PairLoss {
        match self {
            RankingLoss::Rank => PairLoss::Rank,
            RankingLoss::Hinge => PairLoss::Hinge,
        }
    }

    /// The bound on `max c − min c` that normalises the weights (\[JT\] Table 1): 2 for the
    /// hinge loss, 1 for the rank loss.
    pub fn weight_bound(self) -> f64 {
        match self {
            RankingLoss::Rank => 1.0,
            RankingLoss::Hinge => 2.0,
        }
    }
}

/// Hyper-parameters of [`OnlineBmr`] (ALGORITHMS.md §5.4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OnlineBmrConfig<W> {
    /// Number of weak learners `N`.
    pub n_learners: usize,
    /// The assumed edge γ of the baseline `u_γ^Y`.
    pub gamma: f64,
    /// Potential of which loss.
    pub loss: RankingLoss,
    /// Divides the learners' weights; `None` is the loss's bound (hinge 2, rank 1).
    pub weight_norm: Option<f64>,
    /// Per-learner weight scale.
    pub weight_scale: WeightScale,
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
    /// swaps a subtree in (`crate::boost::Turn`); `None` in a config written without
    /// it. A named `--drift-detector` clears it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lead_wakes: Option<DriftConfig>,
}

impl<W> OnlineBmrConfig<W> {
    /// The paper's defaults (100 learners, γ = 0.1, hinge potentials) over `weak`.
    pub fn new(weak: W) -> Self {
        OnlineBmrConfig {
            n_learners: 100,
            gamma: 0.1,
            loss: RankingLoss::Hinge,
            weight_norm: None,
            weight_scale: WeightScale::Constant(1.0),
            weak,
            lead_adapts: false,
            lead_wakes: None,
        }
    }

    fn norm(&self) -> f64 {
        self.weight_norm.unwrap_or(self.loss.weight_bound())
    }
}

impl<W: LeadMember> fmt::Display for OnlineBmrConfig<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "OnlineBMR(N={}, gamma={}, loss={:?}, weight norm={}, weight scale={}{}) over {}",
            self.n_learners,
            self.gamma,
            self.loss,
            self.norm(),
            self.weight_scale,
            lead_note(None, self.lead_adapts, self.lead_wakes.as_ref(), &self.weak),
            self.weak
        )
    }
}

/// Per-row buffers and the lazily built pair tables (derived data, not persisted).
#[derive(Debug, Clone, Default)]
struct Workspace {
    s: Vec<f64>,
    h: Vec<f64>,
    c: Vec<f64>,
    split: LabelSplit,
    mask: Vec<bool>,
    tables: Option<WalkTables>,
}

impl<W> BoosterConfig for OnlineBmrConfig<W> {
    booster_members!(OnlineBmr, n_learners);

    fn lead_adapts(&self) -> bool {
        self.lead_adapts
    }

    fn lead_wakes(&self) -> Option<&DriftConfig> {
        self.lead_wakes.as_ref()
    }

    fn validate_booster(&self) -> Result<()> {
        check_gamma(self.gamma)?;
        if self
            .weight_norm
            .is_some_and(|w| !(w > 0.0 && w.is_finite()))
        {
            return Err(Error::config("weight_norm", "must be > 0"));
        }
        self.weight_scale.require_fixed("bmr")
    }

    fn assemble_over<L: Classifier + Clone>(&self, mut m: Members<L>) -> Result<Self::Over<L>> {
        Ok(OnlineBmr {
            k: m.k,
            gamma: self.gamma,
            loss: self.loss,
            weight_norm: self.norm(),
            scales: self.weight_scale.draw(m.len(), &mut m.rng).into_fixed(),
            learners: m.learners,
            rows: 0,
            capped_rows: 0,
            asleep: m.asleep,
            work: Workspace::default(),
        })
    }
}

tune!(OnlineBmrConfig {
    Learners => n_learners,
    Gamma => gamma,
    WeightScale => weight_scale,
    RankingLoss => loss,
} first: lead_adapts, lead_wakes);

/// The OnlineBMR ranker over weak learners `L`. Build it from an [`OnlineBmrConfig`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OnlineBmr<L> {
    k: usize,
    gamma: f64,
    loss: RankingLoss,
    weight_norm: f64,
    scales: Vec<f64>,
    learners: Vec<L>,
    /// Rows learnt (rows with at least one relevant/irrelevant pair).
    rows: u64,
    /// Rows learnt whose `|Y|·γ > 1` used the capped edge `1/|Y|` (§5.3).
    capped_rows: u64,
    /// Whether the members' drift response sleeps until the first member adapts
    /// (`crate::boost::Turn`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    asleep: bool,
    #[serde(skip)]
    work: Workspace,
}

impl<L: Classifier> OnlineBmr<L> {
    /// Rows learnt with the capped edge `γ_eff = 1/|Y|` because `|Y|·γ > 1`.
    pub fn capped_rows(&self) -> u64 {
        self.capped_rows
    }

    fn take_work(&mut self) -> Workspace {
        let mut work = std::mem::take(&mut self.work);
        if work.s.len() != self.k {
            zeroed(self.k, [&mut work.s, &mut work.h, &mut work.c]);
        }
        if work.tables.is_none() {
            let n_max = self.learners.len().saturating_sub(1);
            work.tables = Some(WalkTables::new(self.k, self.gamma, n_max));
        }
        work
    }

    /// Scores `x` into `work.s` and, if `learn` holds a row weight and `work.split` has
    /// pairs, trains every learner right after its (pre-update) prediction: its cost
    /// depends only on the learners before it.
    fn forward(&mut self, x: &[f64], learn: Option<f64>, work: &mut Workspace) {
        let Workspace {
            s,
            h,
            c,
            split,
            tables,
            ..
        } = work;
        s.iter_mut().for_each(|v| *v = 0.0);
        let n_learners = self.learners.len();
        let learning = learn.filter(|_| split.has_pairs());
        let pair = learning.map(|_| {
            let tables = tables.as_mut().expect("built by take_work");
            if tables.is_capped(split.relevant.len()) {
                self.capped_rows += 1;
            }
            tables.pair(split.relevant.len())
        });
        let loss = self.loss.pair_loss();
        let mut waking = Waking::new(self.asleep);
        for (i, learner) in self.learners.iter_mut().enumerate() {
            match (&pair, learning) {
                (Some(pair), Some(weight)) => {
                    pair.costs(loss, n_learners - 1 - i, s, split, c);
                    let scale = self.scales[i] * weight / self.weight_norm;
                    waking.take_turn(i, scale, |turn| {
                        let adapted = turn.begin(learner);
                        learn_relevant(learner, x, split, c, scale, h);
                        adapted
                    });
                }
                _ => learner.predict_proba(x, h),
            }
            s.iter_mut().zip(h.iter()).for_each(|(s, h)| *s += h);
        }
        if learning.is_some() {
            self.rows += 1;
        }
        self.asleep &= !waking.woke();
    }
}

ensemble!(OnlineBmr<L> over learners, rows rows);

impl<L: Classifier> Ranker for OnlineBmr<L> {
    fn n_labels(&self) -> usize {
        self.k
    }

    fn learn_labels(&mut self, x: &[f64], relevant: &[bool], weight: f64) {
        let work = self.step(x, Some(relevant), weight);
        self.work = work;
    }

    fn predict_scores(&self, x: &[f64], out: &mut [f64]) {
        let mut h = vec![0.0; self.k];
        out.iter_mut().for_each(|v| *v = 0.0);
        for learner in &self.learners {
            learner.predict_proba(x, &mut h);
            out.iter_mut().zip(&h).for_each(|(s, h)| *s += h);
        }
    }

    fn learn_predict_scores(
        &mut self, x: &[f64], relevant: Option<&[bool]>, weight: f64, out: &mut [f64],
    ) {
        let work = self.step(x, relevant, weight);
        out.copy_from_slice(&work.s);
        self.work = work;
    }
}

impl<L: Classifier> OnlineBmr<L> {
    /// One test-then-train step; the scores `s^N` are in the returned workspace.
    fn step(&mut self, x: &[f64], relevant: Option<&[bool]>, weight: f64) -> Workspace {
        let mut work = self.take_work();
        let learn = match relevant {
            Some(mask) if weight > 0.0 && weight.is_finite() && mask.len() == self.k => {
                work.split.fill(mask);
                Some(weight)
            }
            _ => None,
        };
        self.forward(x, learn, &mut work);
        work
    }
}

// The singleton reduction: class `y` is the label set `{y}`, and the class probabilities
// are the scores over their sum `N` (each learner votes a distribution).
classifier_via_ranker!(OnlineBmr, crate::core::math::normalize);
