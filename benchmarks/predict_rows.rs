// A harness-free benchmark: `main` is the whole of it.
#![allow(missing_docs)]

//! Scoring without learning: rows per second of `predict_proba` one row at a time against
//! `predict_proba_rows` (an ensemble's members in turn, each over a block of rows), beside
//! the prequential pass (predict, then learn) that trained the model, in the same process.
//! Each model learns the first half of each set (in the order `--shuffle 1` takes its rows)
//! and then scores all of it, a row at a time and together; the two must agree bit for bit.
//! Data sets from `$STREAMBOOST_DATASETS` (default `../shared/datasets`), those missing
//! skipped; a synthetic stream of 24 numeric features × 10 classes always runs.
//!
//! `cargo bench --bench predict_rows [-- ROWS]` (ROWS caps each set; default all).

use std::time::Instant;

use streamboost::boost::Knob;
use streamboost::eval::Prequential;
use streamboost::model::{Algorithm, ModelConfig};
use streamboost::{Classifier, Config};

#[path = "common.rs"]
mod common;
use common::{row_cap, seeded_order, shared_sets, tuned};

/// The models measured: the default model, and ensembles of other shapes.
fn models() -> Vec<(&'static str, ModelConfig)> {
    vec![
        ("default (`ova`)", Algorithm::Ova.default_config()),
        ("`ada-olm`", Algorithm::AdaOlm.default_config()),
        ("`mbbm`", Algorithm::Mbbm.default_config()),
        (
            "`oza-bag`, 100 trees",
            tuned(Algorithm::OzaBag, &[Knob::Learners(100)]),
        ),
    ]
}

/// The best of three timings of `f`, in seconds.
fn best_of_three(mut f: impl FnMut()) -> f64 {
    (0..3)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    let cap = row_cap();
    let mut sets = shared_sets(&["nursery", "pendigits", "optdigits", "satimage"]);
    sets.push((
        "synthetic 24 numeric × 10 classes".to_string(),
        streamboost::synth::gaussian_blobs(10_000, 24, 10, 3),
    ));
    println!(
        "| data | rows scored | model | learn + predict rows/s | predict, a row at a time rows/s | predict, rows together rows/s | together / a row at a time |"
    );
    println!("|---|---|---|---|---|---|---|");
    for (name, data) in &sets {
        let n = data.len().min(cap);
        let order = seeded_order(data.len(), n);
        let (train, _) = order.split_at(n / 2);
        let xs: Vec<&[f64]> = order.iter().map(|&i| data.row(i)).collect();
        for (label, config) in models() {
            let mut model = config.build(data.spec(), 1).expect("builds");
            let start = Instant::now();
            Prequential::default()
                .run(&mut model, data, Some(train), |_| {})
                .expect("runs");
            let learn_rate = train.len() as f64 / start.elapsed().as_secs_f64();
            let k = model.n_classes();
            let mut one = vec![0.0; xs.len() * k];
            let mut together = vec![0.0; xs.len() * k];
            let single = best_of_three(|| {
                for (x, out) in xs.iter().zip(one.chunks_exact_mut(k)) {
                    model.predict_proba(x, out);
                }
            });
            let batched = best_of_three(|| model.predict_proba_rows(&xs, &mut together));
            assert!(
                one.iter()
                    .zip(&together)
                    .all(|(a, b)| a.to_bits() == b.to_bits()),
                "{name}, {label}: rows together differ from a row at a time"
            );
            let rate = |seconds: f64| xs.len() as f64 / seconds;
            println!(
                "| {name} | {} | {label} | {learn_rate:.0} | {:.0} | {:.0} | {:.2}× |",
                xs.len(),
                rate(single),
                rate(batched),
                single / batched
            );
        }
    }
}
