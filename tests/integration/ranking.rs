//! Multi-label ranking: the potentials against the spec's oracles and brute force, the
//! properties the math guarantees, OnlineBMR and Ada.OLMR traces through scripted learners,
//! and the ranker contract.

use proptest::prelude::*;
use serde::Serialize;
use streamboost::boost::ranking::ada_olmr::logistic_cost;
use streamboost::boost::ranking::{
    AdaOlmrConfig, LabelSplit, OnlineBmrConfig, PairLoss, RankingLoss, WalkTables,
};
use streamboost::core::Dataset;
use streamboost::core::math::softplus;
use streamboost::eval::Prequential;
use streamboost::model::ModelConfig;
use streamboost::weak::HoeffdingTreeConfig;
use streamboost::{Config, Ranker, synth};

use crate::common::{assert_unchanged, oracle_rows};
use crate::oracles::over_scripted;

fn rational(s: &str) -> f64 {
    match s.split_once('/') {
        Some((a, b)) => a.parse::<f64>().unwrap() / b.parse::<f64>().unwrap(),
        None => s.parse().unwrap(),
    }
}

fn numbers(s: &str) -> Vec<f64> {
    s.split_whitespace().map(|v| v.parse().unwrap()).collect()
}

fn mask(k: usize, relevant: &[usize]) -> Vec<bool> {
    (0..k).map(|l| relevant.contains(&l)).collect()
}

#[test]
fn potentials_match_the_oracle() {
    let Some(rows) = oracle_rows("ml_potentials.csv", 32) else {
        return;
    };
    for f in &rows {
        let k: usize = f[0].parse().unwrap();
        let gamma = rational(&f[1]);
        let relevant: Vec<usize> = numbers(&f[2]).iter().map(|&v| v as usize).collect();
        let n: usize = f[3].parse().unwrap();
        let s = numbers(&f[4]);
        let loss = match f[5].as_str() {
            "rank" => PairLoss::Rank,
            "hinge" => PairLoss::Hinge,
            other => panic!("loss {other}"),
        };
        let expected: f64 = f[7].parse().unwrap();
        let split = LabelSplit::of(&mask(k, &relevant));
        let mut tables = WalkTables::new(k, gamma, n);
        let phi = tables.pair(relevant.len()).potential(loss, n, &s, &split);
        assert!((phi - expected).abs() < 1e-12, "{f:?}: {phi} vs {expected}");
    }
}

#[test]
fn pair_walk_pmf_matches_the_oracle() {
    let Some(rows) = oracle_rows("ml_pair_diff_pmf.csv", 40) else {
        return;
    };
    for f in &rows {
        let (k, m): (usize, usize) = (f[0].parse().unwrap(), f[1].parse().unwrap());
        let gamma: f64 = f[2].parse().unwrap();
        let a: f64 = f[3].parse().unwrap();
        let n: usize = f[4].parse().unwrap();
        let d: i64 = f[5].parse().unwrap();
        let expected: f64 = f[6].parse().unwrap();
        let mut tables = WalkTables::new(k, gamma, 10);
        assert!((tables.baseline(m).0 - a).abs() < 1e-15);
        let p = tables.pair(m).pmf(n, d);
        assert!((p - expected).abs() < 1e-14, "{f:?}: {p}");
    }
}

/// `φ_n(s)` by enumerating every multinomial outcome of `n` draws from `u_γ^Y`.
fn brute_potential(
    k: usize, gamma: f64, relevant: &[bool], n: usize, s: &[f64], loss: PairLoss,
) -> f64 {
    let split = LabelSplit::of(relevant);
    let m = split.relevant.len() as f64;
    let a = (1.0 - m * gamma) / k as f64;
    let u: Vec<f64> = relevant
        .iter()
        .map(|&r| if r { a + gamma } else { a })
        .collect();
    let pair_loss = |t: &[f64]| -> f64 {
        let mut total = 0.0;
        for &l in &split.relevant {
            for &r in &split.irrelevant {
                total += match loss {
                    PairLoss::Rank => {
                        if t[l] < t[r] {
                            1.0
                        } else if t[l] == t[r] {
                            0.5
                        } else {
                            0.0
                        }
                    }
                    PairLoss::Hinge => (1.0 + t[r] - t[l]).max(0.0),
                };
            }
        }
        total * split.pair_weight()
    };
    // Walk the draws one at a time (k^n paths; small cases only).
    fn walk(depth: usize, t: &mut Vec<f64>, p: f64, u: &[f64], f: &dyn Fn(&[f64]) -> f64) -> f64 {
        if depth == 0 {
            return p * f(t);
        }
        let mut total = 0.0;
        for l in 0..u.len() {
            t[l] += 1.0;
            total += walk(depth - 1, t, p * u[l], u, f);
            t[l] -= 1.0;
        }
        total
    }
    walk(n, &mut s.to_vec(), 1.0, &u, &pair_loss)
}

#[test]
fn costs_are_potential_differences_checked_by_enumeration() {
    let (k, gamma, n) = (4, 0.1, 4);
    let relevant = [true, false, true, false];
    let split = LabelSplit::of(&relevant);
    let mut tables = WalkTables::new(k, gamma, n);
    let pair = tables.pair(2);
    for s in [
        [0.0, 0.0, 0.0, 0.0],
        [1.0, 0.0, 2.0, 1.0],
        [0.4, 1.3, 0.2, 0.9],
    ] {
        for loss in [PairLoss::Rank, PairLoss::Hinge] {
            let base = brute_potential(k, gamma, &relevant, n, &s, loss);
            assert!((pair.potential(loss, n, &s, &split) - base).abs() < 1e-12);
            let mut c = vec![0.0; k];
            pair.costs(loss, n, &s, &split, &mut c);
            for l in 0..k {
                let mut moved = s;
                moved[l] += 1.0;
                let phi = brute_potential(k, gamma, &relevant, n, &moved, loss);
                assert!(
                    (c[l] - (phi - base)).abs() < 1e-12,
                    "{loss:?} s={s:?} l={l}"
                );
            }
        }
    }
}

fn label_state() -> impl Strategy<Value = (Vec<bool>, Vec<f64>)> {
    (3usize..9).prop_flat_map(|k| {
        (
            prop::collection::vec(any::<bool>(), k),
            prop::collection::vec(-3.0f64..3.0, k),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Relevant labels never cost more than irrelevant ones (§1.4), for both potentials and
    /// any number of draws left; the rank loss lies in [0, 1].
    #[test]
    fn bmr_costs_favour_relevant_labels(
        (relevant, s) in label_state(),
        n in 0usize..40,
        gamma in 0.01f64..0.3,
        integer in any::<bool>(),
    ) {
        let split = LabelSplit::of(&relevant);
        prop_assume!(split.has_pairs());
        let s: Vec<f64> = if integer { s.iter().map(|v| v.round()).collect() } else { s };
        let k = relevant.len();
        let mut tables = WalkTables::new(k, gamma, 40);
        let pair = tables.pair(split.relevant.len());
        for loss in [PairLoss::Rank, PairLoss::Hinge] {
            let mut c = vec![0.0; k];
            pair.costs(loss, n, &s, &split, &mut c);
            let worst_relevant = split.relevant.iter().map(|&l| c[l]).fold(f64::MIN, f64::max);
            let best_irrelevant = split.irrelevant.iter().map(|&r| c[r]).fold(f64::MAX, f64::min);
            prop_assert!(worst_relevant <= best_irrelevant + 1e-12, "{loss:?}: {c:?}");
        }
        let loss = split.rank_loss(&s);
        prop_assert!((0.0..=1.0).contains(&loss));
    }

    /// Ada.OLMR's cost is the gradient of the logistic surrogate: it sums to zero, is ≤ 0 on
    /// relevant labels and ≥ 0 on the others, and matches finite differences.
    #[test]
    fn logistic_cost_is_the_surrogate_gradient((relevant, s) in label_state()) {
        let split = LabelSplit::of(&relevant);
        prop_assume!(split.has_pairs());
        let k = relevant.len();
        let mut c = vec![0.0; k];
        logistic_cost(&s, &split, &mut c);
        prop_assert!(c.iter().sum::<f64>().abs() < 1e-12);
        for &l in &split.relevant {
            prop_assert!(c[l] <= 0.0);
        }
        for &r in &split.irrelevant {
            prop_assert!(c[r] >= 0.0);
        }
        let surrogate = |t: &[f64]| -> f64 {
            let mut total = 0.0;
            for &l in &split.relevant {
                for &r in &split.irrelevant {
                    total += softplus(t[r] - t[l]);
                }
            }
            total * split.pair_weight()
        };
        let h = 1e-6;
        for j in 0..k {
            let (mut up, mut down) = (s.clone(), s.clone());
            up[j] += h;
            down[j] -= h;
            let numeric = (surrogate(&up) - surrogate(&down)) / (2.0 * h);
            prop_assert!((numeric - c[j]).abs() < 1e-7, "label {j}: {numeric} vs {}", c[j]);
        }
    }
}

#[test]
fn bmr_trains_each_relevant_label_with_its_potential_weight() {
    // Three scripted learners over k = 4 labels vote 2, 0, 1; Y = {0, 2}; hinge potentials,
    // γ = 0.1, N = 3: learner i gets (max c − c[l])/2 for l ∈ Y at s^{i−1}, with c from the
    // brute-force potential with N − i draws left.
    let (k, n) = (4, 3);
    let (mut bmr, scripts) = over_scripted(&OnlineBmrConfig::new(()), k, n);
    let votes = [2usize, 0, 1];
    scripts.set_votes(&votes);
    let relevant = mask(k, &[0, 2]);
    let mut scores = vec![0.0; k];
    bmr.learn_predict_scores(&[0.0], Some(&relevant), 1.0, &mut scores);
    assert_eq!(scores, vec![1.0, 1.0, 1.0, 0.0]);
    let mut s = vec![0.0; k];
    for (i, &vote) in votes.iter().enumerate() {
        let left = n - 1 - i;
        let c: Vec<f64> = (0..k)
            .map(|l| {
                let mut moved = s.clone();
                moved[l] += 1.0;
                brute_potential(k, 0.1, &relevant, left, &moved, PairLoss::Hinge)
            })
            .collect();
        let top = c.iter().copied().fold(f64::MIN, f64::max);
        let expected: Vec<(usize, f64)> = [0usize, 2]
            .iter()
            .map(|&l| (l, (top - c[l]) / 2.0))
            .filter(|&(_, w)| w > 0.0)
            .collect();
        let got = scripts.trained[i].lock().unwrap().clone();
        assert_eq!(got.len(), expected.len(), "learner {i}: {got:?}");
        for ((gl, gw), (el, ew)) in got.iter().zip(&expected) {
            assert_eq!(gl, el);
            assert!((gw - ew).abs() < 1e-12, "learner {i}: {gw} vs {ew}");
        }
        s[vote] += 1.0;
    }
    // A row with no pairs trains nobody.
    bmr.learn_predict_scores(&[0.0], Some(&[true; 4]), 1.0, &mut scores);
    assert!(scripts.trained.iter().all(|t| t.lock().unwrap().len() <= 2));
}

#[test]
fn ada_olmr_follows_the_spec_step_by_step() {
    // Two scripted learners, k = 3, Y = {1}; expert draw irrelevant to the updates.
    let (k, n) = (3, 2);
    let (mut model, scripts) = over_scripted(&AdaOlmrConfig::new(()), k, n);
    let relevant = mask(k, &[1]);
    let split = LabelSplit::of(&relevant);
    let mut scores = vec![0.0; k];
    // Row 1: α = 0, so s stays 0 and every learner sees the gradient at 0.
    scripts.set_votes(&[1, 0]);
    model.learn_predict_scores(&[0.0], Some(&relevant), 1.0, &mut scores);
    let mut c0 = vec![0.0; k];
    logistic_cost(&[0.0; 3], &split, &mut c0);
    let top = c0.iter().copied().fold(f64::MIN, f64::max);
    for i in 0..n {
        let got = scripts.trained[i].lock().unwrap().clone();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].0, 1);
        assert!((got[0].1 - (top - c0[1])).abs() < 1e-15);
    }
    // α_i ← Π(0 − c^{i+1}·h^i / √1) with c^{i+1} at s = 0 (α_old = 0): −c0[vote].
    let alphas = model.alphas();
    assert!((alphas[0] - (-c0[1]).clamp(-2.0, 2.0)).abs() < 1e-15);
    assert!((alphas[1] - (-c0[0]).clamp(-2.0, 2.0)).abs() < 1e-15);
    assert!(alphas[0] > 0.0 && alphas[1] < 0.0, "{alphas:?}");
    // Hedge charged the rank loss of s^i with the pre-update α (all zero: ties, loss ½).
    let lw = model.hedge().log_weights();
    assert_eq!(lw, &[0.0, 0.0]);
}

#[test]
fn rankers_learn_a_synthetic_multi_label_rule() {
    let data = synth::mixed_multi_label(3000, 0.0, 0.0, 4);
    let tree = HoeffdingTreeConfig::jgt_paper();
    let configs: Vec<(&str, ModelConfig)> = vec![
        (
            "bmr-hinge",
            ModelConfig::Bmr(OnlineBmrConfig {
                n_learners: 20,
                ..OnlineBmrConfig::new(tree.clone().into())
            }),
        ),
        (
            "bmr-rank",
            ModelConfig::Bmr(OnlineBmrConfig {
                n_learners: 20,
                loss: RankingLoss::Rank,
                ..OnlineBmrConfig::new(tree.clone().into())
            }),
        ),
        (
            "ada-olmr",
            ModelConfig::AdaOlmr(AdaOlmrConfig {
                n_learners: 20,
                ..AdaOlmrConfig::new(tree.clone().into())
            }),
        ),
        (
            "single tree",
            ModelConfig::Hoeffding(HoeffdingTreeConfig::default()),
        ),
    ];
    for (name, config) in configs {
        check_ranker_contract(name, &config, &synth::mixed_multi_label(600, 0.05, 0.1, 11));
        let mut model = config.build(data.spec(), 1).unwrap();
        let report = Prequential::default()
            .run_ranking(&mut model, &data, None, |_, _| Ok(()))
            .unwrap();
        let loss = report.last.rank_loss.unwrap();
        assert!(loss < 0.2, "{name}: final rank loss {loss}");
    }
}

/// The ranker contract: finite scores throughout a stream with missing values, weight 0
/// changes nothing, the same seed gives bit-identical scores, and a serialised copy goes on
/// exactly as the original.
fn check_ranker_contract<C: Config>(name: &str, config: &C, data: &Dataset)
where
    C::Model: Ranker + Serialize + serde::de::DeserializeOwned,
{
    let k = data.spec().n_classes();
    let run = |model: &mut C::Model, rows: std::ops::Range<usize>| -> Vec<u64> {
        let mut out = vec![0.0; k];
        let mut bits = Vec::new();
        for i in rows {
            model.learn_predict_scores(data.row(i), data.label_set(i), 1.0, &mut out);
            assert!(out.iter().all(|v| v.is_finite()), "{name}: {out:?}");
            bits.extend(out.iter().map(|v| v.to_bits()));
        }
        bits
    };
    let mut model = config.build(data.spec(), 3).unwrap();
    let first = run(&mut model, 0..300);
    assert_eq!(
        first,
        run(&mut config.build(data.spec(), 3).unwrap(), 0..300),
        "{name}: same seed"
    );

    let before = serde_json::to_string(&model).unwrap();
    assert_unchanged(&mut model, &format!("{name}: w = 0"), |model| {
        (0..30).for_each(|i| model.learn_labels(data.row(i), data.label_set(i).unwrap(), 0.0));
    });

    let mut copy: C::Model = serde_json::from_str(&before).unwrap();
    assert_eq!(
        run(&mut model, 300..data.len()),
        run(&mut copy, 300..data.len()),
        "{name}: resumed copy"
    );
}
