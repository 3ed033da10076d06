//! The tree arena's nodes (WEAK_LEARNERS.md §1.2).

use serde::{Deserialize, Serialize};

use super::observer::Observers;
pub use super::split::{Branch, SplitTest};
use crate::core::vec_bytes;

/// Index of a node in the tree's arena.
pub type NodeId = u32;

/// Sentinel of [`Link`] child slots: the branch has no child yet.
pub const NO_CHILD: NodeId = NodeId::MAX;

/// How node `id` routes rows: its test (none for a leaf) and the range of its child slots in
/// the tree's slot array. The tree keeps these apart from the nodes' statistics, so a row's
/// descent touches 24 bytes per level instead of whole nodes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Link {
    /// The split test; `None` for a leaf.
    pub test: Option<SplitTest>,
    /// Index of branch 0's slot.
    pub first: u32,
    /// Number of slots (branches with a place for a child).
    pub len: u32,
}

impl Link {
    /// The link of a leaf.
    pub const LEAF: Link = Link {
        test: None,
        first: 0,
        len: 0,
    };
}

/// A node: a split or a leaf.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Node {
    /// An internal node.
    Split(SplitNode),
    /// A leaf.
    Leaf(Leaf),
}

/// An internal node's statistics (its test and children are in the tree's [`Link`]s).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SplitNode {
    /// Class weights the leaf had when it was split: the prediction of rows that stop here.
    pub class_weights: Vec<f64>,
    /// Sum of the class weight totals of the leaves below (for `MostCommonPath`).
    pub weight: f64,
    /// Depth (root = 0).
    pub depth: u32,
}

/// Growth state of a leaf.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum LeafState {
    /// Collects statistics and may split.
    Active,
    /// Learns class weights only, never splits (pre-pruned or at `max_depth`).
    Inactive,
    /// Inactive to respect `max_active_leaves`; re-activated when room frees.
    Parked,
}

/// A leaf's statistics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Leaf {
    /// Class weights `n[c]`.
    pub class_weights: Vec<f64>,
    /// `W = Σ n[c]`.
    pub total: f64,
    /// `W` at the last split attempt.
    pub weight_at_last_attempt: f64,
    /// Depth (root = 0).
    pub depth: u32,
    /// Growth state.
    pub state: LeafState,
    /// One observer per feature the tree sees, created on the first non-missing value.
    pub observers: Observers,
    /// NB-adaptive: weight of rows the majority class predicted correctly.
    pub mc_correct: f64,
    /// NB-adaptive: weight of rows naive Bayes predicted correctly.
    pub nb_correct: f64,
}

impl Node {
    /// Bytes this node's statistics hold on the heap.
    pub fn heap_bytes(&self) -> usize {
        match self {
            Node::Split(s) => vec_bytes(&s.class_weights),
            Node::Leaf(l) => vec_bytes(&l.class_weights) + l.observers.heap_bytes(),
        }
    }

    /// Bytes this node takes, counted from its statistics' lengths
    /// ([`Observers::state_bytes`]).
    pub fn state_bytes(&self) -> usize {
        let (weights, observers) = match self {
            Node::Split(s) => (s.class_weights.len(), 0),
            Node::Leaf(l) => (l.class_weights.len(), l.observers.state_bytes()),
        };
        std::mem::size_of::<Node>() + weights * std::mem::size_of::<f64>() + observers
    }
}

impl Leaf {
    /// A fresh active leaf with initial class weights.
    pub fn new(class_weights: Vec<f64>, depth: u32, n_observers: usize) -> Self {
        let total = class_weights.iter().sum();
        Leaf {
            class_weights,
            total,
            weight_at_last_attempt: total,
            depth,
            state: LeafState::Active,
            observers: Observers::new(n_observers),
            mc_correct: 0.0,
            nb_correct: 0.0,
        }
    }

    /// Adds `w` to class `y`; a class never seen here first gets `first_seen_prior`.
    #[inline]
    pub fn add_class_weight(&mut self, y: usize, w: f64, first_seen_prior: f64) {
        let cell = &mut self.class_weights[y];
        let add = if *cell == 0.0 {
            first_seen_prior + w
        } else {
            w
        };
        *cell += add;
        self.total += add;
    }

    /// `W − max_c n[c]`: the weight a split could still correct (MOA's promise).
    pub fn promise(&self) -> f64 {
        self.total - self.class_weights.iter().copied().fold(0.0, f64::max)
    }

    /// Drops the observers and stops growth in `state`.
    pub fn deactivate(&mut self, state: LeafState) {
        self.state = state;
        self.observers = Observers::default();
    }
}
