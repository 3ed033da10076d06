//! Evaluation drivers: they own the loop over rows, the metrics, timing and progress.
//! Learners only predict and learn.

pub mod drift;
pub mod metrics;
mod prequential;
pub mod ranking;

pub use drift::{DriftCounts, DriftEvents, DriftLog, Replaced, Replacement};
pub use metrics::{ClassMetrics, ConfusionMatrix};
pub use prequential::{
    CurvePoint, FinalFraction, Prequential, PrequentialReport, RowOutcome, Summary, Throughput,
};
pub use ranking::{RankedRow, RankingMetrics, RankingReport, RankingSummary, RowRanking};
