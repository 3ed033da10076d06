//! The record-batch operator on generated batches: random schemas (numbers with NaN and
//! infinities, integers, strings, dictionary, boolean and list columns, nulls anywhere),
//! a model built from the first batch, then later batches of the same or a drifted schema.
//! Each `process` returns an error or exactly one output row per input row.
#![no_main]

use libfuzzer_sys::fuzz_target;
use streamboost_fuzz::Case;

fuzz_target!(|case: Case| {
    streamboost_fuzz::report_caught_panics();
    case.run();
});
