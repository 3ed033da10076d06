//! \[MS\]'s "Greedy" cost-sensitive decision tree: grown best first to at most `max_leaves`
//! leaves; each leaf predicts `argmin_l Σ_{i∈leaf} C(i, l)`, and each split is the one that
//! lowers the summed leaf costs most ([`super::tree`] grows it and says how splits and
//! missing values are handled).

use serde::{Deserialize, Serialize};

use super::tree::{LeafRule, Tree, grow};
use super::{CostMatrix, CostSensitive, Hypothesis, SortedColumns};
use crate::core::ClassId;
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

/// A trained tree: each node holds the label it predicts.
pub type GreedyTree = Tree<ClassId>;

impl Hypothesis for GreedyTree {
    fn predict(&self, x: &[f64]) -> ClassId {
        *self.value(x)
    }
}

/// A leaf costs its least summed cost, and predicts the label of that cost.
struct LeastCost;

impl LeafRule for LeastCost {
    type Value = ClassId;

    fn cost(&self, sums: &[f64]) -> f64 {
        sums.iter().copied().fold(f64::INFINITY, f64::min)
    }

    fn value(&self, sums: &[f64]) -> ClassId {
        // The lowest label on a tie.
        let mut best = 0;
        for (l, &s) in sums.iter().enumerate().skip(1) {
            if s < sums[best] {
                best = l;
            }
        }
        best
    }
}

impl CostSensitive for GreedyTreeConfig {
    type Hypothesis = GreedyTree;

    fn fit(&self, table: &SortedColumns, costs: &CostMatrix) -> Result<GreedyTree> {
        if self.max_leaves == 0 {
            return Err(Error::config("max_leaves", "must be >= 1"));
        }
        Ok(grow(table, costs, &LeastCost, self.max_leaves))
    }
}

#[cfg(test)]
mod tests {
    use super::super::tree::Test;
    use super::*;
    use crate::core::{ClassSet, Dataset, Feature, StreamSpec};

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
        let table = SortedColumns::new(&d).unwrap();
        let c = costs(&d);
        let stump = GreedyTreeConfig { max_leaves: 2 }.fit(&table, &c).unwrap();
        assert_eq!(stump.n_leaves(), 2);
        let tree = GreedyTreeConfig { max_leaves: 8 }.fit(&table, &c).unwrap();
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
        let table = SortedColumns::new(&d).unwrap();
        let tree = GreedyTreeConfig { max_leaves: 2 }
            .fit(&table, &costs(&d))
            .unwrap();
        // No row missed the split feature in training: the root's label is that of all its
        // rows, the majority's (1), and a row missing the feature gets it.
        let root_feature = tree.split_features().next().unwrap();
        let mut x = [f64::NAN, f64::NAN];
        x[1 - root_feature] = 0.0;
        assert_eq!(tree.predict(&x), 1);
    }

    /// The summed cost of `h` over the rows.
    fn paid(h: &GreedyTree, d: &Dataset, c: &CostMatrix) -> f64 {
        (0..d.len()).map(|i| c.row(i)[h.predict(d.row(i))]).sum()
    }

    #[test]
    fn a_stump_is_the_best_single_split_by_brute_force() {
        use crate::core::Rng;
        let mut rng = Rng::new(11);
        for trial in 0..20 {
            let n = 40 + trial;
            let rows: Vec<([f64; 2], usize)> = (0..n)
                .map(|_| {
                    // Few distinct values (ties), a category, a tenth of each missing.
                    let x = (rng.uniform() * 8.0).floor();
                    let c = (rng.uniform() * 3.0).floor();
                    let x = if rng.uniform() < 0.1 { f64::NAN } else { x };
                    let c = if rng.uniform() < 0.1 { f64::NAN } else { c };
                    ([x, c], (rng.uniform() * 3.0) as usize)
                })
                .collect();
            let d = data(&rows);
            let mut c = CostMatrix::zeros(n, 3);
            for i in 0..n {
                c.row_mut(i)
                    .iter_mut()
                    .for_each(|v| *v = rng.uniform() * 2.0 - 1.0);
            }
            let stump = GreedyTreeConfig { max_leaves: 2 }
                .fit(&SortedColumns::new(&d).unwrap(), &c)
                .unwrap();
            // Every split: rows that pass, that fail, and that miss the feature, each group
            // at its best label.
            let least = |rows: &[usize]| {
                (0..3)
                    .map(|l| rows.iter().map(|&i| c.row(i)[l]).sum::<f64>())
                    .fold(f64::INFINITY, f64::min)
            };
            let all: Vec<usize> = (0..n).collect();
            let mut best = least(&all);
            for f in 0..2 {
                let thresholds: Vec<Test> = match f {
                    0 => (0..8).map(|v| Test::AtMost(v as f64 + 0.5)).collect(),
                    _ => (0..3).map(Test::Is).collect(),
                };
                for test in thresholds {
                    let group = |want: Option<bool>| -> Vec<usize> {
                        all.iter()
                            .copied()
                            .filter(|&i| test.holds(d.row(i)[f]) == want)
                            .collect()
                    };
                    let (yes, no) = (group(Some(true)), group(Some(false)));
                    if yes.is_empty() || no.is_empty() {
                        continue;
                    }
                    let missing = group(None);
                    let stuck = if missing.is_empty() {
                        0.0
                    } else {
                        least(&missing)
                    };
                    best = best.min(least(&yes) + least(&no) + stuck);
                }
            }
            assert!(
                (paid(&stump, &d, &c) - best).abs() < 1e-9,
                "trial {trial}: {} against {best}",
                paid(&stump, &d, &c)
            );
        }
    }

    #[test]
    fn a_larger_tree_never_costs_more() {
        let d = crate::synth::mixed(500, 0.1, 0.1, 5);
        let table = SortedColumns::new(&d).unwrap();
        let k = d.spec().n_classes();
        let mut c = CostMatrix::zeros(d.len(), k);
        for i in 0..d.len() {
            let y = d.label(i).unwrap();
            c.row_mut(i).iter_mut().enumerate().for_each(|(l, v)| {
                *v = if l == y {
                    -((k - 1) as f64)
                } else {
                    1.0 + (i % 3) as f64
                };
            });
        }
        let mut last = f64::INFINITY;
        for leaves in [1, 2, 3, 5, 10, 20] {
            let tree = GreedyTreeConfig { max_leaves: leaves }
                .fit(&table, &c)
                .unwrap();
            assert!(tree.n_leaves() <= leaves);
            let cost = paid(&tree, &d, &c);
            assert!(cost <= last + 1e-9, "{leaves} leaves: {cost} after {last}");
            last = cost;
        }
    }
}
