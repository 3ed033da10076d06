//! An in-memory stream: rows in input order with their labels.

use super::{ClassId, StreamSpec};

/// Rows (row-major, `d` values each) and labels of a stream, in input order. Row `i` is the
/// `i`-th data row of the inputs taken one after another; a `None` label is a row to score
/// but not to learn from.
#[derive(Debug, Clone, PartialEq)]
pub struct Dataset {
    spec: StreamSpec,
    values: Vec<f64>,
    labels: Vec<Option<ClassId>>,
}

impl Dataset {
    /// An empty data set for `spec`.
    pub fn new(spec: StreamSpec) -> Self {
        Dataset {
            spec,
            values: Vec::new(),
            labels: Vec::new(),
        }
    }

    /// A data set from row-major `values` (`d` per row) and one label per row.
    pub fn from_parts(
        spec: StreamSpec,
        values: Vec<f64>,
        labels: Vec<Option<ClassId>>,
    ) -> crate::Result<Self> {
        if values.len() != labels.len() * spec.n_features() {
            return Err(crate::Error::config(
                "values",
                format!(
                    "{} values do not make {} rows of {} features",
                    values.len(),
                    labels.len(),
                    spec.n_features()
                ),
            ));
        }
        if let Some(row) = labels
            .iter()
            .position(|y| y.is_some_and(|y| y >= spec.n_classes()))
        {
            return Err(crate::Error::InvalidRow {
                row: row as u64,
                message: format!("label id outside the {} classes", spec.n_classes()),
            });
        }
        Ok(Dataset {
            spec,
            values,
            labels,
        })
    }

    /// Appends a row. Panics if its length is not the spec's number of features or its label
    /// is not a class of the spec.
    pub fn push(&mut self, row: &[f64], label: Option<ClassId>) {
        assert_eq!(row.len(), self.spec.n_features(), "row length");
        assert!(
            label.is_none_or(|y| y < self.spec.n_classes()),
            "label out of range"
        );
        self.values.extend_from_slice(row);
        self.labels.push(label);
    }

    /// The stream's spec.
    pub fn spec(&self) -> &StreamSpec {
        &self.spec
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// Row `i`.
    #[inline]
    pub fn row(&self, i: usize) -> &[f64] {
        let d = self.spec.n_features();
        &self.values[i * d..(i + 1) * d]
    }

    /// Label of row `i`.
    #[inline]
    pub fn label(&self, i: usize) -> Option<ClassId> {
        self.labels[i]
    }

    /// All labels.
    pub fn labels(&self) -> &[Option<ClassId>] {
        &self.labels
    }
}
