// A harness-free benchmark: `main` is the whole of it.
#![allow(missing_docs)]

//! Nanoseconds per learner-row: one prequential pass (test, then train) of each model over
//! each data set in a seeded random order, its time divided by rows × learners, and as a
//! ratio against one default Hoeffding tree on the same rows in the same process. Data sets
//! from `$STREAMBOOST_DATASETS` (default `../shared/datasets`), those missing skipped; a
//! synthetic stream of 200 numeric features × 20 classes always runs.
//!
//! `cargo bench --bench learner_row [-- ROWS]` (ROWS caps each set; default all).

use std::time::Instant;

use streamboost::Config;
use streamboost::boost::Knob;
use streamboost::core::Dataset;
use streamboost::eval::Prequential;
use streamboost::model::{Algorithm, ModelConfig};
use streamboost::weak::{HoeffdingTreeConfig, Numerics, Structure};

#[path = "common.rs"]
mod common;
use common::{row_cap, seeded_order, shared_sets, tuned};

/// The models measured: name, config, learners.
fn models() -> Vec<(&'static str, ModelConfig, usize)> {
    let default_tree = || Knob::Weak(HoeffdingTreeConfig::default().into());
    let fast = |tree: HoeffdingTreeConfig| {
        Knob::Weak(
            HoeffdingTreeConfig {
                numerics: Numerics::Fast,
                ..tree
            }
            .into(),
        )
    };
    let paper_tree = || Knob::Weak(HoeffdingTreeConfig::jgt_paper().into());
    vec![
        (
            "one tree (`--algo hoeffding`)",
            Algorithm::Hoeffding.default_config(),
            1,
        ),
        (
            "Adaboost.OLM, 100 jgt-paper trees (defaults)",
            tuned(Algorithm::AdaOlm, &[Knob::Learners(100)]),
            100,
        ),
        (
            "Adaboost.OLM, 100 default trees",
            tuned(Algorithm::AdaOlm, &[Knob::Learners(100), default_tree()]),
            100,
        ),
        (
            "Oza, 10 default trees",
            tuned(Algorithm::Oza, &[Knob::Learners(10), default_tree()]),
            10,
        ),
        (
            "Adaboost.OLM, 100 jgt-paper trees (defaults), fast numerics",
            tuned(
                Algorithm::AdaOlm,
                &[
                    Knob::Learners(100),
                    fast(HoeffdingTreeConfig::jgt_paper_nba()),
                ],
            ),
            100,
        ),
        (
            "Adaboost.OLM, 100 jgt-paper trees, majority leaves",
            tuned(Algorithm::AdaOlm, &[Knob::Learners(100), paper_tree()]),
            100,
        ),
        (
            "Adaboost.OLM, 100 jgt-paper trees, majority leaves, fast numerics",
            tuned(
                Algorithm::AdaOlm,
                &[Knob::Learners(100), fast(HoeffdingTreeConfig::jgt_paper())],
            ),
            100,
        ),
    ]
}

/// Seconds of one prequential pass of `config` over `data` in `order`, its accuracy, and the
/// bytes the model holds on the heap at the end.
fn pass(config: &ModelConfig, data: &Dataset, order: &[usize]) -> (f64, f64, usize) {
    let mut model = config.build(data.spec(), 1).expect("builds");
    let start = Instant::now();
    let report = Prequential::default()
        .run(&mut model, data, Some(order), |_| {})
        .expect("runs");
    (
        start.elapsed().as_secs_f64(),
        report.cumulative.accuracy.unwrap_or(f64::NAN),
        model.heap_bytes(),
    )
}

fn main() {
    let cap = row_cap();
    let mut sets = shared_sets(&["nursery", "pendigits", "optdigits", "satimage"]);
    sets.push((
        "synthetic 200 numeric × 20 classes".to_string(),
        streamboost::synth::gaussian_blobs(5000, 200, 20, 3),
    ));
    println!(
        "| data | rows | model | ns per learner-row | against one tree | rows/s | accuracy | heap KB per learner |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for (name, data) in &sets {
        let n = data.len().min(cap);
        let order = seeded_order(data.len(), n);
        let mut baseline = None;
        for (model, config, learners) in models() {
            let (seconds, accuracy, bytes) = pass(&config, data, &order);
            let ns = seconds * 1e9 / (n * learners) as f64;
            let base = *baseline.get_or_insert(ns);
            println!(
                "| {name} | {n} | {model} | {ns:.0} | {:.2}× | {:.0} | {accuracy:.4} | {:.0} |",
                ns / base,
                n as f64 / seconds,
                bytes as f64 / 1024.0 / learners as f64
            );
        }
    }
}
