//! OnlineMBBM's exact potentials and the booster against the spec's oracles, and the
//! identities the potentials satisfy.

use streamboost::Classifier;
use streamboost::boost::BoosterConfig;
use streamboost::boost::VoteRule;
use streamboost::boost::binary::BbmWeights;
use streamboost::boost::multiclass::potential::{PotentialEngine, clip};
use streamboost::boost::multiclass::{OnlineMbbmConfig, WeightNorm};
use streamboost::core::Rng;
use streamboost::core::math::TieBreak;

use crate::common::{oracle_csv, oracle_json, oracle_rows};
use crate::oracles::{as_usize, close, floats, over_scripted, scripted_learners};

fn fraction(text: &str) -> f64 {
    match text.split_once('/') {
        Some((a, b)) => a.parse::<f64>().unwrap() / b.parse::<f64>().unwrap(),
        None => text.parse().unwrap(),
    }
}

fn ints(text: &str) -> Vec<i64> {
    text.split_whitespace()
        .map(|v| v.parse().unwrap())
        .collect()
}

#[test]
fn exact_potentials_k2_to_4() {
    let Some(rows) = oracle_rows("mc01_potentials_exact.csv", 232) else {
        return;
    };
    for row in rows {
        let (k, gamma, n, r) = (
            row[0].parse::<usize>().unwrap(),
            fraction(&row[1]),
            row[2].parse::<usize>().unwrap(),
            row[3].parse::<usize>().unwrap(),
        );
        let s = ints(&row[4]);
        let want: f64 = row[6].parse().unwrap();
        let mut engine = PotentialEngine::new(k, gamma, n);
        let got = engine.phi(n, &s, r);
        assert!(close(got, want), "{row:?}: {got}");
    }
}

#[test]
fn bundles_at_k26() {
    let Some(rows) = oracle_csv("mc01_bundles_k26_g0.1.csv") else {
        return;
    };
    let mut engine = PotentialEngine::new(26, 0.1, 99);
    assert!(rows.len() >= 30);
    for row in rows {
        let n: usize = row[2].parse().unwrap();
        let mut groups: Vec<(i64, usize)> = Vec::new();
        for part in row[3].split_whitespace() {
            let (d, m) = part.split_once(':').unwrap();
            let d = clip(n, d.parse().unwrap());
            match groups.iter_mut().find(|g| g.0 == d) {
                Some(g) => g.1 += m.parse::<usize>().unwrap(),
                None => groups.push((d, m.parse().unwrap())),
            }
        }
        groups.sort_unstable();
        let bundle = engine.bundle(n, &groups).clone();
        let want: f64 = row[6].parse().unwrap();
        let got = match row[4].as_str() {
            "base" => bundle.base,
            "plus(l=r)" => bundle.plus,
            _ => {
                let d = clip(n, row[5].parse().unwrap());
                bundle.minus[groups.iter().position(|g| g.0 == d).unwrap()]
            }
        };
        assert!(close(got, want), "{row:?}: {got}");
    }
}

/// ALGORITHMS.md §P.1.5: `Φ_{n+1}(G) = p·Φ_n(G+1) + q·Σ_g m_g Φ_n(G↓g)` ([JGT] eq. 3), the
/// potentials lie in [0, 1], and every cost row is minimal on the true label.
#[test]
fn potentials_satisfy_their_recursion_at_k26() {
    let (k, gamma, max_n) = (26, 0.1, 60);
    let mut engine = PotentialEngine::new(k, gamma, max_n);
    let p = (1.0 - gamma) / k as f64 + gamma;
    let q = (1.0 - gamma) / k as f64;
    let mut rng = Rng::new(11);
    let mut row = vec![0.0; k];
    for _ in 0..40 {
        let n = rng.below(max_n);
        // A state reachable after some votes: counts summing to at most N − n − 1.
        let mut s = vec![0i64; k];
        for _ in 0..rng.below(12) {
            s[rng.below(k)] += 1;
        }
        let r = rng.below(k);
        let above = engine.phi(n + 1, &s, r);
        engine.cost_row(n, &s, r, &mut row);
        let mixed: f64 = (0..k)
            .map(|l| if l == r { p * row[l] } else { q * row[l] })
            .sum();
        assert!((above - mixed).abs() < 1e-12, "n={n} s={s:?} r={r}");
        for &c in &row {
            assert!((0.0..=1.0).contains(&c));
            assert!(row[r] <= c + 1e-15, "cost row minimal on the true label");
        }
    }
}

/// The binary weights of ALGORITHMS.md §7.1, from the k = 2 potential engine and from Online
/// BBM's closed form.
#[test]
fn binary_potentials_give_the_bbm_weights() {
    let Some(rows) = oracle_csv("binary_bbm_weights.csv") else {
        return;
    };
    let mut engines = std::collections::HashMap::new();
    for row in rows {
        let gamma: f64 = row[0].parse().unwrap();
        let n: usize = row[2].parse().unwrap();
        let margin: i64 = row[3].parse().unwrap();
        let want: f64 = row[5].parse().unwrap();
        let (engine, closed) = engines.entry(row[0].clone()).or_insert_with(|| {
            (
                PotentialEngine::new(2, gamma, 40),
                BbmWeights::new(40, gamma),
            )
        });
        let mut c = [0.0; 2];
        engine.cost_row(n, &[margin, 0], 0, &mut c);
        assert!(close(c[1] - c[0], want), "{row:?}: {}", c[1] - c[0]);
        let w = closed.weight(n, margin);
        assert!(close(w, want), "{row:?}: closed form {w}");
    }
}

/// Online BBM is OnlineMBBM at k = 2 with argmax votes (ALGORITHMS.md §7.1): over learners
/// that vote as scripted, with the same seed, weight scale and tie rule, the same
/// predictions row for row, and every learner trained with the same weights (the closed
/// form against the exact potential engine, within rounding).
#[test]
fn online_bbm_is_online_mbbm_at_k_2() {
    use streamboost::boost::WeightScale;
    use streamboost::boost::binary::OnlineBbmConfig;

    let (n, scale) = (30, WeightScale::UniformRandom(0.5, 20.0));
    let (bbm_learners, bbm_scripts) = scripted_learners(2, n);
    let (mbbm_learners, mbbm_scripts) = scripted_learners(2, n);
    let bbm = OnlineBbmConfig {
        n_learners: n,
        weight_scale: scale,
        ..OnlineBbmConfig::new(())
    };
    let mbbm = OnlineMbbmConfig {
        n_learners: n,
        weight_norm: WeightNorm::Raw,
        weight_scale: scale,
        ..OnlineMbbmConfig::new(())
    };
    assert_eq!((bbm.gamma, bbm.tie_break), (mbbm.gamma, mbbm.tie_break));
    let mut bbm = bbm.assemble(bbm_learners, 3).unwrap();
    let mut mbbm = mbbm.assemble(mbbm_learners, 3).unwrap();
    // Learners right with probability 0.6, so margins drift and rows get decided.
    let mut rng = Rng::new(9);
    let (mut p, mut q) = ([0.0; 2], [0.0; 2]);
    for row in 0..2000 {
        let y = rng.below(2);
        let votes: Vec<usize> = (0..n)
            .map(|_| if rng.uniform() < 0.6 { y } else { 1 - y })
            .collect();
        bbm_scripts.set_votes(&votes);
        mbbm_scripts.set_votes(&votes);
        let a = bbm.learn_predict(&[], Some(y), 1.0, &mut p);
        let b = mbbm.learn_predict(&[], Some(y), 1.0, &mut q);
        assert_eq!(a, b, "row {row}");
    }
    let mut decided = 0;
    for (a, b) in bbm_scripts.trained.iter().zip(&mbbm_scripts.trained) {
        let (a, b) = (a.lock().unwrap(), b.lock().unwrap());
        assert_eq!(a.len(), b.len());
        for ((ya, wa), (yb, wb)) in a.iter().zip(b.iter()) {
            assert_eq!(ya, yb);
            assert!((wa - wb).abs() <= 1e-9 * wb.max(1.0), "{wa} against {wb}");
            decided += usize::from(*wa == 0.0);
        }
    }
    assert!(
        decided > 0,
        "some rows are decided before their last learners"
    );
}

#[test]
fn mbbm_worked_example() {
    let Some(example) = oracle_json("mbbm_worked_example_k3_g0.1_N5.json") else {
        return;
    };
    let k = as_usize(&example["k"]);
    let n_learners = as_usize(&example["N"]);
    let gamma = example["gamma"].as_f64().unwrap();
    let y = as_usize(&example["true_label"]);
    let mut engine = PotentialEngine::new(k, gamma, n_learners);
    assert!(close(
        engine.phi(n_learners, &[0, 0, 0], y),
        example["phi_N_of_zero"].as_f64().unwrap()
    ));
    let learners = example["learners"].as_array().unwrap();
    let votes: Vec<usize> = learners
        .iter()
        .map(|l| as_usize(&l["weak_prediction"]))
        .collect();
    // Every learner's full cost matrix and its normalised form D ([JGT] eq. 4, 5).
    let mut row = vec![0.0; k];
    for l in learners {
        let n = as_usize(&l["n_remaining"]);
        let s: Vec<i64> = floats(&l["state_before"])
            .iter()
            .map(|&v| v as i64)
            .collect();
        for r in 0..k {
            engine.cost_row(n, &s, r, &mut row);
            let want = floats(&l["C"][r]);
            let w_r: f64 = row.iter().map(|c| c - row[r]).sum();
            assert!(close(w_r, floats(&l["row_weight_w_r"])[r]));
            let d = floats(&l["D"][r]);
            for c in 0..k {
                assert!(close(row[c], want[c]), "i={} C[{r}][{c}]", l["i"]);
                let normalised = if w_r > 0.0 {
                    (row[c] - row[r]) / w_r
                } else {
                    0.0
                };
                assert!(close(normalised, d[c]), "i={} D[{r}][{c}]", l["i"]);
            }
        }
    }
    // The booster trains learner i on the true label with exactly that weight.
    for vote_rule in [VoteRule::ExpectedCost, VoteRule::Argmax] {
        let config = OnlineMbbmConfig {
            n_learners,
            gamma,
            vote_rule,
            weight_norm: WeightNorm::Raw,
            tie_break: TieBreak::Lowest,
            ..OnlineMbbmConfig::new(())
        };
        let (mut booster, scripts) = over_scripted(&config, k, n_learners);
        scripts.set_votes(&votes);
        let mut out = vec![0.0; k];
        let predicted = booster.learn_predict(&[], Some(y), 1.0, &mut out);
        assert_eq!(predicted, as_usize(&example["final_prediction_argmax"]));
        assert_eq!(out, vec![1.0, 0.0, 0.0]);
        for (i, l) in learners.iter().enumerate() {
            let want = l["weight_to_learner_for_true_label"].as_f64().unwrap();
            let log = scripts.trained[i].lock().unwrap().clone();
            assert_eq!(log.len(), 1, "learner {i}");
            assert_eq!(log[0].0, y);
            assert!(close(log[0].1, want), "learner {i}: {} vs {want}", log[0].1);
        }
    }
}

/// A random state reachable with at most `votes` votes.
fn random_state(rng: &mut Rng, k: usize, votes: usize) -> Vec<i64> {
    let mut s = vec![0i64; k];
    for _ in 0..rng.below(votes + 1) {
        s[rng.below(k)] += 1;
    }
    s
}

/// OnlineMBBM's argmax-vote weight from two base values (the recursion, [JGT] eq. 3) is the
/// weight `Σ_l (C[y][l] − C[y][y])` read off the cost row.
#[test]
fn true_label_weight_is_the_cost_row_weight() {
    for (k, gamma, max_n) in [(3, 0.3, 12), (10, 0.1, 60), (26, 0.05, 40)] {
        let mut engine = PotentialEngine::new(k, gamma, max_n);
        let mut rng = Rng::new(k as u64);
        let mut row = vec![0.0; k];
        for _ in 0..60 {
            let n = rng.below(max_n);
            let s = random_state(&mut rng, k, max_n - n);
            let y = rng.below(k);
            engine.cost_row(n, &s, y, &mut row);
            let want: f64 = row.iter().map(|c| c - row[y]).sum();
            let got = engine.true_label_weight(n, &s, y);
            assert!(
                (got - want).abs() < 1e-11,
                "k={k} n={n} s={s:?}: {got} vs {want}"
            );
        }
    }
}

/// A diagonal first met low and then higher up (the states `(n, s)` with `n + s_y` fixed)
/// is extended rather than recomputed; every value must be the one an engine that meets the
/// same state first computes, to the bit.
#[test]
fn diagonals_grown_upward_equal_ones_computed_at_once() {
    let (k, gamma, max_n) = (10, 0.1, 60);
    let mut grown = PotentialEngine::new(k, gamma, max_n);
    let mut rng = Rng::new(11);
    for _ in 0..40 {
        let y = rng.below(k);
        let mut s = random_state(&mut rng, k, 30);
        let mut n = rng.below(8);
        // Up the diagonal: one draw more, one vote less for the true label.
        while n + 1 < max_n {
            let got = grown.true_label_weight(n, &s, y);
            let want = PotentialEngine::new(k, gamma, max_n).true_label_weight(n, &s, y);
            assert_eq!(got.to_bits(), want.to_bits(), "n={n} s={s:?} y={y}");
            let want_phi = PotentialEngine::new(k, gamma, max_n).phi(n, &s, y);
            assert_eq!(grown.phi(n, &s, y).to_bits(), want_phi.to_bits());
            let up = 1 + rng.below(6);
            n += up;
            s[y] -= up as i64;
        }
    }
}

/// ALGORITHMS.md §P.2.8: with pruning bound ε every value of every bundle is within ε of the
/// exact one, and pruning does prune (fewer distinct bundles on the same states).
#[test]
fn pruned_potentials_are_within_their_bound() {
    let (k, gamma, max_n) = (10, 0.1, 80);
    for epsilon in [1e-9, 1e-4] {
        let mut exact = PotentialEngine::new(k, gamma, max_n);
        let mut pruned = PotentialEngine::new(k, gamma, max_n).with_pruning(epsilon);
        let mut rng = Rng::new(5);
        let (mut want, mut got) = (vec![0.0; k], vec![0.0; k]);
        for _ in 0..300 {
            let n = rng.below(max_n);
            // Learners that mostly vote the true label, as trained ones do.
            let r = rng.below(k);
            let mut s = random_state(&mut rng, k, (max_n - n) / 3);
            s[r] += rng.below(max_n - n) as i64;
            exact.cost_row(n, &s, r, &mut want);
            pruned.cost_row(n, &s, r, &mut got);
            for l in 0..k {
                assert!(
                    (got[l] - want[l]).abs() <= epsilon + 1e-13,
                    "n={n} s={s:?} r={r} l={l}"
                );
            }
            let base = (pruned.phi(n, &s, r) - exact.phi(n, &s, r)).abs();
            assert!(base <= epsilon + 1e-13);
        }
        assert!(
            pruned.counts().0 < exact.counts().0,
            "ε = {epsilon} pruned nothing"
        );
    }
}
