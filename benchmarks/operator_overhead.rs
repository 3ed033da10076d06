// criterion_group! and criterion_main! generate undocumented items.
#![allow(missing_docs)]

//! Operator overhead: the same model, the same rows, scored then learnt (a) by calling the
//! model directly on pre-encoded rows and (b) through `Cursor` on record batches
//! (encoding, label lookup, output columns). The ratio b/a is the operator's overhead.
//!
//! `cargo bench --bench operator_overhead` (nursery from `$STREAMBOOST_DATASETS`, else the
//! bundled car sample).

use std::path::PathBuf;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use streamboost::boost::WeightScale;
use streamboost::boost::multiclass::AdaBoostOlmConfig;
use streamboost::columnar::{Encodings, load_stream, read_table};
use streamboost::runtime::Cursor;
use streamboost::weak::HoeffdingTreeConfig;
use streamboost::{Classifier, Config};

fn input() -> PathBuf {
    let shared = std::env::var_os("STREAMBOOST_DATASETS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/datasets"));
    let nursery = shared.join("nursery/data.csv");
    if nursery.exists() {
        nursery
    } else {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/car.csv")
    }
}

fn bench(c: &mut Criterion) {
    let path = input();
    let data = load_stream(std::slice::from_ref(&path), "label", &Encodings::default()).unwrap();
    let table = read_table(&path).unwrap();
    let batches = table.batches_of(8192).unwrap();
    let config = AdaBoostOlmConfig {
        n_learners: 100,
        weight_scale: WeightScale::UniformRandom(5.0, 200.0),
        ..AdaBoostOlmConfig::new(HoeffdingTreeConfig::jgt_paper())
    };
    let fresh = config.build(data.spec(), 1).unwrap();
    let k = data.spec().n_classes();

    let mut group = c.benchmark_group(format!(
        "operator_overhead/{}",
        path.parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_string_lossy()
    ));
    group.sample_size(10);
    group.bench_function("direct", |b| {
        b.iter_batched(
            || fresh.clone(),
            |mut model| {
                let mut p = vec![0.0; k];
                let mut correct = 0usize;
                for i in 0..data.len() {
                    let y = data.label(i);
                    correct +=
                        usize::from(Some(model.learn_predict(data.row(i), y, 1.0, &mut p)) == y);
                }
                correct
            },
            BatchSize::LargeInput,
        )
    });
    group.bench_function("operator", |b| {
        b.iter_batched(
            || {
                Cursor::new(
                    fresh.clone(),
                    data.spec(),
                    table.schema.clone(),
                    "label",
                    &Encodings::default(),
                    &path,
                )
                .unwrap()
            },
            |mut op| {
                let mut rows = 0;
                for batch in &batches {
                    rows += op.process(batch).unwrap().num_rows();
                }
                rows
            },
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
