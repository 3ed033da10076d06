//! The tree's node arena taken out and put back whole, for storage outside the tree
//! (checkpoints keep it as one table row per node). Putting an arena back checks that it
//! describes a tree this tree's parameters could have grown, so a damaged store is refused
//! rather than routed through. A Hoeffding adaptive tree grafts an alternate subtree in
//! place of a node's subtree the same way: the arena taken out, rebuilt, put back.

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
        self.put_own_nodes(records);
        Ok(())
    }

    /// Puts back the arena [`HoeffdingTree::take_nodes`] took, unchanged, without the checks
    /// of [`HoeffdingTree::put_nodes`] (a checkpoint's writer, between its take and put).
    pub fn put_own_nodes(&mut self, records: Vec<NodeRecord>) {
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
    }

    /// Grafts `scion` (a tree of this tree's classes and features, grown from
    /// [`HoeffdingTree::sprout`]) in place of the subtree rooted at node `at`, its nodes
    /// moved to `at`'s depth. The arena is renumbered from the root, breadth first: returns
    /// the new id of each of this tree's nodes (`None` for the replaced subtree's) and of
    /// each of `scion`'s. The split nodes above `at` count the graft's weight for the most
    /// common path. An empty `scion` replaces nothing (both maps are then the identity on
    /// this tree and empty).
    pub(crate) fn graft(
        &mut self, at: NodeId, mut scion: HoeffdingTree,
    ) -> (Vec<Option<NodeId>>, Vec<Option<NodeId>>) {
        let (Some(root), Some(scion_root)) = (self.root, scion.root) else {
            return (
                (0..self.nodes.len() as NodeId).map(Some).collect(),
                Vec::new(),
            );
        };
        let depth_at = match &self.nodes[at as usize] {
            Node::Leaf(l) => l.depth,
            Node::Split(s) => s.depth,
        };
        // The split nodes above `at` lose the replaced subtree's weight and gain the graft's.
        let delta = scion.subtree_weight(scion_root) - self.subtree_weight(at);
        let mut parent = vec![None; self.nodes.len()];
        for id in 0..self.nodes.len() as NodeId {
            if self.links[id as usize].test.is_some() {
                for child in self.children(id) {
                    parent[child as usize] = Some(id);
                }
            }
        }
        let mut above = parent[at as usize];
        while let Some(id) = above {
            if let Node::Split(s) = &mut self.nodes[id as usize] {
                s.weight = (s.weight + delta).max(0.0);
            }
            above = parent[id as usize];
        }

        let mine = self.take_nodes();
        let theirs = scion.take_nodes();
        let mut new_mine = vec![None; mine.len()];
        let mut new_theirs = vec![None; theirs.len()];
        // Breadth first from the root, `at` read as the scion's root: the order ids are given.
        let mut order: Vec<(bool, NodeId)> = Vec::with_capacity(mine.len() + theirs.len());
        let first = if root == at {
            (true, scion_root)
        } else {
            (false, root)
        };
        order.push(first);
        let mut next = 0;
        while next < order.len() {
            let (grafted, id) = order[next];
            let new = next as NodeId;
            next += 1;
            let record = if grafted {
                new_theirs[id as usize] = Some(new);
                &theirs[id as usize]
            } else {
                new_mine[id as usize] = Some(new);
                &mine[id as usize]
            };
            for &child in record.children.iter().flatten() {
                order.push(if !grafted && child == at {
                    (true, scion_root)
                } else {
                    (grafted, child)
                });
            }
        }
        let graft_root = new_theirs[scion_root as usize].expect("the scion's root is reached");
        let new_id = |grafted: bool, c: NodeId| match (grafted, c == at) {
            (true, _) => new_theirs[c as usize],
            (false, true) => Some(graft_root),
            (false, false) => new_mine[c as usize],
        };
        let mut mine: Vec<Option<NodeRecord>> = mine.into_iter().map(Some).collect();
        let mut theirs: Vec<Option<NodeRecord>> = theirs.into_iter().map(Some).collect();
        let records = order
            .into_iter()
            .map(|(grafted, id)| {
                let side = if grafted { &mut theirs } else { &mut mine };
                let mut record = side[id as usize].take().expect("each node is reached once");
                for child in record.children.iter_mut().flatten() {
                    *child = new_id(grafted, *child).expect("children are reached");
                }
                if grafted {
                    match &mut record.node {
                        Node::Leaf(l) => l.depth += depth_at,
                        Node::Split(s) => s.depth += depth_at,
                    }
                }
                record
            })
            .collect();
        self.root = Some(0);
        self.put_nodes(records)
            .expect("a graft of two trees of the same features is a tree");
        self.path.clear();
        self.predicted = None;
        self.enforce_leaf_budget(true);
        (new_mine, new_theirs)
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
