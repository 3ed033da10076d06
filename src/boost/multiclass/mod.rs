//! Multiclass boosters of Jung, Goetz & Tewari (2017), "Online Multiclass Boosting".

pub mod ada_olm;
pub mod cost;
pub mod mbbm;
pub mod ova;
pub mod potential;

pub use ada_olm::{AdaBoostOlm, AdaBoostOlmConfig};
pub use mbbm::{OnlineMbbm, OnlineMbbmConfig, WeightNorm};
pub use ova::{BinaryBundle, BinaryBundleConfig, OneVsAll, OneVsAllConfig, one_vs_all};
