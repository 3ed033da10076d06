//! What a stream's state records besides its model: how its table columns were read as
//! features ([`Encodings`]) and how many rows it has seen ([`OperatorStats`]). Plain data,
//! shared by the columnar readers, the operators and the checkpoints.

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

/// Counters of an operator's stream.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct OperatorStats {
    /// Rows scored (every input row).
    pub rows_seen: u64,
    /// Rows also learnt (label present and in the class set).
    pub rows_learnt: u64,
    /// Rows whose label was not in the class set (scored only).
    pub unknown_labels: u64,
}

impl OperatorStats {
    /// The counters of two streams together (two keys' models).
    pub fn add(&self, other: &OperatorStats) -> OperatorStats {
        OperatorStats {
            rows_seen: self.rows_seen + other.rows_seen,
            rows_learnt: self.rows_learnt + other.rows_learnt,
            unknown_labels: self.unknown_labels + other.unknown_labels,
        }
    }
}

/// How far a live model has taken its input: the input file it is in, or last finished, and
/// how many of that file's rows it has taken (scored, and learnt if labelled). Files are
/// taken in name order, so every file named before `file` was taken whole. A checkpoint
/// holding a position is the commit point of a job: on restart, the rows it covers are
/// neither learnt nor emitted again.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Position {
    /// The input file's name within its directory (not its path: the directory may move).
    pub file: String,
    /// Rows of that file taken.
    pub rows: u64,
    /// Whether the whole file was taken (its output is then committed, or is committed
    /// first thing on restart).
    pub done: bool,
    /// For a model trained through SQL, the largest ordering value (`ts`) learnt: a later
    /// query learns only rows after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ts: Option<i64>,
    /// Whether the file is in a job's labels directory (labels that arrive after their
    /// events); files of both directories are taken in one name order, labels first on a
    /// tie.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub labels: bool,
}
