//! The one source of randomness: a seeded, portable ChaCha8 generator owned by each model.
//!
//! `rand`'s `StdRng` is documented as non-portable across versions, so models name their
//! generator. Ensemble members get distinct child streams derived from the parent seed, so
//! that adding a learner never shifts the random numbers the others see.

use rand::{Rng as _, RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// A seeded, serializable random number generator.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "RngState", from = "RngState")]
pub struct Rng(ChaCha8Rng);

/// The generator's complete state: key, stream and position. The 128-bit word position is
/// kept as two halves, as self-describing formats (JSON inside tagged enums) have no u128.
#[derive(Clone, Serialize, Deserialize)]
struct RngState {
    seed: [u8; 32],
    stream: u64,
    word_pos: [u64; 2],
}

impl From<Rng> for RngState {
    fn from(rng: Rng) -> Self {
        let pos = rng.0.get_word_pos();
        RngState {
            seed: rng.0.get_seed(),
            stream: rng.0.get_stream(),
            word_pos: [(pos >> 64) as u64, pos as u64],
        }
    }
}

impl From<RngState> for Rng {
    fn from(state: RngState) -> Self {
        let mut rng = ChaCha8Rng::from_seed(state.seed);
        rng.set_stream(state.stream);
        rng.set_word_pos((u128::from(state.word_pos[0]) << 64) | u128::from(state.word_pos[1]));
        Rng(rng)
    }
}

impl Rng {
    /// A generator from a 64-bit seed.
    pub fn new(seed: u64) -> Self {
        Rng(ChaCha8Rng::seed_from_u64(seed))
    }

    /// The generator of ensemble member `index` under `seed`: the same ChaCha key, stream
    /// `index + 1` (stream 0 is the parent's), so members' sequences never overlap.
    pub fn child(seed: u64, index: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(index.wrapping_add(1));
        Rng(rng)
    }

    /// A uniform draw from `[0, 1)`.
    #[inline]
    pub fn uniform(&mut self) -> f64 {
        self.0.random::<f64>()
    }

    /// A uniform draw from `[lo, hi)` (`lo` when the interval is empty).
    #[inline]
    pub fn uniform_in(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.uniform()
    }

    /// `10^U[log10 lo, log10 hi)`: log-uniform on `[lo, hi)`, for scale parameters.
    pub fn log_uniform(&mut self, lo: f64, hi: f64) -> f64 {
        10f64.powf(self.uniform_in(lo.log10(), hi.log10()))
    }

    /// A uniform index in `0..n` (`n > 0`).
    #[inline]
    pub fn below(&mut self, n: usize) -> usize {
        debug_assert!(n > 0);
        self.0.random_range(0..n)
    }

    /// A draw from Poisson(`lambda`) (`rand_distr`'s exact sampler); 0 when `lambda` is not
    /// positive and finite. Online bagging and boosting replay a row this many times (Oza
    /// 2005).
    pub fn poisson(&mut self, lambda: f64) -> u64 {
        match rand_distr::Poisson::new(lambda) {
            Ok(d) => rand_distr::Distribution::<f64>::sample(&d, &mut self.0) as u64,
            Err(_) => 0,
        }
    }

    /// A draw from `sampler` (a `rand_distr` distribution over `f64`) with this generator.
    pub fn sample(&mut self, sampler: &impl rand_distr::Distribution<f64>) -> f64 {
        sampler.sample(&mut self.0)
    }

    /// A raw 64-bit draw.
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Fisher–Yates shuffle of a slice.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i + 1);
            items.swap(i, j);
        }
    }

    /// `k` distinct indices from `0..n`, in increasing order (all of them if `k >= n`).
    pub fn sample_indices(&mut self, n: usize, k: usize) -> Vec<usize> {
        let mut all: Vec<usize> = (0..n).collect();
        if k < n {
            // Partial Fisher–Yates: the first k slots become a uniform k-subset.
            for i in 0..k {
                let j = i + self.below(n - i);
                all.swap(i, j);
            }
            all.truncate(k);
            all.sort_unstable();
        }
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_round_trips_mid_stream_through_json() {
        let mut rng = Rng::child(11, 3);
        for _ in 0..1001 {
            rng.uniform();
        }
        // Inside an internally tagged enum, as models are serialized.
        #[derive(Serialize, Deserialize)]
        #[serde(tag = "kind")]
        enum Holder {
            A { rng: Rng },
        }
        let json = serde_json::to_string(&Holder::A { rng: rng.clone() }).unwrap();
        let Holder::A { rng: mut back } = serde_json::from_str(&json).unwrap();
        assert_eq!(back, rng);
        for _ in 0..100 {
            assert_eq!(back.next_u64(), rng.next_u64());
        }
    }
}
