//! Multi-label streams through the columnar layers: `label_<name>` columns or a list column, the operator's
//! score and set columns, replay with a test split, checkpoints, bad flags, and real data.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, ListBuilder, StringBuilder};
use arrow::compute::cast;
use arrow::datatypes::{DataType, Float64Type};
use arrow::record_batch::RecordBatch;
use streamboost::boost::ranking::{AdaOlmrConfig, OnlineBmrConfig};
use streamboost::columnar::{Encodings, Table, load_stream, read_table, write_batch};
use streamboost::core::Dataset;
use streamboost::eval::Prequential;
use streamboost::model::ModelConfig;
use streamboost::runtime::Cursor;
use streamboost::weak::HoeffdingTreeConfig;
use streamboost::{Config, Error, Ranker, synth};

use crate::cli::{Flag, fails_saying, flags, read_json, replay_loaded, streamboost};
use crate::common::{dataset, operator};

/// Writes a multi-label data set as CSV with `label_<name>` columns; rows in `skip_set` get
/// empty label cells.
pub fn write_csv(data: &Dataset, path: &Path, rows: std::ops::Range<usize>) {
    let spec = data.spec();
    let mut text: Vec<String> = vec![
        spec.features
            .iter()
            .map(|f| f.name.clone())
            .chain(spec.classes.names().iter().map(|n| format!("label_{n}")))
            .collect::<Vec<_>>()
            .join(","),
    ];
    for i in rows {
        let mut cells: Vec<String> = data
            .row(i)
            .iter()
            .zip(&spec.features)
            .map(|(v, f)| match (&f.kind, v.is_nan()) {
                (_, true) => String::new(),
                (streamboost::core::FeatureKind::Nominal { categories }, false) => {
                    categories[*v as usize].clone()
                }
                _ => v.to_string(),
            })
            .collect();
        let set = data.label_set(i).unwrap();
        cells.extend(set.iter().map(|&r| if r { "1" } else { "0" }.to_string()));
        text.push(cells.join(","));
    }
    std::fs::write(path, text.join("\n") + "\n").unwrap();
}

fn fixture(dir: &Path) -> (PathBuf, PathBuf) {
    let data = synth::mixed_multi_label(900, 0.05, 0.02, 21);
    let (train, test) = (dir.join("train.csv"), dir.join("test.csv"));
    write_csv(&data, &train, 0..600);
    write_csv(&data, &test, 600..900);
    (train, test)
}

#[test]
fn label_columns_make_a_multi_label_stream() {
    let dir = tempfile::tempdir().unwrap();
    let (train, _) = fixture(dir.path());
    let data = load_stream(&[train], "label", &Encodings::default()).unwrap();
    let spec = data.spec();
    assert!(spec.is_multi_label());
    assert_eq!(
        spec.classes.names(),
        &["sky", "sea", "sand", "city", "wood"]
    );
    assert_eq!(spec.n_features(), 5, "label columns are not features");
    let original = synth::mixed_multi_label(900, 0.05, 0.02, 21);
    for i in 0..600 {
        assert_eq!(data.label_set(i), original.label_set(i));
    }
}

#[test]
fn replay_with_a_test_split_reports_the_test_part_and_resumes_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let (train, test) = fixture(dir.path());
    let (report, predictions) = (dir.path().join("r.json"), dir.path().join("p.csv"));
    streamboost()
        .args(flags("replay --algo bmr --learners 8 --seed 2 -q"))
        .flag("--input", &train)
        .flag("--test", &test)
        .flag("--report", &report)
        .flag("--predictions", &predictions)
        .assert()
        .success()
        .stdout(predicates::str::contains("rank loss"));
    let r = read_json(&report);
    assert_eq!(r["algorithm"], "bmr");
    assert_eq!(r["test_start"], 600);
    assert_eq!(r["test"]["rows"], 300);
    let test_loss = r["test"]["rank_loss"].as_f64().unwrap();
    assert!(test_loss < 0.25, "test rank loss {test_loss}");
    for key in ["hamming_loss", "one_error", "coverage", "average_precision"] {
        assert!(r["test"][key].as_f64().is_some(), "{key}");
    }
    let p = read_table(&predictions).unwrap();
    assert_eq!(p.n_rows(), 900);
    assert!(p.schema.index_of("score_sky").is_ok());

    // The same run in two halves through a checkpoint gives the same test predictions.
    let checkpoint = dir.path().join("m.parquet");
    streamboost()
        .args(flags("replay --algo bmr --learners 8 --seed 2 -q"))
        .flag("--input", &train)
        .flag("--save", &checkpoint)
        .assert()
        .success();
    let resumed = dir.path().join("p2.csv");
    replay_loaded(&checkpoint, &test)
        .flag("--predictions", &resumed)
        .assert()
        .success();
    let whole = std::fs::read_to_string(&predictions).unwrap();
    let second = std::fs::read_to_string(&resumed).unwrap();
    let tail: Vec<&str> = whole.lines().skip(601).collect();
    assert_eq!(tail, second.lines().skip(1).collect::<Vec<_>>());

    // bmr takes rank or hinge only.
    fails_saying(
        streamboost()
            .args(["replay", "--algo", "bmr", "--loss", "logistic", "-q"])
            .arg("--input")
            .arg(&train),
        &["rank or hinge"],
    );
}

#[test]
fn bad_flags_are_typed_errors_and_null_flags_score_only() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.csv");
    std::fs::write(&path, "x,label_a,label_b\n0.1,1,0\n0.2,0,2\n").unwrap();
    let err = load_stream(&[path.clone()], "label", &Encodings::default()).unwrap_err();
    match err {
        Error::MalformedRow { line, column, .. } => {
            assert_eq!(line, Some(3));
            assert_eq!(column.as_deref(), Some("label_b"));
        }
        other => panic!("{other}"),
    }
    std::fs::write(&path, "x,label_a,label_b\n0.1,1,0\n0.2,,1\n0.3,0,1\n").unwrap();
    let data = load_stream(&[path], "label", &Encodings::default()).unwrap();
    assert_eq!(data.label_set(0), Some(&[true, false][..]));
    assert_eq!(data.label_set(1), None);
    assert!(!data.is_labelled(1));
}

/// The training fixture's table and its stream.
fn training_fixture(dir: &Path) -> (Table, Dataset) {
    let (train, _) = fixture(dir);
    let table = read_table(&train).unwrap();
    (
        table,
        load_stream(&[train], "label", &Encodings::default()).unwrap(),
    )
}

#[test]
fn operator_appends_scores_and_the_predicted_set() {
    let dir = tempfile::tempdir().unwrap();
    let (table, data) = training_fixture(dir.path());
    let config = ModelConfig::AdaOlmr(AdaOlmrConfig {
        n_learners: 6,
        ..AdaOlmrConfig::new(HoeffdingTreeConfig::jgt_paper().into())
    });
    let mut op = operator(
        config.build(data.spec(), 5).unwrap(),
        &data,
        table.schema.clone(),
        "train.csv",
    );
    let out = op.process(&table.to_batch().unwrap()).unwrap();
    assert_eq!(out.num_rows(), 600);
    let scores = out
        .column_by_name("label_scores")
        .unwrap()
        .as_fixed_size_list();
    let sets = out
        .column_by_name("predicted_label")
        .unwrap()
        .as_list::<i32>();
    assert_eq!(op.stats().rows_learnt, 600);

    // Row for row what the prequential driver produces.
    let mut direct = config.build(data.spec(), 5).unwrap();
    let mut expected = Vec::new();
    Prequential::default()
        .run_ranking(&mut direct, &data, None, |row, _| {
            expected.push((row.scores.to_vec(), row.predicted.to_vec()));
            Ok(())
        })
        .unwrap();
    let names = data.spec().classes.names();
    for (r, (s, set)) in expected.iter().enumerate() {
        let got = scores.value(r);
        assert_eq!(got.as_primitive::<Float64Type>().values(), &s[..]);
        let got_set = sets.value(r);
        let got_set: Vec<&str> = got_set.as_string::<i32>().iter().flatten().collect();
        let want: Vec<&str> = names
            .iter()
            .zip(set)
            .filter(|(_, on)| **on)
            .map(|(n, _)| n.as_str())
            .collect();
        assert_eq!(got_set, want, "row {r}");
    }
    assert!(sets.is_valid(0));
}

/// JT18's emotions split through OnlineBMR and Ada.OLMR (20 trees): both rank the test part
/// well below a random ranking (rank loss 0.5).
#[test]
fn emotions_test_split() {
    let (Some(train), Some(test)) = (dataset("emotions/train.csv"), dataset("emotions/test.csv"))
    else {
        return;
    };
    let data = load_stream(&[train.clone(), test], "label", &Encodings::default()).unwrap();
    let n_train = read_table(&train).unwrap().n_rows();
    let tree = HoeffdingTreeConfig {
        feature_subset: Some(20),
        ..HoeffdingTreeConfig::jgt_paper()
    };
    for config in [
        ModelConfig::Bmr(OnlineBmrConfig {
            n_learners: 20,
            ..OnlineBmrConfig::new(tree.clone().into())
        }),
        ModelConfig::AdaOlmr(AdaOlmrConfig {
            n_learners: 20,
            ..AdaOlmrConfig::new(tree.clone().into())
        }),
    ] {
        let mut model = config.build(data.spec(), 1).unwrap();
        assert_eq!(model.n_labels(), 6);
        let evaluation = Prequential {
            test_start: Some(n_train),
            ..Prequential::default()
        };
        let report = evaluation
            .run_ranking(&mut model, &data, None, |_, _| Ok(()))
            .unwrap();
        let test = report.test.unwrap();
        assert_eq!(test.rows, 202);
        let loss = test.rank_loss.unwrap();
        assert!(loss < 0.26, "{config}: test rank loss {loss}");
    }
}

/// `batch` with its `label_<name>` flag columns replaced by one `label` column listing the
/// names of the relevant labels; `null_rows` get a null list.
pub fn as_label_lists(batch: &RecordBatch, null_rows: &[usize]) -> RecordBatch {
    let schema = batch.schema();
    let flags: Vec<(usize, &str)> = (0..schema.fields().len())
        .filter_map(|i| {
            schema
                .field(i)
                .name()
                .strip_prefix("label_")
                .map(|n| (i, n))
        })
        .collect();
    let mut lists = ListBuilder::new(StringBuilder::new());
    for r in 0..batch.num_rows() {
        for &(i, name) in &flags {
            let flag = cast(batch.column(i), &DataType::Float64).unwrap();
            if flag.as_primitive::<Float64Type>().value(r) == 1.0 {
                lists.values().append_value(name);
            }
        }
        lists.append(!null_rows.contains(&r));
    }
    let mut columns: Vec<(String, ArrayRef)> = (0..schema.fields().len())
        .filter(|i| !flags.iter().any(|(f, _)| f == i))
        .map(|i| (schema.field(i).name().clone(), batch.column(i).clone()))
        .collect();
    columns.push(("label".into(), Arc::new(lists.finish())));
    RecordBatch::try_from_iter(columns).unwrap()
}

#[test]
fn a_list_column_of_label_names_is_a_label_set() {
    let dir = tempfile::tempdir().unwrap();
    let (train, _) = fixture(dir.path());
    let flags = load_stream(&[train.clone()], "label", &Encodings::default()).unwrap();
    let table = read_table(&train).unwrap();
    let lists = dir.path().join("train.parquet");
    write_batch(&lists, &as_label_lists(&table.to_batch().unwrap(), &[3])).unwrap();

    let data = load_stream(&[lists.clone()], "label", &Encodings::default()).unwrap();
    let spec = data.spec();
    assert!(spec.is_multi_label());
    // Labels met in lists are sorted, whatever the order rows name them in.
    assert_eq!(
        spec.classes.names(),
        &["city", "sand", "sea", "sky", "wood"]
    );
    assert_eq!(spec.features, flags.spec().features);
    let by_name = |d: &Dataset, i: usize| -> Option<Vec<String>> {
        let names = d.spec().classes.names();
        d.label_set(i).map(|s| {
            let mut on: Vec<String> = (0..s.len())
                .filter(|&l| s[l])
                .map(|l| names[l].clone())
                .collect();
            on.sort();
            on
        })
    };
    for i in 0..flags.len() {
        assert_eq!(data.row(i).len(), flags.row(i).len());
        for (a, b) in data.row(i).iter().zip(flags.row(i)) {
            assert!(a == b || (a.is_nan() && b.is_nan()), "row {i}");
        }
        if i == 3 {
            assert_eq!(by_name(&data, i), None, "a null list scores only");
        } else {
            assert_eq!(by_name(&data, i), by_name(&flags, i), "row {i}");
        }
    }
    assert!((0..flags.len()).any(|i| by_name(&data, i) == Some(vec![])));

    // The replay CLI reads the list layout from Parquet.
    let report = dir.path().join("r.json");
    streamboost()
        .args(["replay", "--algo", "ada-olmr", "--learners", "5", "-q"])
        .flag("--input", &lists)
        .flag("--report", &report)
        .assert()
        .success();
    let r = read_json(&report);
    assert_eq!(r["rows"], 600);
    assert_eq!(r["cumulative"]["rows"], 599);
    assert!(r["cumulative"]["rank_loss"].as_f64().unwrap() < 0.3);
}

/// The first `rows` rows of `batch`'s five feature columns, with `label` as label column.
fn with_label(batch: &RecordBatch, rows: usize, label: impl Array + 'static) -> RecordBatch {
    let features = (0..5).map(|c| {
        let field = batch.schema().field(c).clone();
        (field.name().clone(), batch.column(c).slice(0, rows))
    });
    let label: ArrayRef = Arc::new(label);
    RecordBatch::try_from_iter(features.chain([("label".to_string(), label)])).unwrap()
}

#[test]
fn operator_reads_either_layout_into_the_same_label_ids() {
    let dir = tempfile::tempdir().unwrap();
    let (table, data) = training_fixture(dir.path());
    let config = ModelConfig::Bmr(OnlineBmrConfig {
        n_learners: 6,
        ..OnlineBmrConfig::new(HoeffdingTreeConfig::jgt_paper().into())
    });
    let run = |batch: &RecordBatch| {
        let mut op = operator(
            config.build(data.spec(), 3).unwrap(),
            &data,
            batch.schema(),
            "train",
        );
        let out = op.process(batch).unwrap();
        (out, op.stats())
    };
    let flagged = &table.to_batch().unwrap();
    let (by_flags, _) = run(flagged);
    let (by_lists, stats) = run(&as_label_lists(flagged, &[]));
    assert_eq!(stats.rows_learnt, 600);
    for column in ["label_scores", "predicted_label"] {
        assert_eq!(
            by_flags.column_by_name(column).unwrap(),
            by_lists.column_by_name(column).unwrap(),
            "{column}"
        );
    }

    // A name outside the label set: the row is scored, not learnt, and counted.
    let mut lists = ListBuilder::new(StringBuilder::new());
    for names in [&["sky", "sea"][..], &["sky", "moon"], &[]] {
        for n in names {
            lists.values().append_value(n);
        }
        lists.append(true);
    }
    let odd = with_label(flagged, 3, lists.finish());
    let (out, stats) = run(&odd);
    assert_eq!(out.num_rows(), 3);
    assert_eq!((stats.rows_learnt, stats.unknown_labels), (2, 1));

    // A null name inside a list is an error naming the row and column.
    let mut lists = ListBuilder::new(StringBuilder::new());
    lists.values().append_value("sky");
    lists.append(true);
    lists.values().append_null();
    lists.append(true);
    let bad = with_label(flagged, 2, lists.finish());
    let mut op = operator(
        config.build(data.spec(), 3).unwrap(),
        &data,
        bad.schema(),
        "stream",
    );
    match op.process(&bad).unwrap_err() {
        Error::MalformedRow { line, column, .. } => {
            assert_eq!(line, Some(3));
            assert_eq!(column.as_deref(), Some("label"));
        }
        other => panic!("{other}"),
    }

    // A multi-label model refuses a label column that is not a list.
    let plain = with_label(
        flagged,
        600,
        arrow::array::StringArray::from(vec!["sky"; 600]),
    );
    let err = Cursor::new(
        config.build(data.spec(), 3).unwrap(),
        data.spec(),
        plain.schema(),
        "label",
        &Encodings::default(),
        "stream",
    )
    .unwrap_err();
    assert!(matches!(err, Error::UnsupportedColumnType { .. }), "{err}");
}
