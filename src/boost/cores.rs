//! One model on the cores of rayon's pool: what decides it ([`Pace`]) and the hand-off of the
//! generator between the two stages of a pipelined booster ([`RngHandoff`], [`Deferred`]).
//!
//! Two ways of spreading one model's row over threads, each exact (the outputs and the model
//! are the same byte for byte whatever the threads):
//! * OvA's per-class boosters are independent on a row: they run side by side as tasks
//!   (`multiclass::ova`).
//! * Adaboost.OLM's learner `i` needs only the votes of learners `< i` on the same row, so
//!   learners `..m` can take row `t + 1` while learners `m..` take row `t`
//!   (`multiclass::ada_olm`). Its random tie-breaks are what ties the stages: in one thread
//!   they are drawn from the model's one generator row by row, learner by learner, the
//!   second stage's draws and expert sample of row `t` before the first stage's of row
//!   `t + 1`. So the first stage takes the generator from the second ([`RngHandoff`]) at the
//!   first tie of a row that needs it at once (a learner's vote, which the next learners'
//!   weights depend on), waiting for the second stage to finish the row before. A tie among
//!   experts' predictions is put off to the second stage, which draws it first. A row
//!   without a vote tie in the first stage costs no wait. The second stage goes on from the
//!   generator the first stage hands it with the row, or from its own.
//!
//! Both only run on a thread of rayon's pool with more than one thread (`streamboost replay`
//! and `run` score on such a pool): a query engine's threads, already one per core, keep
//! their models to themselves, as more threads would only share the same cores. Whether a
//! row is worth it is timed on one thread now and then ([`Pace`]); a pipeline is kept only
//! while its rows go faster than that ([`Pace::judge`]), since its waits on ties can eat its
//! gain. Only speed depends on these rules, never a result.
//!
//! Restart, cancel and crash: nothing here outlives a call. A pipeline's threads end with
//! the rows it was given, so a checkpoint taken between calls holds the whole model;
//! [`Pace`] is not saved and starts again from a timing.

use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::core::math::{TieBreak, argmax, argmax_tie, pick_tied, tied_at_top};
use crate::core::{Rng, TieDraw};

/// How long a model's row takes on one thread, timed now and then: a row costing more than
/// a threshold is spread over rayon's threads, where a hand-off costs a few microseconds.
#[derive(Debug, Clone, Default)]
pub(crate) struct Pace {
    pub(crate) rows: u64,
    pub(crate) split: bool,
    /// The one-thread time of a row when last timed.
    pub(crate) per_row: Duration,
}

impl Pace {
    /// Rows between two timings (the first row is timed).
    pub(crate) const EVERY: u64 = 1024;

    /// Runs `row(split)`, timing it on one thread when it is time to: `split` is whether
    /// the last timed row took more than `above`, on a thread of a pool of several.
    pub(crate) fn run<T>(&mut self, above: Duration, row: impl FnOnce(bool) -> T) -> T {
        let timed = self.timing_due();
        self.rows += 1;
        if !timed {
            return row(self.split);
        }
        let start = Instant::now();
        let out = row(false);
        self.timed(above, start.elapsed());
        out
    }

    /// Runs `rows` rows on one thread (`stretch`), timed: a stretch gives a steadier time
    /// than one row, whose cost varies with the split attempts it meets.
    pub(crate) fn time_rows(&mut self, above: Duration, rows: usize, stretch: impl FnOnce()) {
        let start = Instant::now();
        stretch();
        self.rows += rows as u64;
        self.timed(above, start.elapsed() / rows.max(1) as u32);
    }

    /// A row took `per_row` on one thread.
    fn timed(&mut self, above: Duration, per_row: Duration) {
        self.per_row = per_row;
        self.split = per_row > above
            && rayon::current_thread_index().is_some()
            && rayon::current_num_threads() > 1;
    }

    /// `rows` rows took `elapsed` spread over threads: they go on being spread only if that
    /// was faster than one thread at the last timing (until the next timing tries again).
    pub(crate) fn judge(&mut self, rows: usize, elapsed: Duration) {
        self.rows += rows as u64;
        self.split &= self
            .per_row
            .checked_mul(rows as u32)
            .is_none_or(|one_thread| elapsed < one_thread);
    }

    /// Whether the next row is timed.
    pub(crate) fn timing_due(&self) -> bool {
        self.rows.is_multiple_of(Self::EVERY)
    }

    /// Rows before the next timed row (at least 1 when one is not due).
    pub(crate) fn untimed_rows(&self) -> u64 {
        Self::EVERY - self.rows % Self::EVERY
    }

    /// Counts `rows` rows run without timing.
    pub(crate) fn count(&mut self, rows: u64) {
        self.rows += rows;
    }
}

/// The generator as the second stage of a pipeline leaves it after each row, for the first
/// stage's next tie: `(rows done, generator after them)`, or `None` once the second stage
/// has stopped.
pub(crate) struct RngHandoff {
    state: Mutex<Option<(usize, Rng)>>,
    changed: Condvar,
}

impl RngHandoff {
    /// Before the first row: the generator as the model has it.
    pub(crate) fn new(rng: Rng) -> Self {
        RngHandoff {
            state: Mutex::new(Some((0, rng))),
            changed: Condvar::new(),
        }
    }

    /// The second stage has done `rows` rows and left the generator at `rng`.
    pub(crate) fn publish(&self, rows: usize, rng: &Rng) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = state.as_mut() {
            s.0 = rows;
            s.1.clone_from(rng);
        }
        self.changed.notify_all();
    }

    /// The second stage stops (at the end, or unwinding): a waiting first stage wakes.
    pub(crate) fn close(&self) {
        *self.state.lock().unwrap_or_else(|e| e.into_inner()) = None;
        self.changed.notify_all();
    }

    /// The generator after the second stage's first `rows` rows, waiting for them; `None`
    /// if the second stage stopped before.
    pub(crate) fn after(&self, rows: usize) -> Option<Rng> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            match state.as_ref() {
                None => return None,
                Some((done, rng)) if *done == rows => return Some(rng.clone()),
                Some(_) => state = self.changed.wait(state).unwrap_or_else(|e| e.into_inner()),
            }
        }
    }
}

/// Closes a [`RngHandoff`] when dropped, so that a second stage that panics never leaves the
/// first waiting.
pub(crate) struct Closes<'a>(pub(crate) &'a RngHandoff);

impl Drop for Closes<'_> {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// The tie draws of the first stage of a pipeline on one row: the generator is fetched from
/// the second stage ([`RngHandoff::after`]) on the first tie that needs it now. A tie among
/// experts' predictions needs it only for the expert choice, which the second stage makes:
/// until something else needs the generator it is put off, and the second stage makes its
/// draws first, in the order one thread would have.
pub(crate) struct Deferred<F> {
    rng: Option<Rng>,
    fetch: F,
    /// Experts whose tie is put off: `(expert, tied classes)`, in order.
    put_off: Vec<(usize, Vec<usize>)>,
    /// Experts whose put-off tie was drawn when the generator came: `(expert, class)`.
    settled: Vec<(usize, usize)>,
}

/// What a row of the first stage leaves to the second about its ties.
pub(crate) struct Ties {
    /// The generator after the first stage's draws, if it made any.
    pub(crate) rng: Option<Rng>,
    /// Experts' ties still to draw, in order, before the second stage's own draws.
    pub(crate) put_off: Vec<(usize, Vec<usize>)>,
}

impl Ties {
    /// The second stage takes the row's ties over: its generator becomes the first stage's
    /// if that one drew, and the put-off experts are drawn into `experts`.
    pub(crate) fn settle(self, rng: &mut Rng, experts: &mut [usize]) {
        if let Some(drawn) = self.rng {
            *rng = drawn;
        }
        for (i, tied) in &self.put_off {
            experts[*i] = pick_tied(tied, rng);
        }
    }
}

impl<F: FnMut() -> Rng> Deferred<F> {
    pub(crate) fn new(fetch: F) -> Self {
        Deferred {
            rng: None,
            fetch,
            put_off: Vec::new(),
            settled: Vec::new(),
        }
    }

    /// The generator, fetched (and the put-off ties drawn) on first use.
    fn generator(&mut self) -> &mut Rng {
        let Deferred {
            rng,
            fetch,
            put_off,
            settled,
        } = self;
        rng.get_or_insert_with(|| {
            let mut rng = fetch();
            settled.extend(
                put_off
                    .drain(..)
                    .map(|(i, tied)| (i, pick_tied(&tied, &mut rng))),
            );
            rng
        })
    }

    /// After the row: the experts drawn meanwhile go to `experts`, the rest to the second
    /// stage.
    pub(crate) fn finish(self, experts: &mut [usize]) -> Ties {
        for (i, class) in self.settled {
            experts[i] = class;
        }
        Ties {
            rng: self.rng,
            put_off: self.put_off,
        }
    }
}

impl<F: FnMut() -> Rng> TieDraw for Deferred<F> {
    fn below(&mut self, n: usize) -> usize {
        self.generator().below(n)
    }

    fn expert(&mut self, v: &[f64], tie: TieBreak, i: usize) -> Option<usize> {
        if tie == TieBreak::Lowest || self.rng.is_some() {
            return Some(argmax_tie(v, tie, self));
        }
        match tied_at_top(v) {
            None => Some(argmax(v)),
            Some(tied) => {
                self.put_off.push((i, tied));
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deferred_draw_fetches_once_and_only_on_a_tie() {
        let mut fetched = 0;
        let mut draw = Deferred::new(|| {
            fetched += 1;
            Rng::new(7)
        });
        let (a, b) = (draw.below(10), draw.below(10));
        let rng = draw.finish(&mut []).rng.expect("drawn");
        let mut direct = Rng::new(7);
        assert_eq!((a, b), (direct.below(10), direct.below(10)));
        assert_eq!(rng, direct);
        assert_eq!(fetched, 1);
        assert!(Deferred::new(|| Rng::new(7)).finish(&mut []).rng.is_none());
    }

    #[test]
    fn the_handoff_gives_the_generator_after_the_rows_asked_for() {
        let handoff = RngHandoff::new(Rng::new(1));
        assert_eq!(handoff.after(0), Some(Rng::new(1)));
        std::thread::scope(|scope| {
            scope.spawn(|| {
                let mut rng = Rng::new(1);
                for rows in 1..=3 {
                    rng.below(5);
                    handoff.publish(rows, &rng);
                }
            });
            let mut expected = Rng::new(1);
            (0..3).for_each(|_| {
                expected.below(5);
            });
            // Waits for the third row, whichever comes first.
            let third = loop {
                if let Some(rng) = handoff.after(3) {
                    break rng;
                }
            };
            assert_eq!(third, expected);
        });
        let _close = Closes(&handoff);
        drop(_close);
        assert_eq!(handoff.after(4), None);
    }
}
