//! Files streamboost reads without trusting them (inputs, checkpoints): Parquet through the
//! Parquet schema rather than the footer's embedded Arrow schema, and a dependency's panic
//! on damaged contents turned into an error naming the file. And files it replaces
//! atomically (checkpoints, a job's outputs): a reader sees the old contents or the new,
//! never a part. Shared by `columnar`, `checkpoint` and `job`, which sit above it.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

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
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
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
    let io = |p: &Path| {
        let p = p.to_path_buf();
        move |source| Error::Io { path: p, source }
    };
    let partial = partial_path(path);
    let file = File::create(&partial).map_err(io(&partial))?;
    let written = file
        .try_clone()
        .map_err(io(&partial))
        .and_then(write)
        .and_then(|()| file.sync_all().map_err(io(&partial)));
    drop(file);
    if let Err(e) = written {
        // A write that failed (a full disk, a file size limit) leaves `path` as it was and
        // nothing beside it.
        let _ = std::fs::remove_file(&partial);
        return Err(e);
    }
    std::fs::rename(&partial, path).map_err(io(path))?;
    remove_dead_writers_files(path);
    sync_dir(match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    })
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
