//! Delayed labels through the operator: events and labels as two inputs, merged by time,
//! against the replay under a label delay; the pending store across a checkpoint; and the
//! outcome rows, bad ids and bad times.

use std::path::PathBuf;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, Float64Array, Int64Array, StringArray};
use arrow::datatypes::{DataType, Field, Float64Type, Schema};
use arrow::record_batch::RecordBatch;
use futures::StreamExt;
use streamboost::columnar::{Encodings, load_stream, read_table};
use streamboost::core::Dataset;
use streamboost::eval::Prequential;
use streamboost::model::{Algorithm, Model, ModelConfig};
use streamboost::runtime::Cursor;
use streamboost::runtime::delay::{DelayColumns, DelayedState, LabelDelay, PendingLimits};
use streamboost::runtime::stream::{DelayedBatch, DelayedStream};
use streamboost::{Config, Error};

use crate::common::{count_true, fresh_operator, operator, prediction_columns, with_column};

fn bundled_car() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/car.csv")
}

fn json(model: &Model) -> String {
    serde_json::to_string(model).unwrap()
}

fn columns() -> DelayColumns {
    DelayColumns {
        id: "id".into(),
        time: "ts".into(),
    }
}

/// The events (the features, an id and a time, no label) and the labels (id, label and the
/// time each arrives, `delay` rows after its event, in arrival order) of the bundled car.
fn events_and_labels(delay: u64) -> (RecordBatch, RecordBatch, Dataset) {
    let path = bundled_car();
    let data = load_stream(&[path.clone()], "label", &Encodings::default()).unwrap();
    let all = read_table(&path).unwrap().to_batch().unwrap();
    let n = all.num_rows();
    let label = all.schema().index_of("label").unwrap();
    let mut fields: Vec<Field> = Vec::new();
    let mut values: Vec<ArrayRef> = Vec::new();
    for (i, field) in all.schema().fields().iter().enumerate() {
        if i != label {
            fields.push(field.as_ref().clone());
            values.push(all.column(i).clone());
        }
    }
    fields.push(Field::new("id", DataType::Int64, false));
    values.push(Arc::new(Int64Array::from_iter_values(0..n as i64)));
    fields.push(Field::new("ts", DataType::Float64, false));
    values.push(Arc::new(Float64Array::from_iter_values(
        (0..n).map(|i| i as f64),
    )));
    let events = RecordBatch::try_new(Arc::new(Schema::new(fields)), values).unwrap();
    let arrival = LabelDelay::Rows(delay);
    let labels = label_rows(
        Int64Array::from_iter_values(0..n as i64),
        all.column(label).clone(),
        (0..n).map(|i| arrival.arrival(i, i).unwrap()).collect(),
    );
    (events, labels, data)
}

fn config() -> ModelConfig {
    let mut config = Algorithm::Oza.default_config();
    if let ModelConfig::Oza(c) = &mut config {
        c.n_learners = 5;
    }
    config
}

/// A batch of labels: event ids, labels and the times they arrive.
fn label_rows(ids: Int64Array, labels: ArrayRef, ts: Vec<f64>) -> RecordBatch {
    let schema = Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("label", DataType::Utf8, true),
        Field::new("ts", DataType::Float64, false),
    ]);
    let ts = Arc::new(Float64Array::from(ts));
    RecordBatch::try_new(Arc::new(schema), vec![Arc::new(ids), labels, ts]).unwrap()
}

/// A fresh model of [`config`] under delayed labels, over `events`' schema.
fn delayed_operator(data: &Dataset, events: &RecordBatch, limits: PendingLimits) -> Cursor<Model> {
    let mut op = operator(
        config().build(data.spec(), 5).unwrap(),
        data,
        events.schema(),
        "events",
    );
    op.delay_labels(DelayedState::new(columns(), limits).unwrap())
        .unwrap();
    op
}

/// `batch` cut into pieces of `size` rows.
fn pieces(batch: &RecordBatch, size: usize) -> Vec<Result<RecordBatch, std::io::Error>> {
    (0..batch.num_rows())
        .step_by(size)
        .map(|i| Ok(batch.slice(i, size.min(batch.num_rows() - i))))
        .collect()
}

/// Predicted class names and probability bits of scored event batches.
fn predictions(batches: &[RecordBatch]) -> Vec<(String, Vec<u64>)> {
    let mut out = Vec::new();
    for b in batches {
        let (classes, probs) = prediction_columns(b);
        for r in 0..b.num_rows() {
            let p = probs.value(r);
            let bits = p.as_primitive::<Float64Type>().values().iter();
            out.push((
                classes.value(r).to_string(),
                bits.map(|v| v.to_bits()).collect(),
            ));
        }
    }
    out
}

/// Runs the delayed stream over events and labels cut into pieces of the given sizes;
/// returns the scored events, the outcomes and the operator.
fn run_stream(
    op: Cursor<Model>, events: &RecordBatch, labels: &RecordBatch, sizes: (usize, usize),
) -> (Vec<RecordBatch>, Vec<RecordBatch>, Cursor<Model>) {
    let mut stream = DelayedStream::new(
        futures::stream::iter(pieces(events, sizes.0)),
        futures::stream::iter(pieces(labels, sizes.1)),
        op,
        "ts",
    );
    let (mut scored, mut outcomes) = (Vec::new(), Vec::new());
    futures::executor::block_on(async {
        while let Some(out) = stream.next().await {
            match out.unwrap() {
                DelayedBatch::Scored(b) => scored.push(b),
                DelayedBatch::Outcomes(b) => outcomes.push(b),
            }
        }
    });
    (scored, outcomes, stream.into_operator())
}

/// Events and labels as two streams give, row for row and bit for bit, the predictions of
/// the replay under the same label delay, whatever the batch sizes; every event and every
/// label gets its output row, and the outcomes score each prediction against its label as
/// the replay's report does.
#[test]
fn two_streams_predict_as_the_replay_under_the_same_delay() {
    for (delay, sizes) in [(1, (100, 100)), (10, (7, 300)), (100, (1000, 1))] {
        let (events, labels, data) = events_and_labels(delay);
        let config = config();
        let mut replayed = config.build(data.spec(), 5).unwrap();
        let mut expected = Vec::new();
        let report = Prequential {
            delay: Some(LabelDelay::Rows(delay)),
            ..Prequential::default()
        }
        .run(&mut replayed, &data, None, |o| {
            let names = data.spec().classes.names();
            let bits = o.proba.iter().map(|v| v.to_bits()).collect();
            expected.push((names[o.predicted].clone(), bits));
        })
        .unwrap();

        let op = delayed_operator(&data, &events, PendingLimits::default());
        let (scored, outcomes, op) = run_stream(op, &events, &labels, sizes);
        assert_eq!(predictions(&scored), expected, "delay {delay}");
        let n = data.len() as u64;
        let rows: usize = outcomes.iter().map(RecordBatch::num_rows).sum();
        assert_eq!(rows as u64, n);
        let correct = count_true(&outcomes, "correct");
        let accuracy = report.cumulative.accuracy.unwrap();
        assert!((correct as f64 / n as f64 - accuracy).abs() < 1e-12);
        let stats = op.delay_stats().unwrap();
        assert_eq!((stats.events, stats.learnt, stats.pending), (n, n, 0));
        assert_eq!(op.stats().rows_learnt, n);
        assert_eq!(
            json(op.model()),
            json(&replayed),
            "the same model at the end"
        );
    }
}

/// A checkpoint taken half way holds the waiting events: the operator resumed from it and
/// fed the rest ends with the predictions and model of an uninterrupted run.
#[test]
fn the_pending_events_survive_a_checkpoint() {
    let (events, labels, data) = events_and_labels(50);
    let config = config();
    let limits = PendingLimits::default();
    let fresh = || delayed_operator(&data, &events, limits);
    let (whole, _, whole_op) = run_stream(fresh(), &events, &labels, (64, 64));

    let half = 900;
    let cut = |b: &RecordBatch, before: bool| {
        let ts = b
            .column_by_name("ts")
            .unwrap()
            .as_primitive::<Float64Type>();
        let split = ts.values().iter().position(|&t| t >= half as f64).unwrap();
        match before {
            true => b.slice(0, split),
            false => b.slice(split, b.num_rows() - split),
        }
    };
    let (first, _, mut op) =
        run_stream(fresh(), &cut(&events, true), &cut(&labels, true), (64, 64));
    let waiting = op.delay_stats();
    assert!(waiting.unwrap().pending > 0, "events wait at the cut");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("delayed.parquet");
    op.save(&path, &config).unwrap();
    let (op, _) = Cursor::resume(&path, events.schema(), "events").unwrap();
    assert_eq!(op.delay_stats(), waiting);
    let (second, _, mut op) = run_stream(op, &cut(&events, false), &cut(&labels, false), (64, 64));
    let mut resumed = predictions(&first);
    resumed.extend(predictions(&second));
    assert_eq!(resumed, predictions(&whole));
    assert_eq!(op.delay_stats(), whole_op.delay_stats());
    // The same model: equal checkpoints (a loaded tree's node slots are laid out anew, so
    // the checkpoint's digest compares them, not their in-memory form).
    let mut whole_op = whole_op;
    let a = op.save(&dir.path().join("a.parquet"), &config).unwrap();
    let b = whole_op
        .save(&dir.path().join("b.parquet"), &config)
        .unwrap();
    assert_eq!((a.digest, a.rows_learnt), (b.digest, b.rows_learnt));
}

/// What each label did, in the outcome rows: a label for an event already learnt and one
/// for an unknown id are unmatched, a null id is counted, a class outside the set is an
/// unknown label; every label row has its outcome row.
#[test]
fn every_label_row_gets_its_outcome() {
    let (events, _, data) = events_and_labels(1);
    let mut op = delayed_operator(&data, &events, PendingLimits::default());
    op.process(&events.slice(0, 3)).unwrap();
    let labels = label_rows(
        Int64Array::from(vec![Some(0), Some(0), Some(77), None, Some(1)]),
        Arc::new(StringArray::from(vec![
            "unacc", "unacc", "unacc", "acc", "nope",
        ])),
        vec![3.0, 3.0, 3.0, 3.0, 4.0],
    );
    let out = op.labels(&labels).unwrap();
    assert_eq!(out.num_rows(), 5);
    let outcome: Vec<&str> = out
        .column_by_name("outcome")
        .unwrap()
        .as_string::<i32>()
        .iter()
        .map(Option::unwrap)
        .collect();
    assert_eq!(
        outcome,
        [
            "learnt",
            "unmatched",
            "unmatched",
            "null-id",
            "unknown-label"
        ]
    );
    let correct = out.column_by_name("correct").unwrap().as_boolean();
    assert!(correct.is_valid(0) && correct.is_null(1));
    let stats = op.delay_stats().unwrap();
    assert_eq!(
        (
            stats.learnt,
            stats.unmatched_labels,
            stats.null_ids,
            stats.pending
        ),
        (1, 2, 1, 2)
    );
    assert_eq!(op.stats().unknown_labels, 1);
}

/// A time that goes back, or is null, is an error naming the row and the column; the
/// labels of an operator that takes them in its rows are refused.
#[test]
fn bad_times_and_undelayed_operators_are_typed_errors() {
    let (events, labels, data) = events_and_labels(1);
    let config = config();
    let mut op = delayed_operator(&data, &events, PendingLimits::default());
    op.process(&events.slice(10, 5)).unwrap();
    let err = op.process(&events.slice(0, 5)).unwrap_err();
    assert!(matches!(err, Error::InvalidRow { row: 0, .. }), "{err}");
    assert!(err.to_string().contains("`ts` goes back in time"), "{err}");

    let mut plain = operator(
        config.build(data.spec(), 5).unwrap(),
        &data,
        events.schema(),
        "events",
    );
    let err = plain.labels(&labels).unwrap_err();
    assert!(err.to_string().contains("delay_labels"), "{err}");
    let no_id = events.project(&[0, 1, 2, 3, 4, 5, 7]).unwrap();
    let mut op = operator(
        config.build(data.spec(), 5).unwrap(),
        &data,
        no_id.schema(),
        "events",
    );
    let err = op
        .delay_labels(DelayedState::new(columns(), PendingLimits::default()).unwrap())
        .unwrap_err();
    assert!(matches!(err, Error::MissingColumn { .. }), "{err}");
}

/// One model per key under delayed labels: the keyed operator gives each key's events the
/// predictions of a delayed operator fed only that key's events and labels (each key has
/// its own pending store, and the labels carry the key).
#[test]
fn keyed_delayed_labels_equal_one_delayed_operator_per_key() {
    use streamboost::runtime::{BatchOperator, KeyedOperator};

    let (events, labels, data) = events_and_labels(20);
    // The key: the car's `buying` column, in the events and (by id) in the labels.
    let buying = events.column_by_name("buying").unwrap().clone();
    let labels = with_column(
        &labels,
        Field::new("buying", DataType::Utf8, true),
        buying.clone(),
    );
    let config = config();
    let build = |events: &RecordBatch| delayed_operator(&data, events, PendingLimits::default());
    let factory_config = config.clone();
    let spec = data.spec().clone();
    let factory = Box::new(
        move |_: Option<&str>, input: &arrow::datatypes::SchemaRef| {
            let mut op = fresh_operator(&factory_config, 5, &spec, input.clone(), "events")?;
            op.delay_labels(DelayedState::new(columns(), PendingLimits::default())?)?;
            Ok(op)
        },
    );
    let keyed = KeyedOperator::new(
        events.schema(),
        "buying",
        "label",
        data.spec().classes.names(),
        factory,
    )
    .unwrap();
    let mut stream = DelayedStream::new(
        futures::stream::iter(pieces(&events, 50)),
        futures::stream::iter(pieces(&labels, 70)),
        keyed,
        "ts",
    );
    let mut scored = Vec::new();
    let mut outcomes = 0;
    futures::executor::block_on(async {
        while let Some(out) = stream.next().await {
            match out.unwrap() {
                DelayedBatch::Scored(b) => scored.push(b),
                DelayedBatch::Outcomes(b) => outcomes += b.num_rows(),
            }
        }
    });
    assert_eq!(outcomes, 1728, "one outcome row per label row");
    let keyed = predictions(&scored);
    assert_eq!(stream.operator().schema(), scored[0].schema());

    // Each key alone, through its own delayed operator.
    let key_values = buying.as_string::<i32>();
    let mut expected = vec![None; 1728];
    for key in ["low", "med", "high", "vhigh"] {
        let mask: arrow::array::BooleanArray =
            key_values.iter().map(|v| Some(v == Some(key))).collect();
        let (e, l) = (
            arrow::compute::filter_record_batch(&events, &mask).unwrap(),
            arrow::compute::filter_record_batch(&labels, &mask).unwrap(),
        );
        let (out, _, _) = run_stream(build(&e), &e, &l, (50, 70));
        let ids = e
            .column_by_name("id")
            .unwrap()
            .as_primitive::<arrow::datatypes::Int64Type>();
        for (id, p) in ids.values().iter().zip(predictions(&out)) {
            expected[*id as usize] = Some(p);
        }
    }
    let expected: Vec<_> = expected.into_iter().map(Option::unwrap).collect();
    assert_eq!(keyed, expected);
}

/// An event with a null id is scored (its output row is there) and counted, never stored:
/// no label can reach it.
#[test]
fn an_event_without_an_id_is_scored_and_counted() {
    let (events, _, data) = events_and_labels(1);
    let ids = Arc::new(Int64Array::from(
        (0..events.num_rows() as i64)
            .map(|i| (i % 2 == 0).then_some(i))
            .collect::<Vec<_>>(),
    ));
    let events = with_column(&events, Field::new("id", DataType::Int64, true), ids);
    let mut op = delayed_operator(&data, &events, PendingLimits::default());
    let out = op.process(&events.slice(0, 10)).unwrap();
    assert_eq!(out.num_rows(), 10);
    assert_eq!(
        out.column_by_name("predicted_label").unwrap().null_count(),
        0
    );
    let stats = op.delay_stats().unwrap();
    assert_eq!((stats.events, stats.null_ids, stats.pending), (5, 5, 5));
}
