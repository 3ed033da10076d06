//! AdaBoost.MM, the OS strategy (edge `γ`) and AdaBoost.M1 (SAMME) over [MS]'s greedy
//! cost-sensitive trees on a logged table with a train/test split by row: the first `TRAIN`
//! rows train, the rest test. Prints the test accuracy after 1, 10, 50 and `ROUNDS` rounds,
//! the training error (against AdaBoost.MM's bound), and the training time.
//!
//! ```sh
//! cargo run --release --example batch_boosting -- ../shared/datasets/satimage/data.csv 4435 [ROUNDS=100] [LEAVES=8] [GAMMA=0.1]
//! ```

use std::path::PathBuf;
use std::time::Instant;

use streamboost::boost::batch::{
    AdaBoostMmConfig, GreedyTreeConfig, Hypothesis, OsConfig, Reduction, WeightedVote, train,
    train_os, train_samme,
};
use streamboost::columnar::{Encodings, load_stream};
use streamboost::core::Dataset;
use streamboost::weak::HoeffdingTreeConfig;

fn main() -> streamboost::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: batch_boosting DATA.csv TRAIN_ROWS [ROUNDS] [LEAVES] [GAMMA]";
    let path = PathBuf::from(args.first().expect(usage));
    let train_rows: usize = args.get(1).expect(usage).parse().expect(usage);
    let rounds: usize = args.get(2).map_or(100, |s| s.parse().expect(usage));
    let leaves: usize = args.get(3).map_or(8, |s| s.parse().expect(usage));
    let gamma: f64 = args.get(4).map_or(0.1, |s| s.parse().expect(usage));
    let all = load_stream(std::slice::from_ref(&path), "label", &Encodings::default())?;
    let (training, test) = (all.slice(0..train_rows), all.slice(train_rows..all.len()));
    let config = AdaBoostMmConfig {
        rounds,
        ..AdaBoostMmConfig::default()
    };
    let tree = GreedyTreeConfig { max_leaves: leaves };
    println!(
        "{}: {} training rows, {} test rows, {leaves}-leaf greedy trees",
        path.display(),
        training.len(),
        test.len()
    );
    let os = format!("OS (γ = {gamma})");
    for name in ["AdaBoost.MM", os.as_str(), "AdaBoost.M1 (SAMME)"] {
        let start = Instant::now();
        let (model, train_error, bound) = match name {
            "AdaBoost.MM" => {
                let (model, report) = train(&config, &training, &tree)?;
                let last = report.last().expect("a round");
                (model, last.train_error, last.loss_bound)
            }
            "AdaBoost.M1 (SAMME)" => {
                let (model, report) = train_samme(&config, &training, &tree)?;
                (model, report.last().expect("a round").train_error, None)
            }
            _ => {
                let (model, report) = train_os(&OsConfig { rounds, gamma }, &training, &tree)?;
                (model, report.last().expect("a round").train_error, None)
            }
        };
        let seconds = start.elapsed().as_secs_f64();
        let at = |t: usize| accuracy(&model, t.min(model.hypotheses().len()), &test);
        let bound = bound.map_or(String::new(), |b| format!(", loss bound {b:.4}"));
        println!(
            "{name}: test accuracy after 1 / 10 / 50 / {} rounds: {:.4} / {:.4} / {:.4} / {:.4}; \
             training error {:.4}{bound}; {} rounds in {seconds:.2} s",
            rounds,
            at(1),
            at(10),
            at(50),
            at(rounds),
            train_error,
            model.hypotheses().len(),
        );
    }
    // Any online weighted learner through the reduction of spec §1.4: a default Hoeffding
    // tree, one pass over the rows per round.
    let start = Instant::now();
    let reduction = Reduction {
        config: HoeffdingTreeConfig::default(),
        seed: 1,
    };
    let (model, report) = train(&config, &training, &reduction)?;
    let seconds = start.elapsed().as_secs_f64();
    let at = |t: usize| accuracy(&model, t.min(model.hypotheses().len()), &test);
    println!(
        "AdaBoost.MM over Hoeffding trees (reduction): test accuracy after 1 / 10 / 50 / {} \
         rounds: {:.4} / {:.4} / {:.4} / {:.4}; training error {:.4}; {} rounds in {seconds:.2} s",
        rounds,
        at(1),
        at(10),
        at(50),
        at(rounds),
        report.last().expect("a round").train_error,
        model.hypotheses().len(),
    );
    Ok(())
}

/// Test accuracy of the vote of the first `t` rounds.
fn accuracy<H: Hypothesis>(model: &WeightedVote<H>, t: usize, test: &Dataset) -> f64 {
    let k = test.spec().n_classes();
    let mut scores = vec![0.0; k];
    let right = (0..test.len())
        .filter(|&i| {
            scores.fill(0.0);
            for (h, alpha) in &model.hypotheses()[..t] {
                scores[h.predict(test.row(i))] += alpha;
            }
            Some(streamboost::core::math::argmax(&scores)) == test.label(i)
        })
        .count();
    right as f64 / test.len() as f64
}
