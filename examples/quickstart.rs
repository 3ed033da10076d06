//! The smallest useful program: Adaboost.OLM over 100 Hoeffding trees on a seeded synthetic
//! stream, evaluated test-then-train by the prequential driver.
//!
//!     cargo run --example quickstart --no-default-features

use streamboost::prelude::*;
use streamboost::synth;

fn main() -> Result<()> {
    let data = synth::mixed(20_000, 0.05, 0.02, 7);
    let config = AdaBoostOlmConfig::new(HoeffdingTreeConfig::jgt_paper());
    println!("model: {config}");
    let mut model = config.build(data.spec(), 42)?;
    let report = Prequential::default().run(&mut model, &data, None, |_| {})?;
    println!(
        "{} rows: accuracy {:.4}, final 20% {:.4}, {:.0} rows/s",
        report.rows,
        report.cumulative.accuracy.unwrap_or(0.0),
        report.final_fraction.accuracy.unwrap_or(0.0),
        report.throughput.rows_per_second
    );
    Ok(())
}
