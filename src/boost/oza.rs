//! Oza's online boosting (OzaBoost; Oza 2005, Fig. 2; \[CLL\] §5.1), as specified in
//! ALGORITHMS.md §9, in MOA's variant by default and River's as an option.
//!
//! * Learning: the row enters with `λ = 1`; model `m` is trained `K ~ Poisson(λ)` times
//!   (one call with weight `K`), then **re-queried**: if it now classifies the row
//!   correctly, `λ_sc[m] += λ` and `λ` shrinks by `(λ_sc + λ_sw)/(2λ_sc)`, otherwise
//!   `λ_sw[m] += λ` and `λ` grows by `(λ_sc + λ_sw)/(2λ_sw)`. MOA replaces `λ_sc + λ_sw` by
//!   the total weight of the rows the ensemble has seen ([`LambdaUpdate::Moa`]).
//! * Prediction: model `m` votes with weight `ln((1 − ε_m)/ε_m)`, `ε_m = λ_sw/(λ_sc + λ_sw)`;
//!   [`ZeroErrorPolicy`] decides what happens to models with `ε ∉ (0, 1/2]`. As an option
//!   of the library (the default of `--algo oza`), the prefix of that vote that Hedge picks
//!   ([`PrefixExperts`]), with a lead tree as model 1 learning each row once; Hedge's
//!   weights are part of the saved state.
//!
//! A row of importance weight `w` counts as `w` identical rows: the model learns with weight
//! `K·w` (MOA) and the `λ` sums grow by `λ·w`.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::Result;
use crate::boost::hedge::PrefixExperts;
use crate::boost::{
    BoosterConfig, ExpertSelection, Knob, LeadMember, Members, Tune, Turn, Waking, all_members,
    experts_note, lead_knob, lead_note, learn_by, wake_experts,
};
use crate::core::math::{TieBreak, argmax, argmax_tie, normalize};
use crate::core::{ClassId, Rng};
use crate::drift::{DriftConfig, Watch};
use crate::learner::{Classifier, learnable, predict_rows_by_member};
use crate::weak::hoeffding::Preset;

/// The normaliser of OzaBoost's `λ` update.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LambdaUpdate {
    /// `λ_sc[m] + λ_sw[m]`, the weight model `m` has been scored on (Oza 2005, River).
    Oza,
    /// The total weight of the rows the ensemble has seen, this one included (MOA).
    Moa,
}

/// How a model's vote enters the ensemble.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OzaVote {
    /// Its normalised class probabilities, times its vote weight (MOA, River).
    Soft,
    /// Its vote weight, on its most probable class.
    Hard,
}

/// What happens to models whose error `ε` is undefined, `0` or above `1/2`, where
/// `ln((1 − ε)/ε)` is infinite or negative.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum ZeroErrorPolicy {
    /// The first such model and all later ones are ignored (MOA).
    Stop,
    /// Such models vote with weight 1 and every model votes (River).
    River,
    /// Such models have weight 0; later models still vote.
    Skip,
}

/// Which OzaBoost: MOA's, or River's `AdaBoostClassifier`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum OzaVariant {
    /// MOA's OzaBoost: `λ` normalised by all rows seen; models with error 0 or above 1/2 end
    /// the vote.
    Moa,
    /// River's: Oza's `λ` update; such models vote with weight 1.
    River,
}

impl OzaVariant {
    /// Sets the parameters that tell the two apart.
    pub fn apply<W>(self, config: &mut OzaBoostConfig<W>) {
        let (lambda_update, zero_error) = match self {
            OzaVariant::Moa => (LambdaUpdate::Moa, ZeroErrorPolicy::Stop),
            OzaVariant::River => (LambdaUpdate::Oza, ZeroErrorPolicy::River),
        };
        (config.lambda_update, config.zero_error) = (lambda_update, zero_error);
    }
}

/// Hyper-parameters of [`OzaBoost`] (ALGORITHMS.md §9), generic over the weak learner's
/// config.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OzaBoostConfig<W> {
    /// Number of models `M`.
    pub n_learners: usize,
    /// Train `K ~ Poisson(λ)` times; `false` trains once with weight `λ` (MOA's
    /// "pureBoost").
    pub poisson: bool,
    /// Normaliser of the `λ` update.
    pub lambda_update: LambdaUpdate,
    /// Soft or hard votes.
    pub vote: OzaVote,
    /// Models with `ε ∉ (0, 1/2]`.
    pub zero_error: ZeroErrorPolicy,
    /// Tie rule of the final vote.
    pub tie_break: TieBreak,
    /// The weak learners' config.
    pub weak: W,
    /// Which prefix of the models predicts: [`ExpertSelection::Last`] (the default: Oza's,
    /// MOA's and River's vote over all `M`, as the zero-error policy lets them vote);
    /// `Sample` or `Best` weigh the vote of models `1..m`, for every `m`, by Hedge on its
    /// 0-1 loss ([`PrefixExperts`]). The models learn exactly as without it.
    #[serde(default = "all_members")]
    pub expert_selection: ExpertSelection,
    /// The first model as a tree of this preset instead of `weak` (see
    /// [`crate::boost::LeadMember`]). A lead learns each row once at its weight (`λ = 1`
    /// for model 1), not `Poisson(1)` times: it is the single tree, so that with prefix
    /// experts "that tree alone" is an expert. Only construction reads the preset.
    #[serde(default)]
    pub lead: Option<Preset>,
    /// The lead as a Hoeffding adaptive tree of its preset (`weak::hat`), where the lead is
    /// a plain tree: its split nodes watch their error and swap in subtrees grown after a
    /// change ([`crate::boost::LeadMember::as_lead`]). `false` in a config written without
    /// it; a named `--drift-detector` clears it.
    #[serde(default)]
    pub lead_adapts: bool,
    /// The detector an adaptive lead wakes on every other model when it first swaps a
    /// subtree in, and on the experts' own error (`crate::boost::Turn`); `None` in a config
    /// written without it. A named `--drift-detector` clears it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lead_wakes: Option<DriftConfig>,
}

impl<W> OzaBoostConfig<W> {
    /// MOA's `OzaBoost` (the default): Poisson replay, `λ` normalised by the ensemble's total
    /// weight, soft votes, stop at the first model with `ε ∉ (0, 1/2]`.
    pub fn new(weak: W) -> Self {
        OzaBoostConfig {
            n_learners: 100,
            poisson: true,
            lambda_update: LambdaUpdate::Moa,
            vote: OzaVote::Soft,
            zero_error: ZeroErrorPolicy::Stop,
            tie_break: TieBreak::Random,
            weak,
            expert_selection: ExpertSelection::Last,
            lead: None,
            lead_adapts: false,
            lead_wakes: None,
        }
    }

    /// River's `AdaBoostClassifier`: Oza's `λ` update, and models with `ε ∉ (0, 1/2]` vote
    /// with weight 1.
    pub fn river(weak: W) -> Self {
        let mut config = OzaBoostConfig::new(weak);
        OzaVariant::River.apply(&mut config);
        config
    }
}

impl<W: LeadMember> fmt::Display for OzaBoostConfig<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "OzaBoost(M={}, {}, lambda update={:?}, vote={:?}, zero error={:?}{}{}) over {}",
            self.n_learners,
            if self.poisson { "poisson" } else { "pure" },
            self.lambda_update,
            self.vote,
            self.zero_error,
            experts_note(self.expert_selection),
            lead_note(
                self.lead,
                self.lead_adapts,
                self.lead_wakes.as_ref(),
                &self.weak
            ),
            self.weak
        )
    }
}

impl<W> BoosterConfig for OzaBoostConfig<W> {
    booster_members!(OzaBoost, n_learners);

    fn lead(&self) -> Option<Preset> {
        self.lead
    }

    fn lead_adapts(&self) -> bool {
        self.lead_adapts
    }

    fn lead_wakes(&self) -> Option<&DriftConfig> {
        self.lead_wakes.as_ref()
    }

    fn validate_booster(&self) -> Result<()> {
        Ok(())
    }

    fn assemble_over<L: Classifier + Clone>(&self, m: Members<L>) -> Result<Self::Over<L>> {
        let n = m.len();
        let (watch, sleeping) = m.experts_watch()?;
        Ok(OzaBoost {
            k: m.k,
            poisson: self.poisson,
            lambda_update: self.lambda_update,
            vote: self.vote,
            zero_error: self.zero_error,
            tie_break: self.tie_break,
            prefixes: PrefixExperts::unless_last(n, self.expert_selection)
                .map(|p| p.watching(watch)),
            sleeping,
            steady_lead: m.led,
            learners: m.learners,
            lambda_sc: vec![0.0; n],
            lambda_sw: vec![0.0; n],
            seen: 0.0,
            rng: m.rng,
        })
    }
}

impl<W: Tune> Tune for OzaBoostConfig<W> {
    fn tune(&mut self, knob: &Knob) -> bool {
        match knob {
            Knob::Learners(n) => self.n_learners = *n,
            Knob::OzaVariant(variant) => variant.apply(self),
            Knob::ZeroError(z) => self.zero_error = *z,
            Knob::Expert(e) => self.expert_selection = *e,
            Knob::Lead(_) | Knob::Drift(_) | Knob::LeadWakes(_) => {
                return lead_knob(
                    knob,
                    Some(&mut self.lead),
                    &mut self.lead_adapts,
                    &mut self.lead_wakes,
                    &mut self.weak,
                );
            }
            _ => return self.weak.tune(knob),
        }
        true
    }
}

/// Oza's online boosting over weak learners `L`. Build it from an [`OzaBoostConfig`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OzaBoost<L> {
    k: usize,
    poisson: bool,
    lambda_update: LambdaUpdate,
    vote: OzaVote,
    zero_error: ZeroErrorPolicy,
    tie_break: TieBreak,
    /// Hedge over the prefixes, where they predict (`None`: the vote of all models).
    #[serde(default)]
    prefixes: Option<PrefixExperts>,
    /// The experts' detector while the models' response sleeps until the lead adapts
    /// (`crate::boost::Turn`); `None` once woken, or where no response sleeps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sleeping: Option<Watch>,
    /// Model 1 is a lead: it learns each row at its weight, without resampling.
    #[serde(default)]
    steady_lead: bool,
    learners: Vec<L>,
    /// `λ_sc[m]`: weight model `m` classified correctly (after training on it).
    lambda_sc: Vec<f64>,
    /// `λ_sw[m]`: weight model `m` classified wrongly.
    lambda_sw: Vec<f64>,
    /// Total weight of the rows learnt.
    seen: f64,
    rng: Rng,
}

impl<L: Classifier> OzaBoost<L> {
    /// The class probabilities [`Classifier::predict_proba`] gives a row whose learners'
    /// probabilities `member(i, p)` writes.
    fn vote(&self, out: &mut [f64], member: &mut dyn FnMut(usize, &mut [f64])) {
        let k = self.k;
        let (mut p, mut votes, mut first) = (vec![0.0; k], vec![0.0; k], vec![0.0; k]);
        let mut experts = Vec::new();
        let mut voting = true;
        for m in 0..self.learners.len() {
            member(m, &mut p);
            if m == 0 {
                first.copy_from_slice(&p);
            }
            voting = voting && self.add_vote(m, &mut p, &mut votes);
            match &self.prefixes {
                Some(_) => experts.push(Self::prefix_label(&votes, &first)),
                None if !voting => break,
                None => {}
            }
        }
        match &self.prefixes {
            Some(prefixes) => prefixes.mixture(&experts, out),
            None => self.finish(&votes, &first, out),
        }
    }

    /// `(λ_sc, λ_sw)` of every model.
    pub fn lambdas(&self) -> (&[f64], &[f64]) {
        (&self.lambda_sc, &self.lambda_sw)
    }

    /// `ε_m = λ_sw/(λ_sc + λ_sw)`, `None` before model `m` has been scored.
    pub fn error(&self, m: usize) -> Option<f64> {
        let total = self.lambda_sc[m] + self.lambda_sw[m];
        (total > 0.0).then(|| self.lambda_sw[m] / total)
    }

    /// Model `m`'s vote weight `ln((1 − ε)/ε)` under the zero-error policy: `None` means
    /// this model and all later ones do not vote ([`ZeroErrorPolicy::Stop`]). At `ε = 1/2`
    /// the weight is 0, which ends MOA's vote too (it adds models while their weight is
    /// positive).
    pub fn vote_weight(&self, m: usize) -> Option<f64> {
        let stops = self.zero_error == ZeroErrorPolicy::Stop;
        match self.error(m) {
            Some(e) if e > 0.0 && (e < 0.5 || (e == 0.5 && !stops)) => Some(((1.0 - e) / e).ln()),
            _ => match self.zero_error {
                ZeroErrorPolicy::Stop => None,
                ZeroErrorPolicy::River => Some(1.0),
                ZeroErrorPolicy::Skip => Some(0.0),
            },
        }
    }

    /// Adds model `m`'s vote, from its class probabilities `p`, to `votes`; returns false
    /// when the policy stops the vote here.
    fn add_vote(&self, m: usize, p: &mut [f64], votes: &mut [f64]) -> bool {
        let Some(omega) = self.vote_weight(m) else {
            return false;
        };
        if omega != 0.0 {
            match self.vote {
                OzaVote::Soft => {
                    if p.iter().sum::<f64>() > 0.0 {
                        normalize(p);
                        votes
                            .iter_mut()
                            .zip(p.iter())
                            .for_each(|(v, q)| *v += omega * q);
                    }
                }
                OzaVote::Hard => votes[argmax(p)] += omega,
            }
        }
        true
    }

    /// The ensemble's class distribution from its votes; with no vote, model 1's
    /// distribution (ALGORITHMS.md §9).
    fn finish(&self, votes: &[f64], first: &[f64], out: &mut [f64]) {
        if votes.iter().any(|&v| v > 0.0) {
            out.copy_from_slice(votes);
        } else {
            out.copy_from_slice(first);
        }
        normalize(out);
    }

    /// The `λ` update after model `m` was re-queried on the row (ALGORITHMS.md §9 step 3).
    fn pass_on(&mut self, m: usize, lambda: f64, weight: f64, correct: bool) -> f64 {
        let (hit, sum) = if correct {
            self.lambda_sc[m] += lambda * weight;
            (self.lambda_sc[m], self.lambda_sc[m] + self.lambda_sw[m])
        } else {
            self.lambda_sw[m] += lambda * weight;
            (self.lambda_sw[m], self.lambda_sc[m] + self.lambda_sw[m])
        };
        let normaliser = match self.lambda_update {
            LambdaUpdate::Oza => sum,
            LambdaUpdate::Moa => self.seen,
        };
        lambda * (normaliser / (2.0 * hit))
    }

    /// The label of the vote so far: its most probable class, or model 1's before any vote
    /// (ties to the lowest label: a prefix's label draws no randomness).
    fn prefix_label(votes: &[f64], first: &[f64]) -> ClassId {
        if votes.iter().any(|&v| v > 0.0) {
            argmax(votes)
        } else {
            argmax(first)
        }
    }

    /// One row, test then train: every model scores the row (its vote, with the weights
    /// before this row), then, given a label, learns it and is re-queried. With prefix
    /// experts, returns the label of the one chosen for this row (and charges them all,
    /// given a label); `out` is then their mixture.
    fn step(
        &mut self, x: &[f64], target: Option<(ClassId, f64)>, out: &mut [f64],
    ) -> Option<ClassId> {
        let k = self.k;
        let (mut p, mut votes, mut first) = (vec![0.0; k], vec![0.0; k], vec![0.0; k]);
        let mut experts =
            Vec::with_capacity(self.prefixes.as_ref().map_or(0, |_| self.learners.len()));
        let mut voting = true;
        let mut lambda = 1.0;
        let mut waking = Waking::new(self.sleeping.is_some());
        if let Some((_, w)) = target {
            self.seen += w;
        }
        for m in 0..self.learners.len() {
            // A lead's draw is made too, so later models see the same random numbers.
            let replays = match target {
                Some(_) if self.poisson => {
                    let drawn = self.rng.poisson(lambda) as f64;
                    if m == 0 && self.steady_lead {
                        lambda
                    } else {
                        drawn
                    }
                }
                Some(_) => lambda,
                None => 0.0,
            };
            let (y, w) = target.unwrap_or((0, 0.0));
            let turn = match target {
                Some(_) => waking.turn(m, replays * w),
                None => Turn::learn(0.0),
            };
            let adapted = turn.take(&mut self.learners[m], x, target.map(|_| y), &mut p);
            waking.after(m, adapted);
            if m == 0 {
                first.copy_from_slice(&p);
            }
            if voting {
                voting = self.add_vote(m, &mut p, &mut votes);
            }
            if self.prefixes.is_some() {
                experts.push(Self::prefix_label(&votes, &first));
            }
            if target.is_none() {
                if !voting && self.prefixes.is_none() {
                    break;
                }
                continue;
            }
            // Re-query after training (Oza 2005, Fig. 2); a model that did not learn
            // predicts as before.
            if replays > 0.0 {
                self.learners[m].predict_proba(x, &mut p);
            }
            lambda = self.pass_on(m, lambda, w, argmax(&p) == y);
        }
        if waking.woke() {
            wake_experts(&mut self.sleeping, self.prefixes.as_mut());
        }
        let Some(prefixes) = &mut self.prefixes else {
            self.finish(&votes, &first, out);
            return None;
        };
        let chosen = prefixes.choose(self.tie_break, &mut self.rng);
        prefixes.mixture(&experts, out);
        if let Some((y, w)) = target {
            prefixes.charge(&experts, y, w);
        }
        Some(experts[chosen])
    }
}

ensemble!(OzaBoost<L: Classifier> over learners, experts prefixes;
    /// The effective vote weights: a model the zero-error policy stops at, and every later
    /// one, weigh 0.
    fn member_weights(&self) -> Option<Vec<f64>> {
        let mut voting = true;
        Some(
            (0..self.learners.len())
                .map(|m| {
                    let w = self.vote_weight(m).filter(|_| voting);
                    voting &= w.is_some();
                    w.unwrap_or(0.0)
                })
                .collect(),
        )
    }
);

impl<L: Classifier> Classifier for OzaBoost<L> {
    // A new class: the members grow; `λ^sc`, `λ^sw` and the error estimates are per member
    // and stay (MOA's OzaBoost keeps no per-class state).
    member_classes!();

    fn learn(&mut self, x: &[f64], y: ClassId, weight: f64) {
        learn_by(self.k, y, weight, |target, out| {
            self.step(x, Some(target), out);
        });
    }

    fn predict_proba(&self, x: &[f64], out: &mut [f64]) {
        self.vote(out, &mut |i, p| self.learners[i].predict_proba(x, p));
    }

    fn predict_proba_rows(&self, xs: &[&[f64]], proba: &mut [f64]) {
        predict_rows_by_member(&self.learners, self.k, xs, proba, |out, member| {
            self.vote(out, member)
        });
    }

    fn learn_predict(
        &mut self, x: &[f64], y: Option<ClassId>, weight: f64, out: &mut [f64],
    ) -> ClassId {
        let target = learnable(y, weight, self.k);
        if let Some(chosen) = self.step(x, target, out) {
            return chosen;
        }
        let mut rng = self.rng.clone();
        let predicted = argmax_tie(out, self.tie_break, &mut rng);
        self.rng = rng;
        predicted
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::StreamSpec;
    use crate::learner::Config;
    use crate::weak::NaiveBayesConfig;

    #[test]
    fn lambda_update_normalises_by_the_model_or_by_all_rows_seen() {
        let spec = StreamSpec::numeric(1, 2).unwrap();
        let build = |lambda_update| {
            let mut b = OzaBoostConfig {
                n_learners: 1,
                lambda_update,
                ..OzaBoostConfig::new(NaiveBayesConfig::default())
            }
            .build(&spec, 0)
            .unwrap();
            (b.lambda_sc[0], b.lambda_sw[0], b.seen) = (2.0, 1.0, 10.0);
            b
        };
        // A right answer with λ = 0.5: λ_sc = 2.5; Oza: 0.5·3.5/(2·2.5); MOA: 0.5·10/(2·2.5).
        let (mut oza, mut moa) = (build(LambdaUpdate::Oza), build(LambdaUpdate::Moa));
        assert_eq!(oza.pass_on(0, 0.5, 1.0, true), 0.5 * (3.5 / 5.0));
        assert_eq!(moa.pass_on(0, 0.5, 1.0, true), 0.5 * (10.0 / 5.0));
        // A wrong answer with row weight 2: λ_sw grows by 2λ.
        assert_eq!(oza.pass_on(0, 0.5, 2.0, false), 0.5 * (4.5 / 4.0));
        assert_eq!(oza.lambdas().1, &[2.0]);
    }

    #[test]
    fn poisson_replay_is_seeded_and_has_the_right_mean() {
        let mut rng = Rng::new(7);
        let n = 20_000;
        let mean = (0..n).map(|_| rng.poisson(2.5) as f64).sum::<f64>() / n as f64;
        assert!((mean - 2.5).abs() < 0.05, "{mean}");
        assert_eq!(Rng::new(3).poisson(0.0), 0);
        let draws = |seed| {
            (0..20)
                .map(|_| Rng::new(seed).poisson(1.0))
                .collect::<Vec<_>>()
        };
        assert_eq!(draws(11), draws(11));
    }
}
