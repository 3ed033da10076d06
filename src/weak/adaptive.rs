//! A learner that replaces itself when its error drifts: the member rule of the adaptive
//! random forest (Gomes et al., Machine Learning 2017, Algorithm 1, lines 10–16), for any
//! weak learner under any booster.
//!
//! A [`Watch`] (a detector of [`crate::drift`] and its warning companion) watches the
//! learner's 0/1 error on each row it learns, measured before it learns it (test-then-train,
//! the booster's own prediction of the member reused). On a **warning** a *background*
//! learner, fresh as the member was built, starts learning every row the member learns (a
//! later warning starts it again, as ARF does: the newer start fits the newer concept). On a
//! **drift** one starts if none had, and the swap is due.
//!
//! **A due swap waits for the background learner to be better**, as the Hoeffding adaptive
//! tree swaps an alternate subtree in only once it is more accurate (Bifet & Gavaldà, IDA
//! 2009), and a background learner that is worse is dropped. Better and worse are decided by
//! a sign test on the rows since the background learner started where exactly one of the two
//! was wrong: of `n` such rows, `b` were the member's errors alone and `a` the background
//! learner's alone; under "equally good" `b − a` is a sum of `n` signs, and Hoeffding's bound
//! puts `b − a > √(2n·ln(1/δ))` at probability below `δ` = [`Adaptive::SWAP_CONFIDENCE`]
//! (the same bound for `a − b` drops the background learner). ARF swaps at once, without a
//! test. The test is why not: a detector also fires where a stationary learner's error rises
//! for a while (fresh leaves after a split), and a grown tree swapped for a young one loses
//! what it took thousands of rows to learn (measured: one tree on shuffled pendigits fell
//! from 0.907 to 0.829 on the final 20% by two such swaps). After a real change the member
//! is wrong where the background learner is right on most rows, and the test passes within
//! a few dozen rows of disagreement.
//!
//! Why the unweighted error of the rows it learns: the detectors' bounds hold for values in
//! `[0, 1]` drawn from one distribution while nothing changes. A row's weight `w` (a
//! booster's, up to hundreds) would make `w·error` unbounded; the 0/1 error of the member's
//! own prediction on the rows its booster hands it (`w > 0`) is what rises when the concept
//! under the member changes. A row of weight 0 is not learnt and not counted (the contract of
//! [`Classifier::learn`]: it changes nothing).
//!
//! **Asleep until the lead adapts.** A learner built `asleep` passes every row to its member
//! and watches nothing (it predicts and learns exactly as the member alone) until its
//! booster wakes it ([`Classifier::wake`]): the response a booster's adaptive lead wakes
//! when it swaps a subtree (`crate::boost::Turn`). The wake is a drift for the member: a
//! background learner starts and is swapped in once the sign test finds it better. Why
//! not only start the detector: the lead swaps after the change, so a detector started
//! then sees the member's error at its worst and falling as it relearns, and ADWIN calls
//! only a rise a drift (a version without the challenger replaced no member of Oza or OzaBag
//! on 12,000 rows of Agrawal's changes).
//! From the wake on, its detector watches and the rule above applies.
//!
//! What the booster keeps about the member (its α, its share of Hedge's weights) is the
//! booster's; each booster says in its module what it does after its members are replaced
//! (`crate::boost::hedge` watches the ensemble's own error and restarts its experts).
//!
//! Restart, cancel and crash: the member, its background learner, the fresh learner it starts
//! from and the detector are all part of the model's state: a checkpoint resumes them bit for
//! bit, and a job restarted from it replaces members at the same rows. The replacement log is
//! bounded ([`Adaptive::LOGGED`] rows, the oldest dropped); the counts are not.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::watched::Watching;
use super::{WeakLearner, WeakLearnerConfig};
use crate::Result;
use crate::core::{ClassId, Rng, StreamSpec};
use crate::drift::{Change, DriftConfig, Watch};
use crate::learner::{Classifier, Config, TwoCalls, learnable};

/// A weak learner replaced on a drift of its error; see the module docs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AdaptiveConfig {
    /// The detector on the learner's error.
    pub drift: DriftConfig,
    /// The learner.
    pub inner: Box<WeakLearnerConfig>,
    /// Whether it starts asleep, watching nothing until its booster wakes it (see the module
    /// docs); `false` in a config written without it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub asleep: bool,
}

impl fmt::Display for AdaptiveConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}, replaced on {}", self.inner, self.drift)?;
        match self.asleep {
            true => write!(f, " once the lead adapts"),
            false => Ok(()),
        }
    }
}

impl Config for AdaptiveConfig {
    type Model = Adaptive;

    fn validate(&self) -> Result<()> {
        self.drift.validate()?;
        self.inner.validate()
    }

    fn with_margin_output(&self) -> Self {
        AdaptiveConfig {
            drift: self.drift.clone(),
            inner: Box::new(self.inner.with_margin_output()),
            asleep: self.asleep,
        }
    }

    fn build_with_rng(&self, spec: &StreamSpec, rng: &mut Rng) -> Result<Adaptive> {
        self.validate()?;
        let learner = self.inner.build_with_rng(spec, rng)?;
        Ok(Adaptive {
            fresh: Box::new(learner.clone()),
            member: Box::new(learner),
            background: None,
            watch: Watch::new(&self.drift)?,
            rows: 0,
            asleep: self.asleep,
            woken: false,
            due: false,
            trial: Trial::default(),
            replaced: 0,
            replaced_at: Vec::new(),
            scratch: Vec::new(),
            predicted: None,
        })
    }
}

/// A weak learner that replaces itself when its error drifts; see the module docs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Adaptive {
    /// The learner in place (not `learner`, the tag of a weak learner's serde form).
    member: Box<WeakLearner>,
    /// Started on a warning, learning beside the member until a drift or the next warning.
    background: Option<Box<WeakLearner>>,
    /// The learner as it was built (grown to the classes added since): what a background
    /// learner starts from.
    fresh: Box<WeakLearner>,
    watch: Watch,
    /// Rows learnt (with positive weight): the clock of the replacement log.
    rows: u64,
    /// Whether it still sleeps, passing rows to the member and watching nothing (see the
    /// module docs).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    asleep: bool,
    /// Whether it slept and was woken (its challenger then started: counted as a warning).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    woken: bool,
    /// Whether a drift has made a swap due (once the background learner is better).
    #[serde(default)]
    due: bool,
    /// The rows where only one of the member and the background learner was wrong, since
    /// the background started.
    #[serde(default)]
    trial: Trial,
    /// Replacements so far.
    replaced: u64,
    /// The row (of [`Adaptive::rows`]) of each of the last [`Adaptive::LOGGED`] replacements.
    replaced_at: Vec<u64>,
    /// The member's probabilities of a row learnt through [`Classifier::learn`], then the
    /// background learner's of each row.
    #[serde(skip)]
    scratch: Vec<f64>,
    /// Between the two calls of [`TwoCalls`]: the member's prediction of the row.
    #[serde(skip)]
    predicted: Option<ClassId>,
}

/// The rows since the background learner started where only one of the two was wrong.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
struct Trial {
    /// Rows where the member alone was wrong.
    member_alone: u64,
    /// Rows where the background learner alone was wrong.
    background_alone: u64,
}

impl Trial {
    /// Which of the two is better by the sign test of the module docs at confidence `δ`:
    /// `Some(true)` the background learner, `Some(false)` the member, `None` not yet known.
    fn verdict(&self, delta: f64) -> Option<bool> {
        let (b, a) = (self.member_alone as f64, self.background_alone as f64);
        let bound = (2.0 * (a + b) * (1.0 / delta).ln()).sqrt();
        if b - a > bound {
            Some(true)
        } else if a - b > bound {
            Some(false)
        } else {
            None
        }
    }
}

impl Adaptive {
    /// Replacements kept in the log.
    pub const LOGGED: usize = 64;

    /// The probability `δ` that the sign test swaps in (or drops) a background learner that
    /// is as good as the member.
    pub const SWAP_CONFIDENCE: f64 = 0.001;

    /// The learner in place now.
    pub fn inner(&self) -> &WeakLearner {
        &self.member
    }

    /// The background learner, while one learns.
    pub fn background(&self) -> Option<&WeakLearner> {
        self.background.as_deref()
    }

    /// The learner in place and the background learner, to change in place.
    pub(crate) fn parts_mut(&mut self) -> (&mut WeakLearner, Option<&mut WeakLearner>) {
        (&mut self.member, self.background.as_deref_mut())
    }

    /// Times the learner was replaced.
    pub fn replacements(&self) -> u64 {
        self.replaced
    }

    /// Whether it still sleeps until its booster's lead adapts (see the module docs).
    pub fn asleep(&self) -> bool {
        self.asleep
    }

    /// Background learners started on a warning of its detector, or at its wake.
    pub fn warnings(&self) -> u64 {
        self.watch.warnings + u64::from(self.woken)
    }

    /// The rows (counted over the rows this learner learnt) of its last replacements, oldest
    /// first.
    pub fn replaced_at(&self) -> &[u64] {
        &self.replaced_at
    }

    /// A background learner starts, fresh, from the next row.
    fn start_background(&mut self) {
        self.background = Some(self.fresh.clone());
        self.trial = Trial::default();
    }
}

impl Classifier for Adaptive {
    fn n_classes(&self) -> usize {
        self.member.n_classes()
    }

    fn add_class(&mut self) -> Result<()> {
        self.member.add_class()?;
        self.fresh.add_class()?;
        if let Some(background) = &mut self.background {
            background.add_class()?;
        }
        Ok(())
    }

    fn learn(&mut self, x: &[f64], y: ClassId, weight: f64) {
        self.learn_watched(x, y, weight);
    }

    fn predict_proba(&self, x: &[f64], out: &mut [f64]) {
        self.member.predict_proba(x, out);
    }

    /// The member's own test-then-train pass; its prediction is the error the watch sees.
    fn learn_predict(
        &mut self, x: &[f64], y: Option<ClassId>, weight: f64, out: &mut [f64],
    ) -> ClassId {
        self.learn_predict_watched(x, y, weight, out)
    }

    fn two_calls(&mut self) -> Option<&mut dyn TwoCalls> {
        self.member.two_calls()?;
        Some(self)
    }

    /// Once its member has been replaced.
    fn adapted(&self) -> bool {
        self.replaced > 0
    }

    /// The lead's swap is a drift seen for the member too: a background learner starts and
    /// the swap is due, decided by the sign test as after a drift of its own (see the
    /// module docs).
    fn wake(&mut self) {
        if std::mem::take(&mut self.asleep) {
            self.woken = true;
            self.due = true;
            self.start_background();
        }
    }
}

/// The member is the learner watched.
impl Watching for Adaptive {
    type Inner = WeakLearner;

    fn watched(&mut self) -> &mut WeakLearner {
        &mut self.member
    }

    fn scratch(&mut self) -> &mut Vec<f64> {
        &mut self.scratch
    }

    fn predicted(&mut self) -> &mut Option<ClassId> {
        &mut self.predicted
    }

    /// The member predicted `predicted` for a row of label `y` it has just learnt with
    /// weight `weight`: unless the row is not learnable (weight 0: nothing changes), the
    /// background learner learns it too, and the error goes to the watch, which may start a
    /// background learner or swap it in.
    fn learnt(&mut self, x: &[f64], y: ClassId, weight: f64, predicted: ClassId) {
        let Some((y, weight)) = learnable(Some(y), weight, self.n_classes()) else {
            return;
        };
        self.rows += 1;
        if self.asleep {
            return;
        }
        let wrong = predicted != y;
        if let Some(background) = &mut self.background {
            // Its own test-then-train error, as the member's.
            let mut out = std::mem::take(&mut self.scratch);
            out.resize(background.n_classes(), 0.0);
            let its = background.learn_predict(x, Some(y), weight, &mut out);
            self.scratch = out;
            match (wrong, its != y) {
                (true, false) => self.trial.member_alone += 1,
                (false, true) => self.trial.background_alone += 1,
                _ => {}
            }
        }
        match self.watch.update(f64::from(u8::from(wrong))) {
            Some(Change::Warning) if !self.due => self.start_background(),
            Some(Change::Drift) => {
                self.due = true;
                if self.background.is_none() {
                    self.start_background();
                }
            }
            _ => {}
        }
        if self.background.is_none() {
            return;
        }
        match self.trial.verdict(Self::SWAP_CONFIDENCE) {
            Some(true) if self.due => {
                self.member = self.background.take().expect("checked");
                self.replaced += 1;
                if self.replaced_at.len() == Self::LOGGED {
                    self.replaced_at.remove(0);
                }
                self.replaced_at.push(self.rows);
            }
            // The member is the better: the drift was its own, not the stream's.
            Some(false) => self.background = None,
            _ => return,
        }
        self.due = false;
        self.trial = Trial::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drift::AdwinConfig;
    use crate::weak::HoeffdingTreeConfig;

    fn adaptive() -> Adaptive {
        let config = AdaptiveConfig {
            drift: DriftConfig::Adwin(AdwinConfig::default()),
            inner: Box::new(HoeffdingTreeConfig::moa().into()),
            asleep: false,
        };
        config
            .build(&StreamSpec::numeric(2, 2).unwrap(), 3)
            .unwrap()
    }

    /// Rows of two features whose class is `x₀ > 0.5`, or its opposite after `flip`.
    fn rows(n: usize, flip: usize, seed: u64) -> Vec<([f64; 2], ClassId)> {
        let mut rng = Rng::new(seed);
        (0..n)
            .map(|t| {
                let x = [rng.uniform(), rng.uniform()];
                let y = usize::from(x[0] > 0.5) ^ usize::from(t >= flip);
                (x, y)
            })
            .collect()
    }

    #[test]
    fn a_switched_concept_replaces_the_learner_and_a_stationary_one_does_not() {
        let mut switched = adaptive();
        let mut out = [0.0; 2];
        for (x, y) in rows(20_000, 10_000, 5) {
            switched.learn_predict(&x, Some(y), 1.0, &mut out);
        }
        assert!(switched.replacements() >= 1, "the switch went unseen");
        let at = switched.replaced_at()[0];
        assert!((10_000..11_000).contains(&at), "replaced at row {at}");
        // The replacement learnt the new concept.
        let late: Vec<_> = rows(1_000, 0, 9);
        let right = late
            .iter()
            .filter(|(x, y)| switched.predict(x) == *y)
            .count();
        assert!(right > 950, "{right} of 1000 after the switch");

        let mut stationary = adaptive();
        for (x, y) in rows(20_000, usize::MAX, 5) {
            stationary.learn_predict(&x, Some(y), 1.0, &mut out);
        }
        assert_eq!(stationary.replacements(), 0);
    }

    #[test]
    fn the_two_calls_replace_as_one_does_and_a_round_trip_goes_on_bit_for_bit() {
        let (mut one, mut two) = (adaptive(), adaptive());
        let data = rows(16_000, 8_000, 7);
        let (mut a, mut b) = ([0.0; 2], [0.0; 2]);
        for (x, y) in &data[..12_000] {
            one.learn_predict(x, Some(*y), 1.0, &mut a);
            let calls = two.two_calls().unwrap();
            calls.predict_to_learn(x, &mut b);
            calls.learn_predicted(x, *y, 1.0);
            assert_eq!(a, b);
        }
        assert!(one.replacements() >= 1);
        assert_eq!(one.replaced_at(), two.replaced_at());
        let json = serde_json::to_string(&one).unwrap();
        let mut back: Adaptive = serde_json::from_str(&json).unwrap();
        for (x, y) in &data[12_000..] {
            let p = one.learn_predict(x, Some(*y), 1.0, &mut a);
            assert_eq!(back.learn_predict(x, Some(*y), 1.0, &mut b), p);
            assert_eq!(a, b);
        }
        assert_eq!(
            serde_json::to_string(&back).unwrap(),
            serde_json::to_string(&one).unwrap()
        );
    }
}
