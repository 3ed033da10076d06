//! Hedge (exponential weights) over experts, kept in log form (ALGORITHMS.md §0, §1.5).

use serde::{Deserialize, Serialize};

use super::ExpertSelection;
use crate::core::math::{TieBreak, argmax_tie, logsumexp};
use crate::core::{ClassId, Rng};
use crate::drift::{Change, Watch};

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

    /// Every expert at equal weight again, as at the start (the rate stays).
    pub fn restart(&mut self) {
        self.log_weights.iter_mut().for_each(|l| *l = 0.0);
        self.refresh();
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

/// The experts of an ensemble whose members vote one after another (ALGORITHMS.md §1.5):
/// expert `i` predicts with the votes of members `1..=i`, and Hedge, charged each expert's
/// 0-1 loss times the row's weight, weighs them. Adaboost.OLM predicts this way (\[JGT\]
/// Algorithm 2); OnlineMBBM, OzaBoost and OzaBag may, as an option that keeps their members'
/// training as it is: the ensemble then predicts no worse than its best prefix, up to
/// Hedge's regret `O(√(T ln N))`, and with a lead tree as member 1 ("A lead tree",
/// benchmarks/RESULTS.md) no worse than that tree where the rest adds nothing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PrefixExperts {
    expert_selection: ExpertSelection,
    hedge: Hedge,
    /// The detector on the ensemble's own error, where its members are replaced on a drift
    /// ([`PrefixExperts::watching`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    watch: Option<Watch>,
}

impl PrefixExperts {
    /// `n` experts with Hedge rate `rate`, predicting by `selection`.
    pub fn new(n: usize, rate: f64, selection: ExpertSelection) -> Self {
        PrefixExperts {
            expert_selection: selection,
            hedge: Hedge::new(n, rate),
            watch: None,
        }
    }

    /// These experts, restarted when detector `watch` sees the ensemble's error drift
    /// (`None`: never).
    ///
    /// Why a restart: Hedge's weights after `T` rows are `e^{−η·L_i}`, so after a change an
    /// expert that was best for long keeps its lead for as many rows as its head start in
    /// loss, whatever the new concept. Restarting the weights (all equal) when the
    /// ensemble's error drifts makes the rows since the restart a fresh run of Hedge: its
    /// bound (expected loss at most `(η·L* + ln N)/(1 − e^{−η})` against the best expert
    /// `L*`, Freund & Schapire 1997, Thm. 2) then holds on each stretch between restarts
    /// against that stretch's best expert, at the cost of `ln N/(1 − e^{−η})` per restart.
    ///
    /// A response that sleeps until the booster's lead adapts (`crate::boost::Turn`) starts
    /// its detector at the wake ([`PrefixExperts::wake`]); the bound then holds from there.
    pub fn watching(mut self, watch: Option<Watch>) -> Self {
        self.watch = watch;
        self
    }

    /// Starts watching with `watch` (a response the lead woke).
    pub fn wake(&mut self, watch: Watch) {
        self.watch = Some(watch);
    }

    /// Calls `f(i, p)` for each expert `i` the choice may fall on, `p` the probability that
    /// it does: Hedge's distribution (`Sample`), the experts tied at the top, equally
    /// (`Best`), or the last one.
    fn for_each_chosen(&self, mut f: impl FnMut(usize, f64)) {
        match self.expert_selection {
            ExpertSelection::Sample => {
                for (i, &p) in self.hedge.probabilities().iter().enumerate() {
                    f(i, p);
                }
            }
            ExpertSelection::Best => {
                let lw = self.hedge.log_weights();
                let top = lw.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let tied = lw.iter().filter(|&&l| l == top).count() as f64;
                for (i, &l) in lw.iter().enumerate() {
                    if l == top {
                        f(i, 1.0 / tied);
                    }
                }
            }
            ExpertSelection::Last => f(self.hedge.log_weights().len() - 1, 1.0),
        }
    }

    /// Prefix experts for an ensemble that may predict with all its members instead
    /// ([`ExpertSelection::Last`]: `None`, nothing to keep). Their Hedge rate is 1, as in
    /// \[JGT\] Algorithm 2.
    pub fn unless_last(n: usize, selection: ExpertSelection) -> Option<Self> {
        (selection != ExpertSelection::Last).then(|| PrefixExperts::new(n, 1.0, selection))
    }

    /// Hedge's weights over the experts.
    pub fn hedge(&self) -> &Hedge {
        &self.hedge
    }

    /// The expert that predicts this row (a draw from Hedge's distribution for
    /// [`ExpertSelection::Sample`]).
    pub fn choose(&self, tie: TieBreak, rng: &mut Rng) -> usize {
        match self.expert_selection {
            ExpertSelection::Sample => self.hedge.sample(rng),
            ExpertSelection::Best => self.hedge.best(tie, rng),
            ExpertSelection::Last => self.hedge.log_weights().len() - 1,
        }
    }

    /// Class probabilities under the expert choice: each expert's label `experts[i]`
    /// weighted by the probability that expert `i` is the one chosen.
    pub fn mixture(&self, experts: &[ClassId], out: &mut [f64]) {
        out.fill(0.0);
        self.for_each_chosen(|i, p| out[experts[i]] += p);
    }

    /// Charges every expert whose label was not `y` the row's `weight`, and ends the round.
    /// Returns whether the experts restarted ([`PrefixExperts::watching`]).
    pub fn charge(&mut self, experts: &[ClassId], y: ClassId, weight: f64) -> bool {
        // The ensemble's own error: the mass its choice of expert puts off label `y`.
        let drifted = self.watch.is_some() && {
            let mut error = 0.0;
            self.for_each_chosen(|i, p| error += p * f64::from(u8::from(experts[i] != y)));
            let watch = self.watch.as_mut().expect("checked");
            watch.update(error) == Some(Change::Drift)
        };
        for (i, &e) in experts.iter().enumerate() {
            if e != y {
                self.hedge.charge(i, weight);
            }
        }
        self.hedge.end_round();
        if drifted {
            self.hedge.restart();
        }
        drifted
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

    /// Hedge's bound for `Sample` (Freund & Schapire 1997, Thm. 2, losses in [0, 1]): the
    /// expected loss of the drawn expert over `T` rounds is at most
    /// `(η·L* + ln N)/(1 − e^{−η})`, `L*` the best expert's loss; the mixture's mass off the
    /// true label is exactly that expected loss. And `Best` predicts with the best expert.
    #[test]
    fn prefix_experts_lose_little_more_than_the_best_prefix() {
        let (n, k, rounds) = (6, 3, 400);
        let mut rng = Rng::new(11);
        let mut sample = PrefixExperts::new(n, 1.0, ExpertSelection::Sample);
        let mut best = PrefixExperts::new(n, 1.0, ExpertSelection::Best);
        let (mut expected, mut losses) = (0.0, vec![0.0; n]);
        let mut out = vec![0.0; k];
        for _ in 0..rounds {
            let y = rng.below(k);
            // Expert i is right with probability (i + 1)/(n + 1), the last expert the best.
            let experts: Vec<ClassId> = (0..n)
                .map(|i| {
                    if rng.uniform() < (i + 1) as f64 / (n + 1) as f64 {
                        y
                    } else {
                        (y + 1 + rng.below(k - 1)) % k
                    }
                })
                .collect();
            sample.mixture(&experts, &mut out);
            assert!((out.iter().sum::<f64>() - 1.0).abs() < 1e-12);
            expected += 1.0 - out[y];
            let leader = argmax_tie(best.hedge().log_weights(), TieBreak::Lowest, &mut rng);
            assert_eq!(best.choose(TieBreak::Lowest, &mut rng), leader);
            best.mixture(&experts, &mut out);
            // All the mass on the labels of the experts tied at the top.
            let top = best.hedge().log_weights()[leader];
            let on_top: f64 = (0..k)
                .filter(|&l| {
                    (0..n).any(|i| experts[i] == l && best.hedge().log_weights()[i] == top)
                })
                .map(|l| out[l])
                .sum();
            assert!(out[experts[leader]] > 0.0 && (on_top - 1.0).abs() < 1e-12);
            for (l, &e) in losses.iter_mut().zip(&experts) {
                *l += f64::from(u8::from(e != y));
            }
            sample.charge(&experts, y, 1.0);
            best.charge(&experts, y, 1.0);
        }
        let best_loss = losses.iter().copied().fold(f64::INFINITY, f64::min);
        let bound = (best_loss + (n as f64).ln()) / (1.0 - (-1f64).exp());
        assert!(expected <= bound, "{expected} > {bound} (L* = {best_loss})");
        assert_eq!(
            sample.hedge(),
            best.hedge(),
            "the selection does not change the weights"
        );
        let last = PrefixExperts::unless_last(n, ExpertSelection::Last);
        assert!(last.is_none(), "all members vote: nothing to keep");
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
