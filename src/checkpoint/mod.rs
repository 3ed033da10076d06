//! Checkpoints: a model's complete state in one Parquet file.
//!
//! * **Rows**: every tree as a table of nodes with their statistics ([`nodes`] documents the
//!   columns), so a checkpoint can be queried like any table
//!   (`SELECT depth, count(*) FROM 'model.parquet' GROUP BY depth`).
//! * **Key-value metadata** (`streamboost.*`): the format version and the oldest reader
//!   version that can read it, the crate version, the algorithm and its full config (JSON),
//!   a fingerprint of the feature schema and class set, rows seen, tree and node counts, a
//!   checksum of the node table's values, and `streamboost.state`: the rest of the state as
//!   JSON (booster vectors such as α and Hedge's weights, weight scales, counters, the RNG
//!   state, the stream's features with every category seen so far, the column encodings).
//!
//! Writes are atomic: the file is written beside the target as `<name>.<pid>-<n>.partial`
//! (unique per writer, so concurrent writers never share it), flushed to disk, then renamed
//! over the target, and the directory entry is flushed. A crash at any
//! point leaves the previous checkpoint intact. Loading checks, in order: that the file ends
//! with a Parquet footer (else [`Error::TruncatedCheckpoint`]); that the footer decodes and
//! names a format this build reads ([`Error::CheckpointVersion`]); that the node table's
//! values and the state match their checksum, that every metadata field derived from them
//! (algorithm, config, fingerprint, rows seen and learnt, tree and node counts) says what
//! they say, and that every tree's nodes form a valid tree ([`Error::CorruptCheckpoint`]).
//! [`read_metadata`] reads the footer alone and checks none of this; `inspect` loads too. Floats are stored exactly, so a loaded model continues
//! bit for bit where the saved one stopped.

pub mod chain;
pub mod nodes;

use std::collections::HashMap;
use std::fs::File;
use std::hash::Hasher;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use arrow::compute::concat_batches;
use arrow::record_batch::RecordBatch;
use bytes::Bytes;
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::reader::ChunkReader;
use serde::{Deserialize, Serialize};
use twox_hash::XxHash64;

use crate::Classifier;
use crate::core::{Encodings, FeatureKind, StreamSpec};
use crate::files::write_atomically;
use crate::model::{Model, ModelConfig};
use crate::runtime::OperatorStats;
use crate::runtime::Position;
use crate::runtime::delay::DelayedState;
use crate::{Error, Result, files};

pub use crate::files::{partial_files, partial_path};
pub use chain::{Chain, ChainLimits, Written};

use crate::weak::hoeffding::arena::NodeRecord;
use chain::{Link, delta_path, deltas_dir};

/// The format version this build writes.
pub const FORMAT_VERSION: u32 = 2;
/// The oldest format version this build reads.
pub const OLDEST_READABLE: u32 = 1;
/// The oldest reader that can read what this build writes (bumped only by a change that
/// older readers would misread).
pub const COMPATIBLE_FROM: u32 = 2;

const KEY_PREFIX: &str = "streamboost.";

/// What a model was doing: everything a checkpoint holds besides the model itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamState {
    /// The config the model was built from.
    pub config: ModelConfig,
    /// The stream's features (with every category seen so far) and class set.
    pub spec: StreamSpec,
    /// Column encodings the rows were read with.
    pub encodings: Encodings,
    /// The label column.
    pub label: String,
    /// Rows seen and learnt so far.
    pub stats: OperatorStats,
    /// How far a live model has taken its input (absent for a model saved by a replay or
    /// an operator outside a job).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<Position>,
    /// Under delayed labels, the events waiting for theirs (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delayed: Option<DelayedState>,
}

/// The body of `streamboost.state`.
#[derive(Serialize, Deserialize)]
struct Head<M, S> {
    model: M,
    stream: S,
}

/// The metadata of a checkpoint, as [`read_metadata`] reads it from the footer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Metadata {
    /// Format version of the file.
    pub format_version: u32,
    /// The oldest reader version that can read it.
    pub compatible_from: u32,
    /// The streamboost version that wrote it.
    pub crate_version: String,
    /// The algorithm.
    pub algorithm: String,
    /// The full config, as JSON.
    pub config: serde_json::Value,
    /// Fingerprint of the feature schema, class set and label column.
    pub fingerprint: String,
    /// Rows seen.
    pub rows_seen: u64,
    /// Rows learnt.
    pub rows_learnt: u64,
    /// Number of trees.
    pub trees: u64,
    /// Number of tree nodes (rows of the node table).
    pub nodes: u64,
    /// Checksum of the node table's values.
    pub digest: String,
}

/// The fingerprint of a stream: its feature names and kinds, class names and label column.
/// Categories are left out: they grow as a stream reveals new ones.
pub fn fingerprint(spec: &StreamSpec, label: &str) -> String {
    let features: Vec<(&str, bool)> = spec
        .features
        .iter()
        .map(|f| {
            (
                f.name.as_str(),
                matches!(f.kind, FeatureKind::Nominal { .. }),
            )
        })
        .collect();
    let canonical =
        serde_json::to_string(&(features, spec.classes.names(), label)).expect("names serialize");
    format!("{:016x}", XxHash64::oneshot(0, canonical.as_bytes()))
}

/// Saves `model` and its stream state to `path` atomically; returns what was written. The
/// file stands alone: deltas a live model left beside it are removed after it is written.
///
/// The trees' node arenas are taken out while the rest of the state is serialized and put
/// back before any I/O, so `model` is unchanged whether or not the write succeeds.
pub fn save(path: &Path, model: &mut Model, stream: &StreamState) -> Result<Metadata> {
    let (meta, table, props) = encode(model, stream);
    write_atomically(path, |file| {
        write_table(path, file, std::slice::from_ref(&table), props)
    })?;
    chain::remove_deltas_from(path, 1)?;
    Ok(meta)
}

/// Commits `model` to the chain at `path` ([`chain`]): a delta of the nodes that changed
/// since the chain's last file, or a new base when `chain` is `None` or `limits` ask for one.
/// `chain` is advanced only once the file is in place; after an error it still describes
/// the last committed file.
pub fn commit(
    path: &Path, model: &mut Model, stream: &StreamState, chain: &mut Option<Chain>,
    limits: &ChainLimits,
) -> Result<Written> {
    let (written, next) = prepare(path, model, stream, chain.as_ref(), limits).write()?;
    *chain = Some(next);
    Ok(written)
}

/// The first half of [`commit`]: what the next file of the chain at `path` holds, taken
/// from `model` and `stream` (the nodes that changed since `chain`'s last file, or all of
/// them), ready to be written by [`Prepared::write`] on any thread while the model goes on.
/// The nodes are hashed and the changed ones tabulated in one pass
/// ([`nodes::hash_and_tabulate`]), on all of the pool's threads on a thread of a pool of
/// several ([`crate::core::spread_here`]).
pub fn prepare(
    path: &Path, model: &mut Model, stream: &StreamState, chain: Option<&Chain>,
    limits: &ChainLimits,
) -> Prepared {
    let trees = take_trees(model);
    let total: usize = trees.iter().map(Vec::len).sum();
    let on = chain.filter(|c| !c.wants_base(limits));
    let (hashes, table) =
        nodes::hash_and_tabulate(&trees, on.map(|c| c.hashes.as_slice()), &stream.spec);
    let link = match on {
        Some(c) => Link {
            id: c.link.id.clone(),
            seq: c.link.seq + 1,
            parent: Some(c.last_digest.clone()),
            tree_nodes: Some(trees.iter().map(|t| t.len() as u32).collect()),
        },
        None => Link {
            id: chain::new_chain_id(),
            seq: 0,
            parent: None,
            tree_nodes: None,
        },
    };
    let (head, meta) = state_of(model, stream, total);
    put_trees(model, trees);
    let (base_bytes, delta_bytes) = match on {
        Some(c) => (c.base_bytes, c.delta_bytes),
        None => (0, 0),
    };
    Prepared {
        path: path.to_path_buf(),
        table,
        head,
        meta,
        link,
        hashes,
        base_bytes,
        delta_bytes,
    }
}

/// A commit taken from a model by [`prepare`], owning everything it writes: the model may
/// learn on while another thread writes it.
#[derive(Debug)]
pub struct Prepared {
    /// The checkpoint (the chain's base).
    path: PathBuf,
    /// The node table's rows, in parts (each written as a row group).
    table: Vec<RecordBatch>,
    /// `streamboost.state`.
    head: String,
    /// The metadata, its checksum still to be computed.
    meta: Metadata,
    link: Link,
    /// Every node's hash once this file is written.
    hashes: Vec<Vec<u64>>,
    /// The chain's base and delta bytes before this file.
    base_bytes: u64,
    delta_bytes: u64,
}

impl Prepared {
    /// Writes the file atomically (a new base then removes the deltas of the chain before
    /// it): what was written, and the chain it now ends.
    pub fn write(self) -> Result<(Written, Chain)> {
        let Prepared {
            path,
            table,
            head,
            mut meta,
            link,
            hashes,
            base_bytes,
            delta_bytes,
        } = self;
        let props = file_props(&table, head, &mut meta, Some(&link));
        let target = if link.seq == 0 {
            path.clone()
        } else {
            let dir = deltas_dir(&path);
            if !dir.is_dir() {
                std::fs::create_dir_all(&dir).map_err(|e| io_error(&dir, e))?;
                files::sync_dir(files::dir_of(&path))?;
            }
            delta_path(&path, link.seq)
        };
        write_atomically(&target, |file| write_table(&target, file, &table, props))?;
        let bytes = std::fs::metadata(&target)
            .map_err(|e| io_error(&target, e))?
            .len();
        let (base_bytes, delta_bytes) = match link.seq {
            0 => (bytes, 0),
            _ => (base_bytes, delta_bytes + bytes),
        };
        if link.seq == 0 {
            chain::remove_deltas_from(&path, 1)?;
        }
        let written = Written {
            bytes,
            delta: link.seq > 0,
            nodes: table.iter().map(|t| t.num_rows() as u64).sum(),
        };
        let chain = Chain {
            link,
            last_digest: meta.digest,
            hashes,
            base_bytes,
            delta_bytes,
        };
        Ok((written, chain))
    }
}

/// A checkpoint of `model` and `stream` in memory: the bytes [`save`] would write to a file,
/// which [`load_bytes`] reads (a keyed checkpoint's part, a pickled Python model).
pub fn to_bytes(model: &mut Model, stream: &StreamState) -> Result<Vec<u8>> {
    let (_, table, props) = encode(model, stream);
    let mut bytes = Vec::new();
    write_parts(&mut bytes, &[table], props).map_err(|e| io_error(Path::new("(memory)"), e))?;
    Ok(bytes)
}

/// The metadata, node table and writer properties of a checkpoint of `model` and `stream`
/// outside any chain.
fn encode(model: &mut Model, stream: &StreamState) -> (Metadata, RecordBatch, WriterProperties) {
    let trees = take_trees(model);
    let table = nodes::to_batch(&trees, &stream.spec);
    let (head, mut meta) = state_of(model, stream, table.num_rows());
    put_trees(model, trees);
    let props = file_props(std::slice::from_ref(&table), head, &mut meta, None);
    (meta, table, props)
}

/// The trees' node arenas, taken out of `model` (tree by tree) while the rest of its state
/// is serialized.
fn take_trees(model: &mut Model) -> Vec<Vec<NodeRecord>> {
    model
        .trees_mut()
        .into_iter()
        .map(|t| t.take_nodes())
        .collect()
}

/// Puts back what [`take_trees`] took.
fn put_trees(model: &mut Model, trees: Vec<Vec<NodeRecord>>) {
    for (tree, arena) in model.trees_mut().into_iter().zip(trees) {
        tree.put_own_nodes(arena);
    }
}

/// The rest of the state of `model` (its trees taken out) and `stream` as JSON
/// (`streamboost.state`), and the metadata of a model of `nodes` nodes, its checksum still
/// to be computed ([`file_props`]).
fn state_of(model: &Model, stream: &StreamState, nodes: usize) -> (String, Metadata) {
    let head = serde_json::to_string(&Head { model, stream }).expect("models serialize");
    (head, Metadata::of(model, stream, nodes, String::new()))
}

/// The writer properties of a file holding the node table `table` (in parts) and the state
/// `head`, at `link` in a chain if given; sets `meta`'s checksum, of both.
fn file_props(
    table: &[RecordBatch], head: String, meta: &mut Metadata, link: Option<&Link>,
) -> WriterProperties {
    let mut hasher = XxHash64::with_seed(0);
    nodes::digest(table, &mut hasher);
    hasher.write(head.as_bytes());
    meta.digest = format!("{:016x}", hasher.finish());
    let mut kv = meta.to_key_values();
    kv.push(KeyValue::new(format!("{KEY_PREFIX}state"), head));
    if let Some(link) = link {
        kv.push(KeyValue::new(
            format!("{KEY_PREFIX}{}", chain::CHAIN_KEY),
            serde_json::to_string(link).expect("links serialize"),
        ));
    }
    WriterProperties::builder()
        // Zstandard at its fastest level: a quarter smaller than Snappy on the trees' floats
        // for about the same time (RESULTS.md, "Commits that cost what changed").
        .set_compression(Compression::ZSTD(
            ZstdLevel::try_new(1).expect("a valid level"),
        ))
        .set_dictionary_enabled(false)
        .set_statistics_enabled(EnabledStatistics::None)
        .set_key_value_metadata(Some(kv))
        .build()
}

fn write_table(
    path: &Path, file: File, table: &[RecordBatch], props: WriterProperties,
) -> Result<()> {
    write_parts(file, table, props).map_err(|e| io_error(path, e))
}

/// Writes the node table's `parts` to `out` as one Parquet file, a row group per part.
fn write_parts<W: std::io::Write + Send>(
    out: W, parts: &[RecordBatch], props: WriterProperties,
) -> parquet::errors::Result<()> {
    let mut writer = ArrowWriter::try_new(out, nodes::schema(), Some(props))?;
    for part in parts {
        writer.write(part)?;
        writer.flush()?;
    }
    writer.close()?;
    Ok(())
}

/// Loads a checkpoint: the model, ready to continue, and its stream state (of a chain: its
/// base and deltas, in order).
pub fn load(path: &Path) -> Result<(Model, StreamState)> {
    files::without_panics(path, || {
        let (model, stream, _) = assemble(read_chain(path)?, false)?;
        Ok((model, stream))
    })
}

/// [`load`], with the [`Chain`] a writer continues (`None` for a file outside any chain).
pub fn load_chain(path: &Path) -> Result<(Model, StreamState, Option<Chain>)> {
    files::without_panics(path, || {
        let parts = read_chain(path)?;
        let last = parts.last().expect("a chain has its base");
        let (link, last_digest) = (last.link.clone(), last.meta.digest.clone());
        let base_bytes = parts[0].bytes;
        let delta_bytes = parts[1..].iter().map(|p| p.bytes).sum();
        let (model, stream, hashes) = assemble(parts, true)?;
        let chain = link.map(|link| Chain {
            link,
            last_digest,
            hashes: hashes.expect("asked for"),
            base_bytes,
            delta_bytes,
        });
        Ok((model, stream, chain))
    })
}

/// Loads a checkpoint held in memory (one key's part of a keyed checkpoint's pack, a pickled
/// Python model), checked as [`load`] checks a file; errors name `path`.
pub fn load_bytes(path: &Path, bytes: Bytes) -> Result<(Model, StreamState)> {
    files::without_panics(path, || {
        let len = bytes.len() as u64;
        let (meta, kv, builder) = open_bytes(path, bytes)?;
        let part = Part::read(path, meta, kv, builder, None, len)?;
        let (model, stream, _) = assemble(vec![part], false)?;
        Ok((model, stream))
    })
}

/// One file of a checkpoint, its contents checked against its checksum.
struct Part {
    path: std::path::PathBuf,
    meta: Metadata,
    head: String,
    table: RecordBatch,
    link: Option<Link>,
    bytes: u64,
}

impl Part {
    fn read<R: ChunkReader + 'static>(
        path: &Path, meta: Metadata, kv: HashMap<String, String>,
        builder: ParquetRecordBatchReaderBuilder<R>, link: Option<Link>, bytes: u64,
    ) -> Result<Part> {
        let corrupt = |detail: String| corrupt(path, detail);
        let head = kv
            .get("state")
            .ok_or_else(|| corrupt("no `streamboost.state` in the metadata".into()))?
            .clone();
        let schema = builder.schema().clone();
        nodes::check_schema(&schema).map_err(corrupt)?;
        let batches = builder
            .build()
            .map_err(|e| corrupt(e.to_string()))?
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| corrupt(format!("node table: {e}")))?;
        let table = concat_batches(&schema, &batches).map_err(|e| corrupt(e.to_string()))?;
        let mut hasher = XxHash64::with_seed(0);
        nodes::digest(std::slice::from_ref(&table), &mut hasher);
        hasher.write(head.as_bytes());
        let digest = format!("{:016x}", hasher.finish());
        // Under `--cfg fuzzing` a mismatch is let through, so that the fuzzer's mutations reach
        // the decoders behind the checksum rather than all stopping here.
        if digest != meta.digest && !cfg!(fuzzing) {
            return Err(corrupt(format!(
                "contents do not match their checksum ({digest} instead of {})",
                meta.digest
            )));
        }
        Ok(Part {
            path: path.to_path_buf(),
            meta,
            head,
            table,
            link,
            bytes,
        })
    }
}

/// A checkpoint file opened: its path, metadata, `streamboost.*` entries, node table reader,
/// place in a chain and size.
type Opened = (
    std::path::PathBuf,
    Metadata,
    HashMap<String, String>,
    ParquetRecordBatchReaderBuilder<File>,
    Option<Link>,
    u64,
);

/// Opens the files of the checkpoint at `path`: the base, then the deltas of its chain in
/// order, each checked to follow the one before it. Contents are not read.
fn open_chain(path: &Path) -> Result<Vec<Opened>> {
    let (meta, kv, builder) = open(path)?;
    let link = Link::of(path, &kv)?;
    let bytes = file_len(path)?;
    let mut files = vec![(path.to_path_buf(), meta, kv, builder, link.clone(), bytes)];
    let Some(base) = link else {
        return Ok(files);
    };
    for seq in 1.. {
        let file = delta_path(path, seq);
        if !file.is_file() {
            break;
        }
        let (meta, kv, builder) = open(&file)?;
        // A file of another chain (left by a crash after a new base was written): the
        // base's chain ends before it.
        let Some(link) = Link::of(&file, &kv)?.filter(|l| l.id == base.id) else {
            break;
        };
        let parent = &files.last().expect("the base").1.digest;
        if link.seq != seq || link.parent.as_ref() != Some(parent) || link.tree_nodes.is_none() {
            return Err(corrupt(
                &file,
                format!(
                    "delta {seq} of chain {} does not follow the file before it",
                    base.id
                ),
            ));
        }
        let bytes = file_len(&file)?;
        files.push((file, meta, kv, builder, Some(link), bytes));
    }
    // A delta of this chain beyond a missing one: what it commits cannot be read.
    let next = files.len() as u32;
    if let Ok(entries) = std::fs::read_dir(deltas_dir(path)) {
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(seq) = name
                .to_str()
                .and_then(|n| n.strip_suffix(".parquet"))
                .and_then(|n| n.parse::<u32>().ok())
                .filter(|&seq| seq > next)
            else {
                continue;
            };
            let ours = open(&entry.path())
                .ok()
                .and_then(|(_, kv, _)| Link::of(&entry.path(), &kv).ok().flatten())
                .is_some_and(|l| l.id == base.id);
            if ours {
                return Err(corrupt(
                    &entry.path(),
                    format!(
                        "delta {seq} of chain {} follows a missing delta {next}",
                        base.id
                    ),
                ));
            }
        }
    }
    Ok(files)
}

/// Reads and checks every file of the chain at `path`.
fn read_chain(path: &Path) -> Result<Vec<Part>> {
    open_chain(path)?
        .into_iter()
        .map(|(file, meta, kv, builder, link, bytes)| {
            Part::read(&file, meta, kv, builder, link, bytes)
        })
        .collect()
}

/// A model, its stream state, and (if asked for) every node's hash, tree by tree.
type Assembled = (Model, StreamState, Option<Vec<Vec<u64>>>);

/// The model and stream state of a chain's files (a base alone, or a base and its deltas),
/// checked against the last file's metadata; with every node's hash if `hashes`.
fn assemble(parts: Vec<Part>, hashes: bool) -> Result<Assembled> {
    let last = parts.last().expect("a chain has its base");
    let last_path = last.path.clone();
    let corrupt_last = |detail: String| corrupt(&last_path, detail);
    let head: Head<Model, StreamState> =
        serde_json::from_str(&last.head).map_err(|e| corrupt_last(format!("state: {e}")))?;
    let (mut model, stream) = (head.model, head.stream);
    if model.n_classes() != stream.spec.n_classes() {
        return Err(corrupt_last("the model does not match its stream".into()));
    }
    let total = match &last.link {
        Some(Link {
            tree_nodes: Some(counts),
            ..
        }) => counts.iter().map(|&n| n as usize).sum(),
        _ => last.table.num_rows(),
    };
    check_derived(&last_path, &last.meta, &model, &stream, total)?;
    let mut trees: Vec<Vec<NodeRecord>> = Vec::new();
    for part in &parts {
        let at = |detail: String| corrupt(&part.path, detail);
        let counts = part.link.as_ref().and_then(|l| l.tree_nodes.as_ref());
        if let Some(counts) = counts {
            trees.resize_with(counts.len(), Vec::new);
            for (records, &n) in trees.iter_mut().zip(counts) {
                records.truncate(n as usize);
            }
        }
        nodes::for_each_row(&part.table, &stream.spec, |r, t, id, record| {
            let row = |what: &str| format!("node table row {r}: {what}");
            if counts.is_none() && t as usize >= trees.len() {
                trees.resize_with(t as usize + 1, Vec::new);
            }
            let records = trees
                .get_mut(t as usize)
                .ok_or_else(|| row(&format!("tree {t} of {}", counts.map_or(0, Vec::len))))?;
            match (id as usize).cmp(&records.len()) {
                std::cmp::Ordering::Less if counts.is_some() => records[id as usize] = record,
                std::cmp::Ordering::Equal => records.push(record),
                _ => return Err(row("nodes out of order")),
            }
            Ok(())
        })
        .map_err(at)?;
        if let Some(counts) = counts
            && let Some(t) = (0..counts.len()).find(|&t| trees[t].len() != counts[t] as usize)
        {
            return Err(at(format!(
                "tree {t} has {} nodes of the {} the delta names",
                trees[t].len(),
                counts[t]
            )));
        }
    }
    let n_trees = model.trees().len();
    if trees.len() > n_trees {
        return Err(corrupt_last(format!(
            "nodes of {} trees for a model of {n_trees}",
            trees.len()
        )));
    }
    trees.resize_with(n_trees, Vec::new);
    let hashes = hashes.then(|| chain::hashes_of(&trees));
    for (i, (tree, arena)) in model.trees_mut().into_iter().zip(trees).enumerate() {
        tree.put_nodes(arena)
            .map_err(|e| corrupt_last(format!("tree {i}: {e}")))?;
    }
    Ok((model, stream, hashes))
}

/// Checks that the metadata fields derived from the state say what the checksummed state
/// says: one that disagrees was edited or damaged after the write.
fn check_derived(
    path: &Path, meta: &Metadata, model: &Model, stream: &StreamState, nodes: usize,
) -> Result<()> {
    let expected = Metadata::of(model, stream, nodes, meta.digest.clone());
    let expected_config = expected.config.clone();
    let (found, expected) = (meta.to_key_values(), expected.to_key_values());
    let derived = [
        "algorithm",
        "config",
        "fingerprint",
        "rows_seen",
        "rows_learnt",
        "trees",
        "nodes",
    ];
    for (f, e) in found.iter().zip(&expected) {
        let key = f.key.trim_start_matches(KEY_PREFIX);
        // A config is compared as the state reads it: one written before a parameter was
        // added lacks it, and takes the field's default (what it was built with).
        if key == "config" && config_as_read(&meta.config).as_ref() == Some(&expected_config) {
            continue;
        }
        if derived.contains(&key) && f.value != e.value {
            return Err(corrupt(
                path,
                format!(
                    "metadata `{}` is {}, but the checksummed state says {}",
                    f.key,
                    f.value.as_deref().unwrap_or(""),
                    e.value.as_deref().unwrap_or("")
                ),
            ));
        }
    }
    Ok(())
}

/// Reads what a checkpoint says of its stream (config, classes, label, encodings, counters,
/// position) without building its model: the last file of its chain's. The checksum is not
/// verified here: loading the model does that.
pub fn read_stream_state(path: &Path) -> Result<StreamState> {
    files::without_panics(path, || {
        let (file, _, kv, _, _, _) = open_chain(path)?.pop().expect("a chain has its base");
        let head_json = kv
            .get("state")
            .ok_or_else(|| corrupt(&file, "no `streamboost.state` in the metadata".into()))?;
        let head: Head<serde::de::IgnoredAny, StreamState> =
            serde_json::from_str(head_json).map_err(|e| corrupt(&file, format!("state: {e}")))?;
        Ok(head.stream)
    })
}

/// Reads a checkpoint's metadata without loading the model (of a chain: its last file's).
pub fn read_metadata(path: &Path) -> Result<Metadata> {
    files::without_panics(path, || {
        let (_, meta, ..) = open_chain(path)?.pop().expect("a chain has its base");
        Ok(meta)
    })
}

/// A checkpoint's files: the base, then the deltas of its chain, each with its size in
/// bytes and the rows of its node table ([`chain`]).
pub fn chain_files(path: &Path) -> Result<Vec<(std::path::PathBuf, u64, u64)>> {
    files::without_panics(path, || {
        Ok(open_chain(path)?
            .into_iter()
            .map(|(file, _, _, builder, _, bytes)| {
                let rows = builder.metadata().file_metadata().num_rows() as u64;
                (file, bytes, rows)
            })
            .collect())
    })
}

fn file_len(path: &Path) -> Result<u64> {
    std::fs::metadata(path)
        .map(|m| m.len())
        .map_err(|e| io_error(path, e))
}

fn corrupt(path: &Path, detail: String) -> Error {
    Error::CorruptCheckpoint {
        file: path.to_path_buf(),
        detail,
    }
}

impl Metadata {
    /// The metadata of `model` with `stream`'s state, a node table of `nodes` rows and
    /// checksum `digest`, as this build writes it.
    fn of(model: &Model, stream: &StreamState, nodes: usize, digest: String) -> Metadata {
        Metadata {
            format_version: FORMAT_VERSION,
            compatible_from: COMPATIBLE_FROM,
            crate_version: env!("CARGO_PKG_VERSION").to_string(),
            algorithm: model.algorithm().to_string(),
            config: serde_json::to_value(&stream.config).expect("configs serialize"),
            fingerprint: fingerprint(&stream.spec, &stream.label),
            rows_seen: stream.stats.rows_seen,
            rows_learnt: stream.stats.rows_learnt,
            trees: model.trees().len() as u64,
            nodes: nodes as u64,
            digest,
        }
    }

    fn to_key_values(&self) -> Vec<KeyValue> {
        let entries = [
            ("format_version", self.format_version.to_string()),
            ("compatible_from", self.compatible_from.to_string()),
            ("crate_version", self.crate_version.clone()),
            ("algorithm", self.algorithm.clone()),
            ("config", self.config.to_string()),
            ("fingerprint", self.fingerprint.clone()),
            ("rows_seen", self.rows_seen.to_string()),
            ("rows_learnt", self.rows_learnt.to_string()),
            ("trees", self.trees.to_string()),
            ("nodes", self.nodes.to_string()),
            ("digest", self.digest.clone()),
        ];
        entries
            .into_iter()
            .map(|(k, v)| KeyValue::new(format!("{KEY_PREFIX}{k}"), v))
            .collect()
    }

    fn from_key_values(path: &Path, kv: &HashMap<String, String>) -> Result<Metadata> {
        let corrupt = |detail: String| Error::CorruptCheckpoint {
            file: path.to_path_buf(),
            detail,
        };
        let text = |key: &str| {
            kv.get(key)
                .cloned()
                .ok_or_else(|| corrupt(format!("no `{KEY_PREFIX}{key}` in the metadata")))
        };
        let number = |key: &str| {
            let v = text(key)?;
            v.parse::<u64>()
                .map_err(|_| corrupt(format!("`{KEY_PREFIX}{key}` is `{v}`, not a count")))
        };
        let version = |key: &str| {
            number(key).and_then(|v| {
                u32::try_from(v).map_err(|_| corrupt(format!("`{KEY_PREFIX}{key}` is {v}")))
            })
        };
        Ok(Metadata {
            format_version: version("format_version")?,
            compatible_from: version("compatible_from")?,
            crate_version: text("crate_version")?,
            algorithm: text("algorithm")?,
            config: serde_json::from_str(&text("config")?)
                .map_err(|e| corrupt(format!("config: {e}")))?,
            fingerprint: text("fingerprint")?,
            rows_seen: number("rows_seen")?,
            rows_learnt: number("rows_learnt")?,
            trees: number("trees")?,
            nodes: number("nodes")?,
            digest: text("digest")?,
        })
    }
}

/// Opens a checkpoint: checks its footer and version, returns its metadata, its
/// `streamboost.*` entries (prefix stripped) and a reader of its node table.
fn open(
    path: &Path,
) -> Result<(
    Metadata,
    HashMap<String, String>,
    ParquetRecordBatchReaderBuilder<File>,
)> {
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut file = File::open(path).map_err(io)?;
    let len = file.metadata().map_err(io)?.len();
    let (mut head, mut tail) = ([0u8; 4], [0u8; 8]);
    if len >= 12 {
        file.read_exact(&mut head).map_err(io)?;
        file.seek(SeekFrom::End(-8)).map_err(io)?;
        file.read_exact(&mut tail).map_err(io)?;
        file.seek(SeekFrom::Start(0)).map_err(io)?;
    }
    check_footer(path, len, head, tail)?;
    open_parquet(path, file)
}

/// [`open`] for a checkpoint held in memory: one key's part of a keyed checkpoint's pack
/// (`path` names the pack in errors).
fn open_bytes(
    path: &Path, bytes: Bytes,
) -> Result<(
    Metadata,
    HashMap<String, String>,
    ParquetRecordBatchReaderBuilder<Bytes>,
)> {
    let len = bytes.len();
    let (mut head, mut tail) = ([0u8; 4], [0u8; 8]);
    if len >= 12 {
        head.copy_from_slice(&bytes[..4]);
        tail.copy_from_slice(&bytes[len - 8..]);
    }
    check_footer(path, len as u64, head, tail)?;
    open_parquet(path, bytes)
}

/// The footer, metadata and version checks of [`open`], over any Parquet reader.
fn open_parquet<R: ChunkReader + 'static>(
    path: &Path, reader: R,
) -> Result<(
    Metadata,
    HashMap<String, String>,
    ParquetRecordBatchReaderBuilder<R>,
)> {
    let builder =
        ParquetRecordBatchReaderBuilder::try_new_with_options(reader, files::parquet_options())
            .map_err(|e| Error::CorruptCheckpoint {
                file: path.to_path_buf(),
                detail: format!("unreadable footer: {e}"),
            })?;
    let kv: HashMap<String, String> = builder
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .into_iter()
        .flatten()
        .filter_map(|e| {
            let key = e.key.strip_prefix(KEY_PREFIX)?;
            Some((key.to_string(), e.value.clone()?))
        })
        .collect();
    if kv.is_empty() {
        return Err(Error::CorruptCheckpoint {
            file: path.to_path_buf(),
            detail:
                "a Parquet file, but not a streamboost checkpoint (no `streamboost.*` metadata)"
                    .into(),
        });
    }
    // The version is checked before anything else is interpreted.
    let meta = Metadata::from_key_values(path, &kv);
    let versions = (kv.get("format_version"), kv.get("compatible_from"));
    if let (Some(found), Some(needs)) = versions
        && let (Ok(found), Ok(needs)) = (found.parse::<u32>(), needs.parse::<u32>())
        && (needs > FORMAT_VERSION || found < OLDEST_READABLE)
    {
        return Err(Error::CheckpointVersion {
            file: path.to_path_buf(),
            found,
            needs,
            oldest: OLDEST_READABLE,
            newest: FORMAT_VERSION,
        });
    }
    Ok((meta?, kv, builder))
}

/// A Parquet file starts with `PAR1` and ends with the footer's length and `PAR1`; a file
/// cut short has lost its footer. `head` and `tail` are the first 4 and last 8 of the `len`
/// bytes (unread when `len` < 12).
fn check_footer(path: &Path, len: u64, head: [u8; 4], tail: [u8; 8]) -> Result<()> {
    let truncated = |detail: String| Error::TruncatedCheckpoint {
        file: path.to_path_buf(),
        detail,
    };
    if len < 12 {
        return Err(truncated(format!(
            "{len} bytes, less than any Parquet file"
        )));
    }
    if &head != b"PAR1" {
        return Err(Error::CorruptCheckpoint {
            file: path.to_path_buf(),
            detail: "not a Parquet file (no `PAR1` at its start)".into(),
        });
    }
    if &tail[4..] != b"PAR1" {
        return Err(truncated(format!(
            "{len} bytes and no Parquet footer at the end"
        )));
    }
    let footer = u64::from(u32::from_le_bytes(tail[..4].try_into().expect("4 bytes")));
    if footer + 12 > len {
        return Err(truncated(format!(
            "a footer of {footer} bytes in a file of {len}"
        )));
    }
    Ok(())
}

/// The error of an input that does not fit the stream of `checkpoint`, from the error of
/// reading it for that stream: a missing feature or label column, or
/// a column of another kind.
pub(crate) fn not_fitting(checkpoint: &Path, e: Error) -> Error {
    match e {
        Error::MissingColumn { ref file, .. } | Error::SchemaMismatch { ref file, .. } => {
            Error::CheckpointMismatch {
                file: checkpoint.to_path_buf(),
                input: file.clone(),
                detail: e.to_string(),
            }
        }
        e => e,
    }
}

fn io_error(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Io {
        path: path.to_path_buf(),
        source: std::io::Error::other(e.to_string()),
    }
}

/// The model config `json` as the checkpoint's state reads it today, written out again
/// (`None` if it does not read): a parameter it lacks takes its field default (the
/// behaviour before the parameter existed), not today's catalogue default.
fn config_as_read(json: &serde_json::Value) -> Option<serde_json::Value> {
    let config: crate::model::ModelConfig = serde_json::from_value(json.clone()).ok()?;
    serde_json::to_value(config).ok()
}
