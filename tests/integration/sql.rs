//! SQL: the prequential window function against `streamboost replay`, per-key models,
//! frozen scoring, the model table, and checkpoints queried as tables.

use std::path::{Path, PathBuf};

use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::datatypes::Float64Type;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::prelude::{CsvReadOptions, SessionConfig, SessionContext};
use streamboost::Classifier;
use streamboost::checkpoint;
use streamboost::columnar::{Encodings, encode_with_spec, load_stream, read_table};
use streamboost::core::{ClassSet, Feature, StreamSpec};
use streamboost::eval::Prequential;
use streamboost::model::ModelConfig;
use streamboost::sql::{ModelRegistry, register_all};

use crate::cli::streamboost;

/// The bundled car sample with a `ts` column (1-based row number) to order by.
fn car_with_ts(dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("data/car.csv"))
        .unwrap();
    let mut out = String::new();
    for (i, line) in text.lines().enumerate() {
        out += &if i == 0 {
            format!("ts,{line}\n")
        } else {
            format!("{i},{line}\n")
        };
    }
    let path = dir.join("car_ts.csv");
    std::fs::write(&path, out).unwrap();
    path
}

async fn session(registry: &ModelRegistry, car: &Path) -> SessionContext {
    let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(2));
    register_all(&ctx, registry);
    ctx.register_csv("car", car.to_str().unwrap(), CsvReadOptions::new())
        .await
        .unwrap();
    ctx
}

async fn query(ctx: &SessionContext, sql: &str) -> Vec<RecordBatch> {
    ctx.sql(sql).await.unwrap().collect().await.unwrap()
}

fn strings(batches: &[RecordBatch], column: &str) -> Vec<String> {
    batches
        .iter()
        .flat_map(|b| {
            let c = b.column_by_name(column).unwrap().as_string::<i32>().clone();
            (0..c.len()).map(move |i| c.value(i).to_string())
        })
        .collect()
}

const FEATURES: &str = "buying, maint, doors, persons, lug_boot, safety";

/// The config and classes `streamboost replay --learners 10 --seed 3` uses.
fn replay_config(dir: &Path) -> (ModelConfig, Vec<String>, Vec<String>) {
    let report = dir.join("report.json");
    let predictions = dir.join("replay.csv");
    streamboost()
        .args([
            "replay",
            "--learners",
            "10",
            "--seed",
            "3",
            "-q",
            "--report",
        ])
        .arg(&report)
        .arg("--predictions")
        .arg(&predictions)
        .assert()
        .success();
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report).unwrap()).unwrap();
    let config = serde_json::from_value(report["config"].clone()).unwrap();
    let classes = serde_json::from_value(report["classes"].clone()).unwrap();
    let text = std::fs::read_to_string(predictions).unwrap();
    let replayed = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(2).unwrap().to_string())
        .collect();
    (config, classes, replayed)
}

#[tokio::test]
async fn sql_prequential_on_car_equals_replay() {
    let dir = tempfile::tempdir().unwrap();
    let (config, classes, replayed) = replay_config(dir.path());
    let registry = ModelRegistry::new();
    registry.register_config("m", config, classes, 3).unwrap();
    let ctx = session(&registry, &car_with_ts(dir.path())).await;
    let out = query(
        &ctx,
        &format!(
            "SELECT ts, boost_prequential('m', label, {FEATURES}) OVER (ORDER BY ts) AS p \
             FROM car ORDER BY ts"
        ),
    )
    .await;
    let got = strings(&out, "p");
    assert_eq!(got.len(), 1728);
    assert_eq!(got, replayed);
    // A query does not change the registered model: the same query, the same answer.
    let again = query(
        &ctx,
        &format!(
            "SELECT ts, boost_prequential('m', label, {FEATURES}) OVER (ORDER BY ts) AS p \
             FROM car ORDER BY ts"
        ),
    )
    .await;
    assert_eq!(strings(&again, "p"), replayed);
}

#[tokio::test]
async fn partition_by_gives_one_model_per_key() {
    let dir = tempfile::tempdir().unwrap();
    let (config, classes, _) = replay_config(dir.path());
    let car = car_with_ts(dir.path());
    let registry = ModelRegistry::new();
    registry
        .register_config("m", config.clone(), classes, 3)
        .unwrap();
    let ctx = session(&registry, &car).await;
    let out = query(
        &ctx,
        &format!(
            "SELECT ts, safety, boost_prequential('m', label, {FEATURES}) \
             OVER (PARTITION BY safety ORDER BY ts) AS p FROM car ORDER BY ts"
        ),
    )
    .await;
    let (safety, got) = (strings(&out, "safety"), strings(&out, "p"));

    // The same, by hand: each safety level's rows, in order, through a fresh model built
    // for that partition's own stream (its categories in order of first appearance).
    let all = std::fs::read_to_string(&car).unwrap();
    let header = all.lines().next().unwrap().to_string();
    for level in ["low", "med", "high"] {
        let rows: Vec<&str> = all
            .lines()
            .skip(1)
            .filter(|l| l.split(',').nth(6) == Some(level))
            .collect();
        let part = dir.path().join(format!("{level}.csv"));
        std::fs::write(&part, format!("{header}\n{}\n", rows.join("\n"))).unwrap();
        // What the window builds for the partition: the columns' names and kinds, no
        // categories yet, the registered classes.
        let spec = StreamSpec::new(
            FEATURES
                .split(", ")
                .map(|f| Feature::nominal(f, Vec::<String>::new()))
                .collect(),
            ClassSet::new(["acc", "good", "unacc", "vgood"]).unwrap(),
        );
        let table = read_table(&part).unwrap();
        let data = encode_with_spec(&[table], &spec, "label", &Encodings::default())
            .unwrap()
            .data;
        let mut model = streamboost::Config::build(&config, &spec, 3).unwrap();
        let mut expected = Vec::new();
        Prequential::default()
            .run(&mut model, &data, None, |o| {
                expected.push(spec.classes.name(o.predicted).to_string())
            })
            .unwrap();
        let from_sql: Vec<String> = (0..got.len())
            .filter(|&i| safety[i] == level)
            .map(|i| got[i].clone())
            .collect();
        assert_eq!(from_sql, expected, "partition {level}");
    }
}

#[tokio::test]
async fn frozen_scoring_and_the_model_table() {
    let dir = tempfile::tempdir().unwrap();
    let ck = dir.path().join("car.parquet");
    streamboost()
        .args(["replay", "--learners", "5", "--seed", "2", "-q", "--save"])
        .arg(&ck)
        .assert()
        .success();
    let (config, classes, _) = replay_config(dir.path());
    let registry = ModelRegistry::new();
    registry.load_checkpoint("trained", &ck).unwrap();
    registry
        .register_config("fresh", config, classes, 1)
        .unwrap();
    let ctx = session(&registry, &car_with_ts(dir.path())).await;

    let models = query(
        &ctx,
        "SELECT name, algorithm, rows_seen, classes, format_version FROM boost_models()",
    )
    .await;
    assert_eq!(
        pretty_format_batches(&models).unwrap().to_string(),
        "\
+---------+-----------+-----------+----------------------+----------------+
| name    | algorithm | rows_seen | classes              | format_version |
+---------+-----------+-----------+----------------------+----------------+
| fresh   | ada-olm   |           | acc,good,unacc,vgood |                |
| trained | ada-olm   | 1728      | acc,good,unacc,vgood | 1              |
+---------+-----------+-----------+----------------------+----------------+"
    );

    // Scoring equals the loaded model's own predict_proba, row for row.
    let out = query(
        &ctx,
        &format!(
            "SELECT ts, boost_predict('trained', {FEATURES}) AS p, \
             boost_predict_proba('trained', {FEATURES}) AS probs FROM car ORDER BY ts"
        ),
    )
    .await;
    let (model, stream) = checkpoint::load(&ck).unwrap();
    let data = load_stream(
        &[PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/car.csv")],
        "label",
        &Encodings::default(),
    )
    .unwrap();
    let predicted = strings(&out, "p");
    let mut row = 0;
    let mut p = vec![0.0; 4];
    for batch in &out {
        let probs = batch.column_by_name("probs").unwrap().as_list::<i32>();
        for i in 0..batch.num_rows() {
            model.predict_proba(data.row(row), &mut p);
            let got = probs.value(i);
            let got = got.as_primitive::<Float64Type>().values();
            assert_eq!(
                got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                p.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
            );
            assert_eq!(
                predicted[row],
                stream.spec.classes.name(model.predict(data.row(row)))
            );
            row += 1;
        }
    }
    assert_eq!(row, 1728);

    // A fresh model cannot score.
    let err = ctx
        .sql(&format!(
            "SELECT boost_predict('fresh', {FEATURES}) FROM car"
        ))
        .await
        .unwrap()
        .collect()
        .await
        .unwrap_err();
    assert!(err.to_string().contains("has not been trained"), "{err}");
}

#[tokio::test]
async fn a_checkpoint_is_a_table() {
    let dir = tempfile::tempdir().unwrap();
    let ck = dir.path().join("car.parquet");
    streamboost()
        .args(["replay", "--learners", "5", "-q", "--save"])
        .arg(&ck)
        .assert()
        .success();
    let meta = checkpoint::read_metadata(&ck).unwrap();
    let ctx = SessionContext::new().enable_url_table();
    let out = query(
        &ctx,
        &format!(
            "SELECT count(*) AS nodes, count(DISTINCT tree) AS trees, \
             sum(CASE WHEN kind = 'leaf' THEN 1 ELSE 0 END) AS leaves FROM '{}'",
            ck.display()
        ),
    )
    .await;
    let (model, _) = checkpoint::load(&ck).unwrap();
    let leaves: usize = model.trees().iter().map(|t| t.n_leaves()).sum();
    let b = &out[0];
    assert_eq!(
        b.column(0)
            .as_primitive::<datafusion::arrow::datatypes::Int64Type>()
            .value(0) as u64,
        meta.nodes
    );
    assert_eq!(
        b.column(1)
            .as_primitive::<datafusion::arrow::datatypes::Int64Type>()
            .value(0),
        5
    );
    assert_eq!(
        b.column(2)
            .as_primitive::<datafusion::arrow::datatypes::Int64Type>()
            .value(0) as usize,
        leaves
    );
}
