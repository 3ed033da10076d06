//! The command line's own files: JSON and text read and written with errors naming the file,
//! written atomically.

use std::path::Path;

use serde::Serialize;

use crate::{Error, Result};

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

pub fn write_json(path: &Path, value: &impl Serialize) -> Result<()> {
    let json = serde_json::to_string_pretty(value).expect("reports serialize");
    write_text(path, &(json + "\n"))
}

/// Writes `text` to `path` atomically: a failed write leaves an existing file as it was.
pub fn write_text(path: &Path, text: &str) -> Result<()> {
    crate::files::write_atomically(path, |mut file| {
        use std::io::Write;
        file.write_all(text.as_bytes()).map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })
    })
}
