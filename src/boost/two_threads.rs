//! One model on the cores of rayon's pool: what decides it ([`Pace`]) and how two threads
//! share one booster's learners ([`Watermarks`]).
//!
//! Two ways of spreading one model's rows over threads, each exact (the outputs and the
//! model are the same byte for byte whatever the threads):
//! * OvA's per-class boosters are independent on a row: they run side by side as tasks
//!   (`multiclass::ova`).
//! * Adaboost.OLM's and OnlineMBBM's learner `i` learns a row with a weight that depends
//!   only on the votes of learners `< i` on it (`multiclass::ada_olm`, `multiclass::mbbm`).
//!   One thread makes every prediction, random draw and update of the booster, in the
//!   order of one thread; the other has the trees learn, learner `i` learning row `t` as
//!   soon as the first has its prediction and weight, and the first predicting row `t + 1`
//!   with learner `i` once it has learnt row `t` ([`Watermarks`]). A tree learns a row in two
//!   calls for this (predict, then learn at the leaf it kept), and so does a bundle of trees
//!   (AdaOVA's members). The first thread also has some learners learn, as many as keep the
//!   two threads' waits even ([`rebalance`]), and, when it must wait for a learner, learns
//!   rows the second thread has not begun ([`Watermarks::claim`]: each row of a learner is
//!   learnt once, by the thread that claims it).
//!
//! Both only run on a thread of rayon's pool with more than one thread (`streamboost replay`
//! and `run` score on such a pool): a query engine's threads, already one per core, keep
//! their models to themselves, as more threads would only share the same cores. Whether a
//! row is worth it is timed on one thread now and then ([`Pace`]); two threads are kept only
//! while their rows go faster than that ([`Pace::judge`]). Only speed depends on these
//! rules, never a result.
//!
//! Restart, cancel and crash: nothing here outlives a call. The second thread ends with the
//! rows it was given, so a checkpoint taken between calls holds the whole model; [`Pace`]
//! and the balance are not saved and start again from a timing. A thread that panics stops
//! the other's waits ([`Stops`]), and the panic reaches the caller.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::boost::Turn;
use crate::core::ClassId;
use crate::learner::learnable;
use crate::learner::{Classifier, Ensemble, TwoCalls, learn_predict_each};

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
        self.split = per_row > above && crate::core::spread_here();
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

/// The one-thread time of a row above which a booster's rows that come several at a time
/// go to two threads ([`learn_beside`]).
const BESIDE_ABOVE: Duration = Duration::from_micros(50);

/// Rows timed on one thread, every [`Pace::EVERY`] rows, to decide whether to use two.
const BESIDE_TIMED_ROWS: usize = 32;

/// A booster's choice between one thread and two ([`learn_beside`]) for its rows: its
/// [`Pace`], and how many learners the predicting thread also has learn.
#[derive(Debug, Clone, Default)]
pub(crate) struct TwoThreads {
    pub(crate) pace: Pace,
    /// Moved after each run toward the thread that waited less ([`rebalance`]): how much of
    /// a row's time is learning varies between streams.
    pub(crate) own: usize,
}

impl TwoThreads {
    /// Rows `0..rows` of a booster of `learners` learners, in runs: `run(range, None)` one
    /// by one on this thread, `run(range, Some(own))` through [`learn_beside`] with `own`
    /// learners learning on this thread, returning its waits. Two threads where every
    /// learner learns in two calls (`two_calls`), a row, timed on one thread every
    /// [`Pace::EVERY`] rows (over 32 rows), costs more than 50 µs, this runs on a thread of
    /// rayon's pool with more than one thread, and the runs on two threads since went faster
    /// than that time.
    pub(crate) fn rows(
        &mut self, rows: usize, learners: usize, two_calls: bool,
        mut run: impl FnMut(Range<usize>, Option<usize>) -> (Duration, Duration),
    ) {
        let mut j = 0;
        while j < rows {
            let left = rows - j;
            if self.pace.timing_due() {
                let stretch = left.min(BESIDE_TIMED_ROWS);
                self.pace.time_rows(BESIDE_ABOVE, stretch, || {
                    run(j..j + stretch, None);
                });
                j += stretch;
                continue;
            }
            let stretch = left.min(self.pace.untimed_rows() as usize);
            if self.pace.split && two_calls && stretch > 1 {
                let start = Instant::now();
                let (predicting, learning) = run(j..j + stretch, Some(self.own));
                self.pace.judge(stretch, start.elapsed());
                self.own = rebalance(self.own, learners, predicting, learning);
            } else {
                run(j..j + stretch, None);
                self.pace.count(stretch as u64);
            }
            j += stretch;
        }
    }
}

/// A booster whose learner `i`'s weight on a row depends only on the votes of learners
/// `< i` on it, so that its rows can go through [`learn_beside`].
pub(crate) trait LearnsBeside: Classifier + Ensemble<Member: Classifier> {
    /// Its choice between one thread and two.
    fn threads(&mut self) -> &mut TwoThreads;

    /// Its members, which a run on two threads moves out and back.
    fn members_vec(&mut self) -> &mut Vec<Self::Member>;

    /// [`Classifier::learn_predict`] of one row with label and weight `target` (learnable,
    /// or `None`), its probabilities into `out`, its `n` members (which may be moved out
    /// meanwhile) reached through `member(i, turn, p)` as [`learn_beside`] describes.
    fn row(
        &mut self, n: usize, target: Option<(ClassId, f64)>, out: &mut [f64],
        member: impl FnMut(usize, Turn, &mut [f64]) -> bool,
    ) -> ClassId;
}

/// [`Classifier::learn_predict_rows`] of a [`LearnsBeside`] booster: on two threads where
/// that pays ([`TwoThreads::rows`], [`learn_beside`]), one by one otherwise. The same
/// outputs and model either way.
pub(crate) fn learn_predict_rows<B: LearnsBeside>(
    model: &mut B, xs: &[&[f64]], ys: &[Option<ClassId>], weight: f64, proba: &mut [f64],
    predicted: &mut [ClassId],
) {
    let k = model.n_classes();
    let members = model.members_mut();
    let (n, two_calls) = (
        members.len(),
        members.iter_mut().all(|m| m.two_calls().is_some()),
    );
    let mut threads = std::mem::take(model.threads());
    threads.rows(xs.len(), n, two_calls, |rows, own| {
        let (xs, ys) = (&xs[rows.clone()], &ys[rows.clone()]);
        let proba = &mut proba[rows.start * k..rows.end * k];
        let predicted = &mut predicted[rows];
        let Some(own) = own else {
            learn_predict_each(model, xs, ys, weight, proba, predicted);
            return (Duration::ZERO, Duration::ZERO);
        };
        let targets: Vec<Option<(ClassId, f64)>> =
            ys.iter().map(|&y| learnable(y, weight, k)).collect();
        let labels: Vec<Option<ClassId>> = targets.iter().map(|t| t.map(|(y, _)| y)).collect();
        let mut members = std::mem::take(model.members_vec());
        let waits = learn_beside(&mut members, own, xs, &labels, |j, member| {
            let out = &mut proba[j * k..(j + 1) * k];
            predicted[j] = model.row(n, targets[j], out, member);
        });
        *model.members_vec() = members;
        waits
    });
    *model.threads() = threads;
}

/// Rows `xs` through a booster on two threads, where learner `i`'s weight on a row depends
/// only on the votes of learners `< i` on it. `row(j, member)` makes row `j`'s predictions,
/// draws and updates on this thread, in the order of one thread, calling `member(i, turn, p)`
/// for each learner in turn: learner `i`'s probabilities into `p`, and, given a weight in
/// its [`Turn`], its learning of the row with label `labels[j]` (what the turn asks of it
/// before, [`Turn::begin`], is done once it has learnt the row before, as on one thread). Learners `..own` learn it there and then;
/// learners `own..` predict in the first of two calls ([`Classifier::two_calls`],
/// which they must) and learn on the other thread, learner `i` as soon as it has predicted.
/// A learner predicts the next row once it has learnt this one. This thread, waiting for
/// a learner, learns that learner's row itself if the other thread has not begun it, and
/// the last learners' meanwhile; each learner's row is learnt once, by the thread that
/// claims it ([`Watermarks::claim`]). So each learner meets its calls in the order of one
/// thread, and the outputs and the model are the same.
///
/// Returns how long this thread waited for the other, and the other for this one.
pub(crate) fn learn_beside<L: Classifier>(
    learners: &mut [L], own: usize, xs: &[&[f64]], labels: &[Option<ClassId>],
    mut row: impl FnMut(usize, &mut dyn FnMut(usize, Turn, &mut [f64]) -> bool),
) -> (Duration, Duration) {
    let n = learners.len();
    let members: Vec<Mutex<&mut L>> = learners.iter_mut().map(Mutex::new).collect();
    // Per learner, the rows of the run it has predicted to learn, those it has learnt (or
    // that had nothing to learn), and those whose learning a thread has taken on; its
    // weights for the last two rows.
    let (ready, learnt, claimed) = (Watermarks::new(n), Watermarks::new(n), Watermarks::new(n));
    let weights: Vec<AtomicU64> = (0..2 * n).map(|_| AtomicU64::new(0)).collect();
    let (members, ready, learnt, claimed, weights) =
        (&members, &ready, &learnt, &claimed, &weights);
    // Learner `i`'s row `j` learnt by the calling thread, unless the other claimed it.
    let learn = |i: usize, j: usize, y: ClassId| {
        if claimed.claim(i, j) {
            let w = f64::from_bits(weights[(j % 2) * n + i].load(Ordering::Relaxed));
            in_two_calls(&mut **lock(&members[i])).learn_predicted(xs[j], y, w);
            learnt.set(i, j + 1);
        }
    };
    std::thread::scope(|scope| {
        // Stops the other thread if this one unwinds.
        let _stops = Stops(ready);
        scope.spawn(move || {
            let _stops = Stops(learnt);
            for (j, label) in labels.iter().enumerate() {
                let Some(y) = *label else { continue };
                for i in own..n {
                    if !ready.wait(i, j + 1) {
                        return;
                    }
                    learn(i, j, y);
                }
            }
        });
        for (j, &x) in xs.iter().enumerate() {
            let before = j.checked_sub(1).and_then(|b| labels[b]);
            row(j, &mut |i, turn, p| {
                if i < own {
                    return turn.take(&mut **lock(&members[i]), x, labels[j], p);
                }
                // Learner `i` has yet to learn the row before: learn it here if the other
                // thread has not begun it, and the last learners' meanwhile.
                if let Some(y) = before.filter(|_| !learnt.reached(i, j)) {
                    learn(i, j - 1, y);
                    for later in (i + 1..n).rev() {
                        if learnt.reached(i, j) {
                            break;
                        }
                        learn(later, j - 1, y);
                    }
                }
                assert!(learnt.wait(i, j), "the learning thread stopped");
                let mut member = lock(&members[i]);
                let adapted = turn.begin(&mut **member);
                match turn.weight {
                    Some(w) => {
                        in_two_calls(&mut **member).predict_to_learn(x, p);
                        weights[(j % 2) * n + i].store(w.to_bits(), Ordering::Relaxed);
                        ready.set(i, j + 1);
                    }
                    None => {
                        member.predict_proba(x, p);
                        claimed.set(i, j + 1);
                        learnt.set(i, j + 1);
                    }
                }
                adapted
            });
        }
    });
    (learnt.waited(), ready.waited())
}

/// A member in its two-call form, which every member of a run on two threads has
/// ([`TwoThreads::rows`] is told whether they do).
fn in_two_calls<L: Classifier>(member: &mut L) -> &mut dyn TwoCalls {
    member
        .two_calls()
        .expect("a run goes to two threads only when its members learn in two calls")
}

/// A member's lock; a thread that panicked holding it leaves the member as it was, and the
/// panic reaches the caller when the threads are joined.
pub(crate) fn lock<'a, T>(member: &'a Mutex<T>) -> MutexGuard<'a, T> {
    member.lock().unwrap_or_else(|e| e.into_inner())
}

/// Per member, how many rows of a run have passed a step, for another thread to wait on;
/// or stopped, when the thread that moves it unwinds.
pub(crate) struct Watermarks {
    rows: Vec<AtomicUsize>,
    stopped: AtomicBool,
    /// Nanoseconds spent in [`Watermarks::wait`] before the rows were reached.
    waited: AtomicU64,
}

impl Watermarks {
    pub(crate) fn new(members: usize) -> Self {
        Watermarks {
            rows: (0..members).map(|_| AtomicUsize::new(0)).collect(),
            stopped: AtomicBool::new(false),
            waited: AtomicU64::new(0),
        }
    }

    /// Member `i` has passed the step for `rows` rows; what it wrote before is visible to
    /// the thread that sees it.
    pub(crate) fn set(&self, i: usize, rows: usize) {
        self.rows[i].store(rows, Ordering::Release);
    }

    /// Whether member `i` has passed the step for `rows` rows.
    pub(crate) fn reached(&self, i: usize, rows: usize) -> bool {
        self.rows[i].load(Ordering::Acquire) >= rows
    }

    /// Takes member `i`'s row `row` on for the calling thread: `true` for the one thread
    /// that moves it from `row` rows to `row + 1`.
    pub(crate) fn claim(&self, i: usize, row: usize) -> bool {
        self.rows[i]
            .compare_exchange(row, row + 1, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// Waits until member `i` has passed the step for `rows` rows: spinning a little (the
    /// other thread is usually a member's call away), then yielding the core. `false` if
    /// the progress was stopped meanwhile.
    pub(crate) fn wait(&self, i: usize, rows: usize) -> bool {
        if self.rows[i].load(Ordering::Acquire) >= rows {
            return true;
        }
        let start = Instant::now();
        let mut spins = 0u32;
        while self.rows[i].load(Ordering::Acquire) < rows {
            if self.stopped.load(Ordering::Acquire) {
                // What the stopped thread set before it stopped is visible now.
                return self.rows[i].load(Ordering::Acquire) >= rows;
            }
            if spins < 1 << 10 {
                std::hint::spin_loop();
                spins += 1;
            } else {
                std::thread::yield_now();
            }
        }
        let waited = start.elapsed().as_nanos().min(u128::from(u64::MAX)) as u64;
        self.waited.fetch_add(waited, Ordering::Relaxed);
        true
    }

    /// The time spent waiting.
    pub(crate) fn waited(&self) -> Duration {
        Duration::from_nanos(self.waited.load(Ordering::Relaxed))
    }
}

/// How many of `n` learners the predicting thread also has learn, after a run in which it
/// waited `predicting` for the learning thread and that one waited `learning` for it: one
/// twentieth of them more or fewer, toward the side that waited less.
pub(crate) fn rebalance(own: usize, n: usize, predicting: Duration, learning: Duration) -> usize {
    let step = n / 20 + 1;
    match predicting.cmp(&learning) {
        std::cmp::Ordering::Greater => (own + step).min(n.saturating_sub(1)),
        std::cmp::Ordering::Less => own.saturating_sub(step),
        std::cmp::Ordering::Equal => own,
    }
}

/// Stops a [`Watermarks`] when dropped while its thread unwinds: that thread never leaves
/// another waiting on it, and its panic reaches the caller when the threads are joined.
pub(crate) struct Stops<'a>(pub(crate) &'a Watermarks);

impl Drop for Stops<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.stopped.store(true, Ordering::Release);
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::learner::Config;

    /// Two threads against one, row by row, for the model `config` builds: the same
    /// predictions, probabilities and model (as JSON), with random tie-breaks (fresh trees
    /// and zero weights tie on the first rows), unlabelled rows, runs of every length from 1
    /// to 40 and three row weights. The model's [`Pace`] is set before each run so that
    /// every run of two rows or more goes to two threads.
    pub(crate) fn two_threads_match_one<C>(config: C)
    where
        C: Config,
        C::Model: LearnsBeside + serde::Serialize + Send + 'static,
    {
        two_threads_match_one_on(config, crate::synth::mixed(600, 0.05, 0.1, 8));
    }

    /// [`two_threads_match_one`] on the rows of `data`; returns the model (of one thread).
    pub(crate) fn two_threads_match_one_on<C>(config: C, data: crate::core::Dataset) -> C::Model
    where
        C: Config,
        C::Model: LearnsBeside + serde::Serialize + Send + 'static,
    {
        let k = data.spec().n_classes();
        let label = |data: &crate::core::Dataset, i: usize| data.label(i).filter(|_| i % 5 != 3);
        let weight = |run: usize| [1.0, 0.5, 2.0][run % 3];
        let runs: Vec<Range<usize>> = {
            let (mut runs, mut start, mut len) = (Vec::new(), 0, 1);
            while start < data.len() {
                let end = (start + len).min(data.len());
                runs.push(start..end);
                (start, len) = (end, len % 40 + 1);
            }
            runs
        };
        let mut one = config.build(data.spec(), 3).unwrap();
        let mut expected = Vec::new();
        for (r, rows) in runs.iter().enumerate() {
            for i in rows.clone() {
                let mut out = vec![0.0; k];
                let y = label(&data, i);
                let predicted = one.learn_predict(data.row(i), y, weight(r), &mut out);
                expected.push((predicted, out));
            }
        }
        // On a thread of its own, so that a deadlock fails the test instead of hanging it.
        let (done, finished) = std::sync::mpsc::channel();
        let (data_two, runs_two) = (data.clone(), runs.clone());
        std::thread::spawn(move || {
            let (data, runs) = (data_two, runs_two);
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(2)
                .build()
                .unwrap();
            let mut two = config.build(data.spec(), 3).unwrap();
            let mut got = Vec::new();
            pool.install(|| {
                for (r, rows) in runs.iter().enumerate() {
                    // Not timed (rows is not a multiple of EVERY): on two threads wherever
                    // two rows come together.
                    two.threads().pace = Pace {
                        rows: 1,
                        split: true,
                        per_row: Duration::from_secs(3600),
                    };
                    let xs: Vec<&[f64]> = rows.clone().map(|i| data.row(i)).collect();
                    let ys: Vec<Option<ClassId>> = rows.clone().map(|i| label(&data, i)).collect();
                    let mut proba = vec![0.0; xs.len() * k];
                    let mut predicted = vec![0; xs.len()];
                    two.learn_predict_rows(&xs, &ys, weight(r), &mut proba, &mut predicted);
                    got.extend(
                        predicted
                            .into_iter()
                            .zip(proba.chunks(k).map(<[f64]>::to_vec)),
                    );
                }
            });
            let _ = done.send((got, serde_json::to_string(&two).unwrap()));
        });
        let (got, two) = finished
            .recv_timeout(Duration::from_secs(60))
            .expect("the two threads did not finish: a deadlock");
        assert!(expected == got, "the outputs differ");
        assert!(
            serde_json::to_string(&one).unwrap() == two,
            "the models differ"
        );
        one
    }

    #[test]
    fn rebalancing_moves_learning_toward_the_thread_that_waited() {
        let (ms, n) = (Duration::from_millis(1), 100);
        assert_eq!(rebalance(10, n, 2 * ms, ms), 16);
        assert_eq!(rebalance(10, n, ms, 2 * ms), 4);
        assert_eq!(rebalance(3, n, ms, 2 * ms), 0);
        assert_eq!(rebalance(98, n, 2 * ms, ms), 99);
        assert_eq!(rebalance(10, n, ms, ms), 10);
    }

    #[test]
    fn a_waiter_sees_the_progress_or_the_stop() {
        let progress = Watermarks::new(2);
        std::thread::scope(|scope| {
            scope.spawn(|| (1..=3).for_each(|rows| progress.set(1, rows)));
            assert!(progress.wait(1, 3));
        });
        // Dropped on a normal return, it stops nothing.
        drop(Stops(&progress));
        assert!(!progress.stopped.load(Ordering::Acquire));
        // Dropped while its thread unwinds, it stops the waits on what never came.
        let unwound = std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    let _stops = Stops(&progress);
                    panic!("a learner failed");
                })
                .join()
        });
        assert!(unwound.is_err());
        assert!(!progress.wait(0, 1));
        assert!(progress.wait(1, 2));
    }
}
