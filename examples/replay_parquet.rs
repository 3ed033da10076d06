//! Batch replay of a logged stream stored as Parquet: read it batch by batch, score and
//! learn each batch through the operator, write the scored batches (input columns plus the
//! prediction columns) to a new Parquet file.
//!
//! `cargo run --example replay_parquet`

use std::fs::File;
use std::sync::Arc;

use arrow::record_batch::RecordBatchReader;
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use streamboost::Config;
use streamboost::boost::multiclass::AdaBoostOlmConfig;
use streamboost::columnar::{BoostOperator, Encodings, encode_tables, read_table, write_batch};
use streamboost::model::ModelConfig;
use streamboost::weak::HoeffdingTreeConfig;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::temp_dir().join("streamboost-replay-parquet");
    std::fs::create_dir_all(&dir)?;
    // The logged stream: the bundled car sample, stored as Parquet.
    let csv = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/car.csv");
    let table = read_table(&csv)?;
    let log = dir.join("events.parquet");
    write_batch(&log, &table.to_batch()?)?;

    // The model's schema from the log's columns and classes.
    let logged = read_table(&log)?;
    let spec = encode_tables(
        std::slice::from_ref(&logged),
        "label",
        &Encodings::default(),
    )?
    .spec()
    .clone();
    let config = ModelConfig::AdaOlm(AdaBoostOlmConfig::new(
        HoeffdingTreeConfig::jgt_paper().into(),
    ));
    let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(&log)?)?
        .with_batch_size(256)
        .build()?;
    let mut op = BoostOperator::new(
        config.build(&spec, 1)?,
        &spec,
        reader.schema(),
        "label",
        &Encodings::default(),
        &log,
    )?;

    let scored = dir.join("scored.parquet");
    let mut writer = ArrowWriter::try_new(File::create(&scored)?, op.schema(), None)?;
    let (mut rows, mut correct) = (0, 0);
    for batch in reader {
        let out = op.process(&batch?)?;
        let label = out
            .column_by_name("label")
            .unwrap()
            .as_any()
            .downcast_ref::<arrow::array::StringArray>()
            .unwrap();
        let predicted = out
            .column_by_name("predicted_label")
            .unwrap()
            .as_any()
            .downcast_ref::<arrow::array::StringArray>()
            .unwrap();
        correct += (0..out.num_rows())
            .filter(|&r| label.value(r) == predicted.value(r))
            .count();
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
