//! Multiclass boosters of Jung, Goetz & Tewari (2017), "Online Multiclass Boosting".

pub mod ada_olm;
pub mod cost;
pub mod mbbm;
pub mod ova;
pub mod potential;

pub use ada_olm::{AdaBoostOlm, AdaBoostOlmConfig};
pub use mbbm::{OnlineMbbm, OnlineMbbmConfig, WeightNorm};
pub use ova::{BinaryBundle, BinaryBundleConfig, OneVsAll, OneVsAllConfig, one_vs_all};

use crate::boost::LearnerScales;
use crate::core::ClassId;

/// The members as a cost-matrix booster's forward pass uses them: scored only, or scored
/// then taught row label `y` with row weight `weight` (learner `i` learns after it votes,
/// with the weight the votes of learners `< i` give it, times its scale).
enum Pass<'a, L> {
    Score(&'a [L]),
    Learn(&'a mut [L], &'a mut LearnerScales, ClassId, f64),
}

impl<L> Pass<'_, L> {
    /// The number of members.
    fn len(&self) -> usize {
        match self {
            Pass::Score(learners) => learners.len(),
            Pass::Learn(learners, ..) => learners.len(),
        }
    }
}
