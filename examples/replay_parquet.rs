//! Batch replay of a logged stream stored as Parquet: read it batch by batch, score and
//! learn each batch through the operator, write the scored batches (input columns plus the
//! prediction columns) to a new Parquet file.
//!
//! `cargo run --example replay_parquet`

use std::fs::File;
use std::sync::Arc;

use arrow::array::AsArray;
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use streamboost::boost::multiclass::AdaBoostOlmConfig;
use streamboost::columnar::{read_table, write_batch};
use streamboost::model::ModelConfig;
use streamboost::runtime::Cursor;
use streamboost::weak::HoeffdingTreeConfig;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::temp_dir().join("streamboost-replay-parquet");
    std::fs::create_dir_all(&dir)?;
    // The logged stream: the bundled car sample, stored as Parquet.
    let csv = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/car.csv");
    let table = read_table(&csv)?;
    let log = dir.join("events.parquet");
    write_batch(&log, &table.to_batch()?)?;

    // The model's features and classes from the log's columns.
    let config = ModelConfig::AdaOlm(AdaBoostOlmConfig::new(
        HoeffdingTreeConfig::jgt_paper().into(),
    ));
    let mut op = Cursor::for_table(&config, &read_table(&log)?, "label", 1)?;
    let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(&log)?)?
        .with_batch_size(256)
        .build()?;

    let scored = dir.join("scored.parquet");
    let mut writer = ArrowWriter::try_new(File::create(&scored)?, op.schema(), None)?;
    let (mut rows, mut correct) = (0, 0);
    for batch in reader {
        let out = op.process(&batch?)?;
        let column = |name| out.column_by_name(name).unwrap().as_string::<i32>();
        let (label, predicted) = (column("label"), column("predicted_label"));
        correct += label.iter().zip(predicted).filter(|(l, p)| l == p).count();
        rows += out.num_rows();
        writer.write(&out)?;
    }
    writer.close()?;
    let schema = Arc::clone(&op.schema());
    println!(
        "{rows} rows replayed from {}, prequential accuracy {:.4}",
        log.display(),
        correct as f64 / rows as f64
    );
    println!(
        "scored rows written to {} with columns {:?}",
        scored.display(),
        schema.fields().iter().map(|f| f.name()).collect::<Vec<_>>()
    );
    println!("{:?}", op.stats());
    Ok(())
}
