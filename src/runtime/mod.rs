//! The streaming runtime: what runs a model over a stream and keeps it across restarts.
//! Algorithms know nothing of it; it knows algorithms only through [`crate::Classifier`]
//! and [`crate::model::Model`].
//!
//! * [`delay`]: labels that arrive after their rows (the pending store, its bounds and
//!   counters), shared by the replay, the operator and SQL; free of Arrow.
//! * `cursor`: a model's place in its stream around the Arrow operator: counters, position,
//!   learning once, labels that arrive later (their record batches), save and resume.
//! * `keyed`: one model per value of a key column, within a memory budget, and its
//!   checkpoint (a directory of packs).
//! * `replay`: a logged stream replayed test-then-train, with checkpoints.
//! * `live`: a model bound to a checkpoint and a commit policy, one model or one per key.
//! * `job`: a long-running job over a directory of files, or a pipe, exactly once.
//! * `stream`: the record-batch operators over async streams (tokio).
//!
//! Each module's doc says what happens on restart, on cancel and on a crash.

#[cfg(feature = "columnar")]
pub mod cursor;
pub mod delay;
#[cfg(feature = "columnar")]
pub mod job;
#[cfg(feature = "columnar")]
pub mod keyed;
#[cfg(feature = "columnar")]
pub mod live;
#[cfg(feature = "columnar")]
pub mod replay;
#[cfg(feature = "stream")]
pub mod stream;

#[cfg(feature = "columnar")]
pub use cursor::{
    BatchOperator, Cursor, OperatorStats, Position, Side, TimeMerge, Waiting, outcome_schema,
};
#[cfg(feature = "columnar")]
pub use keyed::checkpoint::{KeyEntry, KeyedStore, Manifest};
#[cfg(feature = "columnar")]
pub use keyed::{KeyMemory, KeyedOperator, OperatorFactory, SpillFn};
