//! A job over a directory of files: taking them in name order, scoring each once, writing
//! its output whole at the commit after its last row, and recovering from the checkpoint's
//! position after a crash (the parent module's doc says the rules).

use super::*;

/// One input file: its name and its directory. Inputs are taken in this order: by name,
/// then a label file before an event file of the same name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct Input {
    name: String,
    /// In the events directory (else in the labels directory).
    events: bool,
}

impl Input {
    /// The input a position is in.
    fn of(position: &Position) -> Input {
        Input {
            name: position.file.clone(),
            events: !position.labels,
        }
    }

    /// The position at `rows` rows of this input.
    fn at(&self, rows: u64, done: bool) -> Position {
        Position {
            file: self.name.clone(),
            rows,
            done,
            labels: !self.events,
            ..Position::default()
        }
    }

    /// Whether a job at `position` has taken this input whole.
    fn taken_at(&self, position: Option<&Position>) -> bool {
        position.is_some_and(|p| {
            let at = Input::of(p);
            *self < at || (*self == at && p.done)
        })
    }
}

/// Where a run is: the last position taken (committed, or not yet), the files taken whole
/// since the last commit, and those whose commit is being written: a file's output is
/// assembled once the commit after its last row is in place.
struct Taking {
    position: Option<Position>,
    uncommitted: Vec<Input>,
    in_flight: Vec<Input>,
}

/// Where part files of the output are kept until their file is committed.
const PARTS_DIR: &str = ".parts";
/// Where the outcomes of label files go, in the output directory (and their parts, in
/// [`PARTS_DIR`]).
const LABELS_DIR: &str = "labels";
/// Where rejected input files go, in the input directory.
const REJECTED_DIR: &str = "rejected";

impl Job {
    /// Runs the job until its input is taken (`once`) or `stop` is set, calling `report`
    /// after each batch. Returns what it did. An error that is not a file's own (a failed
    /// commit: a full disk, a read-only directory) ends the job: the last checkpoint stays
    /// valid, and a restart goes on from it.
    pub fn run(&self, stop: &AtomicBool, report: &mut dyn FnMut(&JobStats)) -> Result<JobStats> {
        self.validate()?;
        let parts = self.output_dir.join(PARTS_DIR);
        std::fs::create_dir_all(&parts).map_err(|source| Error::Io {
            path: parts.clone(),
            source,
        })?;
        // One job per model and output directory, held until this returns.
        let _owners = self.own()?;
        // The checkpoint is read once: for its position now, and as the model at the first
        // file.
        let (mut held, committed) = self.live.load()?;
        self.recover(committed.as_ref())?;
        let mut progress = JobStats::default();
        let mut taking = Taking {
            position: committed,
            uncommitted: Vec::new(),
            in_flight: Vec::new(),
        };
        // Names at or before the committed position were taken by an earlier run.
        let mut known: HashSet<Input> = HashSet::new();
        let mut first_scan = true;
        loop {
            let rejected = progress.rejected;
            let pending = self.scan(
                &mut known,
                taking.position.as_ref(),
                first_scan,
                &mut progress,
            )?;
            if progress.rejected > rejected {
                // Said now, not at the next batch: the job may be idle.
                report(&progress);
            }
            for input in pending {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let taken;
                (held, taken) =
                    self.take(&input, held, &mut taking, stop, &mut progress, report)?;
                if progress.stopped {
                    self.settle(&mut held, &mut taking, &mut progress)?;
                    report(&progress);
                    return Ok(progress);
                }
                if !taken {
                    // A label file before any event file: it waits, and so do the files after.
                    break;
                }
            }
            // The input is taken for now: what was taken since the last commit is committed,
            // and every output whose commit is in place is assembled.
            if let Held::Live(live) = &mut held
                && !(taking.uncommitted.is_empty() && taking.in_flight.is_empty())
            {
                if !taking.uncommitted.is_empty() {
                    let at = taking.position.clone().expect("a file was taken");
                    self.commit(live, at, &mut taking, &mut progress)?;
                }
                self.settle(&mut held, &mut taking, &mut progress)?;
                report(&progress);
            }
            first_scan = false;
            if self.once || stop.load(Ordering::Relaxed) {
                progress.stopped = stop.load(Ordering::Relaxed);
                return Ok(progress);
            }
            let idle = Instant::now();
            while idle.elapsed() < self.poll && !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(50).min(self.poll));
            }
        }
    }

    /// Begins a commit of the live model at `at` ([`LiveModel::commit_behind`]: the model
    /// goes on while it is written). The commit before it is then in place, so the outputs
    /// of the files it took whole are assembled; those taken since (all named at or before
    /// `at`) wait for this one.
    fn commit(
        &self, live: &mut LiveModel, at: Position, taking: &mut Taking, progress: &mut JobStats,
    ) -> Result<()> {
        live.commit_behind(Some(at.clone()))?;
        taking.position = Some(at);
        note_commit(live, progress);
        for input in std::mem::take(&mut taking.in_flight) {
            self.assemble(&input)?;
        }
        taking.in_flight = std::mem::take(&mut taking.uncommitted);
        Ok(())
    }

    /// Waits for the commit being written ([`LiveModel::settle`]), then assembles the outputs
    /// of the files it took whole.
    fn settle(&self, held: &mut Held, taking: &mut Taking, progress: &mut JobStats) -> Result<()> {
        if let Held::Live(live) = held {
            live.settle()?;
            note_commit(live, progress);
            for input in std::mem::take(&mut taking.in_flight) {
                self.assemble(&input)?;
            }
        }
        Ok(())
    }

    /// Takes the model and the output directory for this process: a second job on either
    /// is refused ([`Error::Locked`]), a lock left by a job that died is taken over.
    fn own(&self) -> Result<[Arc<OwnerLock>; 2]> {
        Ok([
            OwnerLock::acquire(&self.live.policy.path, false)?,
            OwnerLock::acquire(&self.output_dir, true)?,
        ])
    }

    /// The job's directories and model, each with the flag that names it on the command line:
    /// what it reads, then what it writes.
    fn paths(&self) -> (Vec<Named<'_>>, Vec<Named<'_>>) {
        let mut inputs = vec![Named::new("--input-dir", &self.input_dir)];
        inputs.extend(
            self.labels_dir
                .iter()
                .map(|dir| Named::new("--labels", dir)),
        );
        let outputs = vec![
            Named::new("--output-dir", &self.output_dir),
            Named::new("--model", &self.live.policy.path),
        ];
        (inputs, outputs)
    }

    /// Refuses, before any file is taken, input directories that are not there, outputs that
    /// overlap the inputs or each other (an output directory that is the input directory
    /// would take its own outputs as input on a restart), and a checkpoint that cannot be
    /// written. A missing output directory is created.
    fn validate(&self) -> Result<()> {
        let (inputs, outputs) = self.paths();
        refuse_overlaps(&inputs, &outputs)?;
        std::fs::create_dir_all(&self.output_dir).map_err(|source| Error::Io {
            path: self.output_dir.clone(),
            source,
        })?;
        let labels = self.labels_dir.iter();
        for dir in [&self.input_dir].into_iter().chain(labels) {
            if !dir.is_dir() {
                return Err(Error::Io {
                    path: dir.clone(),
                    source: std::io::Error::new(std::io::ErrorKind::NotFound, "not a directory"),
                });
            }
        }
        self.live.validate()
    }

    /// Brings the output directory to the checkpoint's position: assembles the output of a
    /// file the checkpoint says is done, and deletes parts past the position.
    fn recover(&self, position: Option<&Position>) -> Result<()> {
        let mut committed = Vec::new();
        for (input, start, path) in self.parts()? {
            // Files before the position's were taken whole; the position's file up to its
            // rows; anything after is stale, scored again by the state that had not learnt it.
            let at = position.map(Input::of);
            let kept = position
                .zip(at.as_ref())
                .is_some_and(|(p, at)| input < *at || (input == *at && (p.done || start < p.rows)));
            if !kept {
                remove(&path)?;
            } else if input.taken_at(position) || at.as_ref().is_some_and(|at| input < *at) {
                committed.push(input);
            }
        }
        committed.dedup();
        for input in committed {
            self.assemble(&input)?;
        }
        Ok(())
    }

    /// The part files: (input, first row, path), in input order then first row.
    fn parts(&self) -> Result<Vec<(Input, u64, PathBuf)>> {
        let mut parts = Vec::new();
        for events in [true, false] {
            let dir = self.parts_dir(events);
            if !events && !dir.is_dir() {
                continue;
            }
            for entry in read_dir(&dir)? {
                let file_name = entry.file_name().to_string_lossy().into_owned();
                let Some((name, start)) = file_name
                    .strip_suffix(".parquet")
                    .and_then(|s| s.rsplit_once('@'))
                    .and_then(|(name, start)| Some((name.to_string(), start.parse().ok()?)))
                else {
                    continue;
                };
                parts.push((Input { name, events }, start, entry.path()));
            }
        }
        parts.sort();
        Ok(parts)
    }

    /// Where the parts of event files (or of label files) are kept.
    fn parts_dir(&self, events: bool) -> PathBuf {
        let parts = self.output_dir.join(PARTS_DIR);
        if events {
            parts
        } else {
            parts.join(LABELS_DIR)
        }
    }

    /// The directory an input is read from.
    fn dir_of(&self, input: &Input) -> &Path {
        match (&self.labels_dir, input.events) {
            (Some(labels), false) => labels,
            _ => &self.input_dir,
        }
    }

    /// The input files to take now, in name order: those after the position (and the
    /// position's file, if not done). A file that arrived with a name at or before the
    /// position is rejected.
    fn scan(
        &self, known: &mut HashSet<Input>, position: Option<&Position>, first_scan: bool,
        progress: &mut JobStats,
    ) -> Result<Vec<Input>> {
        let mut inputs = Vec::new();
        let labels = self.labels_dir.iter().map(|dir| (dir, false));
        for (dir, events) in std::iter::once((&self.input_dir, true)).chain(labels) {
            inputs.extend(
                read_dir(dir)?
                    .into_iter()
                    .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|name| is_input(name))
                    .map(|name| Input { name, events }),
            );
        }
        inputs.sort();
        let mut pending = Vec::new();
        for input in inputs {
            let new = known.insert(input.clone());
            match (input.taken_at(position), new && !first_scan) {
                (false, _) => pending.push(input),
                (true, true) => {
                    let why = "it arrived after a file named later was taken (names must sort \
                               in arrival order)";
                    self.reject(&input, why, progress)?;
                }
                (true, false) => {}
            }
        }
        Ok(pending)
    }

    /// Takes `input` (from the position's row if it is the position's file), committing by
    /// the policy; at its end its last part is written, and its output is assembled at the
    /// next commit. Event rows are scored (and learnt, when they carry their label); label
    /// rows are learnt, each giving its outcome row. Returns the model and whether the file
    /// was taken: a label file is not while no event file has bound the model.
    fn take(
        &self, input: &Input, held: Held, taking: &mut Taking, stop: &AtomicBool,
        progress: &mut JobStats, report: &mut dyn FnMut(&JobStats),
    ) -> Result<(Held, bool)> {
        let path = self.dir_of(input).join(&input.name);
        let table = match read_table(&path) {
            Ok(table) => table,
            Err(e) => {
                self.reject(input, &e.to_string(), progress)?;
                return Ok((held, true));
            }
        };
        let bound = match (input.events, held) {
            (true, held) => self.live.bind(held, &table, None)?,
            (false, Held::Live(live)) => Ok(*live),
            // The model is bound by an event file's columns: the first in the directory.
            (false, held) => match self.first_events()? {
                Some(events) => self.live.bind(held, &events, None)?,
                None => return Ok((held, false)),
            },
        };
        let bound = match (bound, input.events) {
            (Ok(live), false) => match self.live.check_label_columns(&table, live.label()) {
                Ok(()) => Ok(live),
                Err(e) => Err((Held::Live(Box::new(live)), e)),
            },
            (bound, _) => bound,
        };
        let mut live = match bound {
            Ok(live) => live,
            Err((held, e)) => {
                self.reject(input, &e.to_string(), progress)?;
                return Ok((held, true));
            }
        };
        let start = match &taking.position {
            Some(p) if Input::of(p) == *input && !p.done => p.rows,
            _ => 0,
        };
        progress.file = Some(input.name.clone());
        let label = live.schema().index_of(live.label()).ok();
        let mut pending: Vec<RecordBatch> = Vec::new();
        let (mut part_start, mut row) = (start, 0u64);
        let total = table.n_rows() as u64;
        for batch in table.batches()? {
            let batch = batch?;
            let n = batch.num_rows() as u64;
            let skip = start.saturating_sub(row).min(n);
            let mut at = skip;
            row += skip;
            // The batch is cut where the row-count policy commits, so commits fall on the
            // same rows whatever the input's batches.
            while at < n {
                let len = live.rows_until_due().map_or(n - at, |due| due.min(n - at));
                let rows = batch.slice(at as usize, len as usize);
                let out = match input.events {
                    true => {
                        let out = live.process(&rows)?;
                        count_correct(&out, label, progress);
                        progress.rows += len;
                        out
                    }
                    false => {
                        let out = live.labels(&rows)?;
                        count_outcomes(&out, progress);
                        progress.labels += len;
                        out
                    }
                };
                (at, row) = (at + len, row + len);
                progress.keys = live.key_memory();
                progress.drift = live.drift_counts();
                pending.push(out);
                let stopping = stop.load(Ordering::Relaxed);
                if (live.due() || stopping) && row < total {
                    let schema = pending[0].schema();
                    self.write_part(input, part_start, &schema, &pending)?;
                    self.commit(&mut live, input.at(row, false), taking, progress)?;
                    (part_start, pending) = (row, Vec::new());
                    if stopping {
                        progress.stopped = true;
                        report(progress);
                        return Ok((Held::Live(Box::new(live)), true));
                    }
                }
                report(progress);
            }
        }
        // Once per file: a keyed model's classes are gathered over its keys.
        progress.unknown_classes = live.unknown_classes();
        progress.unknown_classes.truncate(JobStats::NAMED_CLASSES);
        if !pending.is_empty() || part_start == 0 {
            let schema = match pending.first() {
                Some(batch) => batch.schema(),
                None if input.events => live.schema(),
                None => live
                    .labels(&RecordBatch::new_empty(table.schema.clone()))?
                    .schema(),
            };
            self.write_part(input, part_start, &schema, &pending)?;
        }
        let done = input.at(row, true);
        taking.position = Some(done.clone());
        taking.uncommitted.push(input.clone());
        progress.files += 1;
        if live.due() {
            self.commit(&mut live, done, taking, progress)?;
        }
        report(progress);
        Ok((Held::Live(Box::new(live)), true))
    }

    /// The first event file in the input directory (in name order) that reads, to bind the
    /// model to its columns before a label file is taken; `None` if there is none yet.
    fn first_events(&self) -> Result<Option<Table>> {
        let mut names: Vec<String> = read_dir(&self.input_dir)?
            .into_iter()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|name| is_input(name))
            .collect();
        names.sort();
        Ok(names
            .iter()
            .find_map(|name| read_table(&self.input_dir.join(name)).ok()))
    }

    /// Writes the scored rows of `name` from row `start` as a part file, atomically.
    fn write_part(
        &self, input: &Input, start: u64, schema: &SchemaRef, batches: &[RecordBatch],
    ) -> Result<()> {
        let dir = self.parts_dir(input.events);
        std::fs::create_dir_all(&dir).map_err(|source| Error::Io {
            path: dir.clone(),
            source,
        })?;
        let path = dir.join(format!("{}@{start:020}.parquet", input.name));
        write_parquet(&path, schema, batches.iter().cloned().map(Ok))
    }

    /// Assembles the output of committed file `name` from its parts, atomically, and
    /// deletes the parts. Nothing to do if it has no parts (already assembled); only the
    /// parts to delete if its output is in place (a stop came while they were deleted).
    fn assemble(&self, input: &Input) -> Result<()> {
        let parts: Vec<PathBuf> = self
            .parts()?
            .into_iter()
            .filter(|(i, _, _)| i == input)
            .map(|(_, _, path)| path)
            .collect();
        let Some(first) = parts.first() else {
            return Ok(());
        };
        let dir = match input.events {
            true => self.output_dir.clone(),
            false => self.output_dir.join(LABELS_DIR),
        };
        std::fs::create_dir_all(&dir).map_err(|source| Error::Io {
            path: dir.clone(),
            source,
        })?;
        let output = dir.join(output_name(&input.name));
        // The output is renamed into place whole, before its parts are removed: if it is
        // there, a stop cut the removal short, and the parts left are already in it (made
        // again from them, it would lose the rows of the parts removed).
        if output.exists() {
            for part in parts {
                remove(&part)?;
            }
            return Ok(());
        }
        if let [only] = &parts[..] {
            std::fs::rename(only, &output).map_err(|source| Error::Io {
                path: output.clone(),
                source,
            })?;
            return sync_dir(&dir);
        }
        let schema = ParquetRecordBatchReaderBuilder::try_new(open(first)?)
            .map_err(|e| format_error(first, e))?
            .schema()
            .clone();
        let mut batches = Vec::new();
        for part in &parts {
            let reader = ParquetRecordBatchReaderBuilder::try_new(open(part)?)
                .and_then(|b| b.build())
                .map_err(|e| format_error(part, e))?;
            for batch in reader {
                batches.push(batch.map_err(|e| format_error(part, e)));
            }
        }
        write_parquet(&output, &schema, batches.into_iter())?;
        for part in parts {
            remove(&part)?;
        }
        Ok(())
    }

    /// Moves `input` to `rejected/` in its directory, with the reason beside it, and counts
    /// it (naming it in `progress`).
    fn reject(&self, input: &Input, why: &str, progress: &mut JobStats) -> Result<()> {
        progress.rejected += 1;
        if progress.rejections.len() < JobStats::NAMED_REJECTIONS {
            progress
                .rejections
                .push((input.name.clone(), why.to_string()));
        }
        let (from, name) = (self.dir_of(input), &input.name);
        let dir = from.join(REJECTED_DIR);
        std::fs::create_dir_all(&dir).map_err(|source| Error::Io {
            path: dir.clone(),
            source,
        })?;
        let reason = dir.join(format!("{name}.reason.txt"));
        std::fs::write(&reason, format!("{why}\n")).map_err(|source| Error::Io {
            path: reason,
            source,
        })?;
        let to = dir.join(name);
        std::fs::rename(from.join(name), &to).map_err(|source| Error::Io { path: to, source })
    }
}

/// Whether a directory entry named `name` is an input file to take: a CSV or Parquet file
/// that is not being written (no leading `.`, no `.partial` or `.tmp` ending).
fn is_input(name: &str) -> bool {
    !name.starts_with('.') && (name.ends_with(".csv") || name.ends_with(".parquet"))
}

/// The output file of input file `name`: its stem, as Parquet.
fn output_name(name: &str) -> String {
    let stem = name
        .strip_suffix(".csv")
        .or_else(|| name.strip_suffix(".parquet"))
        .unwrap_or(name);
    format!("{stem}.parquet")
}

/// Counts the label rows that were learnt, and those whose event was predicted right.
fn count_outcomes(out: &RecordBatch, progress: &mut JobStats) {
    if let Some(correct) = out.column_by_name("correct") {
        let correct = correct.as_boolean();
        progress.labelled += (correct.len() - correct.null_count()) as u64;
        progress.correct += correct.true_count() as u64;
    }
}

/// Writes `batches` of `schema` as a Parquet file at `path`, atomically.
fn write_parquet(
    path: &Path, schema: &SchemaRef, batches: impl Iterator<Item = Result<RecordBatch>>,
) -> Result<()> {
    write_atomically(path, |file| {
        let props = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .build();
        let mut writer = ArrowWriter::try_new(file, schema.clone(), Some(props))
            .map_err(|e| format_error(path, e))?;
        for batch in batches {
            writer.write(&batch?).map_err(|e| format_error(path, e))?;
        }
        writer.close().map_err(|e| format_error(path, e))?;
        Ok(())
    })
}

fn open(path: &Path) -> Result<File> {
    File::open(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })
}

fn remove(path: &Path) -> Result<()> {
    std::fs::remove_file(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })
}

fn read_dir(dir: &Path) -> Result<Vec<std::fs::DirEntry>> {
    let io = |source| Error::Io {
        path: dir.to_path_buf(),
        source,
    };
    std::fs::read_dir(dir)
        .map_err(io)?
        .collect::<std::io::Result<Vec<_>>>()
        .map_err(io)
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;

    use super::*;

    /// A job over `n` files of `rows` rows of the bundled car data in `dir/in`, writing to
    /// `dir/out` and `dir/m.parquet`, taking what is there once.
    fn car_files_job(dir: &Path, n: usize, rows: usize) -> Job {
        let car = include_str!("../../../data/car.csv");
        let (header, body) = car.split_once('\n').expect("a header");
        let lines: Vec<&str> = body.lines().collect();
        let input = dir.join("in");
        std::fs::create_dir_all(&input).unwrap();
        for f in 0..n {
            let part = &lines[f * rows..(f + 1) * rows];
            let text = format!("{header}\n{}\n", part.join("\n"));
            std::fs::write(input.join(format!("{f:03}.csv")), text).unwrap();
        }
        car_job(input, dir.join("out"), &dir.join("m.parquet"), &[])
    }

    fn run(job: &Job) -> JobStats {
        job.run(&AtomicBool::new(false), &mut |_| {}).unwrap()
    }

    #[test]
    fn inputs_are_taken_in_name_order_a_label_file_first_on_a_tie() {
        let input = |name: &str, events| Input {
            name: name.into(),
            events,
        };
        let mut inputs = vec![input("b", true), input("a", true), input("b", false)];
        inputs.sort();
        assert_eq!(
            inputs,
            [input("a", true), input("b", false), input("b", true)]
        );
        let position = input("b", false).at(10, false);
        assert!(input("a", true).taken_at(Some(&position)));
        assert!(!input("b", false).taken_at(Some(&position)), "not done");
        assert!(input("b", false).taken_at(Some(&input("b", false).at(10, true))));
        assert!(!input("c", true).taken_at(Some(&position)));
    }

    #[test]
    fn files_being_written_are_not_inputs() {
        for name in [".hidden.csv", "a.csv.partial", "a.csv.tmp"] {
            assert!(!is_input(name), "{name}");
        }
        assert!(is_input("2026-11-28T10.csv") && is_input("a.parquet"));
        assert_eq!(output_name("events-1.csv"), "events-1.parquet");
    }

    /// Each file is scored once: a job run again over the same directory takes nothing, and
    /// its outputs and checkpoint stay as they were; a new file is taken after them.
    #[test]
    fn a_restarted_job_takes_only_new_files() {
        let dir = tempfile::tempdir().unwrap();
        let job = car_files_job(dir.path(), 2, 100);
        let first = run(&job);
        assert_eq!((first.files, first.rows, first.rejected), (2, 200, 0));
        let output = job.output_dir.join("001.parquet");
        let (bytes, digest) = (
            std::fs::read(&output).unwrap(),
            checkpoint::read_metadata(&job.live.policy.path)
                .unwrap()
                .digest,
        );
        let again = run(&job);
        assert_eq!((again.files, again.rows), (0, 0));
        assert_eq!(std::fs::read(&output).unwrap(), bytes);
        let after = checkpoint::read_metadata(&job.live.policy.path).unwrap();
        assert_eq!(after.digest, digest);
        std::fs::copy(job.input_dir.join("000.csv"), job.input_dir.join("002.csv")).unwrap();
        let third = run(&job);
        assert_eq!((third.files, third.rows), (1, 100));
        assert_eq!(
            checkpoint::read_metadata(&job.live.policy.path)
                .unwrap()
                .rows_seen,
            300
        );
    }

    /// A file that arrives named before one already taken is moved aside with its reason,
    /// and named in the progress at once (the job is idle then).
    #[test]
    fn a_late_file_is_rejected_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let job = car_files_job(dir.path(), 2, 50);
        run(&job);
        let job = Job { once: false, ..job };
        let stop = AtomicBool::new(false);
        let seen = Mutex::new(Vec::new());
        let progress = std::thread::scope(|scope| {
            let running = scope.spawn(|| {
                job.run(&stop, &mut |p| {
                    seen.lock().unwrap().clone_from(&p.rejections);
                })
            });
            // After the job's first look at the directory: a file arriving late.
            std::thread::sleep(Duration::from_millis(200));
            let late = job.input_dir.join("0005.csv");
            std::fs::copy(job.input_dir.join("000.csv"), late).unwrap();
            let start = Instant::now();
            while seen.lock().unwrap().is_empty() && start.elapsed() < Duration::from_secs(60) {
                std::thread::sleep(Duration::from_millis(10));
            }
            stop.store(true, Ordering::Relaxed);
            running.join().unwrap().unwrap()
        });
        assert_eq!(progress.rejected, 1);
        let seen = seen.into_inner().unwrap();
        assert_eq!(seen[0].0, "0005.csv");
        assert!(seen[0].1.contains("arrived after"), "{}", seen[0].1);
        let moved = job.input_dir.join(REJECTED_DIR).join("0005.csv.reason.txt");
        assert!(moved.exists());
    }

    /// The output directory may not be the input directory, nor lie inside it; it is made
    /// when missing, and held by one job at a time.
    #[test]
    fn the_output_directory_is_checked_made_and_owned() {
        let dir = tempfile::tempdir().unwrap();
        let job = car_files_job(dir.path(), 1, 20);
        for output_dir in [job.input_dir.clone(), job.input_dir.join("out")] {
            let err = Job {
                output_dir,
                ..job.clone()
            }
            .validate()
            .unwrap_err();
            assert!(matches!(err, Error::OutputOverlapsInput { .. }), "{err}");
        }
        let nested = Job {
            output_dir: dir.path().join("a/b/out"),
            ..job.clone()
        };
        let owners = {
            nested.validate().unwrap();
            nested.own().unwrap()
        };
        assert!(nested.output_dir.join(".streamboost.lock").exists());
        drop(owners);
        assert!(!nested.output_dir.join(".streamboost.lock").exists());
    }
}
