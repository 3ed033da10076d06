//! AdaBoost.MH (Schapire & Singer, "Improved boosting algorithms using confidence-rated
//! predictions", 1999) over real-valued stumps: the second baseline \[MS\] compare with.
//!
//! The multiclass problem is `k` binary ones, one per label (`Y(i, l) = +1` if `l = y_i`,
//! else `−1`), with a distribution `D` over (row, label) pairs, uniform at the start. A stump
//! splits the rows into blocks (its two sides, and the rows missing its feature); on block
//! `j` it predicts, for label `l`, the confidence `c_{jl} = ½ ln((W⁺_{jl} + ε)/(W⁻_{jl} + ε))`
//! with `W^±_{jl}` the weight of the block's pairs of sign `±` (S&S eq. 9 and §4.2, with their
//! smoothing `ε = 1/(2mk)`). The split minimises `Z = 2 Σ_j Σ_l √(W⁺_{jl} W⁻_{jl})` (S&S
//! eq. 10); then `D(i, l) ← D(i, l) e^{−Y(i,l) h(x_i, l)} / Z_t`. The vote is
//! `f(x, l) = Σ_t h_t(x, l)`, and `H(x) = argmax_l f(x, l)`. The Hamming loss on the training
//! rows is at most `Π_t Z_t` (S&S Thm. 1), so the training error is at most `k Π_t Z_t`
//! (a row whose vote is wrong has at least one label of the wrong sign).

use serde::{Deserialize, Serialize};

use super::tree::{LeafRule, Tree, grow};
use super::{CostMatrix, Hypothesis, Round, Rounds, SortedColumns, WeightedVote, train_error};
use crate::Result;
use crate::core::ClassId;

/// A stump's confidences `c_l` for every label on one of its blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Confidences(pub Vec<f64>);

/// A real-valued stump of AdaBoost.MH.
pub type MhStump = Tree<Confidences>;

impl Hypothesis for MhStump {
    fn predict(&self, x: &[f64]) -> ClassId {
        crate::core::math::argmax(&self.value(x).0)
    }

    fn vote(&self, x: &[f64], weight: f64, out: &mut [f64]) {
        for (o, c) in out.iter_mut().zip(&self.value(x).0) {
            *o += weight * c;
        }
    }
}

/// A row's statistics are its weights `D(i, l)` for `l = y_i` (in `0..k`) and for `l ≠ y_i`
/// (in `k..2k`); a block costs `Σ_l √(W⁺_l W⁻_l)` (S&S eq. 10 without its constant 2).
struct RealConfidences {
    k: usize,
    epsilon: f64,
}

impl LeafRule for RealConfidences {
    type Value = Confidences;

    fn cost(&self, sums: &[f64]) -> f64 {
        let (plus, minus) = sums.split_at(self.k);
        plus.iter().zip(minus).map(|(p, m)| (p * m).sqrt()).sum()
    }

    fn value(&self, sums: &[f64]) -> Confidences {
        let (plus, minus) = sums.split_at(self.k);
        Confidences(
            plus.iter()
                .zip(minus)
                .map(|(p, m)| 0.5 * ((p + self.epsilon) / (m + self.epsilon)).ln())
                .collect(),
        )
    }
}

/// Trains `rounds` rounds of AdaBoost.MH over stumps on `table`; `on_round` sees each
/// round's report as it ends. A round's `delta` is the edge `δ` for which `√(1−δ²) = Z_t`
/// (AdaBoost's relation between the two), and its `loss_bound` is `k Π Z_t`.
pub fn train_mh(
    rounds: usize, table: &SortedColumns, on_round: &mut dyn FnMut(&Round),
) -> Result<(WeightedVote<MhStump>, Vec<Round>)> {
    let (m, k) = (table.len(), table.k());
    let labels = table.labels();
    let rule = RealConfidences {
        k,
        epsilon: 1.0 / (2.0 * (m * k) as f64),
    };
    let mut weights = CostMatrix::zeros(m, k);
    weights.fill(1.0 / (m * k) as f64);
    let mut stats = CostMatrix::zeros(m, 2 * k);
    let mut f = CostMatrix::zeros(m, k);
    let mut model = WeightedVote::new(k);
    let mut report = Rounds::new(on_round, rounds);
    let mut bound = k as f64;
    for _ in 0..rounds {
        for (j, &y) in labels.iter().enumerate() {
            let (w, s) = (weights.row(j), stats.row_mut(j));
            s.fill(0.0);
            for l in 0..k {
                s[if l == y { l } else { k + l }] = w[l];
            }
        }
        let stump = grow(table, &stats, &rule, 2);
        let mut z = 0.0;
        for (j, &y) in labels.iter().enumerate() {
            let c = &stump.value(table.row(j)).0;
            let (w, votes) = (weights.row_mut(j), f.row_mut(j));
            for l in 0..k {
                let sign = if l == y { 1.0 } else { -1.0 };
                w[l] *= (-sign * c[l]).exp();
                votes[l] += c[l];
                z += w[l];
            }
        }
        weights.scale(1.0 / z);
        bound *= z;
        model.push(stump, 1.0);
        report.record(Round {
            delta: Some((1.0 - z * z).max(0.0).sqrt()),
            alpha: 1.0,
            loss_bound: Some(bound),
            ..Round::ending_at(train_error(&f, labels))
        });
    }
    Ok((model, report.rounds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_training_error_stays_under_k_times_the_product_of_the_normalisers() {
        let data = crate::synth::mixed(400, 0.1, 0.1, 8);
        let table = SortedColumns::new(&data).unwrap();
        let (model, report) = train_mh(30, &table, &mut |_| {}).unwrap();
        assert_eq!(model.hypotheses().len(), 30);
        for r in &report {
            assert!(r.train_error <= r.loss_bound.unwrap() + 1e-12, "{r:?}");
            let delta = r.delta.unwrap();
            assert!((0.0..=1.0).contains(&delta), "{r:?}");
        }
        // The bound falls every round (Z_t < 1 when a stump helps at all) and the vote
        // learns the data.
        assert!(report.windows(2).all(|w| w[1].loss_bound < w[0].loss_bound));
        assert!(report.last().unwrap().train_error < 0.35, "{report:?}");
    }
}
