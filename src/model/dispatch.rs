//! The catalogue's dispatch: [`ModelConfig`] and [`Model`] implement, by forwarding to the
//! variant they hold, the traits each algorithm implements on its own (`Config`, `Tune`,
//! `Classifier`, `Structure`). `Ranker` is generated with the enums, since a row says whether
//! its model ranks natively.

use std::fmt;

use super::{Model, ModelConfig};
use crate::Result;
use crate::boost::{Knob, Tune};
use crate::core::{ClassId, Rng, StreamSpec};
use crate::learner::{Classifier, Config};
use crate::weak::{HoeffdingTree, Structure};

impl fmt::Display for ModelConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        dispatch_config!(self, c => c.fmt(f))
    }
}

impl Config for ModelConfig {
    type Model = Model;

    fn validate(&self) -> Result<()> {
        dispatch_config!(self, c => c.validate())
    }

    /// A fresh model to learn online; a batch algorithm's is an error
    /// ([`ModelConfig::check_fresh`]).
    fn build_with_rng(&self, spec: &StreamSpec, rng: &mut Rng) -> Result<Model> {
        self.check_fresh()?;
        // Each variant of the config builds the same variant of the model.
        Ok(dispatch_config!(self, c => c.build_with_rng(spec, rng)?.into()))
    }
}

impl Tune for ModelConfig {
    fn tune(&mut self, knob: &Knob) -> bool {
        dispatch_config!(self, c => c.tune(knob))
    }
}

impl Model {
    /// The model's Hoeffding trees, in member order.
    pub fn trees(&self) -> Vec<&HoeffdingTree> {
        let mut out = Vec::new();
        self.learners(&mut out);
        out
    }

    /// Leaves its trees' limits (`max_bytes`, `max_active_leaves`) have parked.
    pub fn parked_leaves(&self) -> usize {
        self.trees().iter().map(|t| t.n_parked_leaves()).sum()
    }

    /// The model's Hoeffding trees, in member order, to change in place.
    pub fn trees_mut(&mut self) -> Vec<&mut HoeffdingTree> {
        let mut out = Vec::new();
        self.learners_mut(&mut out);
        out
    }
}

crate::weak::structure_by_dispatch!(Model, ensemble);

impl Classifier for Model {
    fn n_classes(&self) -> usize {
        dispatch!(self, m => m.n_classes())
    }

    fn add_class(&mut self) -> crate::Result<()> {
        dispatch!(self, m => m.add_class())
    }

    fn learns_online(&self) -> bool {
        dispatch!(self, m => m.learns_online())
    }

    fn learn(&mut self, x: &[f64], y: ClassId, weight: f64) {
        dispatch!(self, m => m.learn(x, y, weight))
    }

    fn predict_proba(&self, x: &[f64], out: &mut [f64]) {
        dispatch!(self, m => m.predict_proba(x, out))
    }

    fn predict_proba_rows(&self, xs: &[&[f64]], proba: &mut [f64]) {
        dispatch!(self, m => m.predict_proba_rows(xs, proba))
    }

    fn learn_predict(
        &mut self, x: &[f64], y: Option<ClassId>, weight: f64, out: &mut [f64],
    ) -> ClassId {
        dispatch!(self, m => m.learn_predict(x, y, weight, out))
    }

    fn learn_predict_rows(
        &mut self, xs: &[&[f64]], ys: &[Option<ClassId>], weight: f64, proba: &mut [f64],
        predicted: &mut [ClassId],
    ) {
        dispatch!(self, m => m.learn_predict_rows(xs, ys, weight, proba, predicted))
    }
}
