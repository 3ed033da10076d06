//! The machinery behind the catalogue: the macro that turns its rows into enums and
//! dispatch, the capabilities a row declares, the merge of a partial JSON config over an
//! algorithm's defaults, and the tree preset of those defaults.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use super::{Algorithm, ModelConfig};
use crate::weak::hoeffding::Preset;
use crate::weak::{HoeffdingTreeConfig, WeakLearnerConfig};
use crate::{Error, Result};

/// What an algorithm is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// One learner on its own.
    Single,
    /// An online booster over weak learners.
    Booster,
    /// A booster trained in one pass over a logged table (`streamboost train`): it scores
    /// wherever an online model does, but does not learn online.
    Batch,
}

/// What an algorithm learns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Learns {
    /// Any number of classes (multi-label streams one relevant label at a time).
    Multiclass,
    /// Exactly two classes.
    Binary,
    /// Label sets, natively (a multiclass row is the set of its one label).
    Ranking,
}

/// What the catalogue says of an algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Capabilities {
    /// A single learner or a booster.
    pub role: Role,
    /// The streams it learns.
    pub learns: Learns,
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Algorithm {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        let known = || Algorithm::ALL.iter().map(|a| a.name()).collect::<Vec<_>>();
        Algorithm::ALL
            .iter()
            .copied()
            .find(|a| a.name() == s)
            .ok_or_else(|| Error::UnknownAlgorithm {
                name: s.to_string(),
                known: known().join(", "),
            })
    }
}

/// `defaults` with `over` laid on top: objects merge key by key, anything else in `over`
/// replaces what is in `defaults`. An object whose variant tag (`learner`) differs from the
/// default's is another variant: it is laid over that variant's defaults, as
/// `variant_defaults(tag, name)` gives them, instead of the default's object. So is a
/// one-key object (an externally tagged variant, `{"uniform-random": [5, 200]}`) whose key
/// differs from the default's.
pub(crate) fn merge(
    defaults: serde_json::Value, over: serde_json::Value,
    variant_defaults: &dyn Fn(&str, &str) -> Option<serde_json::Value>,
) -> serde_json::Value {
    use serde_json::Value;
    match (defaults, over) {
        (Value::Object(mut base), Value::Object(over)) => {
            // (A nested model's `algorithm` never reaches here: `from_json` reads it whole.)
            let retagged = over
                .get("learner")
                .and_then(Value::as_str)
                .and_then(|name| {
                    (base.get("learner").and_then(Value::as_str) != Some(name))
                        .then_some(("learner", name))
                });
            // An externally tagged enum is an object of one key: another key is another
            // variant, which replaces the default's.
            let other_variant = base.len() == 1 && over.len() == 1 && over.keys().ne(base.keys());
            if other_variant {
                return Value::Object(over);
            }
            if let Some((tag, name)) = retagged {
                return match variant_defaults(tag, name) {
                    Some(other) => merge(other, Value::Object(over), variant_defaults),
                    None => Value::Object(over),
                };
            }
            for (key, value) in over {
                let merged = match base.remove(&key) {
                    Some(default) => merge(default, value, variant_defaults),
                    None => value,
                };
                base.insert(key, merged);
            }
            Value::Object(base)
        }
        (_, over) => over,
    }
}

/// Derives, from one row per model variant, the `Algorithm`, `ModelConfig` and `Model`
/// enums and their dispatch. A row:
///
/// ```text
/// Variant("serde-tag"): ConfigType => ModelType, classifier|ranker [by |c| …, |m| …;] {
///     /// doc
///     AlgorithmVariant = "cli-name" (Role, Learns) => default config expression,
///     ...
/// }
/// ```
///
/// A variant serving several algorithms (OSBoost's combiners) says with `by` how a config
/// and a model tell which one they are. `ranker` marks a native [`crate::Ranker`]; the others
/// learn label sets through the singleton reduction.
macro_rules! catalogue {
    // The end of the family chain (see `crate::model`): every row gathered.
    (; $($rows:tt)*) => {
        catalogue! { $($rows)* }
    };
    ($(
        $variant:ident($tag:literal): $config:ty => $model:ty, $kind:ident
            $(by |$c:ident| $config_of:expr, |$m:ident| $model_of:expr;)? {
            $(
                $(#[doc = $doc:literal])*
                $alg:ident = $name:literal ($role:ident, $learns:ident) => $default:expr,
            )+
        }
    )+) => {
        /// The algorithms, by the names the command line and configs use.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum Algorithm {
            $($( $(#[doc = $doc])* #[serde(rename = $name)] $alg, )+)+
        }

        impl Algorithm {
            /// Every algorithm, in the order help texts list them.
            pub const ALL: &'static [Algorithm] = &[$($(Algorithm::$alg,)+)+];

            /// The name used on the command line and in configs.
            pub fn name(self) -> &'static str {
                match self { $($(Algorithm::$alg => $name,)+)+ }
            }

            /// One line on what the algorithm is (its doc comment).
            pub fn about(self) -> &'static str {
                match self { $($(Algorithm::$alg => concat!($($doc),*).trim_ascii(),)+)+ }
            }

            /// What the algorithm is and learns.
            pub fn capabilities(self) -> Capabilities {
                match self {
                    $($(Algorithm::$alg => Capabilities {
                        role: Role::$role,
                        learns: Learns::$learns,
                    },)+)+
                }
            }

            /// Whether the algorithm is a native multi-label ranker.
            pub fn is_ranker(self) -> bool {
                self.capabilities().learns == Learns::Ranking
            }

            /// Whether the algorithm is a booster (has weak learners).
            pub fn is_booster(self) -> bool {
                self.capabilities().role == Role::Booster
            }

            /// The algorithm at its defaults, which live beside its code.
            pub fn default_config(self) -> ModelConfig {
                match self { $($(Algorithm::$alg => ModelConfig::$variant($default),)+)+ }
            }
        }

        /// The configuration of any model, tagged by its algorithm name.
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "algorithm")]
        pub enum ModelConfig {
            $( #[doc = concat!("The config of `", $tag, "`.")] #[serde(rename = $tag)] $variant($config), )+
            /// Any model behind online feature scaling.
            #[serde(rename = "scaled")]
            Scaled(ScaledConfig<ModelConfig>),
        }

        /// Any model built from a [`ModelConfig`].
        // One model per stream, never held in bulk: boxing the larger variant would buy
        // nothing.
        #[allow(clippy::large_enum_variant)]
        #[derive(Debug, Clone, Serialize, Deserialize)]
        #[serde(tag = "algorithm")]
        pub enum Model {
            $( #[doc = concat!("A `", $tag, "` model.")] #[serde(rename = $tag)] $variant($model), )+
            /// Any model behind online feature scaling.
            #[serde(rename = "scaled")]
            Scaled(Scaled<Model>),
        }

        $(
            impl From<$config> for ModelConfig {
                fn from(c: $config) -> Self {
                    ModelConfig::$variant(c)
                }
            }

            impl From<$model> for Model {
                fn from(m: $model) -> Self {
                    Model::$variant(m)
                }
            }
        )+

        impl From<ScaledConfig<ModelConfig>> for ModelConfig {
            fn from(c: ScaledConfig<ModelConfig>) -> Self {
                ModelConfig::Scaled(c)
            }
        }

        impl From<Scaled<Model>> for Model {
            fn from(m: Scaled<Model>) -> Self {
                Model::Scaled(m)
            }
        }

        macro_rules! dispatch_config {
            ($self:expr, $x:ident => $body:expr) => {
                match $self { $(ModelConfig::$variant($x) => $body,)+ ModelConfig::Scaled($x) => $body }
            };
        }

        macro_rules! dispatch {
            ($self:expr, $x:ident => $body:expr) => {
                match $self { $(Model::$variant($x) => $body,)+ Model::Scaled($x) => $body }
            };
        }

        impl ModelConfig {
            /// The algorithm this config builds.
            pub fn algorithm(&self) -> Algorithm {
                match self {
                    $(ModelConfig::$variant(_c) => catalogue!(@of _c, [$(|$c| $config_of)?] $($alg)+),)+
                    ModelConfig::Scaled(c) => c.model.algorithm(),
                }
            }
        }

        impl Model {
            /// The algorithm of this model.
            pub fn algorithm(&self) -> Algorithm {
                match self {
                    $(Model::$variant(_m) => catalogue!(@of _m, [$(|$m| $model_of)?] $($alg)+),)+
                    Model::Scaled(m) => m.model().algorithm(),
                }
            }
        }

        /// Rankers learn label sets natively; every other model through
        /// [`ranking::learn_labels_as_classifier`], its class probabilities being its scores.
        impl Ranker for Model {
            fn n_labels(&self) -> usize {
                self.n_classes()
            }

            fn learn_labels(&mut self, x: &[f64], relevant: &[bool], weight: f64) {
                match self {
                    $(Model::$variant(m) => catalogue!(@ranker $kind m, learn_labels(x, relevant, weight)),)+
                    Model::Scaled(m) => m.learn_labels(x, relevant, weight),
                }
            }

            fn predict_scores(&self, x: &[f64], out: &mut [f64]) {
                match self {
                    $(Model::$variant(m) => catalogue!(@ranker $kind m, predict_scores(x, out)),)+
                    Model::Scaled(m) => m.predict_scores(x, out),
                }
            }

            fn learn_predict_scores(
                &mut self,
                x: &[f64],
                relevant: Option<&[bool]>,
                weight: f64,
                out: &mut [f64],
            ) {
                match self {
                    $(Model::$variant(m) => catalogue!(@ranker $kind m, learn_predict_scores(x, relevant, weight, out)),)+
                    Model::Scaled(m) => m.learn_predict_scores(x, relevant, weight, out),
                }
            }
        }
    };

    // The algorithm of a variant: its own where it has one, else what `by` says.
    (@of $x:ident, [] $alg:ident) => { Algorithm::$alg };
    (@of $x:ident, [|$c:ident| $of:expr] $($alg:ident)+) => {{
        let $c = $x;
        $of
    }};

    // Ranker calls: native, or the classifier's reduction.
    (@ranker ranker $m:ident, $f:ident($($a:expr),*)) => { Ranker::$f($m, $($a),*) };
    (@ranker classifier $m:ident, learn_labels($x:expr, $relevant:expr, $weight:expr)) => {
        ranking::learn_labels_as_classifier($m, $x, $relevant, $weight)
    };
    (@ranker classifier $m:ident, predict_scores($x:expr, $out:expr)) => {
        $m.predict_proba($x, $out)
    };
    (@ranker classifier $m:ident, learn_predict_scores($x:expr, $relevant:expr, $weight:expr, $out:expr)) => {{
        $m.predict_proba($x, $out);
        if let Some(relevant) = $relevant {
            ranking::learn_labels_as_classifier($m, $x, relevant, $weight);
        }
    }};
}

impl ModelConfig {
    /// A config from JSON that names its algorithm and only what differs from that
    /// algorithm's defaults: `{"algorithm": "ada-olm"}` is a whole config, and
    /// `{"algorithm": "ada-olm", "n_learners": 20}` changes one field. Nested objects merge the
    /// same way, so a weak learner's single field can be changed too; an object naming another
    /// variant (`{"weak": {"learner": "naive-bayes"}}`) replaces the default's. A complete
    /// config, as reports and checkpoints write it, reads back as itself. Unknown fields are
    /// errors.
    pub fn from_json(mut value: serde_json::Value) -> Result<Self> {
        let invalid = |message: String| Error::config("config", message);
        let name = value
            .as_object_mut()
            .and_then(|o| o.remove("algorithm"))
            .and_then(|n| n.as_str().map(str::to_string))
            .ok_or_else(|| invalid("a config is an object naming its \"algorithm\"".into()))?;
        let defaults = match name.as_str() {
            // A scaled model wraps another config; the scaling has no default (it is what
            // the wrapper is for).
            "scaled" => {
                let inner = value.as_object_mut().and_then(|o| o.remove("model"));
                let model = ModelConfig::from_json(inner.unwrap_or_default())?;
                serde_json::json!({"algorithm": "scaled", "model": model})
            }
            name => serde_json::to_value(algorithm_named(name)?.default_config())
                .expect("configs serialize"),
        };
        let merged = merge(defaults, value, &weak_defaults);
        serde_json::from_value(merged).map_err(|e| invalid(e.to_string()))
    }
}

/// The algorithm a config's `algorithm` field names: an algorithm's name, or the serde tag
/// that the configs of several algorithms share (`batch-boost`, whose `method` picks the
/// algorithm), which reads as the first of them, the rest of the config saying which.
fn algorithm_named(name: &str) -> Result<Algorithm> {
    name.parse::<Algorithm>().or_else(|unknown| {
        let tag = |a: &Algorithm| {
            serde_json::to_value(a.default_config()).expect("configs serialize")["algorithm"]
                == name
        };
        Algorithm::ALL.iter().copied().find(tag).ok_or(unknown)
    })
}

/// The defaults of weak learner `name` where a partial config switches to it.
fn weak_defaults(tag: &str, name: &str) -> Option<serde_json::Value> {
    let weak = WeakLearnerConfig::named(name).filter(|_| tag == "learner")?;
    Some(serde_json::to_value(weak).expect("configs serialize"))
}

/// The first Hoeffding tree config nested in `value`, without its feature subset (the
/// rankers' trees see one of their own).
fn first_tree(value: &serde_json::Value) -> Option<serde_json::Value> {
    match value {
        serde_json::Value::Object(o) if o.get("learner").is_some_and(|l| l == "hoeffding") => {
            let mut tree = value.clone();
            tree["feature_subset"] = serde_json::Value::Null;
            Some(tree)
        }
        serde_json::Value::Object(o) => o.values().find_map(first_tree),
        _ => None,
    }
}

/// The tree preset of `algorithm`'s members when flags change only their feature subset:
/// the preset its default config's trees are (\[JGT\]'s when it has none).
pub fn member_preset(algorithm: Algorithm) -> Preset {
    use Preset::*;
    let config = serde_json::to_value(algorithm.default_config()).expect("configs serialize");
    let Some(tree) = first_tree(&config) else {
        return JgtPaper;
    };
    let is = |preset: &Preset| {
        let weak = WeakLearnerConfig::from(HoeffdingTreeConfig::preset(*preset));
        first_tree(&serde_json::to_value(weak).expect("configs serialize")) == Some(tree.clone())
    };
    [JgtPaperNba, JgtPaper, Default, Moa]
        .into_iter()
        .find(is)
        .unwrap_or(JgtPaper)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learner::Config;

    #[test]
    fn member_preset_is_the_preset_of_each_boosters_default_trees() {
        for &algorithm in Algorithm::ALL {
            if !algorithm.is_booster() {
                continue;
            }
            let config = serde_json::to_value(algorithm.default_config()).unwrap();
            let Some(tree) = first_tree(&config) else {
                continue;
            };
            let preset = member_preset(algorithm);
            let expected =
                serde_json::to_value(WeakLearnerConfig::from(HoeffdingTreeConfig::preset(preset)))
                    .unwrap();
            assert_eq!(
                Some(tree),
                first_tree(&expected),
                "{algorithm}: its trees are not {preset:?}'s"
            );
        }
    }

    #[test]
    fn every_default_config_names_its_algorithm_and_round_trips() {
        for &algorithm in Algorithm::ALL {
            let config = algorithm.default_config();
            assert_eq!(config.algorithm(), algorithm);
            config.validate().unwrap();
            let json = serde_json::to_value(&config).unwrap();
            let back = ModelConfig::from_json(json.clone()).unwrap();
            assert_eq!(back, config, "{algorithm}");
            let named = ModelConfig::from_json(serde_json::json!({"algorithm": algorithm.name()}));
            // OSBoost's three algorithms share the tag `osboost`; the name picks the combiner.
            assert_eq!(named.unwrap(), config, "{algorithm}");
        }
    }

    #[test]
    fn a_partial_config_changes_only_what_it_names() {
        let json = serde_json::json!({"algorithm": "ada-olm", "n_learners": 7,
            "weak": {"grace_period": 50.0}});
        let ModelConfig::AdaOlm(c) = ModelConfig::from_json(json).unwrap() else {
            panic!("ada-olm");
        };
        assert_eq!(c.n_learners, 7);
        let WeakLearnerConfig::Hoeffding(tree) = &c.weak else {
            panic!("a tree");
        };
        assert_eq!(tree.grace_period, 50.0);
        assert_eq!(
            tree.randomized,
            HoeffdingTreeConfig::jgt_paper().randomized,
            "the rest of the preset stays"
        );
        let scale =
            serde_json::json!({"algorithm": "mbbm", "weight_scale": {"uniform-random": [5, 200]}});
        let ModelConfig::Mbbm(c) = ModelConfig::from_json(scale).unwrap() else {
            panic!("mbbm");
        };
        assert_eq!(
            c.weight_scale,
            crate::boost::WeightScale::UniformRandom(5.0, 200.0)
        );
        let other = serde_json::json!({"algorithm": "oza", "weak": {"learner": "naive-bayes"}});
        let ModelConfig::Oza(c) = ModelConfig::from_json(other).unwrap() else {
            panic!("oza");
        };
        assert_eq!(
            c.weak,
            WeakLearnerConfig::NaiveBayes(crate::weak::NaiveBayesConfig::default())
        );
        let scaled = serde_json::json!({"algorithm": "scaled", "scaling": "min-max",
            "model": {"algorithm": "osboost-exp", "n_learners": 3}});
        let ModelConfig::Scaled(c) = ModelConfig::from_json(scaled).unwrap() else {
            panic!("scaled");
        };
        assert_eq!(c.model.algorithm(), Algorithm::OsBoostExp);
        let unknown = serde_json::json!({"algorithm": "mbbm", "n_learner": 7});
        assert!(ModelConfig::from_json(unknown).is_err());
    }
}
