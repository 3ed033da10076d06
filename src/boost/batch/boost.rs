//! The batch boosters as a model of the catalogue: one config that names the method
//! (AdaBoost.MM, AdaBoost.M1, AdaBoost.MH or the OS strategy), trained in one call on a
//! logged table, and a model that scores wherever an online model does.
//!
//! **A batch model does not learn online.** Built from its config alone it holds no
//! hypotheses (and predicts the uniform distribution); [`BatchBoostConfig::train`] makes a
//! trained one. Fed labelled rows afterwards (a replay, the operator, SQL) it scores them
//! and counts them in [`BatchBoost::rows_not_learnt`], changing nothing else, so a restored
//! checkpoint scores exactly as the saved model did.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::{
    AdaBoostMmConfig, GreedyTree, GreedyTreeConfig, Hypothesis, MhStump, NonPositiveEdge, OsConfig,
    Round, SortedColumns, WeightedVote, train, train_mh, train_os, train_samme,
};
use crate::boost::{Knob, Tune};
use crate::core::{ClassId, Dataset, Rng, StreamSpec};
use crate::learner::{Classifier, Config, EnsembleSummary, Spread};
use crate::weak::Structure;
use crate::{Error, Result};

/// Which batch booster.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// AdaBoost.MM (\[MS\] §7) over greedy cost-sensitive trees.
    Mm,
    /// AdaBoost.M1 in its SAMME form over the same trees.
    M1,
    /// AdaBoost.MH over real-valued stumps (the tree size is 2).
    Mh,
    /// \[MS\]'s OS strategy with edge `γ` over the same trees.
    Os {
        /// The edge over random assumed of the trees.
        gamma: f64,
    },
}

impl Method {
    /// The catalogue's name for this method.
    pub fn algorithm_name(self) -> &'static str {
        match self {
            Method::Mm => "adaboost-mm",
            Method::M1 => "adaboost-m1",
            Method::Mh => "adaboost-mh",
            Method::Os { .. } => "os-strategy",
        }
    }
}

/// A batch booster's parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BatchBoostConfig {
    /// The booster.
    pub method: Method,
    /// Rounds `T`.
    pub rounds: usize,
    /// Leaves per tree at most (AdaBoost.MH's stumps have 2, whatever this says).
    pub max_leaves: usize,
    /// What AdaBoost.MM and AdaBoost.M1 do with a round whose edge is not positive.
    #[serde(default)]
    pub non_positive_edge: NonPositiveEdge,
}

impl BatchBoostConfig {
    /// `method` at the defaults: 500 rounds (\[MS\]'s experiments) of trees of at most 20
    /// leaves, for AdaBoost.MM the best of 2, 3, 5, 10 and 20 leaves on five of the six
    /// shared sets (tied with 10 on two; RESULTS.md, "Batch boosting of \[MS\]").
    pub fn new(method: Method) -> Self {
        BatchBoostConfig {
            method,
            rounds: 500,
            max_leaves: 20,
            non_positive_edge: NonPositiveEdge::Stop,
        }
    }

    /// Trains on the labelled rows of `data`; `on_round` sees each round's report as it
    /// ends. The rows are laid out by column once ([`SortedColumns`]).
    pub fn train(&self, data: &Dataset, on_round: &mut dyn FnMut(&Round)) -> Result<BatchBoost> {
        self.train_on(&SortedColumns::new(data)?, on_round)
    }

    /// [`BatchBoostConfig::train`] on a table already laid out by column.
    pub fn train_on(
        &self, table: &SortedColumns, on_round: &mut dyn FnMut(&Round),
    ) -> Result<BatchBoost> {
        self.validate()?;
        let tree = GreedyTreeConfig {
            max_leaves: self.max_leaves,
        };
        let mm = AdaBoostMmConfig {
            rounds: self.rounds,
            non_positive_edge: self.non_positive_edge,
        };
        let (vote, rounds) = match self.method {
            Method::Mm => {
                let (vote, rounds) = train(&mm, table, &tree, on_round)?;
                (Vote::Trees(vote), rounds)
            }
            Method::M1 => {
                let (vote, rounds) = train_samme(&mm, table, &tree, on_round)?;
                (Vote::Trees(vote), rounds)
            }
            Method::Mh => {
                let (vote, rounds) = train_mh(self.rounds, table, on_round)?;
                (Vote::Stumps(vote), rounds)
            }
            Method::Os { gamma } => {
                let os = OsConfig {
                    rounds: self.rounds,
                    gamma,
                };
                let (vote, rounds) = train_os(&os, table, &tree, on_round)?;
                (Vote::Trees(vote), rounds)
            }
        };
        Ok(BatchBoost {
            config: self.clone(),
            k: table.k(),
            vote,
            rounds,
            rows_trained: table.len() as u64,
            rows_not_learnt: 0,
        })
    }
}

impl fmt::Display for BatchBoostConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.method {
            Method::Mh => write!(f, "AdaBoost.MH(T={}) over stumps", self.rounds),
            method => {
                let name = match method {
                    Method::Mm => "AdaBoost.MM".to_string(),
                    Method::M1 => "AdaBoost.M1".to_string(),
                    Method::Os { gamma } => format!("OS(gamma={gamma})"),
                    Method::Mh => unreachable!(),
                };
                write!(
                    f,
                    "{name}(T={}) over greedy trees of {} leaves",
                    self.rounds, self.max_leaves
                )
            }
        }
    }
}

impl Tune for BatchBoostConfig {
    fn tune(&mut self, knob: &Knob) -> bool {
        match (&mut self.method, knob) {
            (Method::Os { gamma }, Knob::Gamma(g)) => {
                *gamma = *g;
                true
            }
            _ => false,
        }
    }
}

impl Config for BatchBoostConfig {
    type Model = BatchBoost;

    fn validate(&self) -> Result<()> {
        if self.rounds == 0 {
            return Err(Error::config("rounds", "must be >= 1"));
        }
        if self.max_leaves < 2 {
            return Err(Error::config("max_leaves", "must be >= 2"));
        }
        if let Method::Os { gamma } = self.method
            && !(gamma > 0.0 && gamma < 1.0)
        {
            return Err(Error::config("gamma", "must be in (0, 1)"));
        }
        Ok(())
    }

    /// A model with no hypotheses: what [`BatchBoostConfig::train`] starts from. It
    /// predicts the uniform distribution.
    fn build_with_rng(&self, spec: &StreamSpec, _rng: &mut Rng) -> Result<BatchBoost> {
        self.validate()?;
        let k = spec.n_classes();
        let vote = match self.method {
            Method::Mh => Vote::Stumps(WeightedVote::new(k)),
            _ => Vote::Trees(WeightedVote::new(k)),
        };
        Ok(BatchBoost {
            config: self.clone(),
            k,
            vote,
            rounds: Vec::new(),
            rows_trained: 0,
            rows_not_learnt: 0,
        })
    }
}

/// The hypotheses of a trained batch booster.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum Vote {
    /// Greedy trees that each name a label (AdaBoost.MM, AdaBoost.M1, OS).
    Trees(WeightedVote<GreedyTree>),
    /// Stumps that rate every label (AdaBoost.MH).
    Stumps(WeightedVote<MhStump>),
}

/// A batch model in brief.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BatchSummary {
    /// Its config, in words.
    pub model: String,
    /// Hypotheses in the vote.
    pub hypotheses: usize,
    /// Rounds trained (more than the hypotheses when rounds were discarded).
    pub rounds: usize,
    /// Leaves per hypothesis, on average.
    pub mean_leaves: f64,
    /// Labelled rows it was trained on.
    pub rows_trained: u64,
    /// Labelled rows scored since, not learnt.
    pub rows_not_learnt: u64,
    /// The last round's report.
    pub last_round: Option<Round>,
}

/// A trained batch booster.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BatchBoost {
    config: BatchBoostConfig,
    k: usize,
    vote: Vote,
    /// The training report, a round each.
    rounds: Vec<Round>,
    /// Labelled rows it was trained on.
    rows_trained: u64,
    /// Labelled rows given to it since, which it scored without learning.
    rows_not_learnt: u64,
}

impl BatchBoost {
    /// Its config.
    pub fn config(&self) -> &BatchBoostConfig {
        &self.config
    }

    /// The training report, a round each.
    pub fn rounds(&self) -> &[Round] {
        &self.rounds
    }

    /// Hypotheses in the vote.
    pub fn n_hypotheses(&self) -> usize {
        match &self.vote {
            Vote::Trees(v) => v.hypotheses().len(),
            Vote::Stumps(v) => v.hypotheses().len(),
        }
    }

    /// Labelled rows it was trained on.
    pub fn rows_trained(&self) -> u64 {
        self.rows_trained
    }

    /// Labelled rows given to it after training, scored but not learnt.
    pub fn rows_not_learnt(&self) -> u64 {
        self.rows_not_learnt
    }

    /// The vote `f(x, l)` of the first `rounds` hypotheses, into `out`.
    pub fn scores_after(&self, rounds: usize, x: &[f64], out: &mut [f64]) {
        match &self.vote {
            Vote::Trees(v) => v.scores_after(rounds, x, out),
            Vote::Stumps(v) => v.scores_after(rounds, x, out),
        }
    }

    /// The label of the largest vote of the first `rounds` hypotheses (the lowest label on
    /// a tie).
    pub fn predict_after(&self, rounds: usize, x: &[f64]) -> ClassId {
        let mut scores = vec![0.0; self.k];
        self.scores_after(rounds, x, &mut scores);
        crate::core::math::argmax(&scores)
    }

    /// The error of the vote after each round on the labelled rows of `data` (a tie goes
    /// to the lowest label, as in [`BatchBoost::predict_after`]); empty if none is labelled.
    pub fn errors_by_round(&self, data: &Dataset) -> Vec<f64> {
        match &self.vote {
            Vote::Trees(v) => errors_by_round(v, self.k, data),
            Vote::Stumps(v) => errors_by_round(v, self.k, data),
        }
    }

    /// The model in brief, for `inspect`.
    pub fn summary(&self) -> BatchSummary {
        let leaves: Vec<usize> = match &self.vote {
            Vote::Trees(v) => v.hypotheses().iter().map(|(h, _)| h.n_leaves()).collect(),
            Vote::Stumps(v) => v.hypotheses().iter().map(|(h, _)| h.n_leaves()).collect(),
        };
        BatchSummary {
            model: self.config.to_string(),
            hypotheses: leaves.len(),
            rounds: self.rounds.len(),
            mean_leaves: leaves.iter().sum::<usize>() as f64 / leaves.len().max(1) as f64,
            rows_trained: self.rows_trained,
            rows_not_learnt: self.rows_not_learnt,
            last_round: self.rounds.last().cloned(),
        }
    }

    /// The hypotheses' weights `α_t`.
    fn alphas(&self) -> Vec<f64> {
        match &self.vote {
            Vote::Trees(v) => v.hypotheses().iter().map(|(_, a)| *a).collect(),
            Vote::Stumps(v) => v.hypotheses().iter().map(|(_, a)| *a).collect(),
        }
    }
}

fn errors_by_round<H: Hypothesis>(vote: &WeightedVote<H>, k: usize, data: &Dataset) -> Vec<f64> {
    let rows: Vec<usize> = (0..data.len()).filter(|&i| data.is_labelled(i)).collect();
    if rows.is_empty() {
        return Vec::new();
    }
    let mut scores = vec![0.0; rows.len() * k];
    vote.hypotheses()
        .iter()
        .map(|(h, alpha)| {
            let mut wrong = 0;
            for (&i, s) in rows.iter().zip(scores.chunks_mut(k)) {
                h.vote(data.row(i), *alpha, s);
                wrong += usize::from(Some(crate::core::math::argmax(s)) != data.label(i));
            }
            wrong as f64 / rows.len() as f64
        })
        .collect()
}

impl Classifier for BatchBoost {
    fn n_classes(&self) -> usize {
        self.k
    }

    /// Counts the row (unless its weight is 0): a batch model does not learn online.
    fn learn(&mut self, _x: &[f64], _y: ClassId, weight: f64) {
        self.rows_not_learnt += u64::from(weight > 0.0);
    }

    /// A vote of trees: each label's share of the total weight `Σ α_t`. AdaBoost.MH's vote
    /// estimates half the log-odds of each label (Friedman, Hastie & Tibshirani 2000):
    /// `σ(2 f(x, l))`, normalised over the labels. Uniform with no hypotheses.
    fn predict_proba(&self, x: &[f64], out: &mut [f64]) {
        self.scores_after(usize::MAX, x, out);
        let trained = match &self.vote {
            Vote::Trees(v) => v.k(),
            Vote::Stumps(v) => {
                out.iter_mut()
                    .for_each(|f| *f = 1.0 / (1.0 + (-2.0 * *f).exp()));
                v.k()
            }
        };
        // A class added after training has no votes, and no probability.
        if trained < out.len() && out[..trained].iter().any(|&p| p > 0.0) {
            out[trained..].fill(0.0);
        }
        let total: f64 = out.iter().sum();
        if total > 0.0 {
            out.iter_mut().for_each(|p| *p /= total);
        } else {
            out.fill(1.0 / out.len() as f64);
        }
    }

    fn learns_online(&self) -> bool {
        false
    }

    /// A class first seen after training: no hypothesis predicts it, and its probability
    /// is 0 once any hypothesis votes.
    fn add_class(&mut self) -> Result<()> {
        self.k += 1;
        Ok(())
    }
}

impl Structure for BatchBoost {
    /// A batch model does not grow as it scores: its size is taken as its serialized size.
    fn heap_bytes(&self) -> usize {
        serde_json::to_vec(self).map_or(0, |v| v.len())
    }

    /// Its greedy trees and stumps are parts of one batch model, not online learners: the
    /// model is the one learner it holds.
    fn learners<'a, T: std::any::Any>(&'a self, out: &mut Vec<&'a T>) {
        out.extend((self as &dyn std::any::Any).downcast_ref::<T>());
    }

    fn learners_mut<'a, T: std::any::Any>(&'a mut self, out: &mut Vec<&'a mut T>) {
        out.extend((self as &mut dyn std::any::Any).downcast_mut::<T>());
    }

    fn ensemble(&self) -> Option<EnsembleSummary> {
        let alphas = self.alphas();
        Some(EnsembleSummary {
            members: alphas.len(),
            rows_learnt: Some(self.rows_trained),
            weights: (!alphas.is_empty()).then(|| Spread::of(&alphas)),
            best_expert: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trained_model_scores_without_learning_and_round_trips_through_json() {
        let data = crate::synth::mixed(300, 0.1, 0.05, 2);
        for method in [
            Method::Mm,
            Method::M1,
            Method::Mh,
            Method::Os { gamma: 0.1 },
        ] {
            let config = BatchBoostConfig {
                rounds: 8,
                max_leaves: 4,
                ..BatchBoostConfig::new(method)
            };
            let mut seen = 0;
            let mut model = config.train(&data, &mut |_| seen += 1).unwrap();
            assert_eq!(seen, model.rounds().len(), "{method:?}");
            assert!(model.n_hypotheses() > 0, "{method:?}");
            let json = serde_json::to_string(&model).unwrap();
            let mut p = vec![0.0; model.n_classes()];
            let mut q = p.clone();
            for i in 0..data.len() {
                let x = data.row(i);
                model.predict_proba(x, &mut p);
                assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-9, "{method:?}");
                model.learn_predict(x, data.label(i), 1.0, &mut q);
                assert_eq!(p, q, "{method:?}: learning changed the model");
            }
            assert_eq!(model.rows_not_learnt(), data.len() as u64);
            let back: BatchBoost = serde_json::from_str(&json).unwrap();
            for i in 0..data.len() {
                model.predict_proba(data.row(i), &mut p);
                back.predict_proba(data.row(i), &mut q);
                assert_eq!(p, q, "{method:?}");
            }
        }
    }

    #[test]
    fn an_untrained_model_predicts_uniformly() {
        let data = crate::synth::mixed(10, 0.0, 0.0, 1);
        let model = BatchBoostConfig::new(Method::Mm)
            .build(data.spec(), 0)
            .unwrap();
        let mut p = vec![0.0; model.n_classes()];
        model.predict_proba(data.row(0), &mut p);
        assert!(p.iter().all(|&v| (v - 1.0 / p.len() as f64).abs() < 1e-15));
    }
}
