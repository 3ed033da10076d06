//! The tree's node arena taken out and put back whole, for storage outside the tree
//! (checkpoints keep it as one table row per node). Putting an arena back checks that it
//! describes a tree this tree's parameters could have grown, so a damaged store is refused
//! rather than routed through.

use super::HoeffdingTree;
use super::node::{Link, NO_CHILD, Node, NodeId, SplitTest};
use super::observer::Observer;

/// One node as stored outside the tree: its statistics, its test (none for a leaf) and its
/// child per branch (`None` where a branch has no child yet).
#[derive(Debug, Clone, PartialEq)]
pub struct NodeRecord {
    /// Statistics.
    pub node: Node,
    /// The split test; `None` for a leaf.
    pub test: Option<SplitTest>,
    /// Child id per branch, in branch order; empty for a leaf.
    pub children: Vec<Option<NodeId>>,
}

impl HoeffdingTree {
    /// The root, once the tree has learnt.
    pub fn root(&self) -> Option<NodeId> {
        self.root
    }

    /// The row columns this tree observes, in observer order.
    pub fn observed_features(&self) -> &[usize] {
        &self.features
    }

    /// Takes the node arena out, in node-id order, leaving the tree without nodes until
    /// [`HoeffdingTree::put_nodes`] puts one back.
    pub fn take_nodes(&mut self) -> Vec<NodeRecord> {
        let nodes = std::mem::take(&mut self.nodes);
        let links = std::mem::take(&mut self.links);
        let slots = std::mem::take(&mut self.slots);
        nodes
            .into_iter()
            .zip(links)
            .map(|(node, link)| NodeRecord {
                node,
                test: link.test,
                children: slots[link.first as usize..(link.first + link.len) as usize]
                    .iter()
                    .map(|&c| (c != NO_CHILD).then_some(c))
                    .collect(),
            })
            .collect()
    }

    /// Puts a node arena back (node `i` is `records[i]`). Refuses, with the reason, records
    /// that do not form a tree rooted at [`HoeffdingTree::root`] with this tree's classes,
    /// features and column kinds; the tree is left without nodes then.
    pub fn put_nodes(&mut self, records: Vec<NodeRecord>) -> std::result::Result<(), String> {
        self.check_records(&records)?;
        let n_slots = records.iter().map(|r| r.children.len()).sum();
        let mut nodes = Vec::with_capacity(records.len());
        let mut links = Vec::with_capacity(records.len());
        let mut slots = Vec::with_capacity(n_slots);
        for r in records {
            links.push(Link {
                test: r.test,
                first: slots.len() as u32,
                len: r.children.len() as u32,
            });
            slots.extend(r.children.iter().map(|c| c.unwrap_or(NO_CHILD)));
            nodes.push(r.node);
        }
        self.nodes = nodes;
        self.links = links;
        self.slots = slots;
        Ok(())
    }

    fn check_records(&self, records: &[NodeRecord]) -> std::result::Result<(), String> {
        let n = records.len();
        match self.root {
            None if n > 0 => return Err(format!("{n} nodes but no root")),
            Some(r) if r as usize >= n => return Err(format!("root {r} but {n} nodes")),
            _ => {}
        }
        if n >= NO_CHILD as usize {
            return Err(format!("{n} nodes is more than a tree can hold"));
        }
        let mut parent: Vec<Option<NodeId>> = vec![None; n];
        for (id, r) in records.iter().enumerate() {
            let at = |what: String| format!("node {id}: {what}");
            let (weights, depth) = match &r.node {
                Node::Leaf(leaf) => {
                    if r.test.is_some() || !r.children.is_empty() {
                        return Err(at("a leaf with a test or children".into()));
                    }
                    let observed = leaf.observers.len();
                    if observed != 0 && observed != self.features.len() {
                        return Err(at(format!(
                            "{observed} observers for {} features",
                            self.features.len()
                        )));
                    }
                    for (j, obs) in leaf.observers.iter().enumerate() {
                        let nominal = self.nominal[self.features[j]];
                        let fits = match obs {
                            Some(Observer::Numeric(g)) => !nominal && g.len() == self.k,
                            Some(Observer::Nominal(_)) => nominal,
                            Some(Observer::Disabled) | None => true,
                        };
                        if !fits {
                            return Err(at(format!("observer {j} does not fit its column")));
                        }
                    }
                    (&leaf.class_weights, leaf.depth)
                }
                Node::Split(split) => {
                    let Some(test) = r.test else {
                        return Err(at("a split node without a test".into()));
                    };
                    let column = test.feature();
                    let fits = column < self.nominal.len()
                        && match test {
                            SplitTest::Numeric { .. } => !self.nominal[column],
                            SplitTest::Multiway { .. } | SplitTest::Binary { .. } => {
                                self.nominal[column]
                            }
                        };
                    if !fits {
                        return Err(at(format!("a test on column {column} of the wrong kind")));
                    }
                    (&split.class_weights, split.depth)
                }
            };
            if weights.len() != self.k {
                return Err(at(format!(
                    "{} class weights for {} classes",
                    weights.len(),
                    self.k
                )));
            }
            for &child in r.children.iter().flatten() {
                let c = child as usize;
                if c >= n || parent[c].is_some() || Some(child) == self.root {
                    return Err(at(format!("child {child} is not a node of its own")));
                }
                parent[c] = Some(id as NodeId);
                let child_depth = match &records[c].node {
                    Node::Leaf(l) => l.depth,
                    Node::Split(s) => s.depth,
                };
                if child_depth != depth + 1 {
                    return Err(at(format!("child {child} at depth {child_depth}")));
                }
            }
        }
        if let Some(orphan) =
            (0..n).find(|&i| parent[i].is_none() && Some(i as NodeId) != self.root)
        {
            return Err(format!("node {orphan} is not reachable from the root"));
        }
        Ok(())
    }
}
