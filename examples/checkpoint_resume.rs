//! Checkpoint and resume: half a stream through an operator, a checkpoint, a fresh operator
//! from the checkpoint for the other half; the predictions and probabilities equal those of
//! an uninterrupted run, bit for bit.
//!
//! `cargo run --example checkpoint_resume`

use arrow::array::AsArray;
use arrow::record_batch::RecordBatch;
use streamboost::Result;
use streamboost::boost::WeightScale;
use streamboost::boost::multiclass::AdaBoostOlmConfig;
use streamboost::checkpoint;
use streamboost::columnar::read_table;
use streamboost::model::{Model, ModelConfig};
use streamboost::runtime::Cursor;
use streamboost::weak::HoeffdingTreeConfig;

/// The probabilities column of each output batch, as bits.
fn probabilities(out: &[RecordBatch]) -> Vec<u64> {
    out.iter()
        .flat_map(|b| {
            let list = b.column(b.num_columns() - 1).as_fixed_size_list();
            let values = list
                .values()
                .as_primitive::<arrow::datatypes::Float64Type>();
            values
                .values()
                .iter()
                .map(|v| v.to_bits())
                .collect::<Vec<_>>()
        })
        .collect()
}

fn run(op: &mut Cursor<Model>, batches: &[RecordBatch]) -> Result<Vec<RecordBatch>> {
    batches.iter().map(|b| op.process(b)).collect()
}

fn main() -> Result<()> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/car.csv");
    let table = read_table(&path)?;
    let batches = table.batches_of(100)?;
    let (first, second) = batches.split_at(batches.len() / 2);
    let config = ModelConfig::AdaOlm(AdaBoostOlmConfig {
        n_learners: 50,
        weight_scale: WeightScale::UniformRandom(5.0, 200.0),
        ..AdaBoostOlmConfig::new(HoeffdingTreeConfig::jgt_paper().into())
    });
    let operator = || Cursor::for_table(&config, &table, "label", 7);

    let uninterrupted = run(&mut operator()?, &batches)?;

    let dir = std::env::temp_dir().join("streamboost-checkpoint-resume");
    std::fs::create_dir_all(&dir).map_err(|source| streamboost::Error::Io {
        path: dir.clone(),
        source,
    })?;
    let file = dir.join("half.parquet");
    let mut op = operator()?;
    let mut resumed = run(&mut op, first)?;
    let meta = op.save(&file, &config)?;
    println!(
        "saved {} after {} rows: format {}, {} trees, {} nodes, checksum {}",
        file.display(),
        meta.rows_seen,
        meta.format_version,
        meta.trees,
        meta.nodes,
        meta.digest
    );
    drop(op);
    let (mut op, _) = Cursor::resume(&file, table.schema.clone(), &path)?;
    resumed.extend(run(&mut op, second)?);
    println!("resumed: {} rows seen in all", op.stats().rows_seen);

    let (a, b) = (probabilities(&uninterrupted), probabilities(&resumed));
    assert_eq!(a, b);
    println!(
        "uninterrupted and resumed runs agree on all {} probabilities, bit for bit",
        a.len()
    );
    println!(
        "metadata read back: {:?}",
        checkpoint::read_metadata(&file)?.algorithm
    );
    Ok(())
}
