//! The trees of the batch boosters, grown best first over a [`SortedColumns`]: \[MS\]'s "Greedy"
//! cost-sensitive tree and AdaBoost.MH's stumps are the same growth under two leaf rules.
//!
//! Every row carries a vector of statistics (its costs per label, or its weights per label
//! and sign); a leaf's statistics are its rows' sums, and a `LeafRule` turns them into the
//! leaf's cost (additive over leaves, lower is better) and its value. A split of a leaf is
//! chosen to lower the summed cost most; the leaf whose best split lowers it most is split
//! next, until `max_leaves` leaves or no split lowers the cost.
//!
//! Splits are binary: `x_j ≤ θ` for a numeric feature (θ halfway between consecutive
//! distinct values), `x_j = c` against the other categories for a nominal one. A row whose
//! split feature is missing stops at the split, as the Hoeffding tree's default
//! (`missing: stop-at-split`) does: in training it stays at the node, whose value is made
//! from the rows that stayed (or from all its rows if none did), and a split's cost counts
//! those rows as a leaf of their own.
//!
//! Each round scans each feature's presorted column once per batch of new leaves (two at a
//! time), so growing a tree of `L` leaves costs `O(L · d · m · w)` for `d` features, `m`
//! rows and `w` statistics a row, and no sorting.

use serde::{Deserialize, Serialize};

use super::CostMatrix;
use super::columns::{Column, MISSING, SortedColumns};
use crate::core::{is_present, nominal_code};

/// How a leaf's summed statistics give its cost and its value.
pub(crate) trait LeafRule {
    /// What a leaf holds.
    type Value;

    /// The cost of a leaf whose rows' statistics sum to `sums` (lower is better).
    fn cost(&self, sums: &[f64]) -> f64;

    /// The value of such a leaf.
    fn value(&self, sums: &[f64]) -> Self::Value;
}

/// A binary tree whose nodes hold values of type `V`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tree<V> {
    nodes: Vec<Node<V>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Node<V> {
    /// A leaf's value; at a split, the value of the rows missing the split feature.
    value: V,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    split: Option<Split>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Split {
    feature: usize,
    test: Test,
    /// Children: where the test holds, and where it does not.
    yes: usize,
    no: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Test {
    AtMost(f64),
    Is(usize),
}

impl Test {
    /// Whether value `v` passes, `None` if it is missing.
    pub(crate) fn holds(self, v: f64) -> Option<bool> {
        match self {
            Test::AtMost(theta) => is_present(v).then_some(v <= theta),
            Test::Is(c) => nominal_code(v).map(|code| code == c),
        }
    }
}

impl<V> Tree<V> {
    /// The value of the node where `x` stops.
    pub fn value(&self, x: &[f64]) -> &V {
        let mut node = &self.nodes[0];
        while let Some(split) = &node.split {
            node = match split.test.holds(x[split.feature]) {
                Some(true) => &self.nodes[split.yes],
                Some(false) => &self.nodes[split.no],
                None => break,
            };
        }
        &node.value
    }

    /// Leaves.
    pub fn n_leaves(&self) -> usize {
        self.nodes.iter().filter(|n| n.split.is_none()).count()
    }

    /// The feature each split tests, in node order.
    pub fn split_features(&self) -> impl Iterator<Item = usize> + '_ {
        self.nodes
            .iter()
            .filter_map(|n| n.split.as_ref().map(|s| s.feature))
    }
}

/// A leaf's best split.
#[derive(Debug, Clone, Copy)]
struct Found {
    /// How much the summed cost drops.
    gain: f64,
    feature: usize,
    test: Test,
}

/// Grows a tree of at most `max_leaves` (≥ 1) leaves over the rows of `table`, row `j`
/// carrying statistics `stats.row(j)`.
pub(crate) fn grow<R: LeafRule>(
    table: &SortedColumns, stats: &CostMatrix, rule: &R, max_leaves: usize,
) -> Tree<R::Value> {
    let (m, w) = (table.len(), stats.k());
    let mut node_of = vec![0u32; m];
    // Per node: the sums and count of the rows that reached it.
    let mut reached = vec![vec![0.0; w]];
    let mut counts = vec![m];
    for j in 0..m {
        add(&mut reached[0], stats.row(j));
    }
    let mut splits: Vec<Option<Split>> = vec![None];
    let mut leaves: Vec<(usize, Option<Found>)> = Vec::new();
    let mut new = vec![0usize];
    let mut n_leaves = 1;
    loop {
        let found = best_splits(table, stats, rule, &node_of, &new, &reached, &counts);
        leaves.extend(new.iter().copied().zip(found));
        if n_leaves >= max_leaves {
            break;
        }
        // The leaf whose best split lowers the cost most (the earliest on a tie).
        let Some(at) = (0..leaves.len())
            .filter(|&i| leaves[i].1.is_some_and(|f| f.gain > 1e-12))
            .max_by(|&a, &b| {
                let gain = |i: usize| leaves[i].1.map_or(0.0, |f| f.gain);
                gain(a).total_cmp(&gain(b)).then(b.cmp(&a))
            })
        else {
            break;
        };
        let (node, found) = leaves.remove(at);
        let found = found.expect("filtered above");
        let (yes, no) = (splits.len(), splits.len() + 1);
        splits.extend([None, None]);
        reached.extend([vec![0.0; w], vec![0.0; w]]);
        counts.extend([0, 0]);
        for (j, at) in node_of.iter_mut().enumerate() {
            if *at as usize != node {
                continue;
            }
            let child = match found.test.holds(table.row(j)[found.feature]) {
                Some(true) => yes,
                Some(false) => no,
                None => continue,
            };
            *at = child as u32;
            add(&mut reached[child], stats.row(j));
            counts[child] += 1;
        }
        splits[node] = Some(Split {
            feature: found.feature,
            test: found.test,
            yes,
            no,
        });
        n_leaves += 1;
        new = vec![yes, no];
    }
    // Each node's value, from the rows that stopped there (all of a leaf's; a split's rows
    // missing its feature), or, at a split where none stopped, from all that reached it.
    let mut stopped = vec![vec![0.0; w]; splits.len()];
    let mut stopped_counts = vec![0usize; splits.len()];
    for (j, &node) in node_of.iter().enumerate() {
        add(&mut stopped[node as usize], stats.row(j));
        stopped_counts[node as usize] += 1;
    }
    let nodes = splits
        .into_iter()
        .enumerate()
        .map(|(i, split)| Node {
            value: rule.value(if stopped_counts[i] > 0 {
                &stopped[i]
            } else {
                &reached[i]
            }),
            split,
        })
        .collect();
    Tree { nodes }
}

fn add(sums: &mut [f64], row: &[f64]) {
    sums.iter_mut().zip(row).for_each(|(s, x)| *s += x);
}

/// The best split of each leaf in `leaves` (node ids), in one scan of each column.
fn best_splits<R: LeafRule>(
    table: &SortedColumns, stats: &CostMatrix, rule: &R, node_of: &[u32], leaves: &[usize],
    reached: &[Vec<f64>], counts: &[usize],
) -> Vec<Option<Found>> {
    const NONE: usize = usize::MAX;
    let w = stats.k();
    let n = leaves.len();
    let mut slot_of = vec![NONE; reached.len()];
    for (s, &leaf) in leaves.iter().enumerate() {
        slot_of[leaf] = s;
    }
    let slot = |j: usize| slot_of[node_of[j] as usize];
    let before: Vec<f64> = leaves.iter().map(|&l| rule.cost(&reached[l])).collect();
    let mut best: Vec<Option<Found>> = vec![None; n];
    let mut consider = |s: usize, after: f64, feature: usize, test: Test| {
        let gain = before[s] - after;
        if best[s].is_none_or(|f| gain > f.gain) {
            best[s] = Some(Found {
                gain,
                feature,
                test,
            });
        }
    };
    // Per slot: sums of the rows missing the feature, and how many.
    let mut missing = vec![vec![0.0; w]; n];
    let mut missing_counts = vec![0usize; n];
    let mut present = vec![vec![0.0; w]; n];
    let mut rest = vec![0.0; w];
    for (feature, column) in table.columns().iter().enumerate() {
        missing.iter_mut().for_each(|s| s.fill(0.0));
        missing_counts.fill(0);
        match column {
            Column::Numeric {
                sorted,
                missing: gone,
            } => {
                for &j in gone {
                    let s = slot(j as usize);
                    if s != NONE {
                        add(&mut missing[s], stats.row(j as usize));
                        missing_counts[s] += 1;
                    }
                }
                let stuck = stuck_costs(rule, &missing, &missing_counts);
                let mut left = vec![vec![0.0; w]; n];
                let mut previous: Vec<Option<f64>> = vec![None; n];
                for &(v, j) in sorted {
                    let s = slot(j as usize);
                    if s == NONE {
                        continue;
                    }
                    if let Some(p) = previous[s]
                        && v != p
                    {
                        for ((r, &t), (&l, &x)) in rest
                            .iter_mut()
                            .zip(&reached[leaves[s]])
                            .zip(left[s].iter().zip(&missing[s]))
                        {
                            *r = t - x - l;
                        }
                        let after = rule.cost(&left[s]) + rule.cost(&rest) + stuck[s];
                        // Halfway, unless rounding puts it on `v`.
                        let theta = p + (v - p) / 2.0;
                        let theta = if theta < v { theta } else { p };
                        consider(s, after, feature, Test::AtMost(theta));
                    }
                    add(&mut left[s], stats.row(j as usize));
                    previous[s] = Some(v);
                }
            }
            Column::Nominal { codes, categories } => {
                let mut by_category = vec![vec![0.0; categories * w]; n];
                let mut seen = vec![vec![0usize; *categories]; n];
                for (j, &c) in codes.iter().enumerate() {
                    let s = slot(j);
                    if s == NONE {
                        continue;
                    }
                    if c == MISSING {
                        add(&mut missing[s], stats.row(j));
                        missing_counts[s] += 1;
                    } else {
                        let c = c as usize;
                        add(&mut by_category[s][c * w..(c + 1) * w], stats.row(j));
                        seen[s][c] += 1;
                    }
                }
                let stuck = stuck_costs(rule, &missing, &missing_counts);
                for s in 0..n {
                    if seen[s].iter().filter(|&&c| c > 0).count() < 2 {
                        continue;
                    }
                    for (r, (&t, &x)) in present[s]
                        .iter_mut()
                        .zip(reached[leaves[s]].iter().zip(&missing[s]))
                    {
                        *r = t - x;
                    }
                    for c in (0..*categories).filter(|&c| seen[s][c] > 0) {
                        let sums = &by_category[s][c * w..(c + 1) * w];
                        for ((r, &p), &x) in rest.iter_mut().zip(&present[s]).zip(sums) {
                            *r = p - x;
                        }
                        let after = rule.cost(sums) + rule.cost(&rest) + stuck[s];
                        consider(s, after, feature, Test::Is(c));
                    }
                }
            }
        }
    }
    // A leaf of fewer than two rows has no split.
    for (s, &leaf) in leaves.iter().enumerate() {
        if counts[leaf] < 2 {
            best[s] = None;
        }
    }
    best
}

/// The cost of each slot's rows that miss the feature, as a leaf of their own.
fn stuck_costs<R: LeafRule>(rule: &R, missing: &[Vec<f64>], counts: &[usize]) -> Vec<f64> {
    missing
        .iter()
        .zip(counts)
        .map(|(sums, &c)| if c > 0 { rule.cost(sums) } else { 0.0 })
        .collect()
}
