//! Locating the shared data sets and spec oracles.
//!
//! Data sets: `$STREAMBOOST_DATASETS`, default `../shared/datasets` beside the checkout.
//! Oracles: `$STREAMBOOST_ORACLES`, default `../shared/spec/oracles`. Where they are absent
//! (a fresh clone), the tests that need them print why and return.

use std::path::PathBuf;

fn shared(var: &str, default: &str) -> PathBuf {
    std::env::var_os(var).map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join(default)
    })
}

/// The path of a shared data set file, or `None` (with a note) if it is not there.
#[cfg(feature = "columnar")]
pub fn dataset(relative: &str) -> Option<PathBuf> {
    let path = shared("STREAMBOOST_DATASETS", "shared/datasets").join(relative);
    if path.exists() {
        Some(path)
    } else {
        eprintln!(
            "skipped: data set {} not found (set STREAMBOOST_DATASETS)",
            path.display()
        );
        None
    }
}

/// The path of a spec oracle file, or `None` (with a note) if it is not there.
pub fn oracle(name: &str) -> Option<PathBuf> {
    let path = shared("STREAMBOOST_ORACLES", "shared/spec/oracles").join(name);
    if path.exists() {
        Some(path)
    } else {
        eprintln!(
            "skipped: oracle {} not found (set STREAMBOOST_ORACLES)",
            path.display()
        );
        None
    }
}

/// Parses a JSON oracle.
pub fn oracle_json(name: &str) -> Option<serde_json::Value> {
    let path = oracle(name)?;
    Some(serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap())
}
