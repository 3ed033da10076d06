//! Embedding an operator in a tokio pipeline: record batches flow through an async stream,
//! are scored then learnt, and the model is checkpointed when the stream ends. Another
//! task keeps running beside it, because the operator yields between batches.
//!
//! `cargo run --example embed_tokio --features stream`

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use futures::StreamExt;
use streamboost::boost::multiclass::AdaBoostOlmConfig;
use streamboost::checkpoint;
use streamboost::columnar::read_table;
use streamboost::model::ModelConfig;
use streamboost::runtime::Cursor;
use streamboost::runtime::stream::ScoredStream;
use streamboost::weak::HoeffdingTreeConfig;

#[tokio::main(flavor = "current_thread")]
async fn main() -> streamboost::Result<()> {
    // A logged stream: the bundled car sample, in batches of 64 rows.
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/car.csv");
    let table = read_table(&path)?;
    let batches: Vec<_> = table
        .batches_of(64)?
        .into_iter()
        .map(Ok::<_, std::io::Error>)
        .collect();

    let config = ModelConfig::AdaOlm(AdaBoostOlmConfig {
        n_learners: 20,
        ..AdaBoostOlmConfig::new(HoeffdingTreeConfig::jgt_paper().into())
    });
    let operator = Cursor::for_table(&config, &table, "label", 1)?;

    // A second task on the same single-threaded runtime: it only runs when the operator
    // yields between batches.
    let ticks = Arc::new(AtomicU64::new(0));
    let ticker = {
        let ticks = ticks.clone();
        tokio::spawn(async move {
            loop {
                ticks.fetch_add(1, Ordering::Relaxed);
                tokio::task::yield_now().await;
            }
        })
    };

    let mut scored = ScoredStream::new(futures::stream::iter(batches), operator);
    println!(
        "output columns: {:?}",
        scored
            .schema()
            .fields()
            .iter()
            .map(|f| f.name())
            .collect::<Vec<_>>()
    );
    let (mut rows, mut correct, mut n_batches) = (0usize, 0usize, 0usize);
    while let Some(batch) = scored.next().await {
        let batch = batch?;
        let label = batch.column_by_name("label").expect("label column");
        let predicted = batch
            .column_by_name("predicted_label")
            .expect("prediction column");
        let (label, predicted) = (
            label
                .as_any()
                .downcast_ref::<arrow::array::StringArray>()
                .unwrap(),
            predicted
                .as_any()
                .downcast_ref::<arrow::array::StringArray>()
                .unwrap(),
        );
        correct += (0..batch.num_rows())
            .filter(|&r| label.value(r) == predicted.value(r))
            .count();
        rows += batch.num_rows();
        n_batches += 1;
    }
    ticker.abort();
    println!(
        "{rows} rows in {n_batches} batches, prequential accuracy {:.4}; the other task ran {} times meanwhile",
        correct as f64 / rows as f64,
        ticks.load(Ordering::Relaxed)
    );

    let mut operator = scored.into_operator();
    let dir = std::env::temp_dir().join("streamboost-embed-tokio");
    std::fs::create_dir_all(&dir).map_err(|source| streamboost::Error::Io {
        path: dir.clone(),
        source,
    })?;
    let saved = operator.save(&dir.join("car.parquet"), &config)?;
    println!(
        "checkpoint {} ({} rows seen, {} trees, {} nodes)",
        dir.join("car.parquet").display(),
        saved.rows_seen,
        saved.trees,
        saved.nodes
    );
    let _ = checkpoint::read_metadata(&dir.join("car.parquet"))?;
    Ok(())
}
