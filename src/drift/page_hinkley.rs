//! The Page–Hinkley test (Page, "Continuous inspection schemes", Biometrika 1954), as MOA's
//! and River's detectors run it: for a rise of the mean of `x₁, x₂, …`,
//!
//! ```text
//! x̄_T = (1/T) Σ_{t ≤ T} x_t          (the running mean)
//! m_T = α · m_{T−1} + (x_T − x̄_T − δ)  (the cumulative deviation, faded by α)
//! M_T = min_{t ≤ T} m_t
//! ```
//!
//! and a drift when `m_T − M_T > λ`, after at least `min_instances` values. `δ` is the
//! magnitude of change that is tolerated; `α < 1` forgets old deviations, so that a long
//! stationary stretch does not make the test slow to react. After a drift the test starts
//! again from nothing. No warning level.
//!
//! `λ` is in the units of the values: the defaults suit a mean that moves by tenths and
//! values of small noise. On 0/1 errors of rate near 1/2 the cumulative deviation wanders
//! by tens on its own, and λ = 50 alarms on a stationary stream (a test shows it); ADWIN
//! and HDDM_A, whose bounds scale with the noise, are the detectors for such streams.

use serde::{Deserialize, Serialize};

use super::{Change, DriftDetector, at_least};
use crate::{Error, Result};

/// Parameters of [`PageHinkley`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PageHinkleyConfig {
    /// Values before a drift can be declared.
    pub min_instances: u64,
    /// Tolerated change `δ`.
    pub delta: f64,
    /// Threshold `λ` on `m_T − M_T`.
    pub threshold: f64,
    /// Fading factor `α` of the cumulative deviation.
    pub alpha: f64,
}

impl Default for PageHinkleyConfig {
    /// MOA's `PageHinkleyDM` and River's `PageHinkley`: 30 values, δ = 0.005, λ = 50,
    /// α = 1 − 10⁻⁴.
    fn default() -> Self {
        PageHinkleyConfig {
            min_instances: 30,
            delta: 0.005,
            threshold: 50.0,
            alpha: 1.0 - 1e-4,
        }
    }
}

impl PageHinkleyConfig {
    pub(super) fn validate(&self) -> Result<()> {
        at_least("delta", self.delta, 0.0)?;
        at_least("threshold", self.threshold, 0.0)?;
        if !(self.alpha > 0.0 && self.alpha <= 1.0) {
            return Err(Error::config("alpha", "must be in (0, 1]"));
        }
        Ok(())
    }
}

/// A Page–Hinkley test (see the module doc).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PageHinkley {
    config: PageHinkleyConfig,
    /// Values since the last drift.
    n: u64,
    /// Their mean `x̄`.
    mean: f64,
    /// The cumulative deviation `m`.
    sum: f64,
    /// Its least value `M`.
    min: f64,
}

impl PageHinkley {
    /// A test that has seen nothing.
    pub fn new(config: PageHinkleyConfig) -> Self {
        PageHinkley {
            config,
            n: 0,
            mean: 0.0,
            sum: 0.0,
            min: f64::INFINITY,
        }
    }
}

impl DriftDetector for PageHinkley {
    fn update(&mut self, x: f64) -> Option<Change> {
        self.n += 1;
        self.mean += (x - self.mean) / self.n as f64;
        self.sum = self.config.alpha * self.sum + (x - self.mean - self.config.delta);
        self.min = self.min.min(self.sum);
        if self.n >= self.config.min_instances && self.sum - self.min > self.config.threshold {
            *self = PageHinkley::new(self.config.clone());
            return Some(Change::Drift);
        }
        None
    }

    fn mean(&self) -> f64 {
        self.mean
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{bernoulli_switch, first_drift};
    use super::*;
    use crate::core::Rng;

    /// The test is one-sided: a fall of the mean moves `m` down and `M` with it; a rise
    /// crosses `λ` once the deviations, about the rise a value, add up past it.
    #[test]
    fn a_falling_mean_is_no_drift_and_a_rising_one_is() {
        let steps = |a: f64, b: f64| [vec![a; 2_000], vec![b; 2_000]].concat();
        let mut ph = PageHinkley::new(PageHinkleyConfig::default());
        assert_eq!(first_drift(&mut ph, &steps(0.5, 0.1)), None);
        let mut ph = PageHinkley::new(PageHinkleyConfig::default());
        let at = first_drift(&mut ph, &steps(0.1, 0.5)).unwrap();
        // The running mean follows the new values, so each adds less than 0.4: a few
        // hundred values, not 50 / 0.4 = 125.
        assert!((2_125..2_600).contains(&at), "{at}");
        assert_eq!(ph.n, 0, "a drift starts the test again");
    }

    /// On noisy error rates λ = 50 is a short horizon: Bernoulli(0.5) errors make `m`
    /// wander by tens, and the test alarms on a stream whose mean never rises.
    #[test]
    fn noise_alone_can_reach_the_threshold() {
        let mut rng = Rng::new(4);
        let values = bernoulli_switch(&mut rng, 5_000, 0.5, 0, 0.0);
        let mut ph = PageHinkley::new(PageHinkleyConfig::default());
        assert!(first_drift(&mut ph, &values).is_some());
    }
}
