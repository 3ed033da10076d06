//! What a stream looks like: its features and its class set, fixed when a model is built.

use serde::{Deserialize, Serialize};

/// Index of a class in a [`ClassSet`], `0..k`.
pub type ClassId = usize;

/// The kind of one feature column.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum FeatureKind {
    /// A real value; `NaN` (and ±∞) in a row means missing.
    Numeric,
    /// A category, given in a row as its code `0, 1, 2, …` (as `f64`); `NaN` means missing.
    /// `categories[code]` is the category's name. Codes past the end are categories the
    /// schema has not seen yet: learners accept them (WEAK_LEARNERS.md §1.5).
    Nominal {
        /// Names of the known categories, indexed by code.
        categories: Vec<String>,
    },
}

/// One feature column: a name and a kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Feature {
    /// Column name.
    pub name: String,
    /// Numeric or nominal.
    #[serde(flatten)]
    pub kind: FeatureKind,
}

impl Feature {
    /// A numeric feature.
    pub fn numeric(name: impl Into<String>) -> Self {
        Feature {
            name: name.into(),
            kind: FeatureKind::Numeric,
        }
    }

    /// A nominal feature with the given known categories.
    pub fn nominal<S: Into<String>>(
        name: impl Into<String>, categories: impl IntoIterator<Item = S>,
    ) -> Self {
        Feature {
            name: name.into(),
            kind: FeatureKind::Nominal {
                categories: categories.into_iter().map(Into::into).collect(),
            },
        }
    }

    /// Whether the feature is nominal.
    pub fn is_nominal(&self) -> bool {
        matches!(self.kind, FeatureKind::Nominal { .. })
    }
}

/// The ordered class names of a classification stream; a label is its index here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClassSet {
    names: Vec<String>,
}

impl ClassSet {
    /// A class set from its names, in id order. Duplicates are not allowed.
    pub fn new<S: Into<String>>(names: impl IntoIterator<Item = S>) -> crate::Result<Self> {
        let names: Vec<String> = names.into_iter().map(Into::into).collect();
        if names.len() < 2 {
            return Err(crate::Error::config(
                "classes",
                format!("needs at least 2 classes, got {}", names.len()),
            ));
        }
        let (limit, max) = (super::limits::LABEL_BYTES, super::limits::LABEL_BYTES.get());
        if let Some(long) = names.iter().find(|n| n.len() > max) {
            let start: String = long.chars().take(40).collect();
            return Err(crate::Error::config(
                "classes",
                format!("class `{start}…` {}", limit.exceeded(long.len(), max)),
            ));
        }
        let mut sorted = names.clone();
        sorted.sort();
        if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
            return Err(crate::Error::config(
                "classes",
                format!("class `{}` is listed twice", w[0]),
            ));
        }
        Ok(ClassSet { names })
    }

    /// Classes named `0..k`.
    pub fn numbered(k: usize) -> crate::Result<Self> {
        Self::new((0..k).map(|c| c.to_string()))
    }

    /// Number of classes `k`.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Always false: a class set has at least two classes.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The class names in id order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The name of class `id`.
    pub fn name(&self, id: ClassId) -> &str {
        &self.names[id]
    }

    /// The id of the class with this name.
    pub fn id(&self, name: &str) -> Option<ClassId> {
        self.names.iter().position(|n| n == name)
    }

    /// The id of every class by name, for lookups row after row.
    pub fn ids(&self) -> std::collections::HashMap<String, ClassId> {
        self.names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), i))
            .collect()
    }
}

/// What a row's target is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Task {
    /// One class per row (multiclass, binary).
    #[default]
    Multiclass,
    /// A set of relevant labels per row, to rank (\[JT\]); the class set names the labels.
    MultiLabel,
}

/// Features and classes of a stream: what a model is built for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StreamSpec {
    /// Feature columns, in row order.
    pub features: Vec<Feature>,
    /// The class set (the labels of a multi-label stream).
    pub classes: ClassSet,
    /// One class per row, or a label set.
    #[serde(default)]
    pub task: Task,
}

impl StreamSpec {
    /// Bytes its names (features, categories, classes) hold on the heap.
    pub fn heap_bytes(&self) -> usize {
        let strings = |names: &[String]| -> usize {
            names
                .iter()
                .map(|n| n.capacity() + std::mem::size_of::<String>())
                .sum()
        };
        let features = self.features.iter().map(|f| {
            let categories = match &f.kind {
                FeatureKind::Nominal { categories, .. } => strings(categories),
                FeatureKind::Numeric => 0,
            };
            std::mem::size_of::<Feature>() + f.name.capacity() + categories
        });
        features.sum::<usize>() + strings(&self.classes.names)
    }

    /// A multiclass spec from its parts.
    pub fn new(features: Vec<Feature>, classes: ClassSet) -> Self {
        StreamSpec {
            features,
            classes,
            task: Task::Multiclass,
        }
    }

    /// A multi-label spec: `labels` names the labels a row's set is drawn from.
    pub fn multi_label(features: Vec<Feature>, labels: ClassSet) -> Self {
        StreamSpec {
            features,
            classes: labels,
            task: Task::MultiLabel,
        }
    }

    /// Whether rows carry label sets.
    pub fn is_multi_label(&self) -> bool {
        self.task == Task::MultiLabel
    }

    /// A stream of `d` numeric features named `x0..` and `k` classes named `0..`.
    pub fn numeric(d: usize, k: usize) -> crate::Result<Self> {
        Ok(StreamSpec::new(
            (0..d).map(|j| Feature::numeric(format!("x{j}"))).collect(),
            ClassSet::numbered(k)?,
        ))
    }

    /// Number of features `d` (the length of a row).
    pub fn n_features(&self) -> usize {
        self.features.len()
    }

    /// Number of classes `k`.
    pub fn n_classes(&self) -> usize {
        self.classes.len()
    }

    /// The stream as a model that knows its first `k` classes sees it: classes are listed
    /// in the order a growing class set met them, so the others are those it has yet to meet.
    pub fn first_classes(&self, k: usize) -> crate::Result<StreamSpec> {
        Ok(StreamSpec {
            classes: ClassSet::new(self.classes.names().iter().take(k).cloned())?,
            ..self.clone()
        })
    }

    /// For each feature, whether it is nominal.
    pub fn nominal_mask(&self) -> Vec<bool> {
        self.features.iter().map(Feature::is_nominal).collect()
    }
}

/// Reads a nominal code from a row value. Missing (`NaN`), negative, fractional or absurdly
/// large values are `None`: a code is an index into per-category tables, and a value that is
/// not a small non-negative integer cannot be one, so it is treated as missing rather than
/// allowed to allocate a table of that size.
#[inline]
pub fn nominal_code(v: f64) -> Option<usize> {
    // `v as usize` truncates; equality with `v` then rules out fractions (and NaN fails the
    // range test), without a call to `trunc`.
    if v >= 0.0 && v < MAX_CATEGORY_CODE as f64 && (v as usize) as f64 == v {
        Some(v as usize)
    } else {
        None
    }
}

/// Category codes at or above this are treated as missing (see [`nominal_code`]).
pub const MAX_CATEGORY_CODE: usize = 1 << 16;

/// Whether a numeric row value is usable (finite). `NaN` means missing; infinities are
/// treated as missing too, as MOA's observers do (WEAK_LEARNERS.md §0).
#[inline]
pub fn is_present(v: f64) -> bool {
    v.is_finite()
}
