//! DDM, the drift detection method (Gama, Medas, Castillo & Rodrigues, "Learning with drift
//! detection", SBIA 2004). The values are a learner's errors (`1` wrong, `0` right); after
//! `i` of them the error rate `p_i` has standard deviation `s_i = √(p_i(1 − p_i)/i)` under
//! a Bernoulli model. The detector keeps the point where `p_i + s_i` was least
//! (`p_min`, `s_min`) and says
//!
//! ```text
//! warning  when p_i + s_i ≥ p_min + 2 · s_min      (the 95% level)
//! drift    when p_i + s_i ≥ p_min + 3 · s_min      (the 99% level)
//! ```
//!
//! after at least `min_instances` values. A drift starts it again from nothing: the
//! concept after the change is measured from the change on.
//!
//! The best level is kept from the first `min_instances` values on, when `s` is still
//! large: a lucky start (few errors in the first rows) sets a low `p_min` with a wide
//! `s_min`, and the drift threshold stays wide for the rest of the concept, so DDM reacts
//! slowly after a long stable stretch. That is the paper's method (and MOA's); HDDM_A's
//! Hoeffding bounds do not have this weakness.

use serde::{Deserialize, Serialize};

use super::{Change, DriftDetector, at_least};
use crate::Result;

/// Parameters of [`Ddm`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DdmConfig {
    /// Values before a warning or drift can be declared.
    pub min_instances: u64,
    /// Standard deviations above the best level for a warning.
    pub warning_level: f64,
    /// Standard deviations above the best level for a drift.
    pub drift_level: f64,
}

impl Default for DdmConfig {
    /// The paper's and MOA's: 30 values, 2σ, 3σ.
    fn default() -> Self {
        DdmConfig {
            min_instances: 30,
            warning_level: 2.0,
            drift_level: 3.0,
        }
    }
}

impl DdmConfig {
    pub(super) fn validate(&self) -> Result<()> {
        at_least("warning_level", self.warning_level, 0.0)?;
        at_least("drift_level", self.drift_level, self.warning_level)
    }
}

/// A DDM detector (see the module doc).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ddm {
    config: DdmConfig,
    /// Values since the last drift.
    n: u64,
    /// Their error rate `p`.
    p: f64,
    /// `p_min` and `s_min`, where `p + s` was least.
    p_min: f64,
    s_min: f64,
}

impl Ddm {
    /// A detector that has seen nothing.
    pub fn new(config: DdmConfig) -> Self {
        Ddm {
            config,
            n: 0,
            p: 0.0,
            p_min: f64::INFINITY,
            s_min: f64::INFINITY,
        }
    }
}

impl DriftDetector for Ddm {
    fn update(&mut self, x: f64) -> Option<Change> {
        self.n += 1;
        self.p += (x - self.p) / self.n as f64;
        let s = (self.p * (1.0 - self.p) / self.n as f64).sqrt();
        if self.n < self.config.min_instances {
            return None;
        }
        if self.p + s <= self.p_min + self.s_min {
            (self.p_min, self.s_min) = (self.p, s);
        }
        let level = self.p + s;
        if level >= self.p_min + self.config.drift_level * self.s_min {
            *self = Ddm::new(self.config.clone());
            Some(Change::Drift)
        } else if level >= self.p_min + self.config.warning_level * self.s_min {
            Some(Change::Warning)
        } else {
            None
        }
    }

    fn mean(&self) -> f64 {
        self.p
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::bernoulli_switch;
    use super::*;
    use crate::core::Rng;

    #[test]
    fn warns_before_it_drifts_and_restarts_after() {
        let mut rng = Rng::new(21);
        let values = bernoulli_switch(&mut rng, 3_000, 0.1, 2_000, 0.4);
        let mut ddm = Ddm::new(DdmConfig::default());
        let changes: Vec<(usize, Change)> = values
            .iter()
            .enumerate()
            .filter_map(|(i, &x)| ddm.update(x).map(|c| (i, c)))
            .collect();
        let drift = changes
            .iter()
            .find(|(_, c)| *c == Change::Drift)
            .map(|(i, _)| *i)
            .expect("a drift");
        // The best level was set early, when `s` was large (p_min = 0.064, s_min = 0.036
        // here): the threshold stays there, and the rise takes 735 rows to cross it.
        assert!((3_000..4_000).contains(&drift), "{drift}");
        let warned = changes
            .iter()
            .any(|&(i, c)| c == Change::Warning && (3_000..drift).contains(&i));
        assert!(warned, "a warning comes between the change and the drift");
        assert!(ddm.n < 2_000, "counts from the drift on");
    }
}
