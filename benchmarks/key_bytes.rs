//! Bytes per key of a keyed model: the heap a key's operator takes when its key first
//! appears, after its first row, and after 100 rows, measured by a counting allocator,
//! beside the estimate (`Cursor::heap_bytes`) that the memory budget counts.
//!
//! `cargo bench --bench key_bytes [-- KEYS=2000 LEARNERS=10]` (Adaboost.OLM at its defaults
//! over the keyed synthetic stream of `benchmarks/keyed_stream.rs`).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

use arrow::record_batch::RecordBatch;
use streamboost::Config;
use streamboost::boost::{Knob, Tune};
use streamboost::columnar::Encodings;
use streamboost::model::{Algorithm, Model};
use streamboost::runtime::{BatchOperator, Cursor, KeyedOperator};
use streamboost::synth::KeyedEvents;

/// The system allocator, counting the bytes live.
struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(
            new_size as isize - layout.size() as isize,
            Ordering::Relaxed,
        );
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn live() -> isize {
    LIVE.load(Ordering::Relaxed)
}

/// A batch of `rows` rows of each of `keys` keys (`k0`, `k1`, …), key by key.
fn rows_of_each(keys: usize, rows: usize) -> RecordBatch {
    let mut events = KeyedEvents::new(1, 1.1, 0.05, 3).unwrap();
    let one_key = events.batch(keys * rows);
    let names: Vec<String> = (0..keys * rows).map(|i| format!("k{}", i / rows)).collect();
    let mut columns = one_key.columns().to_vec();
    columns[1] = std::sync::Arc::new(arrow::array::StringArray::from(names));
    RecordBatch::try_new(one_key.schema(), columns).unwrap()
}

fn main() {
    let args: Vec<usize> = (std::env::args().skip(1))
        .filter_map(|a| a.parse().ok())
        .collect();
    let (keys, learners) = (
        args.first().copied().unwrap_or(2000),
        args.get(1).copied().unwrap_or(10),
    );
    let spec = KeyedEvents::spec();
    let mut config = Algorithm::AdaOlm.default_config();
    assert!(config.tune(&Knob::Learners(learners)));
    let schema = rows_of_each(1, 1).schema();
    let (config, spec2) = (config.clone(), spec.clone());
    let factory = move |_key: Option<&str>, input: &arrow::datatypes::SchemaRef| {
        let model: Model = config.build(&spec2, 1)?;
        Cursor::new(
            model,
            &spec2,
            input.clone(),
            "label",
            &Encodings::default(),
            "keys",
        )
    };
    println!("Adaboost.OLM over {learners} trees (defaults), {keys} keys");
    println!();
    println!("| key | measured heap per key | estimate (budget) per key |");
    println!("|---|---|---|");
    let row = |what: &str, measured: isize, estimate: usize| {
        let (measured, estimate) = (measured as f64 / keys as f64, estimate as f64 / keys as f64);
        println!("| {what} | {measured:.0} B | {estimate:.0} B |");
    };
    // A fresh key: its operator made, before any row.
    let base = live();
    let fresh: Vec<Cursor<Model>> = (0..keys).map(|_| factory(None, &schema).unwrap()).collect();
    let estimate = fresh.iter().map(Cursor::heap_bytes).sum();
    row("fresh (made, no row yet)", live() - base, estimate);
    drop(fresh);

    let mut keyed = KeyedOperator::new(
        schema,
        "key",
        "label",
        spec.classes.names(),
        Box::new(factory),
    )
    .unwrap();
    let first = rows_of_each(keys, 1);
    let base = live();
    let report = |what: &str, keyed: &KeyedOperator<Model>| {
        row(what, live() - base, keyed.memory().resident_bytes);
    };
    keyed.process(&first).unwrap();
    report("after 1 row", &keyed);
    for _ in 0..99 {
        keyed.process(&first).unwrap();
    }
    report("after 100 rows (one a batch)", &keyed);
    keyed.process(&rows_of_each(keys, 100)).unwrap();
    report("after 200 rows (then 100 in one batch)", &keyed);
}
