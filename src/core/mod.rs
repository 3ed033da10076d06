//! The vocabulary every layer shares: rows, feature schemas, class sets, the RNG and the
//! numeric helpers of ALGORITHMS.md §0.
//!
//! A **row** is a borrowed dense `&[f64]` of length `d`: numeric features as values, nominal
//! features as category codes, `NaN` for missing. Learners never see Arrow.

mod dataset;
mod encoding;
pub mod limits;
pub mod math;
mod rng;
mod schema;

pub use dataset::Dataset;
pub use encoding::{Encodings, Ordinal};
pub use rng::Rng;
pub use schema::{
    ClassId, ClassSet, Feature, FeatureKind, MAX_CATEGORY_CODE, StreamSpec, Task, is_present,
    nominal_code,
};

/// The machine's cores (1 where unknown): what "all cores" means for every setting that
/// spreads work over threads.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Whether work may be spread over rayon's threads here: on a thread of a pool of several
/// (`streamboost replay` and `run` work on one). Elsewhere, a query engine's threads, already
/// one per core, keep their work to themselves, as more threads would only share the same
/// cores.
pub(crate) fn spread_here() -> bool {
    rayon::current_thread_index().is_some() && rayon::current_num_threads() > 1
}

/// Bytes a vector's buffer holds (its capacity, not its length: what the allocator gave).
pub fn vec_bytes<T>(v: &Vec<T>) -> usize {
    v.capacity() * std::mem::size_of::<T>()
}

/// Runs `f` on `len` zeroed `f64`s, on the stack when `len ≤ N` and on the heap otherwise:
/// scratch for a call on a hot path (a split search, a naive Bayes vote), sized by the class
/// or feature count, that allocates nothing in the usual case.
#[inline]
pub(crate) fn with_scratch<const N: usize, R>(len: usize, f: impl FnOnce(&mut [f64]) -> R) -> R {
    if len <= N {
        let mut stack = [0.0; N];
        f(&mut stack[..len])
    } else {
        f(&mut vec![0.0; len])
    }
}

/// Sets each of `vectors` to `len` zeros, keeping its buffer: a workspace sized for `len`
/// classes or labels.
pub(crate) fn zeroed<const N: usize>(len: usize, vectors: [&mut Vec<f64>; N]) {
    for v in vectors {
        v.clear();
        v.resize(len, 0.0);
    }
}
