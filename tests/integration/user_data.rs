//! Nothing a user types destroys their data: an output never overwrites an input (by any
//! name), one job owns a model and an output directory, a flag is applied or refused (never
//! silently ignored), a bad parameter is refused before it allocates, and the command line
//! says what it does.

use std::path::{Path, PathBuf};
use std::process::Command as Process;
use std::time::{Duration, Instant};

use crate::cli::{Flag, fails_saying, replay_output, streamboost};

fn car() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data/car.csv")
}

/// `streamboost replay -q --learners 2`: a quick replay of the bundled data (the checks here
/// are about files and flags, not the model).
fn short_replay() -> assert_cmd::Command {
    let mut command = streamboost();
    command.args(["replay", "-q", "--learners", "2"]);
    command
}

/// A copy of the bundled car data in `dir`, and its bytes.
fn car_copy(dir: &Path) -> (PathBuf, Vec<u8>) {
    let path = dir.join("car.csv");
    std::fs::copy(car(), &path).unwrap();
    (path.clone(), std::fs::read(&path).unwrap())
}

/// `command` fails naming both flags, and `path` keeps `bytes`.
fn refused_keeping(command: &mut assert_cmd::Command, flags: &[&str], path: &Path, bytes: &[u8]) {
    fails_saying(command, flags);
    assert_eq!(
        std::fs::read(path).unwrap(),
        bytes,
        "{} changed",
        path.display()
    );
}

#[test]
fn an_output_that_is_the_input_is_refused_and_the_input_kept() {
    let dir = tempfile::tempdir().unwrap();
    let (input, bytes) = car_copy(dir.path());
    for flag in ["--save", "--report", "--curve", "--predictions"] {
        refused_keeping(
            short_replay().flag("--input", &input).flag(flag, &input),
            &[flag, "--input", "would overwrite"],
            &input,
            &bytes,
        );
    }
    // The same file under other names: relative, a symbolic link, a hard link.
    let symlink = dir.path().join("link.csv");
    std::os::unix::fs::symlink(&input, &symlink).unwrap();
    let hard = dir.path().join("hard.csv");
    std::fs::hard_link(&input, &hard).unwrap();
    for other in [PathBuf::from("./car.csv"), symlink, hard] {
        refused_keeping(
            short_replay()
                .current_dir(dir.path())
                .args(["--input", "car.csv"])
                .flag("--predictions", &other),
            &["--predictions", "--input"],
            &input,
            &bytes,
        );
    }
    // A chart over the input, and `train --save` over its table.
    let svg = dir.path().join("chart.svg");
    std::fs::copy(&input, &svg).unwrap();
    for (command, flag, path) in [
        (["replay", "-q", "--learners", "2"], "--plot", &svg),
        (["train", "-q", "--rounds", "2"], "--save", &input),
    ] {
        refused_keeping(
            streamboost()
                .args(command)
                .flag("--input", path)
                .flag(flag, path),
            &[flag, "--input"],
            path,
            &bytes,
        );
    }
    // Two outputs on one path.
    let report = dir.path().join("r.json");
    fails_saying(
        short_replay()
            .flag("--report", &report)
            .flag("--curve", &report),
        &["--report", "--curve"],
    );
    assert!(!report.exists());
}

/// `--save` naming the `--load` checkpoint updates it (read whole, then replaced atomically).
#[test]
fn a_loaded_checkpoint_may_be_saved_over() {
    let dir = tempfile::tempdir().unwrap();
    let model = replay_output(dir.path(), &["--learners", "2"], "--save", "m.parquet");
    streamboost()
        .args(["replay", "-q"])
        .flag("--load", &model)
        .flag("--input", car())
        .flag("--save", &model)
        .assert()
        .success();
    let (_, stream) = streamboost::checkpoint::load(&model).unwrap();
    assert_eq!(stream.stats.rows_seen, 2 * 1728);
}

/// A failed command leaves an existing output as it was: outputs are written beside their
/// path and renamed into place at the end.
#[test]
fn a_failed_replay_leaves_an_existing_output_whole() {
    let dir = tempfile::tempdir().unwrap();
    let predictions = dir.path().join("p.csv");
    std::fs::write(&predictions, "kept\n").unwrap();
    let broken = dir.path().join("broken.csv");
    let mut text = std::fs::read_to_string(car()).unwrap();
    text.push_str("vhigh,vhigh,2,2,small\n");
    std::fs::write(&broken, text).unwrap();
    fails_saying(
        short_replay()
            .flag("--input", &broken)
            .flag("--predictions", &predictions),
        &["the row has 5 fields where the header has 7"],
    );
    assert_eq!(std::fs::read_to_string(&predictions).unwrap(), "kept\n");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(left.len(), 2, "no temporary file is left: {left:?}");
}

#[test]
fn plot_refuses_to_draw_over_a_report() {
    let dir = tempfile::tempdir().unwrap();
    let report = replay_output(dir.path(), &["--learners", "2"], "--report", "r.json");
    let bytes = std::fs::read(&report).unwrap();
    let as_svg = dir.path().join("r.svg");
    std::fs::hard_link(&report, &as_svg).unwrap();
    refused_keeping(
        streamboost().arg("plot").arg(&report).flag("-o", &as_svg),
        &["--output", "REPORT"],
        &report,
        &bytes,
    );
}

fn job_input(dir: &Path) -> PathBuf {
    let input = dir.join("in");
    std::fs::create_dir_all(&input).unwrap();
    let text = std::fs::read_to_string(car()).unwrap();
    let (header, body) = text.split_once('\n').unwrap();
    let rows: Vec<&str> = body.lines().collect();
    for (f, chunk) in rows.chunks(600).enumerate() {
        let file = format!("{header}\n{}\n", chunk.join("\n"));
        std::fs::write(input.join(format!("part-{f}.csv")), file).unwrap();
    }
    input
}

fn run(input: &Path, out: &Path, model: &Path) -> assert_cmd::Command {
    let mut command = streamboost();
    command
        .args([
            "run",
            "--once",
            "-q",
            "--algo",
            "ada-olm",
            "--learners",
            "3",
        ])
        .flag("--input-dir", input)
        .flag("--output-dir", out)
        .flag("--model", model);
    command
}

/// What a job over `input` (to `out` and `model`, which must succeed) writes on stderr.
fn events_of_a_run(input: &Path, out: &Path, model: &Path) -> String {
    let output = streamboost()
        .args(["run", "--once", "--algo", "ada-olm", "--learners", "2"])
        .flag("--input-dir", input)
        .flag("--output-dir", out)
        .flag("--model", model)
        .assert()
        .success()
        .get_output()
        .clone();
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn a_job_whose_output_directory_is_or_holds_its_input_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let input = job_input(dir.path());
    let before: Vec<_> = std::fs::read_dir(&input)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let model = dir.path().join("m.parquet");
    fails_saying(
        &mut run(&input, &input, &model),
        &["--output-dir", "--input-dir"],
    );
    fails_saying(
        &mut run(&input, &input.join("out"), &model),
        &["--output-dir", "--input-dir", "inside"],
    );
    fails_saying(
        &mut run(&input, &dir.path().join("out"), &input.join("m.parquet")),
        &["--model", "--input-dir"],
    );
    let after: Vec<_> = std::fs::read_dir(&input)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(before, after);
    assert!(!model.exists());
}

/// A missing output directory is created, and the job says at start what it reads and
/// writes.
#[test]
fn a_job_creates_its_output_directory_and_says_what_it_does() {
    let dir = tempfile::tempdir().unwrap();
    let input = job_input(dir.path());
    let (out, model) = (dir.path().join("new/out"), dir.path().join("m.parquet"));
    let stderr = events_of_a_run(&input, &out, &model);
    assert!(out.join("part-0.parquet").exists());
    let start = stderr.lines().next().unwrap_or_default();
    for word in ["start", "input_dir", "output_dir", "model", "fresh"] {
        assert!(
            start.contains(word),
            "no {word} in the first event: {stderr}"
        );
    }
}

/// Two jobs on one model: the second is refused while the first runs, and the first's
/// outputs are those of a job alone.
#[test]
fn a_second_job_on_a_model_is_refused_and_the_first_is_exact() {
    let dir = tempfile::tempdir().unwrap();
    let input = job_input(dir.path());
    let alone = dir.path().join("alone");
    std::fs::create_dir_all(&alone).unwrap();
    let (out_alone, model_alone) = (alone.join("out"), alone.join("m.parquet"));
    run(&input, &out_alone, &model_alone).assert().success();

    let (out, model) = (dir.path().join("out"), dir.path().join("m.parquet"));
    let binary = assert_cmd::cargo::cargo_bin("streamboost");
    let first = Process::new(&binary)
        .args([
            "run",
            "-q",
            "--poll",
            "0.05",
            "--algo",
            "ada-olm",
            "--learners",
            "3",
        ])
        .flag("--input-dir", &input)
        .flag("--output-dir", &out)
        .flag("--model", &model)
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !out.join("part-2.parquet").exists() {
        assert!(start.elapsed() < Duration::from_secs(120), "no output");
        std::thread::sleep(Duration::from_millis(20));
    }
    let lock = std::fs::read_to_string(dir.path().join("m.parquet.lock")).unwrap();
    assert!(lock.contains(&format!("process {}", first.id())), "{lock}");
    // The same model with another output directory, and another model with the same
    // output directory.
    fails_saying(
        &mut run(&input, &dir.path().join("out2"), &model),
        &["m.parquet is in use by process", "one job per model"],
    );
    fails_saying(
        &mut run(&input, &out, &dir.path().join("m2.parquet")),
        &["out is in use by process"],
    );
    crate::run_job::stop_with_sigterm(first);
    assert!(
        !dir.path().join("m.parquet.lock").exists(),
        "released on exit"
    );
    for part in ["part-0.parquet", "part-1.parquet", "part-2.parquet"] {
        assert_eq!(
            std::fs::read(out.join(part)).unwrap(),
            std::fs::read(out_alone.join(part)).unwrap(),
            "{part}"
        );
    }
}

/// A lock file whose holder died (it holds no lock any more) is taken over.
#[test]
fn a_stale_lock_is_taken_over() {
    let dir = tempfile::tempdir().unwrap();
    let input = job_input(dir.path());
    let (out, model) = (dir.path().join("out"), dir.path().join("m.parquet"));
    std::fs::write(
        dir.path().join("m.parquet.lock"),
        "process 999999 on host gone (since unix time 0)\n",
    )
    .unwrap();
    run(&input, &out, &model).assert().success();
    assert!(model.exists());
    assert!(!dir.path().join("m.parquet.lock").exists());
}

/// The flags of a fresh model given with an existing one: refused where they describe
/// another model, accepted where they describe this one (a job restarted as it started).
#[test]
fn model_flags_for_an_existing_model_are_refused_unless_they_describe_it() {
    let dir = tempfile::tempdir().unwrap();
    let input = job_input(dir.path());
    let (out, model) = (dir.path().join("out"), dir.path().join("m.parquet"));
    run(&input, &out, &model).assert().success();
    let digest = streamboost::checkpoint::read_metadata(&model)
        .unwrap()
        .digest;
    fails_saying(
        streamboost()
            .args(["run", "--once", "-q", "--algo", "mbbm", "--learners", "3"])
            .flag("--input-dir", &input)
            .flag("--output-dir", &out)
            .flag("--model", &model),
        &[
            "m.parquet exists and holds",
            "--algo --learners describe a fresh model",
        ],
    );
    fails_saying(
        streamboost()
            .args(["run", "--once", "-q", "--label", "safety"])
            .flag("--input-dir", &input)
            .flag("--output-dir", &out)
            .flag("--model", &model),
        &["--label describe a fresh model", "label `label`"],
    );
    assert_eq!(
        streamboost::checkpoint::read_metadata(&model)
            .unwrap()
            .digest,
        digest
    );
    // The command line it started with, again, and none at all.
    run(&input, &out, &model).assert().success();
    streamboost()
        .args(["run", "--once", "-q"])
        .flag("--input-dir", &input)
        .flag("--output-dir", &out)
        .flag("--model", &model)
        .assert()
        .success();
}

/// `run` names each class it meets outside the model's classes, once, and says how to
/// learn it.
#[test]
fn a_job_names_each_class_outside_its_model_once() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    std::fs::create_dir_all(&input).unwrap();
    let text = std::fs::read_to_string(car()).unwrap();
    let (header, body) = text.split_once('\n').unwrap();
    let first: Vec<&str> = body
        .lines()
        .filter(|l| l.ends_with(",acc") || l.ends_with(",unacc"))
        .take(300)
        .collect();
    std::fs::write(
        input.join("a.csv"),
        format!("{header}\n{}\n", first.join("\n")),
    )
    .unwrap();
    std::fs::write(input.join("b.csv"), text.clone()).unwrap();
    std::fs::write(input.join("c.csv"), text).unwrap();
    let (out, model) = (dir.path().join("out"), dir.path().join("m.parquet"));
    let stderr = events_of_a_run(&input, &out, &model);
    for class in ["good", "vgood"] {
        let warnings = stderr
            .lines()
            .filter(|l| l.contains("WARN") && l.contains(&format!("class=\"{class}\"")))
            .count();
        assert_eq!(warnings, 1, "{class}: {stderr}");
    }
    assert!(stderr.contains("--classes"), "{stderr}");
}

/// A rejected file is named, with its reason, at run time.
#[test]
fn a_job_names_the_files_it_rejects() {
    let dir = tempfile::tempdir().unwrap();
    let input = job_input(dir.path());
    std::fs::write(input.join("part-1a.csv"), "buying,label\nvhigh\n").unwrap();
    let (out, model) = (dir.path().join("out"), dir.path().join("m.parquet"));
    let stderr = events_of_a_run(&input, &out, &model);
    assert!(
        stderr
            .lines()
            .any(|l| l.contains("WARN") && l.contains("part-1a.csv") && l.contains("rejected")),
        "{stderr}"
    );
}

/// A live model registered in SQL with a config that describes another model than its
/// checkpoint holds is refused.
#[cfg(feature = "sql")]
#[test]
fn sql_refuses_a_config_that_is_not_the_live_checkpoints() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["--algo", "ada-olm", "--learners", "2"];
    let model = replay_output(dir.path(), &args, "--save", "ck.parquet");
    let config = dir.path().join("mbbm.json");
    std::fs::write(
        &config,
        r#"{"config": {"algorithm": "mbbm"}, "classes": ["acc", "good", "unacc", "vgood"]}"#,
    )
    .unwrap();
    let live = format!("m={},config={}", model.display(), config.display());
    fails_saying(
        streamboost()
            .args(["sql", "SELECT * FROM boost_models()"])
            .flag("--live", &live),
        &["ck.parquet` exists and holds", "drop config="],
    );
}

#[cfg(feature = "sql")]
#[test]
fn sql_refuses_an_output_over_its_table() {
    let dir = tempfile::tempdir().unwrap();
    let (input, bytes) = car_copy(dir.path());
    let table = format!("v={}", input.display());
    refused_keeping(
        streamboost()
            .args(["sql", "SELECT * FROM v"])
            .flag("--table", &table)
            .flag("--output", &input),
        &["--output", "--table"],
        &input,
        &bytes,
    );
    let statement = format!("SELECT * FROM '{}'", input.display());
    refused_keeping(
        streamboost()
            .arg("sql")
            .arg(statement)
            .flag("--output", &input),
        &["--output", "the statement's"],
        &input,
        &bytes,
    );
}

/// A label of 65,536 characters is refused with the bound; raised, it is reported whole in
/// JSON and cut in the printed table.
#[test]
fn a_label_longer_than_the_bound_is_refused_and_a_raised_bound_does_not_panic() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(car()).unwrap();
    let long = "x".repeat(65_536);
    let edited: String = text
        .lines()
        .enumerate()
        .map(|(i, l)| match i % 50 {
            7 => format!("{},{long}\n", l.rsplit_once(',').unwrap().0),
            _ => format!("{l}\n"),
        })
        .collect();
    let input = dir.path().join("long.csv");
    std::fs::write(&input, edited).unwrap();
    fails_saying(
        short_replay().flag("--input", &input),
        &["65536", "STREAMBOOST_MAX_LABEL_BYTES"],
    );
    let report = dir.path().join("r.json");
    let output = short_replay()
        .env("STREAMBOOST_MAX_LABEL_BYTES", "100000")
        .flag("--input", &input)
        .flag("--report", &report)
        .assert()
        .success()
        .get_output()
        .clone();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("xxxxxxxx…"), "{stdout}");
    assert!(std::fs::read_to_string(&report).unwrap().contains(&long));
}

#[test]
fn parameters_that_would_exhaust_memory_are_refused_before_allocating() {
    fails_saying(
        streamboost().args(["replay", "-q", "--learners", "1000000"]),
        &["n_learners", "1000000", "STREAMBOOST_MAX_LEARNERS"],
    );
    let dir = tempfile::tempdir().unwrap();
    fails_saying(
        streamboost()
            .env("STREAMBOOST_MAX_COLUMNS", "5")
            .args(["replay", "-q"])
            .flag("--input", car()),
        &["car.csv", "7", "STREAMBOOST_MAX_COLUMNS"],
    );
    let _ = dir;
}

#[test]
fn negative_numbers_are_refused_for_what_they_are() {
    for flag in ["--learners", "--seed"] {
        let output = streamboost()
            .args(["replay", "-q", flag, "-1"])
            .assert()
            .failure()
            .get_output()
            .clone();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("invalid value '-1'")
                && stderr.contains(flag)
                && stderr.contains("a negative number"),
            "{stderr}"
        );
        assert!(!stderr.contains("unexpected argument"), "{stderr}");
    }
}

/// `--help` is a screen or two of plain text; `--help-all` has every flag's whole text.
#[test]
fn help_is_short_and_plain() {
    let help = |flag: &str| {
        let output = streamboost().args(["replay", flag]).assert().success();
        String::from_utf8_lossy(&output.get_output().stdout).into_owned()
    };
    let (short, all) = (help("--help"), help("--help-all"));
    assert!(short.lines().count() < all.lines().count() / 2, "{short}");
    for text in [&short, &all] {
        assert!(!text.contains("\\[") && !text.contains("[`"), "{text}");
    }
    assert!(all.contains("[JGT] Algorithm 2"), "{all}");
}

/// Chart titles name files, not paths; reports of streams of different lengths each mark
/// their final fraction.
#[test]
fn charts_name_files_and_mark_each_final_fraction() {
    let dir = tempfile::tempdir().unwrap();
    let deep = dir.path().join("a/very/deep/folder");
    std::fs::create_dir_all(&deep).unwrap();
    let input = deep.join("cars.csv");
    std::fs::copy(car(), &input).unwrap();
    let chart = dir.path().join("c.svg");
    short_replay()
        .flag("--input", &input)
        .flag("--plot", &chart)
        .assert()
        .success();
    let svg = std::fs::read_to_string(&chart).unwrap();
    assert!(svg.contains("on cars.csv"), "{svg}");
    assert!(!svg.contains("very/deep"));

    let short = dir.path().join("short.csv");
    let text = std::fs::read_to_string(car()).unwrap();
    let lines: Vec<&str> = text.lines().take(801).collect();
    std::fs::write(&short, lines.join("\n") + "\n").unwrap();
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    for (input, report) in [(&input, &a), (&short, &b)] {
        short_replay()
            .flag("--input", input)
            .flag("--report", report)
            .assert()
            .success();
    }
    let both = dir.path().join("both.svg");
    streamboost()
        .arg("plot")
        .args([&a, &b])
        .flag("-o", &both)
        .assert()
        .success();
    let svg = std::fs::read_to_string(&both).unwrap();
    assert_eq!(svg.matches("the final fraction starts").count(), 2, "{svg}");
}
