// A harness-free benchmark: `main` is the whole of it.
#![allow(missing_docs)]

//! What a label delay costs, and what it must cost: elec2 (45,312 rows in time order) through
//! one model per line, in one process,
//!
//! * **test-then-train**: the prequential replay without delay, where a booster predicts and
//!   learns a row in one forward pass over its members, reusing their predictions;
//! * **predicted twice**: the same replay, but every row is first predicted by the model and
//!   then predicted and learnt, with no store and no delay — the work an exact delayed
//!   learner cannot avoid, since the model that learns a row later is not the one that
//!   predicted it and must predict it again;
//! * **delay N**: `replay --label-delay N`'s driver, with the pending store.
//!
//! Each line gives rows/s, the ratio to test-then-train and the ratio to "predicted twice":
//! the first is what a user pays, the second how close the delayed driver comes to the least
//! an exact algorithm can do.
//!
//! `cargo bench --bench delay_overhead [-- REPEATS]` (default 3; the median is reported).

use std::time::Instant;

use streamboost::boost::Knob;
use streamboost::columnar::{Encodings, load_stream};
use streamboost::core::{ClassId, Dataset};
use streamboost::eval::Prequential;
use streamboost::model::{Algorithm, Model, ModelConfig};
use streamboost::runtime::delay::LabelDelay;
use streamboost::weak::HoeffdingTreeConfig;
use streamboost::{Classifier, Config, Result};

#[path = "common.rs"]
mod common;
use common::{shared, tuned};

/// A model that predicts every row once more before it predicts and learns it.
struct PredictedTwice(Model);

impl Classifier for PredictedTwice {
    fn n_classes(&self) -> usize {
        self.0.n_classes()
    }
    fn learn(&mut self, x: &[f64], y: ClassId, w: f64) {
        self.0.learn(x, y, w)
    }
    fn predict_proba(&self, x: &[f64], out: &mut [f64]) {
        self.0.predict_proba(x, out)
    }
    fn add_class(&mut self) -> Result<()> {
        self.0.add_class()
    }
    fn learn_predict(&mut self, x: &[f64], y: Option<ClassId>, w: f64, out: &mut [f64]) -> ClassId {
        self.0.predict_proba(x, out);
        self.0.learn_predict(x, y, w, out)
    }
}

/// Rows per second of one replay of `data` through `model` under `driver`, and its accuracy.
fn rate<M: Classifier>(model: &mut M, data: &Dataset, driver: &Prequential) -> (f64, f64) {
    let start = Instant::now();
    let report = driver.run(model, data, None, |_| {}).expect("runs");
    let seconds = start.elapsed().as_secs_f64();
    let accuracy = report.cumulative.accuracy.unwrap_or(f64::NAN);
    (data.len() as f64 / seconds, accuracy)
}

fn median(mut v: Vec<(f64, f64)>) -> (f64, f64) {
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    v[v.len() / 2]
}

fn main() {
    let repeats: usize = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .and_then(|a| a.parse().ok())
        .unwrap_or(3);
    let path = shared().join("elec2").join("data.csv");
    if !path.exists() {
        eprintln!("{} not found: nothing to measure", path.display());
        return;
    }
    let data = load_stream(&[path], "label", &Encodings::default()).expect("reads");
    let models: Vec<(&str, ModelConfig)> = vec![
        (
            "Oza, 10 default trees",
            tuned(
                Algorithm::Oza,
                &[
                    Knob::Learners(10),
                    Knob::Weak(HoeffdingTreeConfig::default().into()),
                ],
            ),
        ),
        (
            "Adaboost.OLM, 100 trees (defaults)",
            tuned(Algorithm::AdaOlm, &[Knob::Learners(100)]),
        ),
    ];
    println!(
        "| model | driver | rows/s | accuracy | against test-then-train | against predicted twice |"
    );
    println!("|---|---|---|---|---|---|");
    for (name, config) in &models {
        let fresh = || config.build(data.spec(), 1).expect("builds");
        let plain = Prequential::default();
        let (base, base_acc) = median(
            (0..repeats)
                .map(|_| rate(&mut fresh(), &data, &plain))
                .collect(),
        );
        let (twice, twice_acc) = median(
            (0..repeats)
                .map(|_| rate(&mut PredictedTwice(fresh()), &data, &plain))
                .collect(),
        );
        println!("| {name} | test-then-train | {base:.0} | {base_acc:.4} | 1.00 | |");
        println!(
            "| {name} | predicted twice | {twice:.0} | {twice_acc:.4} | {:.2} | 1.00 |",
            twice / base
        );
        for delay in [10u64, 100, 1000] {
            let delayed = Prequential {
                delay: Some(LabelDelay::Rows(delay)),
                ..Prequential::default()
            };
            let (r, acc) = median(
                (0..repeats)
                    .map(|_| rate(&mut fresh(), &data, &delayed))
                    .collect(),
            );
            println!(
                "| {name} | delay {delay} | {r:.0} | {acc:.4} | {:.2} | {:.2} |",
                r / base,
                r / twice
            );
        }
    }
}
