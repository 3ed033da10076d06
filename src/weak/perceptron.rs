//! The weighted perceptron (WEAK_LEARNERS.md §3): the binary rule for two classes, the
//! multiclass rule of Crammer & Singer's "one row per class" form otherwise.
//!
//! Nominal features are one-hot encoded over the categories seen so far: each new category
//! of a feature gets the next input slot when a row carrying it is learnt, so the input
//! vector grows with the data. A category never learnt from contributes nothing.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::core::math::argmax;
use crate::core::{ClassId, Rng, StreamSpec, is_present, nominal_code, vec_bytes};
use crate::learner::{Classifier, Config};
use crate::{Error, Result};

/// Hyper-parameters of [`Perceptron`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PerceptronConfig {
    /// Step size `η`.
    pub learning_rate: f64,
    /// Learn a bias term.
    pub fit_intercept: bool,
    /// Scale each row to `x/max(1, ‖x‖₂)` (\[CLL\]'s analysis assumes `‖x‖₂ ≤ 1`).
    pub normalize_input: bool,
    /// `predict_proba` is the softmax of the class scores instead of one-hot at the
    /// prediction.
    pub softmax_proba: bool,
    /// Two classes: `predict_proba` is `((1 + c)/2, (1 − c)/2)` with `c = clip(w·x + b, −1, 1)`,
    /// so that `p[0] − p[1]` is the `Soft` hypothesis of WEAK_LEARNERS.md §3. Set by the
    /// binary boosters in `Soft` mode ([`Config::with_margin_output`]).
    #[serde(default)]
    pub margin_proba: bool,
    /// Initial weights and biases drawn from `U[−r, r]` (numeric inputs; one-hot slots of
    /// categories start at 0). `0` (the default, WEAK_LEARNERS.md §3) starts from zeros.
    /// \[CLL\] start from random hypotheses: with zeros, members of a booster that only
    /// update on mistakes can stay identical (all wrong together, so all weighted 1).
    #[serde(default)]
    pub init_range: f64,
}

impl Default for PerceptronConfig {
    fn default() -> Self {
        PerceptronConfig {
            learning_rate: 1.0,
            fit_intercept: true,
            normalize_input: false,
            softmax_proba: false,
            margin_proba: false,
            init_range: 0.0,
        }
    }
}

impl fmt::Display for PerceptronConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Perceptron(eta={}", self.learning_rate)?;
        if !self.fit_intercept {
            write!(f, ", no intercept")?;
        }
        if self.normalize_input {
            write!(f, ", normalized input")?;
        }
        if self.softmax_proba {
            write!(f, ", softmax")?;
        }
        if self.margin_proba {
            write!(f, ", margin output")?;
        }
        if self.init_range > 0.0 {
            write!(f, ", init U[±{}]", self.init_range)?;
        }
        write!(f, ")")
    }
}

impl Config for PerceptronConfig {
    type Model = Perceptron;

    fn validate(&self) -> Result<()> {
        if !(self.learning_rate > 0.0 && self.learning_rate.is_finite()) {
            return Err(Error::config("learning_rate", "must be > 0"));
        }
        if !(self.init_range >= 0.0 && self.init_range.is_finite()) {
            return Err(Error::config("init_range", "must be >= 0 and finite"));
        }
        Ok(())
    }

    fn with_margin_output(&self) -> Self {
        PerceptronConfig {
            margin_proba: true,
            ..self.clone()
        }
    }

    fn build_with_rng(&self, spec: &StreamSpec, rng: &mut Rng) -> Result<Perceptron> {
        self.validate()?;
        let k = spec.n_classes();
        let nominal = spec.nominal_mask();
        let d = nominal.iter().filter(|&&n| !n).count();
        // Binary: one weight vector, `+1` = class 0 (ALGORITHMS.md §1.2).
        let rows = if k == 2 { 1 } else { k };
        let r = self.init_range;
        let mut draw = || if r > 0.0 { rng.uniform_in(-r, r) } else { 0.0 };
        let weights: Vec<Vec<f64>> = (0..rows)
            .map(|_| (0..d).map(|_| draw()).collect())
            .collect();
        let bias: Vec<f64> = (0..rows)
            .map(|_| if self.fit_intercept { draw() } else { 0.0 })
            .collect();
        Ok(Perceptron {
            params: self.clone(),
            k,
            slots: nominal
                .iter()
                .map(|&n| {
                    if n {
                        Slot::Nominal(Vec::new())
                    } else {
                        Slot::Numeric
                    }
                })
                .collect(),
            width: d,
            weights,
            bias,
            scratch: Scratch::default(),
        })
    }
}

/// Where a feature's value enters the input vector.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
enum Slot {
    /// The numeric features come first, in feature order.
    Numeric,
    /// `slot[code]`: the input index of each category learnt so far (`u32::MAX` = none).
    Nominal(Vec<u32>),
}

const NO_SLOT: u32 = u32::MAX;

/// A weighted online perceptron. Build it from a [`PerceptronConfig`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Perceptron {
    params: PerceptronConfig,
    k: usize,
    slots: Vec<Slot>,
    /// Current input width (numeric features plus the categories learnt).
    width: usize,
    /// One weight vector (binary) or one per class, each `width` long.
    weights: Vec<Vec<f64>>,
    bias: Vec<f64>,
    /// Per-row buffers of the learning path (not state).
    #[serde(skip)]
    scratch: Scratch,
}

#[derive(Debug, Clone, Default, PartialEq)]
struct Scratch {
    input: Vec<(usize, f64)>,
    scores: Vec<f64>,
}

impl Perceptron {
    /// Bytes its weights, input slots and buffers hold on the heap.
    pub fn heap_bytes(&self) -> usize {
        let slots = self.slots.iter().map(|s| match s {
            Slot::Numeric => 0,
            Slot::Nominal(codes) => vec_bytes(codes),
        });
        let weights = self.weights.iter().map(vec_bytes);
        vec_bytes(&self.slots)
            + slots.sum::<usize>()
            + vec_bytes(&self.weights)
            + weights.sum::<usize>()
            + vec_bytes(&self.bias)
            + vec_bytes(&self.scratch.input)
            + vec_bytes(&self.scratch.scores)
    }

    /// The row as sparse `(input index, value)` pairs, scaled by the input normalisation.
    /// Missing values and categories without a slot are left out.
    fn encode(&self, x: &[f64], input: &mut Vec<(usize, f64)>) {
        input.clear();
        let mut numeric = 0;
        for (slot, &v) in self.slots.iter().zip(x) {
            match slot {
                Slot::Numeric => {
                    if is_present(v) {
                        input.push((numeric, v));
                    }
                    numeric += 1;
                }
                Slot::Nominal(codes) => {
                    if let Some(&s) = nominal_code(v).and_then(|c| codes.get(c))
                        && s != NO_SLOT
                    {
                        input.push((s as usize, 1.0));
                    }
                }
            }
        }
        self.normalise(input);
    }

    fn normalise(&self, input: &mut [(usize, f64)]) {
        if self.params.normalize_input {
            let norm = input.iter().map(|(_, v)| v * v).sum::<f64>().sqrt();
            if norm > 1.0 {
                input.iter_mut().for_each(|(_, v)| *v /= norm);
            }
        }
    }

    /// [`Self::encode`] for a row about to be learnt: every category of `x` not seen before
    /// first gets an input slot (with weight 0, so the scores are unchanged).
    fn encode_learning(&mut self, x: &[f64], input: &mut Vec<(usize, f64)>) {
        let width = self.width;
        for (slot, &v) in self.slots.iter_mut().zip(x) {
            if let (Slot::Nominal(codes), Some(code)) = (slot, nominal_code(v)) {
                if code >= codes.len() {
                    codes.resize(code + 1, NO_SLOT);
                }
                if codes[code] == NO_SLOT {
                    codes[code] = self.width as u32;
                    self.width += 1;
                }
            }
        }
        if self.width != width {
            for w in &mut self.weights {
                w.resize(self.width, 0.0);
            }
        }
        self.encode(x, input);
    }

    /// `W_r · x + b_r` for each weight row `r`.
    fn scores(&self, input: &[(usize, f64)], out: &mut [f64]) {
        for ((o, w), b) in out.iter_mut().zip(&self.weights).zip(&self.bias) {
            *o = b + input.iter().map(|&(j, v)| w[j] * v).sum::<f64>();
        }
    }

    /// The binary score `f = w·x + b` (`f ≥ 0` predicts class 0 = `+1`); for more classes,
    /// the score of class 0 minus the best other score.
    pub fn margin(&self, x: &[f64]) -> f64 {
        let mut input = Vec::new();
        self.encode(x, &mut input);
        let mut s = vec![0.0; self.weights.len()];
        self.scores(&input, &mut s);
        if self.k == 2 {
            s[0]
        } else {
            s[0] - s[1..].iter().copied().fold(f64::NEG_INFINITY, f64::max)
        }
    }

    fn update(&mut self, r: usize, input: &[(usize, f64)], step: f64) {
        for &(j, v) in input {
            self.weights[r][j] += step * v;
        }
        if self.params.fit_intercept {
            self.bias[r] += step;
        }
    }
}

impl Classifier for Perceptron {
    fn n_classes(&self) -> usize {
        self.k
    }

    /// A new class gets a row of zero weights and bias: its score is 0 until it is learnt
    /// (a row at `init_range`'s random start would need the generator the model no longer
    /// holds). A binary perceptron's one vector `w` scores class 0 by `f` and class 1 by
    /// `−f` (ALGORITHMS.md §1.2), so its multiclass rows are `w` and `−w`: the classes' order
    /// of scores, and their softmax probabilities, are what they were.
    fn add_class(&mut self) -> Result<()> {
        if self.k == 2 {
            let opposite = self.weights[0].iter().map(|w| -w).collect();
            self.weights.push(opposite);
            self.bias.push(-self.bias[0]);
        }
        self.weights.push(vec![0.0; self.width]);
        self.bias.push(0.0);
        self.k += 1;
        Ok(())
    }

    /// Binary: if `y·f ≤ 0`, `w += η ω y x` and `b += η ω y`. Multiclass: if the prediction
    /// `ŷ ≠ y`, row `y` moves toward `x` and row `ŷ` away from it, each by `η ω`.
    fn learn(&mut self, x: &[f64], y: ClassId, weight: f64) {
        if !(weight > 0.0 && weight.is_finite()) || y >= self.k {
            return;
        }
        let mut scratch = std::mem::take(&mut self.scratch);
        self.encode_learning(x, &mut scratch.input);
        scratch.scores.resize(self.weights.len(), 0.0);
        self.scores(&scratch.input, &mut scratch.scores);
        self.update_on_mistake(&scratch, y, weight);
        self.scratch = scratch;
    }

    /// One encoding and one scoring for both phases: the categories of `x` get their slots
    /// first (a new slot has weight 0, so the scores are those of `predict_proba`).
    fn learn_predict(
        &mut self, x: &[f64], y: Option<ClassId>, weight: f64, out: &mut [f64],
    ) -> ClassId {
        let learns = y.is_some_and(|y| y < self.k) && weight > 0.0 && weight.is_finite();
        let mut scratch = std::mem::take(&mut self.scratch);
        if learns {
            self.encode_learning(x, &mut scratch.input);
        } else {
            self.encode(x, &mut scratch.input);
        }
        scratch.scores.resize(self.weights.len(), 0.0);
        self.scores(&scratch.input, &mut scratch.scores);
        self.proba_of_scores(&scratch.scores, out);
        let predicted = argmax(out);
        if let (true, Some(y)) = (learns, y) {
            self.update_on_mistake(&scratch, y, weight);
        }
        self.scratch = scratch;
        predicted
    }

    fn predict_proba(&self, x: &[f64], out: &mut [f64]) {
        let mut input = Vec::new();
        self.encode(x, &mut input);
        let mut scores = vec![0.0; self.weights.len()];
        self.scores(&input, &mut scores);
        self.proba_of_scores(&scores, out);
    }
}

impl Perceptron {
    /// The update rule of [`Classifier::learn`] on an encoded, scored row.
    fn update_on_mistake(&mut self, scratch: &Scratch, y: ClassId, weight: f64) {
        let step = self.params.learning_rate * weight;
        let (input, s) = (&scratch.input, &scratch.scores);
        if self.k == 2 {
            let sign = if y == 0 { 1.0 } else { -1.0 };
            if sign * s[0] <= 0.0 {
                self.update(0, input, sign * step);
            }
        } else {
            let predicted = argmax(s);
            if predicted != y {
                self.update(y, input, step);
                self.update(predicted, input, -step);
            }
        }
    }

    /// Class probabilities from the scores: one-hot at the prediction, or the softmax.
    fn proba_of_scores(&self, scores: &[f64], out: &mut [f64]) {
        if self.k == 2 {
            out[0] = if self.params.margin_proba {
                0.5 * (1.0 + scores[0].clamp(-1.0, 1.0))
            } else if self.params.softmax_proba {
                crate::core::math::sigmoid(2.0 * scores[0])
            } else if scores[0] >= 0.0 {
                1.0
            } else {
                0.0
            };
            out[1] = 1.0 - out[0];
            return;
        }
        out.copy_from_slice(scores);
        if self.params.softmax_proba {
            crate::core::math::softmax(out);
        } else {
            let predicted = argmax(out);
            out.fill(0.0);
            out[predicted] = 1.0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::{ClassSet, Feature};

    #[test]
    fn binary_rule_updates_on_non_positive_margin() {
        let spec = StreamSpec::numeric(2, 2).unwrap();
        let mut p = PerceptronConfig::default().build(&spec, 0).unwrap();
        // f = 0 on the first row: y = −1 (class 1) is a mistake, w = −x, b = −1.
        p.learn(&[1.0, 2.0], 1, 0.5);
        assert_eq!(p.weights[0], vec![-0.5, -1.0]);
        assert_eq!(p.bias[0], -0.5);
        assert_eq!(p.margin(&[1.0, 2.0]), -0.5 - 0.5 - 2.0);
        // Correctly classified with margin: no change.
        p.learn(&[1.0, 2.0], 1, 1.0);
        assert_eq!(p.bias[0], -0.5);
        assert_eq!(p.predict(&[1.0, 2.0]), 1);
        assert_eq!(p.predict(&[-10.0, -10.0]), 0);
    }

    #[test]
    fn multiclass_rule_moves_true_and_predicted_rows() {
        let spec = StreamSpec::numeric(1, 3).unwrap();
        let mut p = PerceptronConfig::default().build(&spec, 0).unwrap();
        // All scores 0: the prediction is class 0 (lowest); y = 2 moves rows 2 and 0.
        p.learn(&[2.0], 2, 1.0);
        assert_eq!(p.weights, vec![vec![-2.0], vec![0.0], vec![2.0]]);
        assert_eq!(p.bias, vec![-1.0, 0.0, 1.0]);
        assert_eq!(p.predict(&[1.0]), 2);
        p.learn(&[1.0], 2, 1.0);
        assert_eq!(p.bias, vec![-1.0, 0.0, 1.0]);
    }

    #[test]
    fn nominal_categories_get_one_hot_slots_as_they_are_learnt() {
        let spec = StreamSpec::new(
            vec![Feature::numeric("a"), Feature::nominal("b", ["u", "v"])],
            ClassSet::numbered(2).unwrap(),
        );
        let mut p = PerceptronConfig::default().build(&spec, 0).unwrap();
        p.learn(&[0.0, 1.0], 1, 1.0);
        assert_eq!(p.width, 2);
        assert_eq!(p.weights[0], vec![0.0, -1.0]);
        // An unseen category (code 7) and a missing one contribute nothing.
        assert_eq!(p.margin(&[0.0, 7.0]), p.margin(&[0.0, f64::NAN]));
        p.learn(&[0.0, 0.0], 0, 1.0);
        assert_eq!(p.width, 3);
    }

    #[test]
    fn normalised_input_has_unit_norm_at_most() {
        let spec = StreamSpec::numeric(2, 2).unwrap();
        let cfg = PerceptronConfig {
            normalize_input: true,
            fit_intercept: false,
            ..PerceptronConfig::default()
        };
        let mut p = cfg.build(&spec, 0).unwrap();
        p.learn(&[3.0, 4.0], 0, 1.0);
        assert_eq!(p.weights[0], vec![0.6, 0.8]);
        p.learn(&[-0.3, 0.0], 0, 1.0);
        assert!((p.weights[0][0] - 0.3).abs() < 1e-15);
    }

    #[test]
    fn margin_output_is_the_clipped_score_and_keeps_the_prediction() {
        let spec = StreamSpec::numeric(2, 2).unwrap();
        let config = PerceptronConfig::default();
        let mut one_hot = config.build(&spec, 0).unwrap();
        let mut margin = config.with_margin_output().build(&spec, 0).unwrap();
        let rows = [
            ([1.0, 2.0], 1),
            ([0.2, -0.1], 0),
            ([-0.3, 0.05], 0),
            ([0.1, 0.1], 1),
        ];
        let (mut p, mut q) = ([0.0; 2], [0.0; 2]);
        for (x, y) in rows {
            let a = one_hot.learn_predict(&x, Some(y), 0.3, &mut p);
            let b = margin.learn_predict(&x, Some(y), 0.3, &mut q);
            assert_eq!(a, b, "the same prediction and update");
        }
        for x in [
            [1.0, 2.0],
            [0.2, -0.1],
            [0.0, 0.0],
            [-5.0, 3.0],
            [0.05, 0.01],
        ] {
            margin.predict_proba(&x, &mut q);
            let f = margin.margin(&x);
            assert!((q[0] - q[1] - f.clamp(-1.0, 1.0)).abs() < 1e-15, "{x:?}");
            assert_eq!(margin.predict(&x), one_hot.predict(&x));
        }
        assert!(
            (0..5).any(|i| {
                let f = margin.margin(&[0.1 * i as f64, 0.0]);
                f.abs() < 1.0 && f != 0.0
            }),
            "some margins lie strictly inside (−1, 1)"
        );
    }
}
