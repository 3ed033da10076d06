//! The checkpoint of a keyed model (one model per value of a key column): a directory with
//! one checkpoint file per key, in the single-model format, and a manifest naming them.
//!
//! ```text
//! model.keys/
//!   manifest.json          what is committed: the config, the position, every key's file
//!   k000001.3.parquet      key 1's model as of commit 3 (a checkpoint like any other)
//!   k000002.1.parquet      key 2's model, unchanged since commit 1
//! ```
//!
//! **Why a directory and not one file with a key column.** A commit writes only the keys
//! that learnt since the last one: a stream of a million keys of which a thousand are active
//! commits a thousand small files, not the whole table. A key is loaded by reading its own
//! file, when it first appears, which is also what spilling a key out of memory and reading
//! it back needs. And every key's file is an ordinary checkpoint: `inspect`, `replay
//! --resume` and SQL read it as they read any. The price is one file per key on disk and
//! one `open` per key on load; measured in RESULTS.md ("Keyed live models").
//!
//! **Atomic commits.** A key's new state goes to a new file (`k<id>.<commit>.parquet`, never
//! an existing name); the manifest, which alone says which files are current, is then
//! replaced atomically; files it no longer names are deleted last. A crash at any point
//! leaves the previous manifest and every file it names whole; files of a commit that did
//! not complete are deleted when the store is next opened.
//!
//! **Spilled keys.** A keyed model held within a memory budget writes a key it evicts to a
//! spill file (`k<id>.<commit>.s<n>.parquet`), which the manifest does not name: loading the
//! key reads it back, and the next commit makes it the key's file. A crash before that
//! commit leaves the spill file unlisted, so the next open deletes it and the key restarts
//! from its committed file with the rest of the model: what it learnt since is learnt again
//! from the input, as for any key. A spill is as durable as a commit, no more.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use serde::{Deserialize, Serialize};

use super::{StreamState, load, save_new};
use crate::core::Position;
use crate::files::{sync_dir, sync_file, write_atomically};
use crate::learner::Config;
use crate::model::Model;
use crate::{Error, Result};

/// The manifest's file name in a keyed checkpoint's directory.
pub const MANIFEST: &str = "manifest.json";
/// The manifest format this build writes and reads.
const MANIFEST_VERSION: u32 = 1;

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
    /// Its checkpoint file, in the directory.
    pub file: String,
    /// Rows of this key seen.
    pub rows_seen: u64,
    /// Rows of this key learnt.
    pub rows_learnt: u64,
    /// The largest ordering value learnt, for a model trained through SQL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ts: Option<i64>,
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
        if manifest.format_version != MANIFEST_VERSION {
            return Err(Error::CheckpointVersion {
                file: path.clone(),
                found: manifest.format_version,
                needs: manifest.format_version,
                oldest: MANIFEST_VERSION,
                newest: MANIFEST_VERSION,
            });
        }
        let mut index = BTreeMap::new();
        for (i, entry) in manifest.keys.iter().enumerate() {
            if index.insert(entry.key.clone(), i).is_some() {
                return Err(corrupt(format!("key {:?} is listed twice", entry.key)));
            }
        }
        Ok(KeyedStore {
            dir: dir.to_path_buf(),
            manifest,
            index,
            spilled: BTreeMap::new(),
            spills: 0,
            resident: BTreeMap::new(),
            users: 0,
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

    /// Rows seen and learnt over every committed key.
    pub fn rows(&self) -> (u64, u64) {
        (self.manifest.keys.iter()).fold((0, 0), |(s, l), e| (s + e.rows_seen, l + e.rows_learnt))
    }

    /// The newest model of `key`, if it has one: spilled since the last commit, else
    /// committed; read from its file (checked as [`super::load`] checks any).
    pub fn load(&self, key: Option<&str>) -> Result<Option<(Model, StreamState)>> {
        let key = key.map(str::to_string);
        let entry = match self.spilled.get(&key) {
            Some(entry) => entry,
            None => match self.index.get(&key) {
                Some(&i) => &self.manifest.keys[i],
                None => return Ok(None),
            },
        };
        load(&self.dir.join(&entry.file)).map(Some)
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

    /// Writes the models of keys evicted from memory to spill files that
    /// [`KeyedStore::load`] reads and the next commit makes the keys' files (see the module
    /// doc), on as many threads as the machine has cores. A key's previous spill file, if
    /// any, is deleted once the new one is written. Spill files are not flushed to disk
    /// (a crash discards them anyway); the commit that names them flushes them first.
    pub fn spill<'a>(
        &mut self, evicted: impl IntoIterator<Item = (Option<&'a str>, &'a mut Model, StreamState)>,
    ) -> Result<()> {
        let mut entries = Vec::new();
        let mut writes = Vec::new();
        for (key, model, stream) in evicted {
            let owned = key.map(str::to_string);
            let id = match (self.spilled.get(&owned), self.index.get(&owned)) {
                (Some(entry), _) => entry.id,
                (None, Some(&i)) => self.manifest.keys[i].id,
                (None, None) => self.new_id(),
            };
            self.spills += 1;
            let file = format!(
                "k{id:06}.{}.s{}.parquet",
                self.manifest.commits, self.spills
            );
            entries.push(KeyEntry {
                key: owned,
                id,
                file: file.clone(),
                rows_seen: stream.stats.rows_seen,
                rows_learnt: stream.stats.rows_learnt,
                ts: stream.position.as_ref().and_then(|p| p.ts),
            });
            writes.push((self.dir.join(file), model, stream));
        }
        if let Err(e) = write_in_parallel(writes, false) {
            for entry in &entries {
                let _ = std::fs::remove_file(self.dir.join(&entry.file));
            }
            return Err(e);
        }
        for entry in entries {
            if let Some(old) = self.spilled.insert(entry.key.clone(), entry) {
                let _ = std::fs::remove_file(self.dir.join(old.file));
            }
        }
        Ok(())
    }

    /// Commits `changed` (each key's model and stream state) and `position`: each key is
    /// written to a new file, then the manifest is replaced, then the files it no longer
    /// names are deleted. Keys not in `changed` keep their files. On an error the manifest
    /// on disk, and this store, are as before.
    pub fn commit<'a>(
        &mut self,
        changed: impl IntoIterator<Item = (Option<&'a str>, &'a mut Model, StreamState)>,
        position: Option<Position>,
    ) -> Result<()> {
        let before = (self.manifest.clone(), self.index.clone());
        let result = self.try_commit(changed, position);
        if result.is_err() {
            (self.manifest, self.index) = before;
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
        let mut superseded = Vec::new();
        let mut writes = Vec::new();
        let mut spilled = self.spilled.clone();
        for (key, model, stream) in changed {
            let owned = key.map(str::to_string);
            // Learnt since its spill: the spill file is stale.
            let spill = spilled.remove(&owned);
            let i = self.entry(owned, spill.as_ref().map(|s| s.id));
            superseded.extend(spill.map(|s| s.file));
            let entry = &mut self.manifest.keys[i];
            let file = format!("k{:06}.{commit}.parquet", entry.id);
            entry.rows_seen = stream.stats.rows_seen;
            entry.rows_learnt = stream.stats.rows_learnt;
            entry.ts = stream.position.as_ref().and_then(|p| p.ts);
            writes.push((self.dir.join(&file), model, stream));
            if !entry.file.is_empty() {
                superseded.push(std::mem::replace(&mut entry.file, file));
            } else {
                entry.file = file;
            }
        }
        write_in_parallel(writes, true)?;
        // Keys spilled and not loaded back since: their spill files, flushed now, become
        // their files.
        let paths: Vec<PathBuf> = spilled.values().map(|s| self.dir.join(&s.file)).collect();
        in_parallel(paths, |path| sync_file(&path))?;
        for (key, spill) in spilled {
            let i = self.entry(key, Some(spill.id));
            let entry = &mut self.manifest.keys[i];
            if !entry.file.is_empty() {
                superseded.push(std::mem::take(&mut entry.file));
            }
            *entry = spill;
        }
        // The new files' directory entries reach the disk before the manifest naming them.
        sync_dir(&self.dir)?;
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
        self.spilled.clear();
        for file in superseded {
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
            rows_seen: 0,
            rows_learnt: 0,
            ts: None,
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
            let key_file = name.starts_with('k') && name.contains(".parquet");
            key_file && !listed.contains(name.as_str())
        });
        Ok(unlisted.map(|entry| entry.path()).collect())
    }
}

/// Writes each key's file (flushed to disk if `durable`), on as many threads as the machine
/// has cores (a commit of many keys is CPU-bound: encoding, compression and file creation;
/// RESULTS.md).
fn write_in_parallel(writes: Vec<(PathBuf, &mut Model, StreamState)>, durable: bool) -> Result<()> {
    in_parallel(writes, |(path, model, stream)| {
        save_new(&path, model, &stream, durable).map(|_| ())
    })
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
    use crate::core::{Encodings, OperatorStats};
    use crate::model::ModelConfig;
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
        let changed = vec![(Some("a"), &mut a, sa.clone()), (Some("b"), &mut b, sb)];
        s.commit(changed, None).unwrap();
        assert_eq!(s.rows(), (80, 80));
        // Only `a` learns more: `b` keeps its file, `a`'s old file goes.
        let (mut a2, sa2) = trained(&s, "a", 20);
        s.commit(vec![(Some("a"), &mut a2, sa2.clone())], None)
            .unwrap();
        assert_eq!(
            files(dir.path()),
            ["k000001.2.parquet", "k000002.1.parquet", MANIFEST]
        );
        let reopened = KeyedStore::open(dir.path()).unwrap();
        assert_eq!(reopened.manifest(), s.manifest());
        let (loaded, stream) = reopened.load(Some("a")).unwrap().unwrap();
        assert_eq!(
            serde_json::to_string(&loaded).unwrap(),
            serde_json::to_string(&a2).unwrap()
        );
        assert_eq!(stream, sa2);
        assert!(reopened.load(Some("c")).unwrap().is_none());
        let (fresh, _) = reopened.load_or_fresh(Some("c")).unwrap();
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
        // A crash after the next commit wrote its key file, before the manifest.
        let (mut a2, sa2) = trained(&s, "a", 10);
        save_new(&dir.path().join("k000001.2.parquet"), &mut a2, &sa2, true).unwrap();
        std::fs::write(dir.path().join("k000001.3.parquet.9-0.partial"), b"PAR1").unwrap();
        let reopened = KeyedStore::open(dir.path()).unwrap();
        assert_eq!(std::fs::read(dir.path().join(MANIFEST)).unwrap(), manifest);
        assert_eq!(files(dir.path()), ["k000001.1.parquet", MANIFEST]);
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
        let newer = text.replace("\"format_version\": 1", "\"format_version\": 9");
        std::fs::write(&path, newer).unwrap();
        let err = KeyedStore::open(dir.path()).unwrap_err();
        assert!(matches!(err, Error::CheckpointVersion { .. }), "{err}");
        assert!(KeyedStore::create(dir.path(), store_template(), 1).is_err());
    }

    #[test]
    fn a_spilled_key_loads_back_and_the_next_commit_makes_it_the_keys_file() {
        let (dir, mut s) = store_with_a();
        // `a` learns more and is evicted; `b`, never committed, is evicted, loaded back from
        // its spill, learns more and is evicted again.
        let (mut a2, sa2) = trained(&s, "a", 10);
        let (mut b, sb) = trained(&s, "b", 5);
        s.spill(vec![
            (Some("a"), &mut a2, sa2.clone()),
            (Some("b"), &mut b, sb),
        ])
        .unwrap();
        let (mut b2, sb2) = trained(&s, "b", 5);
        s.spill(vec![(Some("b"), &mut b2, sb2.clone())]).unwrap();
        assert_eq!(s.spilled_keys(), 2);
        assert_eq!(
            files(dir.path()),
            [
                "k000001.1.parquet",
                "k000001.1.s1.parquet",
                "k000002.1.s3.parquet",
                MANIFEST
            ],
            "the spill a later one replaced is gone"
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
            2,
            "the two spills, as inspect shows"
        );
        assert!(s.unlisted().unwrap().is_empty(), "the spilling store's own");
        let reopened = KeyedStore::open(crashed.path()).unwrap();
        assert_eq!(files(crashed.path()), ["k000001.1.parquet", MANIFEST]);
        assert_eq!(reopened.rows(), (40, 40));
        assert!(reopened.load(Some("b")).unwrap().is_none());

        // A commit of nothing in memory promotes both spills.
        s.commit(Vec::new(), None).unwrap();
        assert_eq!(s.spilled_keys(), 0);
        assert_eq!(
            files(dir.path()),
            ["k000001.1.s1.parquet", "k000002.1.s3.parquet", MANIFEST]
        );
        let reopened = KeyedStore::open(dir.path()).unwrap();
        assert_eq!(
            reopened.rows(),
            (60, 60),
            "a at 50 rows, b at 10 (5 before its spill)"
        );
        let (loaded, _) = reopened.load(Some("b")).unwrap().unwrap();
        assert_eq!(as_text(&loaded), as_text(&b2));
    }

    fn store_template() -> StreamState {
        let dir = tempfile::tempdir().unwrap();
        store(dir.path()).manifest().template.clone()
    }
}
