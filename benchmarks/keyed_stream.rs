//! Writes a keyed event stream ([`streamboost::synth::KeyedEvents`]: Zipf key popularity,
//! a concept per key) as Parquet files for `streamboost run --key key`, the input of
//! `benchmarks/keyed_scale.sh`.
//!
//! `cargo bench --bench keyed_stream -- OUT_DIR ROWS KEYS [FILES=20] [S=1.1] [SEED=1]`
//!
//! Columns: `id` (the event's number), `key` (`k<n>`, `k0` the most popular), the features
//! `x0`, `x1`, `x2` (numeric), `c0`, `c1` (categories), and `label`.

use std::path::PathBuf;

use parquet::arrow::ArrowWriter;
use streamboost::synth::KeyedEvents;

const BATCH: u64 = 65_536;

fn main() {
    // `cargo bench` passes `--bench`; the positional arguments are the rest.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    if args.len() < 3 {
        eprintln!("usage: keyed_stream OUT_DIR ROWS KEYS [FILES=20] [S=1.1] [SEED=1]");
        std::process::exit(2);
    }
    let number = |i: usize, default: &str| -> f64 {
        let text = args.get(i).map_or(default, String::as_str);
        text.parse()
            .unwrap_or_else(|_| panic!("`{text}` is not a number"))
    };
    let out = PathBuf::from(&args[0]);
    let (rows, keys, files) = (
        number(1, "") as u64,
        number(2, "") as u64,
        number(3, "20") as u64,
    );
    let (s, seed) = (number(4, "1.1"), number(5, "1") as u64);
    std::fs::create_dir_all(&out).expect("the output directory");
    let mut events = KeyedEvents::new(keys, s, 0.05, seed).expect("a Zipf distribution");
    let per_file = rows.div_ceil(files);
    for f in 0..files {
        let mut left = per_file.min(rows - (f * per_file).min(rows));
        let file = std::fs::File::create(out.join(format!("events-{f:04}.parquet"))).unwrap();
        let mut writer = None;
        while left > 0 {
            let batch = events.batch(left.min(BATCH) as usize);
            let writer = writer.get_or_insert_with(|| {
                ArrowWriter::try_new(file.try_clone().unwrap(), batch.schema(), None).unwrap()
            });
            writer.write(&batch).expect("a written batch");
            left -= batch.num_rows() as u64;
        }
        if let Some(writer) = writer {
            writer.close().expect("a closed Parquet file");
        }
    }
}
