//! The spec's numeric oracles (`shared/spec/oracles`) and properties the math guarantees.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use proptest::prelude::*;
use serde_json::Value;
use streamboost::Classifier;
use streamboost::boost::BoosterConfig;
use streamboost::boost::multiclass::cost::{PairwiseCosts, Surrogate};
use streamboost::boost::multiclass::{AdaBoostOlm, AdaBoostOlmConfig};
use streamboost::boost::oza::{OzaBoostConfig, ZeroErrorPolicy};
use streamboost::core::math::{TieBreak, sigmoid};
use streamboost::core::{ClassId, Rng};
use streamboost::weak::hoeffding::observer::{GaussianEstimator, VarianceMode};
use streamboost::weak::hoeffding::split::{SplitCriterion, hoeffding_bound};

use crate::common::oracle_json;

/// A weak learner whose votes the test dictates, recording what it is trained with.
#[derive(Clone)]
pub struct Scripted {
    k: usize,
    vote: Arc<AtomicUsize>,
    trained: TrainingLog,
}

impl Classifier for Scripted {
    fn n_classes(&self) -> usize {
        self.k
    }
    fn add_class(&mut self) -> streamboost::Result<()> {
        self.k += 1;
        Ok(())
    }
    fn learn(&mut self, _x: &[f64], y: ClassId, w: f64) {
        self.trained.lock().unwrap().push((y, w));
    }
    fn predict_proba(&self, _x: &[f64], out: &mut [f64]) {
        out.fill(0.0);
        out[self.vote.load(Ordering::SeqCst)] = 1.0;
    }
}

/// What a scripted learner was trained with: `(label, weight)` per call.
pub type TrainingLog = Arc<Mutex<Vec<(ClassId, f64)>>>;

pub struct Scripts {
    pub votes: Vec<Arc<AtomicUsize>>,
    pub trained: Vec<TrainingLog>,
}

impl Scripts {
    /// Sets the learners' next votes.
    pub fn set_votes(&self, votes: &[usize]) {
        for (slot, &v) in self.votes.iter().zip(votes) {
            slot.store(v, Ordering::SeqCst);
        }
    }
}

/// `n` scripted learners over `k` classes and the handles that drive and read them.
pub fn scripted_learners(k: usize, n: usize) -> (Vec<Scripted>, Scripts) {
    let votes: Vec<_> = (0..n).map(|_| Arc::new(AtomicUsize::new(0))).collect();
    let trained: Vec<_> = (0..n).map(|_| Arc::new(Mutex::new(Vec::new()))).collect();
    let learners = (0..n)
        .map(|i| Scripted {
            k,
            vote: votes[i].clone(),
            trained: trained[i].clone(),
        })
        .collect();
    (learners, Scripts { votes, trained })
}

/// `config`'s booster (seed 0) over `n` scripted learners of `k` classes, and the handles that
/// drive and read them.
pub fn over_scripted<C: BoosterConfig>(
    config: &C, k: usize, n: usize,
) -> (C::Over<Scripted>, Scripts) {
    let (learners, scripts) = scripted_learners(k, n);
    (config.assemble(learners, 0).unwrap(), scripts)
}

fn scripted_booster(k: usize, n: usize, eta0: Option<f64>) -> (AdaBoostOlm<Scripted>, Scripts) {
    let config = AdaBoostOlmConfig {
        tie_break: TieBreak::Lowest,
        eta0,
        ..AdaBoostOlmConfig::new(())
    };
    over_scripted(&config, k, n)
}

pub fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

/// An oracle's count, class or label, as an index.
pub fn as_usize(v: &Value) -> usize {
    v.as_u64().unwrap() as usize
}

pub fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12
}

#[test]
fn adaboost_olm_trace() {
    let Some(trace) = oracle_json("trace_adaboost_olm.json") else {
        return;
    };
    let (k, n) = (as_usize(&trace["k"]), as_usize(&trace["N"]));
    let (mut booster, scripts) = scripted_booster(k, n, None);
    let mut out = vec![0.0; k];
    for row in trace["rows"].as_array().unwrap() {
        let t = row["t"].as_u64().unwrap();
        let y = as_usize(&row["true_label"]);
        let votes: Vec<usize> = floats(&row["weak_predictions"])
            .iter()
            .map(|&v| v as usize)
            .collect();
        assert_eq!(
            booster.alphas(),
            floats(&row["alpha_before"]).as_slice(),
            "t={t}"
        );
        assert_eq!(
            booster.hedge().log_weights(),
            floats(&row["log_hedge_before"]).as_slice()
        );

        // Cost matrices and α-gradients at s^{i-1} (eq. 9 and corrected eq. 10).
        let mut costs = PairwiseCosts::default();
        costs.reset(Surrogate::Logistic, k);
        let mut s = vec![0.0; k];
        for (i, &l) in votes.iter().enumerate() {
            let expected = &row["cost_matrices"][i];
            for r in 0..k {
                let want = floats(&expected[r]);
                for c in 0..k {
                    assert!(close(costs.get(r, c), want[c]), "t={t} i={i} C[{r}][{c}]");
                }
            }
            let g = Surrogate::Logistic.alpha_gradient(&s, y, l, booster.alphas()[i]);
            assert!(
                close(g, row["alpha_gradients"][i].as_f64().unwrap()),
                "t={t} i={i} gradient"
            );
            s[l] += booster.alphas()[i];
            costs.update(Surrogate::Logistic, &s, l);
        }

        for (i, &v) in votes.iter().enumerate() {
            scripts.votes[i].store(v, Ordering::SeqCst);
        }
        booster.learn_predict(&[], Some(y), 1.0, &mut out);

        // The class probabilities are the Hedge mixture of the experts' predictions.
        let experts = floats(&row["expert_predictions"]);
        let hedge = floats(&row["expert_probabilities"]);
        let mut mixture = vec![0.0; k];
        for (e, p) in experts.iter().zip(&hedge) {
            mixture[*e as usize] += p;
        }
        for c in 0..k {
            assert!(
                close(out[c], mixture[c]),
                "t={t} mixture {out:?} vs {mixture:?}"
            );
        }
        let weights = floats(&row["weights_to_learners"]);
        for i in 0..n {
            let (label, w) = *scripts.trained[i].lock().unwrap().last().unwrap();
            assert_eq!(label, y);
            assert!(
                close(w, weights[i]),
                "t={t} weight of learner {i}: {w} vs {}",
                weights[i]
            );
        }
        for (a, b) in booster.alphas().iter().zip(floats(&row["alpha_after"])) {
            assert!(close(*a, b), "t={t} alpha {a} vs {b}");
        }
        assert_eq!(
            booster.hedge().log_weights(),
            floats(&row["log_hedge_after"]).as_slice()
        );
    }
}

/// OzaBoost's λ bookkeeping (ALGORITHMS.md §9, Oza/River update) on the oracle's pattern of
/// after-training correctness, with `K = λ` so that the weight each model learns with is the
/// `λ` it was handed.
#[test]
fn oza_trace() {
    let Some(trace) = oracle_json("trace_oza.json") else {
        return;
    };
    let m = as_usize(&trace["M"]);
    let (k, y) = (3, 1);
    // The same rows through River's policy and MOA's (which differ only in vote weights).
    let [river, moa] = [ZeroErrorPolicy::River, ZeroErrorPolicy::Stop].map(|zero_error| {
        let config = OzaBoostConfig {
            poisson: false,
            zero_error,
            ..OzaBoostConfig::river(())
        };
        over_scripted(&config, k, m)
    });
    let (mut river, river_scripts) = river;
    let (mut moa, moa_scripts) = moa;
    let mut out = vec![0.0; k];
    for row in trace["rows"].as_array().unwrap() {
        let t = row["t"].as_u64().unwrap();
        let votes: Vec<usize> = row["correct_after_training"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| if c.as_bool().unwrap() { y } else { 2 })
            .collect();
        for (booster, scripts) in [(&mut river, &river_scripts), (&mut moa, &moa_scripts)] {
            scripts.set_votes(&votes);
            booster.learn_predict(&[0.0], Some(y), 1.0, &mut out);
            let lambdas = floats(&row["lambda_used_for_each_model"]);
            for (i, lambda) in lambdas.iter().enumerate() {
                let log = scripts.trained[i].lock().unwrap();
                assert_eq!(log.last(), Some(&(y, *lambda)), "t={t} model {i}");
            }
            let (sc, sw) = booster.lambdas();
            assert_eq!(sc, floats(&row["lambda_sc"]).as_slice(), "t={t}");
            assert_eq!(sw, floats(&row["lambda_sw"]).as_slice(), "t={t}");
            for (i, eps) in floats(&row["epsilon"]).iter().enumerate() {
                assert!(close(booster.error(i).unwrap(), *eps), "t={t} epsilon {i}");
            }
        }
        // The oracle's weight is null unless 0 < ε < 1/2. There MOA ends the vote; River
        // gives weight 1 to ε ∈ {0} ∪ (1/2, 1] and ln 1 = 0 to ε = 1/2.
        let weights = row["vote_weight_ln((1-eps)/eps)_or_null"]
            .as_array()
            .unwrap();
        let epsilon = floats(&row["epsilon"]);
        for (i, w) in weights.iter().enumerate() {
            match w.as_f64() {
                Some(want) => {
                    assert!(close(river.vote_weight(i).unwrap(), want), "t={t} {i}");
                    assert!(close(moa.vote_weight(i).unwrap(), want), "t={t} {i}");
                }
                None => {
                    let river_weight = if epsilon[i] == 0.5 { 0.0 } else { 1.0 };
                    assert_eq!(river.vote_weight(i), Some(river_weight), "t={t} {i}");
                    assert_eq!(moa.vote_weight(i), None, "t={t} {i}");
                }
            }
        }
    }
}

#[test]
fn hoeffding_tree_numbers() {
    let Some(o) = oracle_json("hoeffding_tree_numbers.json") else {
        return;
    };
    for case in o["hoeffding_bound"].as_array().unwrap() {
        let eps = hoeffding_bound(
            case["R"].as_f64().unwrap(),
            case["delta"].as_f64().unwrap(),
            case["W"].as_f64().unwrap(),
        );
        assert!(close(eps, case["eps"].as_f64().unwrap()), "{eps} vs {case}");
    }
    // R = log2(3) for three classes present.
    assert!(close(
        SplitCriterion::InfoGain.range(&[1.0, 2.0, 3.0]),
        3f64.log2()
    ));

    let ig = &o["info_gain_example"];
    let pre = floats(&ig["pre"]);
    let post: Vec<Vec<f64>> = ig["post"].as_array().unwrap().iter().map(floats).collect();
    let merit = SplitCriterion::InfoGain.merit(&pre, post.iter().map(|b| &b[..]), 0.01);
    assert!(
        close(merit, ig["info_gain_bits"].as_f64().unwrap()),
        "{merit}"
    );

    let g = &o["gaussian_split_example"];
    let split = g["split"].as_f64().unwrap();
    for (c, class) in ["class0", "class1"].iter().enumerate() {
        let (mean, var, w) = (
            g[class]["mean"].as_f64().unwrap(),
            g[class]["var"].as_f64().unwrap(),
            g[class]["W"].as_f64().unwrap(),
        );
        let est = GaussianEstimator {
            weight: w,
            mean,
            m2: var * w,
            min: mean - 100.0,
            max: mean + 100.0,
        };
        let left = est.weight_at_or_below(split, VarianceMode::Population);
        assert!(
            close(left, g["left_weights"][c].as_f64().unwrap()),
            "{class} left {left}"
        );
        assert!(
            close(w - left, g["right_weights"][c].as_f64().unwrap()),
            "{class} right"
        );
    }
}

/// AdaBoost.OL (Beygelzimer, Kale & Luo 2015) in its binary ±1 form, written independently:
/// weight `sigmoid(−m)`, gradient `−y h sigmoid(−(m + α y h))`, with `m` the margin so far.
struct AdaBoostOl {
    alpha: Vec<f64>,
    t: f64,
}

impl AdaBoostOl {
    /// Learns one row; returns the weight given to each learner.
    fn learn(&mut self, y: f64, h: &[f64]) -> Vec<f64> {
        self.t += 1.0;
        let eta = 2.0 * std::f64::consts::SQRT_2 / self.t.sqrt();
        let mut margin = 0.0;
        let mut weights = Vec::new();
        for (i, &hi) in h.iter().enumerate() {
            weights.push(sigmoid(-margin));
            let a = self.alpha[i];
            let g = -y * hi * sigmoid(-(margin + a * y * hi));
            self.alpha[i] = (a - eta * g).clamp(-2.0, 2.0);
            margin += a * y * hi;
        }
        weights
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// With k = 2, Adaboost.OLM is AdaBoost.OL (ALGORITHMS.md §3.4, §7.2).
    #[test]
    fn k2_adaboost_olm_is_adaboost_ol(rows in prop::collection::vec((0usize..2, prop::collection::vec(0usize..2, 4)), 1..30)) {
        let (mut olm, scripts) = scripted_booster(2, 4, None);
        let mut ol = AdaBoostOl { alpha: vec![0.0; 4], t: 0.0 };
        let mut out = [0.0; 2];
        // Class 0 is +1, class 1 is −1.
        let sign = |c: usize| if c == 0 { 1.0 } else { -1.0 };
        for (y, votes) in rows {
            for (i, &v) in votes.iter().enumerate() {
                scripts.votes[i].store(v, Ordering::SeqCst);
            }
            olm.learn_predict(&[], Some(y), 1.0, &mut out);
            let h: Vec<f64> = votes.iter().map(|&v| sign(v)).collect();
            let weights = ol.learn(sign(y), &h);
            for i in 0..4 {
                let (_, w) = *scripts.trained[i].lock().unwrap().last().unwrap();
                prop_assert!((w - weights[i]).abs() < 1e-12, "weight {} vs {}", w, weights[i]);
                prop_assert!((olm.alphas()[i] - ol.alpha[i]).abs() < 1e-12);
            }
        }
    }

    /// Every cost matrix row is minimal on the true label and bounded by its magnitude
    /// (ALGORITHMS.md §3.2: `C[r][r] ≤ C[r][l] ≤ −C[r][r]`), and the incremental matrix
    /// equals the direct one.
    #[test]
    fn cost_rows_are_minimal_on_the_true_label(updates in prop::collection::vec((0usize..6, -2.0f64..2.0), 0..40)) {
        let k = 6;
        let mut costs = PairwiseCosts::default();
        costs.reset(Surrogate::Logistic, k);
        let mut s = vec![0.0; k];
        for (l, a) in updates {
            s[l] += a;
            costs.update(Surrogate::Logistic, &s, l);
        }
        for r in 0..k {
            let diag = costs.get(r, r);
            prop_assert!((diag + Surrogate::Logistic.true_label_weight(&s, r)).abs() < 1e-9);
            for l in 0..k {
                prop_assert!(diag <= costs.get(r, l) && costs.get(r, l) <= -diag);
                if l != r {
                    prop_assert!((costs.get(r, l) - sigmoid(s[l] - s[r])).abs() < 1e-12);
                }
            }
        }
    }

    /// The learner weights of Adaboost.OLM lie in (0, 1) before scaling and the α stay in
    /// [−2, 2], whatever the votes.
    #[test]
    fn weights_and_alphas_stay_in_range(rows in prop::collection::vec((0usize..4, prop::collection::vec(0usize..4, 5)), 1..40)) {
        let (mut olm, scripts) = scripted_booster(4, 5, None);
        let mut out = [0.0; 4];
        for (y, votes) in rows {
            for (i, &v) in votes.iter().enumerate() {
                scripts.votes[i].store(v, Ordering::SeqCst);
            }
            olm.learn_predict(&[], Some(y), 1.0, &mut out);
            prop_assert!((out.iter().sum::<f64>() - 1.0).abs() < 1e-9);
            for i in 0..5 {
                let (_, w) = *scripts.trained[i].lock().unwrap().last().unwrap();
                prop_assert!(w > 0.0 && w < 1.0);
                prop_assert!(olm.alphas()[i].abs() <= 2.0);
            }
        }
    }
}

#[test]
fn child_rngs_are_distinct_and_reproducible() {
    let draws = |seed, i| -> Vec<u64> {
        let mut r = Rng::child(seed, i);
        (0..4).map(|_| r.next_u64()).collect()
    };
    assert_eq!(draws(7, 3), draws(7, 3));
    assert_ne!(draws(7, 3), draws(7, 4));
    assert_ne!(draws(7, 0), {
        let mut r = Rng::new(7);
        (0..4).map(|_| r.next_u64()).collect::<Vec<_>>()
    });
}

/// SmoothBoost's weights of the OSBoost family (ALGORITHMS.md §10.1) along the oracle's
/// margins `y·h^{(i)}`, directly and through a booster of scripted learners.
#[test]
fn osboost_weights_trace() {
    use streamboost::boost::binary::{OsBoostConfig, smooth_weight};
    let Some(trace) = oracle_json("trace_osboost_weights.json") else {
        return;
    };
    let gamma = trace["gamma"].as_f64().unwrap();
    let theta = gamma / (2.0 + gamma);
    assert!(close(theta, trace["theta"].as_f64().unwrap()));
    let margins = floats(&trace["margins_y_h"]);
    let want = floats(&trace["weights_w_1_to_8"]);
    let mut z = 0.0;
    for (i, (m, w)) in margins.iter().zip(&want).enumerate() {
        assert!(close(smooth_weight(z, gamma), *w), "learner {}", i + 1);
        z += m - theta;
    }
    // The booster hands learner i exactly that weight (sign outputs: margins ±1 only).
    let signs: Vec<f64> = margins
        .iter()
        .map(|m| if *m < 0.0 { -1.0 } else { 1.0 })
        .collect();
    let config = OsBoostConfig {
        gamma,
        ..OsBoostConfig::new(())
    };
    let (mut booster, scripts) = over_scripted(&config, 2, signs.len());
    // Label +1 (class 0): a learner voting class 0 has y·h = +1.
    let votes: Vec<usize> = signs.iter().map(|&s| usize::from(s < 0.0)).collect();
    scripts.set_votes(&votes);
    booster.learn(&[0.0], 0, 1.0);
    let mut z = 0.0;
    for (i, s) in signs.iter().enumerate() {
        let log = scripts.trained[i].lock().unwrap();
        assert_eq!(log.len(), 1);
        assert!(
            close(log[0].1, smooth_weight(z, gamma)),
            "learner {}",
            i + 1
        );
        z += s - theta;
    }
}

#[test]
fn simplex_projection_oracle() {
    use streamboost::boost::ogd::project_to_simplex;
    let Some(path) = crate::common::oracle("simplex_projection.csv") else {
        return;
    };
    let text = std::fs::read_to_string(path).unwrap();
    let numbers = |s: &str| -> Vec<f64> { s.split(' ').map(|x| x.parse().unwrap()).collect() };
    for line in text.lines().skip(1) {
        let cols: Vec<&str> = line.split(',').collect();
        let mut v = numbers(cols[0]);
        let theta = project_to_simplex(&mut v);
        assert!(close(theta, cols[1].parse().unwrap()), "{line}");
        for (got, want) in v.iter().zip(numbers(cols[2])) {
            assert!(close(*got, want), "{line}");
        }
    }
}

proptest! {
    /// Projections land on the simplex and are idempotent; SmoothBoost weights lie in (0, 1].
    #[test]
    fn simplex_projection_and_smooth_weights_stay_in_range(
        v in prop::collection::vec(-5.0f64..5.0, 1..40),
        zs in prop::collection::vec(-50.0f64..500.0, 1..20),
    ) {
        use streamboost::boost::binary::smooth_weight;
        use streamboost::boost::ogd::project_to_simplex;
        let mut w = v.clone();
        project_to_simplex(&mut w);
        prop_assert!(w.iter().all(|&x| x >= 0.0));
        prop_assert!((w.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        let mut again = w.clone();
        project_to_simplex(&mut again);
        for (a, b) in again.iter().zip(&w) {
            prop_assert!((a - b).abs() < 1e-12);
        }
        for z in zs {
            let weight = smooth_weight(z, 0.1);
            prop_assert!(weight > 0.0 && weight <= 1.0);
        }
    }
}

/// AdaBoost.MM ([MS] eq. 7) against the spec's trace: three rounds with fixed hypotheses;
/// each round's cost matrix (as the weak learner receives it, scaled back by the round's
/// global shift), edge, weight, votes and training predictions.
#[test]
fn adaboost_mm_trace() {
    use std::cell::RefCell;
    use streamboost::boost::batch::{
        AdaBoostMmConfig, CostMatrix, CostSensitive, Hypothesis, SortedColumns, train,
    };
    use streamboost::core::{ClassSet, Dataset, Feature, StreamSpec};

    /// Predicts a label per row (the row's one feature is its number).
    struct Labels(Vec<ClassId>);
    impl Hypothesis for Labels {
        fn predict(&self, x: &[f64]) -> ClassId {
            self.0[x[0] as usize]
        }
    }
    /// Returns the trace's hypothesis of each round, recording the costs it is given.
    struct Fixed {
        rounds: Vec<Vec<ClassId>>,
        given: RefCell<Vec<CostMatrix>>,
    }
    impl CostSensitive for Fixed {
        type Hypothesis = Labels;
        fn fit(&self, _: &SortedColumns, costs: &CostMatrix) -> streamboost::Result<Labels> {
            let mut given = self.given.borrow_mut();
            given.push(costs.clone());
            Ok(Labels(self.rounds[given.len() - 1].clone()))
        }
    }

    let Some(o) = oracle_json("trace_adaboost_mm.json") else {
        return;
    };
    let as_labels =
        |v: &Value| -> Vec<ClassId> { v.as_array().unwrap().iter().map(as_usize).collect() };
    let k = as_usize(&o["k"]);
    let labels = as_labels(&o["labels"]);
    let rounds = o["rounds"].as_array().unwrap();
    let spec = StreamSpec::new(
        vec![Feature::numeric("row")],
        ClassSet::new((0..k).map(|c| c.to_string())).unwrap(),
    );
    let mut data = Dataset::new(spec);
    for (i, &y) in labels.iter().enumerate() {
        data.push(&[i as f64], Some(y));
    }
    let learner = Fixed {
        rounds: rounds.iter().map(|r| as_labels(&r["h"])).collect(),
        given: RefCell::new(Vec::new()),
    };
    let config = AdaBoostMmConfig {
        rounds: rounds.len(),
        ..AdaBoostMmConfig::default()
    };
    let table = SortedColumns::new(&data).unwrap();
    let (model, report) = train(&config, &table, &learner, &mut |_| {}).unwrap();
    assert_eq!(report.len(), rounds.len());
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * (1.0 + b.abs());
    let mut f = vec![vec![0.0; k]; labels.len()];
    for (t, (r, expected)) in report.iter().zip(rounds).enumerate() {
        assert!(
            close(r.delta.unwrap(), expected["delta"].as_f64().unwrap()),
            "round {t}: δ {:?}",
            r.delta
        );
        assert!(
            close(r.alpha, expected["alpha"].as_f64().unwrap()),
            "round {t}: α {}",
            r.alpha
        );
        let given = &learner.given.borrow()[t];
        for (i, row) in expected["cost_matrix"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
        {
            for (l, v) in row.as_array().unwrap().iter().enumerate() {
                let c = given.row(i)[l] * r.shift.exp();
                assert!(close(c, v.as_f64().unwrap()), "round {t}: C({i},{l}) = {c}");
            }
        }
        let (h, alpha) = &model.hypotheses()[t];
        for (i, row) in expected["f_after"].as_array().unwrap().iter().enumerate() {
            f[i][h.predict(&[i as f64])] += alpha;
            for (l, v) in row.as_array().unwrap().iter().enumerate() {
                assert!(close(f[i][l], v.as_f64().unwrap()), "round {t}: f({i},{l})");
            }
        }
        let predicted: Vec<ClassId> = f
            .iter()
            .map(|row| streamboost::core::math::argmax(row))
            .collect();
        assert_eq!(
            predicted,
            as_labels(&expected["train_predictions"]),
            "round {t}"
        );
    }
    // The training-loss bound shrinks by √(1−δ²) a round from k − 1.
    let bound = report
        .iter()
        .map(|r| r.delta.unwrap())
        .fold((k - 1) as f64, |b, d| b * (1.0 - d * d).sqrt());
    assert!(close(report.last().unwrap().loss_bound.unwrap(), bound));
}
