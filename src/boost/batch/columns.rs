//! The training table of a batch booster: the labelled rows of a logged table, laid out by
//! column once so that every round's trees find their splits without sorting.
//!
//! Memory ([`SortedColumns::bytes`]): besides the [`Dataset`] it reads (8 bytes a value, row-major,
//! which predictions need), 16 bytes per present numeric value (the value and its row, in
//! value order), 4 bytes per missing numeric value, 4 bytes per nominal value (its code) and
//! 16 bytes per labelled row (its position and label). Training adds a few matrices of
//! `8·k` bytes a row (costs, votes; AdaBoost.MH's weights and statistics).

use crate::core::{ClassId, Dataset, FeatureKind, is_present, nominal_code};
use crate::{Error, Result};

/// A code that marks a missing nominal value.
pub(crate) const MISSING: u32 = u32::MAX;

/// One feature's values over the labelled rows, by column.
#[derive(Debug, Clone)]
pub(crate) enum Column {
    /// The present values with their positions (indices into [`SortedColumns::rows`]), in value
    /// order (ties in position order); and the positions whose value is missing.
    Numeric {
        sorted: Vec<(f64, u32)>,
        missing: Vec<u32>,
    },
    /// Each position's category code ([`MISSING`] when missing), and one past the largest.
    Nominal { codes: Vec<u32>, categories: usize },
}

/// The labelled rows of a data set, their labels and their columns.
#[derive(Debug, Clone)]
pub struct SortedColumns<'a> {
    data: &'a Dataset,
    rows: Vec<usize>,
    labels: Vec<ClassId>,
    columns: Vec<Column>,
}

impl<'a> SortedColumns<'a> {
    /// The labelled rows of `data`, by column. Errors if there are none or fewer than two
    /// classes.
    pub fn new(data: &'a Dataset) -> Result<Self> {
        if data.spec().n_classes() < 2 {
            return Err(Error::config(
                "classes",
                "a batch booster needs at least 2 classes",
            ));
        }
        let rows: Vec<usize> = (0..data.len()).filter(|&i| data.is_labelled(i)).collect();
        if rows.is_empty() {
            return Err(Error::config("input", "no labelled rows to train on"));
        }
        if rows.len() >= MISSING as usize {
            return Err(Error::config(
                "input",
                format!("at most {} rows can be trained on at once", MISSING - 1),
            ));
        }
        let labels = rows
            .iter()
            .map(|&i| data.label(i).expect("labelled"))
            .collect();
        let columns = data
            .spec()
            .features
            .iter()
            .enumerate()
            .map(|(f, feature)| {
                let value = |j: usize| data.row(rows[j])[f];
                match feature.kind {
                    FeatureKind::Numeric => {
                        let (mut sorted, mut missing) =
                            (Vec::with_capacity(rows.len()), Vec::new());
                        for j in 0..rows.len() {
                            let v = value(j);
                            if is_present(v) {
                                sorted.push((v, j as u32));
                            } else {
                                missing.push(j as u32);
                            }
                        }
                        // Stable: equal values keep position order.
                        sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
                        sorted.shrink_to_fit();
                        Column::Numeric { sorted, missing }
                    }
                    FeatureKind::Nominal { .. } => {
                        let codes: Vec<u32> = (0..rows.len())
                            .map(|j| nominal_code(value(j)).map_or(MISSING, |c| c as u32))
                            .collect();
                        let categories = codes
                            .iter()
                            .filter(|&&c| c != MISSING)
                            .map(|&c| c as usize + 1)
                            .max()
                            .unwrap_or(0);
                        Column::Nominal { codes, categories }
                    }
                }
            })
            .collect();
        Ok(SortedColumns {
            data,
            rows,
            labels,
            columns,
        })
    }

    /// The data set the rows come from.
    pub fn data(&self) -> &'a Dataset {
        self.data
    }

    /// Labelled rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether there are no labelled rows (never: [`SortedColumns::new`] refuses that).
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Classes.
    pub fn k(&self) -> usize {
        self.data.spec().n_classes()
    }

    /// The features of the labelled row at position `j`.
    pub fn row(&self, j: usize) -> &'a [f64] {
        self.data.row(self.rows[j])
    }

    /// The label of each position.
    pub fn labels(&self) -> &[ClassId] {
        &self.labels
    }

    /// Bytes held by the table itself (not by the data set it reads).
    pub fn bytes(&self) -> usize {
        use std::mem::size_of;
        let columns: usize = self
            .columns
            .iter()
            .map(|c| match c {
                Column::Numeric { sorted, missing } => {
                    sorted.capacity() * size_of::<(f64, u32)>() + missing.capacity() * 4
                }
                Column::Nominal { codes, .. } => codes.capacity() * 4,
            })
            .sum();
        columns
            + self.rows.capacity() * size_of::<usize>()
            + self.labels.capacity() * size_of::<ClassId>()
    }

    pub(crate) fn columns(&self) -> &[Column] {
        &self.columns
    }
}
