//! Replays under a label delay: the order of predictions and learning against a reference
//! loop written out here, delay 0 as test-then-train, the store's limits, rows whose label
//! never arrives, and the command line's flags.

use streamboost::core::Dataset;
use streamboost::eval::Prequential;
use streamboost::model::{Algorithm, Model, ModelConfig};
use streamboost::runtime::delay::{LabelDelay, PendingLimits};
use streamboost::{Classifier, Config, synth};

fn model() -> (ModelConfig, Dataset) {
    let data = synth::mixed(1500, 0.1, 0.05, 9);
    (Algorithm::Oza.default_config(), data)
}

fn fresh(config: &ModelConfig, data: &Dataset) -> Model {
    config.build(data.spec(), 4).unwrap()
}

/// Predictions (class and probability bits) of a run.
fn run(p: &Prequential, model: &mut Model, data: &Dataset) -> (Vec<(usize, Vec<u64>)>, f64) {
    let mut out = Vec::new();
    let report = p
        .run(model, data, None, |o| {
            out.push((o.predicted, o.proba.iter().map(|v| v.to_bits()).collect()))
        })
        .unwrap();
    (out, report.cumulative.accuracy.unwrap())
}

#[test]
fn a_delay_of_zero_is_test_then_train() {
    let (config, data) = model();
    let plain = run(&Prequential::default(), &mut fresh(&config, &data), &data);
    let zero = Prequential {
        delay: Some(LabelDelay::Rows(0)),
        ..Prequential::default()
    };
    assert_eq!(run(&zero, &mut fresh(&config, &data), &data), plain);
}

/// With a delay of N rows, row i is predicted on arrival, and learnt just before row
/// i + max(N, 1) is predicted: the reference loop below, bit for bit, and the report
/// scores each prediction against its row's label.
#[test]
fn rows_are_learnt_when_their_labels_arrive() {
    let (config, data) = model();
    let k = data.spec().n_classes();
    for n in [1usize, 7, 100] {
        let mut reference = fresh(&config, &data);
        let mut expected = Vec::new();
        let mut correct = 0;
        let mut p = vec![0.0; k];
        for i in 0..data.len() {
            if let Some(j) = i.checked_sub(n.max(1)) {
                reference.learn(data.row(j), data.label(j).unwrap(), 1.0);
            }
            let predicted = reference.learn_predict(data.row(i), None, 1.0, &mut p);
            correct += usize::from(Some(predicted) == data.label(i));
            expected.push((predicted, p.iter().map(|v| v.to_bits()).collect::<Vec<_>>()));
        }
        let delayed = Prequential {
            delay: Some(LabelDelay::Rows(n as u64)),
            ..Prequential::default()
        };
        let mut model = fresh(&config, &data);
        let (got, accuracy) = run(&delayed, &mut model, &data);
        assert_eq!(got, expected, "delay {n}");
        assert_eq!(accuracy, correct as f64 / data.len() as f64, "delay {n}");
        // The labels due after the last row are learnt too: the model ends as the
        // reference does once it has learnt them.
        for j in data.len().saturating_sub(n.max(1))..data.len() {
            reference.learn(data.row(j), data.label(j).unwrap(), 1.0);
        }
        let same =
            serde_json::to_string(&model).unwrap() == serde_json::to_string(&reference).unwrap();
        assert!(same, "delay {n}: the models differ at the end");
    }
}

/// A time-to-live shorter than the delay: every row expires before its label, nothing is
/// learnt, no prediction is scored, and the store never holds more than the TTL allows.
/// A full store evicts the oldest rows, whose labels then find nothing.
#[test]
fn rows_that_outwait_the_store_are_counted_not_learnt() {
    let (config, data) = model();
    let expiring = Prequential {
        delay: Some(LabelDelay::Rows(50)),
        pending: PendingLimits {
            ttl: Some(20.0),
            ..PendingLimits::default()
        },
        ..Prequential::default()
    };
    let mut model = fresh(&config, &data);
    let report = expiring.run(&mut model, &data, None, |_| {}).unwrap();
    // What a model that only predicted every row is.
    let mut predicted_only = fresh(&config, &data);
    let mut p = vec![0.0; data.spec().n_classes()];
    for i in 0..data.len() {
        predicted_only.learn_predict(data.row(i), None, 1.0, &mut p);
    }
    let d = report.delay.unwrap();
    assert_eq!((d.learnt, d.expired), (0, data.len() as u64), "{d:?}");
    assert_eq!(d.unmatched_labels, data.len() as u64);
    assert!(d.peak_pending <= 22, "{d:?}");
    assert_eq!(report.cumulative.rows, 0);
    let same =
        serde_json::to_string(&model).unwrap() == serde_json::to_string(&predicted_only).unwrap();
    assert!(same, "a row expired before its label was learnt");

    let small = Prequential {
        delay: Some(LabelDelay::Rows(50)),
        pending: PendingLimits {
            max_events: 30,
            ..PendingLimits::default()
        },
        ..Prequential::default()
    };
    let d = small
        .run(&mut fresh(&config, &data), &data, None, |_| {})
        .unwrap()
        .delay
        .unwrap();
    // Only the last 30 rows are still waiting when their labels come, after the last row.
    assert_eq!(d.learnt, 30, "{d:?}");
    assert_eq!(d.evicted, data.len() as u64 - 30, "{d:?}");
    assert_eq!(d.peak_pending, 30);
}

/// Delays given per row: a row without one is never learnt nor scored; the others are
/// learnt in the order their labels arrive, not their rows'.
#[test]
fn per_row_delays_learn_in_arrival_order_and_skip_lost_labels() {
    let (config, data) = model();
    let delays: Vec<Option<f64>> = (0..data.len())
        .map(|i| (i % 10 != 3).then_some(((i * 37) % 60) as f64))
        .collect();
    let lost = delays.iter().filter(|d| d.is_none()).count();
    let p = Prequential {
        delay: Some(LabelDelay::PerRow(
            delays
                .iter()
                .map(|d| d.map_or(f32::NAN, |d| d as f32))
                .collect(),
        )),
        ..Prequential::default()
    };
    let report = p
        .run(&mut fresh(&config, &data), &data, None, |_| {})
        .unwrap();
    let d = report.delay.unwrap();
    assert_eq!(d.learnt as usize, data.len() - lost);
    assert_eq!(
        d.expired as usize, lost,
        "never labelled: they leave at the end"
    );
    assert_eq!(report.cumulative.rows as usize, data.len() - lost);
    // The same order of learning, written out: labels sorted by arrival, then row.
    let mut due: Vec<(f64, usize)> = delays
        .iter()
        .enumerate()
        .filter_map(|(i, d)| d.map(|d| (i as f64 + d.max(1.0), i)))
        .collect();
    due.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut reference = fresh(&config, &data);
    let k = data.spec().n_classes();
    let (mut next, mut q) = (0, vec![0.0; k]);
    let mut expected = Vec::new();
    for i in 0..data.len() {
        while next < due.len() && due[next].0 <= i as f64 {
            let j = due[next].1;
            reference.learn(data.row(j), data.label(j).unwrap(), 1.0);
            next += 1;
        }
        expected.push(reference.learn_predict(data.row(i), None, 1.0, &mut q));
    }
    let mut got = Vec::new();
    p.run(&mut fresh(&config, &data), &data, None, |o| {
        got.push(o.predicted)
    })
    .unwrap();
    assert_eq!(got, expected);
}
