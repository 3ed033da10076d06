//! One integration-test binary (each extra binary would relink the whole dependency tree).

mod common;
mod contract;
mod datasets;
mod oracles;

#[cfg(feature = "cli")]
mod bad_input;
#[cfg(feature = "cli")]
mod cli;
