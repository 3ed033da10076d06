//! \[MS\]'s "Greedy" cost-sensitive decision tree: grown best first to at most `max_leaves`
//! leaves; each leaf predicts `argmin_l Σ_{i∈leaf} C(i, l)`, and each split is the one that
//! lowers the summed leaf costs most.
//!
//! Splits are binary: `x_j ≤ θ` for a numeric feature (θ halfway between consecutive
//! distinct values), `x_j = c` against the other categories for a nominal one. A row whose
//! split feature is missing stops at the split, as the Hoeffding tree's default
//! (`missing: stop-at-split`) does: it is predicted by that node's own label, and in
//! training it stays at the node, costing that label's cost, rather than joining a child.

use serde::{Deserialize, Serialize};

use super::{CostMatrix, CostSensitive, Hypothesis};
use crate::core::{ClassId, Dataset, FeatureKind, is_present, nominal_code};
use crate::{Error, Result};

/// The tree's parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GreedyTreeConfig {
    /// Leaves at most (2 is a stump).
    pub max_leaves: usize,
}

impl Default for GreedyTreeConfig {
    fn default() -> Self {
        GreedyTreeConfig { max_leaves: 8 }
    }
}

/// A trained tree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GreedyTree {
    nodes: Vec<Node>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Node {
    /// `argmin_l` of the summed costs of the rows that reached the node.
    label: ClassId,
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
enum Test {
    AtMost(f64),
    Is(usize),
}

impl Test {
    /// Whether value `v` passes, `None` if it is missing.
    fn holds(self, v: f64) -> Option<bool> {
        match self {
            Test::AtMost(theta) => is_present(v).then_some(v <= theta),
            Test::Is(c) => nominal_code(v).map(|code| code == c),
        }
    }
}

impl Hypothesis for GreedyTree {
    fn predict(&self, x: &[f64]) -> ClassId {
        let mut node = &self.nodes[0];
        while let Some(split) = &node.split {
            node = match split.test.holds(x[split.feature]) {
                Some(true) => &self.nodes[split.yes],
                Some(false) => &self.nodes[split.no],
                None => return node.label,
            };
        }
        node.label
    }
}

impl GreedyTree {
    /// Leaves.
    pub fn n_leaves(&self) -> usize {
        self.nodes.iter().filter(|n| n.split.is_none()).count()
    }
}

/// A candidate split of a leaf and the rows it sends each way.
struct Candidate {
    /// How much the summed costs drop.
    gain: f64,
    feature: usize,
    test: Test,
    yes: Vec<usize>,
    no: Vec<usize>,
}

impl CostSensitive for GreedyTreeConfig {
    type Hypothesis = GreedyTree;

    fn fit(&self, data: &Dataset, rows: &[usize], costs: &CostMatrix) -> Result<GreedyTree> {
        if self.max_leaves == 0 {
            return Err(Error::config("max_leaves", "must be >= 1"));
        }
        // Positions in `rows` (and `costs`) of the rows at each node.
        let all: Vec<usize> = (0..rows.len()).collect();
        let mut nodes = vec![Node {
            label: best_label(costs, &all).0,
            split: None,
        }];
        let mut leaves = vec![(0, best_split(data, rows, costs, &all))];
        while nodes.iter().filter(|n| n.split.is_none()).count() < self.max_leaves {
            // The leaf whose best split lowers the costs most.
            let Some(at) = (0..leaves.len())
                .filter(|&j| leaves[j].1.as_ref().is_some_and(|c| c.gain > 1e-12))
                .max_by(|&a, &b| {
                    let gain = |j: usize| leaves[j].1.as_ref().map_or(0.0, |c| c.gain);
                    gain(a).total_cmp(&gain(b)).then(b.cmp(&a))
                })
            else {
                break;
            };
            let (node, candidate) = leaves.swap_remove(at);
            let c = candidate.expect("filtered above");
            let (yes, no) = (nodes.len(), nodes.len() + 1);
            for part in [&c.yes, &c.no] {
                nodes.push(Node {
                    label: best_label(costs, part).0,
                    split: None,
                });
            }
            nodes[node].split = Some(Split {
                feature: c.feature,
                test: c.test,
                yes,
                no,
            });
            leaves.push((yes, best_split(data, rows, costs, &c.yes)));
            leaves.push((no, best_split(data, rows, costs, &c.no)));
        }
        Ok(GreedyTree { nodes })
    }
}

/// The label with the least summed cost over `at` (positions in `costs`), and that cost.
fn best_label(costs: &CostMatrix, at: &[usize]) -> (ClassId, f64) {
    let mut sums = vec![0.0; costs.k()];
    for &j in at {
        sums.iter_mut().zip(costs.row(j)).for_each(|(s, c)| *s += c);
    }
    min_of(&sums)
}

fn min_of(sums: &[f64]) -> (ClassId, f64) {
    let mut best = (0, sums[0]);
    for (l, &s) in sums.iter().enumerate().skip(1) {
        if s < best.1 {
            best = (l, s);
        }
    }
    best
}

/// The split of the rows at `at` that lowers their summed cost most, if any splits them.
fn best_split(
    data: &Dataset,
    rows: &[usize],
    costs: &CostMatrix,
    at: &[usize],
) -> Option<Candidate> {
    if at.len() < 2 {
        return None;
    }
    let k = costs.k();
    let (_, before) = best_label(costs, at);
    let mut best: Option<(f64, usize, Test)> = None;
    let mut consider = |gain: f64, feature: usize, test: Test| {
        if best.is_none_or(|(g, _, _)| gain > g) {
            best = Some((gain, feature, test));
        }
    };
    for (feature, spec) in data.spec().features.iter().enumerate() {
        let value = |j: usize| data.row(rows[j])[feature];
        // Rows missing the feature stay at the node: they cost the node's best label for
        // them alone (the node's label is set from all its rows, so this is a bound the
        // split cannot beat by sending them anywhere).
        let (present, missing): (Vec<usize>, Vec<usize>) =
            at.iter().partition(|&&j| match spec.kind {
                FeatureKind::Numeric => is_present(value(j)),
                FeatureKind::Nominal { .. } => nominal_code(value(j)).is_some(),
            });
        if present.len() < 2 {
            continue;
        }
        let stuck = if missing.is_empty() {
            0.0
        } else {
            best_label(costs, &missing).1
        };
        let mut total = vec![0.0; k];
        for &j in &present {
            total
                .iter_mut()
                .zip(costs.row(j))
                .for_each(|(t, c)| *t += c);
        }
        match spec.kind {
            FeatureKind::Numeric => {
                let mut sorted = present.clone();
                sorted.sort_by(|&a, &b| value(a).total_cmp(&value(b)));
                let mut left = vec![0.0; k];
                for w in 0..sorted.len() - 1 {
                    left.iter_mut()
                        .zip(costs.row(sorted[w]))
                        .for_each(|(s, c)| *s += c);
                    let (v, next) = (value(sorted[w]), value(sorted[w + 1]));
                    if v == next {
                        continue;
                    }
                    let right: Vec<f64> = total.iter().zip(&left).map(|(t, l)| t - l).collect();
                    let after = min_of(&left).1 + min_of(&right).1 + stuck;
                    consider(before - after, feature, Test::AtMost(v + (next - v) / 2.0));
                }
            }
            FeatureKind::Nominal { .. } => {
                let mut by_category: Vec<Vec<f64>> = Vec::new();
                for &j in &present {
                    let c = nominal_code(value(j)).expect("present");
                    if by_category.len() <= c {
                        by_category.resize(c + 1, Vec::new());
                    }
                    let sums = &mut by_category[c];
                    if sums.is_empty() {
                        sums.resize(k, 0.0);
                    }
                    sums.iter_mut().zip(costs.row(j)).for_each(|(s, x)| *s += x);
                }
                let seen = by_category.iter().filter(|s| !s.is_empty()).count();
                if seen < 2 {
                    continue;
                }
                for (c, sums) in by_category
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| !s.is_empty())
                {
                    let rest: Vec<f64> = total.iter().zip(sums).map(|(t, s)| t - s).collect();
                    let after = min_of(sums).1 + min_of(&rest).1 + stuck;
                    consider(before - after, feature, Test::Is(c));
                }
            }
        }
    }
    let (gain, feature, test) = best?;
    let (mut yes, mut no) = (Vec::new(), Vec::new());
    for &j in at {
        match test.holds(data.row(rows[j])[feature]) {
            Some(true) => yes.push(j),
            Some(false) => no.push(j),
            None => {}
        }
    }
    Some(Candidate {
        gain,
        feature,
        test,
        yes,
        no,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::{ClassSet, Feature, StreamSpec};

    fn data(rows: &[([f64; 2], usize)]) -> Dataset {
        let spec = StreamSpec::new(
            vec![
                Feature::numeric("x"),
                Feature::nominal("c", ["a", "b", "c"]),
            ],
            ClassSet::new(["0", "1", "2"]).unwrap(),
        );
        let mut d = Dataset::new(spec);
        for (x, y) in rows {
            d.push(x, Some(*y));
        }
        d
    }

    /// The 0/1 cost matrix of the labels: cost 1 for a wrong label, 0 for the right one
    /// (shifted by −1 on the right one, which changes no argmin).
    fn costs(d: &Dataset) -> CostMatrix {
        let mut c = CostMatrix::zeros(d.len(), 3);
        for i in 0..d.len() {
            let y = d.label(i).unwrap();
            for l in 0..3 {
                c.row_mut(i)[l] = if l == y { -2.0 } else { 1.0 };
            }
        }
        c
    }

    #[test]
    fn splits_where_the_costs_fall_most_and_stops_at_max_leaves() {
        // Label 0 below x = 5, label 1 above with category a, label 2 above otherwise.
        let rows: Vec<([f64; 2], usize)> = (0..30)
            .map(|i| {
                let x = i as f64;
                let c = (i % 3) as f64;
                let y = if x < 5.0 {
                    0
                } else if c == 0.0 {
                    1
                } else {
                    2
                };
                ([x, c], y)
            })
            .collect();
        let d = data(&rows);
        let all: Vec<usize> = (0..d.len()).collect();
        let c = costs(&d);
        let stump = GreedyTreeConfig { max_leaves: 2 }
            .fit(&d, &all, &c)
            .unwrap();
        assert_eq!(stump.n_leaves(), 2);
        let tree = GreedyTreeConfig { max_leaves: 8 }
            .fit(&d, &all, &c)
            .unwrap();
        assert!(tree.n_leaves() <= 8);
        for (x, y) in &rows {
            assert_eq!(tree.predict(x), *y, "{x:?}");
        }
        // Pure leaves are not split further: the tree stops short of its limit.
        assert!(tree.n_leaves() < 8, "{} leaves", tree.n_leaves());
    }

    #[test]
    fn a_missing_value_stops_at_the_split_with_the_node_label() {
        let rows = [
            ([1.0, 0.0], 0),
            ([2.0, 0.0], 0),
            ([8.0, 1.0], 1),
            ([9.0, 1.0], 1),
            ([9.5, 1.0], 1),
        ];
        let d = data(&rows);
        let all: Vec<usize> = (0..d.len()).collect();
        let tree = GreedyTreeConfig { max_leaves: 2 }
            .fit(&d, &all, &costs(&d))
            .unwrap();
        // The root's label is the majority's (1): a row missing the split feature gets it.
        let root_feature = tree.nodes[0].split.as_ref().unwrap().feature;
        let mut x = [f64::NAN, f64::NAN];
        x[1 - root_feature] = 0.0;
        assert_eq!(tree.predict(&x), 1);
    }
}
