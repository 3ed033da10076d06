//! Seeded synthetic streams for tests, examples and benchmarks: small, fast and with known
//! structure, so that tests run anywhere without the shared data sets.

use crate::core::{ClassSet, Dataset, Feature, Rng, StreamSpec};

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
