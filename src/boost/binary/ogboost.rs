//! Online GradientBoost (Leistner, Saffari, Roth & Bischof 2009), the baseline of \[CLL\] with
//! `K = 1` learner per selector (ALGORITHMS.md §11).
//!
//! `M` selectors hold `K` weak learners each. A row enters with weight `w = −ℓ'(0)`; selector
//! `m` trains its learners with `w`, charges each learner `w` when its *updated* hypothesis
//! disagrees with `y`, keeps the learner of least charged error, adds its hypothesis to the
//! score `F`, and hands on `w = −ℓ'(yF)`. Prediction is `sign(Σ_m f_{m,j*_m}(x))` with every
//! selector's current best learner. Unit step sizes: the algorithm has no per-stage `α`.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::{WeakOutput, class_of, require_binary, sign_of, write_proba};
use crate::boost::{BoosterConfig, LeadMember, Members, Waking, lead_note};
use crate::core::ClassId;
use crate::core::math::sigmoid;
use crate::drift::DriftConfig;
use crate::learner::{Classifier, Config, learnable};
use crate::{Error, Result};

/// The margin loss `ℓ(z)` of OGBoost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OgLoss {
    /// `ln(1 + e^{−z})`, `−ℓ'(z) = sigmoid(−z)` (\[CLL\]'s comparison).
    #[default]
    Logit,
    /// `e^{−z}`.
    Exponential,
    /// Savage: `1/(1 + e^{2z})²`, `−ℓ'(z) = 4e^{2z}/(1 + e^{2z})³` (Masnadi-Shirazi &
    /// Vasconcelos 2008; Leistner et al.'s robust choice).
    Savage,
}

impl OgLoss {
    /// `−ℓ'(z)`, the weight of a row with margin `z`.
    pub fn weight(self, z: f64) -> f64 {
        match self {
            OgLoss::Logit => sigmoid(-z),
            OgLoss::Exponential => (-z).exp(),
            OgLoss::Savage => {
                // With s = sigmoid(2z) = e^{2z}/(1 + e^{2z}) and 1 − s = 1/(1 + e^{2z}),
                // 4e^{2z}/(1 + e^{2z})³ = 4 s (1 − s)², without overflow.
                let s = sigmoid(2.0 * z);
                4.0 * s * (1.0 - s) * (1.0 - s)
            }
        }
    }
}

/// Hyper-parameters of [`OgBoost`] (ALGORITHMS.md §11), generic over the weak learner's
/// config.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OgBoostConfig<W> {
    /// Number of selectors `M`.
    pub n_selectors: usize,
    /// Weak learners per selector `K` (\[CLL\]: 1).
    pub per_selector: usize,
    /// The margin loss.
    pub loss: OgLoss,
    /// How a learner's class probabilities become its hypothesis.
    pub weak_output: WeakOutput,
    /// The weak learners' config.
    pub weak: W,
    /// The first member as a Hoeffding adaptive tree of the members' own tree, where they
    /// are trees: its split nodes watch their error and swap in subtrees grown after a
    /// change (`crate::boost::LeadMember::as_lead`). The first selector learns every row at
    /// `w = −ℓ'(0)`, so its windows move only when the stream does. `false` (the paper's) in
    /// a config written without it; a named `--drift-detector` clears it.
    #[serde(default)]
    pub lead_adapts: bool,
    /// The detector the adaptive first member wakes on every other member when it first
    /// swaps a subtree in (`crate::boost::Turn`); `None` in a config written without it. A
    /// named `--drift-detector` clears it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lead_wakes: Option<DriftConfig>,
}

impl<W> OgBoostConfig<W> {
    /// \[CLL\]'s baseline: 100 selectors of one learner, logit loss.
    pub fn new(weak: W) -> Self {
        OgBoostConfig {
            n_selectors: 100,
            per_selector: 1,
            loss: OgLoss::Logit,
            weak_output: WeakOutput::Sign,
            weak,
            lead_adapts: false,
            lead_wakes: None,
        }
    }
}

impl<W: LeadMember> fmt::Display for OgBoostConfig<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "OGBoost(M={}, K={}, loss={:?}, output={:?}{}) over {}",
            self.n_selectors,
            self.per_selector,
            self.loss,
            self.weak_output,
            lead_note(None, self.lead_adapts, self.lead_wakes.as_ref(), &self.weak),
            self.weak
        )
    }
}

impl<W> BoosterConfig for OgBoostConfig<W> {
    type Weak = W;
    type Over<L: Classifier + Clone> = OgBoost<L>;

    fn weak(&self) -> &W {
        &self.weak
    }

    fn n_members(&self) -> usize {
        self.n_selectors * self.per_selector
    }

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
        if self.n_selectors == 0 {
            return Err(Error::config("n_selectors", "must be >= 1"));
        }
        if self.per_selector == 0 {
            return Err(Error::config("per_selector", "must be >= 1"));
        }
        Ok(())
    }

    /// `M·K` binary members: selector `m` holds members `m·K .. (m+1)·K`.
    fn assemble_over<L: Classifier + Clone>(&self, m: Members<L>) -> Result<Self::Over<L>> {
        require_binary(m.k, "ogboost")?;
        if !m.len().is_multiple_of(self.per_selector) {
            return Err(Error::config(
                "per_selector",
                "must divide the number of learners",
            ));
        }
        let n = m.len();
        Ok(OgBoost {
            per_selector: self.per_selector,
            loss: self.loss,
            weak_output: self.weak_output,
            learners: m.learners,
            errors: vec![0.0; n],
            best: vec![0; n / self.per_selector],
            asleep: m.asleep,
        })
    }
}

tune!(OgBoostConfig {
    Learners => n_selectors,
    WeakOutput => weak_output,
} first: lead_adapts, lead_wakes);

/// Online GradientBoost over binary weak learners `L`. Build it from an [`OgBoostConfig`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OgBoost<L> {
    per_selector: usize,
    loss: OgLoss,
    weak_output: WeakOutput,
    learners: Vec<L>,
    /// Weighted errors `e_{m,j}` of every learner.
    errors: Vec<f64>,
    /// Each selector's current best learner `j*_m`.
    best: Vec<usize>,
    /// Whether the members' drift response sleeps until the first member adapts
    /// (`crate::boost::Turn`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    asleep: bool,
}

impl<L: Classifier> OgBoost<L> {
    /// Each selector's current best learner.
    pub fn selected(&self) -> &[usize] {
        &self.best
    }
}

ensemble!(OgBoost<L> over learners);

impl<L: Classifier> Classifier for OgBoost<L> {
    two_classes!("Online GradientBoost");

    fn learn(&mut self, x: &[f64], y: ClassId, weight: f64) {
        if learnable(Some(y), weight, 2).is_some() {
            let mut out = [0.0; 2];
            self.learn_predict(x, Some(y), weight, &mut out);
        }
    }

    fn predict_proba(&self, x: &[f64], out: &mut [f64]) {
        let mut p = [0.0; 2];
        let k = self.per_selector;
        let f: f64 = self
            .best
            .iter()
            .enumerate()
            .map(|(m, &j)| {
                self.learners[m * k + j].predict_proba(x, &mut p);
                self.weak_output.hypothesis(&p)
            })
            .sum();
        write_proba(f / self.best.len() as f64, out);
    }

    /// Predicts with every selector's best learner before the row, then learns it
    /// (ALGORITHMS.md §11).
    fn learn_predict(
        &mut self, x: &[f64], y: Option<ClassId>, weight: f64, out: &mut [f64],
    ) -> ClassId {
        let target = learnable(y, weight, 2);
        let k = self.per_selector;
        let mut p = [0.0; 2];
        let (mut predicted, mut score) = (0.0, 0.0);
        let mut w = self.loss.weight(0.0);
        let mut after = vec![0.0; k];
        let mut waking = Waking::new(self.asleep);
        for m in 0..self.best.len() {
            let selector = &mut self.learners[m * k..(m + 1) * k];
            for (j, (learner, after_j)) in selector.iter_mut().zip(after.iter_mut()).enumerate() {
                let Some((y, row_weight)) = target else {
                    if j == self.best[m] {
                        learner.predict_proba(x, &mut p);
                        predicted += self.weak_output.hypothesis(&p);
                    }
                    continue;
                };
                waking.take_turn(m * k + j, w * row_weight, |turn| {
                    turn.take(learner, x, Some(y), &mut p)
                });
                if j == self.best[m] {
                    predicted += self.weak_output.hypothesis(&p);
                }
                // The updated learner's hypothesis decides its error and the score.
                learner.predict_proba(x, &mut p);
                *after_j = self.weak_output.hypothesis(&p);
                if class_of(*after_j) != y {
                    self.errors[m * k + j] += w * row_weight;
                }
            }
            if let Some((y, _)) = target {
                let errors = &self.errors[m * k..(m + 1) * k];
                let best = (0..k).fold(0, |b, j| if errors[j] < errors[b] { j } else { b });
                self.best[m] = best;
                score += after[best];
                w = self.loss.weight(sign_of(y) * score);
            }
        }
        self.asleep &= !waking.woke();
        let f = predicted / self.best.len() as f64;
        write_proba(f, out);
        class_of(f)
    }
}
