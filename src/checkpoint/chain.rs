//! Incremental commits: a base checkpoint and the deltas written on it since.
//!
//! A live model commits often (every N rows, every minute), and a tree's nodes change only
//! where rows reached them. A [`Chain`] writes at each commit only the nodes whose values
//! changed since the chain's last file, found by comparing each node's
//! [`nodes::record_hash`] with the one it had then, beside the rest of the state in full
//! (the boosters' vectors and counters, the stream state: small beside the trees). Such a
//! *delta* is a checkpoint file of the same format, `<checkpoint>.deltas/000001.parquet`,
//! `000002.parquet`, …, whose node table holds the changed rows only; its
//! `streamboost.chain` metadata names its chain, its number, the checksum of the file
//! before it and every tree's node count. A new *base*, the whole model at `<checkpoint>`,
//! is written at the first commit of a chain, after [`ChainLimits::max_deltas`] deltas, and
//! when the deltas since the base add up to more bytes than the base, so that a restore
//! reads at most about twice the model. [`crate::checkpoint::load`] reads the base and its
//! deltas in order; `inspect` shows the chain.
//!
//! Streaming semantics:
//! * **Commit point.** Every file is written atomically (beside its target, flushed,
//!   renamed, the directory flushed): a delta is committed when it is renamed into place, a
//!   base likewise. A crash at any point leaves the last committed file and the chain before
//!   it whole.
//! * **A new base.** The deltas of the previous chain are removed after the new base is in
//!   place. A crash between the two leaves deltas of another chain: a reader ignores the
//!   files that do not name the base's chain, and the next writer removes them.
//! * **Damage.** A delta that names the base's chain but not the file before it (one of them
//!   edited, lost or reordered) is refused as corrupt, never read as an earlier state.
//! * **Restart.** [`load_chain`] gives the writer the chain it continues: its next commit
//!   is a delta on the same base.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::weak::hoeffding::arena::NodeRecord;
use crate::{Error, Result};

use super::nodes;

/// The metadata key of a file's place in its chain.
pub(super) const CHAIN_KEY: &str = "chain";

/// When a chain starts again from a new base.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChainLimits {
    /// Deltas written on one base before the next commit writes a new base.
    pub max_deltas: u32,
    /// A new base when the deltas since the base add up to more than this share of the
    /// base's bytes.
    pub max_delta_share: f64,
}

impl Default for ChainLimits {
    /// 16 deltas, as many bytes as the base: a restore reads at most about twice the model.
    fn default() -> Self {
        ChainLimits {
            max_deltas: 16,
            max_delta_share: 1.0,
        }
    }
}

/// A file's place in its chain, as its `streamboost.chain` metadata spells it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct Link {
    /// The chain: a random id drawn when its base is written.
    pub id: String,
    /// 0 for the base, then 1, 2, … for its deltas.
    pub seq: u32,
    /// A delta's: the checksum of the file before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// A delta's: each tree's node count once it is applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree_nodes: Option<Vec<u32>>,
}

impl Link {
    /// Reads a file's link from its `streamboost.*` entries (`None`: a file outside any
    /// chain, as a checkpoint saved once or by an older build is).
    pub fn of(path: &Path, kv: &HashMap<String, String>) -> Result<Option<Link>> {
        kv.get(CHAIN_KEY)
            .map(|text| {
                serde_json::from_str(text).map_err(|e| Error::CorruptCheckpoint {
                    file: path.to_path_buf(),
                    detail: format!("`streamboost.{CHAIN_KEY}`: {e}"),
                })
            })
            .transpose()
    }
}

/// The directory of `checkpoint`'s deltas.
pub fn deltas_dir(checkpoint: &Path) -> PathBuf {
    let mut name = checkpoint.file_name().unwrap_or_default().to_os_string();
    name.push(".deltas");
    checkpoint.with_file_name(name)
}

/// The file of delta `seq` of `checkpoint`.
pub fn delta_path(checkpoint: &Path, seq: u32) -> PathBuf {
    deltas_dir(checkpoint).join(format!("{seq:06}.parquet"))
}

/// What a writer knows of the chain it continues: enough to write the next delta.
#[derive(Debug, Clone)]
pub struct Chain {
    pub(super) link: Link,
    /// The checksum of the chain's last file.
    pub(super) last_digest: String,
    /// Per tree, per node: the hash of its record as the chain's files hold it.
    pub(super) hashes: Vec<Vec<u64>>,
    /// Bytes of the base.
    pub(super) base_bytes: u64,
    /// Bytes of the deltas since the base.
    pub(super) delta_bytes: u64,
}

/// What one commit wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Written {
    /// Bytes of the file written.
    pub bytes: u64,
    /// Whether it was a delta (else a base).
    pub delta: bool,
    /// Node rows written.
    pub nodes: u64,
}

impl Chain {
    /// The chain's files so far: the base, then its deltas.
    pub fn files(&self) -> u32 {
        self.link.seq + 1
    }

    /// Whether the next commit writes a new base under `limits`.
    pub(super) fn wants_base(&self, limits: &ChainLimits) -> bool {
        self.link.seq >= limits.max_deltas
            || self.delta_bytes as f64 > limits.max_delta_share * self.base_bytes as f64
    }
}

/// Every node's hash, tree by tree (a chain read back: a writer's commit hashes as it
/// tabulates, [`nodes::hash_and_tabulate`]).
pub(super) fn hashes_of(trees: &[Vec<NodeRecord>]) -> Vec<Vec<u64>> {
    trees
        .iter()
        .map(|records| records.iter().map(nodes::record_hash).collect())
        .collect()
}

/// A fresh chain id: a writer's base must not share its id with the deltas of an earlier
/// chain left beside it (the time, the process and a counter make it unique to the writer).
pub(super) fn new_chain_id() -> String {
    use std::hash::Hasher;
    use std::sync::atomic::{AtomicU64, Ordering};
    static CHAINS: AtomicU64 = AtomicU64::new(0);
    let mut h = twox_hash::XxHash64::with_seed(0);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    h.write_u128(now.as_nanos());
    h.write_u32(std::process::id());
    h.write_u64(CHAINS.fetch_add(1, Ordering::Relaxed));
    format!("{:016x}", h.finish())
}

/// Removes the deltas of `checkpoint` from number `from` on (those of an earlier chain, or
/// a chain's files beyond the one a writer continues), and any partial file among them.
pub(super) fn remove_deltas_from(checkpoint: &Path, from: u32) -> Result<()> {
    let dir = deltas_dir(checkpoint);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Ok(());
    };
    let mut removed = false;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let stale = match name.strip_suffix(".parquet") {
            Some(seq) => seq.parse::<u32>().is_ok_and(|seq| seq >= from),
            None => name.ends_with(".partial"),
        };
        if stale {
            let path = entry.path();
            std::fs::remove_file(&path).map_err(|source| Error::Io { path, source })?;
            removed = true;
        }
    }
    if removed {
        crate::files::sync_dir(&dir)?;
    }
    Ok(())
}
