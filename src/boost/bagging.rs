//! Online bagging of Oza & Russell (2001), "Online Bagging and Boosting" (MOA's `OzaBag`,
//! River's `BaggingClassifier`): the ensemble that online boosting is measured against.
//!
//! A bootstrap sample of `n` rows holds each row `K ~ Binomial(n, 1/n)` times, which tends
//! to `Poisson(1)` as `n` grows; online, each member learns each labelled row `K ~ Poisson(λ)`
//! times, independently of the other members, as one row of weight `K·w` (a weighted
//! learner's `K` copies). The ensemble predicts the mean of its members' class
//! probabilities, each normalised first (MOA's vote), and its class is the most probable,
//! ties to the lowest index. `λ = 1` is the bootstrap; a larger `λ` resamples more (the
//! "leveraging" direction of Bifet et al. 2010). As an option of the library (the default
//! of `--algo oza-bag`), the mean of the first members that Hedge picks
//! ([`PrefixExperts`]), with a lead tree as member 1 learning each row once; Hedge's
//! weights are part of the saved state.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::boost::hedge::PrefixExperts;
use crate::boost::{
    BoosterConfig, ExpertSelection, LeadMember, Members, Waking, all_members, experts_note,
    lead_note, wake_experts,
};
use crate::core::math::{TieBreak, argmax, normalize};
use crate::core::{ClassId, Rng};
use crate::drift::{DriftConfig, Watch};
use crate::learner::{Classifier, learnable, predict_rows_by_member};
use crate::weak::hoeffding::Preset;
use crate::{Error, Result};

/// Hyper-parameters of [`OzaBag`], generic over the weak learner's config.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OzaBagConfig<W> {
    /// Number of members (MOA's and River's default: 10).
    pub n_learners: usize,
    /// `λ`: each member learns a row `K ~ Poisson(λ)` times.
    pub lambda: f64,
    /// The members' config.
    pub weak: W,
    /// Which prefix of the members predicts: [`ExpertSelection::Last`] (the default: the
    /// mean of all `M`); `Sample` or `Best` weigh the mean of members `1..m`, for every `m`,
    /// by Hedge on its 0-1 loss ([`PrefixExperts`]). The members learn exactly as without it.
    #[serde(default = "all_members")]
    pub expert_selection: ExpertSelection,
    /// The first member as a tree of this preset instead of `weak` (see
    /// [`crate::boost::LeadMember`]). A lead learns each row once at its weight, not
    /// `Poisson(λ)` times: it is the single tree, so that with prefix experts "that tree
    /// alone" is an expert. Only construction reads the preset.
    #[serde(default)]
    pub lead: Option<Preset>,
    /// The lead as a Hoeffding adaptive tree of its preset (`weak::hat`), where the lead is
    /// a plain tree: its split nodes watch their error and swap in subtrees grown after a
    /// change ([`crate::boost::LeadMember::as_lead`]). `false` in a config written without
    /// it; a named `--drift-detector` clears it.
    #[serde(default)]
    pub lead_adapts: bool,
    /// The detector an adaptive lead wakes on every other member when it first swaps a
    /// subtree in, and on the experts' own error (`crate::boost::Turn`); `None` in a config
    /// written without it. A named `--drift-detector` clears it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lead_wakes: Option<DriftConfig>,
}

impl<W> OzaBagConfig<W> {
    /// MOA's defaults: 10 members, `λ = 1`.
    pub fn new(weak: W) -> Self {
        OzaBagConfig {
            n_learners: 10,
            lambda: 1.0,
            weak,
            expert_selection: ExpertSelection::Last,
            lead: None,
            lead_adapts: false,
            lead_wakes: None,
        }
    }
}

impl<W: LeadMember> fmt::Display for OzaBagConfig<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "OzaBag(M={}, lambda={}{}{}) over {}",
            self.n_learners,
            self.lambda,
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

impl<W> BoosterConfig for OzaBagConfig<W> {
    booster_members!(OzaBag, n_learners);

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
        if !(self.lambda > 0.0 && self.lambda.is_finite()) {
            return Err(Error::config("lambda", "must be > 0"));
        }
        Ok(())
    }

    fn assemble_over<L: Classifier + Clone>(&self, m: Members<L>) -> Result<Self::Over<L>> {
        let (watch, sleeping) = m.experts_watch()?;
        Ok(OzaBag {
            k: m.k,
            lambda: self.lambda,
            prefixes: PrefixExperts::unless_last(m.len(), self.expert_selection)
                .map(|p| p.watching(watch)),
            sleeping,
            steady_lead: m.led,
            learners: m.learners,
            rng: m.rng,
            member_proba: Vec::new(),
            experts: Vec::new(),
        })
    }
}

tune!(OzaBagConfig {
    Learners => n_learners,
    Expert => expert_selection,
} lead: lead, lead_adapts, lead_wakes);

/// Oza's online bagging over members `L`. Build it from an [`OzaBagConfig`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OzaBag<L> {
    k: usize,
    lambda: f64,
    /// Hedge over the prefixes, where they predict (`None`: the mean of all members).
    #[serde(default)]
    prefixes: Option<PrefixExperts>,
    /// The experts' detector while the members' response sleeps until the lead adapts
    /// (`crate::boost::Turn`); `None` once woken, or where no response sleeps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sleeping: Option<Watch>,
    /// Member 1 is a lead: it learns each row at its weight, without resampling.
    #[serde(default)]
    steady_lead: bool,
    learners: Vec<L>,
    /// Draws the members' replication counts (and, with prefix experts, the expert).
    rng: Rng,
    /// A member's class probabilities, reused from row to row.
    #[serde(skip)]
    member_proba: Vec<f64>,
    /// Each prefix's label on the current row.
    #[serde(skip)]
    experts: Vec<ClassId>,
}

ensemble!(OzaBag<L> over learners, experts prefixes);

impl<L: Classifier> OzaBag<L> {
    /// The class probabilities [`Classifier::predict_proba`] gives a row whose learners'
    /// probabilities `member(i, p)` writes.
    fn ensemble_vote(&self, out: &mut [f64], member: &mut dyn FnMut(usize, &mut [f64])) {
        let mut p = vec![0.0; self.k];
        let mut experts = Vec::new();
        out.fill(0.0);
        for i in 0..self.learners.len() {
            member(i, &mut p);
            Self::vote(&mut p, out);
            if self.prefixes.is_some() {
                experts.push(argmax(out));
            }
        }
        match &self.prefixes {
            Some(prefixes) => prefixes.mixture(&experts, out),
            None => {
                self.mean(out);
            }
        }
    }

    /// Adds member probabilities `p`, normalised, to `sum`.
    fn vote(p: &mut [f64], sum: &mut [f64]) {
        normalize(p);
        sum.iter_mut().zip(p.iter()).for_each(|(s, p)| *s += p);
    }

    /// How many times member `i` learns the row: `K ~ Poisson(λ)`, or once for a lead (the
    /// draw is made anyway, so the other members see the same random numbers).
    fn copies(&mut self, i: usize) -> f64 {
        let k = self.rng.poisson(self.lambda) as f64;
        if i == 0 && self.steady_lead { 1.0 } else { k }
    }

    /// The summed votes in `out` become their mean; returns the class.
    fn mean(&self, out: &mut [f64]) -> ClassId {
        let n = self.learners.len() as f64;
        out.iter_mut().for_each(|o| *o /= n);
        argmax(out)
    }
}

impl<L: Classifier> Classifier for OzaBag<L> {
    // A new class: the members grow; bagging has no state of its own but its generator.
    member_classes!();

    fn learn(&mut self, x: &[f64], y: ClassId, weight: f64) {
        let Some((y, w)) = learnable(Some(y), weight, self.k) else {
            return;
        };
        if self.prefixes.is_some() || self.sleeping.is_some() {
            // The prefixes' losses are their votes before the row is learnt; a sleeping
            // response asks the lead before it learns (`crate::boost::Turn`).
            let mut out = vec![0.0; self.k];
            self.learn_predict(x, Some(y), w, &mut out);
            return;
        }
        for i in 0..self.learners.len() {
            let copies = self.copies(i);
            if copies > 0.0 {
                self.learners[i].learn(x, y, w * copies);
            }
        }
    }

    fn predict_proba(&self, x: &[f64], out: &mut [f64]) {
        self.ensemble_vote(out, &mut |i, p| self.learners[i].predict_proba(x, p));
    }

    fn predict_proba_rows(&self, xs: &[&[f64]], proba: &mut [f64]) {
        predict_rows_by_member(&self.learners, self.k, xs, proba, |out, member| {
            self.ensemble_vote(out, member)
        });
    }

    /// Each member predicts the row before it learns it, so the vote is the one
    /// [`Classifier::predict_proba`] gives before learning, and every member is read once.
    fn learn_predict(
        &mut self, x: &[f64], y: Option<ClassId>, weight: f64, out: &mut [f64],
    ) -> ClassId {
        let target = learnable(y, weight, self.k);
        let mut p = std::mem::take(&mut self.member_proba);
        p.resize(self.k, 0.0);
        self.experts.clear();
        out.fill(0.0);
        let mut waking = Waking::new(self.sleeping.is_some());
        for i in 0..self.learners.len() {
            match target {
                Some((y, w)) => {
                    let copies = self.copies(i);
                    let learner = &mut self.learners[i];
                    waking.take_turn(i, w * copies, |turn| turn.take(learner, x, Some(y), &mut p));
                }
                None => self.learners[i].predict_proba(x, &mut p),
            }
            Self::vote(&mut p, out);
            if self.prefixes.is_some() {
                // The prefix's mean and its sum have the same most probable class.
                self.experts.push(argmax(out));
            }
        }
        self.member_proba = p;
        if waking.woke() {
            wake_experts(&mut self.sleeping, self.prefixes.as_mut());
        }
        let Some(prefixes) = &mut self.prefixes else {
            return self.mean(out);
        };
        let chosen = prefixes.choose(TieBreak::Lowest, &mut self.rng);
        prefixes.mixture(&self.experts, out);
        if let Some((y, w)) = target {
            prefixes.charge(&self.experts, y, w);
        }
        self.experts[chosen]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::StreamSpec;
    use crate::learner::Config;
    use crate::weak::NaiveBayesConfig;

    #[test]
    fn members_see_poisson_copies_and_the_vote_is_their_mean() {
        let spec = StreamSpec::numeric(1, 2).unwrap();
        let config = OzaBagConfig::new(NaiveBayesConfig::default());
        let mut bag = config.build(&spec, 3).unwrap();
        let mut out = [0.0; 2];
        for i in 0..400 {
            let x = [(i % 2) as f64];
            bag.learn_predict(&x, Some(i % 2), 1.0, &mut out);
        }
        // Each member's total weight is a sum of 400 Poisson(1) draws: near 400, and the
        // members differ (independent draws).
        let totals: Vec<f64> = bag
            .learners
            .iter()
            .map(|m| m.class_weights().iter().sum())
            .collect();
        assert!(
            totals.iter().all(|&t| (300.0..500.0).contains(&t)),
            "{totals:?}"
        );
        assert!(totals.windows(2).any(|w| w[0] != w[1]), "{totals:?}");

        let mut mean = [0.0; 2];
        let mut p = [0.0; 2];
        for m in &bag.learners {
            m.predict_proba(&[1.0], &mut p);
            normalize(&mut p);
            mean.iter_mut().zip(p).for_each(|(a, b)| *a += b);
        }
        mean.iter_mut().for_each(|a| *a /= 10.0);
        bag.predict_proba(&[1.0], &mut out);
        assert_eq!(out, mean);
        assert_eq!(argmax(&out), 1);
    }
}
