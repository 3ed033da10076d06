//! The record-batch operator on the bundled sample: the same predictions and probabilities,
//! row for row, as the prequential driver calling the model directly.

use std::path::PathBuf;

use arrow::array::AsArray;
use arrow::datatypes::Float64Type;
use streamboost::Config;
use streamboost::boost::WeightScale;
use streamboost::boost::multiclass::AdaBoostOlmConfig;
use streamboost::columnar::{Encodings, load_stream, read_table};
use streamboost::eval::Prequential;
use streamboost::runtime::Cursor;
use streamboost::weak::HoeffdingTreeConfig;

use crate::common::{fresh_operator, operator, prediction_columns};

fn bundled_car() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/car.csv")
}

#[test]
fn operator_matches_the_prequential_driver_row_for_row() {
    let path = bundled_car();
    let data = load_stream(&[path.clone()], "label", &Encodings::default()).unwrap();
    let config = AdaBoostOlmConfig {
        n_learners: 10,
        weight_scale: WeightScale::UniformRandom(5.0, 200.0),
        ..AdaBoostOlmConfig::new(HoeffdingTreeConfig::jgt_paper())
    };
    let mut direct = config.build(data.spec(), 7).unwrap();
    let mut expected = Vec::new();
    Prequential::default()
        .run(&mut direct, &data, None, |o| {
            expected.push((o.predicted, o.proba.to_vec()))
        })
        .unwrap();

    let table = read_table(&path).unwrap();
    let model = config.build(data.spec(), 7).unwrap();
    let mut op = operator(model, &data, table.schema.clone(), &path);
    let classes = data.spec().classes.names();
    let mut row = 0;
    for batch in table.batches().unwrap() {
        let batch = batch.unwrap();
        // Uneven batch sizes: the operator's state carries across batches.
        for (start, len) in [
            (0, batch.num_rows() / 3),
            (
                batch.num_rows() / 3,
                batch.num_rows() - batch.num_rows() / 3,
            ),
        ] {
            let out = op.process(&batch.slice(start, len)).unwrap();
            assert_eq!(out.num_rows(), len);
            let (predicted, probs) = prediction_columns(&out);
            for i in 0..len {
                let (want, want_p) = &expected[row];
                assert_eq!(predicted.value(i), classes[*want], "row {row}");
                let p = probs.value(i);
                let p = p.as_primitive::<Float64Type>().values();
                assert!(
                    p.iter()
                        .zip(want_p)
                        .all(|(a, b)| a.to_bits() == b.to_bits()),
                    "row {row}"
                );
                row += 1;
            }
        }
    }
    assert_eq!(row, data.len());
    assert_eq!(op.stats().rows_learnt, data.len() as u64);
}

/// One model per key: the keyed operator over mixed-key batches gives each key's rows what
/// an operator fed only that key's rows gives them, and keeps the input's row order.
#[test]
fn keyed_operator_equals_one_operator_per_key() {
    use arrow::array::BooleanArray;
    use arrow::compute::{concat_batches, filter_record_batch};
    use streamboost::runtime::{BatchOperator, KeyedOperator};

    let path = bundled_car();
    let data = load_stream(&[path.clone()], "label", &Encodings::default()).unwrap();
    let spec = data.spec().clone();
    let config = AdaBoostOlmConfig {
        n_learners: 5,
        ..AdaBoostOlmConfig::new(HoeffdingTreeConfig::jgt_paper())
    };
    let table = read_table(&path).unwrap();
    let all = table.to_batch().unwrap();
    let make = {
        let (config, spec, schema, path) = (config, spec.clone(), table.schema.clone(), path);
        move |_: Option<&str>, _: &arrow::datatypes::SchemaRef| {
            Cursor::new(
                config.build(&spec, 4)?,
                &spec,
                schema.clone(),
                "label",
                &Encodings::default(),
                &path,
            )
        }
    };
    let mut keyed = KeyedOperator::new(
        table.schema.clone(),
        "safety",
        "label",
        spec.classes.names(),
        Box::new(make.clone()),
    )
    .unwrap();
    // Batches of 37 rows: every batch holds all three keys, interleaved.
    let outs: Vec<_> = (0..all.num_rows())
        .step_by(37)
        .map(|start| {
            let len = 37.min(all.num_rows() - start);
            keyed.process(&all.slice(start, len)).unwrap()
        })
        .collect();
    let out = concat_batches(&keyed.schema(), &outs).unwrap();
    assert_eq!(out.num_rows(), all.num_rows());
    assert_eq!(out.column(0), all.column(0), "input order kept");
    for level in ["low", "med", "high"] {
        let keep: BooleanArray = all
            .column_by_name("safety")
            .unwrap()
            .as_string::<i32>()
            .iter()
            .map(|v| Some(v == Some(level)))
            .collect();
        let alone = make(Some(level), &table.schema)
            .unwrap()
            .process(&filter_record_batch(&all, &keep).unwrap())
            .unwrap();
        assert_eq!(
            filter_record_batch(&out, &keep).unwrap(),
            alone,
            "key {level}"
        );
    }
    assert_eq!(keyed.operators().count(), 3);
}

/// The operator over an async stream: same outputs as calling it batch by batch, one yield
/// to the executor between batches, and a stream dropped midway has learnt exactly what it
/// returned.
#[cfg(feature = "stream")]
mod stream {
    use std::task::Poll;

    use arrow::record_batch::RecordBatch;
    use futures::StreamExt;
    use streamboost::runtime::stream::ScoredStream;

    use super::*;

    fn operator_and_batches() -> (Cursor<streamboost::weak::HoeffdingTree>, Vec<RecordBatch>) {
        let path = bundled_car();
        let data = load_stream(&[path.clone()], "label", &Encodings::default()).unwrap();
        let table = read_table(&path).unwrap();
        let model = HoeffdingTreeConfig::jgt_paper()
            .build(data.spec(), 3)
            .unwrap();
        let op = operator(model, &data, table.schema.clone(), &path);
        (op, table.batches_of(100).unwrap())
    }

    #[test]
    fn stream_output_equals_batch_by_batch_output() {
        let (mut direct, batches) = operator_and_batches();
        let expected: Vec<RecordBatch> =
            batches.iter().map(|b| direct.process(b).unwrap()).collect();
        let (op, batches) = operator_and_batches();
        let input = futures::stream::iter(batches.into_iter().map(Ok::<_, std::io::Error>));
        let scored = ScoredStream::new(input, op);
        let got: Vec<RecordBatch> =
            futures::executor::block_on(scored.map(|b| b.unwrap()).collect());
        assert_eq!(got, expected);
    }

    /// The bundled car data: its path, its rows, its table and the table in batches of 200.
    fn car_in_batches() -> (
        std::path::PathBuf,
        streamboost::core::Dataset,
        streamboost::columnar::Table,
        Vec<RecordBatch>,
    ) {
        let path = bundled_car();
        let data = load_stream(&[path.clone()], "label", &Encodings::default()).unwrap();
        let table = read_table(&path).unwrap();
        let batches = table.batches_of(200).unwrap();
        (path, data, table, batches)
    }

    /// A fresh Adaboost.OLM over 6 trees for `data`, and the stream state a live model of it
    /// starts from.
    fn fresh_live(
        data: &streamboost::core::Dataset,
    ) -> (
        streamboost::model::Model,
        streamboost::checkpoint::StreamState,
    ) {
        let config = streamboost::model::ModelConfig::from_json(
            serde_json::json!({"algorithm": "ada-olm", "n_learners": 6}),
        )
        .unwrap();
        let model = config.build(data.spec(), 2).unwrap();
        let stream = streamboost::checkpoint::StreamState {
            config,
            spec: data.spec().clone(),
            encodings: Encodings::default(),
            label: "label".into(),
            stats: streamboost::runtime::OperatorStats::default(),
            position: None,
            delayed: None,
        };
        (model, stream)
    }

    /// A commit begun behind (`commit_behind`) holds the model as it was when begun, whatever
    /// it learns while the commit is written. A write that fails is returned by the wait
    /// for it, and the commit after it writes a new base.
    #[test]
    fn a_commit_behind_holds_the_model_as_it_was_when_begun() {
        use streamboost::checkpoint;
        use streamboost::runtime::live::{CheckpointPolicy, LiveModel};
        let (path, data, table, batches) = car_in_batches();
        let (model, stream) = fresh_live(&data);
        let dir = tempfile::tempdir().unwrap();
        let at = dir.path().join("m.parquet");
        // Deltas however large: the third commit is one.
        let policy = CheckpointPolicy {
            chain: checkpoint::ChainLimits {
                max_deltas: 16,
                max_delta_share: 100.0,
            },
            ..CheckpointPolicy::at_end(&at)
        };
        let mut live =
            LiveModel::new(model, stream, None, policy, table.schema.clone(), &path).unwrap();
        live.process(&batches[0]).unwrap();
        live.commit(None).unwrap();
        live.process(&batches[1]).unwrap();
        let (begun, _) = live.snapshot().unwrap();
        live.commit_behind(None).unwrap();
        live.process(&batches[2]).unwrap();
        live.settle().unwrap();
        // The same model: the same predictions and learning on the rest of the rows (a
        // tree read back lays out its branches afresh, so its serialized form may differ).
        let predict = |model: streamboost::model::Model| -> Vec<RecordBatch> {
            let mut op = operator(model, &data, table.schema.clone(), &path);
            batches[2..]
                .iter()
                .map(|b| op.process(b).unwrap())
                .collect()
        };
        let (committed, stream) = checkpoint::load(&at).unwrap();
        assert_eq!(predict(committed), predict(begun));
        assert_eq!(stream.stats.rows_seen, 400);
        assert_eq!(
            checkpoint::chain_files(&at).unwrap().len(),
            2,
            "a base and a delta"
        );

        // The next delta cannot be written: a file stands where its directory was.
        let deltas = checkpoint::chain::deltas_dir(&at);
        std::fs::remove_dir_all(&deltas).unwrap();
        std::fs::write(&deltas, b"in the way").unwrap();
        live.commit_behind(None).unwrap();
        let failed = live.settle().unwrap_err();
        assert!(matches!(failed, streamboost::Error::Io { .. }), "{failed}");
        std::fs::remove_file(&deltas).unwrap();
        live.commit(None).unwrap();
        assert_eq!(checkpoint::chain_files(&at).unwrap().len(), 1, "a new base");
        let (committed, stream) = checkpoint::load(&at).unwrap();
        assert_eq!(predict(committed), predict(live.snapshot().unwrap().0));
        assert_eq!(stream.stats.rows_seen, 600);
    }

    /// A live model over an async stream: its checkpoint is committed between batches by its
    /// policy and at the end, and a second stream over the rest of the input, from that
    /// checkpoint, predicts what one stream over the whole input does.
    #[test]
    fn a_live_model_over_two_streams_predicts_as_one() {
        use streamboost::runtime::live::{CheckpointPolicy, LiveModel};
        let (path, data, table, batches) = car_in_batches();
        let fresh = || fresh_live(&data);
        let dir = tempfile::tempdir().unwrap();
        let run = |live: LiveModel, batches: Vec<RecordBatch>| -> Vec<RecordBatch> {
            let input = futures::stream::iter(batches.into_iter().map(Ok::<_, std::io::Error>));
            futures::executor::block_on(
                ScoredStream::new(input, live).map(|b| b.unwrap()).collect(),
            )
        };
        let whole_policy = CheckpointPolicy::at_end(dir.path().join("whole.parquet"));
        let (model, stream) = fresh();
        let live = LiveModel::new(
            model,
            stream,
            None,
            whole_policy,
            table.schema.clone(),
            &path,
        )
        .unwrap();
        let expected = run(live, batches.clone());

        let policy = CheckpointPolicy {
            every: Some(400),
            ..CheckpointPolicy::at_end(dir.path().join("live.parquet"))
        };
        let (model, stream) = fresh();
        let live = LiveModel::new(
            model,
            stream,
            None,
            policy.clone(),
            table.schema.clone(),
            &path,
        )
        .unwrap();
        let mut got = run(live, batches[..4].to_vec());
        let live = LiveModel::load(policy, table.schema.clone(), &path).unwrap();
        assert_eq!(
            live.stats().rows_seen,
            800,
            "committed at the end of the first stream"
        );
        got.extend(run(live, batches[4..].to_vec()));
        assert_eq!(got, expected);
        let (a, _) = streamboost::checkpoint::load(&dir.path().join("whole.parquet")).unwrap();
        let (b, _) = streamboost::checkpoint::load(&dir.path().join("live.parquet")).unwrap();
        assert_eq!(
            serde_json::to_string(&a).unwrap(),
            serde_json::to_string(&b).unwrap()
        );
    }

    #[test]
    fn yields_between_batches_and_cancels_cleanly() {
        let (op, batches) = operator_and_batches();
        let input = futures::stream::iter(batches.into_iter().map(Ok::<_, std::io::Error>));
        let mut scored = ScoredStream::new(input, op);
        let waker = futures::task::noop_waker();
        let mut cx = std::task::Context::from_waker(&waker);
        let mut pattern = String::new();
        let mut rows = 0;
        while rows < 500 {
            match scored.poll_next_unpin(&mut cx) {
                Poll::Ready(Some(b)) => {
                    rows += b.unwrap().num_rows();
                    pattern.push('B');
                }
                Poll::Pending => pattern.push('.'),
                Poll::Ready(None) => unreachable!(),
            }
        }
        assert_eq!(pattern, "B.B.B.B.B");
        // Dropped here: the model has learnt exactly the rows it returned.
        assert_eq!(scored.into_operator().stats().rows_learnt, 500);
    }

    #[test]
    fn an_upstream_error_ends_the_stream_with_a_typed_error() {
        let (op, batches) = operator_and_batches();
        let input = futures::stream::iter(vec![
            Ok(batches[0].clone()),
            Err(std::io::Error::other("connection reset")),
            Ok(batches[1].clone()),
        ]);
        let out: Vec<_> = futures::executor::block_on(ScoredStream::new(input, op).collect());
        assert_eq!(out.len(), 2);
        assert!(out[0].is_ok());
        assert!(
            matches!(&out[1], Err(streamboost::Error::InputStream { source }) if source.to_string() == "connection reset")
        );
    }
}

/// A stream whose schema repeats a column name is refused by the operator too, naming both
/// positions: the features are found by name.
#[test]
fn a_schema_with_a_repeated_column_name_is_refused() {
    use std::sync::Arc;

    use arrow::datatypes::{Field, Schema};
    let path = bundled_car();
    let data = load_stream(&[path.clone()], "label", &Encodings::default()).unwrap();
    let table = read_table(&path).unwrap();
    let mut fields: Vec<Field> = table
        .schema
        .fields()
        .iter()
        .map(|f| f.as_ref().clone())
        .collect();
    fields[5] = fields[0].clone();
    let model = streamboost::weak::HoeffdingTreeConfig::default()
        .build(data.spec(), 1)
        .unwrap();
    let Err(err) = Cursor::new(
        model,
        data.spec(),
        Arc::new(Schema::new(fields)),
        "label",
        &Encodings::default(),
        "stream",
    ) else {
        panic!("a repeated column name must be refused");
    };
    assert!(
        matches!(
            &err,
            streamboost::Error::DuplicateColumn {
                first: 1,
                second: 6,
                ..
            }
        ),
        "{err}"
    );
}

/// A batch model (trained on car, saved) in the operator: every row gets the loaded model's
/// own prediction and probabilities, rows seen grow and rows learnt do not, and the model
/// counts the labelled rows it scored without learning.
#[test]
fn the_operator_scores_with_a_batch_model_without_learning() {
    use streamboost::Classifier;
    use streamboost::checkpoint::{self, StreamState};
    use streamboost::model::{Model, ModelConfig};
    use streamboost::runtime::OperatorStats;
    let path = bundled_car();
    let data = load_stream(&[path.clone()], "label", &Encodings::default()).unwrap();
    let config =
        ModelConfig::from_json(serde_json::json!({"algorithm": "adaboost-m1", "rounds": 25}))
            .unwrap();
    let mut model = config.train_batch(&data, &mut |_| {}).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("m1.parquet");
    let trained = OperatorStats {
        rows_seen: data.len() as u64,
        rows_learnt: data.len() as u64,
        unknown_labels: 0,
    };
    let stream = StreamState {
        config,
        spec: data.spec().clone(),
        encodings: Encodings::default(),
        label: "label".into(),
        stats: trained,
        position: None,
        delayed: None,
    };
    checkpoint::save(&saved, &mut model, &stream).unwrap();
    let table = read_table(&path).unwrap();
    let (mut op, _) = Cursor::resume(&saved, table.schema.clone(), &path).unwrap();
    let classes = data.spec().classes.names();
    let mut row = 0;
    let mut p = vec![0.0; classes.len()];
    for batch in table.batches().unwrap() {
        let out = op.process(&batch.unwrap()).unwrap();
        let (predicted, probs) = prediction_columns(&out);
        for i in 0..out.num_rows() {
            model.predict_proba(data.row(row), &mut p);
            assert_eq!(predicted.value(i), classes[model.predict(data.row(row))]);
            assert_eq!(
                probs.value(i).as_primitive::<Float64Type>().values(),
                &p[..]
            );
            row += 1;
        }
    }
    assert_eq!(row, data.len());
    assert_eq!(op.stats().rows_seen, 2 * data.len() as u64);
    assert_eq!(
        op.stats().rows_learnt,
        data.len() as u64,
        "the training rows only"
    );
    let Model::BatchBoost(batch) = op.model() else {
        panic!("a batch model");
    };
    assert_eq!(batch.rows_not_learnt(), data.len() as u64);
}

/// A keyed operator held within a memory budget a quarter of what its keys need, its keys
/// spread over three threads: keys are evicted at every batch (written when they learnt
/// since last written, dropped when not) and loaded back when they reappear, and every
/// prediction is the unbounded, one-thread operator's.
#[test]
fn a_keyed_operator_within_a_memory_budget_predicts_as_one_without() {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};

    use arrow::datatypes::SchemaRef;
    use streamboost::checkpoint::StreamState;
    use streamboost::model::{Algorithm, Model, ModelConfig};
    use streamboost::runtime::{BatchOperator, KeyedOperator};
    use streamboost::synth::KeyedEvents;

    type Disk = Arc<Mutex<HashMap<Option<String>, (Model, StreamState)>>>;
    let config = Algorithm::AdaOlm.default_config();
    let spec = KeyedEvents::spec();
    let mut events = KeyedEvents::new(60, 1.1, 0.05, 9).unwrap();
    let batches: Vec<_> = (0..40).map(|_| events.batch(100)).collect();
    let schema = batches[0].schema();
    // A keyed operator whose evicted keys go to `disk`, and come back from it.
    let keyed = |disk: &Disk| {
        let (config, fresh_spec, disk) = (config.clone(), spec.clone(), disk.clone());
        let factory = move |key: Option<&str>, input: &SchemaRef| {
            let saved = disk.lock().unwrap().get(&key.map(String::from)).cloned();
            match saved {
                Some((model, stream)) => Cursor::continuing(model, &stream, input.clone(), "disk"),
                None => fresh_operator(&config, 5, &fresh_spec, input.clone(), "fresh"),
            }
        };
        KeyedOperator::new(
            schema.clone(),
            "key",
            "label",
            spec.classes.names(),
            Box::new(factory),
        )
        .unwrap()
    };
    // Writes the operator's state to `disk`, as a commit or a spill does.
    fn write(disk: &Disk, config: &ModelConfig, key: Option<&str>, op: &Cursor<Model>) {
        let state = (op.model().clone(), op.stream_state(config));
        disk.lock().unwrap().insert(key.map(String::from), state);
    }
    let run = |keyed: &mut KeyedOperator<Model>, disk: &Disk| {
        let mut outputs = Vec::new();
        for (i, batch) in batches.iter().enumerate() {
            outputs.push(keyed.process(batch).unwrap());
            if i % 10 == 9 {
                // A commit: the keys that learnt are written, and are clean until they learn.
                for (key, op) in keyed.touched() {
                    write(disk, &config, key, op);
                }
                keyed.clear_touched();
            }
        }
        outputs
    };

    let unbounded_disk = Disk::default();
    let mut unbounded = keyed(&unbounded_disk);
    let expected = run(&mut unbounded, &unbounded_disk);
    let needed = unbounded.memory().resident_bytes;

    let disk = Disk::default();
    let mut bounded = keyed(&disk);
    let (spill_to, spill_config) = (disk.clone(), config.clone());
    let write_spills = move |evicted: Vec<(Option<&str>, &mut Cursor<Model>)>| {
        for (key, op) in evicted {
            write(&spill_to, &spill_config, key, op);
        }
        Ok(())
    };
    bounded.bound_memory(needed / 4, Box::new(write_spills));
    // Its keys spread over three threads, too: keys are independent.
    bounded.set_threads(3);
    let got = run(&mut bounded, &disk);
    assert_eq!(
        got, expected,
        "every prediction as without a budget, on one thread"
    );
    let memory = bounded.memory();
    assert!(memory.resident_bytes <= needed / 4, "{memory:?}");
    assert!(memory.spills > 0 && memory.drops > 0, "{memory:?}");
    let first_loads = unbounded.memory().loads;
    assert!(
        memory.loads > first_loads && memory.loads <= first_loads + memory.spills + memory.drops,
        "keys evicted and met again are loaded back: {memory:?}"
    );
}
