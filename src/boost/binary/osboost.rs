//! OSBoost, OSBoost.OCP and OSBoost.EXP of Chen, Lin & Lu (2012) (ALGORITHMS.md §10).
//!
//! All three train the same way: learner `i` gets SmoothBoost's weight
//! `w^{(i)} = min{(1 − γ)^{z^{(i−1)}/2}, 1}` with `z^{(i)} = Σ_{j≤i} (y h^{(j)} − θ)` and
//! `θ = γ/(2 + γ)` (\[CLL\] eq. 4 and Algorithm 1) computed from the learners' pre-update
//! hypotheses. They differ only in how the hypotheses are combined ([`Combiner`]):
//! * OSBoost: `sign(Σ_i h^{(i)})`, uniform votes;
//! * OSBoost.OCP: `sign(Σ_i α_i h^{(i)})`, `α` on the simplex, moved by projected online
//!   gradient descent on the hinge loss `max{0, θ − y Σ α_i h^{(i)}}` with `η_t = eta0/√t`
//!   (\[CLL\] leaves `η` open; Zinkevich's `eta0 = 1` is the default, ALGORITHMS.md E.6);
//! * OSBoost.EXP: Hedge over the experts `H^{(i)} = sign(Σ_{j≤i} h^{(j)})` with the
//!   time-varying rate `η_t = √(8 ln N / t)` (Cesa-Bianchi & Lugosi Thm. 2.3).
//!
//! **When members are replaced** (`--drift-detector`, or the response the adaptive first
//! member wakes, `crate::boost::Turn`), OCP's `α` and EXP's mistakes are kept. Both bounds
//! hold for any sequence of losses, so they still hold over the whole stream against the
//! best fixed `α` or expert in hindsight; what a restart would add is a bound on each
//! stretch between restarts. Measured, a restart on a drift of the booster's own error lost
//! on 5 of 6 drifting cells (RESULTS.md, "The boosters without a lead"), so there is none.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::{WeakOutput, class_of, require_binary, sign_of, smooth_weight, write_proba};
use crate::boost::ogd::project_to_simplex;
use crate::boost::{
    BoosterConfig, LeadMember, LearnerScales, Members, Waking, WeightScale, lead_note,
};
use crate::core::{ClassId, Rng};
use crate::drift::DriftConfig;
use crate::learner::{Classifier, Config, learnable, predict_rows_by_member};
use crate::{Error, Result};

/// How OSBoost combines its learners' hypotheses.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Combiner {
    /// Uniform votes (OSBoost).
    Uniform,
    /// Weights on the simplex learnt by online convex programming (OSBoost.OCP).
    Ocp {
        /// Step constant: `η_t = eta0/√t`.
        eta0: f64,
    },
    /// Hedge over the partial-vote experts (OSBoost.EXP).
    Exp {
        /// Draw the expert (`true`, the paper) or take the weighted-majority vote.
        sample: bool,
    },
}

/// Hyper-parameters of [`OsBoost`] (ALGORITHMS.md §10), generic over the weak learner's
/// config.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OsBoostConfig<W> {
    /// Number of weak learners `N`.
    pub n_learners: usize,
    /// The edge `γ ∈ (0, 1/2)` (the paper's experiments: 0.1).
    pub gamma: f64,
    /// OSBoost, .OCP or .EXP.
    pub combiner: Combiner,
    /// How a learner's class probabilities become its hypothesis.
    pub weak_output: WeakOutput,
    /// Per-learner weight scale.
    pub weight_scale: WeightScale,
    /// The weak learners' config.
    pub weak: W,
    /// The first member as a Hoeffding adaptive tree of the members' own tree, where they
    /// are trees: its split nodes watch their error and swap in subtrees grown after a
    /// change (`crate::boost::LeadMember::as_lead`). It learns every row at weight
    /// `w^{(1)} = 1` (`z^{(0)} = 0`), so its windows move only when the stream does. `false`
    /// (the paper's) in a config written without it; a named `--drift-detector` clears it.
    #[serde(default)]
    pub lead_adapts: bool,
    /// The detector the adaptive first member wakes on every other member when it first
    /// swaps a subtree in (`crate::boost::Turn`); `None` in a config written without it. A
    /// named `--drift-detector` clears it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lead_wakes: Option<DriftConfig>,
}

impl<W> OsBoostConfig<W> {
    /// OSBoost with uniform votes, 100 learners, `γ = 0.1`.
    pub fn new(weak: W) -> Self {
        OsBoostConfig {
            n_learners: 100,
            gamma: 0.1,
            combiner: Combiner::Uniform,
            weak_output: WeakOutput::Sign,
            weight_scale: WeightScale::Constant(1.0),
            weak,
            lead_adapts: false,
            lead_wakes: None,
        }
    }

    /// OSBoost.OCP with `eta0 = 1`.
    pub fn ocp(weak: W) -> Self {
        OsBoostConfig {
            combiner: Combiner::Ocp { eta0: 1.0 },
            ..OsBoostConfig::new(weak)
        }
    }

    /// OSBoost.EXP, drawing the expert.
    pub fn exp(weak: W) -> Self {
        OsBoostConfig {
            combiner: Combiner::Exp { sample: true },
            ..OsBoostConfig::new(weak)
        }
    }
}

impl<W: LeadMember> fmt::Display for OsBoostConfig<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self.combiner {
            Combiner::Uniform => "OSBoost".to_string(),
            Combiner::Ocp { eta0 } => format!("OSBoost.OCP(eta0={eta0})"),
            Combiner::Exp { sample } => {
                format!(
                    "OSBoost.EXP({})",
                    if sample { "sampled" } else { "majority" }
                )
            }
        };
        write!(
            f,
            "{name}(N={}, gamma={}, output={:?}, weight scale={}{}) over {}",
            self.n_learners,
            self.gamma,
            self.weak_output,
            self.weight_scale,
            lead_note(None, self.lead_adapts, self.lead_wakes.as_ref(), &self.weak),
            self.weak
        )
    }
}

impl<W> BoosterConfig for OsBoostConfig<W> {
    booster_members!(OsBoost, n_learners);

    fn member_config(&self) -> W
    where
        W: Config,
    {
        self.weak_output.learner_config(&self.weak)
    }

    fn lead_adapts(&self) -> bool {
        self.lead_adapts
    }

    fn lead_wakes(&self) -> Option<&DriftConfig> {
        self.lead_wakes.as_ref()
    }

    fn validate_booster(&self) -> Result<()> {
        if !(self.gamma > 0.0 && self.gamma < 0.5) {
            return Err(Error::config("gamma", "must be in (0, 1/2)"));
        }
        if let Combiner::Ocp { eta0 } = self.combiner
            && !(eta0 > 0.0 && eta0.is_finite())
        {
            return Err(Error::config("eta0", "must be > 0"));
        }
        self.weight_scale.validate()
    }

    fn assemble_over<L: Classifier + Clone>(&self, mut m: Members<L>) -> Result<Self::Over<L>> {
        require_binary(m.k, "osboost")?;
        let n = m.len();
        Ok(OsBoost {
            gamma: self.gamma,
            theta: self.gamma / (2.0 + self.gamma),
            combiner: self.combiner,
            weak_output: self.weak_output,
            scales: self.weight_scale.draw(n, &mut m.rng),
            learners: m.learners,
            alpha: vec![1.0 / n as f64; n],
            mistakes: vec![0.0; n],
            rows: 0,
            asleep: m.asleep,
            rng: m.rng,
        })
    }
}

tune!(OsBoostConfig {
    Learners => n_learners,
    Gamma => gamma,
    WeightScale => weight_scale,
    WeakOutput => weak_output,
} first: lead_adapts, lead_wakes);

/// The OSBoost family over binary weak learners `L`. Build it from an [`OsBoostConfig`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OsBoost<L> {
    gamma: f64,
    theta: f64,
    combiner: Combiner,
    weak_output: WeakOutput,
    scales: LearnerScales,
    learners: Vec<L>,
    /// OCP's weights on the simplex.
    alpha: Vec<f64>,
    /// EXP's (weighted) mistakes of each expert.
    mistakes: Vec<f64>,
    /// Rows learnt, `t`.
    rows: u64,
    /// Whether the members' drift response sleeps until the first member adapts
    /// (`crate::boost::Turn`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    asleep: bool,
    rng: Rng,
}

impl<L: Classifier> OsBoost<L> {
    /// OCP's weights `α` (uniform for the other combiners).
    pub fn alphas(&self) -> &[f64] {
        &self.alpha
    }

    /// How the hypotheses are combined.
    pub fn combiner(&self) -> Combiner {
        self.combiner
    }

    /// `θ = γ/(2 + γ)`.
    pub fn theta(&self) -> f64 {
        self.theta
    }

    /// The hypotheses `h^{(i)}(x)` of every learner; with a target, learner `i` also learns
    /// the row with SmoothBoost's weight right after predicting it (its weight depends only
    /// on the hypotheses of learners `< i`).
    fn hypotheses(&mut self, x: &[f64], target: Option<(ClassId, f64)>, h: &mut [f64]) {
        let Some((y, w)) = target else {
            return self.scored(x, h);
        };
        let mut p = [0.0; 2];
        let mut z = 0.0;
        let mut waking = Waking::new(self.asleep);
        for (i, learner) in self.learners.iter_mut().enumerate() {
            let smooth = smooth_weight(z, self.gamma);
            let weight = self.scales.factor(i, smooth * w) * smooth * w;
            waking.take_turn(i, weight, |turn| turn.take(learner, x, Some(y), &mut p));
            h[i] = self.weak_output.hypothesis(&p);
            z += sign_of(y) * h[i] - self.theta;
        }
        self.asleep &= !waking.woke();
    }

    /// The hypotheses `h^{(i)}(x)` of every learner, without learning.
    fn scored(&self, x: &[f64], h: &mut [f64]) {
        self.hypotheses_of(h, &mut |i, p| self.learners[i].predict_proba(x, p));
    }

    /// Each learner's hypothesis into `h`, from the probabilities `member(i, p)` writes.
    fn hypotheses_of(&self, h: &mut [f64], member: &mut dyn FnMut(usize, &mut [f64])) {
        let mut p = [0.0; 2];
        for (i, hi) in h.iter_mut().enumerate() {
            member(i, &mut p);
            *hi = self.weak_output.hypothesis(&p);
        }
    }

    /// The class probabilities [`Classifier::predict_proba`] gives a row whose learners'
    /// probabilities `member(i, p)` writes: the combined hypotheses, with no draw.
    fn vote(&self, out: &mut [f64], member: &mut dyn FnMut(usize, &mut [f64])) {
        let mut h = vec![0.0; self.learners.len()];
        self.hypotheses_of(&mut h, member);
        write_proba(self.combine(&h, None).0, out);
    }

    /// EXP's expert distribution at round `t`: `∝ exp(−η_t M_i)`.
    fn exp_distribution(&self) -> Vec<f64> {
        let n = self.mistakes.len();
        let t = (self.rows + 1) as f64;
        let eta = (8.0 * (n as f64).ln() / t).sqrt();
        let best = self.mistakes.iter().copied().fold(f64::INFINITY, f64::min);
        let mut p: Vec<f64> = self
            .mistakes
            .iter()
            .map(|m| (-eta * (m - best)).exp())
            .collect();
        let sum: f64 = p.iter().sum();
        p.iter_mut().for_each(|v| *v /= sum);
        p
    }

    /// The normalised score `f ∈ [−1, 1]` of hypotheses `h` and, for sampled EXP, the drawn
    /// expert's class.
    fn combine(&self, h: &[f64], rng: Option<&mut Rng>) -> (f64, Option<ClassId>) {
        let n = h.len() as f64;
        match self.combiner {
            Combiner::Uniform => (h.iter().sum::<f64>() / n, None),
            Combiner::Ocp { .. } => (h.iter().zip(&self.alpha).map(|(h, a)| h * a).sum(), None),
            Combiner::Exp { sample } => {
                let p = self.exp_distribution();
                let mut partial = 0.0;
                let experts: Vec<f64> = h
                    .iter()
                    .map(|hi| {
                        partial += hi;
                        sign_of(class_of(partial))
                    })
                    .collect();
                let f = experts.iter().zip(&p).map(|(e, q)| e * q).sum();
                let drawn = match (sample, rng) {
                    (true, Some(rng)) => {
                        let u = rng.uniform();
                        let mut acc = 0.0;
                        let i = p
                            .iter()
                            .position(|q| {
                                acc += q;
                                u < acc
                            })
                            .unwrap_or(p.len() - 1);
                        Some(class_of(experts[i]))
                    }
                    _ => None,
                };
                (f, drawn)
            }
        }
    }

    /// The combiner's update after label `y` (ALGORITHMS.md §10.3–§10.4).
    fn update(&mut self, h: &[f64], f: f64, y: ClassId, weight: f64) {
        self.rows += 1;
        let ys = sign_of(y);
        match self.combiner {
            Combiner::Uniform => {}
            Combiner::Ocp { eta0 } => {
                if ys * f < self.theta {
                    let eta = eta0 / (self.rows as f64).sqrt();
                    for (a, hi) in self.alpha.iter_mut().zip(h) {
                        *a += eta * weight * ys * hi;
                    }
                    project_to_simplex(&mut self.alpha);
                }
            }
            Combiner::Exp { .. } => {
                let mut partial = 0.0;
                for (m, hi) in self.mistakes.iter_mut().zip(h) {
                    partial += hi;
                    if class_of(partial) != y {
                        *m += weight;
                    }
                }
            }
        }
    }
}

ensemble!(OsBoost<L: Classifier> over learners, rows rows, weights alpha;
    fn expert_probabilities(&self) -> Option<Vec<f64>> {
        matches!(self.combiner, Combiner::Exp { .. }).then(|| self.exp_distribution())
    }
);

impl<L: Classifier> Classifier for OsBoost<L> {
    two_classes!("OSBoost");

    fn learn(&mut self, x: &[f64], y: ClassId, weight: f64) {
        let Some(target) = learnable(Some(y), weight, 2) else {
            return;
        };
        let mut h = vec![0.0; self.learners.len()];
        self.hypotheses(x, Some(target), &mut h);
        let (f, _) = self.combine(&h, None);
        self.update(&h, f, target.0, target.1);
    }

    /// `((1 + f)/2, (1 − f)/2)` of the normalised score; for sampled EXP, `f` is the expected
    /// vote of the drawn expert, so `out[0]` is the probability that it says `+1`.
    fn predict_proba(&self, x: &[f64], out: &mut [f64]) {
        self.vote(out, &mut |i, p| self.learners[i].predict_proba(x, p));
    }

    fn predict_proba_rows(&self, xs: &[&[f64]], proba: &mut [f64]) {
        predict_rows_by_member(&self.learners, 2, xs, proba, |out, member| {
            self.vote(out, member)
        });
    }

    fn learn_predict(
        &mut self, x: &[f64], y: Option<ClassId>, weight: f64, out: &mut [f64],
    ) -> ClassId {
        let target = learnable(y, weight, 2);
        let mut h = vec![0.0; self.learners.len()];
        self.hypotheses(x, target, &mut h);
        let mut rng = self.rng.clone();
        let (f, drawn) = self.combine(&h, Some(&mut rng));
        self.rng = rng;
        write_proba(f, out);
        if let Some((y, w)) = target {
            self.update(&h, f, y, w);
        }
        drawn.unwrap_or_else(|| class_of(f))
    }
}
