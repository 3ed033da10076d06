//! `streamboost run`: a live model over a directory of files, exactly once across SIGKILLs,
//! a final commit on SIGTERM, and bad files moved aside.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use arrow::record_batch::RecordBatch;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use streamboost::checkpoint;
use streamboost::core::Rng;
use streamboost::runtime::KeyedStore;

use crate::cli::{Flag, predicted_labels, streamboost};

const MODEL_ARGS: [&str; 6] = ["--algo", "ada-olm", "--learners", "8", "--seed", "4"];

/// `files` CSV files of the bundled car rows (cycled), each `rows` rows with an `id` column.
fn input_dir(dir: &Path, files: usize, rows: usize) -> PathBuf {
    let car = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("data/car.csv"))
        .unwrap();
    let mut lines = car.lines();
    let header = lines.next().unwrap();
    let body: Vec<&str> = lines.collect();
    let input = dir.join("in");
    std::fs::create_dir_all(&input).unwrap();
    for f in 0..files {
        let mut text = format!("id,{header}\n");
        for r in 0..rows {
            let id = f * rows + r;
            text += &format!("{id},{}\n", body[id % body.len()]);
        }
        std::fs::write(input.join(format!("events-{f:03}.csv")), text).unwrap();
    }
    input
}

/// Each flag followed by its path.
fn path_flags(flags: &[(&str, &Path)]) -> Vec<String> {
    let pairs = flags
        .iter()
        .map(|(flag, path)| [flag.to_string(), path.display().to_string()]);
    pairs.flatten().collect()
}

/// A job's output directory (made) and checkpoint path in `dir`.
fn out_and_model(dir: &Path) -> (PathBuf, PathBuf) {
    let (out, model) = (dir.join("out"), dir.join("m.parquet"));
    std::fs::create_dir_all(&out).unwrap();
    (out, model)
}

fn run_args(input: &Path, out: &Path, model: &Path) -> Vec<String> {
    let mut args: Vec<String> = ["run", "--once", "-q", "--passthrough", "id"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.extend(path_flags(&[
        ("--input-dir", input),
        ("--output-dir", out),
        ("--model", model),
    ]));
    args.extend(["--checkpoint-every", "60"].map(String::from));
    args.extend(MODEL_ARGS.map(String::from));
    args
}

/// Runs the job over `input` (once), which must succeed.
fn run_to_end(input: &Path, out: &Path, model: &Path, extra: &[&str]) {
    std::fs::create_dir_all(out).unwrap();
    streamboost()
        .args(run_args(input, out, model))
        .args(extra)
        .assert()
        .success();
}

/// One input file of 300 rows in `dir` and the job over it run to its end: the input, the
/// output directory and the checkpoint.
fn finished_job(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let input = input_dir(dir, 1, 300);
    let (out, model) = out_and_model(dir);
    run_to_end(&input, &out, &model, &[]);
    (input, out, model)
}

/// Asserts that two checkpoints hold the same model, by their digests.
fn assert_same_digest(a: &Path, b: &Path) {
    let digest = |path| checkpoint::read_metadata(path).unwrap().digest;
    assert_eq!(digest(a), digest(b), "{} and {}", a.display(), b.display());
}

/// Every output file's batches, by name.
fn outputs(dir: &Path) -> Vec<(String, Vec<RecordBatch>)> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".parquet"))
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|name| {
            let file = std::fs::File::open(dir.join(&name)).unwrap();
            let reader = ParquetRecordBatchReaderBuilder::try_new(file)
                .unwrap()
                .build()
                .unwrap();
            (name, reader.map(Result::unwrap).collect())
        })
        .collect()
}

/// The ids of every output row, in order.
fn ids(outputs: &[(String, Vec<RecordBatch>)]) -> Vec<i64> {
    use arrow::array::AsArray;
    use arrow::datatypes::Int64Type;
    outputs
        .iter()
        .flat_map(|(_, batches)| batches.iter())
        .flat_map(|b| b.column(0).as_primitive::<Int64Type>().values().to_vec())
        .collect()
}

/// The values of the string column `column` across `outputs`, in order.
fn strings(outputs: &[(String, Vec<RecordBatch>)], column: &str) -> Vec<String> {
    let batches: Vec<_> = outputs
        .iter()
        .flat_map(|(_, b)| b.iter().cloned())
        .collect();
    crate::common::strings(&batches, column)
}

/// A job killed with SIGKILL at random points and restarted each time ends with the same
/// outputs, row for row, and the same checkpoint, bit for bit, as an uninterrupted one; no
/// row is lost or emitted twice.
#[test]
fn a_job_killed_at_random_points_ends_as_an_uninterrupted_one() {
    killed_at_random_points(&[], &[], "parquet");
}

/// The same with one model per key: the keyed checkpoint (a directory) ends with every key's
/// model as an uninterrupted run's. The killed runs hold their keys within a budget smaller
/// than one key's model, so that every key is spilled and loaded back at every batch, and
/// killed with spill packs not yet committed: the result is still the uninterrupted run's,
/// with every key in memory.
#[test]
fn a_keyed_job_under_a_memory_budget_killed_at_random_points_ends_as_an_uninterrupted_one() {
    let key = ["--key", "buying"];
    killed_at_random_points(
        &key,
        &[&key[..], &["--memory-budget", "1KB"]].concat(),
        "keys",
    );
}

/// The rows seen by a job's committed model, one or keyed.
fn rows_seen(model: &Path) -> Option<u64> {
    if KeyedStore::is_keyed(model) {
        return Some(KeyedStore::open(model).ok()?.rows().0);
    }
    checkpoint::load(model).ok().map(|(_, s)| s.stats.rows_seen)
}

/// Every model of a job's checkpoint, as text (a keyed one's by key), with its stream state.
fn models(model: &Path) -> Vec<(Option<String>, String, checkpoint::StreamState)> {
    let as_text = |(m, s): (streamboost::model::Model, checkpoint::StreamState)| {
        (serde_json::to_string(&m).unwrap(), s)
    };
    if !KeyedStore::is_keyed(model) {
        let (m, s) = as_text(checkpoint::load(model).unwrap());
        return vec![(None, m, s)];
    }
    let store = KeyedStore::open(model).unwrap();
    let keys = store.manifest().keys.iter();
    keys.map(|e| {
        let (m, s) = as_text(store.load(e.key.as_deref()).unwrap().unwrap());
        (e.key.clone(), m, s)
    })
    .collect()
}

/// Runs the job uninterrupted with `extra`, and killed at random points then to the end with
/// `killed_extra`, and compares their outputs and models.
/// Where a sequence of killed runs stands after one of them.
enum Restarts {
    /// The restarts so far are all the test needs.
    Enough,
    /// More are needed.
    More,
    /// The run reached the end before its kill (a loaded machine runs at another pace than
    /// the uninterrupted run that timed the kills): start again from nothing, with kills
    /// twice as early.
    FromNothing,
}

impl Restarts {
    fn enough(enough: bool) -> Self {
        if enough {
            Restarts::Enough
        } else {
            Restarts::More
        }
    }
}

/// Runs `streamboost args` over and over, each run SIGKILLed at a random time drawn from
/// `timing = (seed, from, to)` seconds after its start (fractions of an uninterrupted run's
/// time), at least 12 times and at most 60, until `after` (called after each run) says the
/// restarts are enough; then once to its end. Returns the number of runs killed.
fn killed_until(
    args: &[String], out: &Path, model: &Path, timing: (u64, f64, f64),
    mut after: impl FnMut() -> Restarts,
) -> usize {
    let binary = assert_cmd::cargo::cargo_bin("streamboost");
    let (seed, lo, hi) = timing;
    let mut rng = Rng::new(seed);
    let (mut kills, mut pace) = (0, 1.0);
    for attempt in 0..60 {
        let mut child = Command::new(&binary)
            .args(args)
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_secs_f64(rng.uniform_in(lo, hi) * pace));
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap();
            kills += 1;
        }
        child.wait().unwrap();
        match after() {
            Restarts::Enough if attempt >= 11 => break,
            Restarts::Enough | Restarts::More => {}
            Restarts::FromNothing => {
                let _ = std::fs::remove_dir_all(out);
                let _ = std::fs::remove_dir_all(model);
                let _ = std::fs::remove_file(model);
                std::fs::create_dir_all(out).unwrap();
                kills = 0;
                pace /= 2.0;
            }
        }
    }
    streamboost().args(args).assert().success();
    kills
}

fn killed_at_random_points(extra: &[&str], killed_extra: &[&str], extension: &str) {
    let dir = tempfile::tempdir().unwrap();
    let input = input_dir(dir.path(), 6, 300);
    let (whole_out, whole_model) = (
        dir.path().join("whole"),
        dir.path().join(format!("whole.{extension}")),
    );
    std::fs::create_dir_all(&whole_out).unwrap();
    let clock = Instant::now();
    run_to_end(&input, &whole_out, &whole_model, extra);
    // Kills land between a fifth and a half of an uninterrupted run's time after a start.
    let whole = clock.elapsed().as_secs_f64();

    let (out, model) = (
        dir.path().join("killed"),
        dir.path().join(format!("killed.{extension}")),
    );
    std::fs::create_dir_all(&out).unwrap();
    // Where each killed run's successor starts: the test must kill mid-stream, not only
    // before the first commit or after the last.
    let mut positions = std::collections::BTreeSet::new();
    let mid_stream = |positions: &std::collections::BTreeSet<u64>| {
        positions
            .iter()
            .filter(|&&rows| rows > 0 && rows < 1800)
            .count()
    };
    let mut args = run_args(&input, &out, &model);
    args.extend(killed_extra.iter().map(|a| a.to_string()));
    let kills = killed_until(&args, &out, &model, (11, 0.2 * whole, 0.5 * whole), || {
        let seen = rows_seen(&model);
        positions.extend(seen);
        if seen == Some(1800) && mid_stream(&positions) < 3 {
            positions.clear();
            return Restarts::FromNothing;
        }
        Restarts::enough(mid_stream(&positions) >= 3)
    });
    let mid_stream = mid_stream(&positions);
    assert!(
        kills > 0 && mid_stream >= 3,
        "{kills} kills, restarts at rows {positions:?}: the kills must land mid-stream"
    );

    let (expected, got) = (outputs(&whole_out), outputs(&out));
    assert_eq!(
        ids(&got),
        (0..1800).collect::<Vec<i64>>(),
        "one row out per row in"
    );
    assert_eq!(got.len(), expected.len());
    for ((name, a), (_, b)) in got.iter().zip(&expected) {
        assert_eq!(a, b, "{name} differs from the uninterrupted run's");
    }
    assert_eq!(models(&whole_model), models(&model));
    if extension == "keys" {
        // `inspect` lists a keyed checkpoint's keys with their rows.
        let shown = streamboost().arg("inspect").arg(&model).assert().success();
        let text = String::from_utf8(shown.get_output().stdout.clone()).unwrap();
        assert!(text.contains("keys            4, "), "{text}");
        assert!(
            text.contains("rows            1800 seen, 1800 learnt"),
            "{text}"
        );
        assert!(text.lines().any(|l| l.starts_with("vhigh")), "{text}");
    }
    if extension == "parquet" {
        assert_same_digest(&whole_model, &model);
    }
    assert!(
        std::fs::read_dir(out.join(".parts"))
            .unwrap()
            .next()
            .is_none(),
        "no part is left behind"
    );
}

/// SIGTERM while the job watches its directory: a final commit, exit 0.
#[test]
fn sigterm_commits_and_exits_zero() {
    let dir = tempfile::tempdir().unwrap();
    let input = input_dir(dir.path(), 2, 200);
    let (out, model) = out_and_model(dir.path());
    let mut args = run_args(&input, &out, &model);
    args.retain(|a| a != "--once");
    args.extend(["--poll", "0.05"].map(String::from));
    let binary = assert_cmd::cargo::cargo_bin("streamboost");
    let child = Command::new(&binary).args(&args).spawn().unwrap();
    let start = Instant::now();
    while !out.join("events-001.parquet").exists() {
        assert!(start.elapsed() < Duration::from_secs(60), "no output");
        std::thread::sleep(Duration::from_millis(20));
    }
    stop_with_sigterm(child);
    let (_, stream) = checkpoint::load(&model).unwrap();
    let position = stream.position.unwrap();
    assert_eq!(
        (position.file.as_str(), position.done),
        ("events-001.csv", true)
    );
    assert_eq!(stream.stats.rows_seen, 400);
}

/// Sends SIGTERM to `child`, which must then exit 0.
pub(crate) fn stop_with_sigterm(mut child: std::process::Child) {
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let exit = child.wait().unwrap();
    assert!(exit.success(), "{exit:?}");
}

/// A file that cannot be read, or whose columns do not fit the model, is moved to
/// `rejected/` with its reason; the job goes on with the next file.
#[test]
fn bad_files_are_moved_aside_with_a_reason() {
    let dir = tempfile::tempdir().unwrap();
    let input = input_dir(dir.path(), 3, 50);
    std::fs::write(input.join("events-000a.csv"), "id,x,label\n1,2\n").unwrap();
    std::fs::write(input.join("events-001a.csv"), "id,other,label\n1,2,acc\n").unwrap();
    std::fs::write(input.join("events-002.csv.partial"), "half a file").unwrap();
    let (out, model) = out_and_model(dir.path());
    run_to_end(&input, &out, &model, &[]);
    let rejected = input.join("rejected");
    for name in ["events-000a.csv", "events-001a.csv"] {
        assert!(rejected.join(name).exists(), "{name}");
        let reason = std::fs::read_to_string(rejected.join(format!("{name}.reason.txt"))).unwrap();
        assert!(
            reason.contains(name) || reason.contains("column"),
            "{reason}"
        );
    }
    assert_eq!(ids(&outputs(&out)).len(), 150);
    assert!(
        input.join("events-002.csv.partial").exists(),
        "a file being written is left"
    );
    let (_, stream) = checkpoint::load(&model).unwrap();
    assert_eq!(stream.stats.rows_seen, 150);
}

/// A checkpoint path in a directory that does not exist fails before any file is taken.
#[test]
fn an_unwritable_checkpoint_fails_first() {
    let dir = tempfile::tempdir().unwrap();
    let input = input_dir(dir.path(), 1, 20);
    let out = dir.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    let model = dir.path().join("missing/m.parquet");
    crate::cli::fails_saying(
        streamboost().args(run_args(&input, &out, &model)),
        &["its directory does not exist"],
    );
    assert!(std::fs::read_dir(&out).unwrap().next().is_none());
}

/// A stop between an output's rename into place and the removal of its last parts leaves
/// parts of a committed file beside its whole output: the restarted job removes them and
/// keeps the output whole (it once rebuilt the output from them, losing the rows of the
/// parts already removed).
#[test]
fn parts_left_beside_a_whole_output_are_removed_not_reassembled() {
    let dir = tempfile::tempdir().unwrap();
    let (input, out, model) = finished_job(dir.path());
    let whole = outputs(&out);
    assert_eq!(ids(&whole), (0..300).collect::<Vec<i64>>());
    // The part of rows 120.. as the job wrote it, left behind.
    let parts = out.join(".parts");
    let batch = arrow::compute::concat_batches(&whole[0].1[0].schema(), &whole[0].1).unwrap();
    let rest = batch.slice(120, batch.num_rows() - 120);
    let part = parts.join(format!("events-000.csv@{:020}.parquet", 120));
    streamboost::columnar::write_batch(&part, &rest).unwrap();

    run_to_end(&input, &out, &model, &[]);
    assert_eq!(outputs(&out), whole, "the output stays whole");
    assert!(!part.exists(), "the part left behind is removed");
}

/// A commit that fails (here, a file size limit: the checkpoint cannot be written) ends the
/// job with an error naming the file and exit 1; the previous checkpoint stays whole, no
/// output of the uncommitted rows appears, and the job restarted without the limit goes on
/// from the last commit to the same end as an uninterrupted run.
#[test]
fn a_failed_commit_ends_the_job_and_keeps_the_last_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let (input, out, model) = finished_job(dir.path());
    let before = std::fs::read(&model).unwrap();
    let first_outputs = outputs(&out);
    // A second file arrives; the next commit would write a checkpoint past 16 KiB.
    let more = input_dir(&dir.path().join("more"), 2, 300);
    std::fs::rename(more.join("events-001.csv"), input.join("events-001.csv")).unwrap();
    let binary = assert_cmd::cargo::cargo_bin("streamboost");
    let limited = Command::new("bash")
        .arg("-c")
        .arg(r#"trap '' XFSZ; ulimit -f 16; exec "$0" "$@""#)
        .arg(&binary)
        .args(run_args(&input, &out, &model))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&limited.stderr);
    assert_eq!(limited.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("too large"), "{stderr}");
    assert_eq!(
        std::fs::read(&model).unwrap(),
        before,
        "the last checkpoint is kept"
    );
    assert_eq!(
        outputs(&out),
        first_outputs,
        "no output of uncommitted rows"
    );

    run_to_end(&input, &out, &model, &[]);
    let (whole_out, whole_model) = (dir.path().join("whole"), dir.path().join("w.parquet"));
    std::fs::create_dir_all(&whole_out).unwrap();
    run_to_end(&input, &whole_out, &whole_model, &[]);
    assert_eq!(outputs(&out), outputs(&whole_out));
    assert_same_digest(&model, &whole_model);
}

/// `run --stdin`: an Arrow IPC stream in, scored batches out on stdout as IPC, the same
/// predictions as the directory job's. Fed the stream again from its start after a run over
/// its first part, with `--learn-once-by id`, it learns only the rows after the commit: its
/// model ends as one run's over the whole stream.
#[test]
fn a_piped_job_scores_as_the_directory_job_and_learns_once_by_id() {
    use arrow::ipc::reader::StreamReader;
    use arrow::ipc::writer::StreamWriter;

    let dir = tempfile::tempdir().unwrap();
    let input = input_dir(dir.path(), 1, 1728);
    let (out, dir_model) = (dir.path().join("out"), dir.path().join("dir.parquet"));
    run_to_end(&input, &out, &dir_model, &[]);
    let table = streamboost::columnar::read_table(&input.join("events-000.csv")).unwrap();
    let all = table.to_batch().unwrap();
    let ipc = |rows: usize| {
        let mut bytes = Vec::new();
        let mut writer = StreamWriter::try_new(&mut bytes, &all.schema()).unwrap();
        for start in (0..rows).step_by(100) {
            writer
                .write(&all.slice(start, 100.min(rows - start)))
                .unwrap();
        }
        writer.finish().unwrap();
        drop(writer);
        bytes
    };
    let piped = |model: &Path, rows: usize| -> RecordBatch {
        let output = streamboost()
            .args(["run", "--stdin", "-q", "--learn-once-by", "id"])
            .flag("--model", model)
            .args(["--checkpoint-every", "60"])
            .args(MODEL_ARGS)
            .write_stdin(ipc(rows))
            .assert()
            .success();
        let stdout = output.get_output().stdout.clone();
        let reader = StreamReader::try_new(std::io::Cursor::new(stdout), None).unwrap();
        let batches: Vec<_> = reader.map(Result::unwrap).collect();
        arrow::compute::concat_batches(&batches[0].schema(), &batches).unwrap()
    };
    let predictions = |b: &RecordBatch| crate::common::strings(&[b.clone()], "predicted_label");

    let whole_model = dir.path().join("whole.parquet");
    let whole = piped(&whole_model, 1728);
    assert_eq!(whole.num_rows(), 1728);
    let from_dir = &outputs(&out)[0].1;
    let from_dir = arrow::compute::concat_batches(&from_dir[0].schema(), from_dir).unwrap();
    assert_eq!(
        predictions(&whole),
        predictions(&from_dir),
        "as the directory job"
    );

    let model = dir.path().join("parts.parquet");
    let first = piped(&model, 1000);
    assert_eq!(predictions(&first), predictions(&whole)[..1000]);
    let again = piped(&model, 1728);
    assert_eq!(again.num_rows(), 1728, "every row scored");
    let (m1, s1) = checkpoint::load(&whole_model).unwrap();
    let (m2, s2) = checkpoint::load(&model).unwrap();
    assert_eq!(s2.stats.rows_learnt, 1728, "each row learnt once");
    assert_eq!(s1.position.unwrap().ts, s2.position.unwrap().ts);
    let json = |m| serde_json::to_string(&m).unwrap();
    assert_eq!(
        json(m1),
        json(m2),
        "rows fed again change nothing: the model is one run's"
    );
}

/// `run --stdin` with a pipe that stays open: SIGTERM while it waits for more ends it with a
/// commit of the rows taken and exit 0; the scored rows were written to stdout as they came.
#[test]
fn sigterm_on_a_quiet_pipe_commits_and_exits_zero() {
    use std::io::{Read, Write};
    let dir = tempfile::tempdir().unwrap();
    let input = input_dir(dir.path(), 1, 300);
    let table = streamboost::columnar::read_table(&input.join("events-000.csv")).unwrap();
    let batch = table.to_batch().unwrap();
    let mut bytes = Vec::new();
    let mut writer =
        arrow::ipc::writer::StreamWriter::try_new(&mut bytes, &batch.schema()).unwrap();
    writer.write(&batch).unwrap();
    drop(writer); // no end-of-stream marker: more could come
    let model = dir.path().join("m.parquet");
    let binary = assert_cmd::cargo::cargo_bin("streamboost");
    let mut child = Command::new(&binary)
        .args(["run", "--stdin", "-q"])
        .flag("--model", &model)
        .args(MODEL_ARGS)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&bytes).unwrap();
    stdin.flush().unwrap();
    // The scored batch arrives on stdout before the stop: read its first bytes.
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 8];
    stdout.read_exact(&mut first).unwrap();
    stop_with_sigterm(child);
    let (_, stream) = checkpoint::load(&model).unwrap();
    assert_eq!(stream.stats.rows_seen, 300);
    drop(stdin);
}

/// `--log-format json`: every event on stderr is a JSON object; the last says `done` with
/// the job's totals; a rejected file is a warning.
#[test]
fn events_are_json_lines_for_a_log_collector() {
    let dir = tempfile::tempdir().unwrap();
    let input = input_dir(dir.path(), 2, 100);
    std::fs::write(input.join("events-001.csv"), "not,a\ncsv").unwrap();
    let (out, model) = out_and_model(dir.path());
    let mut args = run_args(&input, &out, &model);
    args.retain(|a| a != "-q");
    let run = streamboost()
        .args(args)
        .args(["--log-format", "json", "--progress-every", "0"])
        .assert()
        .success();
    let stderr = String::from_utf8(run.get_output().stderr.clone()).unwrap();
    let events: Vec<serde_json::Value> = stderr
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect();
    assert!(events.iter().any(|e| e["level"] == "WARN"), "{stderr}");
    let last = events.last().unwrap();
    assert_eq!(last["message"], "done", "{stderr}");
    assert_eq!(
        (last["rows"].as_u64(), last["files"].as_u64()),
        (Some(100), Some(1))
    );
    assert!(last["accuracy"].as_f64().unwrap() > 0.5, "{stderr}");
}

/// Runs [`delayed_args`] to its end, which must succeed.
fn run_delayed(events: &Path, labels: &Path, out: &Path, model: &Path, extra: &[&str]) {
    std::fs::create_dir_all(out).unwrap();
    let args = delayed_args(events, labels, out, model, extra);
    streamboost().args(args).assert().success();
}

/// `run --once` over event and label directories (ids `id`, times `ts`, car's classes),
/// then `extra`.
fn delayed_args(
    events: &Path, labels: &Path, out: &Path, model: &Path, extra: &[&str],
) -> Vec<String> {
    let mut args: Vec<String> = ["run", "--once", "-q", "--id", "id", "--time", "ts"]
        .iter()
        .chain(&["--classes", CAR_CLASSES])
        .chain(&MODEL_ARGS)
        .chain(extra)
        .map(|a| a.to_string())
        .collect();
    let dirs = [
        ("--input-dir", events),
        ("--labels", labels),
        ("--output-dir", out),
    ];
    args.extend(path_flags(&dirs));
    args.extend(path_flags(&[("--model", model)]));
    args
}

/// The bundled car split for delayed labels: event files (`id`, `ts`, the features) of
/// `rows` rows, and label files (`id`, `label`, `ts`, and `buying` to key them by) named to
/// sort just before the next
/// event file, each holding the labels of the event file before it (all arriving at the
/// next file's first time). Also the replay's input: the car rows with the delay (in rows)
/// at which each label arrives under that order.
fn delayed_dirs(dir: &Path, rows: usize) -> (PathBuf, PathBuf, PathBuf) {
    let car = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("data/car.csv"))
        .unwrap();
    let mut lines = car.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let label = header.iter().position(|c| *c == "label").unwrap();
    let buying = header.iter().position(|c| *c == "buying").unwrap();
    let body: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let (events, labels) = (dir.join("events"), dir.join("labels"));
    std::fs::create_dir_all(&events).unwrap();
    std::fs::create_dir_all(&labels).unwrap();
    // The cells of a row but its label's.
    let but_label = |cells: &[&str]| {
        let kept = cells.iter().enumerate().filter(|(j, _)| *j != label);
        kept.map(|(_, c)| *c).collect::<Vec<_>>().join(",")
    };
    let features = but_label(&header);
    let mut replay = format!("{},delay\n", header.join(","));
    for (k, chunk) in body.chunks(rows).enumerate() {
        let mut e = format!("id,ts,{features}\n");
        let mut l = String::from("id,label,ts,buying\n");
        let next = (k + 1) * rows;
        for (r, cells) in chunk.iter().enumerate() {
            let i = k * rows + r;
            let x = but_label(cells);
            e += &format!("{i},{i},{x}\n");
            l += &format!("{i},{},{next},{}\n", cells[label], cells[buying]);
            replay += &format!("{},{}\n", cells.join(","), next - i);
        }
        std::fs::write(events.join(format!("part-{k:03}.csv")), e).unwrap();
        std::fs::write(labels.join(format!("part-{:03}.csv", k + 1)), l).unwrap();
    }
    let replay_input = dir.join("replay.csv");
    std::fs::write(&replay_input, replay).unwrap();
    (events, labels, replay_input)
}

const CAR_CLASSES: &str = "acc,good,unacc,vgood";

/// `run --labels DIR` over event files and label files predicts, row for row, what
/// `replay --label-delay-by` predicts under the same arrival order; every label row has its
/// outcome row, and the waiting events are in the checkpoint.
#[test]
fn a_job_with_a_labels_directory_predicts_as_the_replay_under_delay() {
    let dir = tempfile::tempdir().unwrap();
    let (events, labels, replay_input) = delayed_dirs(dir.path(), 96);
    let predictions = dir.path().join("replay.csv.out");
    streamboost()
        .args([
            "replay",
            "-q",
            "--label-delay-by",
            "delay",
            "--classes",
            CAR_CLASSES,
        ])
        .args(MODEL_ARGS)
        .flag("--input", &replay_input)
        .flag("--predictions", &predictions)
        .assert()
        .success();
    let replayed = predicted_labels(&predictions);

    let (out, model) = (dir.path().join("out"), dir.path().join("model.parquet"));
    run_delayed(
        &events,
        &labels,
        &out,
        &model,
        &["--checkpoint-every", "500"],
    );
    let scored = outputs(&out);
    assert_eq!(scored.len(), 18);
    assert_eq!(strings(&scored, "predicted_label"), replayed);
    let outcomes = outputs(&out.join("labels"));
    assert_eq!(outcomes.len(), 18, "one outcome file per label file");
    let learnt = strings(&outcomes, "outcome")
        .iter()
        .filter(|o| *o == "learnt")
        .count();
    assert_eq!(learnt, 1728);
    let (_, stream) = checkpoint::load(&model).unwrap();
    let delayed = stream.delayed.unwrap().stats();
    assert_eq!(
        (delayed.events, delayed.learnt, delayed.pending),
        (1728, 1728, 0)
    );
    assert_eq!(stream.stats.rows_learnt, 1728);
}

/// Delayed labels across SIGKILLs: a job over event and label files, killed at random
/// points and restarted, ends with the outputs, outcomes, waiting events and model of an
/// uninterrupted run (the pending store is committed with the model).
#[test]
fn a_delayed_job_killed_at_random_points_ends_as_an_uninterrupted_one() {
    let dir = tempfile::tempdir().unwrap();
    let (events, labels, _) = delayed_dirs(dir.path(), 96);
    let args = |out: &Path, model: &Path| {
        let extra = ["--checkpoint-every", "50", "--pending-ttl", "150"];
        delayed_args(&events, &labels, out, model, &extra)
    };
    let (whole_out, whole_model) = (dir.path().join("whole"), dir.path().join("whole.parquet"));
    std::fs::create_dir_all(&whole_out).unwrap();
    let clock = Instant::now();
    streamboost()
        .args(args(&whole_out, &whole_model))
        .assert()
        .success();
    let whole = clock.elapsed().as_secs_f64();

    let (out, model) = (dir.path().join("killed"), dir.path().join("killed.parquet"));
    std::fs::create_dir_all(&out).unwrap();
    let mut positions: std::collections::BTreeSet<(String, bool, u64)> = Default::default();
    // Three distinct restart positions, one of them in a label file.
    let end = checkpoint::load(&whole_model).unwrap().1.position;
    killed_until(
        &args(&out, &model),
        &out,
        &model,
        (12, 0.1 * whole, 0.6 * whole),
        || {
            let position = checkpoint::load(&model).ok().and_then(|(_, s)| s.position);
            if position == end && positions.len() < 3 {
                positions.clear();
                return Restarts::FromNothing;
            }
            positions.extend(position.map(|p| (p.file, p.labels, p.rows)));
            Restarts::enough(positions.len() >= 3 && positions.iter().any(|p| p.1))
        },
    );
    assert!(
        positions.len() >= 3,
        "restarts at {positions:?}: the kills must land mid-stream"
    );
    assert!(
        positions.iter().any(|p| p.1),
        "some restart from a label file: {positions:?}"
    );
    for sub in ["", "labels"] {
        let (expected, got) = (outputs(&whole_out.join(sub)), outputs(&out.join(sub)));
        assert_eq!(got.len(), 18);
        assert_eq!(got, expected, "outputs in `{sub}`");
    }
    assert_eq!(models(&whole_model), models(&model));
    assert_same_digest(&whole_model, &model);
}

/// One model per key under delayed labels: a keyed job over event and label files (the
/// labels carry the key) learns every label, each key's pending store committed with its
/// model.
#[test]
fn a_keyed_job_learns_each_keys_labels() {
    let dir = tempfile::tempdir().unwrap();
    let (events, labels, _) = delayed_dirs(dir.path(), 96);
    let (out, model) = (dir.path().join("out"), dir.path().join("model.keys"));
    run_delayed(&events, &labels, &out, &model, &["--key", "buying"]);
    let keys = models(&model);
    assert_eq!(keys.len(), 4, "one model per value of buying");
    let (mut events_seen, mut learnt) = (0, 0);
    for (key, _, stream) in &keys {
        let delayed = stream.delayed.as_ref().unwrap().stats();
        assert_eq!(delayed.pending, 0, "{key:?}");
        assert_eq!(delayed.events, stream.stats.rows_seen, "{key:?}");
        (events_seen, learnt) = (events_seen + delayed.events, learnt + delayed.learnt);
    }
    assert_eq!((events_seen, learnt), (1728, 1728));
    let outcomes = strings(&outputs(&out.join("labels")), "outcome");
    assert_eq!(outcomes.iter().filter(|o| *o == "learnt").count(), 1728);
}

/// Labels whose file comes before their events' file: unmatched by default, held with
/// `--early-label-tolerance` and learnt when their events are scored.
#[test]
fn early_labels_are_held_within_the_tolerance() {
    let dir = tempfile::tempdir().unwrap();
    let (events, labels, _) = delayed_dirs(dir.path(), 96);
    // The labels of event file k, named to sort before it (they now come first).
    let early = dir.path().join("early");
    std::fs::create_dir_all(&early).unwrap();
    for entry in std::fs::read_dir(&labels).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let k: usize = name[5..8].parse().unwrap();
        std::fs::rename(&path, early.join(format!("part-{:03}.csv", k - 1))).unwrap();
    }
    let labels = early;
    let learnt_with = |tolerance: &str| {
        let (out, model) = (
            dir.path().join(format!("out{tolerance}")),
            dir.path().join(format!("model{tolerance}.parquet")),
        );
        run_delayed(
            &events,
            &labels,
            &out,
            &model,
            &["--early-label-tolerance", tolerance],
        );
        let (_, stream) = checkpoint::load(&model).unwrap();
        stream.delayed.unwrap().stats()
    };
    let strict = learnt_with("0");
    assert_eq!((strict.learnt, strict.unmatched_labels), (0, 1728));
    // Labels carry the time of the next file's first event: at most 96 before their event.
    let held = learnt_with("200");
    assert_eq!(
        (held.learnt, held.early_labels, held.unmatched_labels),
        (1728, 1728, 0)
    );
}
