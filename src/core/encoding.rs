//! How a stream's table columns are read as features ([`Encodings`]): plain data, shared by
//! the columnar readers, the operators and the checkpoints.

use std::str::FromStr;

use crate::{Error, Result};

/// Per-column overrides of the kind a column's type implies.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Encodings {
    /// Columns that are nominal whatever their type (integer-coded categories, for instance).
    pub nominal: Vec<String>,
    /// Columns whose values are ordered levels, coded by rank.
    pub ordinal: Vec<Ordinal>,
    /// Columns that are not features: carried from input to output (an event id, a
    /// timestamp) and never read by the model.
    #[serde(default)]
    pub passthrough: Vec<String>,
}

impl Encodings {
    /// The ordinal declaration of `column`, if any.
    pub fn ordinal(&self, column: &str) -> Option<&Ordinal> {
        self.ordinal.iter().find(|o| o.column == column)
    }
}

/// An ordinal column: its levels, lowest first. Level `i` is coded as the number `i`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Ordinal {
    /// The column's name.
    pub column: String,
    /// The levels in increasing order.
    pub levels: Vec<String>,
}

/// Parses `COL=level,level,...` (lowest level first).
impl FromStr for Ordinal {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        let bad = |reason: &str| Error::config("ordinal", format!("`{s}`: {reason}"));
        let (column, levels) = s
            .split_once('=')
            .ok_or_else(|| bad("expected COL=LEVEL,LEVEL,..."))?;
        let levels: Vec<String> = levels.split(',').map(|l| l.trim().to_string()).collect();
        if column.is_empty() || levels.len() < 2 || levels.iter().any(String::is_empty) {
            return Err(bad(
                "expected a column name and at least two non-empty levels",
            ));
        }
        let mut sorted = levels.clone();
        sorted.sort();
        sorted.dedup();
        if sorted.len() != levels.len() {
            return Err(bad("a level is listed twice"));
        }
        Ok(Ordinal {
            column: column.to_string(),
            levels,
        })
    }
}
