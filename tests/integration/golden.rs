//! Predictions recorded before a refactor, replayed after it: every algorithm the command
//! line builds (and a few of their options), each over a small seeded stream, must give the
//! same predictions to the bit. The configs are stored as the JSON the checkpoints and
//! reports hold, so the test does not depend on how configs are constructed in code.
//!
//! The fixture `tests/fixtures/golden_predictions.json` holds, per case, the config, the
//! stream it runs on, and an FNV-1a digest of every row's prediction and the bits of its
//! class probabilities (or label scores). Re-record it only for a change meant to change
//! predictions, and say so in the commit.

use serde::Deserialize;
use streamboost::core::Dataset;
use streamboost::model::{Algorithm, ModelConfig};
use streamboost::{Classifier, Config, Ranker, synth};

/// One recorded case.
#[derive(Deserialize)]
pub struct Case {
    /// What the case is, for messages.
    pub name: String,
    /// The stream: `multiclass`, `binary` or `multi-label`.
    pub stream: String,
    /// The model.
    pub config: serde_json::Value,
    /// The digest of the predictions.
    pub digest: String,
}

pub fn stream(name: &str) -> Dataset {
    match name {
        "multiclass" => synth::mixed(400, 0.05, 0.1, 5),
        "binary" => synth::mixed_binary(400, 0.05, 0.1, 5),
        "multi-label" => synth::mixed_multi_label(300, 0.05, 0.1, 5),
        other => panic!("unknown stream {other}"),
    }
}

/// FNV-1a over 64-bit words.
pub struct Digest(u64);

impl Digest {
    pub fn new() -> Self {
        Digest(0xcbf2_9ce4_8422_2325)
    }

    pub fn word(&mut self, w: u64) {
        for b in w.to_le_bytes() {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    pub fn hex(&self) -> String {
        format!("{:016x}", self.0)
    }
}

/// The digest of `config`'s test-then-train predictions over `data` (seed 7).
pub fn predictions_digest(config: &ModelConfig, data: &Dataset) -> String {
    let spec = data.spec();
    let mut model = config.build(spec, 7).unwrap();
    let mut out = vec![0.0; spec.n_classes()];
    let mut digest = Digest::new();
    for i in 0..data.len() {
        if spec.is_multi_label() {
            model.learn_predict_scores(data.row(i), data.label_set(i), 1.0, &mut out);
        } else {
            let predicted = model.learn_predict(data.row(i), data.label(i), 1.0, &mut out);
            digest.word(predicted as u64);
        }
        for p in &out {
            digest.word(p.to_bits());
        }
    }
    digest.hex()
}

fn cases() -> Vec<Case> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/golden_predictions.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn predictions_are_those_recorded_for_every_algorithm() {
    let cases = cases();
    let mut failed = Vec::new();
    for case in &cases {
        let config: ModelConfig = serde_json::from_value(case.config.clone())
            .unwrap_or_else(|e| panic!("{}: the recorded config no longer parses: {e}", case.name));
        let digest = predictions_digest(&config, &stream(&case.stream));
        if digest != case.digest {
            failed.push(format!(
                "{} ({}): {digest} != {}",
                case.name, case.stream, case.digest
            ));
        }
    }
    assert!(
        failed.is_empty(),
        "predictions changed:\n{}",
        failed.join("\n")
    );
    // The recording guards the algorithms that existed when it was made; a newer one is
    // tested through the catalogue (contract and checkpoint suites) and noted here.
    for algorithm in Algorithm::ALL {
        let covered = cases.iter().any(|c| {
            serde_json::from_value::<ModelConfig>(c.config.clone())
                .is_ok_and(|m| m.algorithm() == *algorithm)
        });
        if !covered {
            eprintln!("note: no recorded predictions for {algorithm}");
        }
    }
}
