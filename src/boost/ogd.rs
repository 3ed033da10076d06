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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_projects() {
        let f = Interval::symmetric(2.0);
        assert_eq!(f.step(1.5, -1.0, 1.0), 2.0);
        assert_eq!(f.step(0.0, 0.5, 1.0), -0.5);
        assert_eq!(f.step(-1.9, 1.0, 1.0), -2.0);
    }
}
