//! A multi-label operator's rows: a score per label and the predicted set, learnt from the
//! label sets [`super::LabelSetReader`] reads.

use std::sync::Arc;

use arrow::array::{ArrayRef, RecordBatch};

use super::operator::{BoostOperator, Targets};
use super::output::fixed_list;
use crate::Result;
use crate::eval::ranking::predicted_set;
use crate::learner::{Classifier, Ranker};
use crate::runtime::OperatorStats;

/// The multi-label rows of an operator.
impl<M: Classifier + Ranker> BoostOperator<M> {
    /// Multi-label rows: `<label>_scores` and `predicted_<label>` (the predicted set). Rows
    /// flagged in `learnt` (when it is not empty) are scored only.
    pub(super) fn rank(
        &mut self, batch: &RecordBatch, first_row: u64, learnt: &[bool],
        counts: &mut OperatorStats, columns: &mut Vec<ArrayRef>,
    ) -> Result<()> {
        let Targets::LabelSets(reader) = &self.targets else {
            unreachable!("called for multi-label streams")
        };
        let n = batch.num_rows();
        let (d, k) = (self.encoder.width(), self.probs.len());
        let (mut masks, mut known) = (Vec::new(), vec![false; n]);
        if let Some(reader) = reader {
            let unknown = reader.read(batch, &self.source, first_row, k, &mut masks, &mut known)?;
            counts.unknown_labels += unknown.len() as u64;
        }
        let names = self.spec.classes.names();
        let mut scores = Vec::with_capacity(n * k);
        let mut sets = arrow::array::ListBuilder::new(arrow::array::StringBuilder::new());
        let mut set = Vec::with_capacity(k);
        let learns = self.model.learns_online();
        for r in 0..n {
            let x = &self.rows[r * d..(r + 1) * d];
            let seen = learnt.get(r) == Some(&true);
            let relevant = (known[r] && !seen).then(|| &masks[r * k..(r + 1) * k]);
            match seen {
                // Learnt before: scored, changing nothing (see `classify`).
                true => self.model.predict_scores(x, &mut self.probs),
                false => self
                    .model
                    .learn_predict_scores(x, relevant, 1.0, &mut self.probs),
            }
            scores.extend_from_slice(&self.probs);
            predicted_set(&self.probs, &mut set);
            for (name, _) in names.iter().zip(&set).filter(|(_, on)| **on) {
                sets.values().append_value(name);
            }
            sets.append(true);
            counts.rows_learnt += u64::from(relevant.is_some() && learns);
        }
        columns.push(Arc::new(fixed_list(scores, k)));
        columns.push(Arc::new(sets.finish()));
        Ok(())
    }
}
