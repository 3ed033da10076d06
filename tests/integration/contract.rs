//! The contract every learner and booster honours (see `Classifier`'s docs), checked for each
//! one: valid probabilities, `w = 0` is a no-op, seeded determinism, missing values and
//! unseen categories without panic, `Send + Sync`.

use serde::Serialize;
use streamboost::boost::multiclass::cost::Surrogate;
use streamboost::boost::multiclass::{
    AdaBoostOlmConfig, BinaryBundleConfig, OnlineMbbmConfig, WeightNorm, one_vs_all,
};
use streamboost::boost::oza::{OzaBoostConfig, OzaVote};
use streamboost::boost::{ExpertSelection, VoteRule, WeightScale};
use streamboost::boost::{Knob, Tune};
use streamboost::core::math::TieBreak;
use streamboost::core::{Dataset, StreamSpec};
use streamboost::learner::Ensemble;
use streamboost::model::{Algorithm, Learns, Model, ModelConfig, Role};
use streamboost::synth;
use streamboost::weak::hoeffding::{LeafPrediction, MissingPolicy};
use streamboost::weak::{
    HoeffdingTreeConfig, NaiveBayesConfig, PerceptronConfig, Structure, WeakLearnerConfig,
};
use streamboost::{Classifier, Config};

use crate::common::assert_unchanged;

fn assert_send_sync<T: Send + Sync>() {}

#[test]
fn models_are_send_and_sync() {
    assert_send_sync::<streamboost::weak::HoeffdingTree>();
    assert_send_sync::<streamboost::boost::multiclass::AdaBoostOlm<streamboost::weak::HoeffdingTree>>(
    );
    assert_send_sync::<Model>();
}

fn assert_valid_proba(p: &[f64], what: &str) {
    let sum: f64 = p.iter().sum();
    assert!(
        p.iter().all(|&v| v.is_finite() && v >= 0.0) && (sum - 1.0).abs() < 1e-9,
        "{what}: invalid probabilities {p:?}"
    );
}

/// Runs the whole contract for one config on the three-class synthetic stream.
fn check_contract<C: Config>(name: &str, config: &C)
where
    C::Model: Serialize,
{
    check_contract_on(
        name,
        config,
        &synth::mixed(600, 0.05, 0.1, 11),
        &synth::mixed(3000, 0.0, 0.0, 4),
    );
}

/// Runs the whole contract for one config: the checks on `data`, the learning check on
/// `clean` (same features).
fn check_contract_on<C: Config>(name: &str, config: &C, data: &Dataset, clean: &Dataset)
where
    C::Model: Serialize,
{
    let spec = data.spec();
    let k = spec.n_classes();

    // Probabilities valid at every step of a stream with missing values.
    let mut model = config.build(spec, 3).unwrap();
    let mut p = vec![0.0; k];
    for i in 0..data.len() {
        model.predict_proba(data.row(i), &mut p);
        assert_valid_proba(&p, name);
        let predicted = model.learn_predict(data.row(i), data.label(i), 1.0, &mut p);
        assert!(predicted < k);
        assert_valid_proba(&p, name);
    }

    // Rows scored together (over several of an ensemble's blocks of rows, members in
    // turn): the numbers of one row at a time, bit for bit.
    let xs: Vec<&[f64]> = (0..data.len()).map(|i| data.row(i)).collect();
    let mut together = vec![0.0; xs.len() * k];
    model.predict_proba_rows(&xs, &mut together);
    for (i, x) in xs.iter().enumerate() {
        model.predict_proba(x, &mut p);
        let bits = |p: &[f64]| p.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(
            bits(&together[i * k..(i + 1) * k]),
            bits(&p),
            "{name}: row {i}"
        );
    }

    // w = 0 changes nothing, however often.
    assert_unchanged(&mut model, &format!("{name}: w = 0"), |model| {
        (0..50).for_each(|i| model.learn(data.row(i), data.label(i).unwrap(), 0.0));
    });

    // Missing values everywhere, unseen and invalid nominal codes: no panic, valid output.
    let odd_rows: [[f64; 5]; 5] = [
        [f64::NAN; 5],
        [0.5, f64::INFINITY, f64::NEG_INFINITY, 17.0, 9.0],
        [0.1, 0.2, 0.3, -1.0, 2.5],
        [0.9, -0.5, 0.5, 1e12, f64::NAN],
        [f64::NAN, 0.0, 0.0, 3.0, 1.0],
    ];
    for row in &odd_rows {
        model.predict_proba(row, &mut p);
        assert_valid_proba(&p, name);
        model.learn_predict(row, Some(1), 1.0, &mut p);
        assert_valid_proba(&p, name);
    }

    // Same config, same seed, same rows: bit-identical predictions.
    let run = |seed: u64| -> Vec<u64> {
        let mut m = config.build(spec, seed).unwrap();
        let mut p = vec![0.0; k];
        let mut out = Vec::new();
        for i in 0..data.len() {
            let y = m.learn_predict(data.row(i), data.label(i), 1.0, &mut p);
            out.push(y as u64);
            out.extend(p.iter().map(|v| v.to_bits()));
        }
        out
    };
    assert_eq!(run(5), run(5), "{name}: same seed, different predictions");

    // It learns: well above the majority rate on the synthetic rule.
    let accuracy = prequential_accuracy(config, clean);
    assert!(accuracy > 0.7, "{name}: prequential accuracy {accuracy}");
}

fn prequential_accuracy<C: Config>(config: &C, data: &Dataset) -> f64 {
    let mut m = config.build(data.spec(), 1).unwrap();
    let report = streamboost::eval::Prequential::default()
        .run(&mut m, data, None, |_| {})
        .unwrap();
    report.cumulative.accuracy.unwrap()
}

#[test]
fn hoeffding_tree_default() {
    check_contract(
        "tree/default",
        &HoeffdingTreeConfig {
            grace_period: 50.0,
            ..Default::default()
        },
    );
}

#[test]
fn hoeffding_tree_jgt_paper() {
    check_contract("tree/jgt-paper", &HoeffdingTreeConfig::jgt_paper());
}

#[test]
fn hoeffding_tree_moa() {
    check_contract(
        "tree/moa",
        &HoeffdingTreeConfig {
            grace_period: 30.0,
            ..HoeffdingTreeConfig::moa()
        },
    );
}

#[test]
fn hoeffding_tree_variants() {
    for (name, config) in [
        (
            "tree/nb",
            HoeffdingTreeConfig {
                grace_period: 30.0,
                leaf_prediction: LeafPrediction::NaiveBayes,
                ..Default::default()
            },
        ),
        (
            "tree/mc-stop",
            HoeffdingTreeConfig {
                grace_period: 30.0,
                leaf_prediction: LeafPrediction::MajorityClass,
                missing: MissingPolicy::StopAtSplit,
                remove_poor_attrs: true,
                binary_split: true,
                ..Default::default()
            },
        ),
        (
            "tree/budget",
            HoeffdingTreeConfig {
                grace_period: 20.0,
                max_active_leaves: Some(3),
                max_depth: Some(4),
                feature_subset: Some(3),
                ..Default::default()
            },
        ),
    ] {
        check_contract(name, &config);
    }
}

#[test]
fn ada_olm_over_jgt_trees() {
    let config = AdaBoostOlmConfig {
        n_learners: 10,
        ..AdaBoostOlmConfig::new(HoeffdingTreeConfig::jgt_paper())
    };
    check_contract("ada-olm/jgt-paper", &config);
}

#[test]
fn ada_olm_options() {
    let base = AdaBoostOlmConfig {
        n_learners: 6,
        ..AdaBoostOlmConfig::new(HoeffdingTreeConfig {
            grace_period: 30.0,
            ..Default::default()
        })
    };
    for (name, config) in [
        ("ada-olm/default-trees", base.clone()),
        (
            "ada-olm/best-argmax-lowest",
            AdaBoostOlmConfig {
                expert_selection: ExpertSelection::Best,
                vote_rule: VoteRule::Argmax,
                tie_break: TieBreak::Lowest,
                ..base.clone()
            },
        ),
        (
            "ada-olm/last-scaled",
            AdaBoostOlmConfig {
                expert_selection: ExpertSelection::Last,
                weight_scale: WeightScale::UniformRandom(5.0, 200.0),
                ..base.clone()
            },
        ),
    ] {
        check_contract(name, &config);
    }
}

#[test]
fn online_mbbm_options() {
    let trees = HoeffdingTreeConfig::jgt_paper();
    for (name, config) in [
        (
            "mbbm/expected-cost",
            OnlineMbbmConfig {
                n_learners: 8,
                vote_rule: VoteRule::ExpectedCost,
                ..OnlineMbbmConfig::new(trees.clone())
            },
        ),
        (
            "mbbm/argmax-raw-lowest-scaled",
            OnlineMbbmConfig {
                n_learners: 8,
                gamma: 0.3,
                vote_rule: VoteRule::Argmax,
                weight_norm: WeightNorm::Raw,
                tie_break: TieBreak::Lowest,
                weight_scale: WeightScale::UniformRandom(0.5, 20.0),
                ..OnlineMbbmConfig::new(trees.clone())
            },
        ),
    ] {
        check_contract(name, &config);
    }
    check_contract(
        "model/mbbm",
        &ModelConfig::Mbbm(OnlineMbbmConfig {
            n_learners: 5,
            ..OnlineMbbmConfig::new(trees.into())
        }),
    );
}

#[test]
fn boosters_compose() {
    // A booster is a learner: Adaboost.OLM over Adaboost.OLM over trees.
    let inner = AdaBoostOlmConfig {
        n_learners: 3,
        ..AdaBoostOlmConfig::new(HoeffdingTreeConfig::jgt_paper())
    };
    let outer = AdaBoostOlmConfig {
        n_learners: 3,
        ..AdaBoostOlmConfig::new(inner)
    };
    check_contract("ada-olm/ada-olm", &outer);
}

#[test]
fn model_enum() {
    let config = ModelConfig::AdaOlm(AdaBoostOlmConfig {
        n_learners: 5,
        ..AdaBoostOlmConfig::new(HoeffdingTreeConfig::jgt_paper().into())
    });
    check_contract("model/ada-olm", &config);
}

#[test]
fn single_naive_bayes_and_perceptron() {
    check_contract("naive-bayes", &NaiveBayesConfig::default());
    check_contract(
        "naive-bayes/prior",
        &NaiveBayesConfig {
            class_prior: 1.0,
            ..Default::default()
        },
    );
    check_contract("perceptron", &PerceptronConfig::default());
    check_contract(
        "perceptron/normalized-softmax",
        &PerceptronConfig {
            normalize_input: true,
            softmax_proba: true,
            ..Default::default()
        },
    );
}

/// Every booster of the model enum over every weak learner (ALGORITHMS.md §1.2: any weak
/// learner works under any booster).
/// Every weak learner of the catalogue's rows, by name, at the defaults a config naming it
/// starts from.
/// And a tree replaced when its error drifts (`--drift-detector`).
fn weak_learners() -> Vec<(&'static str, WeakLearnerConfig)> {
    let adwin = streamboost::drift::DriftConfig::named("adwin");
    let adaptive = WeakLearnerConfig::named("hoeffding")
        .unwrap()
        .adaptive(adwin);
    WeakLearnerConfig::NAMES
        .iter()
        .map(|&name| (name, WeakLearnerConfig::named(name).expect("a row's name")))
        .chain([("adaptive-hoeffding", adaptive)])
        .collect()
}

#[test]
fn every_weak_learner_alone() {
    for (name, weak) in weak_learners() {
        check_contract(&format!("weak/{name}"), &weak);
    }
}

#[test]
fn every_booster_over_every_weak_learner() {
    for (weak_name, weak) in weak_learners() {
        let n = 5;
        let adaptive = |loss| AdaBoostOlmConfig {
            n_learners: n,
            loss,
            ..AdaBoostOlmConfig::new(weak.clone())
        };
        let configs = [
            (
                "ada-olm",
                ModelConfig::AdaOlm(adaptive(Surrogate::Logistic)),
            ),
            (
                "ada-olm/exp",
                ModelConfig::AdaOlm(adaptive(Surrogate::Exponential)),
            ),
            (
                "ada-olm/square-hinge",
                ModelConfig::AdaOlm(adaptive(Surrogate::SquareHinge)),
            ),
            (
                "mbbm",
                ModelConfig::Mbbm(OnlineMbbmConfig {
                    n_learners: n,
                    ..OnlineMbbmConfig::new(weak.clone())
                }),
            ),
            (
                "oza/moa",
                ModelConfig::Oza(OzaBoostConfig {
                    n_learners: n,
                    ..OzaBoostConfig::new(weak.clone())
                }),
            ),
            (
                "oza/river-hard-pure",
                ModelConfig::Oza(OzaBoostConfig {
                    n_learners: n,
                    poisson: false,
                    vote: OzaVote::Hard,
                    ..OzaBoostConfig::river(weak.clone())
                }),
            ),
            (
                "ova",
                ModelConfig::Ova(one_vs_all(AdaBoostOlmConfig {
                    n_learners: n,
                    ..AdaBoostOlmConfig::new(weak.clone())
                })),
            ),
            (
                "ada-ova",
                ModelConfig::AdaOva(AdaBoostOlmConfig {
                    n_learners: n,
                    ..AdaBoostOlmConfig::new(BinaryBundleConfig::new(weak.clone()))
                }),
            ),
        ];
        for (name, config) in configs {
            check_contract(&format!("{name}/{weak_name}"), &config);
        }
    }
}

/// The binary boosters of [CLL] over every weak learner, on a two-class stream.
#[test]
fn binary_boosters_over_every_weak_learner() {
    use streamboost::boost::binary::{Combiner, OgBoostConfig, OgLoss, OsBoostConfig, WeakOutput};
    use streamboost::weak::{ResampleMode, ResamplingConfig};
    let data = synth::mixed_binary(600, 0.05, 0.1, 11);
    let clean = synth::mixed_binary(3000, 0.0, 0.0, 4);
    for (weak_name, weak) in weak_learners() {
        let n = 6;
        let os = |combiner| OsBoostConfig {
            n_learners: n,
            combiner,
            ..OsBoostConfig::new(weak.clone())
        };
        let configs = [
            ("osboost", os(Combiner::Uniform)),
            (
                "osboost-soft",
                OsBoostConfig {
                    weak_output: WeakOutput::Soft,
                    ..os(Combiner::Uniform)
                },
            ),
            (
                "osboost-poisson",
                OsBoostConfig {
                    weak: WeakLearnerConfig::Resampled(ResamplingConfig {
                        mode: ResampleMode::Poisson,
                        inner: Box::new(weak.clone()),
                    }),
                    ..os(Combiner::Uniform)
                },
            ),
            ("osboost-ocp", os(Combiner::Ocp { eta0: 1.0 })),
            ("osboost-exp", os(Combiner::Exp { sample: true })),
            ("osboost-exp-majority", os(Combiner::Exp { sample: false })),
        ];
        for (name, config) in configs {
            check_contract_on(&format!("{name}/{weak_name}"), &config, &data, &clean);
        }
        let bbm = streamboost::boost::binary::OnlineBbmConfig {
            n_learners: n,
            ..streamboost::boost::binary::OnlineBbmConfig::new(weak.clone())
        };
        check_contract_on(&format!("bbm/{weak_name}"), &bbm, &data, &clean);
        for loss in [OgLoss::Logit, OgLoss::Exponential, OgLoss::Savage] {
            let config = OgBoostConfig {
                n_selectors: n,
                per_selector: 2,
                loss,
                ..OgBoostConfig::new(weak.clone())
            };
            check_contract_on(
                &format!("ogboost/{loss:?}/{weak_name}"),
                &config,
                &data,
                &clean,
            );
        }
    }
}

/// In `Soft` mode the binary boosters read a perceptron's clipped margin (WEAK_LEARNERS.md
/// §3), not its one-hot probabilities, so its hypotheses take values inside (−1, 1).
#[test]
fn soft_output_reads_a_perceptrons_clipped_margin() {
    use streamboost::boost::binary::{OsBoostConfig, WeakOutput};
    let data = synth::mixed_binary(400, 0.05, 0.0, 3);
    let config = OsBoostConfig {
        n_learners: 4,
        weak_output: WeakOutput::Soft,
        ..OsBoostConfig::new(PerceptronConfig::default())
    };
    let mut model = config.build(data.spec(), 1).unwrap();
    let mut out = vec![0.0; 2];
    for i in 0..data.len() {
        model.learn_predict(data.row(i), data.label(i), 0.01, &mut out);
    }
    let mut p = [0.0; 2];
    let mut graded = 0;
    for i in 0..data.len() {
        let x = data.row(i);
        for learner in model.members() {
            learner.predict_proba(x, &mut p);
            let h = p[0] - p[1];
            assert!((h - learner.margin(x).clamp(-1.0, 1.0)).abs() < 1e-12);
            graded += usize::from(h.abs() < 1.0 && h != 0.0);
        }
    }
    assert!(graded > 0, "some hypotheses lie strictly inside (−1, 1)");
}

/// Any model behind online feature scaling honours the contract.
#[test]
fn scaled_models() {
    use streamboost::boost::binary::OsBoostConfig;
    use streamboost::scaling::{ScaledConfig, Scaling};
    for scaling in [Scaling::MinMax, Scaling::Standardize] {
        check_contract(
            &format!("scaled/{scaling:?}/perceptron"),
            &ModelConfig::Scaled(ScaledConfig {
                scaling,
                model: Box::new(ModelConfig::Perceptron(PerceptronConfig::default())),
            }),
        );
        check_contract_on(
            &format!("scaled/{scaling:?}/osboost"),
            &ModelConfig::Scaled(ScaledConfig {
                scaling,
                model: Box::new(ModelConfig::OsBoost(OsBoostConfig {
                    n_learners: 5,
                    ..OsBoostConfig::new(PerceptronConfig::default().into())
                })),
            }),
            &synth::mixed_binary(600, 0.05, 0.1, 11),
            &synth::mixed_binary(3000, 0.0, 0.0, 4),
        );
    }
}

#[test]
fn rankers_as_classifiers() {
    // The singleton reduction: a multiclass row is the label set {y}.
    use streamboost::boost::ranking::{AdaOlmrConfig, OnlineBmrConfig, RankingLoss};
    for loss in [RankingLoss::Hinge, RankingLoss::Rank] {
        check_contract(
            &format!("bmr-{loss:?}"),
            &OnlineBmrConfig {
                n_learners: 10,
                loss,
                ..OnlineBmrConfig::new(HoeffdingTreeConfig::jgt_paper())
            },
        );
    }
    check_contract(
        "ada-olmr",
        &AdaOlmrConfig {
            n_learners: 10,
            ..AdaOlmrConfig::new(HoeffdingTreeConfig::jgt_paper())
        },
    );
}

/// An algorithm of the catalogue at its defaults, with `n` learners if it is a booster, and
/// 15 rounds of 5-leaf trees if it is trained in batch.
pub fn catalogue_config(algorithm: Algorithm, n: usize) -> ModelConfig {
    if algorithm.capabilities().role == Role::Batch {
        let partial =
            serde_json::json!({"algorithm": algorithm.name(), "rounds": 15, "max_leaves": 5});
        return ModelConfig::from_json(partial).unwrap();
    }
    let mut config = algorithm.default_config();
    if algorithm.is_booster() {
        assert!(
            config.tune(&Knob::Learners(n)),
            "{algorithm} has a learner count"
        );
    }
    config
}

/// A model of `config` ready for `data`: built with `seed` for an online algorithm, trained
/// on `data` for a batch one.
pub fn ready(config: &ModelConfig, data: &Dataset, seed: u64) -> Model {
    match config.algorithm().capabilities().role {
        Role::Batch => config.train_batch(data, &mut |_| {}).unwrap(),
        Role::Single | Role::Booster => config.build(data.spec(), seed).unwrap(),
    }
}

/// The contract of a batch algorithm: trained on `data`, it scores every row with valid
/// probabilities (odd rows too), learning a row changes none of its predictions (the row is
/// counted), training is deterministic, its ensemble has a summary, and it has learnt the
/// synthetic rule (trained on 2,000 clean rows, right on most of 1,000 others).
fn check_batch_contract(name: &str, config: &ModelConfig) {
    let data = synth::mixed(600, 0.05, 0.1, 11);
    let k = data.spec().n_classes();
    let mut model = ready(config, &data, 0);
    let before = serde_json::to_string(&model).unwrap();
    let (mut p, mut q) = (vec![0.0; k], vec![0.0; k]);
    for i in 0..data.len() {
        model.predict_proba(data.row(i), &mut p);
        assert_valid_proba(&p, name);
        model.learn_predict(data.row(i), data.label(i), 1.0, &mut q);
        assert_eq!(p, q, "{name}: learning a row changed the model");
    }
    let Model::BatchBoost(batch) = &model else {
        panic!("{name}: a batch model");
    };
    assert_eq!(batch.rows_not_learnt(), data.len() as u64, "{name}");
    for row in [
        [f64::NAN; 5],
        [0.5, f64::INFINITY, f64::NEG_INFINITY, 17.0, 9.0],
    ] {
        model.predict_proba(&row, &mut p);
        assert_valid_proba(&p, name);
    }
    let again = serde_json::to_string(&ready(config, &data, 1)).unwrap();
    assert_eq!(before, again, "{name}: training is not deterministic");
    let summary = Structure::ensemble(&model).expect("a batch model is an ensemble");
    assert!(summary.members >= 2, "{name}: {summary:?}");
    assert_eq!(summary.rows_learnt, Some(data.len() as u64), "{name}");
    let clean = synth::mixed(3000, 0.0, 0.0, 4);
    let model = ready(config, &clean.slice(0..2000), 0);
    let right = (2000..clean.len())
        .filter(|&i| Some(model.predict(clean.row(i))) == clean.label(i))
        .count();
    assert!(right > 700, "{name}: {right} of 1000 test rows right");
}

/// Every algorithm of the catalogue, at its defaults: a new row is checked without being
/// listed here.
#[test]
fn every_algorithm_of_the_catalogue_honours_the_contract() {
    for &algorithm in Algorithm::ALL {
        let config = catalogue_config(algorithm, 5);
        let name = algorithm.name();
        if algorithm.capabilities().role == Role::Batch {
            check_batch_contract(name, &config);
            continue;
        }
        match algorithm.capabilities().learns {
            Learns::Binary => check_contract_on(
                name,
                &config,
                &synth::mixed_binary(600, 0.05, 0.1, 11),
                &synth::mixed_binary(3000, 0.0, 0.0, 4),
            ),
            Learns::Multiclass | Learns::Ranking => check_contract(name, &config),
        }
        // Every booster is an ensemble `inspect` can summarise; a single learner is not.
        let data = synth::mixed_binary(50, 0.0, 0.0, 1);
        let mut model = config.build(data.spec(), 1).unwrap();
        let mut p = [0.0; 2];
        (0..data.len())
            .for_each(|i| _ = model.learn_predict(data.row(i), data.label(i), 1.0, &mut p));
        let summary = Structure::ensemble(&model);
        assert_eq!(summary.is_some(), algorithm.is_booster(), "{name}");
        if let Some(s) = summary {
            assert!(s.members >= 2, "{name}: {s:?}");
            assert!(s.rows_learnt.is_none_or(|r| r == 50), "{name}: {s:?}");
        }
    }
}

/// A new class (`Classifier::add_class`), for every algorithm of the catalogue: the model
/// then has `k + 1` classes, valid probabilities over them, learns the new class, and grows
/// deterministically. A binary booster refuses, unchanged.
#[test]
fn every_algorithm_of_the_catalogue_grows_or_refuses_a_new_class() {
    let data = synth::mixed(1500, 0.1, 0.05, 11);
    let two = data.spec().first_classes(2).unwrap();
    for &algorithm in Algorithm::ALL {
        if algorithm.capabilities().role == Role::Batch {
            // Trained on two classes, it takes a third that nothing votes for.
            let two_classes = Dataset::from_parts(
                two.clone(),
                data.rows()[..300 * 5].to_vec(),
                (0..300).map(|i| data.label(i).filter(|&y| y < 2)).collect(),
            )
            .unwrap();
            let mut model = catalogue_config(algorithm, 4)
                .train_batch(&two_classes, &mut |_| {})
                .unwrap();
            model.add_class().unwrap();
            assert_eq!(model.n_classes(), 3, "{algorithm}");
            let mut p = vec![0.0; 3];
            for i in 300..data.len() {
                model.predict_proba(data.row(i), &mut p);
                assert_valid_proba(&p, algorithm.name());
                assert_eq!(p[2], 0.0, "{algorithm}");
            }
            continue;
        }
        if algorithm.capabilities().learns == Learns::Binary {
            let mut model = catalogue_config(algorithm, 4)
                .build(synth::mixed_binary(10, 0.0, 0.0, 1).spec(), 1)
                .unwrap();
            let before = serde_json::to_string(&model).unwrap();
            assert!(model.add_class().is_err(), "{algorithm}");
            assert_eq!(
                serde_json::to_string(&model).unwrap(),
                before,
                "{algorithm}"
            );
            continue;
        }
        // Class 2 is held back for the first 300 rows; the model starts with `spec`'s
        // classes and grows to three if it has two. Returns the outputs after row 300 and
        // how often class 2 was predicted right.
        let run = |spec: &StreamSpec| {
            let mut model = catalogue_config(algorithm, 4).build(spec, 1).unwrap();
            let mut p = vec![0.0; 3];
            let known = spec.n_classes();
            for i in (0..300).filter(|&i| data.label(i) != Some(2)) {
                model.learn_predict(data.row(i), data.label(i), 1.0, &mut p[..known]);
            }
            if known == 2 {
                model.add_class().unwrap();
            }
            assert_eq!(model.n_classes(), 3, "{algorithm}");
            let mut outputs = Vec::new();
            let mut hits = 0;
            for i in 300..data.len() {
                model.predict_proba(data.row(i), &mut p);
                assert_valid_proba(&p, algorithm.name());
                let predicted = model.learn_predict(data.row(i), data.label(i), 1.0, &mut p);
                hits += usize::from(predicted == 2 && data.label(i) == Some(2));
                outputs.push(p.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
            }
            (outputs, hits)
        };
        let (grown, hits) = run(&two);
        assert_eq!(grown, run(&two).0, "{algorithm}: growth is deterministic");
        // The new class is learnt, unless the model never predicts it even when it was
        // declared from the start.
        assert!(
            hits > 0 || run(data.spec()).1 == 0,
            "{algorithm} never predicts the new class"
        );
    }
}

/// The weak learners whose learning reads only the row's class (a tree, naive Bayes): grown
/// by a class they never met, they are the learner that had the class declared from the
/// start, bit for bit, from then on.
#[test]
fn a_grown_tree_or_naive_bayes_is_the_one_declared_with_the_class() {
    let data = synth::mixed(1200, 0.1, 0.05, 4);
    let k = data.spec().n_classes();
    let fewer = data.spec().first_classes(k - 1).unwrap();
    for config in [
        WeakLearnerConfig::from(HoeffdingTreeConfig::jgt_paper()),
        HoeffdingTreeConfig::default().into(),
        NaiveBayesConfig::default().into(),
    ] {
        let mut grown = config.build(&fewer, 3).unwrap();
        let mut declared = config.build(data.spec(), 3).unwrap();
        let (mut a, mut b) = (vec![0.0; k], vec![0.0; k]);
        let mut arrived = false;
        for i in 0..data.len() {
            let (x, y) = (data.row(i), data.label(i));
            if !arrived && y == Some(k - 1) {
                grown.add_class().unwrap();
                arrived = true;
            }
            if arrived {
                grown.learn_predict(x, y, 1.0, &mut a);
                declared.learn_predict(x, y, 1.0, &mut b);
                let bits = |p: &[f64]| p.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&a), bits(&b), "{config}, row {i}");
            } else {
                grown.learn(x, y.unwrap(), 1.0);
                declared.learn(x, y.unwrap(), 1.0);
            }
        }
        assert!(arrived);
    }
}
