//! Change detectors: each watches a stream of numbers (a learner's 0/1 errors, or a loss in
//! `[0, 1]`) and says when its mean has risen, first as a warning, then as a drift.
//!
//! | detector | paper | what it tests | warning |
//! |---|---|---|---|
//! | [`Adwin`] | Bifet & Gavaldà, SDM 2007 (ADWIN2) | any change of the mean between two parts of an adaptive window, by a Hoeffding–Bernstein bound | no |
//! | [`PageHinkley`] | Page, Biometrika 1954 | a rise of the mean, by the cumulative deviation from the running mean | no |
//! | [`Ddm`] | Gama, Medas, Castillo & Rodrigues, SBIA 2004 | a rise of a Bernoulli error rate above its best level seen, by 2σ (warning) and 3σ (drift) | yes |
//! | [`HddmA`] | Frías-Blanco, del Campo-Ávila, Ramos-Jiménez, Morales-Bueno, Ortiz-Díaz & Caballero-Mota, IEEE TKDE 2015 (HDDM_A) | a rise of the mean since the best cut point, by Hoeffding's inequality at two confidences | yes |
//!
//! After ADWIN (whose `δ` bounds the false alarms of a whole run, and which needs no
//! warning), the two kept are DDM, the classic warning-then-drift detector that ARF-style
//! background learners were built on, and HDDM_A, which gives the same two levels from
//! distribution-free Hoeffding bounds in O(1) memory and without DDM's early-start
//! weakness; Page–Hinkley is the cheapest, for losses of small noise. Each module says
//! what its guarantee covers and what its tests measured.
//!
//! Every detector is deterministic (no random draw), holds its whole state in serde-able
//! fields (a checkpoint restores it bit for bit) and resets itself after a drift, so that
//! the next change is measured from the new concept.

mod adwin;
mod ddm;
mod hddm;
mod page_hinkley;

use std::fmt;

use serde::{Deserialize, Serialize};

pub use adwin::{Adwin, AdwinConfig};
pub use ddm::{Ddm, DdmConfig};
pub use hddm::{HddmA, HddmAConfig};
pub use page_hinkley::{PageHinkley, PageHinkleyConfig};

use crate::{Error, Result};

/// What a detector saw in the value just added.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Change {
    /// The mean may be rising: a learner started now in the background has a head start
    /// if the drift is confirmed.
    Warning,
    /// The mean has changed: the detector has reset itself to the values after the change.
    Drift,
}

/// A change detector over a stream of numbers.
pub trait DriftDetector {
    /// Adds value `x` (an error in `{0, 1}`, or a loss in `[0, 1]`) and says whether the
    /// stream has changed. A drift resets the detector's reference to the new concept.
    fn update(&mut self, x: f64) -> Option<Change>;

    /// The detector's estimate of the current mean (of the values since the last drift, or
    /// of its window).
    fn mean(&self) -> f64;
}

/// The detector to build, with its parameters (`"drift": {"detector": "adwin", …}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "detector", rename_all = "kebab-case")]
pub enum DriftConfig {
    /// ADWIN2.
    Adwin(AdwinConfig),
    /// Page–Hinkley.
    #[serde(rename = "ph")]
    PageHinkley(PageHinkleyConfig),
    /// DDM.
    Ddm(DdmConfig),
    /// HDDM_A.
    HddmA(HddmAConfig),
}

impl DriftConfig {
    /// The detectors' names, as `--drift-detector` spells them (besides `none`).
    pub const NAMES: &'static [&'static str] = &["adwin", "ph", "ddm", "hddm-a"];

    /// Detector `name` at its paper's defaults.
    pub fn named(name: &str) -> Option<DriftConfig> {
        Some(match name {
            "adwin" => DriftConfig::Adwin(AdwinConfig::default()),
            "ph" => DriftConfig::PageHinkley(PageHinkleyConfig::default()),
            "ddm" => DriftConfig::Ddm(DdmConfig::default()),
            "hddm-a" => DriftConfig::HddmA(HddmAConfig::default()),
            _ => return None,
        })
    }

    /// Checks the parameters.
    pub fn validate(&self) -> Result<()> {
        match self {
            DriftConfig::Adwin(c) => c.validate(),
            DriftConfig::PageHinkley(c) => c.validate(),
            DriftConfig::Ddm(c) => c.validate(),
            DriftConfig::HddmA(c) => c.validate(),
        }
    }

    /// A fresh detector.
    pub fn build(&self) -> Result<Detector> {
        self.validate()?;
        Ok(match self {
            DriftConfig::Adwin(c) => Detector::Adwin(Adwin::new(c.clone())),
            DriftConfig::PageHinkley(c) => Detector::PageHinkley(PageHinkley::new(c.clone())),
            DriftConfig::Ddm(c) => Detector::Ddm(Ddm::new(c.clone())),
            DriftConfig::HddmA(c) => Detector::HddmA(HddmA::new(c.clone())),
        })
    }
}

impl fmt::Display for DriftConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DriftConfig::Adwin(c) => write!(f, "ADWIN(delta={})", c.delta),
            DriftConfig::PageHinkley(c) => write!(
                f,
                "PageHinkley(delta={}, lambda={}, alpha={})",
                c.delta, c.threshold, c.alpha
            ),
            DriftConfig::Ddm(c) => write!(
                f,
                "DDM(warning={}σ, drift={}σ)",
                c.warning_level, c.drift_level
            ),
            DriftConfig::HddmA(c) => write!(
                f,
                "HDDM_A(drift confidence={}, warning confidence={})",
                c.drift_confidence, c.warning_confidence
            ),
        }
    }
}

/// A detector built from a [`DriftConfig`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "detector", rename_all = "kebab-case")]
pub enum Detector {
    /// ADWIN2.
    Adwin(Adwin),
    /// Page–Hinkley.
    #[serde(rename = "ph")]
    PageHinkley(PageHinkley),
    /// DDM.
    Ddm(Ddm),
    /// HDDM_A.
    HddmA(HddmA),
}

impl DriftDetector for Detector {
    fn update(&mut self, x: f64) -> Option<Change> {
        match self {
            Detector::Adwin(d) => d.update(x),
            Detector::PageHinkley(d) => d.update(x),
            Detector::Ddm(d) => d.update(x),
            Detector::HddmA(d) => d.update(x),
        }
    }

    fn mean(&self) -> f64 {
        match self {
            Detector::Adwin(d) => d.mean(),
            Detector::PageHinkley(d) => d.mean(),
            Detector::Ddm(d) => d.mean(),
            Detector::HddmA(d) => d.mean(),
        }
    }
}

impl DriftConfig {
    /// The detector that warns for this one where it gives no warning of its own: the same
    /// detector at a looser level, whose drift is read as a warning. ADWIN warns at 10·δ, as
    /// the adaptive random forest pairs ADWIN at δ = 0.01 (warning) with δ = 0.001 (drift)
    /// (Gomes et al., Machine Learning 2017, §4); Page–Hinkley at half its threshold λ.
    /// DDM and HDDM_A warn themselves.
    pub fn warning_companion(&self) -> Option<DriftConfig> {
        match self {
            DriftConfig::Adwin(c) => Some(DriftConfig::Adwin(AdwinConfig {
                delta: (c.delta * 10.0).min(0.5),
                ..c.clone()
            })),
            DriftConfig::PageHinkley(c) => Some(DriftConfig::PageHinkley(PageHinkleyConfig {
                threshold: c.threshold / 2.0,
                ..c.clone()
            })),
            DriftConfig::Ddm(_) | DriftConfig::HddmA(_) => None,
        }
    }
}

/// A detector with its warnings: the detector a [`DriftConfig`] builds and, where it gives
/// none of its own, its [`DriftConfig::warning_companion`]. What watches a learner's error
/// (a member of an ensemble, or the ensemble itself) and counts what it saw.
///
/// Restart: its whole state is serde (a checkpoint resumes it bit for bit); it makes no
/// random draw.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Watch {
    config: DriftConfig,
    detector: Detector,
    companion: Option<Detector>,
    /// Warnings reported.
    pub warnings: u64,
    /// Drifts reported.
    pub drifts: u64,
}

impl Watch {
    /// A fresh watch of detector `config`.
    pub fn new(config: &DriftConfig) -> Result<Watch> {
        let (detector, companion) = Watch::detectors(config)?;
        Ok(Watch {
            detector,
            companion,
            config: config.clone(),
            warnings: 0,
            drifts: 0,
        })
    }

    /// The detector `config` builds, and its warning companion, both empty.
    fn detectors(config: &DriftConfig) -> Result<(Detector, Option<Detector>)> {
        let companion = config.warning_companion().map(|c| c.build()).transpose()?;
        Ok((config.build()?, companion))
    }

    /// Adds error `x` (in `[0, 1]`): a drift from the detector, else a warning from it or its
    /// companion.
    ///
    /// A drift restarts the detector and its companion, empty: whoever watches replaces what
    /// was watched (a learner, an ensemble's experts), whose errors are a new stream. A
    /// detector that kept the values after the change (ADWIN's window suffix) would compare
    /// the replacement's first, high errors with its predecessor's last, low ones, and see a
    /// rise that is only a new learner learning: on shuffled pendigits, one tree was replaced
    /// three times in a row that way.
    pub fn update(&mut self, x: f64) -> Option<Change> {
        let warned = self
            .companion
            .as_mut()
            .is_some_and(|c| c.update(x) == Some(Change::Drift));
        let change = match self.detector.update(x) {
            Some(Change::Drift) => {
                (self.detector, self.companion) =
                    Watch::detectors(&self.config).expect("a valid config builds again");
                Some(Change::Drift)
            }
            Some(Change::Warning) => Some(Change::Warning),
            None => warned.then_some(Change::Warning),
        };
        match change {
            Some(Change::Drift) => self.drifts += 1,
            Some(Change::Warning) => self.warnings += 1,
            None => {}
        }
        change
    }
}

/// `value` checked to lie in the open interval (0, 1), for confidences and `δ`s.
fn probability(name: &'static str, value: f64) -> Result<()> {
    if value > 0.0 && value < 1.0 {
        Ok(())
    } else {
        Err(Error::config(name, "must be in (0, 1)"))
    }
}

/// `value` checked to be finite and at least `min`.
fn at_least(name: &'static str, value: f64, min: f64) -> Result<()> {
    if value.is_finite() && value >= min {
        Ok(())
    } else {
        Err(Error::config(name, format!("must be finite and >= {min}")))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::core::Rng;

    /// `n` Bernoulli values of mean `p`, then `m` of mean `q`.
    pub(crate) fn bernoulli_switch(rng: &mut Rng, n: usize, p: f64, m: usize, q: f64) -> Vec<f64> {
        (0..n + m)
            .map(|i| f64::from(u8::from(rng.uniform() < if i < n { p } else { q })))
            .collect()
    }

    /// The first row at which `detector` reports `Change::Drift` on `values`.
    pub(crate) fn first_drift(detector: &mut impl DriftDetector, values: &[f64]) -> Option<usize> {
        values
            .iter()
            .position(|&x| detector.update(x) == Some(Change::Drift))
    }

    #[test]
    fn every_detector_finds_an_abrupt_rise_and_round_trips_mid_stream() {
        for name in DriftConfig::NAMES {
            let config = DriftConfig::named(name).unwrap();
            let mut rng = Rng::new(11);
            let values = bernoulli_switch(&mut rng, 3000, 0.1, 3000, 0.6);
            let mut detector = config.build().unwrap();
            let at = first_drift(&mut detector, &values[..]).map(|r| r as i64 - 3000);
            assert!(
                at.is_some_and(|d| (0..1000).contains(&d)),
                "{name}: drift at {at:?} rows after the change"
            );
            // A detector written out and read back goes on as the one that was not.
            let mut detector = config.build().unwrap();
            values[..4000].iter().for_each(|&x| _ = detector.update(x));
            let json = serde_json::to_string(&detector).unwrap();
            let mut restored: Detector = serde_json::from_str(&json).unwrap();
            assert_eq!(restored, detector, "{name}");
            for &x in &values[4000..] {
                assert_eq!(restored.update(x), detector.update(x), "{name}");
            }
            assert_eq!(restored.mean().to_bits(), detector.mean().to_bits());
        }
    }

    #[test]
    fn config_reads_as_json_and_bad_parameters_are_refused() {
        let config: DriftConfig = serde_json::from_str(r#"{"detector": "adwin", "delta": 0.01}"#)
            .expect("a partial config takes the defaults");
        assert_eq!(
            config,
            DriftConfig::Adwin(AdwinConfig {
                delta: 0.01,
                ..AdwinConfig::default()
            })
        );
        let bad = DriftConfig::Adwin(AdwinConfig {
            delta: 1.5,
            ..AdwinConfig::default()
        });
        assert!(bad.build().unwrap_err().to_string().contains("delta"));
        assert!(DriftConfig::named("kswin").is_none());
    }
}
