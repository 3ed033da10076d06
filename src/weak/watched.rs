//! What a learner that watches another learns through: each row goes to the inner learner
//! test-then-train, and the inner learner's prediction of the row, made before it learnt
//! it, goes to the watcher's own `learnt`. The adaptive learner (`adaptive.rs`, a detector
//! on its member) and the Hoeffding adaptive tree (`hat.rs`, windows on its nodes) learn
//! this way; the trait writes their shared half of [`Classifier`] and [`TwoCalls`] once.

use crate::core::ClassId;
use crate::core::math::argmax;
use crate::learner::{Classifier, TwoCalls};

/// A learner that learns through an inner learner and then reads its prediction.
pub(crate) trait Watching {
    /// The learner watched.
    type Inner: Classifier + ?Sized;

    /// The learner watched, to learn a row.
    fn watched(&mut self) -> &mut Self::Inner;

    /// Scratch for the inner learner's probabilities of a row learnt through
    /// [`Classifier::learn`].
    fn scratch(&mut self) -> &mut Vec<f64>;

    /// Between the two calls of [`TwoCalls`]: the inner learner's prediction of the row.
    fn predicted(&mut self) -> &mut Option<ClassId>;

    /// The inner learner predicted `predicted` for a row (label `y`, weight `weight`) it
    /// has just learnt: the watcher's own update.
    fn learnt(&mut self, x: &[f64], y: ClassId, weight: f64, predicted: ClassId);

    /// [`Classifier::learn`]: the inner learner's test-then-train pass into the scratch
    /// buffer, which is back in place before `learnt` runs.
    fn learn_watched(&mut self, x: &[f64], y: ClassId, weight: f64) {
        let mut out = std::mem::take(self.scratch());
        out.resize(self.watched().n_classes(), 0.0);
        let predicted = self.watched().learn_predict(x, Some(y), weight, &mut out);
        *self.scratch() = out;
        self.learnt(x, y, weight, predicted);
    }

    /// [`Classifier::learn_predict`]: the inner learner's own pass; its prediction is what
    /// `learnt` sees.
    fn learn_predict_watched(
        &mut self, x: &[f64], y: Option<ClassId>, weight: f64, out: &mut [f64],
    ) -> ClassId {
        let predicted = self.watched().learn_predict(x, y, weight, out);
        if let Some(y) = y {
            self.learnt(x, y, weight, predicted);
        }
        predicted
    }
}

/// A watcher learns in two calls where the learner it watches does.
impl<W: Watching> TwoCalls for W {
    fn predict_to_learn(&mut self, x: &[f64], out: &mut [f64]) {
        self.watched()
            .two_calls()
            .expect("two_calls checked the learner")
            .predict_to_learn(x, out);
        *self.predicted() = Some(argmax(out));
    }

    fn learn_predicted(&mut self, x: &[f64], y: ClassId, weight: f64) {
        self.watched()
            .two_calls()
            .expect("two_calls checked the learner")
            .learn_predicted(x, y, weight);
        let predicted = self
            .predicted()
            .take()
            .expect("predict_to_learn came first");
        self.learnt(x, y, weight, predicted);
    }
}
