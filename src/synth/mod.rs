//! Seeded synthetic streams for tests, examples and benchmarks: small, fast and with known
//! structure, so that tests run anywhere without the shared data sets.

pub mod drift;

use crate::core::{ClassId, ClassSet, Dataset, Feature, Rng, StreamSpec};

/// A stream with 3 numeric and 2 nominal features and 3 classes. The class is a fixed rule of
/// the features (a threshold on `x0`, the category of `c0`, and the sign of `x1 − x2`), with a
/// share `noise` of labels replaced at random and a share `missing` of values set to `NaN`.
pub fn mixed(rows: usize, noise: f64, missing: f64, seed: u64) -> Dataset {
    let spec = StreamSpec::new(
        vec![
            Feature::numeric("x0"),
            Feature::numeric("x1"),
            Feature::numeric("x2"),
            Feature::nominal("c0", ["red", "green", "blue", "grey"]),
            Feature::nominal("c1", ["a", "b"]),
        ],
        ClassSet::new(["low", "mid", "high"]).expect("three classes"),
    );
    let mut rng = Rng::new(seed);
    let mut data = Dataset::new(spec);
    let mut row = [0.0; 5];
    for _ in 0..rows {
        row[0] = rng.uniform();
        row[1] = rng.uniform_in(-1.0, 1.0);
        row[2] = rng.uniform_in(-1.0, 1.0);
        row[3] = rng.below(4) as f64;
        row[4] = rng.below(2) as f64;
        let mut y = if row[0] < 0.3 {
            0
        } else if row[3] >= 2.0 {
            2
        } else if row[1] > row[2] {
            1
        } else {
            2
        };
        if rng.uniform() < noise {
            y = rng.below(3);
        }
        for v in &mut row {
            if rng.uniform() < missing {
                *v = f64::NAN;
            }
        }
        data.push(&row, Some(y));
    }
    data
}

/// [`mixed`] with two classes: `low` and `mid` become `yes` (class 0), `high` becomes `no`.
pub fn mixed_binary(rows: usize, noise: f64, missing: f64, seed: u64) -> Dataset {
    let three = mixed(rows, noise, missing, seed);
    let spec = StreamSpec::new(
        three.spec().features.clone(),
        ClassSet::new(["yes", "no"]).expect("two classes"),
    );
    let mut data = Dataset::new(spec);
    for i in 0..three.len() {
        data.push(three.row(i), three.label(i).map(|y| usize::from(y == 2)));
    }
    data
}

/// `k` Gaussian clusters in `d` dimensions (unit variance, centres drawn in `[-3, 3]^d`).
pub fn gaussian_blobs(rows: usize, d: usize, k: usize, seed: u64) -> Dataset {
    let spec = StreamSpec::numeric(d, k).expect("k >= 2");
    let mut rng = Rng::new(seed);
    let centres: Vec<f64> = (0..k * d).map(|_| rng.uniform_in(-3.0, 3.0)).collect();
    let mut data = Dataset::new(spec);
    let mut row = vec![0.0; d];
    for _ in 0..rows {
        let y = rng.below(k);
        for (j, v) in row.iter_mut().enumerate() {
            *v = centres[y * d + j] + standard_normal(&mut rng);
        }
        data.push(&row, Some(y));
    }
    data
}

/// Events of many keys (users, devices, merchants), each key with its own concept: a key's
/// popularity follows Zipf's law (key `i` of `n` drawn with probability ∝ `1/(i+1)^s`), and
/// its label is [`mixed`]'s rule with a threshold on `x0` and an order of the classes of its
/// own, so that one model per key learns what one model of all keys cannot. The rows have
/// [`mixed`]'s features and classes ([`KeyedEvents::spec`]).
#[derive(Debug, Clone)]
pub struct KeyedEvents {
    rng: Rng,
    keys: rand_distr::Zipf<f64>,
    noise: f64,
    seed: u64,
    /// Events drawn so far (the next one's id).
    drawn: u64,
}

impl KeyedEvents {
    /// Events over `keys` keys of Zipf exponent `s`, a share `noise` of labels drawn at
    /// random, from `seed`.
    pub fn new(keys: u64, s: f64, noise: f64, seed: u64) -> crate::Result<Self> {
        let zipf = rand_distr::Zipf::new(keys as f64, s)
            .map_err(|e| crate::Error::config("keys", format!("Zipf({keys}, {s}): {e}")))?;
        Ok(KeyedEvents {
            rng: Rng::new(seed),
            keys: zipf,
            noise,
            seed,
            drawn: 0,
        })
    }

    /// The stream's features and classes: [`mixed`]'s.
    pub fn spec() -> StreamSpec {
        mixed(0, 0.0, 0.0, 0).spec().clone()
    }

    /// The next event: its key (0 is the most popular), its features into `row` and its
    /// label.
    pub fn next_event(&mut self, row: &mut [f64; 5]) -> (u64, ClassId) {
        self.drawn += 1;
        let key = self.rng.sample(&self.keys) as u64 - 1;
        // The key's own threshold and class order, from a generator of its own: no table.
        let mut own = Rng::child(self.seed, key);
        let (threshold, shift) = (own.uniform_in(0.1, 0.6), own.below(3));
        row[0] = self.rng.uniform();
        row[1] = self.rng.uniform_in(-1.0, 1.0);
        row[2] = self.rng.uniform_in(-1.0, 1.0);
        row[3] = self.rng.below(4) as f64;
        row[4] = self.rng.below(2) as f64;
        let y = if row[0] < threshold {
            0
        } else if row[3] >= 2.0 {
            2
        } else if row[1] > row[2] {
            1
        } else {
            2
        };
        let y = match self.rng.uniform() < self.noise {
            true => self.rng.below(3),
            false => (y + shift) % 3,
        };
        (key, y)
    }
}

#[cfg(feature = "columnar")]
impl KeyedEvents {
    /// The next `n` events as a record batch: `id` (the event's number, from 0), `key`
    /// (`k<n>`), the features (categories as their names) and `label`, as `streamboost run
    /// --key key --passthrough id` reads them.
    pub fn batch(&mut self, n: usize) -> arrow::record_batch::RecordBatch {
        use std::sync::Arc;

        use arrow::array::{ArrayRef, Float64Array, Int64Array, StringArray};
        use arrow::datatypes::{DataType, Field, Schema};

        use crate::core::FeatureKind;

        let spec = Self::spec();
        let first = self.drawn as i64;
        let mut fields = vec![
            Field::new("id", DataType::Int64, false),
            Field::new("key", DataType::Utf8, false),
        ];
        let mut values = vec![Vec::with_capacity(n); spec.features.len()];
        let (mut keys, mut labels) = (Vec::with_capacity(n), Vec::with_capacity(n));
        let mut row = [0.0; 5];
        for _ in 0..n {
            let (key, y) = self.next_event(&mut row);
            keys.push(format!("k{key}"));
            for (column, v) in values.iter_mut().zip(row) {
                column.push(v);
            }
            labels.push(spec.classes.names()[y].as_str());
        }
        let ids = Int64Array::from_iter_values(first..first + n as i64);
        let mut columns: Vec<ArrayRef> = vec![Arc::new(ids), Arc::new(StringArray::from(keys))];
        for (feature, column) in spec.features.iter().zip(values) {
            let (kind, array): (_, ArrayRef) = match &feature.kind {
                FeatureKind::Numeric => (DataType::Float64, Arc::new(Float64Array::from(column))),
                FeatureKind::Nominal { categories } => (
                    DataType::Utf8,
                    Arc::new(StringArray::from_iter_values(
                        column.iter().map(|&code| &categories[code as usize]),
                    )),
                ),
            };
            fields.push(Field::new(&feature.name, kind, false));
            columns.push(array);
        }
        fields.push(Field::new("label", DataType::Utf8, false));
        columns.push(Arc::new(StringArray::from(labels)));
        let schema = Arc::new(Schema::new(fields));
        arrow::record_batch::RecordBatch::try_new(schema, columns).expect("columns of the schema")
    }
}

/// A standard normal draw (Box–Muller).
fn standard_normal(rng: &mut Rng) -> f64 {
    let u1 = 1.0 - rng.uniform(); // (0, 1]
    let u2 = rng.uniform();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// A multi-label stream over the features of [`mixed`] with 5 labels, each a fixed rule of
/// the features (so label sets overlap and vary in size, empty sets included), a share
/// `noise` of label flags flipped and a share `missing` of values set to `NaN`.
pub fn mixed_multi_label(rows: usize, noise: f64, missing: f64, seed: u64) -> Dataset {
    let base = mixed(rows, 0.0, 0.0, seed);
    let spec = StreamSpec::multi_label(
        base.spec().features.clone(),
        ClassSet::new(["sky", "sea", "sand", "city", "wood"]).expect("five labels"),
    );
    let mut rng = Rng::new(seed ^ 0x5eed);
    let mut data = Dataset::new(spec);
    let mut row = [0.0; 5];
    for i in 0..base.len() {
        row.copy_from_slice(base.row(i));
        let mut set = [
            row[0] > 0.5,
            row[1] > 0.0,
            row[3] < 2.0 && row[2] < 0.3,
            row[4] == 1.0 && row[0] > 0.3,
            row[1] + row[2] < -0.5,
        ];
        for flag in &mut set {
            if rng.uniform() < noise {
                *flag = !*flag;
            }
        }
        for v in &mut row {
            if rng.uniform() < missing {
                *v = f64::NAN;
            }
        }
        data.push_label_set(&row, Some(&set));
    }
    data
}
