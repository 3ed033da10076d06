//! The events of one batch under delayed labels, as the operator's row loop meets them
//! ([`super::delayed`] builds them; the operator scores through them).

use arrow::array::{Array, StringArray};

use crate::Result;
use crate::core::ClassId;
use crate::learner::Classifier;
use crate::runtime::delay::DelayedLearner;

/// The events of one batch as [`super::BoostOperator::process`] meets them: their ids and times.
pub(super) struct Waiting<'a> {
    pub(super) learner: &'a mut DelayedLearner<String>,
    pub(super) ids: &'a StringArray,
    pub(super) times: &'a [f64],
}

impl Waiting<'_> {
    /// Scores event row `r` (features `x`) with `model`, writing its probabilities to `out`;
    /// it then waits for its label, unless its id is null (scored only, counted). Returns
    /// the predicted class and whether the event was learnt at once (its label came first).
    pub(super) fn event<M: Classifier + ?Sized>(
        &mut self, r: usize, model: &mut M, x: &[f64], out: &mut [f64],
    ) -> Result<(ClassId, bool)> {
        if self.ids.is_null(r) {
            self.learner.count_null_id();
            return Ok((model.learn_predict(x, None, 1.0, out), false));
        }
        let id = self.ids.value(r).to_string();
        let (predicted, early) = self.learner.event(model, id, self.times[r], x, out)?;
        Ok((predicted, early.is_some()))
    }
}
