//! The checkpoint of a keyed model (one model per value of a key column): a directory of
//! packs, each holding many keys' checkpoints, and a manifest saying where each key's is.
//!
//! ```text
//! model.keys/
//!   manifest.json          what is committed: the config, the position, where every key is
//!   c000003.pack           the keys that learnt before commit 3, one checkpoint after another
//!   c000002.s41.pack       keys evicted from memory before commit 3 (a spill round)
//!   k000007.1.parquet      key 7's model as of commit 1 (format 1: a file per key)
//! ```
//!
//! **A pack is checkpoints end to end.** Each key's part of a pack is a whole single-model
//! checkpoint (a Parquet file, with its footer and checksum), and the manifest names its
//! file, offset and length: `dd`-ing those bytes out gives a file that `inspect`, `replay
//! --resume` and SQL read as any. A commit writes only the keys that learnt since the last
//! one, into one new pack; a spill round writes its evicted keys into one. A key is loaded
//! by reading its bytes alone. One file per commit or spill round, rather than one per key,
//! is what makes a million keys affordable: creating, flushing and deleting a file per key
//! took about a third of a spill-bound run's time, in the kernel (RESULTS.md, "Keyed models
//! within a memory budget").
//!
//! **Dead bytes are reclaimed.** A key's newer state makes its bytes in an older pack dead;
//! a pack no key points to is deleted after the commit that frees it, and a commit copies the
//! live parts of a pack more than half dead into its own pack (bytes as they are, without
//! decoding). After a commit every pack is at least half live, so the directory holds at
//! most about twice the committed state, plus the spill packs written since.
//!
//! **Atomic commits.** A commit's pack is a new file; the manifest, which alone says which
//! bytes are current, is then replaced atomically; files it no longer names are deleted
//! last. A crash at any point leaves the previous manifest and every file it names whole;
//! files of a commit that did not complete are deleted when the store is next opened.
//!
//! **Spilled keys.** A keyed model held within a memory budget writes the keys it evicts to
//! a spill pack, which the manifest does not name: loading such a key reads it back, and the
//! next commit makes its bytes there the key's committed state (flushing the pack first). A
//! crash before that commit leaves the spill packs unlisted, so the next open deletes them
//! and the keys restart from their committed state with the rest of the model: what they
//! learnt since is learnt again from the input, as for any key. A spill is as durable as a
//! commit, no more.
//!
//! **Formats.** Manifest format 2 (packs) is written; format 1 (a file per key) is read, and
//! its files stay in use until their keys learn again. A build that reads only format 1
//! refuses a format-2 manifest by its version rather than misreading a pack.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use serde::{Deserialize, Serialize};

use crate::checkpoint::{StreamState, load, load_bytes, to_bytes};
use crate::eval::DriftCounts;
use crate::files::{sync_dir, sync_file, write_atomically};
use crate::learner::Config;
use crate::model::Model;
use crate::runtime::Position;
use crate::{Error, Result};

/// The manifest's file name in a keyed checkpoint's directory.
pub const MANIFEST: &str = "manifest.json";
/// The manifest format this build writes (2: packs of keys).
const MANIFEST_VERSION: u32 = 2;
/// The oldest manifest format this build reads (1: a file per key).
const OLDEST_MANIFEST: u32 = 1;
/// A pack whose live bytes are less than this share of its size is copied into the next
/// commit's pack (its live parts) and deleted.
const COMPACT_BELOW: f64 = 0.5;

/// What a keyed checkpoint holds: its manifest, read at open and kept in step with each
/// commit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// The manifest format.
    pub format_version: u32,
    /// What a key's model starts as: its config, the stream's features and classes, label
    /// and encodings (with no rows seen).
    pub template: StreamState,
    /// The seed a key's fresh model is built with (the same for every key).
    pub seed: u64,
    /// How far the keyed model as a whole has taken its input (a job's file and row).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<Position>,
    /// Commits so far; the number in the names of the files each commit writes.
    pub commits: u64,
    /// The id the next new key gets.
    pub next_id: u64,
    /// Every committed key, in key order (the null key first).
    pub keys: Vec<KeyEntry>,
}

/// A committed key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KeyEntry {
    /// The key's value (`None`: the null key).
    pub key: Option<String>,
    /// The key's number, which names its files.
    pub id: u64,
    /// The file in the directory that holds its checkpoint.
    pub file: String,
    /// Where in `file` its checkpoint is, when `file` is a pack; absent when the whole file
    /// is the key's (format 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extent: Option<Extent>,
    /// Rows of this key seen.
    pub rows_seen: u64,
    /// Rows of this key learnt.
    pub rows_learnt: u64,
    /// The largest ordering value learnt, for a model trained through SQL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ts: Option<i64>,
    /// What this key's drift response has done (absent when nothing, and in manifests
    /// written before the counts were kept, whose keys count from their next commit).
    #[serde(flatten)]
    pub drift: DriftCounts,
}

/// A key's bytes in a pack.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Extent {
    /// The first byte's offset.
    pub offset: u64,
    /// The length in bytes.
    pub len: u64,
}

impl KeyEntry {
    /// Where the key's checkpoint is: its file, and the bytes in it for a pack.
    pub fn location(&self) -> String {
        match self.extent {
            Some(e) => format!("{} [{}, +{}]", self.file, e.offset, e.len),
            None => self.file.clone(),
        }
    }
}

/// Locks a keyed checkpoint shared by the live models of one keyed model. A panic while it
/// was held left the store as of its last complete commit (a commit restores it on error),
/// so a poisoned lock still guards a good store.
pub fn lock(store: &Mutex<KeyedStore>) -> MutexGuard<'_, KeyedStore> {
    store
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A keyed checkpoint directory, open for loading keys and committing them.
#[derive(Debug)]
pub struct KeyedStore {
    dir: PathBuf,
    manifest: Manifest,
    /// Key → index in `manifest.keys`.
    index: BTreeMap<Option<String>, usize>,
    /// Keys spilled since the last commit: their newest state, in a file the manifest does
    /// not name yet.
    spilled: BTreeMap<Option<String>, KeyEntry>,
    /// Spill files written since the store was opened (names them apart).
    spills: u64,
    /// The keys (and their estimated bytes) each live model using the store holds in
    /// memory, as it last reported them; by the id [`KeyedStore::new_user`] gave it.
    resident: BTreeMap<u64, (usize, usize)>,
    /// Ids given to the store's users so far.
    users: u64,
    /// Every file the manifest or a spill names: how many keys' states it holds and their
    /// bytes (a pack's dead bytes are its size less these).
    uses: HashMap<String, FileUse>,
    /// The committed keys' drift counts, summed: kept (set at open and at each commit) so
    /// that a job's progress events, one a batch, need not walk every key's entry.
    drift: DriftCounts,
}

/// What of a file is in use.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct FileUse {
    keys: u64,
    bytes: u64,
}

impl KeyedStore {
    /// Whether `path` is a keyed checkpoint (a directory with a manifest).
    pub fn is_keyed(path: &Path) -> bool {
        path.join(MANIFEST).is_file()
    }

    /// Opens the keyed checkpoint at `dir`, deleting files left by a commit that did not
    /// complete.
    pub fn open(dir: &Path) -> Result<Self> {
        let store = Self::open_read_only(dir)?;
        store.remove_unlisted()?;
        Ok(store)
    }

    /// Opens the keyed checkpoint at `dir` to read it, changing nothing (another process
    /// may be committing to it).
    pub fn open_read_only(dir: &Path) -> Result<Self> {
        let path = dir.join(MANIFEST);
        let text = std::fs::read_to_string(&path).map_err(|source| Error::Io {
            path: path.clone(),
            source,
        })?;
        let corrupt = |detail: String| Error::CorruptCheckpoint {
            file: path.clone(),
            detail,
        };
        let manifest: Manifest =
            serde_json::from_str(&text).map_err(|e| corrupt(format!("manifest: {e}")))?;
        if !(OLDEST_MANIFEST..=MANIFEST_VERSION).contains(&manifest.format_version) {
            return Err(Error::CheckpointVersion {
                file: path.clone(),
                found: manifest.format_version,
                needs: manifest.format_version,
                oldest: OLDEST_MANIFEST,
                newest: MANIFEST_VERSION,
            });
        }
        let mut index = BTreeMap::new();
        for (i, entry) in manifest.keys.iter().enumerate() {
            if index.insert(entry.key.clone(), i).is_some() {
                return Err(corrupt(format!("key {:?} is listed twice", entry.key)));
            }
        }
        let uses = uses(&manifest.keys);
        let drift = manifest.keys.iter().map(|e| e.drift).sum();
        Ok(KeyedStore {
            dir: dir.to_path_buf(),
            drift,
            manifest,
            index,
            spilled: BTreeMap::new(),
            spills: 0,
            resident: BTreeMap::new(),
            users: 0,
            uses,
        })
    }

    /// Creates an empty keyed checkpoint at `dir` (made if missing; it must not hold a
    /// manifest already) whose keys start as models of `template` built with `seed`.
    pub fn create(dir: &Path, template: StreamState, seed: u64) -> Result<Self> {
        if Self::is_keyed(dir) {
            return Err(Error::config(
                "model",
                format!("`{}` already holds a keyed checkpoint", dir.display()),
            ));
        }
        std::fs::create_dir_all(dir).map_err(|source| Error::Io {
            path: dir.to_path_buf(),
            source,
        })?;
        let mut store = KeyedStore {
            dir: dir.to_path_buf(),
            manifest: Manifest {
                format_version: MANIFEST_VERSION,
                template: StreamState {
                    stats: Default::default(),
                    position: None,
                    ..template
                },
                seed,
                position: None,
                commits: 0,
                next_id: 1,
                keys: Vec::new(),
            },
            index: BTreeMap::new(),
            spilled: BTreeMap::new(),
            spills: 0,
            resident: BTreeMap::new(),
            users: 0,
            uses: HashMap::new(),
            drift: DriftCounts::default(),
        };
        store.write_manifest()?;
        Ok(store)
    }

    /// The manifest as of the last commit.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// The model a new key starts as, and its stream state.
    pub fn fresh(&self) -> Result<(Model, StreamState)> {
        let template = &self.manifest.template;
        let model = template.config.build(&template.spec, self.manifest.seed)?;
        Ok((model, template.clone()))
    }

    /// The model of `key`: its committed one, else a fresh one.
    pub fn load_or_fresh(&self, key: Option<&str>) -> Result<(Model, StreamState)> {
        match self.load(key)? {
            Some(state) => Ok(state),
            None => self.fresh(),
        }
    }

    /// What the drift responses of every committed key have done, as of the last commit.
    pub fn drift(&self) -> DriftCounts {
        self.drift
    }

    /// Rows seen and learnt over every committed key.
    pub fn rows(&self) -> (u64, u64) {
        (self.manifest.keys.iter()).fold((0, 0), |(s, l), e| (s + e.rows_seen, l + e.rows_learnt))
    }

    /// The newest model of `key`, if it has one: spilled since the last commit, else
    /// committed; read from its file (checked as [`crate::checkpoint::load`] checks any).
    pub fn load(&self, key: Option<&str>) -> Result<Option<(Model, StreamState)>> {
        let key = key.map(str::to_string);
        let entry = match self.spilled.get(&key) {
            Some(entry) => entry,
            None => match self.index.get(&key) {
                Some(&i) => &self.manifest.keys[i],
                None => return Ok(None),
            },
        };
        let path = self.dir.join(&entry.file);
        let Some(extent) = entry.extent else {
            return load(&path).map(Some);
        };
        let bytes = read_extent(&path, extent, &key)?;
        load_bytes(&path, bytes.into())
            .map(Some)
            .map_err(|e| in_pack(e, &key, extent))
    }

    /// Keys spilled since the last commit (their state is newer than the manifest's).
    pub fn spilled_keys(&self) -> usize {
        self.spilled.len()
    }

    /// An id for a live model that will use the store, to report what it holds in memory.
    pub fn new_user(&mut self) -> u64 {
        self.users += 1;
        self.users
    }

    /// Records that user `user` holds `keys` keys in memory, of `bytes` estimated bytes
    /// (between batches; `(0, 0)` once it has ended).
    pub fn report_resident(&mut self, user: u64, keys: usize, bytes: usize) {
        if (keys, bytes) == (0, 0) {
            self.resident.remove(&user);
        } else {
            self.resident.insert(user, (keys, bytes));
        }
    }

    /// Keys held in memory by the live models using the store, and their estimated bytes,
    /// as last reported (a key held by two is counted twice: each has its own operator).
    pub fn resident(&self) -> (usize, usize) {
        (self.resident.values()).fold((0, 0), |(k, b), &(keys, bytes)| (k + keys, b + bytes))
    }

    /// Writes the models of keys evicted from memory to a spill pack that
    /// [`KeyedStore::load`] reads and the next commit makes part of the committed state (see
    /// the module doc), encoded on as many threads as the machine has cores. A spill pack no
    /// key points to any more is deleted. Spill packs are not flushed to disk (a crash
    /// discards them anyway); the commit that names them flushes them first.
    pub fn spill<'a>(
        &mut self, evicted: impl IntoIterator<Item = (Option<&'a str>, &'a mut Model, StreamState)>,
    ) -> Result<()> {
        let mut entries = Vec::new();
        let mut states = Vec::new();
        for (key, model, stream) in evicted {
            let owned = key.map(str::to_string);
            let id = match (self.spilled.get(&owned), self.index.get(&owned)) {
                (Some(entry), _) => entry.id,
                (None, Some(&i)) => self.manifest.keys[i].id,
                (None, None) => self.new_id(),
            };
            entries.push(KeyEntry {
                key: owned,
                id,
                file: String::new(),
                extent: None,
                rows_seen: stream.stats.rows_seen,
                rows_learnt: stream.stats.rows_learnt,
                ts: stream.position.as_ref().and_then(|p| p.ts),
                drift: DriftCounts::of(&*model).unwrap_or_default(),
            });
            states.push((model, stream));
        }
        if entries.is_empty() {
            return Ok(());
        }
        self.spills += 1;
        let file = format!("c{:06}.s{}.pack", self.manifest.commits, self.spills);
        let extents = write_pack(&self.dir.join(&file), states, &[], false)?;
        for (mut entry, extent) in entries.into_iter().zip(extents) {
            entry.file = file.clone();
            entry.extent = Some(extent);
            use_file(&mut self.uses, &entry, 1);
            if let Some(old) = self.spilled.insert(entry.key.clone(), entry)
                && use_file(&mut self.uses, &old, -1) == 0
            {
                let _ = std::fs::remove_file(self.dir.join(&old.file));
            }
        }
        Ok(())
    }

    /// Commits `changed` (each key's model and stream state) and `position`: the keys, and
    /// the live parts of packs more than half dead, are written into one new pack, then the
    /// manifest is replaced, then the files it no longer names are deleted. Other keys stay
    /// where they are. On an error the manifest on disk, and this store, are as before.
    pub fn commit<'a>(
        &mut self,
        changed: impl IntoIterator<Item = (Option<&'a str>, &'a mut Model, StreamState)>,
        position: Option<Position>,
    ) -> Result<()> {
        let before = (self.manifest.clone(), self.index.clone(), self.uses.clone());
        let result = self.try_commit(changed, position);
        if result.is_err() {
            (self.manifest, self.index, self.uses) = before;
            // Files of the failed commit are unlisted; the next open deletes what this
            // cannot.
            let _ = self.remove_unlisted();
        }
        result
    }

    fn try_commit<'a>(
        &mut self,
        changed: impl IntoIterator<Item = (Option<&'a str>, &'a mut Model, StreamState)>,
        position: Option<Position>,
    ) -> Result<()> {
        let commit = self.manifest.commits + 1;
        let pack = format!("c{commit:06}.pack");
        let mut states = Vec::new();
        let mut learnt = Vec::new();
        let mut spilled = self.spilled.clone();
        for (key, model, stream) in changed {
            let owned = key.map(str::to_string);
            // Learnt since its spill: the spill is stale.
            let spill = spilled.remove(&owned);
            let i = self.entry(owned, spill.as_ref().map(|s| s.id));
            let entry = &mut self.manifest.keys[i];
            entry.rows_seen = stream.stats.rows_seen;
            entry.rows_learnt = stream.stats.rows_learnt;
            entry.ts = stream.position.as_ref().and_then(|p| p.ts);
            entry.drift = DriftCounts::of(&*model).unwrap_or_default();
            // Its extent in the new pack is known once the pack is written.
            entry.file = pack.clone();
            entry.extent = None;
            learnt.push(i);
            states.push((model, stream));
        }
        // Keys spilled and not loaded back since: their bytes in the spill packs become their
        // committed state.
        let mut promoted: Vec<String> = Vec::new();
        for (key, spill) in spilled {
            let i = self.entry(key, Some(spill.id));
            promoted.push(spill.file.clone());
            self.manifest.keys[i] = spill;
        }
        promoted.sort();
        promoted.dedup();
        // Packs mostly dead, by what the manifest now points to: their live parts are copied
        // into this commit's pack.
        let live = uses(&self.manifest.keys);
        let mut copied: Vec<(usize, PathBuf, Extent)> = Vec::new();
        let mut compacted = std::collections::HashSet::new();
        for (file, used) in &live {
            if *file == pack || !file.ends_with(".pack") {
                continue;
            }
            let path = self.dir.join(file);
            let size = std::fs::metadata(&path)
                .map_err(|source| Error::Io {
                    path: path.clone(),
                    source,
                })?
                .len();
            if (used.bytes as f64) < COMPACT_BELOW * size as f64 {
                compacted.insert(file.clone());
            }
        }
        for (i, entry) in self.manifest.keys.iter().enumerate() {
            if compacted.contains(&entry.file) {
                let extent = entry.extent.expect("a pack's entries have extents");
                copied.push((i, self.dir.join(&entry.file), extent));
            }
        }
        let copies: Vec<(&Path, Extent)> =
            copied.iter().map(|(_, p, e)| (p.as_path(), *e)).collect();
        let extents = match states.is_empty() && copies.is_empty() {
            true => Vec::new(),
            false => write_pack(&self.dir.join(&pack), states, &copies, true)?,
        };
        let targets = learnt
            .iter()
            .copied()
            .chain(copied.iter().map(|(i, ..)| *i));
        for (i, extent) in targets.zip(extents) {
            let entry = &mut self.manifest.keys[i];
            entry.file = pack.clone();
            entry.extent = Some(extent);
        }
        // Spill packs, flushed now that the manifest will name them.
        let paths: Vec<PathBuf> = (promoted.iter())
            .filter(|f| !compacted.contains(*f))
            .map(|f| self.dir.join(f))
            .collect();
        in_parallel(paths, |path| sync_file(&path))?;
        // The new files' directory entries reach the disk before the manifest naming them.
        sync_dir(&self.dir)?;
        self.manifest.format_version = MANIFEST_VERSION;
        self.manifest.commits = commit;
        if position.is_some() {
            self.manifest.position = position;
        }
        // Key order, so that the same keys give the same manifest whatever order they came in.
        self.manifest.keys.sort_by(|a, b| a.key.cmp(&b.key));
        self.index = (self.manifest.keys.iter().enumerate())
            .map(|(i, e)| (e.key.clone(), i))
            .collect();
        self.write_manifest()?;
        self.drift = self.manifest.keys.iter().map(|e| e.drift).sum();
        self.spilled.clear();
        let before = std::mem::replace(&mut self.uses, uses(&self.manifest.keys));
        for file in before.keys().filter(|f| !self.uses.contains_key(*f)) {
            let _ = std::fs::remove_file(self.dir.join(file));
        }
        Ok(())
    }

    /// The id the next new key gets, taken.
    fn new_id(&mut self) -> u64 {
        self.manifest.next_id += 1;
        self.manifest.next_id - 1
    }

    /// The index in the manifest of `key`'s entry, made (with id `id`, else a new one) if
    /// the key has none.
    fn entry(&mut self, key: Option<String>, id: Option<u64>) -> usize {
        if let Some(&i) = self.index.get(&key) {
            return i;
        }
        let id = id.unwrap_or_else(|| self.new_id());
        self.manifest.keys.push(KeyEntry {
            key: key.clone(),
            id,
            file: String::new(),
            extent: None,
            rows_seen: 0,
            rows_learnt: 0,
            ts: None,
            drift: DriftCounts::default(),
        });
        self.index.insert(key, self.manifest.keys.len() - 1);
        self.manifest.keys.len() - 1
    }

    fn write_manifest(&mut self) -> Result<()> {
        let text = serde_json::to_string_pretty(&self.manifest).expect("manifests serialize");
        write_atomically(&self.dir.join(MANIFEST), |mut file| {
            use std::io::Write;
            file.write_all(text.as_bytes()).map_err(|source| Error::Io {
                path: self.dir.join(MANIFEST),
                source,
            })
        })
    }

    /// Deletes the key files the manifest does not name (a commit cut short, whose files
    /// may exist whole or in part: a file is only read once a manifest names it), except
    /// this store's own spill files.
    fn remove_unlisted(&self) -> Result<()> {
        for path in self.unlisted()? {
            let _ = std::fs::remove_file(path);
        }
        Ok(())
    }

    /// The key files in the directory that neither the manifest nor this store's spills
    /// name: another process's spills since its last commit, or the files of a commit cut
    /// short (the next [`KeyedStore::open`] deletes them).
    pub fn unlisted(&self) -> Result<Vec<PathBuf>> {
        let listed: std::collections::HashSet<&str> = (self.manifest.keys.iter())
            .chain(self.spilled.values())
            .map(|e| e.file.as_str())
            .collect();
        let entries = std::fs::read_dir(&self.dir).map_err(|source| Error::Io {
            path: self.dir.clone(),
            source,
        })?;
        let unlisted = entries.flatten().filter(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let key_file = (name.starts_with('k') && name.contains(".parquet"))
                || (name.starts_with('c') && name.contains(".pack"));
            key_file && !listed.contains(name.as_str())
        });
        Ok(unlisted.map(|entry| entry.path()).collect())
    }
}

/// Each key's checkpoint in memory, encoded on as many threads as the machine has cores (a
/// commit of many keys is CPU-bound: encoding and compression; RESULTS.md), in order.
fn encode_all(states: Vec<(&mut Model, StreamState)>) -> Result<Vec<Vec<u8>>> {
    let slots: Vec<Mutex<Vec<u8>>> = states.iter().map(|_| Mutex::new(Vec::new())).collect();
    let work: Vec<_> = states.into_iter().zip(&slots).collect();
    in_parallel(work, |((model, stream), slot)| {
        *slot.lock().expect("one writer per slot") = to_bytes(model, &stream)?;
        Ok(())
    })?;
    Ok(slots
        .into_iter()
        .map(|slot| slot.into_inner().expect("one writer per slot"))
        .collect())
}

/// Keys encoded at a time while a pack is written: enough to keep every core busy, few
/// enough that a commit of many keys holds a group's bytes, not all of them.
const ENCODE_GROUP: usize = 256;

/// Writes a pack at `path` (a new file): the checkpoints of `states` (encoded a group at a
/// time), then the bytes of `copies` (a key's checkpoint in an older pack, copied as it
/// is), end to end; flushed to disk if `durable`. Returns each one's extent in the new pack,
/// in that order. On an error the file is removed.
fn write_pack(
    path: &Path, states: Vec<(&mut Model, StreamState)>, copies: &[(&Path, Extent)], durable: bool,
) -> Result<Vec<Extent>> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| Error::Io { path, source }
    };
    let write = || -> Result<Vec<Extent>> {
        let file = File::create(path).map_err(io(path))?;
        let mut out = BufWriter::with_capacity(1 << 20, file);
        let mut extents = Vec::with_capacity(states.len() + copies.len());
        let mut offset = 0;
        let mut states = states.into_iter().peekable();
        while states.peek().is_some() {
            let group: Vec<_> = states.by_ref().take(ENCODE_GROUP).collect();
            for bytes in encode_all(group)? {
                out.write_all(&bytes).map_err(io(path))?;
                extents.push(Extent {
                    offset,
                    len: bytes.len() as u64,
                });
                offset += bytes.len() as u64;
            }
        }
        let mut buffer = Vec::new();
        let mut open: Option<(&Path, File)> = None;
        for &(from, extent) in copies {
            if open.as_ref().is_none_or(|(p, _)| *p != from) {
                open = Some((from, File::open(from).map_err(io(from))?));
            }
            let (_, source) = open.as_mut().expect("opened above");
            buffer.resize(extent.len as usize, 0);
            source
                .seek(SeekFrom::Start(extent.offset))
                .and_then(|_| source.read_exact(&mut buffer))
                .map_err(io(from))?;
            out.write_all(&buffer).map_err(io(path))?;
            extents.push(Extent {
                offset,
                len: extent.len,
            });
            offset += extent.len;
        }
        let file = out.into_inner().map_err(|e| io(path)(e.into_error()))?;
        if durable {
            file.sync_all().map_err(io(path))?;
        }
        Ok(extents)
    };
    let written = write();
    if written.is_err() {
        let _ = std::fs::remove_file(path);
    }
    written
}

/// The bytes of `key`'s checkpoint at `extent` of the pack at `path`; a pack too short for
/// them is a truncated checkpoint.
fn read_extent(path: &Path, extent: Extent, key: &Option<String>) -> Result<Vec<u8>> {
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut file = File::open(path).map_err(io)?;
    let size = file.metadata().map_err(io)?.len();
    if extent.offset.saturating_add(extent.len) > size {
        return Err(Error::TruncatedCheckpoint {
            file: path.to_path_buf(),
            detail: format!(
                "key {key:?} is at bytes {}..{} of a file of {size}",
                extent.offset,
                extent.offset + extent.len
            ),
        });
    }
    let mut bytes = vec![0; extent.len as usize];
    file.seek(SeekFrom::Start(extent.offset))
        .and_then(|_| file.read_exact(&mut bytes))
        .map_err(io)?;
    Ok(bytes)
}

/// An error reading a key's checkpoint in a pack, saying which key and bytes.
fn in_pack(e: Error, key: &Option<String>, extent: Extent) -> Error {
    let at = |detail: String| {
        format!(
            "key {key:?} (bytes {}..{}): {detail}",
            extent.offset,
            extent.offset + extent.len
        )
    };
    match e {
        Error::CorruptCheckpoint { file, detail } => Error::CorruptCheckpoint {
            file,
            detail: at(detail),
        },
        Error::TruncatedCheckpoint { file, detail } => Error::TruncatedCheckpoint {
            file,
            detail: at(detail),
        },
        Error::Format { file, message } => Error::Format {
            file,
            message: at(message),
        },
        e => e,
    }
}

/// What of each file `entries` use.
fn uses(entries: &[KeyEntry]) -> HashMap<String, FileUse> {
    let mut uses = HashMap::new();
    for entry in entries.iter().filter(|e| !e.file.is_empty()) {
        use_file(&mut uses, entry, 1);
    }
    uses
}

/// Counts `entry`'s use of its file in (`sign` = 1) or out (-1); the keys left using it.
fn use_file(uses: &mut HashMap<String, FileUse>, entry: &KeyEntry, sign: i64) -> u64 {
    let bytes = entry.extent.map_or(0, |e| e.len);
    let used = uses.entry(entry.file.clone()).or_default();
    if sign > 0 {
        used.keys += 1;
        used.bytes += bytes;
    } else {
        used.keys -= 1;
        used.bytes -= bytes;
    }
    let keys = used.keys;
    if keys == 0 {
        uses.remove(&entry.file);
    }
    keys
}

/// `work` on every item, the items split over as many threads as the machine has cores; the
/// first error, if any.
fn in_parallel<T: Send>(items: Vec<T>, work: impl Fn(T) -> Result<()> + Sync) -> Result<()> {
    let threads = crate::core::cores();
    if threads == 1 || items.len() < 2 {
        return items.into_iter().try_for_each(work);
    }
    let per_thread = items.len().div_ceil(threads);
    let mut chunks: Vec<Vec<T>> = Vec::new();
    let mut items = items.into_iter().peekable();
    while items.peek().is_some() {
        chunks.push(items.by_ref().take(per_thread).collect());
    }
    let work = &work;
    std::thread::scope(|scope| {
        let handles: Vec<_> = (chunks.into_iter())
            .map(|chunk| scope.spawn(move || chunk.into_iter().try_for_each(work)))
            .collect();
        handles.into_iter().try_for_each(|h| {
            h.join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Classifier;
    use crate::core::Encodings;
    use crate::model::ModelConfig;
    use crate::runtime::OperatorStats;
    use crate::synth;

    /// A keyed store of three-learner Adaboost.OLM models over the synthetic mixed stream.
    fn store(dir: &Path) -> KeyedStore {
        let data = synth::mixed(10, 0.0, 0.0, 1);
        let config = ModelConfig::from_json(serde_json::json!({
            "algorithm": "ada-olm", "n_learners": 3
        }))
        .unwrap();
        let template = StreamState {
            config,
            spec: data.spec().clone(),
            encodings: Encodings::default(),
            label: "y".into(),
            stats: OperatorStats::default(),
            position: None,
            delayed: None,
        };
        KeyedStore::create(dir, template, 7).unwrap()
    }

    /// `key`'s model after learning `rows` rows of the mixed stream, and its stream state.
    /// A store in a new directory whose first commit holds key `a` after 40 rows.
    fn store_with_a() -> (tempfile::TempDir, KeyedStore) {
        let dir = tempfile::tempdir().unwrap();
        let mut s = store(dir.path());
        let (mut a, sa) = trained(&s, "a", 40);
        s.commit(vec![(Some("a"), &mut a, sa)], None).unwrap();
        (dir, s)
    }

    fn trained(store: &KeyedStore, key: &str, rows: usize) -> (Model, StreamState) {
        let (mut model, mut stream) = store.load_or_fresh(Some(key)).unwrap();
        let data = synth::mixed(rows, 0.1, 0.0, 2);
        let mut probs = vec![0.0; 3];
        for i in 0..data.len() {
            model.learn_predict(data.row(i), data.label(i), 1.0, &mut probs);
        }
        stream.stats.rows_seen += rows as u64;
        stream.stats.rows_learnt += rows as u64;
        (model, stream)
    }

    fn files(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_commit_writes_the_changed_keys_and_a_reopened_store_loads_them() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = store(dir.path());
        let (mut a, sa) = trained(&s, "a", 50);
        let (mut b, sb) = trained(&s, "b", 30);
        let (mut c, sc) = trained(&s, "c", 30);
        let changed = vec![
            (Some("a"), &mut a, sa.clone()),
            (Some("b"), &mut b, sb),
            (Some("c"), &mut c, sc),
        ];
        s.commit(changed, None).unwrap();
        assert_eq!(s.rows(), (110, 110));
        // Only `a` learns more: it goes to the new pack; `b` and `c` stay in the first.
        let (mut a2, sa2) = trained(&s, "a", 20);
        s.commit(vec![(Some("a"), &mut a2, sa2.clone())], None)
            .unwrap();
        assert_eq!(
            files(dir.path()),
            ["c000001.pack", "c000002.pack", MANIFEST]
        );
        let at = |key: &str| {
            let e = s
                .manifest()
                .keys
                .iter()
                .find(|e| e.key.as_deref() == Some(key));
            e.unwrap().location()
        };
        assert!(at("a").starts_with("c000002.pack [0, +"), "{}", at("a"));
        assert!(at("c").starts_with("c000001.pack ["), "{}", at("c"));
        let reopened = KeyedStore::open(dir.path()).unwrap();
        assert_eq!(reopened.manifest(), s.manifest());
        let (loaded, stream) = reopened.load(Some("a")).unwrap().unwrap();
        assert_eq!(
            serde_json::to_string(&loaded).unwrap(),
            serde_json::to_string(&a2).unwrap()
        );
        assert_eq!(stream, sa2);
        assert!(reopened.load(Some("d")).unwrap().is_none());
        let (fresh, _) = reopened.load_or_fresh(Some("d")).unwrap();
        let (expected, _) = store(tempfile::tempdir().unwrap().path()).fresh().unwrap();
        assert_eq!(
            serde_json::to_string(&fresh).unwrap(),
            serde_json::to_string(&expected).unwrap(),
            "a new key starts as the template's fresh model"
        );
    }

    #[test]
    fn files_of_a_commit_cut_short_are_not_read_and_are_removed_at_open() {
        let (dir, s) = store_with_a();
        let manifest = std::fs::read(dir.path().join(MANIFEST)).unwrap();
        // A crash after the next commit wrote its pack, before the manifest.
        let (mut a2, sa2) = trained(&s, "a", 10);
        write_pack(
            &dir.path().join("c000002.pack"),
            vec![(&mut a2, sa2)],
            &[],
            true,
        )
        .unwrap();
        std::fs::write(dir.path().join("c000002.s1.pack"), b"PAR1").unwrap();
        std::fs::write(dir.path().join("k000001.3.parquet.9-0.partial"), b"PAR1").unwrap();
        let reopened = KeyedStore::open(dir.path()).unwrap();
        assert_eq!(std::fs::read(dir.path().join(MANIFEST)).unwrap(), manifest);
        assert_eq!(files(dir.path()), ["c000001.pack", MANIFEST]);
        assert_eq!(reopened.rows(), (40, 40), "the last complete commit");
    }

    #[test]
    fn a_damaged_or_newer_manifest_is_refused_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        store(dir.path());
        let path = dir.path().join(MANIFEST);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, &text[..text.len() / 2]).unwrap();
        let err = KeyedStore::open(dir.path()).unwrap_err();
        assert!(matches!(err, Error::CorruptCheckpoint { .. }), "{err}");
        assert!(err.to_string().contains(MANIFEST), "{err}");
        let newer = text.replace("\"format_version\": 2", "\"format_version\": 9");
        assert_ne!(newer, text);
        std::fs::write(&path, newer).unwrap();
        let err = KeyedStore::open(dir.path()).unwrap_err();
        assert!(matches!(err, Error::CheckpointVersion { .. }), "{err}");
        assert!(KeyedStore::create(dir.path(), store_template(), 1).is_err());
    }

    #[test]
    fn a_spilled_key_loads_back_and_the_next_commit_makes_it_the_keys_file() {
        let (dir, mut s) = store_with_a();
        // `b`, never committed, is evicted, loaded back from its spill, learns more and is
        // evicted again with `a`, which learnt more too.
        let (mut b, sb) = trained(&s, "b", 5);
        s.spill(vec![(Some("b"), &mut b, sb)]).unwrap();
        let (mut b2, sb2) = trained(&s, "b", 5);
        let (mut a2, sa2) = trained(&s, "a", 10);
        s.spill(vec![
            (Some("a"), &mut a2, sa2.clone()),
            (Some("b"), &mut b2, sb2.clone()),
        ])
        .unwrap();
        assert_eq!(s.spilled_keys(), 2);
        assert_eq!(
            files(dir.path()),
            ["c000001.pack", "c000001.s2.pack", MANIFEST],
            "the spill pack no key points to any more is gone"
        );
        let as_text = |m: &Model| serde_json::to_string(m).unwrap();
        let (loaded, stream) = s.load(Some("a")).unwrap().unwrap();
        assert_eq!((as_text(&loaded), stream), (as_text(&a2), sa2.clone()));

        // A crash now: the spills are not committed, and the next open deletes them.
        let crashed = tempfile::tempdir().unwrap();
        for name in files(dir.path()) {
            std::fs::copy(dir.path().join(&name), crashed.path().join(&name)).unwrap();
        }
        let read_only = KeyedStore::open_read_only(crashed.path()).unwrap();
        assert_eq!(
            read_only.unlisted().unwrap().len(),
            1,
            "the spill pack, as inspect shows"
        );
        assert!(s.unlisted().unwrap().is_empty(), "the spilling store's own");
        let reopened = KeyedStore::open(crashed.path()).unwrap();
        assert_eq!(files(crashed.path()), ["c000001.pack", MANIFEST]);
        assert_eq!(reopened.rows(), (40, 40));
        assert!(reopened.load(Some("b")).unwrap().is_none());

        // A commit of nothing in memory promotes both spills, and frees the first pack.
        s.commit(Vec::new(), None).unwrap();
        assert_eq!(s.spilled_keys(), 0);
        assert_eq!(files(dir.path()), ["c000001.s2.pack", MANIFEST]);
        let reopened = KeyedStore::open(dir.path()).unwrap();
        assert_eq!(
            reopened.rows(),
            (60, 60),
            "a at 50 rows, b at 10 (5 before its spill)"
        );
        let (loaded, _) = reopened.load(Some("b")).unwrap().unwrap();
        assert_eq!(as_text(&loaded), as_text(&b2));
    }

    #[test]
    fn a_mostly_dead_pack_is_copied_into_the_next_commit_and_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = store(dir.path());
        let keys: Vec<String> = (0..10).map(|k| format!("k{k}")).collect();
        let mut models: Vec<(Model, StreamState)> =
            keys.iter().map(|k| trained(&s, k, 20)).collect();
        let changed =
            (keys.iter().zip(&mut models)).map(|(k, (m, st))| (Some(k.as_str()), m, st.clone()));
        s.commit(changed, None).unwrap();
        // One key of ten learns: the first pack is nine tenths live and stays.
        let (mut k0, s0) = trained(&s, "k0", 5);
        s.commit(vec![(Some("k0"), &mut k0, s0)], None).unwrap();
        assert_eq!(
            files(dir.path()),
            ["c000001.pack", "c000002.pack", MANIFEST]
        );
        // Six more learn: three tenths live, so the commit takes those three in and the
        // first pack goes.
        let mut learnt: Vec<(Model, StreamState)> =
            keys[1..7].iter().map(|k| trained(&s, k, 5)).collect();
        let changed = (keys[1..7].iter().zip(&mut learnt))
            .map(|(k, (m, st))| (Some(k.as_str()), m, st.clone()));
        s.commit(changed, None).unwrap();
        assert_eq!(
            files(dir.path()),
            ["c000002.pack", "c000003.pack", MANIFEST]
        );
        let reopened = KeyedStore::open(dir.path()).unwrap();
        let as_text = |m: &Model| serde_json::to_string(m).unwrap();
        for (k, (model, stream)) in keys[7..].iter().zip(&models[7..]) {
            let (loaded, loaded_stream) = reopened.load(Some(k)).unwrap().unwrap();
            assert_eq!(
                (as_text(&loaded), &loaded_stream),
                (as_text(model), stream),
                "{k}"
            );
        }
        assert_eq!(reopened.rows(), (10 * 20 + 7 * 5, 10 * 20 + 7 * 5));
    }

    #[test]
    fn a_format_1_directory_is_read_and_its_key_files_kept_until_their_keys_learn() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = store(dir.path());
        let (mut a, sa) = trained(&s, "a", 30);
        // A file per key and a format-1 manifest, as the previous format wrote them.
        crate::checkpoint::save(&dir.path().join("k000001.1.parquet"), &mut a, &sa).unwrap();
        s.manifest.format_version = 1;
        s.manifest.commits = 1;
        s.manifest.next_id = 2;
        s.manifest.keys.push(KeyEntry {
            key: Some("a".into()),
            id: 1,
            file: "k000001.1.parquet".into(),
            extent: None,
            rows_seen: 30,
            rows_learnt: 30,
            ts: None,
            drift: DriftCounts::default(),
        });
        s.write_manifest().unwrap();
        let text = std::fs::read_to_string(dir.path().join(MANIFEST)).unwrap();
        assert!(text.contains("\"format_version\": 1") && !text.contains("extent"));

        let mut s = KeyedStore::open(dir.path()).unwrap();
        let as_text = |m: &Model| serde_json::to_string(m).unwrap();
        let (loaded, _) = s.load(Some("a")).unwrap().unwrap();
        assert_eq!(as_text(&loaded), as_text(&a));
        let (mut b, sb) = trained(&s, "b", 10);
        s.commit(vec![(Some("b"), &mut b, sb)], None).unwrap();
        assert_eq!(s.manifest().format_version, MANIFEST_VERSION);
        assert_eq!(
            files(dir.path()),
            ["c000002.pack", "k000001.1.parquet", MANIFEST]
        );
        let (mut a2, sa2) = trained(&s, "a", 10);
        s.commit(vec![(Some("a"), &mut a2, sa2)], None).unwrap();
        assert_eq!(
            files(dir.path()),
            ["c000002.pack", "c000003.pack", MANIFEST]
        );
    }

    #[test]
    fn a_damaged_or_cut_pack_is_an_error_naming_the_pack_and_the_key() {
        let (dir, mut s) = store_with_a();
        let (mut b, sb) = trained(&s, "b", 30);
        s.commit(vec![(Some("b"), &mut b, sb)], None).unwrap();
        let pack = dir.path().join("c000002.pack");
        let mut bytes = std::fs::read(&pack).unwrap();
        let middle = bytes.len() / 2;
        for byte in &mut bytes[middle..middle + 64] {
            *byte ^= 0x5a;
        }
        std::fs::write(&pack, &bytes).unwrap();
        let err = s.load(Some("b")).unwrap_err();
        let text = err.to_string();
        assert!(
            matches!(err, Error::CorruptCheckpoint { .. } | Error::Format { .. }),
            "{err}"
        );
        assert!(
            text.contains("c000002.pack") && text.contains("key Some(\"b\")"),
            "{text}"
        );
        std::fs::write(&pack, &bytes[..middle]).unwrap();
        let err = s.load(Some("b")).unwrap_err();
        assert!(matches!(err, Error::TruncatedCheckpoint { .. }), "{err}");
        assert!(err.to_string().contains("c000002.pack"), "{err}");
        assert!(
            s.load(Some("a")).unwrap().is_some(),
            "another pack's key is whole"
        );
    }

    fn store_template() -> StreamState {
        let dir = tempfile::tempdir().unwrap();
        store(dir.path()).manifest().template.clone()
    }
}
