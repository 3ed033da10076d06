//! Accuracy on the shared real data sets (skipped where they are absent). These are quick
//! sanity floors for a debug build; the paper comparisons with their published numbers are
//! in `benchmarks/RESULTS.md`, made by `benchmarks/reproduce_jgt17.py`.

use streamboost::Config;
use streamboost::boost::WeightScale;
use streamboost::boost::multiclass::AdaBoostOlmConfig;
use streamboost::columnar::{Encodings, load_stream};
use streamboost::core::Dataset;
use streamboost::core::Rng;
use streamboost::eval::Prequential;
use streamboost::weak::HoeffdingTreeConfig;

use crate::common::dataset;

/// Asserts that the mean final-20% accuracy of Adaboost.OLM over `learners` jgt-paper trees
/// and `shuffles` random orders of data set `file` is above `floor` (skipped without it).
fn ada_olm_above(file: &str, learners: usize, shuffles: u64, floor: f64) {
    let encodings = Encodings::default();
    if let Some(acc) = ada_olm_final_accuracy_coded(file, &encodings, learners, shuffles) {
        assert!(acc > floor, "{file} final-20% accuracy {acc}");
    }
}

fn ada_olm_final_accuracy_coded(
    file: &str, encodings: &Encodings, learners: usize, shuffles: u64,
) -> Option<f64> {
    let path = dataset(file)?;
    let data = load_stream(&[path], "label", encodings).unwrap();
    let config = AdaBoostOlmConfig {
        n_learners: learners,
        weight_scale: WeightScale::UniformRandom(5.0, 200.0),
        ..AdaBoostOlmConfig::new(HoeffdingTreeConfig::jgt_paper())
    };
    Some(mean_final_accuracy(&config, &data, shuffles))
}

/// `config`'s final-20% accuracy over `data` in random orders `1..=shuffles` (order `s`
/// with seed `s`), averaged.
fn mean_final_accuracy<C: Config>(config: &C, data: &Dataset, shuffles: u64) -> f64 {
    let mut total = 0.0;
    for s in 1..=shuffles {
        let mut order: Vec<usize> = (0..data.len()).collect();
        Rng::new(s).shuffle(&mut order);
        let mut model = config.build(data.spec(), s).unwrap();
        let report = Prequential::default()
            .run(&mut model, data, Some(&order), |_| {})
            .unwrap();
        assert_eq!(report.rows as usize, data.len());
        total += report.final_fraction.accuracy.unwrap();
    }
    total / shuffles as f64
}

#[test]
fn balance_scale_above_the_paper() {
    // JGT17 Table 1: Adaboost.OLM 0.754 on the final 20%.
    ada_olm_above("balance_scale/data.csv", 50, 3, 0.754);
}

#[test]
fn car_learns() {
    // JGT17 Table 1: 0.930; see benchmarks/RESULTS.md for where we stand and why.
    ada_olm_above("car/data.csv", 50, 2, 0.85);
}

#[test]
fn car_with_ordinal_levels_reaches_the_paper() {
    // JGT17 Table 1: 0.930. The authors' copy of car must have been recoded (their loader
    // rejects `5more` in a numeric column); coded by level rank, as in benchmarks/RESULTS.md.
    let levels = [
        "buying=low,med,high,vhigh",
        "maint=low,med,high,vhigh",
        "doors=2,3,4,5more",
        "persons=2,4,more",
        "lug_boot=small,med,big",
        "safety=low,med,high",
    ];
    let encodings = Encodings {
        ordinal: levels.iter().map(|l| l.parse().unwrap()).collect(),
        ..Encodings::default()
    };
    if let Some(acc) = ada_olm_final_accuracy_coded("car/data.csv", &encodings, 100, 5) {
        assert!(acc >= 0.930, "car (ordinal) final-20% accuracy {acc}");
    }
}

#[test]
fn mushroom_near_perfect() {
    // JGT17 Table 1: 1.000.
    ada_olm_above("mushroom/data.csv", 20, 1, 0.99);
}

#[test]
fn mice_protein_with_missing_values_runs() {
    // The copy with empty fields exercises missing values on real data end to end.
    let Some(path) = dataset("mice_protein/data.csv") else {
        return;
    };
    let data = load_stream(&[path], "label", &Encodings::default()).unwrap();
    assert_eq!(
        (
            data.len(),
            data.spec().n_features(),
            data.spec().n_classes()
        ),
        (1080, 77, 8)
    );
    assert!((0..data.len()).any(|i| data.row(i).iter().any(|v| v.is_nan())));
    let config = AdaBoostOlmConfig {
        n_learners: 10,
        ..AdaBoostOlmConfig::new(HoeffdingTreeConfig::jgt_paper())
    };
    let mut model = config.build(data.spec(), 1).unwrap();
    let report = Prequential::default()
        .run(&mut model, &data, None, |_| {})
        .unwrap();
    assert!(report.cumulative.accuracy.unwrap() > 1.0 / 8.0);
}

/// AdaBoost.MM over [MS]'s greedy cost-sensitive trees on satimage's own split (the first
/// 4,435 rows are UCI's training file, the last 2,000 its test file): every edge is in
/// (0, 1], the training error stays under the bound `(k−1) Π √(1−δ_t²)` every round, and 20
/// rounds beat the first round's tree alone on the test rows; so do 20 rounds of AdaBoost.M1
/// (SAMME) over the same trees and of AdaBoost.MH over stumps (against one stump).
#[test]
fn adaboost_mm_on_satimage_beats_one_tree_and_keeps_its_bound() {
    use streamboost::boost::batch::{BatchBoostConfig, Method};
    let Some(path) = dataset("satimage/data.csv") else {
        return;
    };
    let all = load_stream(&[path], "label", &Encodings::default()).unwrap();
    let (training, test) = (all.slice(0..4435), all.slice(4435..all.len()));
    let accuracy = |predict: &dyn Fn(&[f64]) -> usize| {
        let right = (0..test.len())
            .filter(|&i| Some(predict(test.row(i))) == test.label(i))
            .count();
        right as f64 / test.len() as f64
    };
    let trained = |method| {
        let config = BatchBoostConfig {
            rounds: 20,
            max_leaves: 8,
            ..BatchBoostConfig::new(method)
        };
        config.train(&training, &mut |_| {}).unwrap()
    };
    let mm = trained(Method::Mm);
    assert_eq!(mm.rounds().len(), 20);
    for (t, r) in mm.rounds().iter().enumerate() {
        let delta = r.delta.unwrap();
        assert!(delta > 0.0 && delta <= 1.0, "round {t}: δ = {delta}");
        assert!(r.train_error <= r.loss_bound.unwrap(), "round {t}: {r:?}");
    }
    let mut scores = Vec::new();
    for (name, model) in [
        ("MM", mm),
        ("M1", trained(Method::M1)),
        ("MH", trained(Method::Mh)),
    ] {
        let one = accuracy(&|x| model.predict_after(1, x));
        let boosted = accuracy(&|x| model.predict_after(20, x));
        eprintln!("satimage test accuracy, {name}: 1 round {one:.4}, 20 rounds {boosted:.4}");
        assert!(boosted > one + 0.03, "{name}: {boosted} against {one}");
        scores.push(boosted);
    }
    assert!(scores[0] > 0.80, "{scores:?}");
}

/// On balance_scale (625 rows) one `moa` tree, hardly split, is naive Bayes and beats every
/// ensemble of random trees. Adaboost.OLM predicts with the best of its prefixes, so its
/// default, led by one such tree, stays within a standard error of that tree (one SE of a
/// 5-shuffle mean of 125 final rows is about 0.012), where without the lead it trails by 0.05;
/// so does each of OvA's per-class boosters, and OnlineMBBM, Oza's boosting and bagging with
/// their prefix experts. Mean final-20% accuracy over shuffles 1..5.
#[test]
fn boosters_led_by_one_tree_stay_near_it_on_balance_scale() {
    use streamboost::model::ModelConfig;
    let Some(path) = dataset("balance_scale/data.csv") else {
        return;
    };
    let data = load_stream(&[path], "label", &Encodings::default()).unwrap();
    let mean_final =
        |config| mean_final_accuracy(&ModelConfig::from_json(config).unwrap(), &data, 5);
    let tree = mean_final(serde_json::json!({"algorithm": "hoeffding"}));
    let led = mean_final(serde_json::json!({"algorithm": "ada-olm"}));
    let unled = mean_final(serde_json::json!({"algorithm": "ada-olm", "lead": null}));
    let ova = mean_final(serde_json::json!({"algorithm": "ova"}));
    assert!(led >= tree - 0.012, "ada-olm {led} against one tree {tree}");
    assert!(ova >= tree - 0.012, "ova {ova} against one tree {tree}");
    assert!(led > unled + 0.02, "ada-olm led {led}, not led {unled}");
    // The ensembles that vote with all their members predict with the prefix Hedge picks
    // by default, led by the same tree, and so stay near it too; AdaOVA's lead is that
    // multiclass tree in place of a bundle of binary ones.
    for algorithm in ["mbbm", "oza", "oza-bag", "ada-ova"] {
        let led = mean_final(serde_json::json!({"algorithm": algorithm}));
        assert!(
            led >= tree - 0.012,
            "{algorithm} {led} against one tree {tree}"
        );
    }
    let all = serde_json::json!({"algorithm": "oza", "expert_selection": "last", "lead": null});
    let all = mean_final(all);
    let oza = mean_final(serde_json::json!({"algorithm": "oza"}));
    assert!(oza > all + 0.05, "oza led {oza}, every member voting {all}");
}
