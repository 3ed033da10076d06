//! Which of a model's learners were replaced after a drift of their error, and at which row:
//! what the replay report, its curve and `--plot` say of a model whose learners are adaptive
//! (`--drift-detector`, `weak::adaptive`). A model of Hoeffding adaptive trees (`--weak
//! hat`, `weak::hat`) without a detector of its own is followed the same way, a subtree
//! swapped in counting as a replacement of its tree and an alternate started as a warning;
//! under `--drift-detector`, the adaptive learners around the trees are followed instead.
//! A model with both (the led boosters' defaults: an adaptive lead, and members whose
//! response the lead wakes) follows the learners, and counts the trees' swaps beside them
//! ([`DriftEvents::subtrees_swapped`]).
//!
//! The log watches the model from outside, through its [`Structure`], after each row whose
//! learning the model has finished: learners count their own replacements, and a replacement
//! seen after row `r` happened while the model learnt row `r`, or, where rows are learnt
//! several at a time (a booster's learners on two threads), one of the rows of that batch.
//! A model resumed from a checkpoint is logged from where it resumed. The log keeps the
//! first [`DriftLog::KEPT`] events and counts the rest.

use serde::{Deserialize, Serialize};

use crate::weak::{Adaptive, HoeffdingAdaptiveTree, Structure};

/// One learner replaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Replacement {
    /// Rows seen when it happened (the row that triggered it is the `row`-th).
    pub row: u64,
    /// The learner, in the model's member order (a booster's members in turn, one-vs-all's
    /// class by class).
    pub member: usize,
}

/// What a replacement replaces.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Replaced {
    /// A whole learner (`--drift-detector`).
    #[default]
    Learners,
    /// A subtree of a Hoeffding adaptive tree.
    Subtrees,
}

/// The drift events of a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DriftEvents {
    /// What the replacements replace.
    #[serde(default)]
    pub what: Replaced,
    /// Adaptive learners (or Hoeffding adaptive trees) in the model.
    pub learners: usize,
    /// Replacements during the run.
    pub replaced: u64,
    /// Warnings during the run (a background learner started).
    pub warnings: u64,
    /// The first replacements, in order.
    pub events: Vec<Replacement>,
    /// Replacements beyond those kept.
    pub not_kept: u64,
    /// Where the events are learners replaced: the subtrees the model's Hoeffding adaptive
    /// trees swapped in meanwhile (an adaptive lead's).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub subtrees_swapped: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// What a model's drift response has done over its life, as its learners count it (a
/// checkpoint keeps the counts): what `run`'s drift events say, and what a keyed
/// checkpoint's manifest records of each key.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DriftCounts {
    /// Learners replaced after a drift of their error (`weak::adaptive`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub learners_replaced: u64,
    /// Subtrees the model's Hoeffding adaptive trees swapped in (an adaptive lead's).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub subtrees_swapped: u64,
}

impl std::ops::Add for DriftCounts {
    type Output = DriftCounts;
    fn add(self, other: DriftCounts) -> DriftCounts {
        DriftCounts {
            learners_replaced: self.learners_replaced + other.learners_replaced,
            subtrees_swapped: self.subtrees_swapped + other.subtrees_swapped,
        }
    }
}

impl std::iter::Sum for DriftCounts {
    fn sum<I: Iterator<Item = DriftCounts>>(iter: I) -> DriftCounts {
        iter.fold(DriftCounts::default(), |a, b| a + b)
    }
}

impl DriftCounts {
    /// The counts of `model`; `None` for a model with neither adaptive learners nor
    /// Hoeffding adaptive trees.
    pub fn of(model: &impl Structure) -> Option<DriftCounts> {
        let mut learners: Vec<&Adaptive> = Vec::new();
        model.learners(&mut learners);
        let mut trees: Vec<&HoeffdingAdaptiveTree> = Vec::new();
        model.learners(&mut trees);
        (!learners.is_empty() || !trees.is_empty()).then(|| DriftCounts {
            learners_replaced: learners.iter().map(|a| a.replacements()).sum(),
            subtrees_swapped: trees.iter().map(|t| t.counts().swapped).sum(),
        })
    }

    /// Whether anything was replaced or swapped.
    pub fn any(&self) -> bool {
        self.learners_replaced > 0 || self.subtrees_swapped > 0
    }

    /// What happened between `earlier` and these counts of the same model (counts only
    /// grow; a model rebuilt in between counts from zero again).
    pub fn since(&self, earlier: DriftCounts) -> DriftCounts {
        DriftCounts {
            learners_replaced: self
                .learners_replaced
                .saturating_sub(earlier.learners_replaced),
            subtrees_swapped: self
                .subtrees_swapped
                .saturating_sub(earlier.subtrees_swapped),
        }
    }
}

/// The Hoeffding adaptive trees beside the adaptive learners a log follows.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum TreesBeside {
    /// Not looked for yet.
    #[default]
    Unseen,
    /// The model has none (it holds what its config built: none will come).
    None,
    /// Their swaps at the first look.
    SwappedAtStart(u64),
}

/// Follows a model's adaptive learners row by row; see the module docs.
#[derive(Debug, Default)]
pub struct DriftLog {
    /// Each learner's replacements and warnings when last looked at (`None` before the
    /// first look).
    counts: Option<Vec<(u64, u64)>>,
    /// Where the events are learners replaced: the model's Hoeffding adaptive trees.
    trees_beside: TreesBeside,
    /// What was seen since the first look.
    events: DriftEvents,
}

impl DriftLog {
    /// Replacements kept in [`DriftEvents::events`].
    pub const KEPT: usize = 10_000;

    /// Looks at `model` after it learnt the `row`-th row.
    pub fn observe(&mut self, row: u64, model: &impl Structure) {
        // A model without adaptive learners at the first look never has any (the drift
        // response is its config's): nothing to walk on every row after.
        if self.counts.as_ref().is_some_and(Vec::is_empty) {
            return;
        }
        let now = self.counts_of(model);
        let counts = self.counts.get_or_insert_with(|| now.clone());
        // A model that grows learners (one-vs-all's booster for a class met mid-stream) is
        // followed from there.
        counts.resize(now.len(), (0, 0));
        for (member, (&(replaced, warned), before)) in now.iter().zip(counts).enumerate() {
            for _ in before.0..replaced {
                self.events.replaced += 1;
                match self.events.events.len() < Self::KEPT {
                    true => self.events.events.push(Replacement { row, member }),
                    false => self.events.not_kept += 1,
                }
            }
            self.events.warnings += warned - before.1;
            *before = (replaced, warned);
        }
        self.events.learners = now.len();
        if self.events.what == Replaced::Learners && self.trees_beside != TreesBeside::None {
            let mut trees: Vec<&HoeffdingAdaptiveTree> = Vec::new();
            model.learners(&mut trees);
            let swapped: u64 = trees.iter().map(|t| t.counts().swapped).sum();
            match self.trees_beside {
                TreesBeside::Unseen if trees.is_empty() => self.trees_beside = TreesBeside::None,
                TreesBeside::Unseen => self.trees_beside = TreesBeside::SwappedAtStart(swapped),
                TreesBeside::SwappedAtStart(start) => {
                    self.events.subtrees_swapped = swapped - start
                }
                TreesBeside::None => {}
            }
        }
    }

    /// Each followed learner's replacements and warnings: the adaptive learners', or, in a
    /// model without them, the Hoeffding adaptive trees' swaps and alternates started.
    fn counts_of(&mut self, model: &impl Structure) -> Vec<(u64, u64)> {
        if self.events.what == Replaced::Learners {
            let mut learners: Vec<&Adaptive> = Vec::new();
            model.learners(&mut learners);
            if !learners.is_empty() || self.counts.is_some() {
                return learners
                    .iter()
                    .map(|a| (a.replacements(), a.warnings()))
                    .collect();
            }
        }
        let mut trees: Vec<&HoeffdingAdaptiveTree> = Vec::new();
        model.learners(&mut trees);
        if !trees.is_empty() {
            self.events.what = Replaced::Subtrees;
        }
        trees
            .iter()
            .map(|t| (t.counts().swapped, t.counts().started))
            .collect()
    }

    /// What was seen; `None` for a model without adaptive learners.
    pub fn finish(self) -> Option<DriftEvents> {
        (self.events.learners > 0).then_some(self.events)
    }
}
