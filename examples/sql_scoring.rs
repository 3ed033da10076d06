//! SQL over streams and models: the prequential relation and window function, frozen scoring with a
//! checkpoint, the model table, and a checkpoint queried as a table.
//!
//! `cargo run --example sql_scoring --features sql`

use datafusion::prelude::{CsvReadOptions, SessionContext};
use streamboost::boost::multiclass::AdaBoostOlmConfig;
use streamboost::columnar::read_table;
use streamboost::model::ModelConfig;
use streamboost::runtime::Cursor;
use streamboost::sql::{ModelRegistry, register_all};
use streamboost::weak::HoeffdingTreeConfig;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::temp_dir().join("streamboost-sql-scoring");
    std::fs::create_dir_all(&dir)?;
    // Events with a timestamp: the bundled car sample, numbered.
    let car = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/car.csv");
    let text = std::fs::read_to_string(&car)?;
    let events: String = text
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if i == 0 {
                format!("ts,{l}\n")
            } else {
                format!("{i},{l}\n")
            }
        })
        .collect();
    let events_path = dir.join("events.csv");
    std::fs::write(&events_path, events)?;

    // A model trained on the stream and checkpointed, for frozen scoring.
    let config = ModelConfig::AdaOlm(AdaBoostOlmConfig {
        n_learners: 20,
        ..AdaBoostOlmConfig::new(HoeffdingTreeConfig::jgt_paper().into())
    });
    let table = read_table(&car)?;
    let mut op = Cursor::for_table(&config, &table, "label", 1)?;
    let spec = op.spec();
    for batch in table.batches()? {
        op.process(&batch?)?;
    }
    let checkpoint = dir.join("car.parquet");
    op.save(&checkpoint, &config)?;

    let registry = ModelRegistry::new();
    registry.register_config("fresh", config, spec.classes.names().to_vec(), 1)?;
    registry.load_checkpoint("trained", &checkpoint)?;
    let ctx = SessionContext::new().enable_url_table();
    register_all(&ctx, &registry)?;
    ctx.register_csv(
        "events",
        events_path.to_str().unwrap(),
        CsvReadOptions::new(),
    )
    .await?;

    let features = "buying, maint, doors, persons, lug_boot, safety";
    for sql in [
        "SELECT * FROM boost_models()".to_string(),
        // Test-then-train in time order, a fresh model per query.
        format!(
            "SELECT ts, label, boost_prequential('fresh', label, {features}) OVER (ORDER BY ts) AS predicted \
             FROM events ORDER BY ts LIMIT 5"
        ),
        // The same as a relation: every column kept, the predictions appended.
        "SELECT ts, label, predicted_label, predicted_label_probs \
         FROM boost_score('fresh', (SELECT * FROM events), 'label', 'ts') ORDER BY ts LIMIT 5"
            .to_string(),
        // One model per safety level, as a relation with a key ...
        "SELECT safety, count(*) AS rows, avg(CASE WHEN predicted_label = label THEN 1.0 ELSE 0.0 END) AS accuracy \
         FROM boost_score('fresh', (SELECT * FROM events), 'label', 'ts', 'safety') \
         GROUP BY safety ORDER BY safety"
            .to_string(),
        // ... and as a window, with the same five features (the key is not one).
        "SELECT safety, count(*) AS rows, avg(CASE WHEN predicted = label THEN 1.0 ELSE 0.0 END) AS accuracy \
         FROM (SELECT safety, label, boost_prequential('fresh', label, buying, maint, doors, persons, lug_boot) \
               OVER (PARTITION BY safety ORDER BY ts) AS predicted FROM events) \
         GROUP BY safety ORDER BY safety"
            .to_string(),
        // Scoring with the frozen checkpoint.
        format!(
            "SELECT ts, label, boost_predict('trained', {features}) AS predicted, \
             boost_predict_proba('trained', {features}) AS probabilities FROM events ORDER BY ts LIMIT 3"
        ),
        // The checkpoint is a Parquet table of tree nodes.
        format!(
            "SELECT depth, count(*) AS nodes, sum(CASE WHEN kind = 'leaf' THEN 1 ELSE 0 END) AS leaves \
             FROM '{}' GROUP BY depth ORDER BY depth",
            checkpoint.display()
        ),
    ] {
        println!("{sql}");
        ctx.sql(&sql).await?.show().await?;
    }
    Ok(())
}
