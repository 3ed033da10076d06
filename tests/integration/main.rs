//! One integration-test binary (each extra binary would relink the whole dependency tree).

#![allow(clippy::needless_range_loop, clippy::cloned_ref_to_slice_refs)]

mod common;
mod contract;
mod delay;
mod golden;
mod oracles;
mod potentials;
mod ranking;

#[cfg(feature = "columnar")]
mod checkpoint;
#[cfg(feature = "columnar")]
mod datasets;
#[cfg(feature = "columnar")]
mod defaults;
#[cfg(feature = "stream")]
mod delayed_operator;
#[cfg(feature = "columnar")]
mod mutations;
#[cfg(feature = "columnar")]
mod operator;

#[cfg(feature = "cli")]
mod bad_input;
#[cfg(all(feature = "ballista", feature = "cli"))]
mod ballista;
#[cfg(feature = "cli")]
mod cli;
#[cfg(feature = "cli")]
mod drift;
#[cfg(feature = "cli")]
mod multi_label;
#[cfg(feature = "cli")]
mod run_job;
#[cfg(all(feature = "sql", feature = "cli"))]
mod sql;
#[cfg(feature = "cli")]
mod user_data;
