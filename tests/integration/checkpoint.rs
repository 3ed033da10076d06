//! Checkpoints: bit-identical resume, refusal of damaged files, crash safety.

use std::path::{Path, PathBuf};

use arrow::record_batch::RecordBatch;
use streamboost::boost::multiclass::AdaBoostOlmConfig;
use streamboost::boost::{VoteRule, WeightScale};
use streamboost::checkpoint::{self, StreamState, partial_files};
use streamboost::columnar::{Encodings, load_stream};
use streamboost::core::Dataset;
use streamboost::eval::Prequential;
use streamboost::model::{Model, ModelConfig};
use streamboost::runtime::OperatorStats;
use streamboost::weak::HoeffdingTreeConfig;
use streamboost::{Config, Error, synth};

fn bundled_car() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/car.csv")
}

fn booster(n: usize, tree: HoeffdingTreeConfig) -> ModelConfig {
    ModelConfig::AdaOlm(AdaBoostOlmConfig {
        n_learners: n,
        weight_scale: WeightScale::UniformRandom(5.0, 200.0),
        ..AdaBoostOlmConfig::new(tree.into())
    })
}

fn state(config: &ModelConfig, data: &Dataset, rows: u64) -> StreamState {
    StreamState {
        config: config.clone(),
        spec: data.spec().clone(),
        encodings: Encodings::default(),
        label: "label".into(),
        stats: OperatorStats {
            rows_seen: rows,
            rows_learnt: rows,
            unknown_labels: 0,
        },
        position: None,
        delayed: None,
    }
}

/// Predictions and probabilities of `rows` replayed through `model`.
fn replay(model: &mut Model, data: &Dataset, rows: &[usize]) -> Vec<(usize, Vec<u64>)> {
    let mut out = Vec::new();
    Prequential::default()
        .run(model, data, Some(rows), |o| {
            out.push((o.predicted, o.proba.iter().map(|p| p.to_bits()).collect()))
        })
        .unwrap();
    out
}

/// Uninterrupted, saved-and-continued and saved-loaded-and-continued runs agree bit for bit.
fn assert_resume_is_exact(config: &ModelConfig, data: &Dataset) {
    let order: Vec<usize> = (0..data.len()).collect();
    let half = data.len() / 2;
    let mut uninterrupted = crate::contract::ready(config, data, 5);
    let expected = replay(&mut uninterrupted, data, &order);

    let mut model = crate::contract::ready(config, data, 5);
    let mut got = replay(&mut model, data, &order[..half]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("model.parquet");
    let meta = checkpoint::save(&path, &mut model, &state(config, data, half as u64)).unwrap();
    assert_eq!(meta.rows_seen, half as u64);
    let (mut loaded, stream) = checkpoint::load(&path).unwrap();
    assert_eq!(stream.spec, *data.spec());
    assert_eq!(stream.config, *config);

    // The saved model goes on as if nothing happened, and so does the loaded one.
    let continued = replay(&mut model, data, &order[half..]);
    let resumed = replay(&mut loaded, data, &order[half..]);
    got.extend(resumed.iter().cloned());
    assert_eq!(continued, resumed);
    assert_eq!(got.len(), expected.len());
    let first_difference = got.iter().zip(&expected).position(|(a, b)| a != b);
    assert_eq!(first_difference, None, "{config}");
}

#[test]
fn resume_is_bit_identical_on_car() {
    let data = load_stream(&[bundled_car()], "label", &Encodings::default()).unwrap();
    assert_resume_is_exact(&booster(20, HoeffdingTreeConfig::jgt_paper()), &data);
}

#[test]
fn resume_is_bit_identical_under_unit_mean_weight_scales() {
    let data = load_stream(&[bundled_car()], "label", &Encodings::default()).unwrap();
    for name in ["ada-olm", "mbbm"] {
        let json = serde_json::json!({"algorithm": name, "n_learners": 8,
            "weight_scale": "unit-mean"});
        let config = ModelConfig::from_json(json).unwrap();
        assert_resume_is_exact(&config, &data);
    }
}

#[test]
fn resume_is_bit_identical_for_online_mbbm() {
    let data = load_stream(&[bundled_car()], "label", &Encodings::default()).unwrap();
    for vote_rule in [VoteRule::Argmax, VoteRule::ExpectedCost] {
        let config = ModelConfig::Mbbm(streamboost::boost::multiclass::OnlineMbbmConfig {
            n_learners: 12,
            vote_rule,
            ..streamboost::boost::multiclass::OnlineMbbmConfig::new(
                HoeffdingTreeConfig::jgt_paper().into(),
            )
        });
        assert_resume_is_exact(&config, &data);
    }
}

#[test]
fn resume_is_bit_identical_with_numeric_missing_and_naive_bayes_leaves() {
    // Gaussian observers, missing values, NB-adaptive leaves and their bookkeeping.
    let data = synth::mixed(3000, 0.1, 0.05, 9);
    let tree = HoeffdingTreeConfig {
        grace_period: 50.0,
        ..HoeffdingTreeConfig::default()
    };
    assert_resume_is_exact(&ModelConfig::Hoeffding(tree.clone()), &data);
    assert_resume_is_exact(&booster(10, tree), &data);
}

/// A booster of `trees` trees (built with seed 1) after the first `rows` rows of car, with its
/// config and the stream.
fn trained_on_car(trees: usize, rows: usize) -> (ModelConfig, Dataset, Model) {
    let data = load_stream(&[bundled_car()], "label", &Encodings::default()).unwrap();
    let config = booster(trees, HoeffdingTreeConfig::jgt_paper());
    let mut model = config.build(data.spec(), 1).unwrap();
    replay(&mut model, &data, &(0..rows).collect::<Vec<_>>());
    (config, data, model)
}

#[test]
fn a_checkpoint_is_a_queryable_node_table_with_its_metadata() {
    let (config, data, mut model) = trained_on_car(5, 1728);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.parquet");
    let meta = checkpoint::save(&path, &mut model, &state(&config, &data, 1728)).unwrap();
    assert_eq!(checkpoint::read_metadata(&path).unwrap(), meta);
    assert_eq!(meta.format_version, checkpoint::FORMAT_VERSION);
    assert_eq!(meta.algorithm, "ada-olm");
    assert_eq!(meta.trees, 5);
    assert!(partial_files(&path).is_empty());

    // Plain Parquet: one row per node, the trees' sizes add up.
    let table = streamboost::columnar::read_table(&path).unwrap();
    assert_eq!(table.n_rows() as u64, meta.nodes);
    let nodes: usize = model.trees().iter().map(|t| t.n_nodes()).sum();
    assert_eq!(table.n_rows(), nodes);
    let names = crate::common::field_names(&table.schema);
    assert_eq!(&names[..4], ["tree", "node", "depth", "kind"]);
}

/// A saved checkpoint of a small model on car, in a temporary directory of its own: the
/// directory (removed when dropped) and the checkpoint's path.
fn saved_checkpoint() -> (tempfile::TempDir, PathBuf) {
    let (config, data, mut model) = trained_on_car(5, 500);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("good.parquet");
    checkpoint::save(&path, &mut model, &state(&config, &data, 500)).unwrap();
    (dir, path)
}

#[test]
fn truncated_files_are_refused_as_truncated() {
    let (dir, good) = saved_checkpoint();
    let bytes = std::fs::read(&good).unwrap();
    for keep in [0, 7, 100, bytes.len() / 2, bytes.len() - 1] {
        let cut = dir.path().join(format!("cut{keep}.parquet"));
        std::fs::write(&cut, &bytes[..keep]).unwrap();
        let err = checkpoint::load(&cut).unwrap_err();
        assert!(
            matches!(&err, Error::TruncatedCheckpoint { file, .. } if *file == cut),
            "{keep} bytes: {err}"
        );
    }
}

#[test]
fn damaged_bytes_are_refused_as_corrupt() {
    let (dir, good) = saved_checkpoint();
    let bytes = std::fs::read(&good).unwrap();
    let as_json = |m: &Model| serde_json::to_string(m).unwrap();
    let original = as_json(&checkpoint::load(&good).unwrap().0);
    // Every 97th byte position of the file, one at a time, flipped: either the load is
    // refused, or the byte was one no value depends on (page statistics, for instance)
    // and the model loads unchanged.
    let mut refused = 0;
    for at in (4..bytes.len() - 8).step_by(97) {
        let mut damaged = bytes.clone();
        damaged[at] ^= 0x5a;
        let path = dir.path().join("damaged.parquet");
        std::fs::write(&path, &damaged).unwrap();
        match checkpoint::load(&path) {
            Err(Error::CorruptCheckpoint { .. } | Error::TruncatedCheckpoint { .. }) => {
                refused += 1
            }
            Err(e) => panic!("byte {at}: {e}"),
            Ok((model, _)) => assert_eq!(as_json(&model), original, "byte {at}"),
        }
    }
    assert!(refused > 10, "{refused}");
    let not_parquet = dir.path().join("text.parquet");
    std::fs::write(&not_parquet, "tree,node\n0,0\n").unwrap();
    assert!(matches!(
        checkpoint::load(&not_parquet),
        Err(Error::CorruptCheckpoint { .. })
    ));
}

/// Rewrites a checkpoint with one metadata entry changed.
fn with_metadata(from: &Path, to: &Path, key: &str, value: &str) {
    rewrite(
        from,
        to,
        |k, v| if k == key { value.to_string() } else { v },
        |batch| batch,
    );
}

/// Rewrites a checkpoint through `edit_value(key, value)` on its metadata and `edit_batch`
/// on its node table.
fn rewrite(
    from: &Path, to: &Path, edit_value: impl Fn(&str, String) -> String,
    edit_batch: impl Fn(RecordBatch) -> RecordBatch,
) {
    use parquet::arrow::ArrowWriter;
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use parquet::file::metadata::KeyValue;
    use parquet::file::properties::WriterProperties;
    let builder =
        ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(from).unwrap()).unwrap();
    let kv: Vec<KeyValue> = builder
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .unwrap()
        .iter()
        .filter(|e| e.key.starts_with("streamboost."))
        .map(|e| KeyValue::new(e.key.clone(), edit_value(&e.key, e.value.clone().unwrap())))
        .collect();
    let batches: Vec<RecordBatch> = builder
        .build()
        .unwrap()
        .map(|b| edit_batch(b.unwrap()))
        .collect();
    let props = WriterProperties::builder()
        .set_key_value_metadata(Some(kv))
        .build();
    let mut writer = ArrowWriter::try_new(
        std::fs::File::create(to).unwrap(),
        batches[0].schema(),
        Some(props),
    )
    .unwrap();
    for batch in &batches {
        writer.write(batch).unwrap();
    }
    writer.close().unwrap();
}

/// A node table whose columns are not the writer's (a column of another type) is corrupt,
/// said before anything reads its cells (found by `fuzz/`'s checkpoint target).
#[test]
fn a_node_table_of_other_columns_is_refused_as_corrupt() {
    use arrow::compute::cast;
    use arrow::datatypes::{DataType, Field};
    let (dir, good) = saved_checkpoint();
    let path = dir.path().join("retyped.parquet");
    rewrite(
        &good,
        &path,
        |_, v| v,
        |batch| {
            let depth = cast(batch.column_by_name("depth").unwrap(), &DataType::Int32).unwrap();
            let field = Field::new("depth", DataType::Int32, false);
            crate::common::with_column(&batch, field, depth)
        },
    );
    let err = checkpoint::load(&path).unwrap_err();
    assert!(
        matches!(&err, Error::CorruptCheckpoint { detail, .. } if detail.contains("expected columns")),
        "{err}"
    );
}

#[test]
fn future_versions_and_edited_metadata_are_refused() {
    let (dir, good) = saved_checkpoint();
    let path = dir.path().join("edited.parquet");

    // A newer writer that older readers can still read is accepted.
    with_metadata(&good, &path, "streamboost.format_version", "7");
    checkpoint::load(&path).unwrap();

    let newer = checkpoint::FORMAT_VERSION + 1;
    with_metadata(
        &good,
        &path,
        "streamboost.compatible_from",
        &newer.to_string(),
    );
    let err = checkpoint::load(&path).unwrap_err();
    assert!(
        matches!(
            err,
            Error::CheckpointVersion {
                found: checkpoint::FORMAT_VERSION,
                needs,
                ..
            } if needs == newer
        ),
        "{err}"
    );
    assert!(checkpoint::read_metadata(&path).is_err());

    // A metadata field that no longer says what the checksummed state says.
    let rows_seen = checkpoint::read_metadata(&good).unwrap().rows_seen;
    for (key, value) in [
        ("streamboost.rows_seen", (rows_seen + 1000).to_string()),
        ("streamboost.algorithm", "mbbm".to_string()),
        ("streamboost.trees", "3".to_string()),
    ] {
        with_metadata(&good, &path, key, &value);
        let err = checkpoint::load(&path).unwrap_err();
        assert!(
            matches!(&err, Error::CorruptCheckpoint { detail, .. }
                if detail.contains(key) && detail.contains("checksummed state")),
            "{key}: {err}"
        );
    }

    // The state no longer matches its checksum.
    with_metadata(&good, &path, "streamboost.digest", "0000000000000000");
    let err = checkpoint::load(&path).unwrap_err();
    assert!(
        matches!(&err, Error::CorruptCheckpoint { detail, .. } if detail.contains("checksum")),
        "{err}"
    );
}

/// Resuming in a fresh process, crash safety, and inputs that do not fit: through the
/// `streamboost` binary.
#[cfg(feature = "cli")]
mod process {
    use std::path::Path;
    use std::time::{Duration, Instant};

    use predicates::prelude::*;

    use super::*;
    use crate::cli::{Flag, fails_saying, replay_loaded, streamboost};
    use crate::common::dataset;
    use streamboost::core::Rng;

    /// The header and rows `range` (0-based data rows) of a CSV file.
    fn csv_rows(from: &Path, to: &Path, range: std::ops::Range<usize>) {
        let text = std::fs::read_to_string(from).unwrap();
        let mut lines = text.lines();
        let mut out = format!("{}\n", lines.next().unwrap());
        for line in lines.skip(range.start).take(range.len()) {
            out += line;
            out.push('\n');
        }
        std::fs::write(to, out).unwrap();
    }

    /// Replays `csv` whole, and as two halves with a save and a load in between (each in its
    /// own process); the prediction files, probabilities included, must be the same bytes.
    fn assert_fresh_process_resume(csv: &Path, rows: usize, model_args: &[&str]) {
        let dir = tempfile::tempdir().unwrap();
        let path = |name: &str| dir.path().join(name);
        let half = rows / 2;
        csv_rows(csv, &path("first.csv"), 0..half);
        csv_rows(csv, &path("second.csv"), half..rows);
        let run = |input: &Path, extra: &[&str], predictions: &Path| {
            streamboost()
                .args(["replay", "-q"])
                .flag("--input", input)
                .args(extra)
                .flag("--predictions", predictions)
                .assert()
                .success();
        };
        run(csv, model_args, &path("whole.csv"));
        let ck = path("ck.parquet");
        let ck = ck.to_str().unwrap();
        let save = [model_args, &["--save", ck]].concat();
        run(&path("first.csv"), &save, &path("p1.csv"));
        run(&path("second.csv"), &["--load", ck], &path("p2.csv"));

        let whole = std::fs::read_to_string(path("whole.csv")).unwrap();
        let first = std::fs::read_to_string(path("p1.csv")).unwrap();
        let second = std::fs::read_to_string(path("p2.csv")).unwrap();
        let joined: Vec<&str> = first.lines().chain(second.lines().skip(1)).collect();
        let whole: Vec<&str> = whole.lines().collect();
        assert_eq!(whole.len(), rows + 1);
        assert_eq!(joined.len(), whole.len());
        let first_difference = whole.iter().zip(&joined).position(|(a, b)| a != b);
        assert_eq!(first_difference, None);
    }

    #[test]
    fn resume_in_a_fresh_process_is_bit_identical_on_car() {
        assert_fresh_process_resume(
            &bundled_car(),
            1728,
            &["--learners", "20", "--weight-scale", "5:200", "--seed", "4"],
        );
    }

    #[test]
    fn resume_in_a_fresh_process_is_bit_identical_on_nursery() {
        let Some(nursery) = dataset("nursery/data.csv") else {
            return;
        };
        // The paper's setting: 100 trees, weight scales U[5, 200].
        assert_fresh_process_resume(&nursery, 12960, &["--weight-scale", "5:200", "--seed", "7"]);
    }

    #[test]
    fn inspect_prints_metadata_and_summary_without_touching_the_file() {
        let (_dir, good) = saved_checkpoint();
        let before = std::fs::read(&good).unwrap();
        let out = streamboost()
            .args(["inspect"])
            .flag("--json", &good)
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        let json: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(json["metadata"]["algorithm"], "ada-olm");
        assert_eq!(json["metadata"]["rows_seen"], 500);
        assert_eq!(
            json["metadata"]["format_version"],
            checkpoint::FORMAT_VERSION
        );
        assert_eq!(json["trees"]["trees"], 5);
        assert_eq!(json["classes"][0], "acc");
        streamboost()
            .arg("inspect")
            .arg(&good)
            .assert()
            .success()
            .stdout(predicates::str::contains("ada-olm").and(predicates::str::contains("5 trees")));
        assert_eq!(std::fs::read(&good).unwrap(), before);
    }

    #[test]
    fn an_input_that_does_not_fit_the_checkpoint_is_refused_by_name() {
        let (dir, good) = saved_checkpoint();
        // Without the `safety` column the model cannot read these rows.
        let other = dir.path().join("other.csv");
        std::fs::write(
            &other,
            "buying,maint,doors,persons,lug_boot,label\nlow,low,2,2,big,acc\n",
        )
        .unwrap();
        fails_saying(
            streamboost()
                .args(["replay", "-q"])
                .flag("--input", &other)
                .arg("--load")
                .arg(&good),
            &["does not fit the checkpoint", "safety"],
        );
        // Model flags contradict a loaded model.
        fails_saying(
            streamboost()
                .args(["replay", "--learners", "3", "--load"])
                .arg(&good),
            &["--learners would not be read with --load"],
        );
    }

    /// The stream of the bad-input report: car split in two where the first part lacks
    /// classes. Saved after the first part and resumed for the second, the replay predicts
    /// what one uninterrupted replay that starts with the first part's classes predicts,
    /// bit for bit: the model grows at the same rows either way.
    #[test]
    fn a_replay_split_where_classes_are_missing_resumes_bit_for_bit() {
        let dir = tempfile::tempdir().unwrap();
        let whole = car_with_late_classes(dir.path(), 864);
        let text = std::fs::read_to_string(&whole).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let part = |name: &str, rows: &[&str]| {
            let path = dir.path().join(name);
            std::fs::write(&path, format!("{}\n{}\n", lines[0], rows.join("\n"))).unwrap();
            path
        };
        let (first, second) = (
            part("first.csv", &lines[1..865]),
            part("second.csv", &lines[865..]),
        );
        let out = |name: &str| dir.path().join(name);
        let ck = out("ck.parquet");
        let run = |args: &[&str], input: &Path, predictions: &Path| {
            streamboost()
                .args(["replay", "-q", "--learners", "5"])
                .args(args)
                .flag("--input", input)
                .flag("--predictions", predictions)
                .assert()
                .success();
        };
        run(&["--classes", "acc,unacc"], &whole, &out("whole.csv"));
        run(
            &["--save", ck.to_str().unwrap()],
            &first,
            &out("first_p.csv"),
        );
        replay_loaded(&ck, &second)
            .flag("--predictions", out("second_p.csv"))
            .assert()
            .success()
            .stderr(predicates::str::contains("classes  2 new to the model"));
        let read = |name: &str| std::fs::read_to_string(out(name)).unwrap();
        let (whole, first, second) = (read("whole.csv"), read("first_p.csv"), read("second_p.csv"));
        assert_eq!(
            whole.lines().next(),
            second.lines().next(),
            "the same columns"
        );
        // The first part's file has no columns for the classes it never met: 0 in the whole.
        let split: Vec<String> = first
            .lines()
            .skip(1)
            .map(|l| format!("{l},0.0,0.0"))
            .chain(second.lines().skip(1).map(String::from))
            .collect();
        let whole: Vec<&str> = whole.lines().skip(1).collect();
        assert_eq!(split.len(), 1728);
        let first_difference = split.iter().zip(&whole).position(|(a, b)| a != b);
        assert_eq!(first_difference, None);
    }

    /// A save that the file system refuses half way (here a file size limit, which fails a
    /// write as a full disk does) is an I/O error naming the file; the previous checkpoint
    /// at the path still loads, unchanged, and no partial file is left beside it.
    #[test]
    #[cfg(unix)]
    fn a_save_the_disk_refuses_leaves_the_previous_checkpoint() {
        let (dir, good) = saved_checkpoint();
        let path = dir.path().join("live.parquet");
        std::fs::copy(&good, &path).unwrap();
        let before = std::fs::read(&path).unwrap();
        let binary = assert_cmd::cargo::cargo_bin("streamboost");
        // `ulimit -f 16`: no file of the process may grow past 16 KiB; with SIGXFSZ ignored,
        // the write that would cross it fails with EFBIG. The checkpoint is larger.
        let limited = std::process::Command::new("bash")
            .arg("-c")
            .arg(r#"trap '' XFSZ; ulimit -f 16; exec "$0" "$@""#)
            .arg(&binary)
            .args(["replay", "-q"])
            .flag("--load", &path)
            .flag("--save", &path)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&limited.stderr);
        assert!(!limited.status.success(), "{stderr}");
        assert!(
            stderr.contains("live.parquet") && stderr.contains("too large"),
            "{stderr}"
        );
        assert_eq!(std::fs::read(&path).unwrap(), before);
        let (_, stream) = checkpoint::load(&path).unwrap();
        assert_eq!(stream.stats.rows_seen, 500);
        assert_eq!(partial_files(&path), Vec::new());
    }

    #[test]
    fn killing_a_writer_mid_checkpoint_never_loses_the_last_checkpoint() {
        let (dir, good) = saved_checkpoint();
        let path = dir.path().join("live.parquet");
        // A first good checkpoint, then writers that save after every row and die at
        // random moments; every time, the file at `path` must load.
        std::fs::copy(&good, &path).unwrap();
        let binary = assert_cmd::cargo::cargo_bin("streamboost");
        let mut rng = Rng::new(2026);
        // Kill until enough kills have come mid-write: how many of them land inside a write
        // depends on the machine's load, and the property under test is about those.
        const MID_WRITE_WANTED: usize = 5;
        const MAX_KILLS: usize = 200;
        let (mut rows_seen, mut mid_write, mut kills) = (Vec::new(), 0, 0);
        while kills < MAX_KILLS
            && (mid_write < MID_WRITE_WANTED || rows_seen.iter().all(|&r| r == 500))
        {
            kills += 1;
            let mut child = std::process::Command::new(&binary)
                .args([
                    "replay",
                    "-q",
                    "--learners",
                    "10",
                    "--checkpoint-every",
                    "1",
                ])
                .flag("--save", &path)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap();
            let delay = Duration::from_millis(30 + rng.below(400) as u64);
            let start = Instant::now();
            while start.elapsed() < delay {
                std::thread::sleep(Duration::from_millis(5));
            }
            let writer = child.id();
            child.kill().unwrap();
            child.wait().unwrap();
            let (_, stream) = checkpoint::load(&path)
                .unwrap_or_else(|e| panic!("after a kill at {delay:?}: {e}"));
            rows_seen.push(stream.stats.rows_seen);
            // A partial file left behind: the kill came between its creation and its rename.
            mid_write += usize::from(partial_files(&path).iter().any(|(pid, _)| *pid == writer));
        }
        // The writers got far enough to replace the file with their own checkpoints.
        assert!(rows_seen.iter().any(|&r| r != 500), "{rows_seen:?}");
        // Writers do little else than write, so a few kills in every hundred land mid-write.
        assert!(
            mid_write >= MID_WRITE_WANTED,
            "{mid_write} of {kills} kills came mid-write"
        );
    }
}

#[test]
fn resume_is_bit_identical_for_oza_ova_ada_ova_and_non_tree_learners() {
    use streamboost::boost::multiclass::{AdaBoostOlmConfig, BinaryBundleConfig, one_vs_all};
    use streamboost::boost::oza::OzaBoostConfig;
    use streamboost::scaling::{ScaledConfig, Scaling};
    use streamboost::weak::{NaiveBayesConfig, PerceptronConfig, WeakLearnerConfig};

    let data = synth::mixed(1500, 0.1, 0.05, 9);
    let tree: WeakLearnerConfig = HoeffdingTreeConfig::jgt_paper().into();
    let adaptive = |weak: WeakLearnerConfig| AdaBoostOlmConfig {
        n_learners: 6,
        ..AdaBoostOlmConfig::new(weak)
    };
    for config in [
        ModelConfig::Oza(OzaBoostConfig {
            n_learners: 6,
            ..OzaBoostConfig::new(tree.clone())
        }),
        ModelConfig::Ova(one_vs_all(adaptive(tree.clone()))),
        ModelConfig::AdaOva(AdaBoostOlmConfig {
            n_learners: 6,
            ..AdaBoostOlmConfig::new(BinaryBundleConfig::new(tree.clone()))
        }),
        ModelConfig::AdaOlm(adaptive(NaiveBayesConfig::default().into())),
        ModelConfig::Oza(OzaBoostConfig {
            n_learners: 6,
            ..OzaBoostConfig::river(PerceptronConfig::default().into())
        }),
        ModelConfig::NaiveBayes(NaiveBayesConfig::default()),
        ModelConfig::Perceptron(PerceptronConfig::default()),
        ModelConfig::Scaled(ScaledConfig {
            scaling: Scaling::Standardize,
            model: Box::new(ModelConfig::AdaOlm(adaptive(
                PerceptronConfig::default().into(),
            ))),
        }),
    ] {
        assert_resume_is_exact(&config, &data);
    }
}

#[test]
fn resume_is_bit_identical_for_binary_boosters_behind_scaling() {
    use streamboost::boost::binary::{OgBoostConfig, OsBoostConfig};
    use streamboost::scaling::{ScaledConfig, Scaling};
    use streamboost::weak::{PerceptronConfig, ResampleMode, ResamplingConfig, WeakLearnerConfig};

    let data = synth::mixed_binary(1500, 0.1, 0.05, 9);
    let perceptron: WeakLearnerConfig = PerceptronConfig::default().into();
    let tree: WeakLearnerConfig = HoeffdingTreeConfig::jgt_paper().into();
    let scaled = |model| {
        ModelConfig::Scaled(ScaledConfig {
            scaling: Scaling::MinMax,
            model: Box::new(model),
        })
    };
    for config in [
        scaled(ModelConfig::OsBoost(OsBoostConfig {
            n_learners: 8,
            ..OsBoostConfig::new(perceptron.clone())
        })),
        scaled(ModelConfig::OsBoost(OsBoostConfig {
            n_learners: 8,
            ..OsBoostConfig::ocp(tree.clone())
        })),
        ModelConfig::OsBoost(OsBoostConfig {
            n_learners: 8,
            ..OsBoostConfig::exp(tree.clone())
        }),
        ModelConfig::OgBoost(OgBoostConfig {
            n_selectors: 8,
            ..OgBoostConfig::new(tree.clone())
        }),
        // Resampled trees: their nodes go to the checkpoint's tree rows, their draws resume.
        ModelConfig::OsBoost(OsBoostConfig {
            n_learners: 8,
            ..OsBoostConfig::new(WeakLearnerConfig::Resampled(ResamplingConfig {
                mode: ResampleMode::Poisson,
                inner: Box::new(tree),
            }))
        }),
    ] {
        assert_resume_is_exact(&config, &data);
    }
}

/// Checkpoints written by format version 1 before the algorithm catalogue (rows 1..1000 of
/// the bundled car, four trees each) still load, and the loaded models predict the rest of
/// car exactly as the models that wrote them would have (digests recorded at writing time).
#[test]
fn checkpoints_written_by_earlier_builds_load_and_continue_exactly() {
    use streamboost::columnar::{encode_with_spec, read_table};
    let fixtures = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let car = read_table(&bundled_car()).unwrap();
    for (name, recorded) in [
        ("ada-olm", "0294c9b56f7f4874"),
        ("mbbm", "9367d8e875d88543"),
        ("oza", "41a91f45a7196132"),
    ] {
        let path = fixtures.join(format!("checkpoint_v1_{name}.parquet"));
        let (mut model, stream) = checkpoint::load(&path).unwrap();
        assert_eq!(stream.stats.rows_seen, 1000, "{name}");
        assert_eq!(model.algorithm().name(), name);
        let data = encode_with_spec(
            &[car.clone()],
            &stream.spec,
            &stream.label,
            &stream.encodings,
        )
        .unwrap()
        .data;
        let rest: Vec<usize> = (1000..data.len()).collect();
        let mut digest = crate::golden::Digest::new();
        for (predicted, bits) in replay(&mut model, &data, &rest) {
            digest.word(predicted as u64);
            bits.into_iter().for_each(|b| digest.word(b));
        }
        eprintln!("{name}: {}", digest.hex());
        assert_eq!(digest.hex(), recorded, "{name}");
    }
}

/// Every algorithm of the catalogue, at its defaults, resumes from a checkpoint bit for bit
/// (binary ones on a two-class stream): a new row is checked without being listed here.
#[test]
fn every_algorithm_of_the_catalogue_resumes_exactly() {
    use streamboost::model::{Algorithm, Learns};
    let car = load_stream(&[bundled_car()], "label", &Encodings::default()).unwrap();
    let binary = synth::mixed_binary(1200, 0.05, 0.1, 3);
    for &algorithm in Algorithm::ALL {
        let config = crate::contract::catalogue_config(algorithm, 6);
        let data = match algorithm.capabilities().learns {
            Learns::Binary => &binary,
            Learns::Multiclass | Learns::Ranking => &car,
        };
        assert_resume_is_exact(&config, data);
    }
}

/// Car with its classes arriving late: the first `calm` rows are `unacc` and `acc` rows
/// only, the rest in file order. As a CSV file of `dir`.
fn car_with_late_classes(dir: &Path, calm: usize) -> PathBuf {
    let text = std::fs::read_to_string(bundled_car()).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap();
    let rows: Vec<&str> = lines.collect();
    let is_calm = |l: &&str| l.ends_with(",unacc") || l.ends_with(",acc");
    let first: Vec<usize> = (0..rows.len())
        .filter(|&i| is_calm(&rows[i]))
        .take(calm)
        .collect();
    let rest = (0..rows.len()).filter(|i| !first.contains(i));
    let mut csv = format!("{header}\n");
    for i in first.iter().copied().chain(rest) {
        csv += rows[i];
        csv.push('\n');
    }
    let path = dir.join("car_late.csv");
    std::fs::write(&path, csv).unwrap();
    path
}

/// Every algorithm that takes more than two classes grows its class set when a new label
/// arrives, and a save at any row, before, at or after a class arrives, then a resume, gives
/// the predictions of the uninterrupted replay bit for bit. The binary boosters refuse a
/// third class with an error naming the row and the label.
#[test]
fn every_algorithm_grows_its_classes_and_resumes_exactly_at_any_row() {
    use streamboost::Classifier;
    use streamboost::columnar::{encode_with_spec, infer_spec, read_table};
    use streamboost::core::ClassSet;
    use streamboost::model::{Algorithm, Learns, Role};
    let dir = tempfile::tempdir().unwrap();
    let path = car_with_late_classes(dir.path(), 400);
    let tables = [read_table(&path).unwrap()];
    let enc = Encodings::default();
    let inferred = infer_spec(&tables, "label", &enc).unwrap();
    let declared = streamboost::core::StreamSpec {
        classes: ClassSet::new(["acc", "unacc"]).unwrap(),
        ..inferred
    };
    let data = encode_with_spec(&tables, &declared, "label", &enc)
        .unwrap()
        .data;
    let names = data.spec().classes.names();
    assert_eq!(names[..2], ["acc", "unacc"]);
    let first_row_of = |c: usize| (0..data.len()).find(|&i| data.label(i) == Some(c)).unwrap();
    let (good, vgood) = (first_row_of(2), first_row_of(3));
    assert!(good >= 400 && vgood >= 400, "{good} {vgood}");
    let order: Vec<usize> = (0..data.len()).collect();

    for &algorithm in Algorithm::ALL {
        let config = crate::contract::catalogue_config(algorithm, 4);
        if algorithm.capabilities().role == Role::Batch {
            // Learns no class after training: `every_algorithm_of_the_catalogue_resumes_exactly`
            // covers its checkpoints.
            continue;
        }
        if algorithm.capabilities().learns == Learns::Binary {
            let mut model = config.build(&declared, 5).unwrap();
            let err = Prequential::default()
                .run(&mut model, &data, None, |_| {})
                .unwrap_err();
            let arrives = good.min(vgood);
            assert!(
                matches!(&err, Error::InvalidRow { row, message }
                    if *row == arrives as u64 && message.contains(&names[data.label(arrives).unwrap()])),
                "{algorithm}: {err}"
            );
            assert_eq!(model.n_classes(), 2);
            continue;
        }
        let mut uninterrupted = config.build(&declared, 5).unwrap();
        let expected = replay(&mut uninterrupted, &data, &order);
        assert_eq!(uninterrupted.n_classes(), 4, "{algorithm}");
        // The new classes are learnt: they are predicted for some of their rows. (Not each:
        // OnlineMBBM at γ = 0.1 never predicts `good`, declared from the start or not.)
        let hits = (0..data.len())
            .filter(|&i| data.label(i).is_some_and(|c| c >= 2 && expected[i].0 == c));
        assert!(hits.count() > 0, "{algorithm} never predicts a new class");
        for split in [
            200,
            good.min(vgood),
            good.min(vgood) + 1,
            good.max(vgood) + 1,
            1500,
        ] {
            let mut model = config.build(&declared, 5).unwrap();
            let mut got = replay(&mut model, &data, &order[..split]);
            let stream = StreamState {
                spec: data.spec().first_classes(model.n_classes()).unwrap(),
                ..state(&config, &data, split as u64)
            };
            let path = dir.path().join("grown.parquet");
            checkpoint::save(&path, &mut model, &stream).unwrap();
            let (mut loaded, stream) = checkpoint::load(&path).unwrap();
            assert_eq!(loaded.n_classes(), stream.spec.n_classes());
            got.extend(replay(&mut loaded, &data, &order[split..]));
            let first_difference = got.iter().zip(&expected).position(|(a, b)| a != b);
            assert_eq!(
                first_difference, None,
                "{algorithm}, saved after {split} rows"
            );
        }
    }
}

/// A damaged `ARROW:schema` in the footer (the embedded IPC schema arrow-ipc would trust and
/// panic on) is never decoded: every single-character change of it leaves a checkpoint that
/// loads as the original, and never panics.
#[test]
fn a_damaged_embedded_arrow_schema_never_panics() {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let (dir, good) = saved_checkpoint();
    let bytes = std::fs::read(&good).unwrap();
    let reader = SerializedFileReader::new(std::fs::File::open(&good).unwrap()).unwrap();
    let schema = reader
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .unwrap()
        .iter()
        .find(|e| e.key == "ARROW:schema")
        .and_then(|e| e.value.clone())
        .expect("the writer embeds the Arrow schema");
    let at = bytes
        .windows(schema.len())
        .position(|w| w == schema.as_bytes())
        .expect("stored as is");
    let (expected, _) = checkpoint::load(&good).unwrap();
    let expected = serde_json::to_string(&expected).unwrap();
    let path = dir.path().join("flipped.parquet");
    for i in (0..schema.len()).step_by(3) {
        let mut damaged = bytes.clone();
        // Another base64 character, so the value still decodes as base64.
        damaged[at + i] = if damaged[at + i] == b'A' { b'Q' } else { b'A' };
        std::fs::write(&path, &damaged).unwrap();
        let loaded = std::panic::catch_unwind(|| checkpoint::load(&path))
            .unwrap_or_else(|_| panic!("panicked with byte {i} of ARROW:schema changed"));
        let (model, _) = loaded.unwrap();
        assert_eq!(serde_json::to_string(&model).unwrap(), expected);
    }
}

/// Writers saving the same path at once each write their own temporary file: every save
/// succeeds and the file left is one of them, whole. They shared one `.partial` name before,
/// and one writer's rename found the other's file gone.
#[test]
fn concurrent_writers_of_one_path_never_collide() {
    let (config, data, model) = trained_on_car(3, 300);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shared.parquet");
    let stream = state(&config, &data, 300);
    std::thread::scope(|scope| {
        for _ in 0..2 {
            let (mut model, path, stream) = (model.clone(), &path, &stream);
            scope.spawn(move || {
                for _ in 0..15 {
                    checkpoint::save(path, &mut model, stream).unwrap();
                }
            });
        }
    });
    checkpoint::load(&path).unwrap();
    assert!(partial_files(&path).is_empty());
}

/// Incremental commits: a base and the deltas of what changed since ([`checkpoint::chain`]).
mod chain {
    use super::*;
    use streamboost::checkpoint::{Chain, ChainLimits, chain::delta_path};

    /// A model of 5 trees on car after 300 rows, committed every 200 rows until `commits`
    /// commits are written under `limits`; its chain, the model as it was at each commit,
    /// and the rows taken.
    fn committed(
        path: &Path, commits: usize, limits: &ChainLimits,
    ) -> (Option<Chain>, Vec<Model>, Dataset, ModelConfig) {
        let (config, data, mut model) = trained_on_car(5, 300);
        let mut chain = None;
        let mut at_commits = Vec::new();
        for c in 0..commits {
            let rows = 300 + 200 * c;
            if c > 0 {
                replay(&mut model, &data, &(rows - 200..rows).collect::<Vec<_>>());
            }
            let stream = state(&config, &data, rows as u64);
            checkpoint::commit(path, &mut model, &stream, &mut chain, limits).unwrap();
            at_commits.push(model.clone());
        }
        (chain, at_commits, data, config)
    }

    /// What the model predicts on the rest of car, continuing from `model`.
    fn continuation(model: &mut Model, data: &Dataset) -> Vec<(usize, Vec<u64>)> {
        replay(model, data, &(1300..1728).collect::<Vec<_>>())
    }

    #[test]
    fn a_base_and_its_deltas_restore_the_model_bit_for_bit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.parquet");
        let (chain, mut models, data, _) = committed(
            &path,
            4,
            &ChainLimits {
                max_deltas: 16,
                max_delta_share: 100.0,
            },
        );
        assert_eq!(chain.unwrap().files(), 4);
        let out = crate::cli::streamboost()
            .arg("inspect")
            .arg(&path)
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains("then 3 deltas of"), "{text}");
        assert!(text.contains("rows            900 seen"), "{text}");
        let files = checkpoint::chain_files(&path).unwrap();
        assert_eq!(files.len(), 4, "{files:?}");
        assert_eq!(files[3].0, delta_path(&path, 3));
        // A delta holds the nodes that changed, fewer than the model's.
        let meta = checkpoint::read_metadata(&path).unwrap();
        assert_eq!(meta.rows_seen, 900);
        assert!(
            files[1..].iter().all(|f| f.2 < meta.nodes),
            "{files:?} of {}",
            meta.nodes
        );

        let (mut loaded, stream, loaded_chain) = checkpoint::load_chain(&path).unwrap();
        assert_eq!(stream.stats.rows_seen, 900);
        assert_eq!(loaded_chain.unwrap().files(), 4);
        let last = models.last_mut().unwrap();
        assert_eq!(continuation(&mut loaded, &data), continuation(last, &data));
    }

    #[test]
    fn a_new_base_after_the_deltas_allowed_removes_them() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.parquet");
        let limits = ChainLimits {
            max_deltas: 2,
            max_delta_share: 100.0,
        };
        // Base, delta 1, delta 2, then a new base and its delta 1.
        let (chain, mut models, data, _) = committed(&path, 5, &limits);
        assert_eq!(chain.unwrap().files(), 2);
        assert_eq!(checkpoint::chain_files(&path).unwrap().len(), 2);
        assert!(!delta_path(&path, 2).exists());
        let (mut loaded, ..) = checkpoint::load_chain(&path).unwrap();
        let last = models.last_mut().unwrap();
        assert_eq!(continuation(&mut loaded, &data), continuation(last, &data));

        // Deltas that outweigh their base make the next commit a base.
        let path = dir.path().join("share.parquet");
        let tiny = ChainLimits {
            max_deltas: 16,
            max_delta_share: 0.0,
        };
        let (chain, ..) = committed(&path, 4, &tiny);
        assert_eq!(chain.unwrap().files(), 2, "base, delta, base, delta");
    }

    /// On a pool of two threads a commit hashes and tabulates its nodes on both, and writes
    /// its node table as a row group per part: the files hold the values one thread writes
    /// (the same checksums), and read back as the same model.
    #[test]
    fn a_chain_committed_on_two_threads_holds_what_one_thread_commits() {
        use parquet::file::reader::{FileReader, SerializedFileReader};
        let (config, data, mut model) = trained_on_car(40, 1728);
        let limits = ChainLimits::default();
        let dir = tempfile::tempdir().unwrap();
        let commits = |path: &Path, model: &mut Model| {
            let mut chain = None;
            for (c, rows) in [(0, 0..1000), (1, 1000..1300)] {
                if c > 0 {
                    replay(model, &data, &rows.clone().collect::<Vec<_>>());
                }
                let stream = state(&config, &data, 1728 + rows.end as u64);
                checkpoint::commit(path, model, &stream, &mut chain, &limits).unwrap();
            }
        };
        let (one, two) = (
            dir.path().join("one.parquet"),
            dir.path().join("two.parquet"),
        );
        let mut on_two = model.clone();
        commits(&one, &mut model);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        pool.install(|| commits(&two, &mut on_two));
        let row_groups = |path: &Path| {
            let file = std::fs::File::open(path).unwrap();
            SerializedFileReader::new(file).unwrap().num_row_groups()
        };
        let meta = checkpoint::read_metadata(&one).unwrap();
        assert!(
            meta.nodes >= 1024,
            "{} nodes: too few for two parts",
            meta.nodes
        );
        assert_eq!((row_groups(&one), row_groups(&two)), (1, 2));
        let (files_one, files_two) = (
            checkpoint::chain_files(&one).unwrap(),
            checkpoint::chain_files(&two).unwrap(),
        );
        assert_eq!(files_one.len(), 2);
        for (a, b) in files_one.iter().zip(&files_two) {
            assert_eq!(a.2, b.2, "node rows of {a:?} and {b:?}");
        }
        assert_eq!(meta.digest, checkpoint::read_metadata(&two).unwrap().digest);
        let (mut a, mut b) = (
            checkpoint::load(&one).unwrap().0,
            checkpoint::load(&two).unwrap().0,
        );
        assert_eq!(continuation(&mut a, &data), continuation(&mut b, &data));
    }

    #[test]
    fn a_restarted_writer_continues_its_chain() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.parquet");
        let limits = ChainLimits {
            max_deltas: 16,
            max_delta_share: 100.0,
        };
        let (_, mut models, data, config) = committed(&path, 2, &limits);
        let (mut model, _, mut chain) = checkpoint::load_chain(&path).unwrap();
        replay(&mut model, &data, &(500..700).collect::<Vec<_>>());
        let written = checkpoint::commit(
            &path,
            &mut model,
            &state(&config, &data, 700),
            &mut chain,
            &limits,
        )
        .unwrap();
        assert!(written.delta);
        assert!(delta_path(&path, 2).exists());
        let (mut loaded, ..) = checkpoint::load(&path).unwrap();
        let mut expected = models.pop().unwrap();
        replay(&mut expected, &data, &(500..700).collect::<Vec<_>>());
        assert_eq!(
            continuation(&mut loaded, &data),
            continuation(&mut expected, &data)
        );
    }

    #[test]
    fn deltas_of_another_chain_are_ignored_and_a_missing_or_moved_delta_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.parquet");
        let limits = ChainLimits {
            max_deltas: 16,
            max_delta_share: 100.0,
        };
        let (mut chain, models, data, config) = committed(&path, 4, &limits);
        let deltas = checkpoint::chain::deltas_dir(&path);
        let aside = dir.path().join("aside");
        std::fs::create_dir(&aside).unwrap();
        for seq in 1..=3 {
            std::fs::copy(delta_path(&path, seq), aside.join(seq.to_string())).unwrap();
        }

        // A delta lost from the middle: what the later ones commit cannot be read.
        std::fs::remove_file(delta_path(&path, 2)).unwrap();
        let err = checkpoint::load(&path).unwrap_err();
        assert!(
            matches!(&err, Error::CorruptCheckpoint { detail, .. } if detail.contains("missing delta 2")),
            "{err}"
        );
        // Two deltas swapped.
        std::fs::copy(aside.join("3"), delta_path(&path, 2)).unwrap();
        std::fs::copy(aside.join("2"), delta_path(&path, 3)).unwrap();
        let err = checkpoint::load(&path).unwrap_err();
        assert!(
            matches!(&err, Error::CorruptCheckpoint { detail, .. } if detail.contains("does not follow")),
            "{err}"
        );
        assert!(checkpoint::read_metadata(&path).is_err());

        // A new base written, and the old chain's deltas put back as a crash between the
        // base's rename and their removal would leave them: they are not read.
        let mut model = models[1].clone();
        let stream = state(&config, &data, 500);
        checkpoint::commit(
            &path,
            &mut model,
            &stream,
            &mut chain,
            &ChainLimits {
                max_deltas: 0,
                ..limits
            },
        )
        .unwrap();
        assert!(!delta_path(&path, 1).exists());
        for seq in 1..=3 {
            std::fs::copy(aside.join(seq.to_string()), delta_path(&path, seq)).unwrap();
        }
        assert!(deltas.join("000001.parquet").exists());
        assert_eq!(checkpoint::chain_files(&path).unwrap().len(), 1);
        assert_eq!(checkpoint::read_metadata(&path).unwrap().rows_seen, 500);
        let (mut loaded, ..) = checkpoint::load(&path).unwrap();
        assert_eq!(
            continuation(&mut loaded, &data),
            continuation(&mut models[1].clone(), &data)
        );
    }
}
