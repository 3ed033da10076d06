//! Bounds on what a parameter or an input can make streamboost allocate, checked before the
//! allocation: a mistyped `--learners 1000000` or a label of a megabyte is refused with an
//! error saying the bound and how to raise it, never met as an allocator's abort.
//!
//! Each bound has a default that no measured use comes near, and an environment variable
//! that raises (or lowers) it for the whole process, for a user who really wants more.

use crate::{Error, Result};

/// One bound: its default, and the environment variable that overrides it.
#[derive(Debug, Clone, Copy)]
pub struct Limit {
    /// What is bounded, as the error says it (`learners in one booster`).
    pub what: &'static str,
    /// The environment variable that sets it (a whole number).
    pub variable: &'static str,
    /// The bound without the variable.
    pub default: usize,
}

/// Learners of one booster (each a tree, a naive Bayes or a perceptron; the papers run 100).
pub const LEARNERS: Limit = Limit {
    what: "learners in one booster",
    variable: "STREAMBOOST_MAX_LEARNERS",
    default: 10_000,
};

/// Columns of an input table (the widest shared benchmark file has 301).
pub const COLUMNS: Limit = Limit {
    what: "columns in one input",
    variable: "STREAMBOOST_MAX_COLUMNS",
    default: 65_536,
};

/// Bytes of one class name (a label value).
pub const LABEL_BYTES: Limit = Limit {
    what: "bytes in one class name",
    variable: "STREAMBOOST_MAX_LABEL_BYTES",
    default: 1_024,
};

impl Limit {
    /// The bound in force: the variable's value if it is set to a whole number, else the
    /// default.
    pub fn get(&self) -> usize {
        std::env::var(self.variable)
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(self.default)
    }

    /// Refuses `value` above the bound: `field`'s error says the bound and how to raise it.
    pub fn check(&self, field: &'static str, value: usize) -> Result<()> {
        let max = self.get();
        if value <= max {
            return Ok(());
        }
        Err(Error::config(field, self.exceeded(value, max)))
    }

    /// What an error says of `value` above `max`.
    pub fn exceeded(&self, value: usize, max: usize) -> String {
        format!(
            "is {value}, above the {max} {} this process allows (set {} to raise it)",
            self.what, self.variable
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_above_the_bound_is_refused_naming_the_variable() {
        assert!(LEARNERS.check("n_learners", 100).is_ok());
        let err = LEARNERS.check("n_learners", 1_000_000).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("1000000") && text.contains("STREAMBOOST_MAX_LEARNERS"));
    }
}
