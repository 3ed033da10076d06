//! Drifting streams, seeded, from the generators' papers, for measuring how a model follows
//! a change (`replay --synth SPEC`):
//!
//! * **`sea`** (Street & Kim, KDD 2001): three features uniform in `[0, 10]`, the class
//!   `x₀ + x₁ ≤ θ` (the third is noise), a share `noise` of labels flipped. The stream runs
//!   through the paper's four concepts, `θ` = 8, 9, 7 and 9.5, a quarter of the rows each:
//!   `drift=abrupt` switches at once; `drift=gradual` mixes old and new over `width` rows as
//!   MOA's `ConceptDriftStream` does (a row comes from the new concept with probability
//!   `1/(1 + e^{−4(t − t₀)/width})`); `drift=recurring` alternates the first two concepts,
//!   eight stretches, so that each comes back.
//! * **`hyperplane`** (Hulten, Spencer & Domingos, KDD 2001, as MOA generates it): `features`
//!   values uniform in `[0, 1]`, the class `Σ wᵢxᵢ ≥ ½ Σ wᵢ`; after every row each of the
//!   first `drift-features` weights moves by `speed` in its direction, which turns back with
//!   probability 1/10; a share `noise` of labels flipped.
//! * **`rbf`** (MOA's `RandomRBFGeneratorDrift`): `centroids` Gaussian clusters in
//!   `[0, 1]^features`, each with a class, a weight and a spread; a row is drawn from a
//!   centroid chosen by weight, at a Gaussian distance along a random direction; every
//!   centroid moves by `speed` a row along its own direction, bouncing off the cube's faces.
//!
//! A spec is `NAME[:KEY=VALUE]…`, with `rows` (100,000) and `seed` (1) for all.

use std::str::FromStr;

use crate::core::{ClassId, ClassSet, Dataset, Feature, Rng, StreamSpec};
use crate::{Error, Result};

/// Which generator, with its parameters (module doc).
#[derive(Debug, Clone, PartialEq)]
pub enum Generator {
    /// SEA concepts.
    Sea {
        /// How the concepts follow each other.
        drift: SeaDrift,
        /// Rows over which a gradual change mixes two concepts.
        width: u64,
        /// Share of labels flipped.
        noise: f64,
    },
    /// A rotating hyperplane.
    Hyperplane {
        /// Features.
        features: usize,
        /// Features whose weights move.
        drift_features: usize,
        /// How far a weight moves a row.
        speed: f64,
        /// Share of labels flipped.
        noise: f64,
    },
    /// Gaussian clusters that move.
    Rbf {
        /// Features.
        features: usize,
        /// Classes.
        classes: usize,
        /// Clusters.
        centroids: usize,
        /// How far a centroid moves a row.
        speed: f64,
    },
}

/// How SEA's concepts follow each other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeaDrift {
    /// At once.
    Abrupt,
    /// Over `width` rows.
    Gradual,
    /// Two concepts in turn.
    Recurring,
}

/// A drifting stream to generate: its generator, length and seed.
#[derive(Debug, Clone, PartialEq)]
pub struct DriftSpec {
    /// The generator.
    pub generator: Generator,
    /// Rows.
    pub rows: usize,
    /// Seed of every draw.
    pub seed: u64,
}

impl FromStr for DriftSpec {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        let bad = |why: String| Error::config("synth", format!("`{s}`: {why}"));
        let mut parts = s.split(':');
        let name = parts.next().unwrap_or_default();
        let mut pairs = Vec::new();
        for part in parts {
            let (key, value) = part
                .split_once('=')
                .ok_or_else(|| bad(format!("`{part}` is not KEY=VALUE")))?;
            pairs.push((key, value));
        }
        let mut take = |key: &str, default: f64| -> Result<f64> {
            match pairs.iter().position(|(k, _)| *k == key) {
                Some(i) => {
                    let (_, value) = pairs.remove(i);
                    value
                        .parse::<f64>()
                        .ok()
                        .filter(|v| v.is_finite() && *v >= 0.0)
                        .ok_or_else(|| bad(format!("{key}={value} is not a number >= 0")))
                }
                None => Ok(default),
            }
        };
        let rows = take("rows", 100_000.0)? as usize;
        let seed = take("seed", 1.0)? as u64;
        let generator = match name {
            "sea" => {
                let (width, noise) = (take("width", 1_000.0)? as u64, take("noise", 0.1)?);
                let drift = match pairs.iter().position(|(k, _)| *k == "drift") {
                    None => SeaDrift::Abrupt,
                    Some(i) => match pairs.remove(i).1 {
                        "abrupt" => SeaDrift::Abrupt,
                        "gradual" => SeaDrift::Gradual,
                        "recurring" => SeaDrift::Recurring,
                        other => {
                            return Err(bad(format!(
                                "drift={other}: expected abrupt, gradual or recurring"
                            )));
                        }
                    },
                };
                Generator::Sea {
                    drift,
                    width: width.max(1),
                    noise,
                }
            }
            "hyperplane" => Generator::Hyperplane {
                features: take("features", 10.0)? as usize,
                drift_features: take("drift-features", 2.0)? as usize,
                speed: take("speed", 0.001)?,
                noise: take("noise", 0.05)?,
            },
            "rbf" => Generator::Rbf {
                features: take("features", 10.0)? as usize,
                classes: take("classes", 5.0)? as usize,
                centroids: take("centroids", 50.0)? as usize,
                speed: take("speed", 0.001)?,
            },
            other => {
                return Err(bad(format!(
                    "no generator `{other}`: expected sea, hyperplane or rbf"
                )));
            }
        };
        if let Some((key, _)) = pairs.first() {
            return Err(bad(format!("{name} has no parameter `{key}`")));
        }
        let spec = DriftSpec {
            generator,
            rows,
            seed,
        };
        spec.validate().map_err(|e| bad(e.to_string()))?;
        Ok(spec)
    }
}

impl DriftSpec {
    fn validate(&self) -> Result<()> {
        let share = |name: &str, v: f64| {
            (v <= 1.0)
                .then_some(())
                .ok_or_else(|| Error::config("synth", format!("{name} must be at most 1")))
        };
        if self.rows == 0 {
            return Err(Error::config("synth", "rows must be at least 1"));
        }
        match &self.generator {
            Generator::Sea { noise, .. } => share("noise", *noise),
            Generator::Hyperplane {
                features,
                drift_features,
                noise,
                ..
            } => {
                share("noise", *noise)?;
                (*features >= 1 && drift_features <= features)
                    .then_some(())
                    .ok_or_else(|| {
                        Error::config("synth", "features >= 1 and drift-features <= features")
                    })
            }
            Generator::Rbf {
                features,
                classes,
                centroids,
                ..
            } => (*features >= 1 && *classes >= 2 && *centroids >= 1)
                .then_some(())
                .ok_or_else(|| {
                    Error::config("synth", "features >= 1, classes >= 2, centroids >= 1")
                }),
        }
    }

    /// The stream.
    pub fn generate(&self) -> Dataset {
        let mut rng = Rng::new(self.seed);
        match &self.generator {
            Generator::Sea {
                drift,
                width,
                noise,
            } => sea(&mut rng, self.rows, *drift, *width, *noise),
            Generator::Hyperplane {
                features,
                drift_features,
                speed,
                noise,
            } => hyperplane(
                &mut rng,
                self.rows,
                *features,
                *drift_features,
                *speed,
                *noise,
            ),
            Generator::Rbf {
                features,
                classes,
                centroids,
                speed,
            } => rbf(&mut rng, self.rows, *features, *classes, *centroids, *speed),
        }
    }
}

/// Numeric features `x0, x1, …` and classes `c0, c1, …`.
fn numeric_spec(features: usize, classes: usize) -> StreamSpec {
    StreamSpec::new(
        (0..features)
            .map(|j| Feature::numeric(format!("x{j}")))
            .collect(),
        ClassSet::new((0..classes).map(|c| format!("c{c}"))).expect("distinct class names"),
    )
}

/// `y`, or with probability `noise` the other of two classes.
fn flipped(rng: &mut Rng, y: ClassId, noise: f64) -> ClassId {
    if rng.uniform() < noise { 1 - y } else { y }
}

/// SEA's thresholds (Street & Kim 2001, §4.1).
const SEA_THRESHOLDS: [f64; 4] = [8.0, 9.0, 7.0, 9.5];

/// Which SEA concept row `t` of `rows` is drawn from.
fn sea_concept(rng: &mut Rng, t: usize, rows: usize, drift: SeaDrift, width: u64) -> usize {
    match drift {
        SeaDrift::Recurring => (t * 8 / rows) % 2,
        SeaDrift::Abrupt => t * 4 / rows,
        SeaDrift::Gradual => {
            // The latest change point at or before the middle of its transition.
            let stretch = rows as f64 / 4.0;
            let next = ((t as f64 / stretch) + 0.5).floor().clamp(1.0, 3.0);
            let at = next * stretch;
            let p_new = 1.0 / (1.0 + (-4.0 * (t as f64 - at) / width as f64).exp());
            next as usize - usize::from(rng.uniform() >= p_new)
        }
    }
}

fn sea(rng: &mut Rng, rows: usize, drift: SeaDrift, width: u64, noise: f64) -> Dataset {
    let mut data = Dataset::new(numeric_spec(3, 2));
    let mut row = [0.0; 3];
    for t in 0..rows {
        let theta = SEA_THRESHOLDS[sea_concept(rng, t, rows, drift, width)];
        row.iter_mut().for_each(|v| *v = 10.0 * rng.uniform());
        let y = usize::from(row[0] + row[1] > theta);
        data.push(&row, Some(flipped(rng, y, noise)));
    }
    data
}

fn hyperplane(
    rng: &mut Rng, rows: usize, features: usize, drift_features: usize, speed: f64, noise: f64,
) -> Dataset {
    let mut data = Dataset::new(numeric_spec(features, 2));
    let mut weights: Vec<f64> = (0..features).map(|_| rng.uniform()).collect();
    let mut directions: Vec<f64> = (0..drift_features)
        .map(|_| if rng.uniform() < 0.5 { -1.0 } else { 1.0 })
        .collect();
    let mut row = vec![0.0; features];
    for _ in 0..rows {
        row.iter_mut().for_each(|v| *v = rng.uniform());
        let sum: f64 = row.iter().zip(&weights).map(|(x, w)| x * w).sum();
        let y = usize::from(sum >= weights.iter().sum::<f64>() / 2.0);
        data.push(&row, Some(flipped(rng, y, noise)));
        for (w, d) in weights.iter_mut().zip(&mut directions) {
            *w += *d * speed;
            if rng.uniform() < 0.1 {
                *d = -*d;
            }
        }
    }
    data
}

/// A standard normal draw (Box–Muller).
fn gaussian(rng: &mut Rng) -> f64 {
    let u = 1.0 - rng.uniform();
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * rng.uniform()).cos()
}

/// A random unit vector of `d` components.
fn direction(rng: &mut Rng, d: usize) -> Vec<f64> {
    let v: Vec<f64> = (0..d).map(|_| gaussian(rng)).collect();
    let norm = v
        .iter()
        .map(|x| x * x)
        .sum::<f64>()
        .sqrt()
        .max(f64::MIN_POSITIVE);
    v.into_iter().map(|x| x / norm).collect()
}

fn rbf(
    rng: &mut Rng, rows: usize, features: usize, classes: usize, centroids: usize, speed: f64,
) -> Dataset {
    struct Centroid {
        centre: Vec<f64>,
        class: ClassId,
        spread: f64,
        weight: f64,
        heading: Vec<f64>,
    }
    let mut clusters: Vec<Centroid> = (0..centroids)
        .map(|_| Centroid {
            centre: (0..features).map(|_| rng.uniform()).collect(),
            class: rng.below(classes),
            spread: rng.uniform(),
            weight: rng.uniform(),
            heading: direction(rng, features),
        })
        .collect();
    let total: f64 = clusters.iter().map(|c| c.weight).sum();
    let mut data = Dataset::new(numeric_spec(features, classes));
    let mut row = vec![0.0; features];
    for _ in 0..rows {
        let mut pick = rng.uniform() * total;
        let chosen = clusters
            .iter()
            .position(|c| {
                pick -= c.weight;
                pick < 0.0
            })
            .unwrap_or(centroids - 1);
        let c = &clusters[chosen];
        let (way, length) = (direction(rng, features), gaussian(rng) * c.spread);
        for ((v, centre), w) in row.iter_mut().zip(&c.centre).zip(&way) {
            *v = centre + w * length;
        }
        data.push(&row, Some(c.class));
        for c in &mut clusters {
            for (x, h) in c.centre.iter_mut().zip(&mut c.heading) {
                *x += *h * speed;
                if !(0.0..=1.0).contains(x) {
                    *x = x.clamp(0.0, 1.0);
                    *h = -*h;
                }
            }
        }
    }
    data
}

#[cfg(test)]
mod tests {
    use super::*;

    fn generate(spec: &str) -> Dataset {
        spec.parse::<DriftSpec>().unwrap().generate()
    }

    /// The share of rows whose label is SEA concept `theta`'s, over `range`.
    fn agreement(data: &Dataset, range: std::ops::Range<usize>, theta: f64) -> f64 {
        let agree = range
            .clone()
            .filter(|&i| {
                let x = data.row(i);
                data.label(i) == Some(usize::from(x[0] + x[1] > theta))
            })
            .count();
        agree as f64 / range.len() as f64
    }

    #[test]
    fn sea_runs_through_its_four_concepts_abruptly_or_gradually() {
        let abrupt = generate("sea:rows=40000:noise=0.1:seed=3");
        for (q, &theta) in SEA_THRESHOLDS.iter().enumerate() {
            let share = agreement(&abrupt, q * 10_000..(q + 1) * 10_000, theta);
            assert!((share - 0.9).abs() < 0.01, "concept {q}: {share}");
        }
        // Gradual: at the middle of the first transition, half the rows are each concept's;
        // rows that both concepts label alike are most, so compare where they differ.
        let gradual = generate("sea:rows=40000:noise=0:drift=gradual:width=2000:seed=3");
        let (old, new) = (SEA_THRESHOLDS[0], SEA_THRESHOLDS[1]);
        let differ: Vec<usize> = (9_800..10_200)
            .filter(|&i| {
                let s = gradual.row(i)[0] + gradual.row(i)[1];
                (s > old) != (s > new)
            })
            .collect();
        let newer = differ
            .iter()
            .filter(|&&i| {
                let s = gradual.row(i)[0] + gradual.row(i)[1];
                gradual.label(i) == Some(usize::from(s > new))
            })
            .count();
        let share = newer as f64 / differ.len() as f64;
        assert!((0.3..0.7).contains(&share), "{share} of {}", differ.len());
        assert!(agreement(&gradual, 0..8_000, old) > 0.999);
    }

    #[test]
    fn a_recurring_stream_comes_back_to_its_first_concept() {
        let data = generate("sea:rows=8000:noise=0:drift=recurring");
        assert!(agreement(&data, 0..1000, 8.0) == 1.0);
        assert!(agreement(&data, 1000..2000, 9.0) == 1.0);
        assert!(agreement(&data, 2000..3000, 8.0) == 1.0);
    }

    #[test]
    fn the_hyperplane_turns_and_the_clusters_move_within_the_cube() {
        let data = generate("hyperplane:rows=20000:speed=0.01:noise=0");
        let ones = (0..data.len())
            .filter(|&i| data.label(i) == Some(1))
            .count();
        assert!((0.3..0.7).contains(&(ones as f64 / data.len() as f64)));
        let rbf = generate("rbf:rows=5000:classes=3:centroids=10:features=4:speed=0.01");
        assert_eq!(rbf.spec().n_classes(), 3);
        assert_eq!(rbf.spec().features.len(), 4);
        // Seeded: the same spec draws the same rows.
        let again = generate("rbf:rows=5000:classes=3:centroids=10:features=4:speed=0.01");
        assert!((0..rbf.len()).all(|i| rbf.row(i) == again.row(i)));
    }

    #[test]
    fn a_bad_spec_names_what_is_wrong() {
        for (spec, says) in [
            ("waves", "no generator `waves`"),
            ("sea:drift=sideways", "drift=sideways"),
            ("sea:rows=ten", "rows=ten"),
            ("sea:speed=1", "sea has no parameter `speed`"),
            ("sea:noise=2", "noise must be at most 1"),
            ("rbf:classes=1", "classes >= 2"),
            ("hyperplane:rows", "`rows` is not KEY=VALUE"),
        ] {
            let err = spec.parse::<DriftSpec>().unwrap_err().to_string();
            assert!(err.contains(says), "{spec}: {err}");
        }
    }
}
