//! Multiclass boosters of Jung, Goetz & Tewari (2017), "Online Multiclass Boosting".

pub mod ada_olm;
pub mod cost;
pub mod potential;

pub use ada_olm::{AdaBoostOlm, AdaBoostOlmConfig};
