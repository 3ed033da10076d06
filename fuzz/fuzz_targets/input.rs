//! The input path on arbitrary bytes: a CSV or Parquet file (by the first byte) read,
//! encoded with its last column as the label, and replayed test-then-train by a small
//! booster. Every step returns an error or a result, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use streamboost::columnar::{Encodings, open_table, read_csv_bytes};

fuzz_target!(|bytes: &[u8]| {
    streamboost_fuzz::report_caught_panics();
    let Some((&format, content)) = bytes.split_first() else {
        return;
    };
    let table = if format % 2 == 0 {
        read_csv_bytes("fuzz.csv".as_ref(), content)
    } else {
        let path = streamboost_fuzz::scratch("input.parquet");
        std::fs::write(&path, content).unwrap();
        open_table(&path)
    };
    let Ok(table) = table else { return };
    let Some(label) = table.schema.fields().last().map(|f| f.name().clone()) else {
        return;
    };
    streamboost_fuzz::replay(&[table], &label, &Encodings::default());
});
