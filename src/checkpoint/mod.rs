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

pub mod nodes;

use std::collections::HashMap;
use std::fs::File;
use std::hash::Hasher;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

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

/// Saves `model` and its stream state to `path` atomically; returns what was written.
///
/// The trees' node arenas are taken out while the rest of the state is serialized and put
/// back before any I/O, so `model` is unchanged whether or not the write succeeds.
pub fn save(path: &Path, model: &mut Model, stream: &StreamState) -> Result<Metadata> {
    let (meta, table, props) = encode(model, stream);
    write_atomically(path, |file| write_table(path, file, &table, props))?;
    Ok(meta)
}

/// A checkpoint of `model` and `stream` in memory: the bytes [`save`] would write to a file,
/// which [`load_bytes`] reads.
pub(crate) fn to_bytes(model: &mut Model, stream: &StreamState) -> Result<Vec<u8>> {
    let (_, table, props) = encode(model, stream);
    let mut bytes = Vec::new();
    let mut writer = ArrowWriter::try_new(&mut bytes, table.schema(), Some(props))
        .map_err(|e| io_error(Path::new("(memory)"), e))?;
    writer
        .write(&table)
        .and_then(|()| writer.close().map(|_| ()))
        .map_err(|e| io_error(Path::new("(memory)"), e))?;
    Ok(bytes)
}

/// The metadata, node table and writer properties of a checkpoint of `model` and `stream`.
fn encode(model: &mut Model, stream: &StreamState) -> (Metadata, RecordBatch, WriterProperties) {
    let arenas: Vec<_> = model
        .trees_mut()
        .into_iter()
        .map(|t| t.take_nodes())
        .collect();
    let head = serde_json::to_string(&Head {
        model: &*model,
        stream,
    });
    let table = nodes::to_batch(&arenas, &stream.spec);
    for (tree, arena) in model.trees_mut().into_iter().zip(arenas) {
        tree.put_nodes(arena)
            .expect("a tree's own nodes form a tree");
    }
    let head = head.expect("models serialize");
    let mut hasher = XxHash64::with_seed(0);
    nodes::digest(&table, &mut hasher);
    hasher.write(head.as_bytes());
    let meta = Metadata::of(
        model,
        stream,
        table.num_rows(),
        format!("{:016x}", hasher.finish()),
    );
    let mut kv = meta.to_key_values();
    kv.push(KeyValue::new(format!("{KEY_PREFIX}state"), head));
    let props = WriterProperties::builder()
        // Zstandard at its fastest level: a quarter smaller than Snappy on the trees' floats
        // for about the same time (RESULTS.md, "Commits that cost what changed").
        .set_compression(Compression::ZSTD(
            ZstdLevel::try_new(1).expect("a valid level"),
        ))
        .set_dictionary_enabled(false)
        .set_statistics_enabled(EnabledStatistics::None)
        .set_key_value_metadata(Some(kv))
        .build();
    (meta, table, props)
}

fn write_table(
    path: &Path, file: File, table: &RecordBatch, props: WriterProperties,
) -> Result<()> {
    let mut writer =
        ArrowWriter::try_new(file, table.schema(), Some(props)).map_err(|e| io_error(path, e))?;
    writer.write(table).map_err(|e| io_error(path, e))?;
    writer.close().map_err(|e| io_error(path, e))?;
    Ok(())
}

/// Loads a checkpoint: the model, ready to continue, and its stream state.
pub fn load(path: &Path) -> Result<(Model, StreamState)> {
    files::without_panics(path, || load_checked(path))
}

/// Loads a checkpoint held in memory (one key's part of a keyed checkpoint's pack), checked
/// as [`load`] checks a file; errors name `path`.
pub(crate) fn load_bytes(path: &Path, bytes: Bytes) -> Result<(Model, StreamState)> {
    files::without_panics(path, || {
        let (meta, kv, builder) = open_bytes(path, bytes)?;
        decode(path, meta, kv, builder)
    })
}

fn load_checked(path: &Path) -> Result<(Model, StreamState)> {
    let (meta, kv, builder) = open(path)?;
    decode(path, meta, kv, builder)
}

/// The model and stream state of an opened checkpoint, checked against its checksum and
/// metadata.
fn decode<R: ChunkReader + 'static>(
    path: &Path, meta: Metadata, kv: HashMap<String, String>,
    builder: ParquetRecordBatchReaderBuilder<R>,
) -> Result<(Model, StreamState)> {
    let corrupt = |detail: String| Error::CorruptCheckpoint {
        file: path.to_path_buf(),
        detail,
    };
    let head_json = kv
        .get("state")
        .ok_or_else(|| corrupt("no `streamboost.state` in the metadata".into()))?;
    let schema = builder.schema().clone();
    nodes::check_schema(&schema).map_err(corrupt)?;
    let batches = builder
        .build()
        .map_err(|e| corrupt(e.to_string()))?
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| corrupt(format!("node table: {e}")))?;
    let table = concat_batches(&schema, &batches).map_err(|e| corrupt(e.to_string()))?;
    let mut hasher = XxHash64::with_seed(0);
    nodes::digest(&table, &mut hasher);
    hasher.write(head_json.as_bytes());
    let digest = format!("{:016x}", hasher.finish());
    // Under `--cfg fuzzing` a mismatch is let through, so that the fuzzer's mutations reach
    // the decoders behind the checksum rather than all stopping here.
    if digest != meta.digest && !cfg!(fuzzing) {
        return Err(corrupt(format!(
            "contents do not match their checksum ({digest} instead of {})",
            meta.digest
        )));
    }
    let head: Head<Model, StreamState> =
        serde_json::from_str(head_json).map_err(|e| corrupt(format!("state: {e}")))?;
    let (mut model, stream) = (head.model, head.stream);
    if model.n_classes() != stream.spec.n_classes() {
        return Err(corrupt("the model does not match its stream".into()));
    }
    // The metadata repeats what the checksummed state says; a field that disagrees was
    // edited or damaged after the write.
    let expected = Metadata::of(&model, &stream, table.num_rows(), meta.digest.clone());
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
            return Err(corrupt(format!(
                "metadata `{}` is {}, but the checksummed state says {}",
                f.key,
                f.value.as_deref().unwrap_or(""),
                e.value.as_deref().unwrap_or("")
            )));
        }
    }
    let n_trees = model.trees().len();
    let arenas = nodes::from_batch(&table, n_trees, &stream.spec).map_err(corrupt)?;
    for (i, (tree, arena)) in model.trees_mut().into_iter().zip(arenas).enumerate() {
        tree.put_nodes(arena)
            .map_err(|e| corrupt(format!("tree {i}: {e}")))?;
    }
    Ok((model, stream))
}

/// Reads what a checkpoint says of its stream (config, classes, label, encodings, counters,
/// position) without building its model. The checksum is not verified here: loading the
/// model does that.
pub fn read_stream_state(path: &Path) -> Result<StreamState> {
    files::without_panics(path, || {
        let (_, kv, _) = open(path)?;
        let head_json = kv.get("state").ok_or_else(|| Error::CorruptCheckpoint {
            file: path.to_path_buf(),
            detail: "no `streamboost.state` in the metadata".into(),
        })?;
        let head: Head<serde::de::IgnoredAny, StreamState> = serde_json::from_str(head_json)
            .map_err(|e| Error::CorruptCheckpoint {
                file: path.to_path_buf(),
                detail: format!("state: {e}"),
            })?;
        Ok(head.stream)
    })
}

/// Reads a checkpoint's metadata without loading the model.
pub fn read_metadata(path: &Path) -> Result<Metadata> {
    files::without_panics(path, || open(path).map(|(meta, _, _)| meta))
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
