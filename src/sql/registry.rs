//! Models by name, shared by every SQL function of a session.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use datafusion::arrow::datatypes::{Schema, SchemaRef};

use super::live::{Frozen, LiveSlot};
use crate::checkpoint::{self, Metadata, StreamState};
use crate::columnar::{
    Encodings, LabelSetLayout, label_set_layout, nominal_type, output_schema, ranking_output_schema,
};
use crate::core::{ClassSet, Feature, StreamSpec};
use crate::model::{Model, ModelConfig};
use crate::runtime::live::CheckpointPolicy;
use crate::runtime::{Cursor, OperatorStats};
use crate::{Config, Error, Result};

/// Where a registered model comes from.
#[derive(Debug, Clone)]
pub enum ModelSource {
    /// A fresh model: built for the columns a query passes, with these classes and seed.
    Config {
        /// The algorithm and its parameters (boxed: the largest of the variants).
        config: Box<ModelConfig>,
        /// The class set, in id order.
        classes: Vec<String>,
        /// Seed of the model's random choices.
        seed: u64,
    },
    /// A trained model loaded from a checkpoint.
    Checkpoint {
        /// The file.
        path: PathBuf,
        /// Its metadata.
        metadata: Metadata,
        /// The model and its stream, frozen: queries score with it and start their
        /// training from it.
        state: Frozen,
    },
    /// A live model: bound to a checkpoint that the queries training it commit to
    /// ([`super::live`]).
    Live(Arc<LiveSlot>),
}

/// Models by name. Cloning shares the same registry.
#[derive(Debug, Clone, Default)]
pub struct ModelRegistry {
    models: Arc<RwLock<BTreeMap<String, ModelSource>>>,
}

impl PartialEq for ModelRegistry {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.models, &other.models)
    }
}

impl Eq for ModelRegistry {}

impl ModelRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        ModelRegistry::default()
    }

    /// Registers a fresh model by config. Its features are the columns a query passes; its
    /// classes are fixed here.
    pub fn register_config(
        &self, name: &str, config: ModelConfig, classes: Vec<String>, seed: u64,
    ) -> Result<()> {
        config.validate()?;
        config.check_fresh()?;
        ClassSet::new(classes.clone())?;
        self.insert(
            name,
            ModelSource::Config {
                config: Box::new(config),
                classes,
                seed,
            },
        );
        Ok(())
    }

    /// Loads a checkpoint under `name`.
    pub fn load_checkpoint(&self, name: &str, path: &Path) -> Result<()> {
        self.insert(name, ModelSource::checkpoint(path)?);
        Ok(())
    }

    /// Registers a live model under `name`: the checkpoint at `policy.path` if it exists,
    /// else a fresh model of `fresh` (config, classes, seed), created at the first query
    /// that trains it. Queries that train it start from its last commit and commit by
    /// `policy` and at their end; `boost_predict` scores with the last commit.
    pub fn register_live(
        &self, name: &str, policy: CheckpointPolicy, fresh: Option<(ModelConfig, Vec<String>, u64)>,
    ) -> Result<()> {
        let slot = LiveSlot::open(name, policy, fresh)?;
        self.insert(name, ModelSource::Live(Arc::new(slot)));
        Ok(())
    }

    /// A registry of one model: what a plan node decoded on another machine reads.
    #[cfg(feature = "ballista")]
    pub(crate) fn of_one(name: &str, source: ModelSource) -> Self {
        let registry = ModelRegistry::new();
        registry.insert(name, source);
        registry
    }

    fn insert(&self, name: &str, source: ModelSource) {
        self.models
            .write()
            .expect("registry lock")
            .insert(name.to_string(), source);
    }

    /// The model registered under `name`.
    pub fn get(&self, name: &str) -> Result<ModelSource> {
        let models = self.models.read().expect("registry lock");
        models.get(name).cloned().ok_or_else(|| {
            Error::config(
                "model",
                format!(
                    "no model named `{name}` (registered: {})",
                    models.keys().cloned().collect::<Vec<_>>().join(", ")
                ),
            )
        })
    }

    /// Every registered model, by name.
    pub fn entries(&self) -> Vec<(String, ModelSource)> {
        let models = self.models.read().expect("registry lock");
        models.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
    }
}

impl ModelSource {
    /// The trained model of the checkpoint at `path`, frozen.
    pub fn checkpoint(path: &Path) -> Result<Self> {
        let metadata = checkpoint::read_metadata(path)?;
        let state = checkpoint::load(path)?;
        Ok(ModelSource::Checkpoint {
            path: path.to_path_buf(),
            metadata,
            state: Arc::new(state),
        })
    }

    /// A model to train on a stream whose feature columns are `features` and whose label
    /// column is `label` (or, `multi_label`, whose label sets are in `<label>_<name>`
    /// columns), with the stream state it starts from. A checkpoint keeps its own task.
    pub fn start(
        &self, features: &Schema, label: &str, multi_label: bool,
    ) -> Result<(Model, StreamState)> {
        match self {
            ModelSource::Config {
                config,
                classes,
                seed,
            } => {
                let spec = spec_of(features, classes, multi_label)?;
                let model = config.build(&spec, *seed)?;
                let stream = StreamState {
                    config: (**config).clone(),
                    spec,
                    encodings: Encodings::default(),
                    label: label.to_string(),
                    stats: OperatorStats::default(),
                    position: None,
                    delayed: None,
                };
                Ok((model, stream))
            }
            ModelSource::Checkpoint { state, .. } => Ok((state.0.clone(), state.1.clone())),
            ModelSource::Live(slot) => match slot.committed() {
                Some(state) => Ok((state.0.clone(), state.1.clone())),
                None => fresh_of(slot)?.start(features, label, multi_label),
            },
        }
    }

    /// Whether the model ranks label sets on a stream of `input` with label `label`: a
    /// checkpoint's own task, or for a fresh model, whether the input holds label sets (a
    /// list-typed label column, or `<label>_<name>` flag columns instead of a label column).
    pub fn is_multi_label(&self, input: &Schema, label: &str) -> bool {
        match self.frozen() {
            Some(state) => state.1.spec.is_multi_label(),
            None => label_set_layout(input, label).is_some(),
        }
    }

    /// The schema of the scored rows of `input`: its columns, then the prediction columns
    /// of a classifier or of a ranker.
    pub fn output_schema(&self, input: &Schema, label: &str) -> SchemaRef {
        if self.is_multi_label(input, label) {
            ranking_output_schema(input, label, &self.classes())
        } else {
            output_schema(input, label, &self.classes())
        }
    }

    /// The class names, in id order.
    pub fn classes(&self) -> Vec<String> {
        match (self, self.frozen()) {
            (_, Some(state)) => state.1.spec.classes.names().to_vec(),
            (ModelSource::Config { classes, .. }, None) => classes.clone(),
            (ModelSource::Live(slot), None) => match slot.key_template() {
                Some(template) => template.spec.classes.names().to_vec(),
                None => slot.fresh().map(|f| f.1.clone()).unwrap_or_default(),
            },
            (ModelSource::Checkpoint { .. }, None) => unreachable!("a checkpoint is frozen"),
        }
    }

    /// The model to train on batches of `input`, learning from column `label`, and the
    /// stream state it starts from. A fresh model's features are the columns of `input`
    /// other than the label and those in `not_features`; a checkpoint's are its own.
    pub fn start_on(
        &self, input: &Schema, label: &str, not_features: &[&str],
    ) -> Result<(Model, StreamState)> {
        // A list-typed label column, or `<label>_<name>` flag columns without a label column,
        // make the stream multi-label; the flags are then targets too.
        let layout = label_set_layout(input, label);
        let multi_label = layout.is_some();
        let prefix = format!("{label}_");
        let flags = matches!(layout, Some(LabelSetLayout::Flags(_)));
        let is_target = |name: &str| name == label || (flags && name.starts_with(prefix.as_str()));
        let features = Schema::new(
            input
                .fields()
                .iter()
                .filter(|f| !is_target(f.name()) && !not_features.contains(&f.name().as_str()))
                .cloned()
                .collect::<Vec<_>>(),
        );
        let (model, stream) = self.start(&features, label, multi_label)?;
        // The counters and position go on from the model's (a live model's last commit).
        let stream = StreamState {
            label: label.to_string(),
            ..stream
        };
        Ok((model, stream))
    }

    /// An operator that trains a copy of this model on batches of `input` (see
    /// [`ModelSource::start_on`]); `origin` names the stream in errors.
    pub fn operator(
        &self, input: SchemaRef, label: &str, not_features: &[&str], origin: &str,
    ) -> Result<Cursor<Model>> {
        let (model, stream) = self.start_on(&input, label, not_features)?;
        Cursor::continuing(model, &stream, input, PathBuf::from(origin))
    }

    /// The trained model and its stream, for scoring (a live model's last commit); `None`
    /// for a model never trained.
    pub fn frozen(&self) -> Option<Frozen> {
        match self {
            ModelSource::Checkpoint { state, .. } => Some(state.clone()),
            ModelSource::Live(slot) => slot.committed(),
            ModelSource::Config { .. } => None,
        }
    }
}

/// A live model never committed, as the fresh model it starts as.
pub(crate) fn fresh_of(slot: &LiveSlot) -> Result<ModelSource> {
    let (config, classes, seed) = slot
        .fresh()
        .cloned()
        .ok_or_else(|| Error::config("live", "a live model with neither a commit nor a config"))?;
    Ok(ModelSource::Config {
        config: Box::new(config),
        classes,
        seed,
    })
}

/// The spec of a fresh model over these columns, kinds by the file readers' rule (text is
/// nominal, categories found as they come; numbers are numeric).
fn spec_of(features: &Schema, classes: &[String], multi_label: bool) -> Result<StreamSpec> {
    let features = features
        .fields()
        .iter()
        .map(|f| match nominal_type(f.data_type()) {
            Some(true) => Ok(Feature::nominal(f.name().clone(), Vec::<String>::new())),
            Some(false) => Ok(Feature::numeric(f.name().clone())),
            None => Err(Error::UnsupportedColumnType {
                file: PathBuf::from("query"),
                column: f.name().clone(),
                data_type: f.data_type().to_string(),
            }),
        })
        .collect::<Result<Vec<_>>>()?;
    let classes = ClassSet::new(classes.to_vec())?;
    Ok(if multi_label {
        StreamSpec::multi_label(features, classes)
    } else {
        StreamSpec::new(features, classes)
    })
}

impl std::hash::Hash for ModelRegistry {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (Arc::as_ptr(&self.models) as usize).hash(state);
    }
}
