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
//! * **`agrawal`** (Agrawal, Imielinski & Swami, IEEE TKDE 1993, as MOA's `AgrawalGenerator`
//!   generates it): a loan applicant's salary, commission, age, education level (`elevel`),
//!   car, zip code, house value (`hvalue`), years owned (`hyears`) and loan, the class
//!   `groupA` or `groupB` by one of the paper's ten functions; the numeric attributes are
//!   then moved by up to `perturbation` of their range (MOA's perturbation: the label is the
//!   unperturbed applicant's) and a share `noise` of labels flipped. The stream runs through
//!   the `functions` listed, equal stretches, switching as `sea` does (`drift=abrupt` or
//!   `gradual` over `width` rows). The default, 1 → 4 → 7, goes from age alone to age,
//!   education and salary, then to disposable income (salary, commission and loan, no age):
//!   each concept labels about half the rows unlike the one before it, and none of them is
//!   one of the nearly constant functions 8 and 10 (98% and 99.8% of rows in `groupA`).
//! * **`led`** (Breiman, Friedman, Olshen & Stone, CART 1984, as MOA's `LEDGeneratorDrift`):
//!   the digit 0–9 on a seven-segment display, each segment inverted with probability
//!   `noise`, then 17 random bits that do not matter: 24 features of 0 or 1, the class `cD`
//!   the digit `D`. At the middle of the stream (`drift=abrupt`, or `gradual` over `width`
//!   rows) the first `drift-features` segments trade places with the first irrelevant
//!   attributes, segment `i` going to attribute `7 + i`: MOA's `LEDGenerator` followed by
//!   its `LEDGeneratorDrift -d N` in a `ConceptDriftStream`.
//!
//! A spec is `NAME[:KEY=VALUE]…`, with `rows` (100,000) and `seed` (1) for all. `agrawal`
//! takes `functions` (`1,4,7`), `drift` (`abrupt`), `width` (1,000), `perturbation` (0.05,
//! MOA's) and `noise` (0); `led` takes `noise` (0.1, the paper's), `drift-features` (7),
//! `drift` (`abrupt`) and `width` (1,000).

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
    /// Agrawal et al.'s loan applicants.
    Agrawal {
        /// The classification functions (1–10) the stream runs through, in order.
        functions: Vec<u8>,
        /// How one function gives way to the next.
        drift: Transition,
        /// Rows over which a gradual change mixes two functions.
        width: u64,
        /// How far, as a share of its range, a numeric attribute moves at most.
        perturbation: f64,
        /// Share of labels flipped.
        noise: f64,
    },
    /// The LED display, its segments moving to other attributes half way.
    Led {
        /// Probability that a segment is inverted.
        noise: f64,
        /// Segments that trade places with irrelevant attributes (at most 7).
        drift_features: usize,
        /// How the new places replace the old ones.
        drift: Transition,
        /// Rows over which a gradual change mixes the two.
        width: u64,
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

/// How one concept gives way to the next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transition {
    /// At once.
    Abrupt,
    /// Over `width` rows.
    Gradual,
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
        let transition = |value: Option<&str>| match value {
            None | Some("abrupt") => Ok(Transition::Abrupt),
            Some("gradual") => Ok(Transition::Gradual),
            Some(other) => Err(bad(format!("drift={other}: expected abrupt or gradual"))),
        };
        let generator = match name {
            "sea" => {
                let (width, noise) = (take("width", 1_000.0)? as u64, take("noise", 0.1)?);
                let drift = match take_text(&mut pairs, "drift") {
                    None | Some("abrupt") => SeaDrift::Abrupt,
                    Some("gradual") => SeaDrift::Gradual,
                    Some("recurring") => SeaDrift::Recurring,
                    Some(other) => {
                        return Err(bad(format!(
                            "drift={other}: expected abrupt, gradual or recurring"
                        )));
                    }
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
            "agrawal" => {
                let (width, perturbation, noise) = (
                    take("width", 1_000.0)? as u64,
                    take("perturbation", 0.05)?,
                    take("noise", 0.0)?,
                );
                let drift = transition(take_text(&mut pairs, "drift"))?;
                let functions = match take_text(&mut pairs, "functions") {
                    None => AGRAWAL_FUNCTIONS.to_vec(),
                    Some(list) => list
                        .split(',')
                        .map(|f| f.trim().parse::<u8>().ok())
                        .collect::<Option<Vec<u8>>>()
                        .ok_or_else(|| bad(format!("functions={list}: {AGRAWAL_LIST}")))?,
                };
                Generator::Agrawal {
                    functions,
                    drift,
                    width: width.max(1),
                    perturbation,
                    noise,
                }
            }
            "led" => {
                let (width, noise, drift_features) = (
                    take("width", 1_000.0)? as u64,
                    take("noise", 0.1)?,
                    take("drift-features", 7.0)? as usize,
                );
                Generator::Led {
                    noise,
                    drift_features,
                    drift: transition(take_text(&mut pairs, "drift"))?,
                    width: width.max(1),
                }
            }
            other => {
                return Err(bad(format!(
                    "no generator `{other}`: expected sea, hyperplane, rbf, agrawal or led"
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

/// The value of `key` in `pairs`, taken out of them.
fn take_text<'a>(pairs: &mut Vec<(&str, &'a str)>, key: &str) -> Option<&'a str> {
    let i = pairs.iter().position(|(k, _)| *k == key)?;
    Some(pairs.remove(i).1)
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
            Generator::Agrawal {
                functions,
                perturbation,
                noise,
                ..
            } => {
                share("perturbation", *perturbation)?;
                share("noise", *noise)?;
                (!functions.is_empty() && functions.iter().all(|f| (1..=10).contains(f)))
                    .then_some(())
                    .ok_or_else(|| {
                        let list: Vec<String> = functions.iter().map(u8::to_string).collect();
                        Error::config(
                            "synth",
                            format!("functions={}: {AGRAWAL_LIST}", list.join(",")),
                        )
                    })
            }
            Generator::Led {
                noise,
                drift_features,
                ..
            } => {
                share("noise", *noise)?;
                (*drift_features <= LED_DIGITS[0].len())
                    .then_some(())
                    .ok_or_else(|| Error::config("synth", "drift-features must be at most 7"))
            }
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
            Generator::Agrawal {
                functions,
                drift,
                width,
                perturbation,
                noise,
            } => agrawal(
                &mut rng,
                self.rows,
                functions,
                (*drift, *width),
                *perturbation,
                *noise,
            ),
            Generator::Led {
                noise,
                drift_features,
                drift,
                width,
            } => led(
                &mut rng,
                self.rows,
                *noise,
                *drift_features,
                (*drift, *width),
            ),
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

/// Which of `concepts` concepts row `t` of `rows` is drawn from, the stream running through
/// them in order, `rows / concepts` rows each. `Abrupt` switches at each change point
/// `t₀ = k · rows / concepts`; `Gradual` mixes the two concepts either side of the nearest
/// change point as MOA's `ConceptDriftStream` does: the row comes from the later one with
/// probability `1/(1 + e^{−4(t − t₀)/width})` (a draw of `rng` a row).
fn concept_at(
    rng: &mut Rng, t: usize, rows: usize, concepts: usize, (transition, width): (Transition, u64),
) -> usize {
    match transition {
        Transition::Abrupt => t * concepts / rows,
        // One concept: no change point to mix around.
        Transition::Gradual if concepts < 2 => 0,
        Transition::Gradual => {
            // The change point nearest `t`: its transition runs from the middle of the
            // stretch before it to the middle of the stretch after it.
            let stretch = rows as f64 / concepts as f64;
            let next = ((t as f64 / stretch) + 0.5)
                .floor()
                .clamp(1.0, (concepts - 1) as f64);
            let at = next * stretch;
            let p_new = 1.0 / (1.0 + (-4.0 * (t as f64 - at) / width as f64).exp());
            next as usize - usize::from(rng.uniform() >= p_new)
        }
    }
}

/// Which SEA concept row `t` of `rows` is drawn from.
fn sea_concept(rng: &mut Rng, t: usize, rows: usize, drift: SeaDrift, width: u64) -> usize {
    let transition = match drift {
        SeaDrift::Recurring => return (t * 8 / rows) % 2,
        SeaDrift::Abrupt => Transition::Abrupt,
        SeaDrift::Gradual => Transition::Gradual,
    };
    concept_at(rng, t, rows, SEA_THRESHOLDS.len(), (transition, width))
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

/// The functions an `agrawal` stream runs through unless told (module doc).
const AGRAWAL_FUNCTIONS: [u8; 3] = [1, 4, 7];

/// What `functions=` takes.
const AGRAWAL_LIST: &str = "expected functions from 1 to 10, comma-separated";

/// One loan applicant of Agrawal et al.'s data, as drawn: the label is this one's.
#[derive(Debug, Clone, Copy)]
struct Applicant {
    salary: f64,
    commission: f64,
    age: usize,
    /// Education level, 0–4.
    elevel: usize,
    /// Car maker, 0–19 (`car1`–`car20`).
    car: usize,
    /// Zip code, 0–8 (`zipcode1`–`zipcode9`).
    zipcode: usize,
    hvalue: f64,
    hyears: usize,
    loan: f64,
}

impl Applicant {
    /// An applicant drawn as MOA's `AgrawalGenerator` draws one, in its order of draws.
    fn draw(rng: &mut Rng) -> Self {
        let salary = 20_000.0 + 130_000.0 * rng.uniform();
        // Only the lower salaries earn commission (uniform in [10,000, 75,000]).
        let commission = if salary >= 75_000.0 {
            0.0
        } else {
            10_000.0 + 65_000.0 * rng.uniform()
        };
        let age = 20 + rng.below(61);
        let elevel = rng.below(5);
        let car = rng.below(20);
        let zipcode = rng.below(9);
        // The zip code sets the price level: `k · 100,000 · [0.5, 1.5)`, `k` = 9 down to 1.
        let hvalue = (9 - zipcode) as f64 * 100_000.0 * (0.5 + rng.uniform());
        let hyears = 1 + rng.below(30);
        let loan = rng.uniform() * 500_000.0;
        Applicant {
            salary,
            commission,
            age,
            elevel,
            car,
            zipcode,
            hvalue,
            hyears,
            loan,
        }
    }

    /// Whether function `f` (1–10) of the paper (p. 924, as MOA's `classificationFunctions`
    /// write them) puts the applicant in group A.
    fn in_group_a(&self, f: u8) -> bool {
        // Functions 1–6 look at three age brackets: under 40, 40 to 59, 60 and over.
        let bracket = match self.age {
            ..40 => 0,
            40..60 => 1,
            _ => 2,
        };
        // Each bracket's salary range of group A in function 2 (and of 4, 5 and 6 with it).
        const SALARY: [(f64, f64); 3] = [(50e3, 100e3), (75e3, 125e3), (25e3, 75e3)];
        // Each bracket's education levels of group A in function 3 (and of 4 with it).
        const ELEVEL: [(usize, usize); 3] = [(0, 1), (1, 3), (2, 4)];
        let within = |v: f64, (lo, hi): (f64, f64)| lo <= v && v <= hi;
        let educated = (ELEVEL[bracket].0..=ELEVEL[bracket].1).contains(&self.elevel);
        // Twice a third of the earnings, MOA's 2/3 for the paper's 0.67.
        let earnings = 2.0 * (self.salary + self.commission) / 3.0;
        let elevel = self.elevel as f64;
        match f {
            1 => bracket != 1,
            2 => within(self.salary, SALARY[bracket]),
            3 => educated,
            4 => {
                const EDUCATED: [(f64, f64); 3] = [(25e3, 75e3), (50e3, 100e3), (50e3, 100e3)];
                let range = (if educated { EDUCATED } else { SALARY })[bracket];
                within(self.salary, range)
            }
            5 => {
                const PAID: [(f64, f64); 3] = [(100e3, 300e3), (200e3, 400e3), (300e3, 500e3)];
                const OTHER: [(f64, f64); 3] = [(200e3, 400e3), (300e3, 500e3), (100e3, 300e3)];
                let paid = within(self.salary, SALARY[bracket]);
                within(self.loan, (if paid { PAID } else { OTHER })[bracket])
            }
            6 => within(self.salary + self.commission, SALARY[bracket]),
            7 => earnings - self.loan / 5.0 - 20_000.0 > 0.0,
            8 => earnings - 5_000.0 * elevel - 20_000.0 > 0.0,
            9 => earnings - 5_000.0 * elevel - self.loan / 5.0 - 10_000.0 > 0.0,
            10 => {
                // A tenth of the house's value a year owned past 20 years.
                let equity = match self.hyears {
                    20.. => self.hvalue * (self.hyears as f64 - 20.0) / 10.0,
                    _ => 0.0,
                };
                earnings - 5_000.0 * elevel + equity / 5.0 - 10_000.0 > 0.0
            }
            _ => unreachable!("functions are checked to be 1 to 10 when the spec is parsed"),
        }
    }

    /// The applicant as a row: numeric attributes, then nominal ones as their codes
    /// ([`agrawal_spec`]'s order). `perturbation > 0` moves each numeric attribute by
    /// `perturbation · range · U(−1, 1)`, clipped to its range, as MOA does after labelling
    /// (commission only when earned; age and years owned rounded back to whole numbers).
    fn row(&self, rng: &mut Rng, perturbation: f64) -> [f64; 9] {
        let mut a = [
            self.salary,
            self.commission,
            self.age as f64,
            self.elevel as f64,
            self.car as f64,
            self.zipcode as f64,
            self.hvalue,
            self.hyears as f64,
            self.loan,
        ];
        if perturbation > 0.0 {
            let mut moved = |v: f64, range: f64, lo: f64, hi: f64| {
                (v + range * (2.0 * (rng.uniform() - 0.5)) * perturbation).clamp(lo, hi)
            };
            a[0] = moved(a[0], 130_000.0, 20_000.0, 150_000.0);
            if a[1] > 0.0 {
                a[1] = moved(a[1], 65_000.0, 10_000.0, 75_000.0);
            }
            a[2] = moved(a[2], 60.0, 20.0, 80.0).round();
            // The range is the zip code's spread of values, as MOA has it; the ceiling is
            // the highest value drawn, 1,350,000: MOA's 135,000, a digit short, would
            // flatten nearly every house to that one value.
            let spread = (9 - self.zipcode) as f64 * 100_000.0;
            a[6] = moved(a[6], spread, 0.0, 1_350_000.0);
            a[7] = moved(a[7], 29.0, 1.0, 30.0).round();
            a[8] = moved(a[8], 500_000.0, 0.0, 500_000.0);
        }
        a
    }
}

/// Agrawal et al.'s attributes under MOA's names, and its classes `groupA` and `groupB`.
fn agrawal_spec() -> StreamSpec {
    StreamSpec::new(
        vec![
            Feature::numeric("salary"),
            Feature::numeric("commission"),
            Feature::numeric("age"),
            Feature::nominal("elevel", (0..5).map(|l| format!("level{l}"))),
            Feature::nominal("car", (1..=20).map(|c| format!("car{c}"))),
            Feature::nominal("zipcode", (1..=9).map(|z| format!("zipcode{z}"))),
            Feature::numeric("hvalue"),
            Feature::numeric("hyears"),
            Feature::numeric("loan"),
        ],
        ClassSet::new(["groupA", "groupB"]).expect("distinct class names"),
    )
}

fn agrawal(
    rng: &mut Rng, rows: usize, functions: &[u8], change: (Transition, u64), perturbation: f64,
    noise: f64,
) -> Dataset {
    let mut data = Dataset::new(agrawal_spec());
    for t in 0..rows {
        let f = functions[concept_at(rng, t, rows, functions.len(), change)];
        let applicant = Applicant::draw(rng);
        let y = usize::from(!applicant.in_group_a(f));
        let row = applicant.row(rng, perturbation);
        data.push(&row, Some(flipped(rng, y, noise)));
    }
    data
}

/// The segments each digit 0–9 lights, in MOA's `LEDGenerator` order (top, upper left,
/// upper right, middle, lower left, lower right, bottom).
const LED_DIGITS: [[u8; 7]; 10] = [
    [1, 1, 1, 0, 1, 1, 1],
    [0, 0, 1, 0, 0, 1, 0],
    [1, 0, 1, 1, 1, 0, 1],
    [1, 0, 1, 1, 0, 1, 1],
    [0, 1, 1, 1, 0, 1, 0],
    [1, 1, 0, 1, 0, 1, 1],
    [1, 1, 0, 1, 1, 1, 1],
    [1, 0, 1, 0, 0, 1, 0],
    [1, 1, 1, 1, 1, 1, 1],
    [1, 1, 1, 1, 0, 1, 1],
];

/// The random bits after the segments: 7 + 17 = the paper's 24 attributes.
const LED_IRRELEVANT: usize = 17;

fn led(
    rng: &mut Rng, rows: usize, noise: f64, drift_features: usize, change: (Transition, u64),
) -> Dataset {
    const SEGMENTS: usize = 7;
    let mut data = Dataset::new(numeric_spec(SEGMENTS + LED_IRRELEVANT, 10));
    // Where each generated value goes: segment `i` at attribute `i` and irrelevant bit `j`
    // at `7 + j`, then, after the change, MOA's `LEDGeneratorDrift` places: the first
    // `drift_features` segments and irrelevant bits swapped (its random offsets fixed at 0,
    // as MOA has them).
    let before: [usize; SEGMENTS + LED_IRRELEVANT] = std::array::from_fn(|i| i);
    let mut after = before;
    for i in 0..drift_features {
        after.swap(i, SEGMENTS + i);
    }
    let mut row = [0.0; SEGMENTS + LED_IRRELEVANT];
    for t in 0..rows {
        let places = match concept_at(rng, t, rows, 2, change) {
            0 => &before,
            _ => &after,
        };
        let digit = rng.below(10);
        for (&place, &lit) in places.iter().zip(&LED_DIGITS[digit]) {
            let inverted = rng.uniform() < noise;
            row[place] = f64::from(lit ^ u8::from(inverted));
        }
        for &place in &places[SEGMENTS..] {
            row[place] = rng.below(2) as f64;
        }
        data.push(&row, Some(digit));
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

    /// Group A (class 0) or B (1) under Agrawal et al.'s function `f`, written out apart
    /// from the generator's tables, on a row of unperturbed attributes.
    fn agrawal_reference(f: u8, x: &[f64]) -> ClassId {
        let (salary, commission, age, elevel) = (x[0], x[1], x[2], x[3]);
        let (hvalue, hyears, loan) = (x[6], x[7], x[8]);
        let between = |v: f64, lo: f64, hi: f64| lo <= v && v <= hi;
        let a = match f {
            1 => !(40.0..60.0).contains(&age),
            2 if age < 40.0 => between(salary, 50e3, 100e3),
            2 if age < 60.0 => between(salary, 75e3, 125e3),
            2 => between(salary, 25e3, 75e3),
            3 if age < 40.0 => elevel == 0.0 || elevel == 1.0,
            3 if age < 60.0 => (1.0..=3.0).contains(&elevel),
            3 => (2.0..=4.0).contains(&elevel),
            4 if age < 40.0 && elevel <= 1.0 => between(salary, 25e3, 75e3),
            4 if age < 40.0 => between(salary, 50e3, 100e3),
            4 if age < 60.0 && (1.0..=3.0).contains(&elevel) => between(salary, 50e3, 100e3),
            4 if age < 60.0 => between(salary, 75e3, 125e3),
            4 if elevel >= 2.0 => between(salary, 50e3, 100e3),
            4 => between(salary, 25e3, 75e3),
            5 if age < 40.0 && between(salary, 50e3, 100e3) => between(loan, 100e3, 300e3),
            5 if age < 40.0 => between(loan, 200e3, 400e3),
            5 if age < 60.0 && between(salary, 75e3, 125e3) => between(loan, 200e3, 400e3),
            5 if age < 60.0 => between(loan, 300e3, 500e3),
            5 if between(salary, 25e3, 75e3) => between(loan, 300e3, 500e3),
            5 => between(loan, 100e3, 300e3),
            6 if age < 40.0 => between(salary + commission, 50e3, 100e3),
            6 if age < 60.0 => between(salary + commission, 75e3, 125e3),
            6 => between(salary + commission, 25e3, 75e3),
            7 => 2.0 * (salary + commission) / 3.0 - loan / 5.0 - 20000.0 > 0.0,
            8 => 2.0 * (salary + commission) / 3.0 - 5000.0 * elevel - 20000.0 > 0.0,
            9 => 2.0 * (salary + commission) / 3.0 - 5000.0 * elevel - loan / 5.0 - 10000.0 > 0.0,
            10 => {
                let equity = if hyears >= 20.0 {
                    hvalue * (hyears - 20.0) / 10.0
                } else {
                    0.0
                };
                2.0 * (salary + commission) / 3.0 - 5000.0 * elevel + equity / 5.0 - 10000.0 > 0.0
            }
            _ => unreachable!(),
        };
        usize::from(!a)
    }

    /// The share of `range`'s rows whose label is `agrawal_reference(f, …)`.
    fn agrawal_agreement(data: &Dataset, range: std::ops::Range<usize>, f: u8) -> f64 {
        let agree = range
            .clone()
            .filter(|&i| data.label(i) == Some(agrawal_reference(f, data.row(i))))
            .count();
        agree as f64 / range.len() as f64
    }

    #[test]
    fn agrawal_labels_every_row_by_the_papers_function() {
        // The share of group A each function gives under MOA's attribute distributions, as
        // a separate simulation of 50,000 applicants found it: a check of the draws as well.
        let group_a = [
            0.673, 0.387, 0.53, 0.386, 0.399, 0.4, 0.487, 0.98, 0.488, 0.998,
        ];
        for f in 1..=10u8 {
            let data = generate(&format!(
                "agrawal:rows=10000:functions={f}:perturbation=0:seed={f}"
            ));
            assert_eq!(
                agrawal_agreement(&data, 0..data.len(), f),
                1.0,
                "function {f}"
            );
            let a = (0..data.len())
                .filter(|&i| data.label(i) == Some(0))
                .count();
            let share = a as f64 / data.len() as f64;
            let expected = group_a[usize::from(f) - 1];
            assert!(
                (share - expected).abs() < 0.025,
                "function {f}: {share} in group A"
            );
        }
    }

    #[test]
    fn agrawal_attributes_keep_to_their_ranges_perturbed_or_not() {
        let spec = agrawal_spec();
        assert_eq!(spec.classes.names(), ["groupA", "groupB"]);
        let nominal: Vec<&str> = spec
            .features
            .iter()
            .filter(|f| f.is_nominal())
            .map(|f| f.name.as_str())
            .collect();
        assert_eq!(nominal, ["elevel", "car", "zipcode"]);
        let whole = |v: f64, lo: f64, hi: f64| v.fract() == 0.0 && lo <= v && v <= hi;
        for perturbation in [0.0, 0.05] {
            let data = generate(&format!(
                "agrawal:rows=5000:functions=1:perturbation={perturbation}"
            ));
            for i in 0..data.len() {
                let x = data.row(i);
                assert!((20e3..=150e3).contains(&x[0]), "salary {}", x[0]);
                assert!(
                    x[1] == 0.0 || (10e3..=75e3).contains(&x[1]),
                    "commission {}",
                    x[1]
                );
                assert!(whole(x[2], 20.0, 80.0), "age {}", x[2]);
                assert!(whole(x[3], 0.0, 4.0) && whole(x[4], 0.0, 19.0));
                assert!(whole(x[5], 0.0, 8.0));
                assert!((0.0..=1.35e6).contains(&x[6]), "hvalue {}", x[6]);
                assert!(whole(x[7], 1.0, 30.0), "hyears {}", x[7]);
                assert!((0.0..=500e3).contains(&x[8]), "loan {}", x[8]);
                if perturbation == 0.0 {
                    assert_eq!(x[1] == 0.0, x[0] >= 75e3);
                    let k = 9.0 - x[5];
                    assert!(k * 50e3 <= x[6] && x[6] < k * 150e3, "hvalue {}", x[6]);
                }
            }
            // Perturbed after labelling: some labels are not their perturbed row's.
            let agree = agrawal_agreement(&data, 0..data.len(), 1);
            match perturbation {
                0.0 => assert_eq!(agree, 1.0),
                _ => assert!((0.9..1.0).contains(&agree), "{agree}"),
            }
        }
        let noisy = generate("agrawal:rows=20000:functions=2:perturbation=0:noise=0.2");
        let flipped = 1.0 - agrawal_agreement(&noisy, 0..noisy.len(), 2);
        assert!((flipped - 0.2).abs() < 0.01, "{flipped}");
    }

    #[test]
    fn agrawal_changes_function_at_its_change_points() {
        let data = generate("agrawal:rows=9000:perturbation=0");
        let stretches = [(0..3000, 1), (3000..6000, 4), (6000..9000, 7)];
        for (range, f) in stretches.clone() {
            assert_eq!(agrawal_agreement(&data, range, f), 1.0, "function {f}");
        }
        // Each function labels about half the rows unlike the one before it.
        for pair in stretches.windows(2) {
            let (range, before) = (pair[1].0.clone(), pair[0].1);
            let agree = agrawal_agreement(&data, range, before);
            assert!((0.35..0.65).contains(&agree), "{agree}");
        }
        // Gradual: function 1 long before the change at 3,000, half and half at it (where
        // the two differ), then function 2 long after it (the sigmoid's tails reach far, so
        // a few rows stray).
        let gradual = generate(
            "agrawal:rows=9000:functions=1,2,3:drift=gradual:width=1000:perturbation=0:seed=5",
        );
        assert!(agrawal_agreement(&gradual, 0..1500, 1) > 0.995);
        assert!(agrawal_agreement(&gradual, 4000..5000, 2) > 0.995);
        let differ: Vec<usize> = (2800..3200)
            .filter(|&i| {
                agrawal_reference(1, gradual.row(i)) != agrawal_reference(2, gradual.row(i))
            })
            .collect();
        let second = differ
            .iter()
            .filter(|&&i| gradual.label(i) == Some(agrawal_reference(2, gradual.row(i))))
            .count();
        let share = second as f64 / differ.len() as f64;
        assert!((0.3..0.7).contains(&share), "{share} of {}", differ.len());
    }

    /// The digit that attributes `places` show, if they show one exactly.
    fn led_digit(x: &[f64], places: &[usize]) -> Option<usize> {
        LED_DIGITS.iter().position(|lit| {
            lit.iter()
                .zip(places)
                .all(|(&on, &place)| x[place] == f64::from(on))
        })
    }

    #[test]
    fn led_segments_show_the_digit_and_move_at_the_drift() {
        let data = generate("led:rows=4000:noise=0:drift-features=3");
        assert_eq!(data.spec().features.len(), 24);
        assert_eq!(data.spec().n_classes(), 10);
        let (before, after) = ([0, 1, 2, 3, 4, 5, 6], [7, 8, 9, 3, 4, 5, 6]);
        for i in 0..data.len() {
            let places = if i < 2000 { before } else { after };
            assert_eq!(led_digit(data.row(i), &places), data.label(i), "row {i}");
            assert!(data.row(i).iter().all(|&v| v == 0.0 || v == 1.0));
        }
        // After the change the old places no longer show the digit.
        let still = (2000..4000)
            .filter(|&i| led_digit(data.row(i), &before) == data.label(i))
            .count();
        assert!(still < 1000, "{still}");
        // The default moves all seven segments; none moves none.
        let all = generate("led:rows=2000:noise=0");
        let moved: Vec<usize> = (7..14).collect();
        assert!((1000..2000).all(|i| led_digit(all.row(i), &moved) == all.label(i)));
        let none = generate("led:rows=2000:noise=0:drift-features=0");
        assert!((0..2000).all(|i| led_digit(none.row(i), &before) == none.label(i)));
        // Gradual: the old places long before the middle, the new ones long after.
        let gradual = generate("led:rows=20000:noise=0:drift-features=3:drift=gradual:width=1000");
        assert!((0..8000).all(|i| led_digit(gradual.row(i), &before) == gradual.label(i)));
        assert!((12000..20000).all(|i| led_digit(gradual.row(i), &after) == gradual.label(i)));
    }

    #[test]
    fn led_noise_inverts_that_share_of_segments() {
        let data = generate("led:rows=20000:noise=0.1:drift-features=0");
        let (mut inverted, mut ones) = (0, 0.0);
        for i in 0..data.len() {
            let (x, lit) = (data.row(i), LED_DIGITS[data.label(i).unwrap()]);
            inverted += lit
                .iter()
                .zip(x)
                .filter(|(on, v)| f64::from(**on) != **v)
                .count();
            ones += x[7..].iter().sum::<f64>();
        }
        let share = inverted as f64 / (7 * data.len()) as f64;
        assert!((share - 0.1).abs() < 0.005, "{share}");
        let ones = ones / (17 * data.len()) as f64;
        assert!((ones - 0.5).abs() < 0.01, "{ones}");
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
            (
                "agrawal:functions=11",
                "functions=11: expected functions from 1 to 10",
            ),
            (
                "agrawal:functions=1,x",
                "functions=1,x: expected functions from 1 to 10",
            ),
            (
                "agrawal:functions=",
                "functions=: expected functions from 1 to 10",
            ),
            (
                "agrawal:drift=recurring",
                "drift=recurring: expected abrupt or gradual",
            ),
            ("agrawal:perturbation=1.5", "perturbation must be at most 1"),
            ("led:noise=2", "noise must be at most 1"),
            ("led:drift-features=8", "drift-features must be at most 7"),
            ("led:functions=1", "led has no parameter `functions`"),
        ] {
            let err = spec.parse::<DriftSpec>().unwrap_err().to_string();
            assert!(err.contains(says), "{spec}: {err}");
        }
    }
}
