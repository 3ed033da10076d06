//! Hedge (exponential weights) over experts, kept in log form (ALGORITHMS.md §0, §1.5).

use serde::{Deserialize, Serialize};

use crate::core::Rng;
use crate::core::math::{TieBreak, argmax_tie, logsumexp};

/// Exponential weights over `n` experts: `λ_i ← λ_i − η·loss_i`, renormalised so that
/// `max λ = 0`. The normalised probabilities are cached after each round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "HedgeState", into = "HedgeState")]
pub struct Hedge {
    log_weights: Vec<f64>,
    rate: f64,
    probabilities: Vec<f64>,
}

/// What a [`Hedge`] persists: the probabilities are derived from it.
#[derive(Serialize, Deserialize)]
struct HedgeState {
    log_weights: Vec<f64>,
    rate: f64,
}

impl From<HedgeState> for Hedge {
    fn from(s: HedgeState) -> Self {
        let mut h = Hedge {
            probabilities: vec![0.0; s.log_weights.len()],
            log_weights: s.log_weights,
            rate: s.rate,
        };
        h.refresh();
        h
    }
}

impl From<Hedge> for HedgeState {
    fn from(h: Hedge) -> Self {
        HedgeState {
            log_weights: h.log_weights,
            rate: h.rate,
        }
    }
}

impl Hedge {
    /// `n` experts with equal weight and learning rate `rate`.
    pub fn new(n: usize, rate: f64) -> Self {
        Hedge::from(HedgeState {
            log_weights: vec![0.0; n],
            rate,
        })
    }

    /// Charges expert `i` a loss (call [`Hedge::end_round`] once all are charged).
    #[inline]
    pub fn charge(&mut self, i: usize, loss: f64) {
        self.log_weights[i] -= self.rate * loss;
    }

    /// Renormalises (`λ ← λ − max λ`) and refreshes the cached probabilities.
    pub fn end_round(&mut self) {
        let m = self
            .log_weights
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max);
        if m.is_finite() {
            self.log_weights.iter_mut().for_each(|l| *l -= m);
        }
        self.refresh();
    }

    fn refresh(&mut self) {
        let lse = logsumexp(&self.log_weights);
        for (p, l) in self.probabilities.iter_mut().zip(&self.log_weights) {
            *p = (l - lse).exp();
        }
    }

    /// Log-weights `λ_i`.
    pub fn log_weights(&self) -> &[f64] {
        &self.log_weights
    }

    /// Probabilities `p_i = exp(λ_i − logsumexp λ)`.
    pub fn probabilities(&self) -> &[f64] {
        &self.probabilities
    }

    /// Draws an expert: the first index whose cumulative probability exceeds `U ~ [0, 1)`
    /// (the last one if rounding leaves none).
    pub fn sample(&self, rng: &mut Rng) -> usize {
        let u = rng.uniform();
        let mut acc = 0.0;
        for (i, p) in self.probabilities.iter().enumerate() {
            acc += p;
            if acc > u {
                return i;
            }
        }
        self.probabilities.len() - 1
    }

    /// The expert with the largest weight.
    pub fn best(&self, tie: TieBreak, rng: &mut Rng) -> usize {
        argmax_tie(&self.log_weights, tie, rng)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charges_renormalise_and_probabilities_follow() {
        let mut h = Hedge::new(3, 1.0);
        h.charge(2, 1.0);
        h.end_round();
        assert_eq!(h.log_weights(), &[0.0, 0.0, -1.0]);
        let e = (-1f64).exp();
        let p = h.probabilities();
        assert!((p[0] - 1.0 / (2.0 + e)).abs() < 1e-15);
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-15);
    }

    #[test]
    fn serde_round_trip_restores_probabilities() {
        let mut h = Hedge::new(4, 0.5);
        h.charge(1, 2.0);
        h.end_round();
        let back: Hedge = serde_json::from_str(&serde_json::to_string(&h).unwrap()).unwrap();
        assert_eq!(back, h);
    }
}
