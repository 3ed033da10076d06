//! AdaBoost.MM over any online weighted learner, through the `AllLabelsReward` reduction of
//! spec §1.4: a default Hoeffding tree (one pass over the rows per round) as the
//! cost-sensitive weak learner, on a logged table with a train/test split by row (the first
//! `TRAIN` rows train, the rest test). Prints the test accuracy after 1, 10, 50 and `ROUNDS`
//! rounds, the training error against AdaBoost.MM's bound, and the training time.
//! (`streamboost train` runs the batch boosters over greedy trees and stumps.)
//!
//! ```sh
//! cargo run --release --example batch_boosting -- ../shared/datasets/satimage/data.csv 4435 [ROUNDS=100]
//! ```

use std::path::PathBuf;
use std::time::Instant;

use streamboost::boost::batch::{AdaBoostMmConfig, Reduction, SortedColumns, WeightedVote, train};
use streamboost::columnar::{Encodings, load_stream};
use streamboost::core::Dataset;
use streamboost::weak::HoeffdingTreeConfig;

fn main() -> streamboost::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: batch_boosting DATA.csv TRAIN_ROWS [ROUNDS]";
    let path = PathBuf::from(args.first().expect(usage));
    let train_rows: usize = args.get(1).expect(usage).parse().expect(usage);
    let rounds: usize = args.get(2).map_or(100, |s| s.parse().expect(usage));
    let all = load_stream(std::slice::from_ref(&path), "label", &Encodings::default())?;
    let (training, test) = (all.slice(0..train_rows), all.slice(train_rows..all.len()));
    let config = AdaBoostMmConfig {
        rounds,
        ..AdaBoostMmConfig::default()
    };
    let start = Instant::now();
    let reduction = Reduction {
        config: HoeffdingTreeConfig::default(),
        seed: 1,
    };
    let table = SortedColumns::new(&training)?;
    let (model, report) = train(&config, &table, &reduction, &mut |_| {})?;
    let seconds = start.elapsed().as_secs_f64();
    let last = report.last().expect("a round");
    let at = |t: usize| accuracy(&model, t, &test);
    println!(
        "{}: AdaBoost.MM over Hoeffding trees (reduction), {} training rows, {} test rows: \
         test accuracy after 1 / 10 / 50 / {rounds} rounds: {:.4} / {:.4} / {:.4} / {:.4}; \
         training error {:.4} (bound {:.4}); {} rounds in {seconds:.2} s",
        path.display(),
        training.len(),
        test.len(),
        at(1),
        at(10),
        at(50),
        at(rounds),
        last.train_error,
        last.loss_bound.unwrap_or(f64::NAN),
        model.hypotheses().len(),
    );
    Ok(())
}

/// Test accuracy of the vote of the first `t` rounds.
fn accuracy<H: streamboost::boost::batch::Hypothesis>(
    model: &WeightedVote<H>, t: usize, test: &Dataset,
) -> f64 {
    let mut scores = vec![0.0; test.spec().n_classes()];
    let right = (0..test.len())
        .filter(|&i| {
            model.scores_after(t, test.row(i), &mut scores);
            Some(streamboost::core::math::argmax(&scores)) == test.label(i)
        })
        .count();
    right as f64 / test.len() as f64
}
