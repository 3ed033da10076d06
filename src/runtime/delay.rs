//! Delayed labels: an event is scored when it arrives and learnt when its label arrives
//! later.
//!
//! **Semantics.** An *event* (an id, a time, its encoded features) is scored on arrival with
//! the model as it is then, and waits in a [`PendingStore`] keyed by its id. When a *label*
//! (an id, a class, a time) arrives, the model learns that event's features with that label.
//! Each event is predicted once and learnt at most once. A label whose event is unknown (never
//! seen, already learnt, expired or evicted) is counted as unmatched and dropped, unless early
//! labels are held ([`PendingLimits::early_label_tolerance`]): then a label whose event has
//! not arrived waits that long for it, and is counted as unmatched if it does not come. An event
//! whose label never comes leaves the store after its time-to-live (in the time column's
//! units), or, oldest first, when the store is full (rows or bytes): counted as expired or
//! evicted, never kept without bound. An event whose id is already pending replaces the
//! earlier one, which is counted as replaced and never learnt. A label carried in the event's
//! own row is test-then-train, as without delay.
//!
//! **Order.** At any time `t`, the labels due at or before `t` are learnt (in the order they
//! arrived) before the event of time `t` is scored, and an event is scored before its own
//! label is learnt, even with a delay of 0 (River's `simulate_qa` orders them the same way).
//!
//! **State.** The store serializes with serde (features stored encoded, `8·d` bytes an event
//! plus a fixed overhead), so that a live model's checkpoint can hold it; replaying the same
//! events and labels in the same order gives the same store, the same predictions and the same
//! model.

use std::collections::{HashMap, VecDeque};
use std::hash::Hash;

use serde::{Deserialize, Serialize};

use crate::core::ClassId;
use crate::learner::Classifier;
use crate::{Error, Result};

/// Bytes an event costs besides its features: its slot, its index entry and allocation.
const OVERHEAD_BYTES: usize = 96;

/// How many events may wait for their labels, and for how long.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PendingLimits {
    /// Events waiting at most (the oldest are evicted beyond).
    pub max_events: usize,
    /// Bytes of waiting events at most (features and overhead; the oldest are evicted
    /// beyond).
    pub max_bytes: usize,
    /// Time an event waits at most, in the time column's units (`None`: until evicted).
    pub ttl: Option<f64>,
    /// Time a label that arrives before its event is held for that event (0: not held, the
    /// label is unmatched at once). Held labels count against `max_events` too.
    #[serde(default)]
    pub early_label_tolerance: f64,
}

impl Default for PendingLimits {
    /// One million events, 1 GiB, no time limit.
    fn default() -> Self {
        PendingLimits {
            max_events: 1_000_000,
            max_bytes: 1 << 30,
            ttl: None,
            early_label_tolerance: 0.0,
        }
    }
}

impl PendingLimits {
    /// Checks the limits.
    pub fn validate(&self) -> Result<()> {
        if self.max_events == 0 {
            return Err(Error::config("pending_max_events", "must be >= 1"));
        }
        if self.max_bytes < OVERHEAD_BYTES {
            return Err(Error::config(
                "pending_max_bytes",
                format!("must be >= {OVERHEAD_BYTES}"),
            ));
        }
        if self.ttl.is_some_and(|t| t.is_nan() || t < 0.0) {
            return Err(Error::config("pending_ttl", "must be >= 0"));
        }
        if !(self.early_label_tolerance >= 0.0 && self.early_label_tolerance.is_finite()) {
            return Err(Error::config("early_label_tolerance", "must be >= 0"));
        }
        Ok(())
    }
}

/// What became of the events and labels.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DelayStats {
    /// Events scored and stored.
    pub events: u64,
    /// Events learnt when their label came.
    pub learnt: u64,
    /// Events that left the store after their time-to-live.
    pub expired: u64,
    /// Events evicted, oldest first, from a full store.
    pub evicted: u64,
    /// Events replaced by a later event of the same id.
    pub replaced: u64,
    /// Labels whose event was not pending (and, if held, never came in time).
    pub unmatched_labels: u64,
    /// Labels that arrived before their event and were learnt when it came.
    #[serde(default)]
    pub early_labels: u64,
    /// Events and labels with a null id (events scored only, labels dropped).
    #[serde(default)]
    pub null_ids: u64,
    /// Events waiting now.
    pub pending: u64,
    /// Most events waiting at once.
    pub peak_pending: u64,
}

/// An event waiting for its label.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingEvent<K> {
    /// Its id.
    pub id: K,
    /// When it arrived.
    pub time: f64,
    /// The class predicted for it when it arrived.
    pub predicted: ClassId,
    /// Its encoded features.
    pub features: Box<[f64]>,
}

/// Events waiting for their labels, bounded by [`PendingLimits`], in arrival order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingStore<K: Eq + Hash> {
    limits: PendingLimits,
    /// Slots in arrival order; `None` where the event has left (learnt or replaced).
    slots: VecDeque<Option<PendingEvent<K>>>,
    /// The arrival number of `slots[0]`.
    first: u64,
    /// Each pending id's arrival number.
    index: HashMap<K, u64>,
    bytes: usize,
    stats: DelayStats,
}

impl<K: Eq + Hash + Clone> PendingStore<K> {
    /// An empty store within `limits`.
    pub fn new(limits: PendingLimits) -> Result<Self> {
        limits.validate()?;
        Ok(PendingStore {
            limits,
            slots: VecDeque::new(),
            first: 0,
            index: HashMap::new(),
            bytes: 0,
            stats: DelayStats::default(),
        })
    }

    /// What became of the events and labels so far.
    pub fn stats(&self) -> DelayStats {
        self.stats
    }

    /// Bytes held by waiting events (features and overhead).
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Stores an event (already scored) that arrived at `time`; events past their
    /// time-to-live at `time`, and the oldest beyond the store's size, leave first.
    pub fn insert(&mut self, id: K, time: f64, predicted: ClassId, features: &[f64]) {
        self.expire(time);
        if let Some(seq) = self.index.remove(&id) {
            self.take(seq);
            self.stats.replaced += 1;
        }
        let seq = self.first + self.slots.len() as u64;
        self.bytes += event_bytes(features.len());
        self.slots.push_back(Some(PendingEvent {
            id: id.clone(),
            time,
            predicted,
            features: features.into(),
        }));
        self.index.insert(id, seq);
        self.stats.events += 1;
        while self.index.len() > self.limits.max_events || self.bytes > self.limits.max_bytes {
            self.evict_oldest();
            self.stats.evicted += 1;
        }
        self.stats.pending = self.index.len() as u64;
        self.stats.peak_pending = self.stats.peak_pending.max(self.stats.pending);
    }

    /// The event a label of `id` arriving at `time` is for, taken out of the store (to be
    /// learnt); `None`, counted as unmatched, if no such event is pending.
    pub fn take_for_label(&mut self, id: &K, time: f64) -> Option<PendingEvent<K>> {
        self.expire(time);
        let event = self.index.remove(id).and_then(|seq| self.take(seq));
        match &event {
            Some(_) => self.stats.learnt += 1,
            None => self.stats.unmatched_labels += 1,
        }
        self.stats.pending = self.index.len() as u64;
        event
    }

    /// Whether event `id` is waiting.
    pub fn contains(&self, id: &K) -> bool {
        self.index.contains_key(id)
    }

    /// Removes the events whose time-to-live has passed at `now`.
    pub fn expire(&mut self, now: f64) {
        let Some(ttl) = self.limits.ttl else {
            return;
        };
        self.drop_vacant_front();
        while let Some(Some(front)) = self.slots.front() {
            if front.time + ttl >= now {
                break;
            }
            self.evict_oldest();
            self.stats.expired += 1;
        }
        self.stats.pending = self.index.len() as u64;
    }

    /// Removes every waiting event (their labels will not come), counting them as expired.
    pub fn expire_all(&mut self) {
        self.stats.expired += self.index.len() as u64;
        self.slots.clear();
        self.index.clear();
        self.bytes = 0;
        self.stats.pending = 0;
    }

    /// Takes the event of arrival number `seq` out of its slot.
    fn take(&mut self, seq: u64) -> Option<PendingEvent<K>> {
        let slot = self.slots.get_mut((seq - self.first) as usize)?;
        let event = slot.take()?;
        self.bytes -= event_bytes(event.features.len());
        self.drop_vacant_front();
        Some(event)
    }

    /// Removes the oldest waiting event.
    fn evict_oldest(&mut self) {
        self.drop_vacant_front();
        if let Some(Some(event)) = self.slots.pop_front() {
            self.first += 1;
            self.index.remove(&event.id);
            self.bytes -= event_bytes(event.features.len());
        }
        self.drop_vacant_front();
    }

    /// Drops the slots at the front whose event has left.
    fn drop_vacant_front(&mut self) {
        while let Some(None) = self.slots.front() {
            self.slots.pop_front();
            self.first += 1;
        }
    }
}

/// A model's delayed learning: [`DelayedLearner::event`] scores a row and keeps it waiting;
/// [`DelayedLearner::label`] learns the row its label is for. The model is lent to each
/// call rather than owned, so that one model can also be scored and saved in between; the
/// replay's label delay, and any pipeline that receives events and labels apart, drive it.
///
/// A label that arrives before its event is held for `early_label_tolerance` (in time
/// units; none by default): if its event arrives in time, the event is scored first, then
/// learnt at once with it; otherwise the label is counted as unmatched.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DelayedLearner<K: Eq + Hash> {
    store: PendingStore<K>,
    /// The importance weight a row is learnt with.
    weight: f64,
    /// Labels held for events not seen yet: the label and when it arrived.
    held: HashMap<K, (ClassId, f64)>,
    /// Held labels in arrival order (entries whose label has left are skipped).
    held_order: VecDeque<(K, f64)>,
}

/// What a label did.
#[derive(Debug, Clone, PartialEq)]
pub enum LabelOutcome<K> {
    /// Its event was learnt; here it is, with the class predicted for it on arrival.
    Learnt(PendingEvent<K>),
    /// Its event has not arrived: the label waits for it.
    Held,
    /// No event waits for it (counted).
    Unmatched,
}

impl<K: Eq + Hash + Clone + std::fmt::Debug> DelayedLearner<K> {
    /// Rows waiting within `limits`, learnt with weight `weight` when their labels come.
    pub fn new(limits: PendingLimits, weight: f64) -> Result<Self> {
        if !(weight > 0.0 && weight.is_finite()) {
            return Err(Error::config("weight", "must be > 0"));
        }
        Ok(DelayedLearner {
            store: PendingStore::new(limits)?,
            weight,
            held: HashMap::new(),
            held_order: VecDeque::new(),
        })
    }

    /// Scores event `id` (features `x`, arrived at `time`) with `model` as it is, writes
    /// its class probabilities to `out`, and returns the predicted class. The event then
    /// waits for its label, or, if its label arrived before it and is held, is learnt at
    /// once with that label, which is returned too.
    pub fn event<M: Classifier + ?Sized>(
        &mut self, model: &mut M, id: K, time: f64, x: &[f64], out: &mut [f64],
    ) -> Result<(ClassId, Option<ClassId>)> {
        let predicted = model.learn_predict(x, None, self.weight, out);
        self.expire_held(time);
        let early = self.held.remove(&id);
        self.store.insert(id.clone(), time, predicted, x);
        let Some((y, _)) = early else {
            return Ok((predicted, None));
        };
        if let LabelOutcome::Learnt(_) = self.label(model, &id, y, time)? {
            self.store.stats.early_labels += 1;
        }
        Ok((predicted, Some(y)))
    }

    /// A label `y` for event `id`, arrived at `time`. If the event waits, `model` learns it
    /// (growing to class `y` first if it has not met it). If not, the label is held for the
    /// event when early labels are, else counted as unmatched.
    pub fn label<M: Classifier + ?Sized>(
        &mut self, model: &mut M, id: &K, y: ClassId, time: f64,
    ) -> Result<LabelOutcome<K>> {
        self.store.expire(time);
        self.expire_held(time);
        let tolerance = self.store.limits.early_label_tolerance;
        if !self.store.contains(id) && tolerance > 0.0 {
            if self.held.insert(id.clone(), (y, time)).is_some() {
                // A second label for the same unseen event replaces the first.
                self.store.stats.unmatched_labels += 1;
            }
            self.held_order.push_back((id.clone(), time));
            while self.held.len() + self.store.index.len() > self.store.limits.max_events {
                self.drop_oldest_held();
            }
            return Ok(LabelOutcome::Held);
        }
        let Some(event) = self.store.take_for_label(id, time) else {
            return Ok(LabelOutcome::Unmatched);
        };
        while model.n_classes() <= y {
            model.add_class().map_err(|e| {
                Error::config(
                    "label",
                    format!("the label of event {id:?} is a class the model cannot learn: {e}"),
                )
            })?;
        }
        model.learn(&event.features, y, self.weight);
        Ok(LabelOutcome::Learnt(event))
    }

    /// Removes the events whose time-to-live has passed at `now`, and the held labels whose
    /// tolerance has.
    pub fn expire(&mut self, now: f64) {
        self.store.expire(now);
        self.expire_held(now);
    }

    /// Removes every waiting event (their labels will not come) and every held label
    /// (counted as unmatched).
    pub fn expire_all(&mut self) {
        self.store.expire_all();
        self.store.stats.unmatched_labels += self.held.len() as u64;
        self.held.clear();
        self.held_order.clear();
    }

    /// What became of the events and labels so far.
    pub fn stats(&self) -> DelayStats {
        self.store.stats()
    }

    /// Counts an event or label whose id is null: scored (an event) or dropped (a label),
    /// never stored.
    pub fn count_null_id(&mut self) {
        self.store.stats.null_ids += 1;
    }

    fn expire_held(&mut self, now: f64) {
        let tolerance = self.store.limits.early_label_tolerance;
        while let Some((_, at)) = self.held_order.front() {
            if at + tolerance >= now {
                break;
            }
            self.drop_oldest_held();
        }
    }

    /// Drops the oldest held label (counted as unmatched), skipping entries whose label
    /// has left or been replaced.
    fn drop_oldest_held(&mut self) {
        while let Some((id, at)) = self.held_order.pop_front() {
            if self.held.get(&id).is_some_and(|&(_, t)| t == at) {
                self.held.remove(&id);
                self.store.stats.unmatched_labels += 1;
                return;
            }
        }
    }
}

/// The columns that tie a label to its event: the id both carry and the time column each
/// has (integer, float or timestamp; a timestamp counts in its own unit).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DelayColumns {
    /// The event id, in the events and in the labels.
    pub id: String,
    /// The time, in the events and in the labels.
    pub time: String,
}

/// The delayed learning of an operator, saved with it: the columns and the pending events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DelayedState {
    /// The id and time columns.
    pub columns: DelayColumns,
    /// The events waiting for their labels, and the labels held for their events.
    pub learner: DelayedLearner<String>,
    /// The latest event time taken, and the latest label time (each input's times must not
    /// decrease).
    #[serde(default)]
    pub last_times: (Option<f64>, Option<f64>),
}

impl DelayedState {
    /// Bytes its waiting events and held labels occupy, as its store counts them.
    pub fn bytes(&self) -> usize {
        let held = self.learner.held.len() * std::mem::size_of::<(String, (ClassId, f64))>() * 2;
        self.learner.store.bytes() + held
    }

    /// A fresh state: nothing waits.
    pub fn new(columns: DelayColumns, limits: PendingLimits) -> Result<Self> {
        Ok(DelayedState {
            columns,
            learner: DelayedLearner::new(limits, 1.0)?,
            last_times: (None, None),
        })
    }

    /// What became of the events and labels so far.
    pub fn stats(&self) -> DelayStats {
        self.learner.stats()
    }
}

fn event_bytes(d: usize) -> usize {
    d * std::mem::size_of::<f64>() + OVERHEAD_BYTES
}

/// When each row's label arrives in a replay of a logged stream, in rows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LabelDelay {
    /// Every label arrives this many rows after its event (0: test-then-train).
    Rows(u64),
    /// Each row's label arrives after the delay (in rows) given for it, NaN for never (4
    /// bytes a row: delays are exact up to 2^24 rows).
    PerRow(Vec<f32>),
}

impl LabelDelay {
    /// The time (a row position) the label of the event at `position` (input row `row`)
    /// arrives, if it does: a label is learnt before the event of that time is scored, and
    /// never before the next event (a delay of 0 is test-then-train).
    pub fn arrival(&self, position: usize, row: usize) -> Option<f64> {
        let delay = match self {
            LabelDelay::Rows(n) => Some(*n as f64),
            LabelDelay::PerRow(delays) => delays.get(row).map(|&d| f64::from(d)),
        }?;
        (delay.is_finite() && delay >= 0.0).then(|| position as f64 + delay.max(1.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(max_events: usize, ttl: Option<f64>) -> PendingStore<u64> {
        PendingStore::new(PendingLimits {
            max_events,
            max_bytes: 1 << 20,
            ttl,
            early_label_tolerance: 0.0,
        })
        .unwrap()
    }

    #[test]
    fn a_label_takes_its_event_once_and_unknown_labels_are_counted() {
        let mut s = store(10, None);
        s.insert(7, 0.0, 2, &[1.0, 2.0]);
        s.insert(8, 1.0, 0, &[3.0, 4.0]);
        let e = s.take_for_label(&7, 2.0).unwrap();
        assert_eq!(
            (e.id, e.predicted, &e.features[..]),
            (7, 2, &[1.0, 2.0][..])
        );
        assert!(s.take_for_label(&7, 3.0).is_none(), "learnt once");
        assert!(s.take_for_label(&99, 3.0).is_none(), "never seen");
        let st = s.stats();
        assert_eq!(
            (st.events, st.learnt, st.unmatched_labels, st.pending),
            (2, 1, 2, 1)
        );
        assert_eq!(s.bytes(), event_bytes(2));
    }

    #[test]
    fn events_expire_after_their_ttl_and_the_oldest_leave_a_full_store() {
        let mut s = store(3, Some(10.0));
        for id in 0..5u64 {
            s.insert(id, id as f64, 0, &[0.0]);
        }
        // Five events in a store of three: the two oldest were evicted.
        assert_eq!((s.stats().evicted, s.stats().pending), (2, 3));
        assert!(s.take_for_label(&0, 5.0).is_none());
        // At time 12.5, the event of time 2 has waited longer than 10; the event of time 3
        // has waited exactly 10 at time 13, and still waits.
        s.expire(12.5);
        assert_eq!((s.stats().expired, s.stats().pending), (1, 2));
        assert!(s.take_for_label(&4, 13.0).is_some());
        assert!(s.take_for_label(&3, 13.0).is_some());
        assert_eq!(s.stats().peak_pending, 3);
    }

    #[test]
    fn a_repeated_id_replaces_the_waiting_event() {
        let mut s = store(10, None);
        s.insert(1, 0.0, 0, &[1.0]);
        s.insert(1, 1.0, 1, &[2.0]);
        let e = s.take_for_label(&1, 2.0).unwrap();
        assert_eq!((e.predicted, e.features[0]), (1, 2.0));
        assert_eq!((s.stats().replaced, s.stats().pending), (1, 0));
    }

    #[test]
    fn the_store_stays_bounded_over_a_long_stream_with_lost_labels() {
        // A tenth of the labels never come; the rest come 50 events later; TTL 100.
        let mut s = store(1_000_000, Some(100.0));
        for t in 0..200_000u64 {
            s.insert(t, t as f64, 0, &[0.0; 4]);
            if t >= 50 && (t - 50) % 10 != 0 {
                s.take_for_label(&(t - 50), t as f64);
            }
            assert!(s.stats().pending <= 150, "{:?}", s.stats());
        }
        let st = s.stats();
        assert_eq!(st.learnt + st.expired + st.pending, st.events, "{st:?}");
        assert!(s.slots.len() <= 160, "{} slots", s.slots.len());
    }

    #[test]
    fn a_delay_of_zero_is_test_then_train() {
        assert_eq!(LabelDelay::Rows(0).arrival(5, 5), Some(6.0));
        assert_eq!(LabelDelay::Rows(1).arrival(5, 5), Some(6.0));
        assert_eq!(LabelDelay::Rows(10).arrival(5, 5), Some(15.0));
        let per_row = LabelDelay::PerRow(vec![3.0, f32::NAN]);
        assert_eq!(per_row.arrival(0, 0), Some(3.0));
        assert_eq!(per_row.arrival(1, 1), None);
    }

    #[test]
    fn a_delayed_learner_learns_each_event_once_whatever_the_order_of_labels() {
        use crate::learner::Config;
        use crate::weak::NaiveBayesConfig;
        let data = crate::synth::mixed(300, 0.0, 0.0, 2);
        let k = data.spec().n_classes();
        let config = NaiveBayesConfig::default();
        let mut delayed = config.build(data.spec(), 1).unwrap();
        let mut learner = DelayedLearner::<String>::new(PendingLimits::default(), 1.0).unwrap();
        let mut p = vec![0.0; k];
        let mut predicted = Vec::new();
        for i in 0..data.len() {
            let x = data.row(i);
            let (class, early) = learner
                .event(&mut delayed, format!("e{i}"), i as f64, x, &mut p)
                .unwrap();
            assert_eq!(early, None);
            predicted.push(class);
        }
        // Labels in reverse order: each finds its event, with the class predicted for it.
        for i in (0..data.len()).rev() {
            let y = data.label(i).unwrap();
            let outcome = learner.label(&mut delayed, &format!("e{i}"), y, 400.0);
            let LabelOutcome::Learnt(event) = outcome.unwrap() else {
                panic!("event {i} waits");
            };
            assert_eq!(event.predicted, predicted[i]);
        }
        let y0 = data.label(0).unwrap();
        let again = learner.label(&mut delayed, &"e0".to_string(), y0, 401.0);
        assert_eq!(again.unwrap(), LabelOutcome::Unmatched, "learnt once");
        let st = learner.stats();
        assert_eq!((st.learnt, st.unmatched_labels, st.pending), (300, 1, 0));
        // Naive Bayes counts: it ends as a model that learnt every row directly.
        let mut direct = config.build(data.spec(), 1).unwrap();
        for i in 0..data.len() {
            direct.learn(data.row(i), data.label(i).unwrap(), 1.0);
        }
        for i in 0..data.len() {
            assert_eq!(delayed.predict(data.row(i)), direct.predict(data.row(i)));
        }
    }

    /// A label before its event is held for the tolerance: the event, when it comes in
    /// time, is scored first and then learnt with it; a label held too long, or one held
    /// when the store is full of held labels, is counted as unmatched.
    #[test]
    fn labels_before_their_event_are_held_for_the_tolerance() {
        use crate::learner::Config;
        use crate::weak::NaiveBayesConfig;
        let data = crate::synth::mixed(10, 0.0, 0.0, 3);
        let mut model = NaiveBayesConfig::default().build(data.spec(), 1).unwrap();
        let limits = PendingLimits {
            max_events: 3,
            early_label_tolerance: 5.0,
            ..PendingLimits::default()
        };
        let mut learner = DelayedLearner::<u64>::new(limits, 1.0).unwrap();
        let mut p = vec![0.0; data.spec().n_classes()];
        let y = |i: usize| data.label(i).unwrap();
        // Label of event 1 at time 0; the event at time 3: learnt at once.
        assert_eq!(
            learner.label(&mut model, &1, y(1), 0.0).unwrap(),
            LabelOutcome::Held
        );
        let untrained = model.predict(data.row(1));
        let (predicted, early) = learner
            .event(&mut model, 1, 3.0, data.row(1), &mut p)
            .unwrap();
        assert_eq!((predicted, early), (untrained, Some(y(1))));
        // Label of event 2 at time 4; the event at time 10, past the tolerance.
        learner.label(&mut model, &2, y(2), 4.0).unwrap();
        let (_, early) = learner
            .event(&mut model, 2, 10.0, data.row(2), &mut p)
            .unwrap();
        assert_eq!(early, None);
        let st = learner.stats();
        assert_eq!(
            (st.early_labels, st.learnt, st.unmatched_labels),
            (1, 1, 1),
            "{st:?}"
        );
        // Four labels held in a store of three (event 2 still waits): the oldest two go.
        for id in 5..9 {
            learner.label(&mut model, &id, y(0), 11.0).unwrap();
        }
        assert_eq!(learner.stats().unmatched_labels, 3);
        learner.expire_all();
        let st = learner.stats();
        assert_eq!(
            (st.unmatched_labels, st.expired, st.pending),
            (5, 1, 0),
            "{st:?}"
        );
    }
}
