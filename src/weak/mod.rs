//! Weak learners: online, weighted, each a [`crate::Classifier`].

pub mod hoeffding;

pub use hoeffding::{HoeffdingTree, HoeffdingTreeConfig};
