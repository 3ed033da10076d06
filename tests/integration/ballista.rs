//! Ballista: `boost_score` (one model, and one per key) and `boost_predict` on an in-process
//! standalone cluster (a scheduler and an executor in this process, plans crossing between
//! them as protobuf through the streamboost codecs) give what one `SessionContext` gives.

use std::path::{Path, PathBuf};

use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::dataframe::DataFrameWriteOptions;
use datafusion::prelude::{CsvReadOptions, ParquetReadOptions, SessionContext};
use streamboost::sql::ModelRegistry;
use streamboost::sql::distributed;

use crate::sql::{
    car_with_ts, explain, fresh_registry, live_registry, query, query_error, replay_config,
    replay_saving, session, shuffled,
};

const FEATURES: &str = "buying, maint, doors, persons, lug_boot, safety";

/// The bundled car rows with a `ts` column, shuffled, as a Parquet file: a table a
/// cluster's executors read by path.
async fn car_parquet(dir: &Path) -> PathBuf {
    let csv = shuffled(&car_with_ts(dir));
    let ctx = SessionContext::new();
    let out = dir.join("car_rows.parquet");
    ctx.read_csv(csv.to_str().unwrap(), CsvReadOptions::new())
        .await
        .unwrap()
        .write_parquet(
            out.to_str().unwrap(),
            DataFrameWriteOptions::new().with_single_file_output(true),
            None,
        )
        .await
        .unwrap();
    out
}

async fn rows(ctx: &SessionContext, sql: &str) -> String {
    pretty_format_batches(&query(ctx, sql).await)
        .unwrap()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_standalone_cluster_scores_as_one_machine() {
    let dir = tempfile::tempdir().unwrap();
    let (registry, _) = fresh_registry(dir.path());
    let ck = replay_saving(
        dir.path(),
        &["--algo", "ada-olm", "--learners", "5", "--seed", "2"],
    );
    registry.load_checkpoint("trained", &ck).unwrap();
    let car = car_parquet(dir.path()).await;

    let local = session(&registry, &car_with_ts(dir.path())).await;
    local.deregister_table("car").unwrap();
    local
        .register_parquet("car", car.to_str().unwrap(), ParquetReadOptions::new())
        .await
        .unwrap();
    let cluster = distributed::standalone(&registry, 2).await.unwrap();
    cluster
        .register_parquet("car", car.to_str().unwrap(), ParquetReadOptions::new())
        .await
        .unwrap();

    let unkeyed = "SELECT ts, label, predicted_label, predicted_label_probs \
                   FROM boost_score('m', (SELECT * FROM car), 'label', 'ts') ORDER BY ts";
    let keyed = "SELECT ts, safety, predicted_label, predicted_label_probs \
                 FROM boost_score('m', (SELECT * FROM car), 'label', 'ts', 'safety') ORDER BY ts";
    let predict = format!(
        "SELECT ts, boost_predict('trained', {FEATURES}) AS p, \
         boost_predict_proba('trained', {FEATURES}) AS probs FROM car ORDER BY ts"
    );
    let checkpointed = "SELECT ts, predicted_label FROM boost_score('trained', \
                        (SELECT * FROM car), 'label', 'ts', 'safety') ORDER BY ts";
    for sql in [unkeyed, keyed, predict.as_str(), checkpointed] {
        let (one, many) = (rows(&local, sql).await, rows(&cluster, sql).await);
        assert_eq!(one.lines().count(), 1728 + 4, "{sql}");
        assert_eq!(one, many, "{sql}");
    }

    // One model takes one partition, so one executor; keyed models spread by hash.
    let plan = explain(&cluster, unkeyed).await;
    assert!(
        plan.contains("one model: single partition, one executor"),
        "{plan}"
    );
    let plan = explain(&cluster, keyed).await;
    assert!(plan.contains("partitioned by hash of safety"), "{plan}");
}

/// A live model commits from one process: a cluster refuses it by name, and the delayed
/// join, which pairs two streams on one machine, likewise.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_refuses_what_must_run_on_one_machine() {
    let dir = tempfile::tempdir().unwrap();
    let model = replay_config(dir.path());
    let policy = streamboost::runtime::live::CheckpointPolicy::new(dir.path().join("live.parquet"));
    let registry: ModelRegistry = live_registry(&model, policy);
    let car = car_parquet(dir.path()).await;
    let cluster = distributed::standalone(&registry, 2).await.unwrap();
    cluster
        .register_parquet("car", car.to_str().unwrap(), ParquetReadOptions::new())
        .await
        .unwrap();
    let sql = "SELECT * FROM boost_score('m', (SELECT * FROM car), 'label', 'ts')";
    let err = query_error(&cluster, sql).await;
    assert!(err.contains("`m` is a live model"), "{err}");
    assert!(
        !dir.path().join("live.parquet").exists(),
        "nothing was committed"
    );
}
