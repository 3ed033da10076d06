//! What the harness-free benchmarks share: where the shared data sets are and how they are
//! read and ordered, and a catalogue config with some of its knobs set. Each benchmark uses
//! some of these.
#![allow(dead_code)]

use std::path::PathBuf;

use streamboost::boost::{Knob, Tune};
use streamboost::columnar::{Encodings, load_stream};
use streamboost::core::Dataset;
use streamboost::model::{Algorithm, ModelConfig};

/// The shared data sets: `$STREAMBOOST_DATASETS`, or `../shared/datasets` beside the crate.
pub fn shared() -> PathBuf {
    std::env::var_os("STREAMBOOST_DATASETS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/datasets"))
}

/// `algorithm`'s default config with `knobs` set (each must apply).
pub fn tuned(algorithm: Algorithm, knobs: &[Knob]) -> ModelConfig {
    let mut config = algorithm.default_config();
    for knob in knobs {
        assert!(config.tune(knob), "{algorithm} takes {knob:?}");
    }
    config
}

/// The benchmark's first argument that is not a flag, as a number of rows each set is cut to
/// (all rows without it).
pub fn row_cap() -> usize {
    std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .and_then(|a| a.parse().ok())
        .unwrap_or(usize::MAX)
}

/// The shared data sets `names` (`<name>/data.csv`), each missing one skipped with a note.
pub fn shared_sets(names: &[&str]) -> Vec<(String, Dataset)> {
    let mut sets = Vec::new();
    for name in names {
        let path = shared().join(name).join("data.csv");
        if !path.exists() {
            eprintln!("{} not found: skipped", path.display());
            continue;
        }
        let data = load_stream(&[path], "label", &Encodings::default()).expect("reads");
        sets.push((name.to_string(), data));
    }
    sets
}

/// The rows `0..cap` of a stream of `len` rows, in the order `--shuffle 1` takes them.
pub fn seeded_order(len: usize, cap: usize) -> Vec<usize> {
    let order =
        streamboost::runtime::replay::order(len, None, Some(1)).expect("a seed gives an order");
    order.into_iter().filter(|&i| i < cap).collect()
}
