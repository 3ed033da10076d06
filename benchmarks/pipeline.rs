// A harness-free benchmark: `main` is the whole of it.
#![allow(missing_docs)]

//! Whether pipelining a booster's learners over two threads pays on this machine. In an
//! online booster, learner `i` needs only the votes of learners `< i` on the same row, so
//! learners `0..N/2` can take row `t + 1` while learners `N/2..N` take row `t`. This
//! measures that schedule on the booster's dominant cost, its weak learners: `N` trees
//! (the multiclass ensembles' default members), each learning a row with a weight that
//! depends on the votes before it (Adaboost.OL's `sigmoid(−margin)`) and voting, on one
//! thread and as two stages joined by a channel. Both schedules compute the same thing
//! (checked: same final votes on every row); the ratio of their times is what pipelining
//! would give a booster whose own bookkeeping is small beside its trees.
//!
//! `cargo bench --bench pipeline --features columnar [-- ROWS]` (ROWS caps each set).

use std::sync::mpsc::sync_channel;
use std::time::Instant;

use streamboost::core::Dataset;
use streamboost::core::math::{argmax, sigmoid};
use streamboost::weak::hoeffding::Preset;
use streamboost::weak::{HoeffdingTree, HoeffdingTreeConfig};
use streamboost::{Classifier, Config};

#[path = "common.rs"]
mod common;
use common::{row_cap, seeded_order, shared_sets};

/// A row's state between stages: its index and the votes of the learners so far per class.
type Partial = (usize, Vec<f64>);

/// Learners `trees` take row `x` (label `y`) in order, each with weight `sigmoid(−m)` for
/// the margin `m` of the votes before it, adding their votes to `votes`.
fn stage(trees: &mut [HoeffdingTree], x: &[f64], y: Option<usize>, votes: &mut [f64]) {
    let mut p = vec![0.0; votes.len()];
    for tree in trees {
        let weight = match y {
            Some(y) => {
                let rival = (0..votes.len())
                    .filter(|&l| l != y)
                    .map(|l| votes[l])
                    .fold(f64::MIN, f64::max);
                sigmoid(-(votes[y] - rival))
            }
            None => 0.0,
        };
        tree.learn_predict(x, y, weight, &mut p);
        votes[argmax(&p)] += 1.0;
    }
}

fn trees(data: &Dataset, n: usize) -> Vec<HoeffdingTree> {
    let config = HoeffdingTreeConfig::preset(Preset::JgtPaperNba);
    (0..n)
        .map(|i| config.build(data.spec(), i as u64 + 1).expect("builds"))
        .collect()
}

/// Seconds of one pass over `order` with every learner on this thread; the final votes.
fn one_thread(data: &Dataset, order: &[usize], n: usize) -> (f64, Vec<Vec<f64>>) {
    let mut all = trees(data, n);
    let k = data.spec().n_classes();
    let start = Instant::now();
    let votes = order
        .iter()
        .map(|&r| {
            let mut votes = vec![0.0; k];
            stage(&mut all, data.row(r), data.label(r), &mut votes);
            votes
        })
        .collect();
    (start.elapsed().as_secs_f64(), votes)
}

/// Seconds of the same pass with learners `0..n/2` and `n/2..n` on two threads.
fn two_stages(data: &Dataset, order: &[usize], n: usize) -> (f64, Vec<Vec<f64>>) {
    let mut first = trees(data, n);
    let mut second = first.split_off(n / 2);
    let k = data.spec().n_classes();
    let start = Instant::now();
    let votes = std::thread::scope(|scope| {
        let (send, receive) = sync_channel::<Partial>(256);
        scope.spawn(move || {
            for &r in order {
                let mut votes = vec![0.0; k];
                stage(&mut first, data.row(r), data.label(r), &mut votes);
                send.send((r, votes)).expect("the second stage is there");
            }
        });
        let finish = scope.spawn(move || {
            (receive.iter())
                .map(|(r, mut votes)| {
                    stage(&mut second, data.row(r), data.label(r), &mut votes);
                    votes
                })
                .collect::<Vec<_>>()
        });
        finish.join().expect("the second stage ends")
    });
    (start.elapsed().as_secs_f64(), votes)
}

fn main() {
    let cap = row_cap();
    let n = 100;
    println!("| data | rows | one thread, rows/s | two stages, rows/s | speed-up |");
    println!("|---|---|---|---|---|");
    for (name, data) in shared_sets(&["car", "nursery", "pendigits", "optdigits"]) {
        let rows = data.len().min(cap);
        let order = seeded_order(data.len(), rows);
        let (one, expected) = one_thread(&data, &order, n);
        let (two, got) = two_stages(&data, &order, n);
        assert_eq!(got, expected, "{name}: the two schedules disagree");
        println!(
            "| {name} | {rows} | {:.0} | {:.0} | {:.2}× |",
            rows as f64 / one,
            rows as f64 / two,
            one / two
        );
    }
}
