//! Bad input gets a clear error naming the file, row and column, and a non-zero exit.

use std::path::PathBuf;

use predicates::prelude::*;
use streamboost::Error;
use streamboost::columnar::{Encodings, load_stream};

use crate::cli::{Flag, fails_saying, replay_loaded, replay_report, streamboost};

fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn missing_label_column() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, "nolabel.csv", "a,b\n1,x\n2,y\n");
    let err = load_stream(&[path.clone()], "label", &Encodings::default()).unwrap_err();
    assert!(
        matches!(&err, Error::MissingColumn { column, .. } if column == "label"),
        "{err}"
    );
    fails_saying(
        streamboost().args(["replay", "--input"]).arg(&path),
        &["nolabel.csv", "no column `label`"],
    );
}

#[test]
fn malformed_csv_row_names_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let short = write(&dir, "short.csv", "x,c,label\n1.0,a,yes\n2.0,b\n3.0,a,no\n");
    match load_stream(&[short.clone()], "label", &Encodings::default()).unwrap_err() {
        Error::MalformedRow { file, line, .. } => {
            assert_eq!(file, short);
            assert_eq!(line, Some(3));
        }
        e => panic!("unexpected {e}"),
    }
    // A value of the wrong type: line 4, column `x`. Type inference reads every row, so an
    // explicit schema conflict only arises across files; within one file a text value in a
    // numeric column makes the column nominal. Mixed types across inputs are checked below.
    fails_saying(
        streamboost().args(["replay", "--input"]).arg(&short),
        &["short.csv: malformed row at line 3"],
    );
}

#[test]
fn schema_drift_between_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(&dir, "a.csv", "x,label\n1.0,yes\n2.0,no\n");
    let b = write(&dir, "b.csv", "x,label\nlow,yes\nhigh,no\n");
    let c = write(&dir, "c.csv", "y,label\n1.0,yes\n");
    let err = load_stream(&[a.clone(), b.clone()], "label", &Encodings::default()).unwrap_err();
    assert!(
        matches!(&err, Error::SchemaMismatch { file, .. } if *file == b),
        "{err}"
    );
    assert!(err.to_string().contains("column `x`"), "{err}");
    let err = load_stream(&[a, c.clone()], "label", &Encodings::default()).unwrap_err();
    assert!(
        matches!(&err, Error::SchemaMismatch { file, .. } if *file == c),
        "{err}"
    );
}

#[test]
fn unknown_algorithm() {
    fails_saying(
        streamboost().args(["replay", "--algo", "adaboost"]),
        &["invalid value 'adaboost' for '--algo", "ada-olm"],
    );
}

#[test]
fn empty_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let empty = write(&dir, "empty.csv", "");
    let header_only = write(&dir, "header.csv", "x,label\n");
    for path in [&empty, &header_only] {
        let err = load_stream(&[path.clone()], "label", &Encodings::default()).unwrap_err();
        assert!(
            matches!(&err, Error::EmptyInput { file } if file == path),
            "{err}"
        );
        fails_saying(
            streamboost().args(["replay", "--input"]).arg(path),
            &["no data rows"],
        );
    }
}

#[test]
fn missing_file_and_corrupt_parquet() {
    let dir = tempfile::tempdir().unwrap();
    let err = load_stream(
        &[dir.path().join("nope.csv")],
        "label",
        &Encodings::default(),
    )
    .unwrap_err();
    assert!(matches!(err, Error::Io { .. }), "{err}");
    let bad = write(&dir, "bad.parquet", "this is not parquet");
    let err = load_stream(&[bad], "label", &Encodings::default()).unwrap_err();
    assert!(
        matches!(&err, Error::Format { .. }) && err.to_string().contains("bad.parquet"),
        "{err}"
    );
}

#[test]
fn single_class_and_missing_values() {
    let dir = tempfile::tempdir().unwrap();
    let one = write(&dir, "one.csv", "x,label\n1,a\n2,a\n");
    assert!(matches!(
        load_stream(&[one], "label", &Encodings::default()).unwrap_err(),
        Error::TooFewClasses { found: 1, .. }
    ));
    // Empty fields are missing values; an empty label is a row scored but not learnt.
    let gaps = write(
        &dir,
        "gaps.csv",
        "x,c,label\n1.5,,a\n,red,b\n2.5,blue,\n0.5,red,a\n",
    );
    let data = load_stream(&[gaps.clone()], "label", &Encodings::default()).unwrap();
    assert_eq!(data.len(), 4);
    assert!(data.row(0)[1].is_nan() && data.row(1)[0].is_nan());
    assert_eq!(data.label(2), None);
    let (r, _) = replay_report(&["--learners", "3", "--input", gaps.to_str().unwrap()]);
    assert_eq!(r["rows"], 4);
    assert_eq!(r["cumulative"]["rows"], 3);
}

#[test]
fn invalid_parameters_are_refused() {
    fails_saying(
        streamboost().args(["replay", "--final-fraction", "1.5"]),
        &["final_fraction"],
    );
    fails_saying(
        streamboost().args(["replay", "--learners", "0"]),
        &["n_learners"],
    );
    fails_saying(
        streamboost().args(["replay", "--weight-scale", "5:1"]),
        &["weight_scale"],
    );
}

#[test]
fn ordinal_columns_are_ranked_and_unlisted_levels_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        &dir,
        "sizes.csv",
        "size,n,label\nsmall,1,a\nbig,2,b\n,3,a\nmed,4,b\n",
    );
    let enc = Encodings {
        ordinal: vec!["size=small,med,big".parse().unwrap()],
        ..Encodings::default()
    };
    let data = load_stream(&[path.clone()], "label", &enc).unwrap();
    assert!(!data.spec().features[0].is_nominal());
    let sizes: Vec<f64> = (0..data.len()).map(|r| data.row(r)[0]).collect();
    assert_eq!(sizes[..2], [0.0, 2.0]);
    assert!(sizes[2].is_nan(), "an empty field stays missing");
    assert_eq!(sizes[3], 1.0);

    let enc = Encodings {
        ordinal: vec!["size=small,big".parse().unwrap()],
        ..Encodings::default()
    };
    match load_stream(&[path.clone()], "label", &enc).unwrap_err() {
        Error::UnlistedLevel {
            file,
            row,
            column,
            value,
            ..
        } => {
            assert_eq!((file, row), (path.clone(), 4));
            assert_eq!((column.as_str(), value.as_str()), ("size", "med"));
        }
        e => panic!("unexpected {e}"),
    }
    let enc = Encodings {
        ordinal: vec!["colour=red,blue".parse().unwrap()],
        ..Encodings::default()
    };
    let err = load_stream(&[path.clone()], "label", &enc).unwrap_err();
    assert!(
        matches!(&err, Error::MissingColumn { column, .. } if column == "colour"),
        "{err}"
    );
    for bad in ["size", "size=small", "=a,b", "size=a,,b", "size=a,b,a"] {
        assert!(
            bad.parse::<streamboost::columnar::Ordinal>().is_err(),
            "{bad}"
        );
    }
    fails_saying(
        streamboost()
            .args(["replay", "-q", "--ordinal", "size=small,big", "--input"])
            .arg(&path),
        &["data row 4, column `size`: `med` is not one of the declared levels"],
    );
    fails_saying(
        streamboost().args(["replay", "-q", "--ordinal", "size=small"]),
        &["--ordinal"],
    );
}

#[test]
fn a_repeated_column_name_is_refused_naming_both_positions() {
    let dir = tempfile::tempdir().unwrap();
    let car = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/car.csv"),
    )
    .unwrap();
    let (header, rows) = car.split_once('\n').unwrap();
    assert!(
        header.starts_with("buying,") && header.contains(",safety,"),
        "{header}"
    );
    // A second `buying` where `safety` was, and a second `label`.
    for (name, header, column, first, second) in [
        (
            "twice.csv",
            header.replace("safety", "buying"),
            "buying",
            1,
            6,
        ),
        (
            "labels.csv",
            header.replace("buying", "label"),
            "label",
            1,
            7,
        ),
    ] {
        let path = write(&dir, name, &format!("{header}\n{rows}"));
        let err = load_stream(&[path.clone()], "label", &Encodings::default()).unwrap_err();
        assert!(
            matches!(&err, Error::DuplicateColumn { column: c, first: f, second: s, .. }
                if c == column && *f == first && *s == second),
            "{err}"
        );
        streamboost()
            .args(["replay"])
            .flag("--input", &path)
            .assert()
            .failure()
            .stderr(predicate::str::contains(format!(
                "columns {first} and {second} are both named `{column}`"
            )));
    }
}

#[test]
fn a_checkpoint_path_that_cannot_be_written_fails_before_the_first_row() {
    let dir = tempfile::tempdir().unwrap();
    let save = dir.path().join("nodir").join("ck.parquet");
    let predictions = dir.path().join("p.csv");
    streamboost()
        .args(["replay", "-q", "--algo", "hoeffding"])
        .flag("--save", &save)
        .flag("--predictions", &predictions)
        .assert()
        .failure()
        .stderr(
            predicate::str::contains("ck.parquet")
                .and(predicate::str::contains("directory does not exist")),
        )
        // Refused up front: nothing was replayed, so no summary was printed.
        .stdout(predicate::str::contains("accuracy").not());
    fails_saying(
        streamboost()
            .args(["replay", "-q", "--algo", "hoeffding", "--save"])
            .arg(dir.path()),
        &["it is a directory"],
    );
}

#[test]
fn a_stray_word_in_a_numeric_column_is_refused_not_read_as_categories() {
    let dir = tempfile::tempdir().unwrap();
    for stray in ["oops", "1e308*10"] {
        let mut csv = String::from("x,y,label\n");
        for i in 0..400 {
            let x = if i == 300 {
                stray.to_string()
            } else {
                format!("{}", i % 7)
            };
            csv += &format!("{x},{},{}\n", i % 3, if i % 2 == 0 { "a" } else { "b" });
        }
        let path = write(&dir, "stray.csv", &csv);
        let err = load_stream(&[path.clone()], "label", &Encodings::default()).unwrap_err();
        assert!(
            matches!(&err, Error::MalformedRow { line: Some(302), column: Some(c), message, .. }
                if c == "x" && message.contains(stray)),
            "{err}"
        );
        fails_saying(
            streamboost()
                .args(["replay", "-q", "--algo", "hoeffding", "--input"])
                .arg(&path),
            &["line 302", "--nominal x"],
        );
        // Declared nominal, the column is read as categories.
        let nominal = Encodings {
            nominal: vec!["x".into()],
            ..Encodings::default()
        };
        let data = load_stream(&[path], "label", &nominal).unwrap();
        assert!(data.spec().features[0].is_nominal());
    }
    // A column of categories, some of which look like numbers, stays nominal (car's doors:
    // 2, 3, 4 and 5more).
    let car = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/car.csv");
    load_stream(&[car], "label", &Encodings::default()).unwrap();
}

/// After `--load`, a label outside the checkpoint's classes is a new class: the model
/// grows at its first row and learns it; predictions name it as written, with a
/// probability column of its own, and the checkpoint saved after lists it.
#[test]
fn after_load_a_new_label_is_learnt_as_a_new_class() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let car = std::fs::read_to_string(root.join("data/car.csv")).unwrap();
    let mut lines = car.lines();
    let mut csv = format!("{}\n", lines.next().unwrap());
    for (i, line) in lines.skip(1000).take(20).enumerate() {
        let (features, _) = line.rsplit_once(',').unwrap();
        let label = if i % 4 == 0 { "excellent" } else { "unacc" };
        csv += &format!("{features},{label}\n");
    }
    let input = write(&dir, "rest.csv", &csv);
    let (predictions, saved) = (dir.path().join("p.csv"), dir.path().join("grown.parquet"));
    replay_loaded(
        root.join("tests/fixtures/checkpoint_v1_oza.parquet"),
        &input,
    )
    .flag("--predictions", &predictions)
    .flag("--save", &saved)
    .assert()
    .success()
    .stderr(predicate::str::contains(
        "classes  1 new to the model, added as their first rows arrive: [excellent]",
    ));
    let written = std::fs::read_to_string(&predictions).unwrap();
    let header = written.lines().next().unwrap();
    assert!(header.ends_with(",p_excellent"), "{header}");
    let labels: Vec<&str> = written
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(1).unwrap())
        .collect();
    assert_eq!(labels.iter().filter(|&&l| l == "excellent").count(), 5);
    assert_eq!(labels.iter().filter(|&&l| l == "unacc").count(), 15);
    let (model, stream) = streamboost::checkpoint::load(&saved).unwrap();
    use streamboost::Classifier;
    assert_eq!(model.n_classes(), 5);
    assert_eq!(stream.spec.classes.names()[4], "excellent");
    assert_eq!(
        stream.stats.rows_learnt,
        1000 + 20,
        "every labelled row is learnt"
    );
}
