//! Files streamboost reads without trusting them (inputs, checkpoints): Parquet through the
//! Parquet schema rather than the footer's embedded Arrow schema, and a dependency's panic
//! on damaged contents turned into an error naming the file. And files it replaces
//! atomically (checkpoints, a job's outputs, every output of the command line): a reader
//! sees the old contents or the new, never a part. Shared by `columnar`, `checkpoint` and
//! `job`, which sit above it.
//!
//! Two guards keep a user's data whole:
//! * [`refuse_overlaps`]: an output path that is an input (the same file by any name: a
//!   symbolic or hard link, a relative path) or lies in an input directory, or that another
//!   output of the same command also names, is refused before anything is written.
//! * [`OwnerLock`]: one process at a time owns a model or an output directory, through an
//!   advisory lock file beside it holding the owner's process id, host and start time. The
//!   operating system releases the lock when its process ends, however it ends, so a lock
//!   file left by a killed owner is stale and is taken over; a live owner's is refused with
//!   [`Error::Locked`] naming it.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use parquet::arrow::arrow_reader::ArrowReaderOptions;

use crate::{Error, Result};

/// Runs a dependency's file reader, turning a panic inside it (a decoder trusting a damaged
/// file) into [`Error::Format`] naming the file: a bad file is an error, never a crash.
pub(crate) fn without_panics<T>(path: &Path, read: impl FnOnce() -> Result<T>) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(read)).unwrap_or_else(|panic| {
        let detail = panic
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| panic.downcast_ref::<&str>().copied())
            .unwrap_or("no message");
        Err(Error::Format {
            file: path.to_path_buf(),
            message: format!("the file reader failed on damaged contents: {detail}"),
        })
    })
}

/// How streamboost reads Parquet: the Arrow schema is derived from the Parquet schema, not
/// decoded from the footer's embedded `ARROW:schema` (an IPC message the decoder trusts: a
/// damaged one makes arrow-ipc panic instead of failing).
pub(crate) fn parquet_options() -> ArrowReaderOptions {
    ArrowReaderOptions::new().with_skip_arrow_metadata(true)
}

/// The temporary file one write of a file goes to before it replaces `path`:
/// `<name>.<pid>-<n>.partial`, unique to the process and the write, so that two writers of
/// the same path never share it.
pub fn partial_path(path: &Path) -> PathBuf {
    static WRITES: AtomicU64 = AtomicU64::new(0);
    let n = WRITES.fetch_add(1, Ordering::Relaxed);
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".{}-{n}.partial", std::process::id()));
    path.with_file_name(name)
}

/// The temporary files of writes of `path` that were left behind (a writer killed mid-write;
/// never read), with the id of the process that wrote each.
pub fn partial_files(path: &Path) -> Vec<(u32, PathBuf)> {
    let name = path
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    let dir = dir_of(path);
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| {
            let file = e.ok()?.file_name().into_string().ok()?;
            let writer = file.strip_prefix(&name)?.strip_prefix('.')?;
            let (pid, _) = writer.strip_suffix(".partial")?.split_once('-')?;
            Some((pid.parse().ok()?, dir.join(&file)))
        })
        .collect()
}

/// Removes the temporary files of `path`'s writers that no longer run (Linux, where a
/// process's liveness can be read from `/proc`; elsewhere they are left).
fn remove_dead_writers_files(path: &Path) {
    if cfg!(target_os = "linux") {
        for (pid, file) in partial_files(path) {
            if !Path::new(&format!("/proc/{pid}")).exists() {
                let _ = std::fs::remove_file(file);
            }
        }
    }
}

/// Writes `path` through `write` so that `path` is either its old contents or the complete
/// new ones: write a [`partial_path`], flush it to disk, rename it over `path`, flush the
/// directory entry.
pub(crate) fn write_atomically(path: &Path, write: impl FnOnce(File) -> Result<()>) -> Result<()> {
    let partial = partial_path(path);
    let file = File::create(&partial).map_err(|source| Error::Io {
        path: partial.clone(),
        source,
    })?;
    let written = file
        .try_clone()
        .map_err(|source| Error::Io {
            path: partial.clone(),
            source,
        })
        .and_then(write);
    if let Err(e) = written {
        // A write that failed (a full disk, a file size limit) leaves `path` as it was and
        // nothing beside it.
        let _ = std::fs::remove_file(&partial);
        return Err(e);
    }
    put_in_place(&partial, &file, path)
}

/// Ends a write of `path` made to its temporary file `partial` (open as `file`): flushes
/// it to disk, renames it over `path`, removes what dead writers of `path` left, and
/// flushes the directory entry. On failure `path` is as it was and `partial` is removed.
pub(crate) fn put_in_place(partial: &Path, file: &File, path: &Path) -> Result<()> {
    let placed = file
        .sync_all()
        .and_then(|()| std::fs::rename(partial, path));
    if let Err(source) = placed {
        let _ = std::fs::remove_file(partial);
        return Err(Error::Io {
            path: path.to_path_buf(),
            source,
        });
    }
    remove_dead_writers_files(path);
    sync_dir(dir_of(path))
}

/// The directory `path` is in (`.` for a bare name).
pub(crate) fn dir_of(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// Flushes a file written earlier to disk.
pub(crate) fn sync_file(path: &Path) -> Result<()> {
    File::open(path)
        .and_then(|f| f.sync_all())
        .map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })
}

/// Flushes a directory's entries (files renamed or created in it) to disk.
pub(crate) fn sync_dir(dir: &Path) -> Result<()> {
    #[cfg(unix)]
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|source| Error::Io {
            path: dir.to_path_buf(),
            source,
        })?;
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

/// A path a command names, with the flag that names it (for the error).
#[derive(Debug, Clone, Copy)]
pub struct Named<'a> {
    /// The flag, as the user types it (`--save`, `--input-dir`).
    pub flag: &'static str,
    /// The path.
    pub path: &'a Path,
}

impl<'a> Named<'a> {
    /// `path`, named by `flag`.
    pub fn new(flag: &'static str, path: &'a Path) -> Self {
        Named { flag, path }
    }

    /// `path`, named by `flag`, if the flag was given.
    #[cfg(feature = "cli")]
    pub fn given(flag: &'static str, path: &'a Option<PathBuf>) -> Option<Self> {
        path.as_deref().map(|path| Named { flag, path })
    }
}

/// Refuses `outputs` that would write over one of `inputs`, or over each other, before
/// anything is opened for writing: the same file under another name (a relative path, a
/// symbolic link, a hard link), or a path inside an input directory (or an output directory
/// holding an input). Paths that do not exist yet are compared by where they would be.
pub fn refuse_overlaps(inputs: &[Named<'_>], outputs: &[Named<'_>]) -> Result<()> {
    for (i, output) in outputs.iter().enumerate() {
        let others = inputs.iter().chain(&outputs[i + 1..]);
        for other in others {
            if let Some(why) = overlap(output.path, other.path) {
                return Err(Error::OutputOverlapsInput {
                    output_flag: output.flag,
                    output: output.path.to_path_buf(),
                    input_flag: other.flag,
                    input: other.path.to_path_buf(),
                    why,
                });
            }
        }
    }
    Ok(())
}

/// Whether `a` and `b` are one path or one file, or one holds the other.
#[cfg(feature = "cli")]
pub fn overlaps(a: &Path, b: &Path) -> bool {
    overlap(a, b).is_some()
}

/// How writing `output` would touch `input`, if it would.
fn overlap(output: &Path, input: &Path) -> Option<&'static str> {
    if same_file(output, input) {
        return Some(match output.is_dir() {
            true => "they are the same directory",
            false => "they are the same file",
        });
    }
    let (out, inp) = (where_it_is(output), where_it_is(input));
    if out == inp {
        Some("they are the same path")
    } else if out.starts_with(&inp) {
        Some("the output lies inside that directory")
    } else if inp.starts_with(&out) {
        Some("that input lies inside the output directory")
    } else {
        None
    }
}

/// Whether two existing paths are one file (one device and inode: hard and symbolic links
/// included).
fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) if cfg!(unix) => same_inode(&x, &y),
        (Ok(_), Ok(_)) => where_it_is(a) == where_it_is(b),
        _ => false,
    }
}

/// The canonical path of `path`, or, where it does not exist yet, its nearest existing
/// ancestor's canonical path with the rest appended.
fn where_it_is(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut rest = Vec::new();
    let mut at = absolute.as_path();
    loop {
        if let Ok(found) = at.canonicalize() {
            return rest.iter().rev().fold(found, |p, part| p.join(part));
        }
        match (at.parent(), at.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                at = parent;
            }
            _ => return absolute,
        }
    }
}

/// A process's exclusive hold on a model or an output directory (see the module doc). The
/// hold is per process: within one process, the model's owner orders its writers (SQL's one
/// trainer per live model, a job's one live model), and every holder of the same path
/// shares one lock. Dropping the last holder removes the lock file and releases the lock.
#[derive(Debug)]
pub struct OwnerLock {
    lock_file: PathBuf,
    file: File,
}

/// The locks this process holds, by lock file.
static HELD: Mutex<Vec<(PathBuf, Weak<OwnerLock>)>> = Mutex::new(Vec::new());

impl OwnerLock {
    /// The lock file of `target`: `<target>.lock` beside a model (a file, or a keyed model's
    /// directory), `.streamboost.lock` inside an output directory.
    fn lock_file(target: &Path, inside: bool) -> PathBuf {
        if inside {
            target.join(".streamboost.lock")
        } else {
            let mut name = target.file_name().unwrap_or_default().to_os_string();
            name.push(".lock");
            target.with_file_name(name)
        }
    }

    /// Takes `target` for this process: its lock file is created (or a stale one taken over)
    /// and locked; a lock held by another process is refused with [`Error::Locked`]. With
    /// `inside`, the lock file goes inside `target` (an output directory, which must exist).
    pub fn acquire(target: &Path, inside: bool) -> Result<Arc<OwnerLock>> {
        let lock_file = where_it_is(&OwnerLock::lock_file(target, inside));
        let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
        held.retain(|(_, lock)| lock.strong_count() > 0);
        if let Some(lock) = held
            .iter()
            .find(|(path, _)| *path == lock_file)
            .and_then(|(_, lock)| lock.upgrade())
        {
            return Ok(lock);
        }
        let lock = Arc::new(OwnerLock::take(target, lock_file.clone())?);
        held.push((lock_file, Arc::downgrade(&lock)));
        Ok(lock)
    }

    fn take(target: &Path, lock_file: PathBuf) -> Result<OwnerLock> {
        use std::io::{Read, Seek, Write};
        let io = |source| Error::Io {
            path: lock_file.clone(),
            source,
        };
        loop {
            let mut file = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&lock_file)
                .map_err(io)?;
            match file.try_lock() {
                Ok(()) => {}
                Err(std::fs::TryLockError::WouldBlock) => {
                    let mut holder = String::new();
                    let _ = file.read_to_string(&mut holder);
                    let holder = holder.trim();
                    return Err(Error::Locked {
                        path: target.to_path_buf(),
                        holder: match holder {
                            "" => "another process".to_string(),
                            h => h.to_string(),
                        },
                    });
                }
                Err(std::fs::TryLockError::Error(e)) => return Err(io(e)),
            }
            // The last holder removes the file before it unlocks: a file locked after its
            // removal is not the lock any more, and is opened again.
            let current = std::fs::metadata(&lock_file);
            if !current.is_ok_and(|c| file.metadata().is_ok_and(|f| same_inode(&c, &f))) {
                continue;
            }
            let since = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            let owner = format!(
                "process {} on host {} (since unix time {since})\n",
                std::process::id(),
                host_name()
            );
            file.set_len(0)
                .and_then(|()| file.rewind())
                .and_then(|()| file.write_all(owner.as_bytes()))
                .and_then(|()| file.sync_all())
                .map_err(io)?;
            return Ok(OwnerLock { lock_file, file });
        }
    }
}

impl Drop for OwnerLock {
    fn drop(&mut self) {
        // Removed while still locked (see `take`), then unlocked as the file closes.
        let _ = std::fs::remove_file(&self.lock_file);
        let _ = self.file.unlock();
    }
}

/// Whether two files' metadata are one file's (one device and inode; always true where
/// the platform has no inodes, whose callers compare paths instead).
fn same_inode(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        (a.dev(), a.ino()) == (b.dev(), b.ino())
    }
    #[cfg(not(unix))]
    {
        let _ = (a, b);
        true
    }
}

/// This machine's name, for a lock file's reader on another host of a shared file system.
fn host_name() -> String {
    ["/proc/sys/kernel/hostname", "/etc/hostname"]
        .iter()
        .find_map(|p| std::fs::read_to_string(p).ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown".to_string())
}

/// Reads a JSON file: an I/O error, or a format error naming the file.
pub fn read_json(path: &Path) -> Result<serde_json::Value> {
    let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|e| Error::Format {
        file: path.to_path_buf(),
        message: format!("not JSON: {e}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panicking_reader_is_a_typed_error_naming_the_file() {
        let path = Path::new("damaged.parquet");
        let err = without_panics::<()>(path, || panic!("Type NONE not supported")).unwrap_err();
        assert!(
            matches!(&err, Error::Format { file, message }
                if file == path && message.contains("Type NONE not supported")),
            "{err}"
        );
        assert_eq!(without_panics(path, || Ok(7)).unwrap(), 7);
    }
}
