//! A job over a pipe: an Arrow IPC stream in, each scored batch out as soon as it is scored,
//! learning exactly once by an ordering column (the parent module's doc says the rules).

use super::*;

impl Job {
    /// Runs the job over an Arrow IPC stream read from `input` (standard input), writing
    /// each scored batch to `output` (standard output) in `format` as soon as it is scored,
    /// until the
    /// stream ends or `stop` is set; commits by the policy, at the end and on a stop. The
    /// input and output directories are not used.
    ///
    /// A pipe has no offsets to resume from, so the checkpoint's position cannot say which
    /// rows were taken: with `learn_once_by` (an ordering column, ascending), a restarted
    /// job fed the stream again from an earlier point scores every row and learns only those
    /// after the committed largest value (per key, for a keyed model): learning is exactly
    /// once, output at least once (rows after the last commit are emitted again, with the
    /// same predictions; deduplicate by id downstream). Without it, a restarted job learns
    /// whatever it is given.
    pub fn run_pipe(
        &self, input: impl std::io::Read + Send + 'static,
        output: impl std::io::Write + Send + 'static, format: PipeFormat,
        learn_once_by: Option<&str>, stop: &AtomicBool, report: &mut dyn FnMut(&JobStats),
    ) -> Result<JobStats> {
        self.live.validate()?;
        let _owner = OwnerLock::acquire(&self.live.policy.path, false)?;
        let source = PathBuf::from("<stdin>");
        // Batches are read on their own thread, so that a stop is seen while the pipe is
        // quiet.
        let (sender, batches) = std::sync::mpsc::sync_channel::<Result<RecordBatch>>(2);
        std::thread::spawn(move || {
            let reader = match arrow::ipc::reader::StreamReader::try_new(input, None) {
                Ok(reader) => reader,
                Err(e) => {
                    let _ = sender.send(Err(format_error(Path::new("<stdin>"), e)));
                    return;
                }
            };
            for batch in reader {
                let batch = batch.map_err(|e| format_error(Path::new("<stdin>"), e));
                if sender.send(batch).is_err() {
                    return;
                }
            }
        });
        let (mut held, _) = self.live.load()?;
        let mut live: Option<LiveModel> = None;
        let mut output = BatchWriter::pipe(Box::new(output), format);
        let mut progress = JobStats {
            file: Some(source.display().to_string()),
            ..JobStats::default()
        };
        loop {
            let batch = match batches.recv_timeout(Duration::from_millis(100)) {
                Ok(batch) => Some(batch?),
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => None,
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
            };
            if let Some(batch) = batch {
                let model = match live.take() {
                    Some(model) => model,
                    None => {
                        let table = Table::new(&source, batch.schema(), vec![batch.clone()]);
                        let held = std::mem::replace(&mut held, Held::Unloaded);
                        self.live
                            .bind(held, &table, learn_once_by)?
                            .map_err(|(_, e)| e)?
                    }
                };
                let model = live.insert(model);
                let label = model.schema().index_of(model.label()).ok();
                let out = model.process(&batch)?;
                count_correct(&out, label, &mut progress);
                progress.rows += batch.num_rows() as u64;
                progress.keys = model.key_memory();
                progress.drift = model.drift_counts();
                progress.unknown_classes = model.unknown_classes();
                progress.unknown_classes.truncate(JobStats::NAMED_CLASSES);
                output.write(&out)?;
            }
            let stopping = stop.load(Ordering::Relaxed);
            if let Some(model) = &mut live
                && (model.due() || stopping)
            {
                // Output does not wait for commits here (it is at least once): the model
                // learns on while a commit is written, unless the job is stopping.
                if stopping {
                    model.commit(None)?;
                } else {
                    model.commit_behind(None)?;
                }
                note_commit(model, &mut progress);
            }
            report(&progress);
            if stopping {
                progress.stopped = true;
                return Ok(progress);
            }
        }
        if let Some(model) = &mut live {
            model.commit(None)?;
            note_commit(model, &mut progress);
        }
        output.finish()?;
        report(&progress);
        Ok(progress)
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::sync::atomic::AtomicBool;

    use arrow::array::Array;

    use super::*;

    /// A buffer the job writes to and the test reads, shared between them.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// The bundled car rows `from..to` as an Arrow IPC stream, with an `id` column.
    fn car_ipc(from: usize, to: usize) -> Vec<u8> {
        let csv = include_bytes!("../../../data/car.csv");
        let table = crate::columnar::read_csv_bytes(Path::new("car.csv"), csv).unwrap();
        let batches: Vec<RecordBatch> = table.batches().unwrap().map(|b| b.unwrap()).collect();
        let all = arrow::compute::concat_batches(&table.schema, &batches).unwrap();
        let rows = all.slice(from, to - from);
        let ids = arrow::array::Int64Array::from_iter_values((from as i64)..(to as i64));
        let mut fields: Vec<_> = rows.schema().fields().iter().cloned().collect();
        fields.insert(0, Arc::new(Field::new("id", DataType::Int64, false)));
        let mut columns = rows.columns().to_vec();
        columns.insert(0, Arc::new(ids));
        let batch = RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap();
        let mut bytes = Vec::new();
        let mut writer = arrow::ipc::writer::StreamWriter::try_new(&mut bytes, &batch.schema())
            .expect("a stream");
        writer.write(&batch).unwrap();
        writer.finish().unwrap();
        drop(writer);
        bytes
    }

    fn pipe_job(model: &Path) -> Job {
        car_job(PathBuf::new(), PathBuf::new(), model, &["id"])
    }

    /// The scored batches that `bytes` (an IPC stream the job wrote) hold.
    fn scored(bytes: &[u8]) -> Vec<RecordBatch> {
        let reader = arrow::ipc::reader::StreamReader::try_new(bytes, None).unwrap();
        reader.map(|b| b.unwrap()).collect()
    }

    fn run(job: &Job, input: Vec<u8>, once_by: Option<&str>) -> (JobStats, Vec<RecordBatch>) {
        let out = Shared::default();
        let stop = AtomicBool::new(false);
        let progress = job
            .run_pipe(
                std::io::Cursor::new(input),
                out.clone(),
                PipeFormat::Ipc,
                once_by,
                &stop,
                &mut |_| {},
            )
            .unwrap();
        let bytes = out.0.lock().unwrap().clone();
        (progress, scored(&bytes))
    }

    /// Every row piped in comes out scored, and the model is committed at the end.
    #[test]
    fn every_row_piped_in_comes_out_scored_and_the_model_is_committed() {
        let dir = tempfile::tempdir().unwrap();
        let job = pipe_job(&dir.path().join("m.parquet"));
        let (progress, batches) = run(&job, car_ipc(0, 500), Some("id"));
        assert_eq!(progress.rows, 500);
        let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
        assert_eq!(rows, 500);
        assert!(batches[0].schema().index_of("predicted_label").is_ok());
        let (_, stream) = checkpoint::load(&job.live.policy.path).unwrap();
        assert_eq!(
            (stream.stats.rows_seen, stream.stats.rows_learnt),
            (500, 500)
        );
    }

    /// Fed again from an earlier point, a job that learns once by `id` scores every row and
    /// learns only the new ones: it predicts the new rows as a single pass over the whole
    /// does, and has learnt as many rows.
    #[test]
    fn a_stream_fed_again_is_learnt_once_by_its_ordering_column() {
        let dir = tempfile::tempdir().unwrap();
        let twice = pipe_job(&dir.path().join("twice.parquet"));
        run(&twice, car_ipc(0, 600), Some("id"));
        let (progress, again) = run(&twice, car_ipc(300, 1000), Some("id"));
        assert_eq!(progress.rows, 700);
        let once = pipe_job(&dir.path().join("once.parquet"));
        let (_, whole) = run(&once, car_ipc(0, 1000), Some("id"));
        // The probabilities of the rows after 600, as each run scored them.
        let last_400 = |batches: &[RecordBatch]| {
            let all = arrow::compute::concat_batches(&batches[0].schema(), batches).unwrap();
            let probs = all.column_by_name("predicted_label_probs").unwrap();
            // Compared as Arrow data: no arrow feature beyond the default build's needed.
            probs.slice(all.num_rows() - 400, 400).to_data()
        };
        assert_eq!(last_400(&again), last_400(&whole));
        let learnt = |job: &Job| {
            let meta = checkpoint::read_metadata(&job.live.policy.path).unwrap();
            (meta.rows_seen, meta.rows_learnt)
        };
        assert_eq!(learnt(&twice), (1300, 1000));
        assert_eq!(learnt(&once), (1000, 1000));
    }
}
