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

use crate::cli::{
    Flag, flags, predicted_labels, read_json, replay_output, replay_report, streamboost,
};
use crate::common::{count_true, strings};

/// The bundled car sample with a `ts` column (1-based row number) to order by.
pub(crate) fn car_with_ts(dir: &Path) -> PathBuf {
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

pub(crate) async fn session(registry: &ModelRegistry, car: &Path) -> SessionContext {
    let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(2));
    register_all(&ctx, registry).unwrap();
    ctx.register_csv("car", car.to_str().unwrap(), CsvReadOptions::new())
        .await
        .unwrap();
    ctx
}

pub(crate) async fn query(ctx: &SessionContext, sql: &str) -> Vec<RecordBatch> {
    ctx.sql(sql).await.unwrap().collect().await.unwrap()
}

/// The message of the error query `sql` ends with.
pub(crate) async fn query_error(ctx: &SessionContext, sql: &str) -> String {
    let frame = ctx.sql(sql).await.unwrap();
    frame.collect().await.unwrap_err().to_string()
}

/// The `predicted_label` column of query `sql`.
async fn predicted(ctx: &SessionContext, sql: &str) -> Vec<String> {
    strings(&query(ctx, sql).await, "predicted_label")
}

const FEATURES: &str = "buying, maint, doors, persons, lug_boot, safety";

/// `boost_prequential` of model `m` over table `car` in `ts` order, as column `p`.
fn prequential_over_car() -> String {
    format!(
        "SELECT ts, boost_prequential('m', label, {FEATURES}) OVER (ORDER BY ts) AS p \
         FROM car ORDER BY ts"
    )
}

/// The checkpoint `streamboost replay -q ARGS` saves over the bundled sample, in `dir`.
pub(crate) fn replay_saving(dir: &Path, args: &[&str]) -> PathBuf {
    replay_output(dir, args, "--save", "car.parquet")
}

/// The config and classes `streamboost replay --learners 10 --seed 3` uses.
pub(crate) fn replay_config(dir: &Path) -> (ModelConfig, Vec<String>, Vec<String>) {
    let predictions = dir.join("replay.csv");
    let path = predictions.to_str().unwrap();
    let (report, _) = replay_report(&["--learners", "10", "--seed", "3", "--predictions", path]);
    let config = serde_json::from_value(report["config"].clone()).unwrap();
    let classes = serde_json::from_value(report["classes"].clone()).unwrap();
    let replayed = predicted_labels(&predictions);
    (config, classes, replayed)
}

#[tokio::test]
async fn sql_prequential_on_car_equals_replay() {
    let dir = tempfile::tempdir().unwrap();
    let (registry, replayed) = fresh_registry(dir.path());
    let ctx = session(&registry, &car_with_ts(dir.path())).await;
    let out = query(&ctx, &prequential_over_car()).await;
    let got = strings(&out, "p");
    assert_eq!(got.len(), 1728);
    assert_eq!(got, replayed);
    // A query does not change the registered model: the same query, the same answer.
    let again = query(&ctx, &prequential_over_car()).await;
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
    let ck = replay_saving(
        dir.path(),
        &["--algo", "ada-olm", "--learners", "5", "--seed", "2"],
    );
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
| fresh   | ova       |           | acc,good,unacc,vgood |                |
| trained | ada-olm   | 1728      | acc,good,unacc,vgood | 2              |
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
    assert_eq!(scored_as_by(&out, &model, &stream, &data), 1728);

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

/// Checks that the columns `p` (label) and `probs` of `out` are `model`'s prediction and
/// probabilities, bit for bit, for the rows of `data` in order; returns the rows checked.
fn scored_as_by(
    out: &[RecordBatch], model: &streamboost::model::Model, stream: &checkpoint::StreamState,
    data: &streamboost::core::Dataset,
) -> usize {
    let predicted = strings(out, "p");
    let mut row = 0;
    let mut p = vec![0.0; model.n_classes()];
    for batch in out {
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
    row
}

#[tokio::test]
async fn a_checkpoint_is_a_table() {
    let dir = tempfile::tempdir().unwrap();
    let ck = replay_saving(dir.path(), &["--algo", "ada-olm", "--learners", "5"]);
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

/// `car_with_ts`, its rows in a seeded random order: the plan must sort them by `ts`.
pub(crate) fn shuffled(car: &Path) -> PathBuf {
    use rand::SeedableRng;
    use rand::seq::SliceRandom;
    let text = std::fs::read_to_string(car).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    let header = lines.remove(0);
    lines.shuffle(&mut rand_chacha::ChaCha8Rng::seed_from_u64(5));
    let path = car.with_file_name("car_shuffled.csv");
    std::fs::write(&path, format!("{header}\n{}\n", lines.join("\n"))).unwrap();
    path
}

pub(crate) async fn explain(ctx: &SessionContext, sql: &str) -> String {
    let plan = query(ctx, &format!("EXPLAIN {sql}")).await;
    pretty_format_batches(&plan).unwrap().to_string()
}

#[tokio::test]
async fn boost_score_sorts_by_ts_and_equals_replay_and_the_window() {
    let dir = tempfile::tempdir().unwrap();
    let (registry, replayed) = fresh_registry(dir.path());
    let car = shuffled(&car_with_ts(dir.path()));
    let ctx = session(&registry, &car).await;

    let sql = "SELECT ts, label, predicted_label, predicted_label_probs \
               FROM boost_score('m', (SELECT * FROM car), 'label', 'ts') ORDER BY ts";
    let plan = explain(&ctx, sql).await;
    assert!(
        plan.contains("BoostScore: model=m, label=label, order_by=ts"),
        "{plan}"
    );
    assert!(plan.contains("BoostScoreExec"), "{plan}");
    // The file is not known to be sorted: the planner sorts below the node.
    let below = &plan[plan.find("BoostScoreExec").unwrap()..];
    assert!(
        below.contains("SortExec: expr=[ts@0 ASC NULLS LAST]"),
        "{plan}"
    );

    let out = query(&ctx, sql).await;
    assert_eq!(strings(&out, "predicted_label"), replayed);
    let probs = out[0].column_by_name("predicted_label_probs").unwrap();
    assert_eq!(
        probs.as_fixed_size_list().value_length(),
        4,
        "one probability per class"
    );

    let window = query(&ctx, &prequential_over_car()).await;
    assert_eq!(strings(&window, "p"), replayed);

    // A query never changes the registered model.
    assert_eq!(
        strings(&query(&ctx, sql).await, "predicted_label"),
        replayed
    );
}

/// `boost_score` as a table (what crosses DataFusion's FFI to datafusion-python): the rows
/// of its input, sorted by `ts` in the provider's own plan, scored as the plan node scores
/// them, again at each query.
#[tokio::test]
async fn boost_score_as_a_table_equals_the_plan_node() {
    use streamboost::sql::score::ScoredTable;

    let dir = tempfile::tempdir().unwrap();
    let (registry, replayed) = fresh_registry(dir.path());
    let car = shuffled(&car_with_ts(dir.path()));
    let ctx = session(&registry, &car).await;
    let rows = query(&ctx, "SELECT * FROM car").await;
    let input = rows[0].schema();
    let table = ScoredTable::new(&registry, "m", input.clone(), rows, "label", "ts").unwrap();
    ctx.register_table("scored", std::sync::Arc::new(table))
        .unwrap();
    let sql = "SELECT ts, predicted_label FROM scored ORDER BY ts";
    assert_eq!(
        strings(&query(&ctx, sql).await, "predicted_label"),
        replayed
    );
    assert_eq!(
        strings(&query(&ctx, sql).await, "predicted_label"),
        replayed
    );
    let schema = query(&ctx, "SELECT * FROM scored LIMIT 1").await[0].schema();
    assert!(schema.index_of("predicted_label_probs").is_ok());
    let err = ScoredTable::new(&registry, "m", schema, vec![], "label", "when").unwrap_err();
    assert!(err.to_string().contains("when"), "{err}");
    assert!(ScoredTable::new(&registry, "nope", input, vec![], "label", "ts").is_err());
}

#[tokio::test]
async fn boost_score_with_a_key_equals_partition_by() {
    let dir = tempfile::tempdir().unwrap();
    let (registry, _) = fresh_registry(dir.path());
    let ctx = session(&registry, &shuffled(&car_with_ts(dir.path()))).await;

    let sql = "SELECT ts, safety, predicted_label \
               FROM boost_score('m', (SELECT * FROM car), 'label', 'ts', 'safety') ORDER BY ts";
    let plan = explain(&ctx, sql).await;
    let below = &plan[plan.find("BoostScoreExec").unwrap()..];
    assert!(
        below.contains("RepartitionExec: partitioning=Hash([safety@"),
        "{plan}"
    );
    assert!(
        below.contains("SortExec: expr=[ts@0 ASC NULLS LAST]"),
        "{plan}"
    );

    let scored = query(&ctx, sql).await;
    // The key is not a feature: the window gets the other five.
    let window = query(
        &ctx,
        "SELECT ts, safety, boost_prequential('m', label, buying, maint, doors, persons, lug_boot) \
         OVER (PARTITION BY safety ORDER BY ts) AS predicted_label FROM car ORDER BY ts",
    )
    .await;
    assert_eq!(strings(&scored, "safety"), strings(&window, "safety"));
    let (a, b) = (
        strings(&scored, "predicted_label"),
        strings(&window, "predicted_label"),
    );
    assert_eq!(a.len(), 1728);
    assert_eq!(a, b);
}

#[tokio::test]
async fn boost_score_refuses_bad_arguments_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let (registry, _) = fresh_registry(dir.path());
    let ctx = session(&registry, &car_with_ts(dir.path())).await;
    for (sql, says) in [
        (
            "SELECT * FROM boost_score('nope', (SELECT * FROM car), 'label', 'ts')",
            "no model named `nope`",
        ),
        (
            "SELECT * FROM boost_score('m', (SELECT * FROM car), 'label', 'when')",
            "no ordering column `when`",
        ),
        (
            "SELECT * FROM boost_score('m', (SELECT * FROM car), 'class', 'ts')",
            "no label column `class`",
        ),
        (
            "SELECT * FROM boost_score('m', (SELECT * FROM car), 'label', 'ts', 'region')",
            "no key column `region`",
        ),
        (
            "SELECT * FROM boost_score('m', car, 'label', 'ts')",
            "must be a subquery",
        ),
        (
            "SELECT * FROM boost_score('m', (SELECT * FROM car), 'label')",
            "takes 4 or 5 arguments",
        ),
    ] {
        let err = ctx.sql(sql).await.unwrap_err().to_string();
        assert!(err.contains(says), "{sql}: {err}");
    }
}

/// An endless stream of car rows in `ts` order, declared sorted by `ts`.
#[derive(Debug)]
struct EndlessCar {
    schema: datafusion::arrow::datatypes::SchemaRef,
    rows: RecordBatch,
}

impl datafusion::physical_plan::streaming::PartitionStream for EndlessCar {
    fn schema(&self) -> &datafusion::arrow::datatypes::SchemaRef {
        &self.schema
    }

    fn execute(
        &self, _ctx: std::sync::Arc<datafusion::execution::TaskContext>,
    ) -> datafusion::physical_plan::SendableRecordBatchStream {
        use datafusion::arrow::array::Int64Array;
        let rows = self.rows.clone();
        let n = rows.num_rows() as i64;
        let batches = (0i64..).flat_map(move |lap| {
            let rows = rows.clone();
            (0..n).step_by(100).map(move |start| {
                let len = (n - start).min(100) as usize;
                let mut part = rows.slice(start as usize, len);
                let ts = Int64Array::from_iter_values(
                    (start..start + len as i64).map(|i| lap * n + i + 1),
                );
                let mut columns = part.columns().to_vec();
                columns[0] = std::sync::Arc::new(ts);
                part = RecordBatch::try_new(part.schema(), columns).unwrap();
                Ok(part)
            })
        });
        Box::pin(
            datafusion::physical_plan::stream::RecordBatchStreamAdapter::new(
                self.schema.clone(),
                futures::stream::iter(batches),
            ),
        )
    }
}

#[tokio::test]
async fn both_spellings_stream_an_unbounded_source() {
    use datafusion::catalog::streaming::StreamingTable;
    use datafusion::prelude::col;
    use futures::StreamExt;

    let dir = tempfile::tempdir().unwrap();
    let (registry, replayed) = fresh_registry(dir.path());
    let ctx = session(&registry, &car_with_ts(dir.path())).await;
    let rows = query(&ctx, "SELECT * FROM car ORDER BY ts").await;
    let rows = datafusion::arrow::compute::concat_batches(&rows[0].schema(), &rows).unwrap();
    let schema = rows.schema();
    let table = StreamingTable::try_new(
        schema.clone(),
        vec![std::sync::Arc::new(EndlessCar { schema, rows })],
    )
    .unwrap()
    .with_infinite_table(true)
    .with_sort_order(vec![col("ts").sort(true, false)]);
    ctx.register_table("events", std::sync::Arc::new(table))
        .unwrap();

    for (sql, column) in [
        (
            "SELECT ts, predicted_label FROM boost_score('m', (SELECT * FROM events), 'label', 'ts')"
                .to_string(),
            "predicted_label",
        ),
        (
            format!(
                "SELECT ts, boost_prequential('m', label, {FEATURES}) OVER (ORDER BY ts) AS p \
                 FROM events"
            ),
            "p",
        ),
    ] {
        let plan = explain(&ctx, &sql).await;
        assert!(!plan.contains("SortExec"), "the source is declared sorted: {plan}");
        // Three laps of the endless stream, then stop: the rows come as they are scored.
        let mut stream = ctx.sql(&sql).await.unwrap().execute_stream().await.unwrap();
        let mut got = Vec::new();
        while got.len() < 3 * 1728 {
            let batch = stream.next().await.unwrap().unwrap();
            got.extend(strings(&[batch], column));
        }
        drop(stream);
        assert_eq!(got[..1728], replayed[..], "{sql}");
    }
}

#[tokio::test]
async fn boost_score_ranks_a_multi_label_stream() {
    use streamboost::boost::ranking::AdaOlmrConfig;
    use streamboost::weak::HoeffdingTreeConfig;
    let dir = tempfile::tempdir().unwrap();
    let data = streamboost::synth::mixed_multi_label(400, 0.05, 0.0, 8);
    let plain = dir.path().join("ml.csv");
    crate::multi_label::write_csv(&data, &plain, 0..400);
    let mut with_ts = String::new();
    for (i, line) in std::fs::read_to_string(&plain).unwrap().lines().enumerate() {
        with_ts += &if i == 0 {
            format!("ts,{line}\n")
        } else {
            format!("{i},{line}\n")
        };
    }
    let path = dir.path().join("ml_ts.csv");
    std::fs::write(&path, with_ts).unwrap();

    let config = ModelConfig::AdaOlmr(AdaOlmrConfig {
        n_learners: 5,
        ..AdaOlmrConfig::new(HoeffdingTreeConfig::jgt_paper().into())
    });
    let labels: Vec<String> = data.spec().classes.names().to_vec();
    let registry = ModelRegistry::new();
    registry
        .register_config("ml", config.clone(), labels, 9)
        .unwrap();
    let ctx = SessionContext::new();
    register_all(&ctx, &registry).unwrap();
    ctx.register_csv("t", path.to_str().unwrap(), CsvReadOptions::new())
        .await
        .unwrap();
    let out = query(
        &ctx,
        "SELECT ts, label_scores, predicted_label \
         FROM boost_score('ml', (SELECT * FROM t), 'label', 'ts') ORDER BY ts",
    )
    .await;

    let stream = load_stream(&[plain], "label", &Encodings::default()).unwrap();
    let mut model = streamboost::Config::build(&config, stream.spec(), 9).unwrap();
    let mut expected = Vec::new();
    Prequential::default()
        .run_ranking(&mut model, &stream, None, |row, _| {
            expected.push(row.scores.to_vec());
            Ok(())
        })
        .unwrap();
    let mut r = 0;
    for batch in &out {
        let scores = batch
            .column_by_name("label_scores")
            .unwrap()
            .as_fixed_size_list();
        assert_eq!(scores.value_length(), 5);
        for i in 0..batch.num_rows() {
            let got = scores.value(i);
            assert_eq!(
                got.as_primitive::<Float64Type>().values(),
                &expected[r][..],
                "row {r}"
            );
            r += 1;
        }
    }
    assert_eq!(r, 400);

    // The same stream with its label sets as one list column: the same scores.
    let table = read_table(&path).unwrap();
    assert_eq!(table.batches().unwrap().count(), 1);
    let lists = crate::multi_label::as_label_lists(&table.to_batch().unwrap(), &[]);
    ctx.register_batch("tl", lists).unwrap();
    let by_lists = query(
        &ctx,
        "SELECT ts, label_scores, predicted_label \
         FROM boost_score('ml', (SELECT * FROM tl), 'label', 'ts') ORDER BY ts",
    )
    .await;
    let column = |batches: &[RecordBatch], name: &str| {
        let arrays: Vec<_> = batches
            .iter()
            .map(|b| b.column_by_name(name).unwrap().clone())
            .collect();
        let refs: Vec<&dyn Array> = arrays.iter().map(|a| a.as_ref()).collect();
        datafusion::arrow::compute::concat(&refs).unwrap()
    };
    for name in ["label_scores", "predicted_label"] {
        let (by_flags, by_lists) = (column(&out, name), column(&by_lists, name));
        assert_eq!(by_flags.to_data(), by_lists.to_data(), "{name}");
    }
}

/// A CSV result with a list column (the per-class probabilities of `boost_predict_proba`)
/// writes each list as text in its cell, rather than failing after the query ran.
#[test]
fn sql_output_to_csv_writes_list_columns_as_text() {
    let dir = tempfile::tempdir().unwrap();
    let (ck, out) = (
        replay_saving(dir.path(), &["--learners", "3"]),
        dir.path().join("probs.csv"),
    );
    let car = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/car.csv");
    streamboost()
        .arg("sql")
        .arg(format!("--model=m={}", ck.display()))
        .arg(format!("--table=car={}", car.display()))
        .arg(format!("--output={}", out.display()))
        .arg(
            "SELECT label, boost_predict_proba('m', buying, maint, doors, persons, lug_boot, \
             safety) AS probs FROM car LIMIT 3",
        )
        .assert()
        .success();
    let text = std::fs::read_to_string(&out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert_eq!(lines[0], "label,probs");
    for line in &lines[1..] {
        let (_, cell) = line.split_once(',').unwrap();
        let list = cell.trim_matches('"').trim_matches(['[', ']']);
        let p: Vec<f64> = list.split(", ").map(|v| v.parse().unwrap()).collect();
        assert_eq!(p.len(), 4, "{line}");
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-9, "{line}");
    }
}

/// A fresh model's classes can be learnt from a registered table's column instead of typed:
/// the same classes, so the same predictions; a table that is not registered is an error
/// naming the model file.
#[test]
fn a_fresh_models_classes_can_come_from_a_table() {
    use predicates::prelude::*;
    let dir = tempfile::tempdir().unwrap();
    let car = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/car.csv");
    let query = "SELECT ts, predicted_label FROM boost_score('fresh', \
                 (SELECT row_number() OVER () AS ts, * FROM car), 'label', 'ts') ORDER BY ts";
    let mut outputs = Vec::new();
    for (name, classes) in [
        ("typed", r#"["acc", "good", "unacc", "vgood"]"#),
        ("learnt", r#"{"table": "car", "column": "label"}"#),
    ] {
        let model = dir.path().join(format!("{name}.json"));
        let config = r#"{"algorithm": "ada-olm", "n_learners": 5}"#;
        std::fs::write(
            &model,
            format!(r#"{{"config": {config}, "classes": {classes}}}"#),
        )
        .unwrap();
        let out = dir.path().join(format!("{name}.csv"));
        streamboost()
            .arg("sql")
            .arg(format!("--table=car={}", car.display()))
            .arg(format!("--model=fresh={}", model.display()))
            .arg(format!("--output={}", out.display()))
            .arg(query)
            .assert()
            .success();
        outputs.push(std::fs::read_to_string(out).unwrap());
    }
    assert_eq!(outputs[0].lines().count(), 1729);
    assert_eq!(outputs[0], outputs[1]);
    let model = dir.path().join("elsewhere.json");
    std::fs::write(
        &model,
        r#"{"config": {"algorithm": "ada-olm"}, "classes": {"table": "nope", "column": "label"}}"#,
    )
    .unwrap();
    streamboost()
        .args(["sql", "SELECT 1"])
        .arg(format!("--model=fresh={}", model.display()))
        .assert()
        .failure()
        .stderr(predicates::str::contains("elsewhere.json").and(predicates::str::contains("nope")));
}

/// A binary built without the `ballista` feature says how to get a Ballista client.
#[cfg(not(feature = "ballista"))]
#[test]
fn sql_on_a_cluster_needs_the_ballista_build() {
    streamboost()
        .args(["sql", "--ballista", "df://localhost:50050", "SELECT 1"])
        .assert()
        .failure()
        .stderr(predicates::str::contains("--features ballista"));
}

/// A registry with model `m`, fresh per query as the replay's in `dir` (seed 3), and the
/// replay's predictions.
pub(crate) fn fresh_registry(dir: &Path) -> (ModelRegistry, Vec<String>) {
    let (config, classes, replayed) = replay_config(dir);
    let registry = ModelRegistry::new();
    registry.register_config("m", config, classes, 3).unwrap();
    (registry, replayed)
}

/// `boost_score` of live model `m` over the rows of table `car` in `range`, in `ts` order,
/// with `key` (`""` or `, 'k'`) after the time column.
fn live_score(range: &str, key: &str) -> String {
    format!(
        "SELECT ts, predicted_label FROM boost_score('m', (SELECT * FROM car WHERE {range}), \
         'label', 'ts'{key}) ORDER BY ts"
    )
}

/// A registry with live model `m` under `policy`, fresh as `model` (a [`replay_config`]).
pub(crate) fn live_registry(
    model: &(ModelConfig, Vec<String>, Vec<String>),
    policy: streamboost::runtime::live::CheckpointPolicy,
) -> ModelRegistry {
    let registry = ModelRegistry::new();
    let fresh = (model.0.clone(), model.1.clone(), 1);
    registry.register_live("m", policy, Some(fresh)).unwrap();
    registry
}

/// A live model learns across queries: two `boost_score` queries over the halves of a
/// stream predict what one query over the whole stream predicts, the checkpoint ends the
/// same, a query over rows already learnt learns nothing more, and a second trainer is
/// refused while one runs.
#[tokio::test]
async fn a_live_model_learns_across_queries_exactly_once() {
    use streamboost::runtime::live::CheckpointPolicy;
    let dir = tempfile::tempdir().unwrap();
    let car = car_with_ts(dir.path());
    let model = replay_config(dir.path());
    let score = |range: &str| live_score(range, "");
    let live = |path: &Path, every: Option<u64>| {
        live_registry(
            &model,
            CheckpointPolicy {
                every,
                ..CheckpointPolicy::at_end(path)
            },
        )
    };

    let whole_path = dir.path().join("whole.parquet");
    let registry = live(&whole_path, None);
    let ctx = session(&registry, &car).await;
    let whole = predicted(&ctx, &score("ts >= 1")).await;
    assert_eq!(whole.len(), 1728);

    let halves_path = dir.path().join("halves.parquet");
    let registry = live(&halves_path, Some(100));
    let ctx = session(&registry, &car).await;
    let mut halves = predicted(&ctx, &score("ts <= 864")).await;
    // A new registry, as a restarted process would have: the file is the state.
    let registry = live(&halves_path, Some(100));
    let ctx = session(&registry, &car).await;
    halves.extend(predicted(&ctx, &score("ts > 864")).await);
    assert_eq!(
        halves, whole,
        "two queries over the halves predict as one over the whole"
    );
    let (m1, s1) = checkpoint::load(&whole_path).unwrap();
    let (m2, s2) = checkpoint::load(&halves_path).unwrap();
    assert_eq!(
        serde_json::to_string(&m1).unwrap(),
        serde_json::to_string(&m2).unwrap()
    );
    assert_eq!(s1.stats, s2.stats);
    assert_eq!(s2.position.unwrap().ts, Some(1728));

    // The whole stream again: every row scored, none learnt a second time.
    let models = query(
        &ctx,
        "SELECT live, rows_learnt, learnt_up_to_ts FROM boost_models() WHERE name = 'm'",
    )
    .await;
    assert_eq!(models[0].num_rows(), 1);
    let again = query(&ctx, &score("ts >= 1")).await;
    assert_eq!(again.iter().map(RecordBatch::num_rows).sum::<usize>(), 1728);
    let (m3, s3) = checkpoint::load(&halves_path).unwrap();
    assert_eq!(s3.stats.rows_learnt, s2.stats.rows_learnt);
    assert_eq!(s3.stats.rows_seen, 2 * 1728);
    // Rows learnt before are scored by the model as it is: nothing in it changes.
    assert_eq!(
        serde_json::to_string(&m3).unwrap(),
        serde_json::to_string(&m2).unwrap()
    );

    // One trainer at a time: a query holding the model keeps a second one out.
    let mut first = ctx
        .sql(&score("ts >= 1"))
        .await
        .unwrap()
        .execute_stream()
        .await
        .unwrap();
    let second = ctx.sql(&score("ts >= 1")).await.unwrap().collect().await;
    let err = second.unwrap_err().to_string();
    assert!(err.contains("being trained by another query"), "{err}");
    use futures::StreamExt;
    while let Some(batch) = first.next().await {
        batch.unwrap();
    }
    drop(first);

    // A model committed as one model is not trained per key: refused, the checkpoint untouched.
    let before = std::fs::read(&halves_path).unwrap();
    let keyed = ctx
        .sql("SELECT * FROM boost_score('m', (SELECT * FROM car), 'label', 'ts', 'safety')")
        .await
        .unwrap()
        .collect()
        .await;
    let err = keyed.unwrap_err().to_string();
    assert!(err.contains("is one model"), "{err}");
    assert_eq!(std::fs::read(&halves_path).unwrap(), before);
}

/// A keyed live model of 1,000 keys, trained on two partitions: two queries over the halves
/// of a stream, within a memory budget that holds a tenth of the keys, predict what one
/// query over the whole without a budget does, and every key's checkpoint ends the same.
#[tokio::test]
async fn a_keyed_live_model_learns_across_queries_exactly_once() {
    use streamboost::runtime::KeyedStore;
    use streamboost::runtime::live::CheckpointPolicy;
    let dir = tempfile::tempdir().unwrap();
    // The car stream six times over (10,368 rows), key = ts mod 1000: about ten rows a key.
    let car = std::fs::read_to_string(car_with_ts(dir.path())).unwrap();
    let mut lines = car.lines();
    let mut text = format!("{},k\n", lines.next().unwrap());
    let rows: Vec<&str> = lines.collect();
    for ts in 1..=6 * rows.len() {
        let row = rows[(ts - 1) % rows.len()];
        let rest = row.split_once(',').unwrap().1;
        text += &format!("{ts},{rest},k{}\n", ts % 1000);
    }
    let stream = dir.path().join("stream.csv");
    std::fs::write(&stream, text).unwrap();
    let model = replay_config(dir.path());
    let score = |range: &str| live_score(range, ", 'k'");
    let live = |path: &Path, memory_budget: Option<u64>| {
        let policy = CheckpointPolicy {
            memory_budget,
            ..CheckpointPolicy::at_end(path)
        };
        live_registry(&model, policy)
    };
    let whole_dir = dir.path().join("whole.keys");
    let ctx = session(&live(&whole_dir, None), &stream).await;
    let whole = predicted(&ctx, &score("ts >= 1")).await;
    assert_eq!(whole.len(), 10_368);

    // The halves within a budget that holds about a tenth of the keys: each batch's keys
    // are spilled and loaded back (the budget shared by the two partitions).
    let halves_dir = dir.path().join("halves.keys");
    let budget = Some(2_000_000);
    let ctx = session(&live(&halves_dir, budget), &stream).await;
    let mut halves = predicted(&ctx, &score("ts <= 5000")).await;
    // A new registry, as a restarted process would have: the directory is the state.
    let registry = live(&halves_dir, budget);
    let ctx = session(&registry, &stream).await;
    halves.extend(predicted(&ctx, &score("ts > 5000")).await);
    assert_eq!(
        halves, whole,
        "two queries over the halves predict as one over the whole"
    );

    let (a, b) = (
        KeyedStore::open(&whole_dir).unwrap(),
        KeyedStore::open(&halves_dir).unwrap(),
    );
    assert_eq!(a.manifest().keys.len(), 1000);
    let counts = |s: &KeyedStore| -> Vec<_> {
        let keys = s.manifest().keys.iter();
        keys.map(|e| (e.key.clone(), e.rows_seen, e.rows_learnt, e.ts))
            .collect()
    };
    assert_eq!(counts(&a), counts(&b), "every key learnt the same rows");
    // Every key's model, for one key in 25 (a debug build loads a checkpoint in ~10 ms).
    for entry in a.manifest().keys.iter().step_by(25) {
        let key = entry.key.as_deref();
        let (m1, s1) = a.load(key).unwrap().unwrap();
        let (m2, s2) = b.load(key).unwrap().unwrap();
        assert_eq!(
            serde_json::to_string(&m1).unwrap(),
            serde_json::to_string(&m2).unwrap(),
            "key {key:?}"
        );
        assert_eq!(s1.stats, s2.stats);
        assert_eq!(s1.position.unwrap().ts, s2.position.unwrap().ts);
    }
    let models = query(
        &ctx,
        "SELECT keys, rows_seen, rows_learnt, resident_keys, spilled_keys FROM boost_models() \
         WHERE name = 'm'",
    )
    .await;
    let column = |i: usize| {
        models[0]
            .column(i)
            .as_primitive::<datafusion::arrow::datatypes::UInt64Type>()
            .value(0)
    };
    assert_eq!((column(0), column(1), column(2)), (1000, 10_368, 10_368));
    // Between queries no key is in memory, and the queries' last commits took their spills.
    assert_eq!((column(3), column(4)), (0, 0));
    // A keyed model is not served by boost_predict, and not trained without its key.
    let err = query_error(
        &ctx,
        &format!("SELECT boost_predict('m', {FEATURES}) FROM car"),
    )
    .await;
    assert!(err.contains("one model per key"), "{err}");
}

/// A batch model (`streamboost train`) is served by `boost_predict` like any checkpoint:
/// every row's label and probabilities are the loaded model's own. A fresh batch model is
/// refused when registered, with the command that trains it.
#[tokio::test]
async fn boost_predict_serves_a_batch_model() {
    let dir = tempfile::tempdir().unwrap();
    let car = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/car.csv");
    let ck = dir.path().join("mh.parquet");
    streamboost()
        .args([
            "train",
            "--algo",
            "adaboost-mh",
            "--rounds",
            "40",
            "-q",
            "--input",
        ])
        .arg(&car)
        .flag("--save", &ck)
        .assert()
        .success();
    let registry = ModelRegistry::new();
    registry.load_checkpoint("mh", &ck).unwrap();
    let ctx = session(&registry, &car_with_ts(dir.path())).await;
    let out = query(
        &ctx,
        &format!(
            "SELECT boost_predict('mh', {FEATURES}) AS p, \
             boost_predict_proba('mh', {FEATURES}) AS probs FROM car ORDER BY ts"
        ),
    )
    .await;
    let (model, stream) = checkpoint::load(&ck).unwrap();
    let data = load_stream(&[car], "label", &Encodings::default()).unwrap();
    assert_eq!(scored_as_by(&out, &model, &stream, &data), 1728);
    // Trained on these rows: most are right.
    let right = (0..data.len())
        .filter(|&i| Some(model.predict(data.row(i))) == data.label(i))
        .count();
    assert!(right > 1400, "{right} of 1728");
    let fresh = registry.register_config(
        "fresh",
        ModelConfig::from_json(serde_json::json!({"algorithm": "adaboost-mm"})).unwrap(),
        vec!["acc".into(), "good".into(), "unacc".into(), "vgood".into()],
        1,
    );
    let err = fresh.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(err.contains("streamboost train"), "{err:?}");
}

/// The bundled car as events (`id`, `ts`, the features) and labels (`id`, `label`, `ts`
/// when it arrives, `delay` rows later), in two CSV files.
fn car_events_and_labels(dir: &Path, delay: usize) -> (PathBuf, PathBuf) {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("data/car.csv"))
        .unwrap();
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    let label = header.iter().position(|c| *c == "label").unwrap();
    let (mut events, mut labels) = (String::new(), String::from("id,label,ts\n"));
    for (i, line) in text.lines().enumerate() {
        let mut cells: Vec<&str> = line.split(',').collect();
        let y = cells.remove(label);
        if i == 0 {
            events += &format!("id,ts,{}\n", cells.join(","));
        } else {
            events += &format!("{i},{i},{}\n", cells.join(","));
            labels += &format!("{i},{y},{}\n", i + delay.max(1));
        }
    }
    let paths = (dir.join("events.csv"), dir.join("labels.csv"));
    std::fs::write(&paths.0, events).unwrap();
    std::fs::write(&paths.1, labels).unwrap();
    paths
}

/// `boost_score_delayed` over events and labels in two tables predicts, row for row, what
/// `replay --label-delay N` predicts on the same arrival order; its outcomes score each
/// prediction against its label as the replay's report does.
#[tokio::test]
async fn sql_delayed_labels_equal_replay_under_the_same_delay() {
    let dir = tempfile::tempdir().unwrap();
    let (config, classes, _) = replay_config(dir.path());
    for delay in [1usize, 25] {
        let (report, predictions) = (dir.path().join("r.json"), dir.path().join("p.csv"));
        streamboost()
            .args(flags("replay --learners 10 --seed 3 -q --label-delay"))
            .arg(delay.to_string())
            .flag("--report", &report)
            .flag("--predictions", &predictions)
            .assert()
            .success();
        let replayed = predicted_labels(&predictions);
        let report: serde_json::Value = read_json(&report);

        let registry = ModelRegistry::new();
        registry
            .register_config("m", config.clone(), classes.clone(), 3)
            .unwrap();
        let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(2));
        register_all(&ctx, &registry).unwrap();
        let (events, labels) = car_events_and_labels(dir.path(), delay);
        for (name, path) in [("events", &events), ("labels", &labels)] {
            ctx.register_csv(name, path.to_str().unwrap(), CsvReadOptions::new())
                .await
                .unwrap();
        }
        let call = |last: &str| {
            format!(
                "SELECT * FROM boost_score_delayed('m', (SELECT * FROM events), \
                 (SELECT * FROM labels), 'label', 'id', 'ts'{last}) ORDER BY ts"
            )
        };
        let scored = query(&ctx, &call("")).await;
        assert_eq!(
            strings(&scored, "predicted_label"),
            replayed,
            "delay {delay}"
        );
        let outcomes = query(&ctx, &call(", 'outcomes'")).await;
        let outcome = strings(&outcomes, "outcome");
        assert_eq!(outcome.len(), 1728);
        assert!(outcome.iter().all(|o| o == "learnt"), "every label learnt");
        let correct = count_true(&outcomes, "correct");
        let accuracy = report["cumulative"]["accuracy"].as_f64().unwrap();
        assert!(
            (correct as f64 / 1728.0 - accuracy).abs() < 1e-12,
            "delay {delay}"
        );
    }
}

/// `boost_score_delayed` refuses what it cannot run, at planning time: a missing id column,
/// a wrong last argument.
#[tokio::test]
async fn sql_delayed_labels_refuse_bad_calls() {
    let dir = tempfile::tempdir().unwrap();
    let (registry, _) = fresh_registry(dir.path());
    let ctx = SessionContext::new();
    register_all(&ctx, &registry).unwrap();
    let (events, labels) = car_events_and_labels(dir.path(), 5);
    for (name, path) in [("events", &events), ("labels", &labels)] {
        ctx.register_csv(name, path.to_str().unwrap(), CsvReadOptions::new())
            .await
            .unwrap();
    }
    for (sql, message) in [
        (
            "SELECT * FROM boost_score_delayed('m', (SELECT ts, buying FROM events), \
             (SELECT * FROM labels), 'label', 'id', 'ts')",
            "the events have no column `id`",
        ),
        (
            "SELECT * FROM boost_score_delayed('m', (SELECT * FROM events), \
             (SELECT * FROM labels), 'label', 'id', 'ts', 'both')",
            "the last argument is 'outcomes'",
        ),
    ] {
        let err = ctx.sql(sql).await.unwrap_err().to_string();
        assert!(err.contains(message), "{err}");
    }
}
