//! The record-batch operator on the bundled sample: the same predictions and probabilities,
//! row for row, as the prequential driver calling the model directly.

use std::path::PathBuf;

use arrow::array::AsArray;
use arrow::datatypes::Float64Type;
use streamboost::Config;
use streamboost::boost::WeightScale;
use streamboost::boost::multiclass::AdaBoostOlmConfig;
use streamboost::columnar::{BoostOperator, Encodings, load_stream, read_table};
use streamboost::eval::Prequential;
use streamboost::weak::HoeffdingTreeConfig;

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
    let mut op = BoostOperator::new(
        model,
        data.spec(),
        table.schema.clone(),
        "label",
        &Encodings::default(),
        &path,
    )
    .unwrap();
    let classes = data.spec().classes.names();
    let mut row = 0;
    for batch in &table.batches {
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
            let predicted = out
                .column_by_name("predicted_label")
                .unwrap()
                .as_string::<i32>();
            let probs = out
                .column_by_name("predicted_label_probs")
                .unwrap()
                .as_fixed_size_list();
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
