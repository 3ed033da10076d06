//! A weighted Hoeffding tree (VFDT; Domingos & Hulten 2000), exactly as WEAK_LEARNERS.md §1.
//!
//! Every count is a sum of importance weights, so boosters can pass any weight `w ≥ 0`; the
//! grace period is in weight units. The tree is an arena of [`node::Node`]s; leaves keep one
//! [`observer::Observer`] per feature (Gaussian for numeric, weight tables for nominal).
//!
//! Presets ([`Preset`]): [`HoeffdingTreeConfig::default`] (River's defaults, except population
//! variance, §1.3), [`HoeffdingTreeConfig::jgt_paper`] (the Python VFDT port of Jung, Goetz &
//! Tewari with per-tree random grace period, split confidence and tie threshold, §1.12),
//! [`HoeffdingTreeConfig::moa`] (MOA's defaults) and [`HoeffdingTreeConfig::jgt_paper_nba`]
//! (the port's trees with naive-Bayes-adaptive leaves, §1.9: the library's choice for the
//! members of its multiclass ensembles, measured in RESULTS.md; the spec's presets are the
//! other three).

pub mod arena;
pub mod node;
pub mod observer;
pub mod split;

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::core::math::{LogSums, argmax, normalize, softmax};

/// Class counts up to which per-call scratch lives on the stack.
pub(crate) const SMALL_K: usize = 32;
use crate::core::{ClassId, Rng, StreamSpec, is_present, nominal_code, vec_bytes, with_scratch};
use crate::learner::{Classifier, Config, TwoCalls};
use crate::{Error, Result};
use node::{Branch, Leaf, LeafState, Link, NO_CHILD, Node, NodeId, SplitNode};
use observer::{Candidate, Observers, SearchSettings};
pub use observer::{GaussianLikelihood, Numerics, VarianceMode};
pub use split::SplitCriterion;

/// How a leaf predicts (WEAK_LEARNERS.md §1.9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LeafPrediction {
    /// Majority class: the leaf's class weights, normalised.
    MajorityClass,
    /// Naive Bayes over the leaf's observers.
    NaiveBayes,
    /// Naive Bayes when it has been at least as accurate as the majority class at this leaf.
    #[default]
    NaiveBayesAdaptive,
}

/// What happens at a split node whose tested value is missing (WEAK_LEARNERS.md §1.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MissingPolicy {
    /// Follow the child with the larger weight (River). Unseen categories do the same.
    #[default]
    MostCommonPath,
    /// Stop: predict with the split node's frozen class weights, do not learn (MOA, authors).
    StopAtSplit,
}

/// How the grace period is compared (WEAK_LEARNERS.md §1.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GraceComparison {
    /// `W − W_last ≥ grace` (MOA, River).
    #[default]
    AtLeast,
    /// `W − W_last > grace` (the authors' port).
    Greater,
}

/// Ranges from which each tree draws its own grace period, split confidence and tie threshold
/// (WEAK_LEARNERS.md §1.12, \[JGT\] App. E), in the order (δ, grace, τ).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RandomizedParams {
    /// `grace ~ U[lo, hi]` (real-valued).
    pub grace_period: (f64, f64),
    /// `δ = 10^U[log10 lo, log10 hi]`.
    pub split_confidence: (f64, f64),
    /// `τ = 10^U[log10 lo, log10 hi]`.
    pub tie_threshold: (f64, f64),
}

impl Default for RandomizedParams {
    /// The paper's ranges: grace `[5, 20]`, δ and τ log-uniform on `[0.01, 0.9]`.
    fn default() -> Self {
        RandomizedParams {
            grace_period: (5.0, 20.0),
            split_confidence: (0.01, 0.9),
            tie_threshold: (0.01, 0.9),
        }
    }
}

/// Hyper-parameters of a [`HoeffdingTree`] (WEAK_LEARNERS.md §1.1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HoeffdingTreeConfig {
    /// Weight a leaf must gain between split attempts.
    pub grace_period: f64,
    /// δ of the Hoeffding bound, in (0, 1).
    pub split_confidence: f64,
    /// τ: split anyway when the bound falls below it.
    pub tie_threshold: f64,
    /// Merit of a split.
    pub split_criterion: SplitCriterion,
    /// A branch counts toward a valid split only above this share of the weight.
    pub min_branch_fraction: f64,
    /// Do not try to split a leaf whose majority class holds more than this share (1 = off).
    pub max_share_to_split: f64,
    /// Leaf predictor.
    pub leaf_prediction: LeafPrediction,
    /// Naive Bayes is used only at leaves with at least this weight.
    pub nb_threshold: f64,
    /// Number of candidate thresholds per numeric feature.
    pub n_split_points: usize,
    /// Nominal features only split `= v` / `≠ v`.
    pub binary_split: bool,
    /// Leaves at this depth stop growing.
    pub max_depth: Option<u32>,
    /// Allow the null split ("do not split") to win, pre-pruning the leaf.
    pub merit_preprune: bool,
    /// Stop observing features whose merit trails the best by more than the bound (MC leaves).
    pub remove_poor_attrs: bool,
    /// At most this many active leaves; the least promising are parked (§1.11).
    pub max_active_leaves: Option<usize>,
    /// With `max_active_leaves` or `max_bytes`: freeze all growth at the limit instead of
    /// parking.
    pub stop_growth_at_limit: bool,
    /// About this many bytes of state per tree at most (MOA's `maxByteSize`, River's
    /// `max_size`; counted from the state's lengths, to which the allocator adds): past
    /// it, the least promising leaves are parked as under `max_active_leaves`, as many as
    /// MOA's estimate asks (§1.11).
    pub max_bytes: Option<usize>,
    /// `≥` or `>` in the grace-period test.
    pub grace_comparison: GraceComparison,
    /// Variance of the Gaussian observers.
    pub variance: VarianceMode,
    /// Naive Bayes' likelihood under a Gaussian of variance 0.
    pub gaussian_likelihood: GaussianLikelihood,
    /// How numeric features' Gaussians are evaluated: exactly as the spec writes them, or by
    /// faster forms within a stated error.
    pub numerics: Numerics,
    /// Mass a class (or a nominal (category, class) cell) gets the first time it is seen at a
    /// leaf, before the row's weight is added: 0 (MOA, River) or 1 (the authors' port).
    pub first_seen_prior: f64,
    /// Additive prior α of majority-class leaves.
    pub leaf_prior: f64,
    /// Routing of rows whose tested value is missing.
    pub missing: MissingPolicy,
    /// The tree sees only a random subset of this many features, fixed at construction.
    pub feature_subset: Option<usize>,
    /// When set, each tree draws grace period, δ and τ from these ranges at construction.
    pub randomized: Option<RandomizedParams>,
}

impl Default for HoeffdingTreeConfig {
    /// The library defaults: River's, except population variance (§1.3).
    fn default() -> Self {
        HoeffdingTreeConfig {
            grace_period: 200.0,
            split_confidence: 1e-7,
            tie_threshold: 0.05,
            split_criterion: SplitCriterion::InfoGain,
            min_branch_fraction: 0.01,
            max_share_to_split: 0.99,
            leaf_prediction: LeafPrediction::NaiveBayesAdaptive,
            nb_threshold: 0.0,
            n_split_points: 10,
            binary_split: false,
            max_depth: None,
            merit_preprune: true,
            remove_poor_attrs: false,
            max_active_leaves: None,
            stop_growth_at_limit: false,
            max_bytes: None,
            grace_comparison: GraceComparison::AtLeast,
            variance: VarianceMode::Population,
            gaussian_likelihood: GaussianLikelihood::Floored,
            numerics: Numerics::Exact,
            first_seen_prior: 0.0,
            leaf_prior: 0.0,
            missing: MissingPolicy::MostCommonPath,
            feature_subset: None,
            randomized: None,
        }
    }
}

/// Named parameter sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum Preset {
    /// River's defaults with population variance: naive-Bayes-adaptive leaves, grace period
    /// 200 (`HoeffdingTreeConfig::default`).
    #[default]
    Default,
    /// The authors' port in \[JGT\]/\[JT\]'s experiments: majority leaves, random grace
    /// period, δ and τ per tree (`HoeffdingTreeConfig::jgt_paper`).
    JgtPaper,
    /// MOA's `HoeffdingTree` defaults (`HoeffdingTreeConfig::moa`).
    Moa,
    /// The authors' trees with naive-Bayes-adaptive leaves
    /// (`HoeffdingTreeConfig::jgt_paper_nba`).
    JgtPaperNba,
}

impl Preset {
    /// The preset's name, as configs and the command line spell it.
    pub fn name(self) -> &'static str {
        match self {
            Preset::Default => "default",
            Preset::JgtPaper => "jgt-paper",
            Preset::Moa => "moa",
            Preset::JgtPaperNba => "jgt-paper-nba",
        }
    }
}

impl HoeffdingTreeConfig {
    /// The authors' VFDT port as used in \[JGT\]/\[JT\] experiments (WEAK_LEARNERS.md §1.1,
    /// "Preset JgtPaper"): majority-class leaves with the +1 first-seen prior, population
    /// variance, strict `>` grace test, no `max_share_to_split`, stop at split nodes on missing
    /// values, and per-tree random grace period, δ and τ.
    pub fn jgt_paper() -> Self {
        HoeffdingTreeConfig {
            max_share_to_split: 1.0,
            leaf_prediction: LeafPrediction::MajorityClass,
            grace_comparison: GraceComparison::Greater,
            variance: VarianceMode::Population,
            first_seen_prior: 1.0,
            missing: MissingPolicy::StopAtSplit,
            randomized: Some(RandomizedParams::default()),
            ..HoeffdingTreeConfig::default()
        }
    }

    /// [`Self::jgt_paper`]'s trees whose leaves predict with naive Bayes where it has been
    /// the better predictor at that leaf so far (MOA's and River's NB-adaptive rule, §1.9).
    /// A paper tree that draws a small tie threshold hardly splits at large `k`; its one
    /// leaf's majority vote is then a poor member, its naive Bayes often a good one.
    pub fn jgt_paper_nba() -> Self {
        HoeffdingTreeConfig {
            leaf_prediction: LeafPrediction::NaiveBayesAdaptive,
            ..Self::jgt_paper()
        }
    }

    /// MOA's `HoeffdingTree` defaults (WEAK_LEARNERS.md §1.1, MOA column): no
    /// `max_share_to_split`, unbiased variance, stop at split nodes on missing values, and
    /// MOA's naive Bayes likelihoods under degenerate Gaussians ([`GaussianLikelihood::Moa`]).
    pub fn moa() -> Self {
        HoeffdingTreeConfig {
            max_share_to_split: 1.0,
            variance: VarianceMode::Unbiased,
            gaussian_likelihood: GaussianLikelihood::Moa,
            missing: MissingPolicy::StopAtSplit,
            ..HoeffdingTreeConfig::default()
        }
    }

    /// The config of a preset.
    pub fn preset(preset: Preset) -> Self {
        match preset {
            Preset::Default => Self::default(),
            Preset::JgtPaper => Self::jgt_paper(),
            Preset::Moa => Self::moa(),
            Preset::JgtPaperNba => Self::jgt_paper_nba(),
        }
    }

    /// The split search's settings at a leaf of class weights `class_weights`.
    fn search_settings(&self, class_weights: &[f64]) -> SearchSettings {
        SearchSettings {
            pre_impurity: self.split_criterion.impurity(class_weights),
            criterion: self.split_criterion,
            min_branch_fraction: self.min_branch_fraction,
            n_split_points: self.n_split_points,
            binary_split: self.binary_split,
            variance: self.variance,
            numerics: self.numerics,
        }
    }
}

impl fmt::Display for HoeffdingTreeConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HoeffdingTree(")?;
        match &self.randomized {
            Some(r) => write!(
                f,
                "grace~U[{}, {}], delta~logU[{}, {}], tau~logU[{}, {}]",
                r.grace_period.0,
                r.grace_period.1,
                r.split_confidence.0,
                r.split_confidence.1,
                r.tie_threshold.0,
                r.tie_threshold.1
            )?,
            None => write!(
                f,
                "grace={}, delta={:e}, tau={}",
                self.grace_period, self.split_confidence, self.tie_threshold
            )?,
        }
        let leaf = match self.leaf_prediction {
            LeafPrediction::MajorityClass => "mc",
            LeafPrediction::NaiveBayes => "nb",
            LeafPrediction::NaiveBayesAdaptive => "nba",
        };
        write!(f, ", leaves={leaf}")?;
        if self.variance == VarianceMode::Unbiased {
            write!(f, ", unbiased variance")?;
        }
        if self.gaussian_likelihood == GaussianLikelihood::Moa {
            write!(f, ", MOA likelihoods")?;
        }
        if self.numerics == Numerics::Fast {
            write!(f, ", fast numerics")?;
        }
        if self.first_seen_prior > 0.0 {
            write!(f, ", first-seen prior={}", self.first_seen_prior)?;
        }
        if let Some(m) = self.feature_subset {
            write!(f, ", features={m}")?;
        }
        if let Some(d) = self.max_depth {
            write!(f, ", max_depth={d}")?;
        }
        write!(f, ")")
    }
}

fn check(ok: bool, field: &'static str, reason: &str) -> Result<()> {
    if ok {
        Ok(())
    } else {
        Err(Error::config(field, reason))
    }
}

impl Config for HoeffdingTreeConfig {
    type Model = HoeffdingTree;

    fn validate(&self) -> Result<()> {
        let c = self;
        check(c.grace_period > 0.0, "grace_period", "must be > 0")?;
        check(
            c.split_confidence > 0.0 && c.split_confidence < 1.0,
            "split_confidence",
            "must be in (0, 1)",
        )?;
        check(c.tie_threshold >= 0.0, "tie_threshold", "must be >= 0")?;
        check(
            (0.0..0.5).contains(&c.min_branch_fraction),
            "min_branch_fraction",
            "must be in [0, 0.5)",
        )?;
        check(
            c.max_share_to_split > 0.0 && c.max_share_to_split <= 1.0,
            "max_share_to_split",
            "must be in (0, 1]",
        )?;
        check(c.nb_threshold >= 0.0, "nb_threshold", "must be >= 0")?;
        check(c.n_split_points >= 1, "n_split_points", "must be >= 1")?;
        check(
            c.first_seen_prior >= 0.0,
            "first_seen_prior",
            "must be >= 0",
        )?;
        check(c.leaf_prior >= 0.0, "leaf_prior", "must be >= 0")?;
        check(
            c.feature_subset != Some(0),
            "feature_subset",
            "must be >= 1",
        )?;
        check(
            c.max_active_leaves != Some(0),
            "max_active_leaves",
            "must be >= 1",
        )?;
        check(c.max_bytes != Some(0), "max_bytes", "must be >= 1")?;
        if let Some(r) = &c.randomized {
            let (g, d, t) = (r.grace_period, r.split_confidence, r.tie_threshold);
            check(
                g.0 > 0.0 && g.0 <= g.1,
                "randomized.grace_period",
                "needs 0 < lo <= hi",
            )?;
            check(
                d.0 > 0.0 && d.0 <= d.1 && d.1 < 1.0,
                "randomized.split_confidence",
                "needs 0 < lo <= hi < 1",
            )?;
            check(
                t.0 > 0.0 && t.0 <= t.1,
                "randomized.tie_threshold",
                "needs 0 < lo <= hi",
            )?;
        }
        Ok(())
    }

    fn build_with_rng(&self, spec: &StreamSpec, rng: &mut Rng) -> Result<HoeffdingTree> {
        self.validate()?;
        let mut params = self.clone();
        if let Some(r) = params.randomized.take() {
            // Order (δ, grace, τ), as in WEAK_LEARNERS.md §1.12.
            params.split_confidence = rng.log_uniform(r.split_confidence.0, r.split_confidence.1);
            params.grace_period = rng.uniform_in(r.grace_period.0, r.grace_period.1);
            params.tie_threshold = rng.log_uniform(r.tie_threshold.0, r.tie_threshold.1);
        }
        let d = spec.n_features();
        let features = match params.feature_subset {
            Some(m) => rng.sample_indices(d, m),
            None => (0..d).collect(),
        };
        Ok(HoeffdingTree::empty(
            params,
            spec.n_classes(),
            spec.nominal_mask(),
            features,
        ))
    }
}

/// A weighted Hoeffding tree. Build it from a [`HoeffdingTreeConfig`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HoeffdingTree {
    /// Concrete parameters (random ones already drawn).
    params: HoeffdingTreeConfig,
    k: usize,
    /// Per row column: nominal or not.
    nominal: Vec<bool>,
    /// Row columns this tree observes (observer `j` watches column `features[j]`).
    features: Vec<usize>,
    /// Statistics per node.
    nodes: Vec<Node>,
    /// Routing per node (`links[id]` goes with `nodes[id]`).
    links: Vec<Link>,
    /// Child ids of the split nodes, `NO_CHILD` where a branch has none yet.
    slots: Vec<NodeId>,
    root: Option<NodeId>,
    /// Scratch: split nodes on the current learning path.
    #[serde(skip)]
    path: Vec<NodeId>,
    /// Scratch: naive Bayes scores of the NB-adaptive bookkeeping.
    #[serde(skip)]
    scratch: Vec<f64>,
    /// Scratch: split candidates.
    #[serde(skip)]
    candidates: Vec<Candidate>,
    /// Between [`TwoCalls::predict_to_learn`] and [`TwoCalls::learn_predicted`]: where
    /// the row was routed (and whether learning reaches the same leaf) and naive Bayes' vote.
    #[serde(skip)]
    predicted: Option<Predicted>,
}

/// What [`TwoCalls::predict_to_learn`] keeps of a row for learning it.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Predicted {
    routed: Option<(Reached, bool)>,
    nb_vote: Option<ClassId>,
}

/// Under `max_bytes`, the tree's bytes are estimated each time its node count passes a
/// multiple of this (a walk of every node, so not at every split).
const BYTES_CHECK_NODES: usize = 16;

/// The outcome of a split attempt.
enum SplitDecision {
    /// Keep collecting.
    Wait,
    /// The null split won: stop growth here (pre-pruning).
    Prune,
    /// Split on this test, whose statistics are in this observer.
    Split(node::SplitTest, usize),
}

/// Where routing ended.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Reached {
    /// A leaf.
    Leaf(NodeId),
    /// A split node that could not route the row (missing value / unseen category).
    Stopped(NodeId),
}

impl HoeffdingTree {
    /// The concrete parameters of this tree.
    pub fn params(&self) -> &HoeffdingTreeConfig {
        &self.params
    }

    /// Number of nodes (splits and leaves).
    pub fn n_nodes(&self) -> usize {
        self.nodes.len()
    }

    /// Bytes the tree holds on the heap: its arena, every node's statistics and observers,
    /// and its scratch buffers (by capacity). What a model's size in memory grows with.
    pub fn heap_bytes(&self) -> usize {
        let nodes: usize = self.nodes.iter().map(Node::heap_bytes).sum();
        nodes
            + vec_bytes(&self.nodes)
            + vec_bytes(&self.links)
            + vec_bytes(&self.slots)
            + vec_bytes(&self.nominal)
            + vec_bytes(&self.features)
            + vec_bytes(&self.path)
            + vec_bytes(&self.scratch)
            + vec_bytes(&self.candidates)
    }

    /// Number of leaves.
    pub fn n_leaves(&self) -> usize {
        self.nodes
            .iter()
            .filter(|n| matches!(n, Node::Leaf(_)))
            .count()
    }

    /// Number of active leaves.
    pub fn n_active_leaves(&self) -> usize {
        self.n_leaves_in(LeafState::Active)
    }

    /// Number of leaves parked by `max_active_leaves` or `max_bytes` (§1.11).
    pub fn n_parked_leaves(&self) -> usize {
        self.n_leaves_in(LeafState::Parked)
    }

    fn n_leaves_in(&self, state: LeafState) -> usize {
        self.nodes
            .iter()
            .filter(|n| matches!(n, Node::Leaf(l) if l.state == state))
            .count()
    }

    /// Depth of the deepest node (0 for a single leaf or an empty tree).
    pub fn depth(&self) -> u32 {
        self.nodes
            .iter()
            .map(|n| match n {
                Node::Leaf(l) => l.depth,
                Node::Split(s) => s.depth,
            })
            .max()
            .unwrap_or(0)
    }

    /// The nodes of the arena (node 0 is the root once the tree has learnt).
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// The split nodes, root first, that the row last predicted or learnt passed on its way
    /// down (a Hoeffding adaptive tree's nodes watch the error of the rows through them).
    pub(crate) fn path(&self) -> &[NodeId] {
        &self.path
    }

    /// An empty tree of this tree's concrete parameters, classes and features: what a
    /// Hoeffding adaptive tree grows an alternate subtree from, to graft in its place later.
    pub(crate) fn sprout(&self) -> HoeffdingTree {
        HoeffdingTree::empty(
            self.params.clone(),
            self.k,
            self.nominal.clone(),
            self.features.clone(),
        )
    }

    /// A tree without nodes of concrete parameters `params`, `k` classes, columns of kinds
    /// `nominal`, observing `features`.
    fn empty(
        params: HoeffdingTreeConfig, k: usize, nominal: Vec<bool>, features: Vec<usize>,
    ) -> HoeffdingTree {
        HoeffdingTree {
            params,
            k,
            nominal,
            features,
            nodes: Vec::new(),
            links: Vec::new(),
            slots: Vec::new(),
            root: None,
            path: Vec::new(),
            scratch: Vec::new(),
            candidates: Vec::new(),
            predicted: None,
        }
    }

    /// Routes `x` from the root for learning: a branch with no child yet (an unseen category)
    /// gets a new leaf (§1.4.2), and split nodes on the way are recorded in `self.path`.
    fn route(&mut self, x: &[f64]) -> Option<Reached> {
        self.path.clear();
        let mut id = self.root?;
        loop {
            let Some(test) = self.links[id as usize].test else {
                return Some(Reached::Leaf(id));
            };
            self.path.push(id);
            let slot = match test.branch(x) {
                Branch::Child(slot) => slot,
                Branch::Missing => match self.params.missing {
                    MissingPolicy::StopAtSplit => return Some(Reached::Stopped(id)),
                    MissingPolicy::MostCommonPath => match self.most_common_child(id) {
                        Some(child) => {
                            id = child;
                            continue;
                        }
                        None => return Some(Reached::Stopped(id)),
                    },
                },
            };
            id = match self.child(id, slot) {
                Some(child) => child,
                None => self.add_child_leaf(id, slot),
            };
        }
    }

    /// Read-only routing for prediction (§1.5): unseen categories follow the most common path
    /// or stop at the split, per the missing-value policy. `visit` sees every split node
    /// passed. The flag is true when learning would route the row to the same node, i.e.
    /// no branch on the way lacked its child (learning would grow one there, §1.4.2).
    #[inline]
    fn route_ref(&self, x: &[f64], mut visit: impl FnMut(NodeId)) -> Option<(Reached, bool)> {
        let mut id = self.root?;
        let mut same_for_learning = true;
        loop {
            let Some(test) = self.links[id as usize].test else {
                return Some((Reached::Leaf(id), same_for_learning));
            };
            visit(id);
            let child = match test.branch(x) {
                Branch::Child(slot) => {
                    let child = self.child(id, slot);
                    same_for_learning &= child.is_some();
                    child
                }
                Branch::Missing => None,
            };
            let child = match (child, self.params.missing) {
                (Some(c), _) => Some(c),
                (None, MissingPolicy::MostCommonPath) => self.most_common_child(id),
                (None, MissingPolicy::StopAtSplit) => None,
            };
            match child {
                Some(c) => id = c,
                None => return Some((Reached::Stopped(id), same_for_learning)),
            }
        }
    }

    /// The child slots of split node `id`.
    #[inline]
    fn child_slots(&self, id: NodeId) -> &[NodeId] {
        let link = &self.links[id as usize];
        &self.slots[link.first as usize..(link.first + link.len) as usize]
    }

    /// The child in branch `slot` of split node `id`, if it exists.
    #[inline]
    fn child(&self, id: NodeId, slot: usize) -> Option<NodeId> {
        self.child_slots(id)
            .get(slot)
            .copied()
            .filter(|&c| c != NO_CHILD)
    }

    /// The children of split node `id`, in branch order.
    fn children(&self, id: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        self.child_slots(id)
            .iter()
            .copied()
            .filter(|&c| c != NO_CHILD)
    }

    /// The child with the largest weight below it (ties to the lowest branch).
    fn most_common_child(&self, id: NodeId) -> Option<NodeId> {
        let mut best: Option<(NodeId, f64)> = None;
        for child in self.children(id) {
            let w = self.subtree_weight(child);
            if best.is_none_or(|(_, bw)| w > bw) {
                best = Some((child, w));
            }
        }
        best.map(|(c, _)| c)
    }

    /// Appends a node with its link; returns its id.
    fn push_node(&mut self, node: Node, link: Link) -> NodeId {
        let id = NodeId::try_from(self.nodes.len()).expect("fewer than 2^32 - 1 nodes");
        assert!(id != NO_CHILD, "tree arena full");
        self.nodes.push(node);
        self.links.push(link);
        id
    }

    fn subtree_weight(&self, id: NodeId) -> f64 {
        match &self.nodes[id as usize] {
            Node::Leaf(l) => l.total,
            Node::Split(s) => s.weight,
        }
    }

    /// Creates an empty active leaf in branch `slot` of split node `parent` (§1.4.2).
    fn add_child_leaf(&mut self, parent: NodeId, slot: usize) -> NodeId {
        let Node::Split(split) = &self.nodes[parent as usize] else {
            unreachable!("children are only added to split nodes")
        };
        let depth = split.depth + 1;
        let leaf = Leaf::new(vec![0.0; self.k], depth, self.features.len());
        let nodes_before = self.nodes.len();
        let id = self.push_node(Node::Leaf(leaf), Link::LEAF);
        let link = self.links[parent as usize];
        if slot >= link.len as usize {
            // A category code beyond the node's slots: move them to the end, widened.
            let first = self.slots.len();
            self.slots
                .extend_from_within(link.first as usize..(link.first + link.len) as usize);
            self.slots.resize(first + slot + 1, NO_CHILD);
            self.links[parent as usize].first = first as u32;
            self.links[parent as usize].len = (slot + 1) as u32;
        }
        let first = self.links[parent as usize].first as usize;
        self.slots[first + slot] = id;
        self.enforce_leaf_budget(self.passed_a_bytes_check(nodes_before));
        id
    }

    fn class_weights_of(&self, reached: Reached) -> (&[f64], Option<&Leaf>) {
        match reached {
            Reached::Leaf(id) => match &self.nodes[id as usize] {
                Node::Leaf(l) => (&l.class_weights, Some(l)),
                Node::Split(_) => unreachable!(),
            },
            Reached::Stopped(id) => match &self.nodes[id as usize] {
                Node::Split(s) => (&s.class_weights, None),
                Node::Leaf(_) => unreachable!(),
            },
        }
    }

    /// Majority-class probabilities (§1.9): `(n[c] + α)/(W + kα)`, where a class never seen
    /// at the node counts `first_seen_prior` (the authors' "+1" for unseen classes).
    fn majority_proba(&self, n: &[f64], out: &mut [f64]) {
        let (prior, alpha) = (self.params.first_seen_prior, self.params.leaf_prior);
        for (o, &w) in out.iter_mut().zip(n) {
            *o = if w > 0.0 { w } else { prior } + alpha;
        }
        normalize(out);
    }

    /// Naive Bayes log-posteriors (§1.9) into `out`; returns false if the leaf is empty or no
    /// class explains `x`.
    fn naive_bayes_log(&self, leaf: &Leaf, x: &[f64], out: &mut [f64]) -> bool {
        if leaf.total <= 0.0 {
            return false;
        }
        for (c, o) in out.iter_mut().enumerate() {
            let n = leaf.class_weights[c];
            *o = if n > 0.0 {
                (n / leaf.total).ln()
            } else {
                f64::NEG_INFINITY
            };
        }
        let fast = self.reads_fast_naive_bayes()
            && leaf
                .observers
                .naive_bayes_fast(x, &self.features, self.params.variance, out);
        if !fast {
            // Per-class scratch for the deferred logarithms, on the stack for small k.
            with_scratch::<{ 2 * SMALL_K }, _>(2 * self.k, |products| {
                let mut logs = LogSums::new(out, products);
                leaf.observers.naive_bayes_exact(
                    x,
                    &self.features,
                    self.params.variance,
                    self.params.gaussian_likelihood,
                    &mut logs,
                );
                logs.finish();
            });
        }
        // No class explains the row (only with point masses): naive Bayes has no vote.
        out.iter().any(|&l| l > f64::NEG_INFINITY)
    }

    /// Naive Bayes probabilities into `out`; returns the class of largest log-posterior, or
    /// `None` (and `out` undefined) if the leaf is empty or no class explains `x`.
    fn naive_bayes_proba(&self, leaf: &Leaf, x: &[f64], out: &mut [f64]) -> Option<ClassId> {
        if !self.naive_bayes_log(leaf, x, out) {
            return None;
        }
        let vote = argmax(out);
        softmax(out);
        Some(vote)
    }

    fn uses_naive_bayes(&self, leaf: &Leaf) -> bool {
        leaf.state == LeafState::Active
            && leaf.total >= self.params.nb_threshold
            && match self.params.leaf_prediction {
                LeafPrediction::MajorityClass => false,
                LeafPrediction::NaiveBayes => true,
                LeafPrediction::NaiveBayesAdaptive => leaf.nb_correct >= leaf.mc_correct,
            }
    }

    /// Updates leaf `id` with `(x, y, w)` (§1.3).
    ///
    /// `nb_vote` is naive Bayes' vote at this leaf if the caller has just computed it on `x`
    /// (the prediction of a predict-then-learn step), sparing the NB-adaptive bookkeeping a
    /// second evaluation.
    fn learn_at_leaf(
        &mut self, id: NodeId, x: &[f64], y: ClassId, w: f64, nb_vote: Option<ClassId>,
    ) {
        if self.params.leaf_prediction == LeafPrediction::NaiveBayesAdaptive {
            let Node::Leaf(leaf) = &self.nodes[id as usize] else {
                unreachable!()
            };
            if leaf.state == LeafState::Active {
                let mc_right = leaf.total <= 0.0 || argmax(&leaf.class_weights) == y;
                let nb_right = match nb_vote {
                    Some(vote) => vote == y,
                    None => {
                        let mut nb = std::mem::take(&mut self.scratch);
                        nb.resize(self.k, 0.0);
                        let right = self.naive_bayes_log(leaf, x, &mut nb) && argmax(&nb) == y;
                        self.scratch = nb;
                        right
                    }
                };
                let Node::Leaf(leaf) = &mut self.nodes[id as usize] else {
                    unreachable!()
                };
                if mc_right {
                    leaf.mc_correct += w;
                }
                if nb_right {
                    leaf.nb_correct += w;
                }
            }
        }
        let prior = self.params.first_seen_prior;
        let naive_bayes_terms = self.keeps_naive_bayes_terms();
        let Node::Leaf(leaf) = &mut self.nodes[id as usize] else {
            unreachable!()
        };
        leaf.add_class_weight(y, w, prior);
        if leaf.state != LeafState::Active {
            return;
        }
        let (k, variance) = (self.k, self.params.variance);
        for (j, &col) in self.features.iter().enumerate() {
            let v = x[col];
            if self.nominal[col] {
                match nominal_code(v) {
                    Some(code) => leaf.observers.update_nominal(j, code, y, w, prior, k),
                    None => leaf.observers.update_missing(j, w),
                }
            } else if is_present(v) {
                leaf.observers.update_numeric(j, v, y, w, k);
            }
        }
        if naive_bayes_terms {
            leaf.observers.refresh_naive_bayes(y, variance);
        }
    }

    /// Whether naive Bayes reads the Gaussian terms of [`Numerics::Fast`] (under the spec's
    /// floored likelihoods; MOA's read the estimators).
    fn reads_fast_naive_bayes(&self) -> bool {
        self.params.numerics == Numerics::Fast
            && self.params.gaussian_likelihood == GaussianLikelihood::Floored
    }

    /// Whether leaves keep naive Bayes' Gaussian terms: where naive Bayes reads them and
    /// leaves predict with it.
    fn keeps_naive_bayes_terms(&self) -> bool {
        self.reads_fast_naive_bayes()
            && self.params.leaf_prediction != LeafPrediction::MajorityClass
    }

    /// Attempts to split active leaf `id` (§1.6).
    fn attempt_split(&mut self, id: NodeId) {
        // The candidate list is scratch reused across attempts: attempts are frequent.
        let mut candidates = std::mem::take(&mut self.candidates);
        candidates.clear();
        let decision = self.split_decision(id, &mut candidates);
        self.candidates = candidates;
        match decision {
            SplitDecision::Wait => {}
            SplitDecision::Prune => self.deactivate(id, LeafState::Inactive),
            SplitDecision::Split(test, observer) => self.split_leaf(id, test, observer),
        }
    }

    /// Steps 1–4 and 6 of §1.6 for leaf `id`, with `candidates` as scratch.
    fn split_decision(&mut self, id: NodeId, candidates: &mut Vec<Candidate>) -> SplitDecision {
        let Node::Leaf(leaf) = &self.nodes[id as usize] else {
            unreachable!()
        };
        let n = &leaf.class_weights;
        let w = leaf.total;
        if n.iter().filter(|&&c| c > 0.0).count() < 2 {
            return SplitDecision::Wait;
        }
        if n.iter().copied().fold(0.0, f64::max) / w > self.params.max_share_to_split {
            return SplitDecision::Wait;
        }
        let settings = self.params.search_settings(n);
        let range = settings.criterion.range(n);
        let eps = split::hoeffding_bound(range, self.params.split_confidence, w);
        // Each feature's best merit has bounds ([`Observer::merit_bounds`]). Searched in the
        // order of their upper bounds, the features whose upper bound is below the second-best
        // merit can be neither best nor second; and once the best merit any feature could
        // reach trails the second by at most `ε` while `ε ≥ τ`, the leaf cannot split. The
        // second-best merit is at least the second-best found so far, and at least the
        // second-largest lower bound: of the two features that hold the two largest, one's
        // merit is at most the second-best. All of these only decide sooner, and with the
        // same candidates, what the full search decides. (Not when poor features are
        // removed, which reads every merit.)
        let reads_every_merit = self.params.remove_poor_attrs
            && self.params.leaf_prediction == LeafPrediction::MajorityClass;
        let may_stop_early = eps >= self.params.tie_threshold && !reads_every_merit;
        let mut top = [f64::NEG_INFINITY; 2];
        if self.params.merit_preprune {
            let merit =
                settings
                    .criterion
                    .merit(n, std::iter::once(&n[..]), settings.min_branch_fraction);
            candidates.push(Candidate {
                test: None,
                merit,
                observer: None,
            });
        }
        let mut lower = [f64::NEG_INFINITY; 2];
        let mut order: Vec<(f64, usize)> = leaf
            .observers
            .iter()
            .enumerate()
            .filter_map(|(j, o)| {
                let o = o?;
                if reads_every_merit {
                    return Some((o.merit_bound(&settings), j));
                }
                let (low, up) = o.merit_bounds(&settings);
                if low > lower[0] {
                    lower = [low, lower[0]];
                } else if low > lower[1] {
                    lower[1] = low;
                }
                Some((up, j))
            })
            .collect();
        order.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        for &(bound, j) in &order {
            let second = top[1].max(lower[1]);
            if !reads_every_merit && bound < second {
                break;
            }
            if may_stop_early && top[0].max(bound) - second <= eps {
                return SplitDecision::Wait;
            }
            let obs = leaf.observers.get(j).expect("ordered from the observers");
            if let Some((test, merit)) = obs.best_split(self.features[j], &settings)
                && merit.is_finite()
            {
                candidates.push(Candidate {
                    test: Some(test),
                    merit,
                    observer: Some(j),
                });
                if merit > top[0] {
                    top = [merit, top[0]];
                } else if merit > top[1] {
                    top[1] = merit;
                }
            }
        }
        // Feature order (the null split first) before the stable sort by merit, as a search
        // in feature order leaves them: equal merits resolve as they always have.
        candidates.sort_by_key(|c| c.observer.map_or(0, |j| j + 1));
        if !candidates.iter().any(|c| c.test.is_some()) {
            return if self.params.merit_preprune {
                SplitDecision::Prune
            } else {
                SplitDecision::Wait
            };
        }
        // Highest merit first; a stable sort keeps feature order among equals.
        candidates.sort_by(|a, b| b.merit.total_cmp(&a.merit));
        let split = candidates.len() == 1 || {
            let gap = candidates[0].merit - candidates[1].merit;
            gap > eps || eps < self.params.tie_threshold
        };
        if self.params.remove_poor_attrs
            && self.params.leaf_prediction == LeafPrediction::MajorityClass
        {
            let best = candidates[0].merit;
            let poor: Vec<usize> = candidates
                .iter()
                .filter(|c| best - c.merit > eps)
                .filter_map(|c| c.observer)
                .collect();
            let Node::Leaf(leaf) = &mut self.nodes[id as usize] else {
                unreachable!()
            };
            for j in poor {
                leaf.observers.disable(j);
            }
        }
        match (split, candidates[0].test, candidates[0].observer) {
            (false, _, _) => SplitDecision::Wait,
            (true, Some(test), Some(j)) => SplitDecision::Split(test, j),
            (true, _, _) => SplitDecision::Prune,
        }
    }

    fn split_leaf(&mut self, id: NodeId, test: node::SplitTest, observer: usize) {
        let Node::Leaf(leaf) = &self.nodes[id as usize] else {
            unreachable!()
        };
        let obs = leaf
            .observers
            .get(observer)
            .expect("candidate has an observer");
        let branches = obs.branch_weights(&test, self.k, self.params.variance);
        let (class_weights, depth) = (leaf.class_weights.clone(), leaf.depth);
        let multiway = matches!(test, node::SplitTest::Multiway { .. });
        let nodes_before = self.nodes.len();
        let first = self.slots.len();
        let len = branches.len();
        self.slots.resize(first + len, NO_CHILD);
        let mut weight = 0.0;
        for (slot, weights) in branches.into_iter().enumerate() {
            // A multiway split gets children only for categories observed at the leaf.
            if multiway && weights.iter().all(|&w| w <= 0.0) {
                continue;
            }
            let leaf = Leaf::new(weights, depth + 1, self.features.len());
            weight += leaf.total;
            self.slots[first + slot] = self.push_node(Node::Leaf(leaf), Link::LEAF);
        }
        self.nodes[id as usize] = Node::Split(SplitNode {
            class_weights,
            weight: weight.max(0.0),
            depth,
        });
        self.links[id as usize] = Link {
            test: Some(test),
            first: first as u32,
            len: len as u32,
        };
        self.enforce_leaf_budget(self.passed_a_bytes_check(nodes_before));
    }

    /// Whether growing from `nodes_before` nodes took the count past a multiple of
    /// [`BYTES_CHECK_NODES`], where the byte estimate is taken.
    fn passed_a_bytes_check(&self, nodes_before: usize) -> bool {
        nodes_before / BYTES_CHECK_NODES != self.nodes.len() / BYTES_CHECK_NODES
    }

    fn deactivate(&mut self, id: NodeId, state: LeafState) {
        if let Node::Leaf(leaf) = &mut self.nodes[id as usize] {
            leaf.deactivate(state);
        }
        self.enforce_leaf_budget(false);
    }

    /// How many leaves may be active within `limit` bytes, by MOA's estimate
    /// (`HoeffdingTree.enforceTrackerLimit`): the largest `m` with `(m·a + (n − m)·i)·f ≤
    /// limit`, `n` the leaves, `a` the mean bytes of an active leaf that has statistics, `i`
    /// of a leaf without, and `f` the tree's bytes over its leaves' (split nodes, routing).
    /// Bytes are counted from the state's lengths ([`Node::state_bytes`]), so a restored
    /// tree estimates as the original does. `None` while the tree is within the limit with
    /// no leaf parked; 0 when no active leaf is left to estimate `a` from.
    fn active_leaves_within(&self, limit: usize) -> Option<usize> {
        let (mut grown, mut grown_bytes, mut bare, mut bare_bytes) = (0usize, 0, 0usize, 0);
        let (mut parked, mut total) = (false, 0);
        for node in &self.nodes {
            let bytes = node.state_bytes();
            total += bytes;
            let Node::Leaf(leaf) = node else { continue };
            parked |= leaf.state == LeafState::Parked;
            if leaf.state == LeafState::Active && leaf.observers.has_statistics() {
                (grown, grown_bytes) = (grown + 1, grown_bytes + bytes);
            } else {
                (bare, bare_bytes) = (bare + 1, bare_bytes + bytes);
            }
        }
        total += self.links.len() * std::mem::size_of::<Link>()
            + self.slots.len() * std::mem::size_of::<NodeId>();
        if total <= limit && !parked {
            return None;
        }
        if grown == 0 {
            return Some(0);
        }
        let leaves = grown + bare;
        let overhead = total as f64 / (grown_bytes + bare_bytes) as f64;
        let bare_mean = if bare > 0 {
            bare_bytes as f64 / bare as f64
        } else {
            (std::mem::size_of::<Node>() + self.k * std::mem::size_of::<f64>()) as f64
        };
        let grown_mean = grown_bytes as f64 / grown as f64;
        let room = limit as f64 / overhead - leaves as f64 * bare_mean;
        let active = (room / (grown_mean - bare_mean).max(1.0)).floor();
        Some(active.clamp(0.0, leaves as f64) as usize)
    }

    /// Keeps at most `max_active_leaves` active, and (when `by_bytes`) as many as fit in
    /// `max_bytes`: the most promising leaves (active or parked) are active, the rest parked
    /// (MOA's `enforceTrackerLimit`, §1.11). The byte estimate walks the tree, so it is made
    /// only when a split takes the node count past a multiple of [`BYTES_CHECK_NODES`]: a
    /// point the tree's own state fixes, so a tree restored from a checkpoint checks where
    /// the uninterrupted one does.
    fn enforce_leaf_budget(&mut self, by_bytes: bool) {
        let bytes_budget = match self.params.max_bytes {
            Some(limit) if by_bytes => self.active_leaves_within(limit),
            _ => None,
        };
        let budget = match (self.params.max_active_leaves, bytes_budget) {
            (None, None) => return,
            (a, b) => a.unwrap_or(usize::MAX).min(b.unwrap_or(usize::MAX)),
        };
        if self.params.stop_growth_at_limit {
            if self.n_active_leaves() >= budget {
                for node in &mut self.nodes {
                    if let Node::Leaf(l) = node
                        && l.state == LeafState::Active
                    {
                        l.deactivate(LeafState::Inactive);
                    }
                }
            }
            return;
        }
        let mut eligible: Vec<(f64, usize)> = self
            .nodes
            .iter()
            .enumerate()
            .filter_map(|(i, n)| match n {
                Node::Leaf(l) if l.state != LeafState::Inactive => Some((l.promise(), i)),
                _ => None,
            })
            .collect();
        if eligible.len() <= budget
            && eligible.iter().all(
                |&(_, i)| matches!(&self.nodes[i], Node::Leaf(l) if l.state == LeafState::Active),
            )
        {
            return;
        }
        eligible.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let n_obs = self.features.len();
        for (rank, &(_, i)) in eligible.iter().enumerate() {
            let Node::Leaf(l) = &mut self.nodes[i] else {
                unreachable!()
            };
            if rank < budget {
                if l.state == LeafState::Parked {
                    l.state = LeafState::Active;
                    l.observers = Observers::new(n_obs);
                    l.weight_at_last_attempt = l.total;
                }
            } else if l.state == LeafState::Active {
                l.deactivate(LeafState::Parked);
            }
        }
    }
}

impl Classifier for HoeffdingTree {
    fn n_classes(&self) -> usize {
        self.k
    }

    /// The new class has weight 0 in every node's class weights and every leaf's observers.
    /// Learning reads only the classes present at a leaf (the merit's range `log2 C` of
    /// WEAK_LEARNERS.md §1.7), so the tree is exactly the one that would have been grown had
    /// the class been declared and never met; its predictions read `k` afresh (§1.9: the
    /// `k·α` of a leaf prior, the mass of classes never seen at a leaf under `JgtPaper`).
    fn add_class(&mut self) -> Result<()> {
        self.k += 1;
        for node in &mut self.nodes {
            match node {
                Node::Split(split) => split.class_weights.push(0.0),
                Node::Leaf(leaf) => {
                    leaf.class_weights.push(0.0);
                    leaf.observers.add_class();
                }
            }
        }
        Ok(())
    }

    fn learn(&mut self, x: &[f64], y: ClassId, w: f64) {
        // w = 0 (and any invalid weight) is a no-op: no node, counter or observer is created.
        if !(w > 0.0 && w.is_finite()) || y >= self.k {
            return;
        }
        if self.root.is_none() {
            let leaf = Leaf::new(vec![0.0; self.k], 0, self.features.len());
            self.root = Some(self.push_node(Node::Leaf(leaf), Link::LEAF));
        }
        let Some(Reached::Leaf(id)) = self.route(x) else {
            // Stopped at a split node on a missing value: MOA and the authors do not learn.
            return;
        };
        self.learn_reached(id, x, y, w, None);
    }

    fn predict_proba(&self, x: &[f64], out: &mut [f64]) {
        let reached = self.route_ref(x, |_| {}).map(|(r, _)| r);
        self.proba_at(reached, x, out);
    }

    /// Routes the row once for both phases when learning would reach the same leaf.
    fn learn_predict(&mut self, x: &[f64], y: Option<ClassId>, w: f64, out: &mut [f64]) -> ClassId {
        self.predict_to_learn(x, out);
        let predicted = argmax(out);
        match y {
            Some(y) => self.learn_predicted(x, y, w),
            None => self.predicted = None,
        }
        predicted
    }

    fn two_calls(&mut self) -> Option<&mut dyn TwoCalls> {
        Some(self)
    }
}

impl TwoCalls for HoeffdingTree {
    /// Routes the row, keeping the path and the leaf for [`TwoCalls::learn_predicted`].
    fn predict_to_learn(&mut self, x: &[f64], out: &mut [f64]) {
        let mut path = std::mem::take(&mut self.path);
        path.clear();
        let routed = self.route_ref(x, |id| path.push(id));
        self.path = path;
        let nb_vote = self.proba_at(routed.as_ref().map(|(r, _)| *r), x, out);
        self.predicted = Some(Predicted { routed, nb_vote });
    }

    /// Learns at the leaf [`TwoCalls::predict_to_learn`] routed the row to, when learning
    /// reaches it; routes again otherwise.
    fn learn_predicted(&mut self, x: &[f64], y: ClassId, w: f64) {
        let predicted = self.predicted.take();
        if !(w > 0.0 && w.is_finite() && y < self.k) {
            return;
        }
        match predicted {
            Some(Predicted {
                routed: Some((Reached::Leaf(id), true)),
                nb_vote,
            }) => self.learn_reached(id, x, y, w, nb_vote),
            _ => self.learn(x, y, w),
        }
    }
}

impl HoeffdingTree {
    /// Class probabilities at the node routing reached (§1.9); uniform for an empty tree.
    /// Returns naive Bayes' vote when the leaf predicted with naive Bayes.
    fn proba_at(&self, reached: Option<Reached>, x: &[f64], out: &mut [f64]) -> Option<ClassId> {
        let Some(reached) = reached else {
            out.fill(1.0 / self.k as f64);
            return None;
        };
        let (weights, leaf) = self.class_weights_of(reached);
        if let Some(leaf) = leaf
            && self.uses_naive_bayes(leaf)
            && let Some(vote) = self.naive_bayes_proba(leaf, x, out)
        {
            return Some(vote);
        }
        self.majority_proba(weights, out);
        None
    }

    /// Learns `(x, y, w)` at leaf `id`, reached through the split nodes in `self.path`:
    /// leaf statistics, subtree weights on the path, then a split attempt when due (§1.4).
    fn learn_reached(
        &mut self, id: NodeId, x: &[f64], y: ClassId, w: f64, nb_vote: Option<ClassId>,
    ) {
        let before = self.subtree_weight(id);
        self.learn_at_leaf(id, x, y, w, nb_vote);
        let delta = self.subtree_weight(id) - before;
        for &s in &self.path {
            if let Node::Split(split) = &mut self.nodes[s as usize] {
                split.weight += delta;
            }
        }
        let Node::Leaf(leaf) = &self.nodes[id as usize] else {
            unreachable!()
        };
        if leaf.state != LeafState::Active {
            return;
        }
        if self.params.max_depth.is_some_and(|d| leaf.depth >= d) {
            self.deactivate(id, LeafState::Inactive);
            return;
        }
        let gained = leaf.total - leaf.weight_at_last_attempt;
        let due = match self.params.grace_comparison {
            GraceComparison::AtLeast => gained >= self.params.grace_period,
            GraceComparison::Greater => gained > self.params.grace_period,
        };
        if due {
            self.attempt_split(id);
            if let Node::Leaf(leaf) = &mut self.nodes[id as usize] {
                leaf.weight_at_last_attempt = leaf.total;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec_xor() -> StreamSpec {
        StreamSpec::numeric(2, 2).unwrap()
    }

    #[test]
    fn zero_weight_creates_nothing() {
        let mut t = HoeffdingTreeConfig::default()
            .build(&spec_xor(), 0)
            .unwrap();
        t.learn(&[0.0, 1.0], 1, 0.0);
        assert_eq!(t.n_nodes(), 0);
    }

    /// A class whose values all coincide: under the spec's floor its Gaussian dwarfs every
    /// other at that value; under MOA's rule it counts 1 there and excludes the class
    /// elsewhere, and a row no class explains falls back to the majority class. A class with
    /// no values of the feature at the leaf: its prior alone (spec), excluded (MOA).
    #[test]
    fn degenerate_gaussian_likelihoods() {
        let spec = StreamSpec::numeric(1, 3).unwrap();
        let tree = |gaussian_likelihood, rows: &[(f64, usize)]| {
            let mut t = HoeffdingTreeConfig {
                grace_period: 1e9,
                leaf_prediction: LeafPrediction::NaiveBayes,
                gaussian_likelihood,
                ..Default::default()
            }
            .build(&spec, 0)
            .unwrap();
            for &(x, y) in rows {
                t.learn(&[x], y, 1.0);
            }
            t
        };
        // Class 0 at 3 (twice), class 1 at 2 and 4 (mean 3, variance 1), class 2 at 7.
        let rows = [(3.0, 0), (2.0, 1), (3.0, 0), (4.0, 1), (7.0, 2)];
        let mut p = [0.0; 3];
        tree(GaussianLikelihood::Floored, &rows).predict_proba(&[3.0], &mut p);
        assert!(p[0] > 0.999, "{p:?}");
        let point = tree(GaussianLikelihood::Moa, &rows);
        point.predict_proba(&[3.0], &mut p);
        let normal = 1.0 / (2.0 * std::f64::consts::PI).sqrt();
        assert!((p[0] - 1.0 / (1.0 + normal)).abs() < 1e-12, "{p:?}");
        assert!((p[1] - normal / (1.0 + normal)).abs() < 1e-12);
        assert_eq!(p[2], 0.0);
        point.predict_proba(&[2.5], &mut p);
        assert!((p[1] - 1.0).abs() < 1e-12, "{p:?}");
        // Every class a point elsewhere: no class explains 4, and the leaf votes its majority.
        let points = tree(GaussianLikelihood::Moa, &[(3.0, 0), (3.0, 0), (5.0, 1)]);
        points.predict_proba(&[4.0], &mut p);
        assert!((p[0] - 2.0 / 3.0).abs() < 1e-12 && (p[1] - 1.0 / 3.0).abs() < 1e-12);
        // Class 2 seen only with the feature missing.
        let rows = [(2.0, 1), (4.0, 1), (f64::NAN, 2)];
        tree(GaussianLikelihood::Floored, &rows).predict_proba(&[3.0], &mut p);
        let (prior_1, prior_2) = (2.0 / 3.0, 1.0 / 3.0);
        let want = prior_2 / (prior_2 + prior_1 * normal);
        assert!((p[2] - want).abs() < 1e-12, "{p:?}");
        tree(GaussianLikelihood::Moa, &rows).predict_proba(&[3.0], &mut p);
        assert_eq!(p, [0.0, 1.0, 0.0]);
    }

    /// Naive Bayes under fast numerics (reciprocal variances and log-normalisers kept per
    /// leaf) gives the exact path's probabilities up to rounding, on rows with every value
    /// present and, through the exact path, with one missing; a leaf read back from JSON has
    /// no terms until it learns and predicts the same bits meanwhile.
    #[test]
    fn fast_naive_bayes_agrees_with_the_exact_path() {
        let spec = StreamSpec::numeric(7, 4).unwrap();
        let tree = |numerics| {
            HoeffdingTreeConfig {
                grace_period: 1e9,
                leaf_prediction: LeafPrediction::NaiveBayes,
                numerics,
                ..Default::default()
            }
            .build(&spec, 0)
            .unwrap()
        };
        let (mut exact, mut fast) = (tree(Numerics::Exact), tree(Numerics::Fast));
        let mut rng = crate::core::Rng::new(3);
        let row = |rng: &mut crate::core::Rng| -> (Vec<f64>, usize) {
            let y = (rng.uniform() * 4.0) as usize;
            let x = (0..7)
                .map(|j| (y * j) as f64 * 0.3 + rng.uniform() * (1.0 + j as f64))
                .collect();
            (x, y)
        };
        let (mut pe, mut pf) = ([0.0; 4], [0.0; 4]);
        for i in 0..400 {
            let (mut x, y) = row(&mut rng);
            if i % 7 == 3 {
                x[2] = f64::NAN;
            }
            exact.predict_proba(&x, &mut pe);
            fast.predict_proba(&x, &mut pf);
            for (a, b) in pe.iter().zip(&pf) {
                assert!((a - b).abs() < 1e-9, "row {i}: {pe:?} against {pf:?}");
            }
            let w = 0.5 + rng.uniform();
            exact.learn(&x, y, w);
            fast.learn(&x, y, w);
        }
        let back: HoeffdingTree =
            serde_json::from_str(&serde_json::to_string(&fast).unwrap()).unwrap();
        assert_eq!(back, fast);
        for _ in 0..50 {
            let (x, _) = row(&mut rng);
            let (mut p, mut q) = ([0.0; 4], [0.0; 4]);
            fast.predict_proba(&x, &mut p);
            back.predict_proba(&x, &mut q);
            assert_eq!(p.map(f64::to_bits), q.map(f64::to_bits));
        }
    }

    #[test]
    fn learns_a_threshold() {
        let spec = StreamSpec::numeric(1, 2).unwrap();
        let cfg = HoeffdingTreeConfig {
            grace_period: 50.0,
            ..Default::default()
        };
        let mut t = cfg.build(&spec, 0).unwrap();
        let mut rng = Rng::new(3);
        for _ in 0..2000 {
            let x = rng.uniform();
            t.learn(&[x], usize::from(x > 0.6), 1.0);
        }
        assert!(t.n_leaves() >= 2);
        assert_eq!(t.predict(&[0.1]), 0);
        assert_eq!(t.predict(&[0.95]), 1);
    }

    #[test]
    fn jgt_preset_draws_params_in_range() {
        let t = HoeffdingTreeConfig::jgt_paper()
            .build(&spec_xor(), 9)
            .unwrap();
        let p = t.params();
        assert!((5.0..=20.0).contains(&p.grace_period));
        assert!((0.01..=0.9).contains(&p.split_confidence));
        assert!((0.01..=0.9).contains(&p.tie_threshold));
        assert!(p.randomized.is_none());
    }

    #[test]
    fn validation_names_the_field() {
        let cfg = HoeffdingTreeConfig {
            split_confidence: 1.5,
            ..Default::default()
        };
        let err = cfg.build(&spec_xor(), 0).unwrap_err();
        assert!(err.to_string().contains("split_confidence"), "{err}");
    }

    #[test]
    fn budget_parks_least_promising_leaves() {
        let spec = StreamSpec::numeric(2, 2).unwrap();
        let cfg = HoeffdingTreeConfig {
            grace_period: 20.0,
            max_active_leaves: Some(2),
            ..Default::default()
        };
        let mut t = cfg.build(&spec, 0).unwrap();
        let mut rng = Rng::new(5);
        for _ in 0..5000 {
            let (a, b) = (rng.uniform(), rng.uniform());
            t.learn(&[a, b], usize::from((a > 0.5) ^ (b > 0.5)), 1.0);
        }
        assert!(t.n_active_leaves() <= 2);
    }

    /// Under `max_bytes` a tree that would grow far past the limit parks leaves and stays
    /// near it, still predicting better than chance; a limit it never reaches changes
    /// nothing; and a tree restored mid-stream parks where the uninterrupted one does.
    #[test]
    fn a_memory_limit_bounds_the_tree_and_resumes_exactly() {
        let spec = StreamSpec::numeric(8, 3).unwrap();
        let rows: Vec<(Vec<f64>, usize)> = {
            let mut rng = Rng::new(11);
            (0..20_000)
                .map(|_| {
                    let x: Vec<f64> = (0..8).map(|_| rng.uniform()).collect();
                    let y = ((x[0] * 3.0) as usize + usize::from(x[1] > 0.5)) % 3;
                    (x, if rng.uniform() < 0.1 { (y + 1) % 3 } else { y })
                })
                .collect()
        };
        let config = |max_bytes| HoeffdingTreeConfig {
            grace_period: 20.0,
            tie_threshold: 0.5,
            max_bytes,
            ..Default::default()
        };
        // Test-then-train over `rows`, from `tree`: the probabilities' bits and the hits.
        let run = |tree: &mut HoeffdingTree, rows: &[(Vec<f64>, usize)]| {
            let (mut bits, mut hits, mut out) = (Vec::new(), 0, [0.0; 3]);
            for (x, y) in rows {
                tree.predict_proba(x, &mut out);
                bits.extend(out.iter().map(|p| p.to_bits()));
                hits += usize::from(argmax(&out) == *y);
                tree.learn(x, *y, 1.0);
            }
            (bits, hits)
        };
        let mut free = config(None).build(&spec, 0).unwrap();
        let (free_bits, _) = run(&mut free, &rows);
        let unbounded = free.heap_bytes();
        let mut roomy = config(Some(4 * unbounded)).build(&spec, 0).unwrap();
        assert_eq!(run(&mut roomy, &rows).0, free_bits, "a limit never reached");

        let limit = unbounded / 8;
        let mut bounded = config(Some(limit)).build(&spec, 0).unwrap();
        let (bits, hits) = run(&mut bounded, &rows);
        assert!(
            bounded.heap_bytes() <= limit + limit / 4,
            "{} bytes against a limit of {limit} ({unbounded} unbounded)",
            bounded.heap_bytes()
        );
        assert!(bounded.n_active_leaves() < bounded.n_leaves());
        assert!(hits > rows.len() / 2, "{hits} of {} right", rows.len());

        let mut first = config(Some(limit)).build(&spec, 0).unwrap();
        let (mut resumed_bits, _) = run(&mut first, &rows[..7_000]);
        let mut restored: HoeffdingTree =
            serde_json::from_str(&serde_json::to_string(&first).unwrap()).unwrap();
        resumed_bits.extend(run(&mut restored, &rows[7_000..]).0);
        assert_eq!(resumed_bits, bits, "restored mid-stream");
    }
}
