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

/// `data` as CSV text with a header: its features, then `label` (class names).
pub fn dataset_csv(data: &crate::core::Dataset) -> String {
    use std::fmt::Write;
    let spec = data.spec();
    let names: Vec<&str> = spec.features.iter().map(|f| f.name.as_str()).collect();
    let mut out = format!("{},label\n", names.join(","));
    let classes = spec.classes.names();
    for i in 0..data.len() {
        for v in data.row(i) {
            write!(out, "{v},").expect("a String takes any text");
        }
        let label = data.label(i).map_or("", |y| classes[y].as_str());
        writeln!(out, "{label}").expect("a String takes any text");
    }
    out
}
