//! Accuracy on the shared real data sets (skipped where they are absent). These are quick
//! sanity floors for a debug build; the paper comparisons with their published numbers are
//! in `benchmarks/RESULTS.md`, made by `benchmarks/reproduce_jgt17.sh`.
