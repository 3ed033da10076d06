//! An in-memory stream: rows in input order with their labels.

use super::{ClassId, StreamSpec};

/// Rows (row-major, `d` values each) and labels of a stream, in input order. Row `i` is the
/// `i`-th data row of the inputs taken one after another; a `None` label is a row to score
/// but not to learn from.
///
/// A multi-label stream ([`StreamSpec::is_multi_label`]) has a label set per row instead of
/// a label: a mask of `k` flags, [`Dataset::label_set`]; its [`Dataset::label`] is `None`.
#[derive(Debug, Clone, PartialEq)]
pub struct Dataset {
    spec: StreamSpec,
    values: Vec<f64>,
    labels: Vec<Option<ClassId>>,
    /// Multi-label streams: `k` relevance flags per row, row-major.
    masks: Vec<bool>,
    /// Multi-label streams: whether row `i`'s set is known.
    known_sets: Vec<bool>,
}

impl Dataset {
    /// Rows `range` of this data set (a training part and a test part of a logged table).
    pub fn slice(&self, range: std::ops::Range<usize>) -> Dataset {
        self.pick(range)
    }

    /// The rows `rows` of this data set, in that order.
    pub fn pick(&self, rows: impl IntoIterator<Item = usize>) -> Dataset {
        let k = self.spec.n_classes();
        let sets = !self.masks.is_empty();
        let mut out = Dataset::new(self.spec.clone());
        for i in rows {
            out.values.extend_from_slice(self.row(i));
            out.labels.push(self.labels[i]);
            if sets {
                out.masks.extend_from_slice(&self.masks[i * k..(i + 1) * k]);
                out.known_sets.push(self.known_sets[i]);
            }
        }
        out
    }

    /// An empty data set for `spec`.
    pub fn new(spec: StreamSpec) -> Self {
        Dataset {
            spec,
            values: Vec::new(),
            labels: Vec::new(),
            masks: Vec::new(),
            known_sets: Vec::new(),
        }
    }

    /// A data set from row-major `values` (`d` per row) and one label per row.
    pub fn from_parts(
        spec: StreamSpec, values: Vec<f64>, labels: Vec<Option<ClassId>>,
    ) -> crate::Result<Self> {
        if spec.is_multi_label() {
            return Err(crate::Error::config(
                "labels",
                "a multi-label stream takes label sets (Dataset::from_label_sets)",
            ));
        }
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
            masks: Vec::new(),
            known_sets: Vec::new(),
        })
    }

    /// A multi-label data set from row-major `values` and one optional label set per row
    /// (a mask of the spec's `k` labels).
    pub fn from_label_sets(
        spec: StreamSpec, values: Vec<f64>, sets: Vec<Option<Vec<bool>>>,
    ) -> crate::Result<Self> {
        let mut data = Dataset::new(spec);
        let (d, k) = (data.spec.n_features(), data.spec.n_classes());
        if !data.spec.is_multi_label() {
            return Err(crate::Error::config(
                "labels",
                "the spec is not multi-label",
            ));
        }
        if values.len() != sets.len() * d {
            return Err(crate::Error::config(
                "values",
                format!(
                    "{} values do not make {} rows of {d} features",
                    values.len(),
                    sets.len()
                ),
            ));
        }
        if let Some(row) = sets
            .iter()
            .position(|s| s.as_ref().is_some_and(|s| s.len() != k))
        {
            return Err(crate::Error::InvalidRow {
                row: row as u64,
                message: format!("label set is not a mask of the {k} labels"),
            });
        }
        for (i, set) in sets.iter().enumerate() {
            data.push_label_set(&values[i * d..(i + 1) * d], set.as_deref());
        }
        Ok(data)
    }

    /// Appends a row of a multi-label stream. Panics if the row's length or the mask's is
    /// not the spec's.
    pub fn push_label_set(&mut self, row: &[f64], set: Option<&[bool]>) {
        let k = self.spec.n_classes();
        assert!(self.spec.is_multi_label(), "not a multi-label stream");
        assert_eq!(row.len(), self.spec.n_features(), "row length");
        assert!(set.is_none_or(|s| s.len() == k), "label set length");
        self.values.extend_from_slice(row);
        self.labels.push(None);
        self.known_sets.push(set.is_some());
        match set {
            Some(mask) => self.masks.extend_from_slice(mask),
            None => self.masks.extend(std::iter::repeat_n(false, k)),
        }
    }

    /// Appends a row. Panics if its length is not the spec's number of features or its label
    /// is not a class of the spec.
    pub fn push(&mut self, row: &[f64], label: Option<ClassId>) {
        assert!(
            !self.spec.is_multi_label(),
            "a multi-label stream takes label sets"
        );
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

    /// Every row's values, row-major.
    pub fn rows(&self) -> &[f64] {
        &self.values
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

    /// The label set of row `i` of a multi-label stream (`relevant[l]` per label), `None` if
    /// unknown or if the stream is multiclass.
    #[inline]
    pub fn label_set(&self, i: usize) -> Option<&[bool]> {
        let k = self.spec.n_classes();
        self.known_sets
            .get(i)
            .copied()
            .unwrap_or(false)
            .then(|| &self.masks[i * k..(i + 1) * k])
    }

    /// Whether row `i` has a known target (a label, or a label set).
    #[inline]
    pub fn is_labelled(&self, i: usize) -> bool {
        self.labels[i].is_some() || self.known_sets.get(i).copied().unwrap_or(false)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_slice_holds_its_rows_labels_and_label_sets() {
        let data = crate::synth::mixed(10, 0.0, 0.0, 1);
        let part = data.slice(3..7);
        assert_eq!(part.len(), 4);
        assert_eq!(part.spec(), data.spec());
        for i in 0..4 {
            assert_eq!(part.row(i), data.row(i + 3));
            assert_eq!(part.label(i), data.label(i + 3));
        }
        let spec = crate::core::StreamSpec::multi_label(
            vec![crate::core::Feature::numeric("x")],
            crate::core::ClassSet::new(["a", "b"]).unwrap(),
        );
        let mut sets = super::Dataset::new(spec);
        sets.push_label_set(&[1.0], Some(&[true, false]));
        sets.push_label_set(&[2.0], None);
        sets.push_label_set(&[3.0], Some(&[false, true]));
        let part = sets.slice(1..3);
        assert_eq!(part.label_set(0), None);
        assert_eq!(part.label_set(1), Some(&[false, true][..]));
        assert_eq!(part.row(1), &[3.0]);
    }
}
