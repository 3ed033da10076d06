//! `streamboost inspect`: a checkpoint's metadata and a summary of its model. The file is
//! only read.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use serde::Serialize;

use crate::boost::multiclass::AdaBoostOlm;
use crate::checkpoint::{self, Metadata, StreamState};
use crate::core::math::argmax;
use crate::core::{FeatureKind, Task};
use crate::model::Model;
use crate::{Classifier, Result};

/// Arguments of `streamboost inspect`.
#[derive(Debug, Args)]
pub struct InspectArgs {
    /// The checkpoint (a Parquet file written by `replay --save`).
    pub path: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Size and shape of the trees.
#[derive(Debug, Serialize)]
struct TreeSummary {
    trees: usize,
    nodes: usize,
    leaves: usize,
    active_leaves: usize,
    mean_depth: f64,
    max_depth: u32,
}

/// The booster's vectors in brief.
#[derive(Debug, Serialize)]
struct BoosterSummary {
    rows_learnt: u64,
    alpha_min: f64,
    alpha_mean: f64,
    alpha_max: f64,
    /// The expert Hedge weighs most, and its probability.
    hedge_best_expert: usize,
    hedge_best_probability: f64,
}

#[derive(Debug, Serialize)]
struct Inspection<'a> {
    file: String,
    metadata: &'a Metadata,
    label: &'a str,
    /// Multiclass, or multi-label (the classes are then the labels a set is drawn from).
    task: Task,
    classes: &'a [String],
    features: Vec<String>,
    trees: TreeSummary,
    booster: Option<BoosterSummary>,
}

/// Runs `streamboost inspect`.
pub fn run(args: &InspectArgs) -> Result<()> {
    let metadata = checkpoint::read_metadata(&args.path)?;
    let (model, stream) = checkpoint::load(&args.path)?;
    let inspection = Inspection {
        file: args.path.display().to_string(),
        metadata: &metadata,
        label: &stream.label,
        task: stream.spec.task,
        classes: stream.spec.classes.names(),
        features: features(&stream),
        trees: trees(&model),
        booster: booster(&model),
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        let json = serde_json::to_string_pretty(&inspection).expect("summaries serialize");
        let _ = writeln!(out, "{json}");
    } else {
        print_text(&mut out, &inspection);
    }
    Ok(())
}

fn features(stream: &StreamState) -> Vec<String> {
    stream
        .spec
        .features
        .iter()
        .map(|f| match &f.kind {
            FeatureKind::Numeric => format!("{} (numeric)", f.name),
            FeatureKind::Nominal { categories } => {
                format!("{} (nominal, {} categories)", f.name, categories.len())
            }
        })
        .collect()
}

fn trees(model: &Model) -> TreeSummary {
    let trees = model.trees();
    TreeSummary {
        trees: trees.len(),
        nodes: trees.iter().map(|t| t.n_nodes()).sum(),
        leaves: trees.iter().map(|t| t.n_leaves()).sum(),
        active_leaves: trees.iter().map(|t| t.n_active_leaves()).sum(),
        mean_depth: trees.iter().map(|t| f64::from(t.depth())).sum::<f64>()
            / trees.len().max(1) as f64,
        max_depth: trees.iter().map(|t| t.depth()).max().unwrap_or(0),
    }
}

fn booster(model: &Model) -> Option<BoosterSummary> {
    match model {
        Model::AdaOlm(m) => Some(adaptive(m)),
        Model::AdaOva(m) => Some(adaptive(m)),
        Model::Scaled(m) => booster(m.model()),
        _ => None,
    }
}

fn adaptive<L: Classifier>(m: &AdaBoostOlm<L>) -> BoosterSummary {
    let alpha = m.alphas();
    let p = m.hedge().probabilities();
    let best = argmax(p);
    BoosterSummary {
        rows_learnt: m.rows_learnt(),
        alpha_min: alpha.iter().copied().fold(f64::INFINITY, f64::min),
        alpha_mean: alpha.iter().sum::<f64>() / alpha.len() as f64,
        alpha_max: alpha.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        hedge_best_expert: best,
        hedge_best_probability: p[best],
    }
}

fn print_text(out: &mut impl Write, i: &Inspection<'_>) {
    let m = i.metadata;
    let _ = writeln!(out, "file            {}", i.file);
    let _ = writeln!(
        out,
        "format          version {} (readable from version {}), written by streamboost {}",
        m.format_version, m.compatible_from, m.crate_version
    );
    let _ = writeln!(out, "algorithm       {}", m.algorithm);
    let _ = writeln!(out, "config          {}", m.config);
    let _ = writeln!(
        out,
        "rows            {} seen, {} learnt",
        m.rows_seen, m.rows_learnt
    );
    let _ = writeln!(out, "fingerprint     {}", m.fingerprint);
    let _ = writeln!(out, "checksum        {}", m.digest);
    let _ = writeln!(out, "label           {}", i.label);
    let kind = match i.task {
        Task::Multiclass => "classes        ",
        Task::MultiLabel => "labels (sets)  ",
    };
    let _ = writeln!(out, "{kind} {}", i.classes.join(", "));
    let _ = writeln!(out, "features        {}", i.features.join(", "));
    let t = &i.trees;
    let _ = writeln!(
        out,
        "trees           {} trees, {} nodes, {} leaves ({} active), depth mean {:.1} max {}",
        t.trees, t.nodes, t.leaves, t.active_leaves, t.mean_depth, t.max_depth
    );
    if let Some(b) = &i.booster {
        let _ = writeln!(
            out,
            "alpha           min {:.4} mean {:.4} max {:.4}",
            b.alpha_min, b.alpha_mean, b.alpha_max
        );
        let _ = writeln!(
            out,
            "hedge           expert {} has the largest weight ({:.4})",
            b.hedge_best_expert, b.hedge_best_probability
        );
    }
}
