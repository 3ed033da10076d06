//! What the harness-free benchmarks share: where the shared data sets are, and a catalogue
//! config with some of its knobs set.

use std::path::PathBuf;

use streamboost::boost::{Knob, Tune};
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
