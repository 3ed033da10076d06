//! Exact potentials of the multiclass 0-1 loss for OnlineMBBM (ALGORITHMS.md §P).
//!
//! `φ_n^r(s) = P(∃ l ≠ r : s_l + X_l ≥ s_r + X_r)`, `X ~ Multinomial(n, u_γ^r)` (\[JGT\] eq. 3,
//! \[MS\] Thm. 5), where `u_γ^r` puts `p = (1−γ)/k + γ` on the true label `r` and
//! `q = (1−γ)/k` on each other label. The authors estimated these by Monte Carlo; here they
//! are computed exactly:
//!
//! * **Gap form** (§P.1): `φ` depends only on `n` and the multiset of gaps `d_l = s_r − s_l`,
//!   kept as sorted `(gap, multiplicity)` groups. A gap `≤ −n−1` makes the error certain; gaps
//!   `≥ n+2` are "sinks" (labels that can never catch up) and are clipped to `n+2` for the
//!   cache.
//! * **Conditioning on the true label's count** (§P.2.1): with `v = X_r ~ Bin(n, p)` the other
//!   `U = n − v` draws are uniform over the `m = k−1` other labels, and the row is correct iff
//!   each label `l` gets at most `c_l = d_l − 1 + v` of them.
//! * **Probability-only convolutions** (§P.2.2): the chance that `U` balls leave every bin
//!   within its cap is a chain of binomial convolutions of per-group vectors, every quantity a
//!   probability (no factorials, no cancellation).
//! * **A table built once** (§P.2.3): `F[m'][c][b] = P(max occupancy ≤ c | b balls, m' bins)`,
//!   so a group's vector is a slice of the table.
//! * **Leave-one-out** (§P.2.4): the potentials at all `k` neighbours `s + e_l` come with the
//!   base value in one pass ("a bundle"): lowering one bin's cap by one changes the answer by
//!   `−Bin(c; U, 1/m)·Q'(U − c)` with `Q'` the problem without that bin, built from prefix and
//!   suffix products; raising every cap (the `l = r` neighbour) is the next `v`'s chain read
//!   one entry further.
//! * **A cache** keyed by `n` and the sorted, clipped gap groups (§P.2.7), capped in size
//!   (cleared when full; the early learners' bundles, the expensive ones, come back at once).
//! * **Base values along diagonals**: a vote for the true label moves `(n, G)` to
//!   `(n − 1, G + 1)` and leaves every term `Q_m` of §P.2.1 in place, so the chains of the
//!   highest state give every lower one in `O(n)` (see `Diagonal`); a higher state only
//!   adds the chains of the balls it reads beyond the cached ones. With the recursion
//!   (\[JGT\] eq. 3), an argmax-vote weight needs two such values, on one diagonal, and no
//!   bundle ([`PotentialEngine::true_label_weight`]).
//! * **Loose bins** (diagonal values): two bins pass caps `c, c'` together only if
//!   `c + c' + 2 ≤ U`, so of the bins with `2c + 2 > U` at most one passes and those events
//!   are disjoint. Only the other ("tight") groups are convolved; each loose group costs
//!   `O(U)`, a tail of one bin's count (see `PotentialEngine::diagonal_values`).
//! * **Free groups merged**: at a given `v`, groups whose cap reaches the balls left
//!   constrain nothing and are convolved as one all-ones group.
//! * **Supports**: `m` bins capped at `c` hold at most `m·c` balls, so a group's vector and
//!   every prefix product end early; a convolution only sums the terms both supports reach,
//!   in blocks of eight outputs kept in registers (also compiled for AVX, with the same
//!   operations in the same order: the same bits on every x86-64 machine).
//! * **Groups free at every read** key a diagonal as sinks do, so diagonals that differ
//!   only in such labels share their values.
//! * **Certified pruning** (§P.2.8 (a), (b); off by default): labels that pass the true one
//!   with chance `≤ ε/(k−1)` become sinks, and bundles within `ε` of a certain error are one.

use rustc_hash::FxHashMap;

/// Default cap on cached bundles (§P.2.7).
pub const DEFAULT_CACHE_CAP: usize = 1 << 20;

/// A bound on the rounding error of a weight `Σ_l (C[y][l] − C[y][y])` computed from these
/// potentials. Each potential sums at most `O(N²)` probabilities, each within a few ulps,
/// so its error is of order `N²·2⁻⁵³`: about `1e-12` at `N = 100`, `1e-10` at `N = 1000`
/// (a bound from the operation count, not a measurement). A weight at or below this is zero
/// within rounding: the row's outcome is decided, and the learner skips it. Without the
/// floor, whether such a row reaches a tree would depend on the order of a sum.
pub const WEIGHT_NOISE: f64 = 1e-10;

/// `φ_n` at a state and at its neighbours (§P.2.4), for one true label.
#[derive(Debug, Clone, PartialEq)]
pub struct Bundle {
    /// `φ_n(s)`.
    pub base: f64,
    /// `φ_n(s + e_r)`: the true label gets one more vote (every gap `+1`).
    pub plus: f64,
    /// `φ_n(s + e_l)` for `l` in each gap group, in the order of the groups (gap ascending).
    pub minus: Vec<f64>,
}

/// The base values of one diagonal. A vote for the true label moves a row from `(n, G)` to
/// `(n − 1, G + 1)`: one draw fewer, every gap one larger. Along such moves `e_g = n + d_g`
/// stays, and so does every term of §P.2.1 written in the balls `U = n − v` left to the
/// other labels: `Q_m(U; d_g − 1 + v) = Q_m(U; e_g − 1 − U) =: R(U)`. Only the binomial
/// weights of the true label's count change. So `R` is a function of `U` alone on the
/// diagonal, and each state reads it in `O(n)`: `(n, G)` reads `U` from `⌊e_min/2⌋` (below,
/// every cap exceeds the balls) up to `min(n, e_min − 1)` (above, some cap is negative).
/// The lower end is the same for every state, so a state higher than any seen so far only
/// adds the values above the last. This covers both values of an argmax-vote weight,
/// `φ_{n+1}(s)` and `φ_n(s + e_y)`, and every later learner while the votes go to the true
/// label.
#[derive(Debug, Clone)]
struct Diagonal {
    /// `R(U)` for `U = ⌊e_min/2⌋, ⌊e_min/2⌋ + 1, …`.
    values: Vec<f64>,
}

/// Binomial probabilities `Bin(j; U, a/t)` for the ratios that occur (`t ≤ k−1`), computed
/// once per ratio for every `U ≤` the largest count.
#[derive(Debug, Clone)]
struct BinomialRows {
    width: usize,
    /// `ln j!` for `j < width`.
    ln_fact: Vec<f64>,
    /// Per ratio `a/t` (at `a · stride + t`, empty until first used): `width × width`
    /// entries, row `U` holding `Bin(·; U, a/t)`.
    rows: Vec<Vec<f64>>,
    /// Per ratio `ρ = a/t` (every `0 < a < t ≤ k−1`), the factors of the binomial
    /// convolution written as a plain one (see [`convolve_from`]): `ρ^j c^j / j!` then
    /// `(1 − ρ)^i c^i / i!`, `width` each.
    factors: Vec<Vec<f64>>,
    /// `U! / c^U`, which turns the plain convolution back into probabilities.
    out_scale: Vec<f64>,
    stride: usize,
}

impl BinomialRows {
    fn new(width: usize, max_bins: usize) -> Self {
        let mut ln_fact = vec![0.0; width + 1];
        for j in 1..=width {
            ln_fact[j] = ln_fact[j - 1] + (j as f64).ln();
        }
        let stride = max_bins + 1;
        let ln_c = scale_base(width).ln();
        let out_scale = (0..width)
            .map(|u| (ln_fact[u] - u as f64 * ln_c).exp())
            .collect();
        // Every ratio a/t with 0 < a < t ≤ max_bins: the convolutions of a bundle split its
        // bins in ways that depend on the caps of each `v`, and the factors are 2·width
        // numbers a ratio.
        let mut factors = vec![Vec::new(); stride * stride];
        let factor = |j: usize, ln_p: f64| (j as f64 * (ln_p + ln_c) - ln_fact[j]).exp();
        for t in 2..=max_bins {
            for a in 1..t {
                let rho = a as f64 / t as f64;
                let (ln_rho, ln_rest) = (rho.ln(), (-rho).ln_1p());
                factors[a * stride + t] = (0..width)
                    .map(|j| factor(j, ln_rho))
                    .chain((0..width).map(|i| factor(i, ln_rest)))
                    .collect();
            }
        }
        BinomialRows {
            width,
            ln_fact,
            rows: vec![Vec::new(); stride * stride],
            factors,
            out_scale,
            stride,
        }
    }

    /// `Bin(j; u, ρ)` by the log-gamma form of ALGORITHMS.md §0, with the exact limits.
    fn pmf(&self, u: usize, j: usize, rho: f64) -> f64 {
        if j > u {
            return 0.0;
        }
        if rho <= 0.0 {
            return f64::from(j == 0);
        }
        if rho >= 1.0 {
            return f64::from(j == u);
        }
        let lf = &self.ln_fact;
        (lf[u] - lf[j] - lf[u - j] + j as f64 * rho.ln() + (u - j) as f64 * (-rho).ln_1p()).exp()
    }

    /// Makes sure the rows of ratio `a/t` exist.
    fn ensure(&mut self, a: usize, t: usize) {
        if !self.rows[a * self.stride + t].is_empty() {
            return;
        }
        let w = self.width;
        let rho = a as f64 / t as f64;
        let mut table = vec![0.0; w * w];
        for u in 0..w {
            for j in 0..=u {
                table[u * w + j] = self.pmf(u, j, rho);
            }
        }
        self.rows[a * self.stride + t] = table;
    }

    /// The convolution factors of ratio `a/t`.
    fn factors(&self, a: usize, t: usize) -> (&[f64], &[f64]) {
        self.factors[a * self.stride + t].split_at(self.width)
    }

    /// `Bin(·; u, a/t)` (call [`Self::ensure`] first).
    fn row(&self, a: usize, t: usize, u: usize) -> &[f64] {
        let w = self.width;
        &self.table(a, t)[u * w..u * w + u + 1]
    }

    /// All rows of ratio `a/t`.
    fn table(&self, a: usize, t: usize) -> &[f64] {
        &self.rows[a * self.stride + t]
    }
}

/// The engine: the occupancy table, binomial rows and the bundle cache for one `(k, γ)` and
/// up to `max_draws` remaining draws.
#[derive(Debug, Clone)]
pub struct PotentialEngine {
    k: usize,
    gamma: f64,
    max_draws: usize,
    /// Entries per table axis: counts and caps `0..width` (`max_draws + 2`, so that the plus
    /// neighbour can read one entry past `n`).
    width: usize,
    /// `F[m'][c][b]` at `(m' · width + c) · width + b`, `m' = 0..k−1`.
    table: Vec<f64>,
    binomial: BinomialRows,
    /// `Bin(v; n, p)` for `n = 0..=max_draws`, row `n` at `n · width`.
    true_counts: Vec<f64>,
    /// `P(Bin(n, p) ≥ v)` for `v = 0..=n + 1`, row `n` at `n · width`.
    true_tails: Vec<f64>,
    /// Cached bundles, and their index by key.
    bundles: Vec<Bundle>,
    index: FxHashMap<Box<[i32]>, u32>,
    /// Cached diagonals of base values, by their key (see [`Diagonal`]).
    diagonals: FxHashMap<Box<[i32]>, u32>,
    /// The diagonals, in the order they were first met.
    diagonal_store: Vec<Diagonal>,
    /// The key of the diagonal last read and its slot: a row stays on one diagonal while the
    /// votes go to the true label, so most lookups repeat the last one.
    last_diagonal: (Vec<i32>, usize),
    cache_cap: usize,
    /// The certified pruning bound ε of §P.2.8 (0: exact) and the walk it reads.
    epsilon: f64,
    walk: GapWalk,
    /// Bundles computed (cache misses) and served from the cache.
    computed: u64,
    hits: u64,
    scratch: Scratch,
}

/// Buffers of a bundle or a diagonal's values, reused.
#[derive(Debug, Clone, Default)]
struct Scratch {
    /// A cache key: counts and gaps fit in 32 bits (`N` and `k` far below 2³¹).
    key: Vec<i32>,
    groups: Vec<(i64, usize)>,
    /// Prefix products (bundles); the product of the tight groups (diagonals).
    prefix: Vec<f64>,
    /// Suffix products (bundles); the next tight product (diagonals).
    suffix: Vec<f64>,
    /// A leave-one-out product (bundles); `T(j)` of the loose tails (diagonals).
    other: Vec<f64>,
    /// The scaled operands of one convolution.
    conv: Vec<f64>,
    caps: Vec<i64>,
    prefix_support: Vec<usize>,
    suffix_support: Vec<usize>,
    before: Vec<usize>,
    correct_minus: Vec<f64>,
}

impl PotentialEngine {
    /// An engine for `k ≥ 2` classes, edge `γ ∈ (0, 1)` and at most `max_draws` remaining
    /// learners. Builds the occupancy table (`O(k·N³/3)` multiply-adds once).
    pub fn new(k: usize, gamma: f64, max_draws: usize) -> Self {
        assert!(k >= 2, "k >= 2");
        let width = max_draws + 2;
        let mut binomial = BinomialRows::new(width, k - 1);
        let m = k - 1;
        let mut table = vec![0.0; (m + 1) * width * width];
        let at = |mp: usize, c: usize, b: usize| (mp * width + c) * width + b;
        // Zero bins hold only zero balls.
        for c in 0..width {
            table[at(0, c, 0)] = 1.0;
        }
        for mp in 1..=m {
            binomial.ensure(1, mp);
            for c in 0..width {
                for b in 0..width {
                    table[at(mp, c, b)] = if c >= b {
                        1.0
                    } else {
                        // One bin takes x ≤ c balls, the other m'−1 bins the rest.
                        let row = binomial.row(1, mp, b);
                        (0..=c).map(|x| row[x] * table[at(mp - 1, c, b - x)]).sum()
                    };
                }
            }
        }
        let p = (1.0 - gamma) / k as f64 + gamma;
        let mut true_counts = vec![0.0; width * width];
        let mut true_tails = vec![0.0; width * width];
        for n in 0..=max_draws {
            for v in (0..=n).rev() {
                let at = n * width + v;
                true_counts[at] = binomial.pmf(n, v, p);
                true_tails[at] = true_tails[at + 1] + true_counts[at];
            }
        }
        PotentialEngine {
            k,
            gamma,
            max_draws,
            width,
            table,
            binomial,
            true_counts,
            true_tails,
            bundles: Vec::new(),
            index: FxHashMap::default(),
            diagonals: FxHashMap::default(),
            diagonal_store: Vec::new(),
            last_diagonal: (Vec::new(), 0),
            cache_cap: DEFAULT_CACHE_CAP,
            epsilon: 0.0,
            walk: GapWalk::default(),
            computed: 0,
            hits: 0,
            scratch: Scratch::default(),
        }
    }

    /// Caps the cache at `cap` bundles (0 disables it).
    pub fn with_cache_cap(mut self, cap: usize) -> Self {
        self.cache_cap = cap;
        self
    }

    /// Prunes with the certified bound `epsilon` (§P.2.8): every potential is then within
    /// `epsilon` of the exact one (0: exact, the default).
    pub fn with_pruning(mut self, epsilon: f64) -> Self {
        assert!(epsilon >= 0.0, "epsilon >= 0");
        self.epsilon = epsilon;
        if epsilon > 0.0 {
            self.walk = GapWalk::new(self.k, self.gamma, self.max_draws);
        }
        self.bundles.clear();
        self.index.clear();
        self.clear_diagonals();
        self
    }

    /// The classes, edge and largest `n` this engine serves.
    pub fn shape(&self) -> (usize, f64, usize) {
        (self.k, self.gamma, self.max_draws)
    }

    /// Bundles computed and served from the cache so far.
    pub fn counts(&self) -> (u64, u64) {
        (self.computed, self.hits)
    }

    /// `F[m'][c][·]`, the occupancy probabilities of `m'` bins capped at `c` (clamped: a cap
    /// past the largest count constrains nothing).
    fn occupancy(&self, bins: usize, cap: i64) -> &[f64] {
        let c = (cap.max(0) as usize).min(self.width - 1);
        let start = (bins * self.width + c) * self.width;
        &self.table[start..start + self.width]
    }

    /// [`Self::occupancy`] up to its support, at most `len` entries: `bins` bins capped at
    /// `cap ≥ 0` hold at most `bins · cap` balls.
    fn occupied(&self, bins: usize, cap: i64, len: usize) -> &[f64] {
        let support = (bins * cap.max(0) as usize).saturating_add(1);
        &self.occupancy(bins, cap)[..support.min(len)]
    }

    /// `φ_n^r(s)`: from a cached bundle, else from its diagonal (see `Diagonal`).
    pub fn phi(&mut self, n: usize, s: &[i64], r: usize) -> f64 {
        let groups = self.gather(n, s, r);
        let value = match self.lookup(n, &groups) {
            Some(at) => self.bundles[at].base,
            None => self.along_diagonal(n, &groups),
        };
        self.scratch.groups = groups;
        value
    }

    /// Row `r` of the cost matrix at `s` (\[JGT\] eq. 4): `row[l] = φ_n^r(s + e_l)`.
    pub fn cost_row(&mut self, n: usize, s: &[i64], r: usize, row: &mut [f64]) {
        let groups = self.gather(n, s, r);
        let at = self.cache_bundle(n, &groups);
        let bundle = &self.bundles[at];
        for (l, c) in row.iter_mut().enumerate() {
            *c = if l == r {
                bundle.plus
            } else {
                bundle.minus[group_of(&groups, self.key_gap(n, s[r] - s[l]))]
            };
        }
        self.scratch.groups = groups;
    }

    /// The weight `w = Σ_l (C[y][l] − C[y][y])` OnlineMBBM hands learner `i` (\[JGT\] Alg. 1
    /// line 9), with `C[y][l] = φ_n^y(s + e_l)`, from two base values instead of a bundle:
    /// by the recursion (\[JGT\] eq. 3) `Σ_l u_l·C[y][l] = φ_{n+1}^y(s)`, and since
    /// `u_y + (k−1)·q = 1`, `w = (φ_{n+1}^y(s) − φ_n^y(s + e_y))/q`. Needs `n < max_draws`.
    pub fn true_label_weight(&mut self, n: usize, s: &[i64], y: usize) -> f64 {
        // `(n + 1, s)` and `(n, s + e_y)` lie on one diagonal: one lookup gives both.
        let groups = self.gather(n + 1, s, y);
        let [above, below] = self.along_diagonal_pair(n + 1, &groups);
        self.scratch.groups = groups;
        let q = (1.0 - self.gamma) / self.k as f64;
        ((above - below) / q).max(0.0)
    }

    /// The sorted gap groups of true label `r` at state `s`, keyed by [`Self::key_gap`] (a
    /// buffer taken from the scratch: give it back).
    fn gather(&mut self, n: usize, s: &[i64], r: usize) -> Vec<(i64, usize)> {
        let mut groups = std::mem::take(&mut self.scratch.groups);
        groups.clear();
        for (l, &sl) in s.iter().enumerate() {
            if l != r {
                let d = self.key_gap(n, s[r] - sl);
                match groups.iter_mut().find(|(g, _)| *g == d) {
                    Some(group) => group.1 += 1,
                    None => groups.push((d, 1)),
                }
            }
        }
        groups.sort_unstable();
        groups
    }

    /// A gap as the cache keys it: gaps `≥ n+2` are all sinks (§P.1.3); with pruning, so is
    /// a gap `d` whose label passes the true one with chance `T_n(d − 1) ≤ ε/(k−1)`
    /// (§P.2.8 (a)), which moves every value of the bundle by at most that much per label.
    fn key_gap(&self, n: usize, gap: i64) -> i64 {
        let sink = n as i64 + 2;
        if self.epsilon > 0.0 && gap < sink {
            let cut = self.epsilon / (self.k - 1) as f64;
            if self.walk.upper(n, gap - 1) <= cut {
                return sink;
            }
        }
        clip(n, gap)
    }

    /// An error for sure at `n` draws and nearest gap `d_min` (§P.1.2: the true label
    /// cannot catch up), or, pruning, within ε of one: §P.2.8 (b), the true label beats the
    /// nearest one with chance `P(D ≤ d_min) ≤ ε`, so every value is within ε of 1.
    fn certain_error(&self, n: usize, d_min: i64) -> bool {
        d_min < -(n as i64) || (self.epsilon > 0.0 && self.walk.lower(n, d_min) <= self.epsilon)
    }

    /// The bundle at gap groups `groups` (sorted by gap, gaps keyed with
    /// `Self::key_gap`, multiplicities summing to `k − 1`) with `n ≤ max_draws` draws to
    /// come.
    pub fn bundle(&mut self, n: usize, groups: &[(i64, usize)]) -> &Bundle {
        let at = self.cache_bundle(n, groups);
        &self.bundles[at]
    }

    /// The cache slot of the bundle of `groups` at `n`.
    fn lookup(&mut self, n: usize, groups: &[(i64, usize)]) -> Option<usize> {
        debug_assert!(n <= self.max_draws);
        debug_assert_eq!(groups.iter().map(|g| g.1).sum::<usize>(), self.k - 1);
        let key = &mut self.scratch.key;
        key.clear();
        key.push(n as i32);
        for &(d, m) in groups {
            key.push(d as i32);
            key.push(m as i32);
        }
        let at = self.index.get(self.scratch.key.as_slice())?;
        self.hits += 1;
        Some(*at as usize)
    }

    /// The cache slot of the bundle of `groups` at `n`, computed if it is not there.
    fn cache_bundle(&mut self, n: usize, groups: &[(i64, usize)]) -> usize {
        if let Some(at) = self.lookup(n, groups) {
            return at;
        }
        let bundle = self.compute(n, groups);
        self.computed += 1;
        if self.bundles.len() >= self.cache_cap.max(1) {
            self.bundles.clear();
            self.index.clear();
        }
        self.bundles.push(bundle);
        let at = self.bundles.len() - 1;
        let key = self.scratch.key.clone().into_boxed_slice();
        self.index.insert(key, at as u32);
        at
    }

    /// `Φ_n(G)` read off the diagonal through `(n, G)` (see [`Diagonal`]), whose values
    /// are computed from `(n, G)` where they are not cached yet.
    fn along_diagonal(&mut self, n: usize, groups: &[(i64, usize)]) -> f64 {
        let d_min = groups[0].0;
        if self.certain_error(n, d_min) {
            return 1.0;
        }
        let at = self.extend_diagonal(n, groups);
        self.read_diagonal(n, d_min, at)
    }

    /// `[Φ_n(G), Φ_{n−1}(G + 1)]`: the state and the one below it on its diagonal, from one
    /// lookup. With pruning, the key of the upper state serves the lower one too: a label
    /// that passes the true one with chance `≤ ε/(k−1)` from gap `d` in `n` draws does so
    /// with no more chance from gap `d + 1` in `n − 1`.
    fn along_diagonal_pair(&mut self, n: usize, groups: &[(i64, usize)]) -> [f64; 2] {
        let d_min = groups[0].0;
        let (upper, lower) = (
            self.certain_error(n, d_min),
            self.certain_error(n - 1, d_min + 1),
        );
        if upper && lower {
            return [1.0, 1.0];
        }
        let at = self.extend_diagonal(n, groups);
        let read = |engine: &Self, certain: bool, n: usize, d: i64| {
            if certain {
                1.0
            } else {
                engine.read_diagonal(n, d, at)
            }
        };
        [
            read(self, upper, n, d_min),
            read(self, lower, n - 1, d_min + 1),
        ]
    }

    /// Makes sure the diagonal through `(n, G)` is cached with every value `(n, G)` reads
    /// (needs `d_min ≥ −n`): its slot, or `None` if the state reads none.
    fn extend_diagonal(&mut self, n: usize, groups: &[(i64, usize)]) -> Option<usize> {
        let n_i = n as i64;
        let d_min = groups[0].0;
        // The key: each group's e = n + d, which moving down the diagonal leaves alone,
        // except for the groups that are free at every read (one group, e = ∞). A state on
        // the diagonal reads R at U ≤ e_min − 1, where a group's cap e − 1 − U is at least U
        // once e ≥ 2·e_min − 1: such a group constrains nothing, wherever it sits. So is a
        // sink (d = n + 2, or pruned). The nearest group stays: its e fixes the reads.
        let e_min = n_i + d_min;
        let key = &mut self.scratch.key;
        key.clear();
        let mut free = 0;
        for &(d, m) in groups {
            let e = n_i + d;
            if d == n_i + 2 || (d > d_min && e >= 2 * e_min - 1) {
                free += m;
            } else {
                key.push(e as i32);
                key.push(m as i32);
            }
        }
        if free > 0 {
            key.push(i32::MAX);
            key.push(free as i32);
        }
        let (u_lo, u_hi) = diagonal_reads(n, d_min);
        if u_lo > u_hi {
            // The outcome is certain: nothing to read.
            return None;
        }
        let key = self.scratch.key.as_slice();
        let known = if self.last_diagonal.0 == key {
            Some(self.last_diagonal.1)
        } else {
            self.diagonals.get(key).map(|&at| at as usize)
        };
        let at = match known {
            Some(at) => at,
            None => {
                if self.diagonal_store.len() >= self.cache_cap.max(1) {
                    self.clear_diagonals();
                }
                let at = self.diagonal_store.len();
                let key = self.scratch.key.as_slice().into();
                self.diagonals.insert(key, at as u32);
                self.diagonal_store.push(Diagonal { values: Vec::new() });
                at
            }
        };
        self.last_diagonal.0.clone_from(&self.scratch.key);
        self.last_diagonal.1 = at;
        let have = self.diagonal_store[at].values.len();
        if u_lo + have > u_hi {
            self.hits += 1;
            return Some(at);
        }
        // The values from U = u_lo + have up to u_hi: v = n − U from n − u_hi = v_lo up.
        let mut values = std::mem::take(&mut self.diagonal_store[at].values);
        let start = values.len();
        values.reserve_exact(u_hi + 1 - u_lo - start);
        self.diagonal_values(n, groups, n - (u_lo + have) + 1, &mut values);
        values[start..].reverse();
        self.diagonal_store[at].values = values;
        self.computed += 1;
        Some(at)
    }

    /// Empties the diagonal cache.
    fn clear_diagonals(&mut self) {
        self.diagonals.clear();
        self.diagonal_store.clear();
        self.last_diagonal.0.clear();
    }

    /// `Φ_n` at a state with nearest gap `d_min ≥ −n` on the diagonal in slot `at` (cached
    /// with every value the state reads; `None` if it reads none).
    fn read_diagonal(&self, n: usize, d_min: i64, at: Option<usize>) -> f64 {
        // v runs over [v_lo, v_hi) and reads R(n − v), stored from U = n + 1 − v_hi on; from
        // v_hi on the row is correct.
        let (v_lo, v_hi) = true_count_range(n, d_min);
        let row = n * self.width;
        let read: f64 = match at {
            Some(at) if v_lo < v_hi => {
                let values = &self.diagonal_store[at].values;
                let truth = &self.true_counts[row..row + n + 1];
                (v_lo..v_hi).map(|v| truth[v] * values[v_hi - 1 - v]).sum()
            }
            _ => 0.0,
        };
        1.0 - (read + self.true_tails[row + v_hi.min(n + 1)])
    }

    /// The values `R(U) = Q_m(U; c)`, `U = n − w`, caps `c_g = d_g − 1 + w`, of the
    /// [`Diagonal`] through `(n, G)` for `w` from `v_lo` up to `w_end` (exclusive), pushed to
    /// `values` (`U` descending).
    ///
    /// Two bins pass caps `c` and `c'` together only if `c + c' + 2 ≤ U`. So of the bins
    /// with `2c + 2 > U` ("loose") at most one passes its cap, and these events are
    /// disjoint: with the other bins "tight" (`2c + 2 ≤ U`) or free (`c ≥ U`),
    /// `R(U) = P(tight ones within caps) − Σ_{loose b} P(X_b > c_b, tight ones within caps)`,
    /// where `P(X_b > c_b, …) = Σ_{x > c_b} Bin(x; U, 1/m)·T(U − x)` and `T(j)` is the chance
    /// that `j` balls in the other `m − 1` bins leave the tight ones within their caps
    /// (§P.2.4's leave-one-out, for a whole tail of the bin's count). Only the tight groups
    /// are convolved (§P.2.2); the loose ones, the costly ones since their caps are large
    /// against the balls, cost `O(U)` each instead of a convolution, and every term is a
    /// probability.
    fn diagonal_values(
        &mut self, n: usize, groups: &[(i64, usize)], w_end: usize, values: &mut Vec<f64>,
    ) {
        let m = self.k - 1;
        let (v_lo, v_hi) = true_count_range(n, groups[0].0);
        let mut product = std::mem::take(&mut self.scratch.prefix);
        let mut next = std::mem::take(&mut self.scratch.suffix);
        let mut within = std::mem::take(&mut self.scratch.other);
        let mut conv = std::mem::take(&mut self.scratch.conv);
        self.binomial.ensure(1, m);
        for w in v_lo..v_hi.min(w_end) {
            let u = n - w;
            let len = u + 1;
            let cap = |g: usize| groups[g].0 - 1 + w as i64;
            // Groups are sorted by gap, so by cap: tight ones first, then loose, then free.
            let tight = groups.partition_point(|g| 2 * (g.0 - 1 + w as i64) + 2 <= u as i64);
            let loose = groups.partition_point(|g| g.0 - 1 + (w as i64) < u as i64);
            let m_t: usize = groups[..tight].iter().map(|g| g.1).sum();
            if 0 < m_t && m_t < m {
                self.binomial.ensure(m_t, m);
            }
            if tight < loose && 0 < m_t && m_t + 1 < m {
                self.binomial.ensure(m_t, m - 1);
            }
            // The product of the tight groups' vectors (m_t bins): the first group's is a
            // slice of the table, the others are convolved in (every entry written).
            // Each on its own: the scratch buffers come from bundle computations too, which
            // leave them at lengths of their own.
            if product.len() < len {
                product.resize(len, 0.0);
            }
            if next.len() < len {
                next.resize(len, 0.0);
            }
            let (mut support, mut bins) = (1, 0);
            for &(d, mg) in &groups[..tight] {
                let group = self.occupied(mg, d - 1 + w as i64, len);
                if bins == 0 {
                    product[..group.len()].copy_from_slice(group);
                    support = group.len();
                } else {
                    support = convolve(
                        &self.binomial,
                        &product[..support],
                        bins,
                        group,
                        mg,
                        &mut next[..len],
                        &mut conv,
                    );
                    std::mem::swap(&mut product, &mut next);
                }
                bins += mg;
            }
            let tight_ok = &product[..support];
            // The tight bins get Bin(U, m_t/m) of the balls.
            let mut r = if m_t == 0 {
                1.0
            } else if m_t == m {
                tight_ok.get(u).copied().unwrap_or(0.0)
            } else {
                dot(self.binomial.row(m_t, m, u), tight_ok)
            };
            if tight < loose {
                // T(j) for j up to U − x at the least x that passes the least loose cap.
                let j_max = u - cap(tight) as usize - 1;
                within.clear();
                if m_t == 0 {
                    within.resize(j_max + 1, 1.0);
                } else if m_t == m - 1 {
                    within.extend((0..=j_max).map(|j| tight_ok.get(j).copied().unwrap_or(0.0)));
                } else {
                    let rows = &self.binomial;
                    within.extend((0..=j_max).map(|j| dot(rows.row(m_t, m - 1, j), tight_ok)));
                }
                // Σ_{x > c} Bin(x; U, 1/m)·T(U − x), x from U down, read at each loose cap.
                let bin = self.binomial.row(1, m, u);
                let (mut passing, mut x, mut lost) = (0.0, u, 0.0);
                for g in (tight..loose).rev() {
                    let c = cap(g) as usize;
                    while x > c {
                        passing += bin[x] * within[u - x];
                        x -= 1;
                    }
                    lost += groups[g].1 as f64 * passing;
                }
                r = (r - lost).max(0.0);
            }
            values.push(r);
        }
        self.scratch.prefix = product;
        self.scratch.suffix = next;
        self.scratch.other = within;
        self.scratch.conv = conv;
    }

    /// §P.2.4 for one bundle.
    fn compute(&mut self, n: usize, groups: &[(i64, usize)]) -> Bundle {
        let g_count = groups.len();
        let m = self.k - 1;
        let d_min = groups[0].0;
        if self.certain_error(n, d_min) {
            // At the state and every neighbour.
            return Bundle {
                base: 1.0,
                plus: 1.0,
                minus: vec![1.0; g_count],
            };
        }
        let (v_lo, v_hi) = true_count_range(n, d_min);
        let mut correct_base = 0.0;
        let mut correct_plus = 0.0;
        let mut correct_minus = std::mem::take(&mut self.scratch.correct_minus);
        correct_minus.clear();
        correct_minus.resize(g_count, 0.0);
        // Prefix masses M_<g.
        let mut before = std::mem::take(&mut self.scratch.before);
        before.clear();
        before.extend(groups.iter().scan(0, |acc, &(_, mg)| {
            let b = *acc;
            *acc += mg;
            Some(b)
        }));
        self.binomial.ensure(1, m);
        for &(_, mg) in groups {
            if mg > 1 && mg < m {
                self.binomial.ensure(mg - 1, m - 1);
            }
        }
        let truth = |v: usize| self.true_counts[n * self.width + v];
        let mut prefix = std::mem::take(&mut self.scratch.prefix);
        let mut suffix = std::mem::take(&mut self.scratch.suffix);
        let mut other = std::mem::take(&mut self.scratch.other);
        let mut conv = std::mem::take(&mut self.scratch.conv);
        let mut caps = std::mem::take(&mut self.scratch.caps);
        let mut prefix_support = std::mem::take(&mut self.scratch.prefix_support);
        let mut suffix_support = std::mem::take(&mut self.scratch.suffix_support);
        // w = v_hi still gives the plus neighbour of v = v_hi − 1.
        for w in v_lo..v_hi.min(n + 1) + 1 {
            if w > n {
                // Only the plus neighbour of v = n is read here: no draws left for the other
                // labels, and every cap d_g − 1 + w ≥ 0.
                correct_plus += truth(w - 1);
                continue;
            }
            // Caps c_g = d_g − 1 + w, all ≥ 0 here; the chain is read at U = n − w (base) and
            // at U + 1 (plus neighbour of w − 1).
            let u = n - w;
            let reads = 2;
            let len = u + reads;
            caps.clear();
            caps.extend(groups.iter().map(|&(d, _)| d - 1 + w as i64));
            // Groups whose cap reaches the last entry read constrain nothing at this w: they
            // are merged into one free group of all-ones vector (groups are sorted by gap,
            // so they are the last ones). Their leave-one-out value is the base: a cap
            // lowered to ≥ U still constrains nothing.
            let constrained = caps.partition_point(|&c| c < (len - 1) as i64);
            let free: usize = groups[constrained..].iter().map(|g| g.1).sum();
            let chain_len = constrained + usize::from(free > 0);
            let chain = |e: usize| {
                if e < constrained {
                    (groups[e].1, caps[e])
                } else {
                    (free, (len - 1) as i64)
                }
            };
            prefix.clear();
            prefix.resize((chain_len + 1) * len, 0.0);
            prefix[0] = 1.0;
            // The support of each prefix product (entries past it are zero).
            prefix_support.clear();
            prefix_support.push(1);
            for e in 0..chain_len {
                let (head, tail) = prefix.split_at_mut((e + 1) * len);
                let (mg, cap) = chain(e);
                // The full product is read at its last `reads` entries only.
                let from = if e + 1 == chain_len { len - reads } else { 0 };
                let support = convolve_from(
                    &self.binomial,
                    &head[e * len..e * len + prefix_support[e]],
                    before[e],
                    self.occupied(mg, cap, len),
                    mg,
                    &mut tail[..len],
                    from,
                    &mut conv,
                );
                prefix_support.push(support);
            }
            let full = &prefix[chain_len * len..(chain_len + 1) * len];
            if w >= 1 && w - 1 < v_hi {
                correct_plus += truth(w - 1) * full[u + 1];
            }
            if w >= v_hi {
                continue;
            }
            let r_base = full[u];
            let weight = truth(w);
            correct_base += weight * r_base;
            // Suffix products S_e (only up to U); S_0 is never read: the leave-one-out of
            // group g uses S_{g+1}.
            let slen = u + 1;
            suffix.clear();
            suffix.resize((chain_len + 1) * slen, 0.0);
            suffix[chain_len * slen] = 1.0;
            suffix_support.clear();
            suffix_support.resize(chain_len + 1, 1);
            let mut after = 0;
            for e in (1..chain_len).rev() {
                let (head, tail) = suffix.split_at_mut((e + 1) * slen);
                let (mg, cap) = chain(e);
                suffix_support[e] = convolve(
                    &self.binomial,
                    self.occupied(mg, cap, slen),
                    mg,
                    &tail[..suffix_support[e + 1]],
                    after,
                    &mut head[e * slen..(e + 1) * slen],
                    &mut conv,
                );
                after += mg;
            }
            for g in 0..g_count {
                let (cap, mg) = (caps[g], groups[g].1);
                let mut value = r_base;
                if g < constrained && cap <= u as i64 {
                    // One bin of group g loses a unit of cap: −Bin(c; U, 1/m)·Q'(U − c).
                    let c = cap as usize;
                    let j = u - c;
                    let m_after = m - before[g] - mg;
                    other.clear();
                    other.resize(j + 1, 0.0);
                    let (sp, ss) = (
                        prefix_support[g].min(j + 1),
                        suffix_support[g + 1].min(j + 1),
                    );
                    convolve(
                        &self.binomial,
                        &prefix[g * len..g * len + sp],
                        before[g],
                        &suffix[(g + 1) * slen..(g + 1) * slen + ss],
                        m_after,
                        &mut other,
                        &mut conv,
                    );
                    let q_without = if m == 1 {
                        f64::from(j == 0)
                    } else {
                        let rest = self.occupancy(mg - 1, cap);
                        let rows = if mg - 1 == 0 || m - mg == 0 {
                            None
                        } else {
                            Some(self.binomial.row(mg - 1, m - 1, j))
                        };
                        match rows {
                            None if mg == 1 => other[j],
                            None => rest[j],
                            Some(row) => (0..=j).map(|b| row[b] * rest[b] * other[j - b]).sum(),
                        }
                    };
                    value -= self.binomial.row(1, m, u)[c] * q_without;
                }
                correct_minus[g] += weight * value;
            }
        }
        // From v_hi on, the row is correct at the state and every neighbour.
        let tail = self.true_tails[n * self.width + v_hi.min(n + 1)];
        let bundle = Bundle {
            base: 1.0 - (correct_base + tail),
            plus: 1.0 - (correct_plus + tail),
            minus: correct_minus.iter().map(|c| 1.0 - (c + tail)).collect(),
        };
        self.scratch.prefix = prefix;
        self.scratch.suffix = suffix;
        self.scratch.other = other;
        self.scratch.conv = conv;
        self.scratch.caps = caps;
        self.scratch.prefix_support = prefix_support;
        self.scratch.suffix_support = suffix_support;
        self.scratch.before = before;
        self.scratch.correct_minus = correct_minus;
        bundle
    }
}

/// The walk `D = X_l − X_r` of one other label against the true one over `n` draws (steps
/// `+1` w.p. `q`, `−1` w.p. `p`), as its two tails (§P.2.8).
#[derive(Debug, Clone, Default)]
struct GapWalk {
    max_draws: usize,
    /// `P(D ≥ d)` and `P(D ≤ d)` for `d = −n..=n`, row `n` at `n · (2·max_draws + 1)`,
    /// entry `d + max_draws`.
    upper: Vec<f64>,
    lower: Vec<f64>,
}

impl GapWalk {
    fn new(k: usize, gamma: f64, max_draws: usize) -> Self {
        let q = (1.0 - gamma) / k as f64;
        let p = q + gamma;
        let span = 2 * max_draws + 1;
        let mut pmf = vec![0.0; span];
        pmf[max_draws] = 1.0;
        let mut next = vec![0.0; span];
        let mut upper = vec![0.0; (max_draws + 1) * span];
        let mut lower = vec![0.0; (max_draws + 1) * span];
        for n in 0..=max_draws {
            if n > 0 {
                for (i, x) in next.iter_mut().enumerate() {
                    let from_below = if i > 0 { pmf[i - 1] } else { 0.0 };
                    let from_above = pmf.get(i + 1).copied().unwrap_or(0.0);
                    *x = q * from_below + p * from_above + (1.0 - p - q) * pmf[i];
                }
                std::mem::swap(&mut pmf, &mut next);
            }
            let row = n * span;
            let mut acc = 0.0;
            for i in (0..span).rev() {
                acc += pmf[i];
                upper[row + i] = acc;
            }
            acc = 0.0;
            for i in 0..span {
                acc += pmf[i];
                lower[row + i] = acc;
            }
        }
        GapWalk {
            max_draws,
            upper,
            lower,
        }
    }

    /// `P(D ≥ d)` after `n` draws.
    fn upper(&self, n: usize, d: i64) -> f64 {
        let reach = self.max_draws as i64;
        if d > reach {
            0.0
        } else {
            self.upper[n * (2 * self.max_draws + 1) + (d.max(-reach) + reach) as usize]
        }
    }

    /// `P(D ≤ d)` after `n` draws.
    fn lower(&self, n: usize, d: i64) -> f64 {
        let reach = self.max_draws as i64;
        if d < -reach {
            0.0
        } else {
            self.lower[n * (2 * self.max_draws + 1) + (d.min(reach) + reach) as usize]
        }
    }
}

/// The true label's counts `v` in `[v_lo, v_hi)` that §P.2.1 sums at `n` draws and nearest
/// gap `d_min ≥ −n`: below `v_lo` some cap `d_g − 1 + v` is negative (an error for sure),
/// from `v_hi` on every cap exceeds the draws left (correct for sure).
fn true_count_range(n: usize, d_min: i64) -> (usize, usize) {
    let v_lo = (1 - d_min).max(0) as usize;
    let v_hi = ((n as i64 + 2 - d_min + 1).div_euclid(2)).max(0) as usize;
    (v_lo, v_hi)
}

/// The balls `U = n − v` left to the other labels over [`true_count_range`]: from
/// `⌊e_min/2⌋` to `min(n, e_min − 1)`, `e_min = n + d_min`; empty (`(1, 0)`) when the
/// outcome is certain (`v_lo ≥ v_hi`: every label a sink, or `d_min = −n`).
fn diagonal_reads(n: usize, d_min: i64) -> (usize, usize) {
    match true_count_range(n, d_min) {
        (v_lo, v_hi) if v_lo < v_hi => (n + 1 - v_hi, n - v_lo),
        _ => (1, 0),
    }
}

/// A gap as the exact cache keys it: gaps `≥ n+2` are all sinks (§P.1.3).
#[inline]
pub fn clip(n: usize, gap: i64) -> i64 {
    gap.min(n as i64 + 2)
}

/// The index of gap `d` among sorted groups.
#[inline]
fn group_of(groups: &[(i64, usize)], d: i64) -> usize {
    groups
        .binary_search_by_key(&d, |g| g.0)
        .expect("every gap has its group")
}

/// The base `c` of the scaling in [`convolve_from`]: `j!/c^j` stays within `e^{±c}` for
/// `j < width`, so no product of scaled factors under- or overflows.
fn scale_base(width: usize) -> f64 {
    (width as f64 / std::f64::consts::E).max(1.0)
}

/// `Σ_i a[i]·b[i]` over the shorter of the two.
fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// [`convolve_from`] for every entry.
fn convolve(
    rows: &BinomialRows, a: &[f64], ma: usize, b_vec: &[f64], mb: usize, out: &mut [f64],
    buf: &mut Vec<f64>,
) -> usize {
    convolve_from(rows, a, ma, b_vec, mb, out, 0, buf)
}

/// The binomial convolution of §P.2.2, `out[U] = Σ_j Bin(j; U, ρ)·a[j]·b[U − j]` with
/// `ρ = m_a/(m_a + m_b)`, for `U ≥ from`. Since
/// `Bin(j; U, ρ) = U!·(ρ^j/j!)·((1 − ρ)^{U−j}/(U − j)!)`, it is a plain convolution of
/// `a[j]ρ^j/j!` and `b[i](1 − ρ)^i/i!`, scaled back by `U!`: one multiply-add per term on two
/// contiguous vectors instead of a binomial row per `U`. A factor `c^j` moved from one side
/// to the other keeps every product in range.
///
/// `a` and `b_vec` are given up to their support: entries past their ends are zero (`m`
/// bins capped at `c` hold at most `m·c` balls), and so are the terms that would read them.
/// With caps small against the balls this skips most of the work. Returns the support of
/// `out` (entries from it on are zero when `from` is 0).
#[allow(clippy::too_many_arguments)]
fn convolve_from(
    rows: &BinomialRows, a: &[f64], ma: usize, b_vec: &[f64], mb: usize, out: &mut [f64],
    from: usize, buf: &mut Vec<f64>,
) -> usize {
    let len = out.len();
    let (a, b_vec) = (&a[..a.len().min(len)], &b_vec[..b_vec.len().min(len)]);
    let support = (a.len() + b_vec.len()).saturating_sub(1).min(len);
    if ma == 0 || mb == 0 {
        // An empty side is the unit [1]: the other side is the product.
        let side = if ma == 0 { b_vec } else { a };
        out[..side.len()].copy_from_slice(side);
        out[side.len()..].fill(0.0);
        return side.len();
    }
    let (fa, fb) = rows.factors(ma, ma + mb);
    // The scaled operands: a, then b between BLOCK zeros on each side, so that a block of
    // outputs reads a full window of b for every term.
    let sa = a.len();
    buf.clear();
    buf.extend(a.iter().zip(fa).map(|(x, f)| x * f));
    buf.extend(std::iter::repeat_n(0.0, BLOCK));
    buf.extend(b_vec.iter().zip(fb).map(|(x, f)| x * f));
    buf.extend(std::iter::repeat_n(0.0, BLOCK));
    let (xa, xb) = buf.split_at(sa);
    let end = support.max(from);
    out[end..].fill(0.0);
    sum_blocks(xa, xb, from, end, &rows.out_scale, out);
    support
}

/// Outputs per block of [`convolve_from`]: their sums stay in registers.
const BLOCK: usize = 8;

/// `out[u] = scale[u]·Σ_j xa[j]·b[u − j]` for `u` in `from..end`, with `b[t]` at
/// `xb[BLOCK + t]` between `BLOCK` zeros on each side. With AVX the same operations run in
/// the same order on wider registers (no fused multiply-add), so the sums are the same to
/// the bit on every x86-64 machine.
fn sum_blocks(xa: &[f64], xb: &[f64], from: usize, end: usize, scale: &[f64], out: &mut [f64]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx") {
        // SAFETY: the CPU has just been found to support AVX.
        return unsafe { sum_blocks_avx(xa, xb, from, end, scale, out) };
    }
    sum_blocks_portable(xa, xb, from, end, scale, out);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
fn sum_blocks_avx(xa: &[f64], xb: &[f64], from: usize, end: usize, scale: &[f64], out: &mut [f64]) {
    sum_blocks_portable(xa, xb, from, end, scale, out);
}

#[inline(always)]
fn sum_blocks_portable(
    xa: &[f64], xb: &[f64], from: usize, end: usize, scale: &[f64], out: &mut [f64],
) {
    let (sa, sb) = (xa.len(), xb.len() - 2 * BLOCK);
    let mut u0 = from;
    while u0 < end {
        // A block of BLOCK outputs; the terms run over every j either support reaches.
        let lo = (u0 + 1).saturating_sub(sb);
        let hi = (u0 + BLOCK - 1).min(sa - 1);
        let mut acc = [0.0; BLOCK];
        if lo <= hi {
            // Term j reads b[u0 + i − j], the window of xb from BLOCK + u0 − j: the windows
            // of this span, last first.
            let span = &xb[BLOCK + u0 - hi..BLOCK + u0 - lo + BLOCK];
            for (&x, window) in xa[lo..=hi].iter().zip(span.windows(BLOCK).rev()) {
                let window: &[f64; BLOCK] = window.try_into().expect("BLOCK entries");
                for (a, &y) in acc.iter_mut().zip(window) {
                    *a += x * y;
                }
            }
        }
        let count = BLOCK.min(end - u0);
        for (i, o) in out[u0..u0 + count].iter_mut().enumerate() {
            *o = acc[i] * scale[u0 + i];
        }
        u0 += BLOCK;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `φ` by brute force over all compositions (k ≤ 4, small n).
    fn brute(k: usize, gamma: f64, n: usize, s: &[i64], r: usize) -> f64 {
        fn rec(k: usize, left: usize, l: usize, x: &mut Vec<usize>, f: &mut dyn FnMut(&[usize])) {
            if l == k - 1 {
                x.push(left);
                f(x);
                x.pop();
                return;
            }
            for a in 0..=left {
                x.push(a);
                rec(k, left - a, l + 1, x, f);
                x.pop();
            }
        }
        let p = (1.0 - gamma) / k as f64 + gamma;
        let q = (1.0 - gamma) / k as f64;
        let mut total = 0.0;
        let fact = |j: usize| (1..=j).map(|v| v as f64).product::<f64>();
        rec(k, n, 0, &mut Vec::new(), &mut |x: &[usize]| {
            let err = (0..k).any(|l| l != r && s[l] + x[l] as i64 >= s[r] + x[r] as i64);
            if err {
                let mut pr = fact(n);
                for (l, &xl) in x.iter().enumerate() {
                    pr *= (if l == r { p } else { q }).powi(xl as i32) / fact(xl);
                }
                total += pr;
            }
        });
        total
    }

    /// `Σ_j Bin(j; U, ρ)·a[j]·b[U − j]` term by term.
    fn naive_convolution(a: &[f64], ma: usize, b: &[f64], mb: usize, len: usize) -> Vec<f64> {
        let rows = BinomialRows::new(len, 9);
        let rho = ma as f64 / (ma + mb) as f64;
        (0..len)
            .map(|u| {
                (0..=u)
                    .filter(|&j| j < a.len() && u - j < b.len())
                    .map(|j| rows.pmf(u, j, rho) * a[j] * b[u - j])
                    .sum()
            })
            .collect()
    }

    #[test]
    fn convolutions_read_only_the_supports_and_agree_with_the_definition() {
        let len = 45;
        let rows = BinomialRows::new(len + 2, 9);
        let mut buf = Vec::new();
        let mut seed = 7u64;
        let mut draw = move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        for (sa, sb, ma, mb) in [
            (1, 45, 2, 7),
            (3, 5, 1, 1),
            (20, 30, 4, 5),
            (45, 45, 1, 8),
            (9, 2, 3, 3),
        ] {
            let a: Vec<f64> = (0..sa).map(|_| draw()).collect();
            let b: Vec<f64> = (0..sb).map(|_| draw()).collect();
            let want = naive_convolution(&a, ma, &b, mb, len);
            for from in [0, 17, len - 2] {
                let mut out = vec![f64::NAN; len];
                let support = convolve_from(&rows, &a, ma, &b, mb, &mut out, from, &mut buf);
                assert_eq!(support, (sa + sb - 1).min(len));
                for u in from..len {
                    let tol = 1e-13 * want[u].abs().max(1e-300);
                    assert!(
                        (out[u] - want[u]).abs() <= tol,
                        "{sa} {sb} from {from} u {u}: {} vs {}",
                        out[u],
                        want[u]
                    );
                }
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn wide_registers_give_the_same_bits() {
        if !std::arch::is_x86_feature_detected!("avx") {
            return;
        }
        let xa: Vec<f64> = (0..37).map(|i| (i as f64 * 0.37).sin().abs()).collect();
        let mut xb = vec![0.0; BLOCK];
        xb.extend((0..29).map(|i| (i as f64 * 1.3).cos().abs() * 1e-3));
        xb.extend([0.0; BLOCK]);
        let scale: Vec<f64> = (0..70).map(|i| 1.0 + i as f64 / 7.0).collect();
        let (mut narrow, mut wide) = (vec![0.0; 65], vec![0.0; 65]);
        sum_blocks_portable(&xa, &xb, 3, 65, &scale, &mut narrow);
        // SAFETY: the CPU has AVX (checked above).
        unsafe { sum_blocks_avx(&xa, &xb, 3, 65, &scale, &mut wide) };
        assert!(
            narrow
                .iter()
                .zip(&wide)
                .all(|(x, y)| x.to_bits() == y.to_bits())
        );
    }

    /// `φ` from diagonals alone (no bundle cached): the tight chain and the loose bins'
    /// tails against the definition, over states with tight, loose and free groups at once.
    #[test]
    fn diagonal_values_match_brute_force() {
        for (k, gamma) in [(2, 0.1), (3, 0.2), (4, 0.1), (5, 0.3)] {
            let mut engine = PotentialEngine::new(k, gamma, 8);
            let mut weights = PotentialEngine::new(k, gamma, 8);
            for n in (0..=8).rev() {
                // Every state with votes in {−4, −2, 0, 2, 4} (a seventh of them at k = 5).
                let step = if k == 5 { 7 } else { 1 };
                for code in (0..5usize.pow(k as u32)).step_by(step) {
                    let s: Vec<i64> = (0..k)
                        .map(|l| (code / 5usize.pow(l as u32) % 5) as i64 * 2 - 4)
                        .collect();
                    for r in 0..k {
                        let want = brute(k, gamma, n, &s, r);
                        let got = engine.phi(n, &s, r);
                        assert!((got - want).abs() < 1e-13, "k={k} n={n} s={s:?} r={r}");
                        if n < 8 {
                            let mut plus = s.clone();
                            plus[r] += 1;
                            let q = (1.0 - gamma) / k as f64;
                            let w =
                                (brute(k, gamma, n + 1, &s, r) - brute(k, gamma, n, &plus, r)) / q;
                            let got = weights.true_label_weight(n, &s, r);
                            assert!((got - w.max(0.0)).abs() < 1e-12, "k={k} n={n} s={s:?}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn bundles_match_brute_force_at_every_neighbour() {
        for (k, gamma) in [(2, 0.1), (3, 0.1), (4, 0.3)] {
            let mut engine = PotentialEngine::new(k, gamma, 5);
            for n in 0..=5 {
                // Every state with votes in -3..=2 (gaps from −5 to 5: certain errors,
                // sinks and everything between).
                for code in 0..6usize.pow(k as u32) {
                    let s: Vec<i64> = (0..k)
                        .map(|l| (code / 6usize.pow(l as u32) % 6) as i64 - 3)
                        .collect();
                    for r in 0..k {
                        let mut row = vec![0.0; k];
                        engine.cost_row(n, &s, r, &mut row);
                        for l in 0..k {
                            let mut t = s.clone();
                            t[l] += 1;
                            let want = brute(k, gamma, n, &t, r);
                            assert!(
                                (row[l] - want).abs() < 1e-12,
                                "k={k} n={n} s={s:?} r={r} l={l}: {} vs {want}",
                                row[l]
                            );
                        }
                        assert!((engine.phi(n, &s, r) - brute(k, gamma, n, &s, r)).abs() < 1e-12);
                    }
                }
            }
        }
    }

    /// Base values read along diagonals after bundles of other states (whose computations
    /// leave the shared scratch buffers at lengths of their own) equal those of an engine
    /// that computed nothing else: states as the OS strategy of \[MS\] visits them, `n` draws
    /// left after `N − n` votes.
    #[test]
    fn base_values_after_bundles_of_other_states_are_unchanged() {
        let (k, gamma, max_n) = (6, 0.1, 60);
        let mut shared = PotentialEngine::new(k, gamma, max_n);
        let mut alone = PotentialEngine::new(k, gamma, max_n);
        let mut rng = crate::core::Rng::new(5);
        let mut row = vec![0.0; k];
        let state = |rng: &mut crate::core::Rng, votes: usize| {
            let mut s = vec![0i64; k];
            for _ in 0..votes {
                s[rng.below(k)] += 1;
            }
            s
        };
        for _ in 0..200 {
            let n = rng.below(max_n);
            let s = state(&mut rng, max_n - n - 1);
            shared.cost_row(n, &s, rng.below(k), &mut row);
            let n = rng.below(max_n);
            let s = state(&mut rng, max_n - n);
            let r = rng.below(k);
            assert_eq!(
                shared.phi(n, &s, r).to_bits(),
                alone.phi(n, &s, r).to_bits()
            );
        }
    }
}
