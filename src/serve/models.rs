//! The models directory of `streamboost serve`: every model in it, opened as a live model.
//!
//! | entry | model |
//! |---|---|
//! | `NAME.parquet`, a file | a live model's checkpoint (as `run` and SQL live models write them) |
//! | `NAME.parquet/` or `NAME/`, a keyed checkpoint's directory | a live model, one per key |
//! | `NAME.json` | a fresh model's config, `{"config": {…}, "classes": […], "seed": 1}` as `streamboost sql --model` takes it; its checkpoint is `NAME.parquet`, made at its first commit (a directory if a client names a key) |
//!
//! A `NAME.json` beside an existing `NAME.parquet` must describe the model it holds (a
//! restart with the same files); one that does not is refused. What the checkpoints write
//! beside themselves (`NAME.parquet.lock`, `NAME.parquet.deltas/`), hidden entries (`.…`) and
//! other files are not models and are skipped. A model's name is its entry's name without the
//! extension, made of ASCII letters, digits, `_` and `-`: what a client names, never a path.
//! Two entries of one name are refused at start.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use datafusion::prelude::SessionContext;

use crate::runtime::KeyedStore;
use crate::runtime::live::CheckpointPolicy;
use crate::sql::ModelRegistry;
use crate::{Error, Result};

/// Whether `name` can name a model: ASCII letters, digits, `_` and `-`, at most 128 of them.
pub fn is_model_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 128
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// One model of the directory: its checkpoint's path and, for a fresh model, its config file.
#[derive(Debug, Default)]
struct Entry {
    checkpoint: Option<PathBuf>,
    config: Option<PathBuf>,
}

/// Opens every model of `dir` as a live model of `registry`, committed by `policy`'s
/// periods (its path is each model's own); `ctx` reads a config's classes from a
/// registered table. Returns the names, in order.
pub async fn open(
    dir: &Path, policy: &CheckpointPolicy, registry: &ModelRegistry, ctx: &SessionContext,
) -> Result<Vec<String>> {
    let io = |source| Error::Io {
        path: dir.to_path_buf(),
        source,
    };
    let mut entries: BTreeMap<String, Entry> = BTreeMap::new();
    for item in std::fs::read_dir(dir).map_err(io)? {
        let path = item.map_err(io)?.path();
        let Some(file_name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if file_name.starts_with('.') {
            continue;
        }
        let (stem, extension) = match file_name.rsplit_once('.') {
            Some((stem, extension)) => (stem, Some(extension)),
            None => (file_name, None),
        };
        let keyed = path.is_dir() && KeyedStore::is_keyed(&path);
        let (is_checkpoint, is_config) = match extension {
            Some("parquet") => (path.is_file() || keyed, false),
            Some("json") => (false, path.is_file()),
            None => (keyed, false),
            Some(_) => (false, false),
        };
        if !is_checkpoint && !is_config {
            continue;
        }
        if !is_model_name(stem) {
            return Err(Error::config(
                "models",
                format!(
                    "`{}`: a model's name is made of ASCII letters, digits, `_` and `-`",
                    path.display()
                ),
            ));
        }
        let entry = entries.entry(stem.to_string()).or_default();
        let slot = match is_checkpoint {
            true => &mut entry.checkpoint,
            false => &mut entry.config,
        };
        if let Some(other) = slot.replace(path.clone()) {
            return Err(Error::config(
                "models",
                format!(
                    "`{}` and `{}` both name model `{stem}`",
                    other.display(),
                    path.display()
                ),
            ));
        }
    }
    for (name, entry) in &entries {
        let path = match &entry.checkpoint {
            Some(path) => path.clone(),
            None => dir.join(format!("{name}.parquet")),
        };
        let fresh = match &entry.config {
            Some(config) => Some(crate::sql::sources::read_model_file(config, ctx).await?),
            None => None,
        };
        let policy = CheckpointPolicy {
            path,
            ..policy.clone()
        };
        registry.register_live(name, policy, fresh)?;
    }
    Ok(entries.into_keys().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_name_is_never_a_path() {
        for good in ["m", "nursery_2", "a-b", "M9"] {
            assert!(is_model_name(good), "{good}");
        }
        for bad in [
            "",
            "..",
            "../m",
            "a/b",
            "a\\b",
            "/etc/passwd",
            "m.parquet",
            "m n",
            "é",
        ] {
            assert!(!is_model_name(bad), "{bad}");
        }
        assert!(!is_model_name(&"m".repeat(129)));
    }
}
