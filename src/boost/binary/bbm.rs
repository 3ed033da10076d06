//! Online BBM: the optimal online boost-by-majority of Beygelzimer, Kale & Luo (2015),
//! "Optimal and Adaptive Algorithms for Online Boosting", Algorithm 1 (binary), with the
//! closed-form weights of ALGORITHMS.md §7.1.
//!
//! * Learner `i` (of `N`, counted from 1) votes `h^i = ±1`, its most probable class (class 0
//!   is `+1`, ties by the tie rule), and sees the margin `m = Σ_{j<i} y·h^j` of the learners
//!   before it on the row's label `y`.
//! * Learning: learner `i` learns the row with weight
//!   `w^i = Bin(κ; n, p) = C(n, κ)·p^κ·(1 − p)^{n−κ}`, `n = N − i`, `κ = ⌊(n − m + 1)/2⌋`
//!   (0 when `κ ∉ [0, n]`: the majority is decided whatever the rest vote), `p = 1/2 + γ/2`,
//!   times the row's weight and the learner's weight scale. `w^i` is the potential
//!   difference `φ_n(m − 1) − φ_n(m + 1)` of §P.4: how much learner `i`'s vote can still
//!   change the chance that the final majority is wrong, if each learner after it is right
//!   with probability `p`.
//! * Prediction: the majority `sign(Σ h^i)` (ties by the tie rule); class probabilities
//!   `((1 + f)/2, (1 − f)/2)` for `f = Σ h^i / N`, as the other binary boosters'.
//!
//! This is OnlineMBBM (\[JGT\] Algorithm 1, [`crate::boost::multiclass::OnlineMbbm`]) at
//! `k = 2` with argmax votes, whose exact potential engine computes the same weights; here
//! they cost `O(1)` per learner from a table of `ln j!`. Vowpal Wabbit's `--boosting --alg
//! BBM` is the same algorithm with `γ_vw = γ/2` (its `p = 1/2 + γ_vw`).

use std::fmt;

use serde::{Deserialize, Serialize};

use super::{require_binary, sign_of, write_proba};
use crate::Result;
use crate::boost::multiclass::potential::WEIGHT_NOISE;
use crate::boost::{
    BoosterConfig, LeadMember, LearnerScales, Members, Waking, WeightScale, check_gamma, lead_note,
};
use crate::core::math::{TieBreak, argmax, argmax_tie};
use crate::core::{ClassId, Rng};
use crate::drift::DriftConfig;
use crate::learner::{Classifier, learnable, predict_rows_by_member};

/// Hyper-parameters of [`OnlineBbm`], generic over the weak learner's config.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OnlineBbmConfig<W> {
    /// Number of weak learners `N`.
    pub n_learners: usize,
    /// The assumed edge `γ ∈ (0, 1)` in \[JGT\]'s convention: each learner right with
    /// probability `1/2 + γ/2`.
    pub gamma: f64,
    /// Per-learner weight scale.
    pub weight_scale: WeightScale,
    /// Tie rule for votes and the final prediction.
    pub tie_break: TieBreak,
    /// The weak learners' config.
    pub weak: W,
    /// The first member as a Hoeffding adaptive tree of the members' own tree, where they
    /// are trees: its split nodes watch their error and swap in subtrees grown after a
    /// change (`crate::boost::LeadMember::as_lead`). It learns every row at the weight of
    /// margin 0 (no learner before it), so its windows move only when the stream does.
    /// `false` (the paper's) in a config written without it; a named `--drift-detector`
    /// clears it.
    #[serde(default)]
    pub lead_adapts: bool,
    /// The detector the adaptive first member wakes on every other member when it first
    /// swaps a subtree in (`crate::boost::Turn`); `None` in a config written without it. A
    /// named `--drift-detector` clears it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lead_wakes: Option<DriftConfig>,
}

impl<W> OnlineBbmConfig<W> {
    /// 100 learners, `γ = 0.1`, each learner's weights at unit mean, random ties.
    // Unit-mean weights: a learner far from the decision sees weights of order 0.01, tiny
    // against a tree's grace period; at scale 1 the error on the shared binary sets is up to
    // twice as high (RESULTS.md, "Online BBM").
    pub fn new(weak: W) -> Self {
        OnlineBbmConfig {
            n_learners: 100,
            gamma: 0.1,
            weight_scale: WeightScale::UnitMean,
            tie_break: TieBreak::Random,
            weak,
            lead_adapts: false,
            lead_wakes: None,
        }
    }
}

impl<W: LeadMember> fmt::Display for OnlineBbmConfig<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Self {
            n_learners,
            gamma,
            weight_scale,
            tie_break,
            weak,
            lead_adapts,
            lead_wakes,
        } = self;
        let lead = lead_note(None, *lead_adapts, lead_wakes.as_ref(), weak);
        write!(
            f,
            "OnlineBBM(N={n_learners}, gamma={gamma}, weight scale={weight_scale}, \
             ties={tie_break:?}{lead}) over {weak}"
        )
    }
}

impl<W> BoosterConfig for OnlineBbmConfig<W> {
    booster_members!(OnlineBbm, n_learners);

    fn lead_adapts(&self) -> bool {
        self.lead_adapts
    }

    fn lead_wakes(&self) -> Option<&DriftConfig> {
        self.lead_wakes.as_ref()
    }

    fn validate_booster(&self) -> Result<()> {
        check_gamma(self.gamma)?;
        self.weight_scale.validate()
    }

    fn assemble_over<L: Classifier + Clone>(&self, mut m: Members<L>) -> Result<Self::Over<L>> {
        require_binary(m.k, "bbm")?;
        Ok(OnlineBbm {
            weights: BbmWeights::new(m.len(), self.gamma),
            tie_break: self.tie_break,
            scales: self.weight_scale.draw(m.len(), &mut m.rng),
            learners: m.learners,
            asleep: m.asleep,
            rng: m.rng,
        })
    }
}

tune!(OnlineBbmConfig {
    Learners => n_learners,
    Gamma => gamma,
    WeightScale => weight_scale,
} first: lead_adapts, lead_wakes);

/// The weights `Bin(κ; n, 1/2 + γ/2)` of Online BBM's learners (ALGORITHMS.md §7.1), for
/// `n` up to a bound: `ln j!` tabulated once, each weight one `exp`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(from = "BbmParams", into = "BbmParams")]
pub struct BbmWeights {
    gamma: f64,
    /// `ln j!` for `j = 0..=n_max`.
    ln_factorial: Vec<f64>,
    /// `ln p` and `ln(1 − p)`.
    ln_p: f64,
    ln_q: f64,
}

/// What [`BbmWeights`] is saved as: its parameters (the table is rebuilt on load).
#[derive(Serialize, Deserialize)]
struct BbmParams {
    n_max: usize,
    gamma: f64,
}

impl From<BbmParams> for BbmWeights {
    fn from(p: BbmParams) -> Self {
        BbmWeights::new(p.n_max, p.gamma)
    }
}

impl From<BbmWeights> for BbmParams {
    fn from(w: BbmWeights) -> Self {
        BbmParams {
            n_max: w.ln_factorial.len() - 1,
            gamma: w.gamma,
        }
    }
}

impl BbmWeights {
    /// The weights for up to `n_max` learners to come, at edge `γ`.
    pub fn new(n_max: usize, gamma: f64) -> Self {
        let mut ln_factorial = Vec::with_capacity(n_max + 1);
        let mut sum = 0.0;
        ln_factorial.push(0.0);
        for j in 1..=n_max {
            sum += (j as f64).ln();
            ln_factorial.push(sum);
        }
        let p = 0.5 + 0.5 * gamma;
        BbmWeights {
            gamma,
            ln_factorial,
            ln_p: p.ln(),
            ln_q: (1.0 - p).ln(),
        }
    }

    /// The weight of a learner with `n` learners after it, at margin `m` of those before it:
    /// `C(n, κ)·p^κ·(1 − p)^{n−κ}` with `κ = ⌊(n − m + 1)/2⌋`, 0 when `κ ∉ [0, n]`.
    ///
    /// # Panics
    /// If `n` exceeds the table's bound.
    pub fn weight(&self, n: usize, m: i64) -> f64 {
        let kappa = (n as i64 - m + 1).div_euclid(2);
        if kappa < 0 || kappa > n as i64 {
            return 0.0;
        }
        let (kappa, f) = (kappa as usize, &self.ln_factorial);
        let ln_choose = f[n] - f[kappa] - f[n - kappa];
        (ln_choose + kappa as f64 * self.ln_p + (n - kappa) as f64 * self.ln_q).exp()
    }
}

/// The Online BBM booster over binary weak learners `L`. Build it from an
/// [`OnlineBbmConfig`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OnlineBbm<L> {
    weights: BbmWeights,
    tie_break: TieBreak,
    scales: LearnerScales,
    learners: Vec<L>,
    /// Whether the members' drift response sleeps until the first member adapts
    /// (`crate::boost::Turn`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    asleep: bool,
    rng: Rng,
}

ensemble!(OnlineBbm<L> over learners);

impl<L: Classifier> OnlineBbm<L> {
    /// The class probabilities [`Classifier::predict_proba`] gives a row whose learners'
    /// probabilities `member(i, p)` writes: the share of the learners' signed votes.
    fn vote(&self, out: &mut [f64], member: &mut dyn FnMut(usize, &mut [f64])) {
        let mut p = [0.0; 2];
        let votes: i64 = (0..self.learners.len())
            .map(|i| {
                member(i, &mut p);
                sign_of(argmax(&p)) as i64
            })
            .sum();
        write_proba(votes as f64 / self.learners.len() as f64, out);
    }

    /// Votes every learner on row `x` in order, each first learning it (given `(y, weight)`)
    /// with its Online BBM weight; returns `Σ h^i` and the predicted class.
    fn run(&mut self, x: &[f64], target: Option<(ClassId, f64)>, rng: &mut Rng) -> (i64, ClassId) {
        let n_learners = self.learners.len();
        let (mut votes, mut margin) = (0_i64, 0_i64);
        let mut p = [0.0; 2];
        let mut waking = Waking::new(self.asleep);
        for (i, learner) in self.learners.iter_mut().enumerate() {
            match target {
                Some((y, weight)) => {
                    let w = self.weights.weight(n_learners - 1 - i, margin);
                    // The floor OnlineMBBM puts on its potentials' rounding, so the two agree
                    // at k = 2: a decided row reaches no tree, not even as a speck.
                    let w = if w <= WEIGHT_NOISE { 0.0 } else { weight * w };
                    let w = self.scales.factor(i, w) * w;
                    waking.take_turn(i, w, |turn| turn.take(learner, x, Some(y), &mut p));
                }
                None => learner.predict_proba(x, &mut p),
            }
            let h = sign_of(argmax_tie(&p, self.tie_break, rng)) as i64;
            votes += h;
            if let Some((y, _)) = target {
                margin += sign_of(y) as i64 * h;
            }
        }
        self.asleep &= !waking.woke();
        let tally = [votes.max(0) as f64, (-votes).max(0) as f64];
        (votes, argmax_tie(&tally, self.tie_break, rng))
    }
}

impl<L: Classifier> Classifier for OnlineBbm<L> {
    two_classes!("Online BBM");

    fn learn(&mut self, x: &[f64], y: ClassId, weight: f64) {
        let Some(target) = learnable(Some(y), weight, 2) else {
            return;
        };
        let mut rng = self.rng.clone();
        self.run(x, Some(target), &mut rng);
        self.rng = rng;
    }

    /// The probability of each class under the final vote's tie rule, with the learners'
    /// own ties to `+1` (no draw: the model is not changed).
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
        let mut rng = self.rng.clone();
        let (votes, predicted) = self.run(x, learnable(y, weight, 2), &mut rng);
        self.rng = rng;
        write_proba(votes as f64 / self.learners.len() as f64, out);
        predicted
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `C(n, κ)·p^κ·(1 − p)^{n−κ}` by products, for small `n`.
    fn binomial_pmf(n: u64, kappa: u64, p: f64) -> f64 {
        let choose = (1..=kappa).fold(1.0, |c, j| c * (n - kappa + j) as f64 / j as f64);
        choose * p.powi(kappa as i32) * (1.0 - p).powi((n - kappa) as i32)
    }

    #[test]
    fn weights_are_the_binomial_probabilities_and_vanish_once_decided() {
        let w = BbmWeights::new(30, 0.2);
        for n in 0..=30_u64 {
            for m in -35..=35_i64 {
                let kappa = (n as i64 - m + 1).div_euclid(2);
                let want = if (0..=n as i64).contains(&kappa) {
                    binomial_pmf(n, kappa as u64, 0.6)
                } else {
                    0.0
                };
                let got = w.weight(n as usize, m);
                assert!(
                    (got - want).abs() <= 1e-13 * want.max(1e-300),
                    "n={n} m={m}"
                );
            }
        }
        // The last learner matters only on a tie-or-one margin: n = 0, m ∈ {0, 1}.
        assert_eq!(w.weight(0, 0), 1.0);
        assert_eq!(w.weight(0, 1), 1.0);
        assert_eq!(w.weight(0, 2), 0.0);
        assert_eq!(w.weight(0, -1), 0.0);
    }

    #[test]
    fn weights_survive_serde() {
        let w = BbmWeights::new(12, 0.1);
        let back: BbmWeights = serde_json::from_str(&serde_json::to_string(&w).unwrap()).unwrap();
        assert_eq!(back.ln_factorial, w.ln_factorial);
        assert_eq!(back.weight(7, -1), w.weight(7, -1));
    }
}
