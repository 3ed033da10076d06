//! Reading files streamboost does not trust (inputs, checkpoints): Parquet through the
//! Parquet schema rather than the footer's embedded Arrow schema, and a dependency's panic
//! on damaged contents turned into an error naming the file. Shared by `columnar` and
//! `checkpoint`, which sit above it.

use std::path::Path;

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
