//! Projected online gradient descent on an interval (Zinkevich 2003), the learner-weight
//! update of the adaptive boosters (ALGORITHMS.md §3.4 step 2b, §6).

use serde::{Deserialize, Serialize};

/// A closed interval `[lo, hi]`: the feasible set of a learner weight.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// Lower end.
    pub lo: f64,
    /// Upper end.
    pub hi: f64,
}

impl Interval {
    /// `[-b, b]`.
    pub fn symmetric(b: f64) -> Self {
        Interval { lo: -b, hi: b }
    }

    /// `Π(x) = max(lo, min(hi, x))`.
    #[inline]
    pub fn project(self, x: f64) -> f64 {
        x.min(self.hi).max(self.lo)
    }

    /// One projected gradient step: `Π(x − η·g)`.
    #[inline]
    pub fn step(self, x: f64, gradient: f64, eta: f64) -> f64 {
        self.project(x - eta * gradient)
    }
}

/// Euclidean projection of `v` onto the probability simplex `{w ≥ 0, Σ w = 1}`, in place
/// (Duchi, Shalev-Shwartz, Singer & Chandra 2008, Fig. 1; ALGORITHMS.md §10.3): sort
/// descending into `u`, `ρ = max{j : u_j − (Σ_{r≤j} u_r − 1)/j > 0}`,
/// `θ = (Σ_{r≤ρ} u_r − 1)/ρ`, `w_i = max(v_i − θ, 0)`. `O(N log N)`; returns `θ`.
pub fn project_to_simplex(v: &mut [f64]) -> f64 {
    let mut u = v.to_vec();
    u.sort_unstable_by(|a, b| b.total_cmp(a));
    let (mut sum, mut theta) = (0.0, 0.0);
    for (j, &uj) in u.iter().enumerate() {
        sum += uj;
        let candidate = (sum - 1.0) / (j + 1) as f64;
        if uj - candidate > 0.0 {
            theta = candidate;
        }
    }
    v.iter_mut().for_each(|x| *x = (*x - theta).max(0.0));
    theta
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simplex_projection_lands_on_the_simplex() {
        let mut v = vec![0.5, 0.5, 0.5];
        let theta = project_to_simplex(&mut v);
        assert!((theta - 1.0 / 6.0).abs() < 1e-15);
        assert!(v.iter().all(|&x| (x - 1.0 / 3.0).abs() < 1e-15));
        let mut v = vec![2.0, 1.0, 0.0, -1.0];
        project_to_simplex(&mut v);
        assert_eq!(v, vec![1.0, 0.0, 0.0, 0.0]);
    }

    #[test]
    fn step_projects() {
        let f = Interval::symmetric(2.0);
        assert_eq!(f.step(1.5, -1.0, 1.0), 2.0);
        assert_eq!(f.step(0.0, 0.5, 1.0), -0.5);
        assert_eq!(f.step(-1.9, 1.0, 1.0), -2.0);
    }
}
