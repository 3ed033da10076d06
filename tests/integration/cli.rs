//! The `streamboost` command line, end to end.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

pub fn streamboost() -> Command {
    Command::cargo_bin("streamboost").unwrap()
}

/// A flag and its value on a command line.
pub trait Flag {
    /// Appends `name value`.
    fn flag(&mut self, name: &str, value: impl AsRef<std::ffi::OsStr>) -> &mut Self;
}

macro_rules! flag_for {
    ($($command:ty),*) => {$(
        impl Flag for $command {
            fn flag(&mut self, name: &str, value: impl AsRef<std::ffi::OsStr>) -> &mut Self {
                self.arg(name).arg(value)
            }
        }
    )*};
}

flag_for!(Command, std::process::Command);

/// `streamboost replay -q --load MODEL --input INPUT`: a saved model over more rows.
pub fn replay_loaded(
    model: impl AsRef<std::ffi::OsStr>, input: impl AsRef<std::ffi::OsStr>,
) -> Command {
    let mut command = streamboost();
    command
        .args(["replay", "-q"])
        .flag("--load", model)
        .flag("--input", input);
    command
}

/// The file `streamboost replay -q ARGS` writes as `flag`'s output, `name` in `dir` (the replay
/// must succeed).
pub fn replay_output(dir: &Path, args: &[&str], flag: &str, name: &str) -> PathBuf {
    let path = dir.join(name);
    streamboost()
        .args(["replay", "-q"])
        .args(args)
        .flag(flag, &path)
        .assert()
        .success();
    path
}

/// A command line's words, written as one string: `flags("replay --learners 8 -q")`.
pub fn flags(line: &str) -> impl Iterator<Item = &str> {
    line.split_whitespace()
}

/// Runs `command` and checks that it fails with each of `messages` on stderr.
pub fn fails_saying(command: &mut Command, messages: &[&str]) {
    let output = command.assert().failure();
    let stderr = String::from_utf8_lossy(&output.get_output().stderr).into_owned();
    for message in messages {
        assert!(stderr.contains(message), "no {message:?} in: {stderr}");
    }
}

pub fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The predicted labels of a `replay --predictions` CSV, row by row.
pub fn predicted_labels(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let rows = text.lines().skip(1);
    rows.map(|l| l.split(',').nth(2).unwrap().to_string())
        .collect()
}

#[test]
fn replay_of_the_bundled_data_reports_and_writes_everything() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.json");
    let curve = dir.path().join("curve.csv");
    let predictions = dir.path().join("predictions.csv");
    streamboost()
        .args(["replay", "--learners", "10", "--seed", "3"])
        .flag("--report", &report)
        .flag("--curve", &curve)
        .flag("--predictions", &predictions)
        .assert()
        .success()
        .stdout(predicate::str::contains("accuracy").and(predicate::str::contains("final  20%")))
        .stderr(
            predicate::str::contains("OneVsAll(k x AdaBoostOLM(N=10")
                .and(predicate::str::contains("weight scale=unit mean"))
                .and(predicate::str::contains("seed     3")),
        );

    let r = read_json(&report);
    assert_eq!(r["algorithm"], "ova", "the default model");
    assert_eq!(r["seed"], 3);
    assert_eq!(r["rows"], 1728);
    let accuracy = r["cumulative"]["accuracy"].as_f64().unwrap();
    assert!(accuracy > 0.7 && accuracy <= 1.0, "{accuracy}");
    assert_eq!(r["final_fraction"]["fraction"], 0.2);
    assert!(r["final_fraction"]["accuracy"].as_f64().unwrap() > 0.7);
    assert!(r["throughput"]["seconds"].as_f64().unwrap() > 0.0);
    assert!(r["throughput"]["rows_per_second"].as_f64().unwrap() > 0.0);
    assert_eq!(r["final_fraction"]["rows"], 346);
    assert_eq!(r["confusion"].as_array().unwrap().len(), 4);

    let curve = std::fs::read_to_string(&curve).unwrap();
    assert!(curve.starts_with("rows,cumulative_accuracy,window_accuracy\n"));
    assert!(curve.lines().last().unwrap().starts_with("1728,"));

    let predictions = std::fs::read_to_string(&predictions).unwrap();
    let lines: Vec<&str> = predictions.lines().collect();
    assert_eq!(
        lines[0],
        "row,label,prediction,p_acc,p_good,p_unacc,p_vgood"
    );
    assert_eq!(lines.len(), 1 + 1728);
    // Input order without --shuffle.
    assert!(lines[1].starts_with("0,") && lines[1728].starts_with("1727,"));
}

#[test]
fn same_seed_same_report_and_shuffle_permutes_rows() {
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str, extra: &[&str]| {
        let out = dir.path().join(name);
        streamboost()
            .args(["replay", "--learners", "5", "-q"])
            .flag("--predictions", &out)
            .args(extra)
            .assert()
            .success();
        std::fs::read_to_string(out).unwrap()
    };
    let a = run("a.csv", &["--seed", "9"]);
    assert_eq!(a, run("b.csv", &["--seed", "9"]));
    let shuffled = run("c.csv", &["--seed", "9", "--shuffle", "4"]);
    assert_ne!(a, shuffled);
    let mut rows: Vec<u64> = shuffled
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap().parse().unwrap())
        .collect();
    assert_ne!(rows, (0..1728).collect::<Vec<_>>());
    rows.sort_unstable();
    assert_eq!(rows, (0..1728).collect::<Vec<_>>());
}

#[test]
fn several_inputs_replay_in_order_as_one_stream() {
    let dir = tempfile::tempdir().unwrap();
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/data/car.csv")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let (header, rows) = (lines[0], &lines[1..]);
    let whole = dir.path().join("whole.csv");
    let first = dir.path().join("first.csv");
    let second = dir.path().join("second.parquet");
    std::fs::write(&whole, text.clone()).unwrap();
    std::fs::write(&first, format!("{header}\n{}\n", rows[..1000].join("\n"))).unwrap();
    // The second part as Parquet, written by a CSV → Parquet round trip through the library.
    let tail = dir.path().join("tail.csv");
    std::fs::write(&tail, format!("{header}\n{}\n", rows[1000..].join("\n"))).unwrap();
    let table = streamboost::columnar::read_table(&tail).unwrap();
    let batch = table.to_batch().unwrap();
    streamboost::columnar::write_batch(&second, &batch).unwrap();

    let predict = |inputs: &[&Path], out: &str| {
        let out = dir.path().join(out);
        let mut cmd = streamboost();
        cmd.args(["replay", "--learners", "5", "-q", "--predictions"])
            .arg(&out);
        for i in inputs {
            cmd.arg("--input").arg(i);
        }
        cmd.assert().success();
        std::fs::read_to_string(out).unwrap()
    };
    assert_eq!(
        predict(&[&whole], "p1.csv"),
        predict(&[&first, &second], "p2.csv")
    );
}

#[test]
fn predictions_as_parquet() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["--algo", "hoeffding"];
    let out = replay_output(dir.path(), &args, "--predictions", "p.parquet");
    let table = streamboost::columnar::read_table(&out).unwrap();
    assert_eq!(table.n_rows(), 1728);
    let names = crate::common::field_names(&table.schema);
    assert_eq!(
        names,
        [
            "row",
            "label",
            "prediction",
            "p_acc",
            "p_good",
            "p_unacc",
            "p_vgood"
        ]
    );
}

#[test]
fn single_tree_and_nominal_override() {
    streamboost()
        .args(flags(
            "replay --algo hoeffding --preset default --nominal doors -q",
        ))
        .assert()
        .success()
        .stderr(predicate::str::contains("HoeffdingTree(grace=200"));
}

/// Runs `streamboost replay ARGS -q --report …`, which must succeed; returns the report and
/// the standard error.
pub fn replay_report(args: &[&str]) -> (Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("r.json");
    let out = streamboost()
        .arg("replay")
        .args(args)
        .args(["-q"])
        .flag("--report", &report)
        .assert()
        .success();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    (read_json(&report), stderr)
}

/// The report says how much memory the process took at its peak (Linux reports it; the
/// field is `null` elsewhere).
#[test]
fn the_report_has_the_peak_memory() {
    let (r, _) = replay_report(&["--algo", "hoeffding"]);
    let peak = &r["memory"]["peak_rss_bytes"];
    if cfg!(target_os = "linux") {
        let bytes = peak.as_u64().unwrap_or_else(|| panic!("{}", r["memory"]));
        assert!(bytes > 1 << 20, "{bytes}");
    } else {
        assert!(peak.is_null() || peak.is_u64(), "{peak}");
    }
    assert_eq!(r["memory"]["parked_leaves"], 0, "no limit, nothing parked");
}

/// A memory limit that binds is counted: the report gives the leaves it parked, and the
/// run says so on stderr.
#[test]
fn the_report_counts_the_leaves_a_memory_limit_parked() {
    let flags = [
        "--algo",
        "ada-olm",
        "--learners",
        "5",
        "--tree-memory-limit",
        "2KiB",
    ];
    let (r, stderr) = replay_report(&flags);
    let parked = r["memory"]["parked_leaves"].as_u64().unwrap();
    assert!(parked > 0, "{}", r["memory"]);
    assert!(
        stderr.contains(&format!("{parked} leaves parked")),
        "{stderr}"
    );
    assert_eq!(r["config"]["weak"]["max_bytes"], 2048, "{}", r["config"]);
}

#[test]
fn ordinal_override_is_reported() {
    let (r, stderr) = replay_report(&["--algo", "hoeffding", "--ordinal", "safety=low,med,high"]);
    assert!(
        stderr.contains("6 features (1 numeric, 5 nominal)"),
        "{stderr}"
    );
    assert_eq!(r["encodings"]["ordinal"][0]["column"], "safety");
    assert_eq!(r["encodings"]["ordinal"][0]["levels"][2], "high");
}

#[test]
fn oza_zero_error_policy_and_moa_trees_are_reported() {
    let (r, stderr) = replay_report(&[
        "--algo",
        "oza",
        "--learners",
        "3",
        "--oza-variant",
        "river",
        "--oza-zero-error",
        "skip",
        "--preset",
        "moa",
    ]);
    assert!(stderr.contains("MOA likelihoods"), "{stderr}");
    assert_eq!(r["config"]["zero_error"], "skip");
    // The rest of River's variant stays.
    assert_eq!(r["config"]["lambda_update"], "oza");
    assert_eq!(r["config"]["weak"]["gaussian_likelihood"], "moa");
    assert_eq!(r["config"]["weak"]["variance"], "unbiased");
}

#[test]
fn a_config_file_naming_only_what_differs_is_the_same_model_as_the_flags() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("model.json");
    std::fs::write(
        &config,
        r#"{"algorithm": "osboost-ocp", "n_learners": 5, "weak": {"learner": "naive-bayes"}}"#,
    )
    .unwrap();
    let input = dir.path().join("binary.csv");
    let mut csv = String::from("a,b,label\n");
    for i in 0..300 {
        let (a, b) = ((i * 7 % 13) as f64, (i * 5 % 11) as f64);
        csv += &format!("{a},{b},{}\n", if a + b > 11.0 { "yes" } else { "no" });
    }
    std::fs::write(&input, csv).unwrap();
    let input = input.to_str().unwrap();
    let (from_file, _) = replay_report(&["--input", input, "--config", config.to_str().unwrap()]);
    let (from_flags, _) = replay_report(&[
        "--input",
        input,
        "--algo",
        "osboost-ocp",
        "--learners",
        "5",
        "--weak",
        "naive-bayes",
    ]);
    assert_eq!(from_file["config"], from_flags["config"]);
    assert_eq!(from_file["algorithm"], "osboost-ocp");
    assert_eq!(from_file["cumulative"], from_flags["cumulative"]);

    // A config that names a field no algorithm has is refused, naming the file.
    std::fs::write(&config, r#"{"algorithm": "ada-olm", "n_lerners": 5}"#).unwrap();
    fails_saying(
        streamboost().args(["replay", "-q", "--config", config.to_str().unwrap()]),
        &["model.json", "n_lerners"],
    );
}

/// Predictions are written in pieces as rows are scored (more rows than one piece here), and
/// the file holds every row, in replay order, as CSV and as Parquet.
#[test]
fn predictions_are_written_as_they_are_scored_and_hold_every_row() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("long.csv");
    let mut csv = String::from("x,c,label\n");
    for i in 0..20_000u32 {
        csv += &format!(
            "{},{},{}\n",
            i % 97,
            ["a", "b", "c"][(i % 3) as usize],
            i % 2
        );
    }
    std::fs::write(&input, csv).unwrap();
    for name in ["p.csv", "p.parquet"] {
        let path = dir.path().join(name);
        streamboost()
            .args(flags("replay -q --algo hoeffding --shuffle 3 --input"))
            .arg(&input)
            .flag("--predictions", &path)
            .assert()
            .success();
        let table = streamboost::columnar::read_table(&path).unwrap();
        assert_eq!(table.n_rows(), 20_000, "{name}");
        let mut rows: Vec<u64> = table
            .batches()
            .unwrap()
            .map(Result::unwrap)
            .flat_map(|b| {
                let rows = arrow::compute::cast(b.column(0), &arrow::datatypes::DataType::UInt64);
                let rows = rows.unwrap();
                let rows = rows.as_any().downcast_ref::<arrow::array::UInt64Array>();
                rows.unwrap().values().to_vec()
            })
            .collect();
        rows.sort_unstable();
        assert!(rows.iter().copied().eq(0..20_000), "{name}: every row once");
    }
    // Parquet: one row group per piece of 8,192 rows.
    let parquet = std::fs::File::open(dir.path().join("p.parquet")).unwrap();
    let reader = parquet::file::reader::SerializedFileReader::new(parquet).unwrap();
    use parquet::file::reader::FileReader;
    assert_eq!(reader.metadata().num_row_groups(), 3);
}

/// A replay reads its input a batch at a time (8,192 rows) and encodes each as it goes:
/// over three batches, with a category and a class that first appear late and missing
/// values, it predicts what the in-memory replay of the whole encoded stream predicts,
/// bit for bit, and says how many cells it read as missing.
#[test]
fn a_streamed_replay_predicts_as_the_whole_stream_in_memory() {
    use streamboost::columnar::{Encodings, read_table};
    use streamboost::eval::Prequential;
    use streamboost::model::ModelConfig;
    use streamboost::runtime::replay::Session;

    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("long.csv");
    let mut rng = streamboost::core::Rng::new(5);
    let mut csv = String::from("x,c,label\n");
    let mut missing = 0;
    for i in 0..20_000 {
        let x = rng.uniform_in(-1.0, 1.0);
        let c = ["a", "b", "c", "d", "late"][if i < 15_000 {
            rng.below(4)
        } else {
            rng.below(5)
        }];
        let label = match (x > 0.0, c) {
            (_, "late") => "r",
            _ if i >= 9_000 && c == "d" && x > 0.5 => "r",
            (true, _) => "p",
            (false, _) => "q",
        };
        let x = if i % 97 == 0 {
            missing += 1;
            String::new()
        } else {
            x.to_string()
        };
        csv += &format!("{x},{c},{label}\n");
    }
    std::fs::write(&input, csv).unwrap();
    let predictions = dir.path().join("p.csv");
    streamboost()
        .args(flags(
            "replay -q --algo ada-olm --learners 3 --classes p,q --input",
        ))
        .arg(&input)
        .flag("--predictions", &predictions)
        .assert()
        .success()
        .stderr(
            predicate::str::contains(format!("missing  {missing} cells"))
                .and(predicate::str::contains("classes  1 new to the model")),
        );

    let config =
        ModelConfig::from_json(serde_json::json!({"algorithm": "ada-olm", "n_learners": 3}))
            .unwrap();
    let tables = [read_table(&input).unwrap()];
    let declared = ["p".to_string(), "q".to_string()];
    let mut session = Session::fresh(
        &tables,
        config,
        1,
        "label",
        Encodings::default(),
        Some(&declared),
    )
    .unwrap();
    let data = session.rows.encoded().unwrap().data;
    let names = data.spec().classes.names().to_vec();
    let mut expected = Vec::new();
    Prequential::default()
        .run(&mut session.model, &data, None, |o| {
            let bits: Vec<u64> = o.proba.iter().map(|p| p.to_bits()).collect();
            expected.push((names[o.predicted].clone(), bits));
        })
        .unwrap();
    let written = std::fs::read_to_string(&predictions).unwrap();
    let got: Vec<(String, Vec<u64>)> = written
        .lines()
        .skip(1)
        .map(|l| {
            let mut cells = l.split(',').skip(2);
            let predicted = cells.next().unwrap().to_string();
            let bits = cells.map(|p| p.parse::<f64>().unwrap().to_bits()).collect();
            (predicted, bits)
        })
        .collect();
    assert_eq!(got.len(), expected.len());
    let first_difference = got.iter().zip(&expected).position(|(a, b)| a != b);
    assert_eq!(
        first_difference,
        None,
        "{:?}",
        first_difference.map(|i| (&got[i], &expected[i]))
    );
}

/// `replay --plot` draws the learning curve as SVG or PNG; the report carries the curve, and
/// `streamboost plot` draws several reports on one chart; a chart path of another format is
/// refused before the replay.
#[test]
fn learning_curves_are_drawn_as_svg_or_png() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name);
    for (algo, name) in [("ada-olm", "olm"), ("hoeffding", "tree")] {
        streamboost()
            .args(["replay", "-q", "--algo", algo])
            .flag("--plot", path(&format!("{name}.svg")))
            .flag("--report", path(&format!("{name}.json")))
            .assert()
            .success();
        let svg = std::fs::read_to_string(path(&format!("{name}.svg"))).unwrap();
        assert!(
            svg.starts_with("<svg") && svg.contains("<polyline"),
            "{name}"
        );
        assert!(svg.contains(&format!("{algo} on car.csv (bundled)")));
        let report = read_json(&path(&format!("{name}.json")));
        assert!(
            report["curve"].as_array().unwrap().len() >= 100,
            "a point per window"
        );
    }
    for chart in ["both.svg", "both.png"] {
        let reports = [path("olm.json"), path("tree.json")];
        streamboost()
            .args(["plot", "-o"])
            .arg(path(chart))
            .args(reports)
            .assert()
            .success();
    }
    let both = std::fs::read_to_string(path("both.svg")).unwrap();
    assert!(both.contains("olm: ada-olm") && both.contains("tree: hoeffding"));
    let png = std::fs::read(path("both.png")).unwrap();
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() > 20_000);
    streamboost()
        .args(["replay"])
        .flag("--plot", path("curve.jpg"))
        .assert()
        .failure()
        .stderr(predicate::str::contains("curve.jpg").and(predicate::str::contains(".png")))
        .stdout(predicate::str::is_empty());
}

/// A `--report` file is a config `--config` accepts as it is: the model it reports, run
/// again, predicts the same.
#[test]
fn a_report_runs_again_through_config() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name);
    streamboost()
        .args(flags("replay -q --algo oza --learners 7 --preset moa"))
        .flag("--report", path("first.json"))
        .flag("--predictions", path("first.csv"))
        .assert()
        .success();
    streamboost()
        .args(["replay", "-q"])
        .flag("--config", path("first.json"))
        .flag("--predictions", path("again.csv"))
        .assert()
        .success();
    let read = |name: &str| std::fs::read_to_string(path(name)).unwrap();
    assert_eq!(read("first.csv"), read("again.csv"));
    assert_eq!(read_json(&path("first.json"))["algorithm"], "oza");
}

/// `train`: AdaBoost.MM on the bundled car table with a seeded 70/30 split writes its
/// checkpoint, report, per-round CSV and chart; the report's figures hold together (one row
/// a round, the training error under the loss bound, the test accuracy that of the last
/// round's test error). `replay --load` scores the checkpoint exactly as training tested it
/// and counts the rows as seen, not learnt; `inspect` says so. An online algorithm is not
/// trained, and a batch one is not replayed fresh.
#[test]
fn train_saves_a_batch_model_that_replay_scores_without_learning() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name);
    let car = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/car.csv");
    streamboost()
        .args([
            "train",
            "--algo",
            "adaboost-mm",
            "--rounds",
            "30",
            "--max-leaves",
            "6",
        ])
        .args([
            "--test-fraction",
            "0.3",
            "--split-seed",
            "2",
            "-q",
            "--input",
        ])
        .arg(&car)
        .flag("--save", path("mm.parquet"))
        .flag("--report", path("mm.json"))
        .flag("--rounds-csv", path("mm.csv"))
        .flag("--plot", path("mm.svg"))
        .assert()
        .success()
        .stdout(predicate::str::contains("test accuracy"));
    let r = read_json(&path("mm.json"));
    assert_eq!(r["algorithm"], "adaboost-mm");
    assert_eq!(
        r["train"]["rows"].as_u64().unwrap() + r["test"]["rows"].as_u64().unwrap(),
        1728
    );
    assert_eq!(r["test"]["rows"], 518);
    let rounds = r["rounds"].as_array().unwrap();
    assert_eq!(rounds.len(), 30);
    for round in rounds {
        let (error, bound) = (
            round["train_error"].as_f64().unwrap(),
            round["loss_bound"].as_f64().unwrap(),
        );
        assert!(error <= bound, "{round}");
    }
    let test_accuracy = r["test"]["accuracy"].as_f64().unwrap();
    let last_error = rounds.last().unwrap()["test_error"].as_f64().unwrap();
    assert!((test_accuracy - (1.0 - last_error)).abs() < 1e-12);
    assert!(test_accuracy > 0.85, "{test_accuracy}");
    assert!(r["memory"]["table_bytes"].as_u64().unwrap() > 0);
    let csv = std::fs::read_to_string(path("mm.csv")).unwrap();
    assert_eq!(csv.lines().count(), 31);
    assert!(
        std::fs::read_to_string(path("mm.svg"))
            .unwrap()
            .contains("<svg")
    );

    // Scoring the whole table again: every row seen, none learnt.
    replay_loaded(path("mm.parquet"), &car)
        .flag("--save", path("scored.parquet"))
        .assert()
        .success()
        .stderr(predicate::str::contains("does not learn online"));
    let (model, stream) = streamboost::checkpoint::load(&path("scored.parquet")).unwrap();
    assert_eq!(stream.stats.rows_seen, 1210 + 1728);
    assert_eq!(stream.stats.rows_learnt, 1210);
    let streamboost::model::Model::BatchBoost(batch) = model else {
        panic!("a batch model");
    };
    assert_eq!(batch.rows_not_learnt(), 1728);
    streamboost()
        .arg("inspect")
        .arg(path("scored.parquet"))
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "1728 labelled rows scored since, not learnt",
        ));

    fails_saying(
        streamboost()
            .args(["train", "--algo", "ada-olm", "--input"])
            .arg(&car),
        &["ada-olm learns online", "adaboost-mm"],
    );
    fails_saying(
        streamboost().args(["replay", "--algo", "adaboost-mh"]),
        &["adaboost-mh is trained in batch", "streamboost train"],
    );
}

/// `replay --label-delay-by COL`: the column is read beside the features (not one of them),
/// a row with no delay is never learnt nor scored, and the report counts what became of
/// the rows. The saved model has learnt the rows whose label came, and says so; a checkpoint
/// in mid-stream is refused (the rows waiting for their labels would be lost).
#[test]
fn replay_under_a_per_row_label_delay_reports_what_became_of_the_rows() {
    let dir = tempfile::tempdir().unwrap();
    let car = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("data/car.csv"))
        .unwrap();
    let mut text = String::new();
    let mut lost = 0;
    for (i, line) in car.lines().enumerate() {
        let delay = match i {
            0 => "label_delay".to_string(),
            i if i % 7 == 0 => {
                lost += 1;
                String::new()
            }
            i => (i % 50).to_string(),
        };
        text += &format!("{line},{delay}\n");
    }
    let input = dir.path().join("car_delays.csv");
    std::fs::write(&input, text).unwrap();
    let report = dir.path().join("r.json");
    let saved = dir.path().join("delayed.parquet");
    streamboost()
        .args(flags("replay -q --algo oza --label-delay-by label_delay"))
        .flag("--input", &input)
        .flag("--report", &report)
        .flag("--save", &saved)
        .assert()
        .success()
        .stdout(predicate::str::contains("delayed labels"))
        .stderr(predicate::str::contains("6 features"));
    let r = read_json(&report);
    assert_eq!(r["delay"]["learnt"], 1728 - lost);
    assert_eq!(r["delay"]["expired"], lost);
    assert_eq!(r["cumulative"]["rows"], 1728 - lost);
    let (_, stream) = streamboost::checkpoint::load(&saved).unwrap();
    assert_eq!(stream.stats.rows_seen, 1728);
    assert_eq!(stream.stats.rows_learnt, 1728 - lost as u64);
    fails_saying(
        streamboost()
            .args(["replay", "--label-delay", "10"])
            .flag("--input", &input)
            .flag("--save", dir.path().join("m.parquet"))
            .args(["--checkpoint-every", "100"]),
        &["--label-delay", "--checkpoint-every"],
    );
}

/// `--synth` replays a generated drifting stream without a file; the same spec gives the
/// same report, and a bad spec is refused naming what is wrong.
#[test]
fn a_generated_drifting_stream_replays_without_a_file() {
    let args = [
        "--synth",
        "sea:rows=4000:drift=gradual:seed=7",
        "--algo",
        "hoeffding",
    ];
    let (report, stderr) = replay_report(&args);
    assert!(
        stderr.contains("3 features (3 numeric, 0 nominal), 2 classes"),
        "{stderr}"
    );
    assert_eq!(report["rows"], 4000);
    assert_eq!(
        report["inputs"][0],
        "--synth sea:rows=4000:drift=gradual:seed=7"
    );
    let accuracy = report["cumulative"]["accuracy"].as_f64().unwrap();
    assert!(accuracy > 0.75, "{accuracy}");
    let (again, _) = replay_report(&args);
    assert_eq!(again["cumulative"], report["cumulative"]);
    // `synth` writes the same rows to a file, for other tools: replayed, the same report.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sea.csv");
    streamboost()
        .args(["synth", "sea:rows=4000:drift=gradual:seed=7", "-o"])
        .arg(&file)
        .assert()
        .success();
    let from_file = ["--input", file.to_str().unwrap(), "--algo", "hoeffding"];
    let (replayed, _) = replay_report(&from_file);
    assert_eq!(replayed["cumulative"], report["cumulative"]);
    let out = streamboost()
        .args(["replay", "--synth", "sea:drift=sideways"])
        .assert()
        .failure();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr);
    assert!(
        stderr.contains("drift=sideways: expected abrupt, gradual or recurring"),
        "{stderr}"
    );
}
