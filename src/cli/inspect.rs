//! `streamboost inspect`: a checkpoint's metadata and a summary of its model. The file is
//! only read.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use serde::Serialize;

use crate::Result;
use crate::boost::batch::BatchSummary;
use crate::checkpoint::{self, Metadata, StreamState};
use crate::core::{FeatureKind, Task};
use crate::learner::EnsembleSummary;
use crate::model::Model;
use crate::runtime::KeyedStore;
use crate::runtime::Position;
use crate::weak::Structure;

/// Arguments of `streamboost inspect`.
#[derive(Debug, Args)]
pub struct InspectArgs {
    /// The checkpoint: a Parquet file (`replay --save`, `run`), or a keyed checkpoint's
    /// directory (`run --key`, a keyed live model in SQL), whose keys are listed.
    pub path: PathBuf,
    /// Print JSON instead of text (a keyed checkpoint's: its whole manifest).
    #[arg(long)]
    pub json: bool,
    /// The keys of a keyed checkpoint listed in text (in key order).
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub keys: usize,
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
    /// A booster's members in brief (`None` for a single learner).
    ensemble: Option<EnsembleSummary>,
    /// A batch model's training in brief.
    #[serde(skip_serializing_if = "Option::is_none")]
    batch: Option<BatchSummary>,
    /// How far a live model has taken its input (`run`), if it was saved by one.
    #[serde(skip_serializing_if = "Option::is_none")]
    position: Option<&'a Position>,
    /// The files the model was read from: the base, then its deltas (a live model's
    /// incremental commits).
    chain: Vec<ChainFile>,
}

/// One file of a checkpoint's chain.
#[derive(Debug, Serialize)]
struct ChainFile {
    file: String,
    bytes: u64,
    /// Node rows it holds (a delta's: the nodes that changed).
    nodes: u64,
}

/// Runs `streamboost inspect`.
pub fn run(args: &InspectArgs) -> Result<()> {
    if KeyedStore::is_keyed(&args.path) {
        return keyed(args);
    }
    let metadata = checkpoint::read_metadata(&args.path)?;
    let (model, stream) = checkpoint::load(&args.path)?;
    let chain = checkpoint::chain_files(&args.path)?
        .into_iter()
        .map(|(file, bytes, nodes)| ChainFile {
            file: file.display().to_string(),
            bytes,
            nodes,
        })
        .collect();
    let inspection = Inspection {
        file: args.path.display().to_string(),
        metadata: &metadata,
        label: &stream.label,
        task: stream.spec.task,
        classes: stream.spec.classes.names(),
        features: features(&stream),
        trees: trees(&model),
        ensemble: model.ensemble(),
        batch: match &model {
            Model::BatchBoost(b) => Some(b.summary()),
            _ => None,
        },
        position: stream.position.as_ref(),
        chain,
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

/// A keyed checkpoint: its manifest, and its keys with their rows.
fn keyed(args: &InspectArgs) -> Result<()> {
    let store = KeyedStore::open_read_only(&args.path)?;
    let m = store.manifest();
    let mut out = std::io::stdout().lock();
    if args.json {
        let json = serde_json::to_string_pretty(m).expect("manifests serialize");
        let _ = writeln!(out, "{json}");
        return Ok(());
    }
    let (seen, learnt) = store.rows();
    let config = serde_json::to_string(&m.template.config).expect("configs serialize");
    let _ = writeln!(
        out,
        "directory       {} (one model per key)",
        args.path.display()
    );
    let _ = writeln!(out, "algorithm       {}", m.template.config.algorithm());
    let _ = writeln!(out, "config          {config}");
    let _ = writeln!(
        out,
        "keys            {}, {} commits",
        m.keys.len(),
        m.commits
    );
    let _ = writeln!(out, "rows            {seen} seen, {learnt} learnt");
    let drift = store.drift();
    if drift.any() {
        let _ = writeln!(
            out,
            "drift           {} learners replaced, {} subtrees swapped (over the keys)",
            drift.learners_replaced, drift.subtrees_swapped
        );
    }
    let unlisted = store.unlisted()?.len();
    if unlisted > 0 {
        let _ = writeln!(
            out,
            "uncommitted     {unlisted} packs or key files (keys spilled since the last commit, \
             or a commit cut short; not read, and deleted when the model is next opened to \
             learn)"
        );
    }
    if let Some(p) = &m.position {
        let whole = if p.done { ", whole" } else { "" };
        let _ = writeln!(out, "position        {} rows of {}{whole}", p.rows, p.file);
    }
    let _ = writeln!(out, "label           {}", m.template.label);
    let _ = writeln!(
        out,
        "classes         {}",
        m.template.spec.classes.names().join(", ")
    );
    let _ = writeln!(out, "features        {}", features(&m.template).join(", "));
    let _ = writeln!(
        out,
        "key             rows seen  rows learnt  learnt up to ts  file"
    );
    for e in m.keys.iter().take(args.keys) {
        let ts = e.ts.map_or("-".to_string(), |t| t.to_string());
        let key = e.key.as_deref().unwrap_or("NULL");
        let _ = writeln!(
            out,
            "{key:<15} {:>9}  {:>11}  {ts:>15}  {}",
            e.rows_seen,
            e.rows_learnt,
            e.location()
        );
    }
    if m.keys.len() > args.keys {
        let _ = writeln!(
            out,
            "… {} more keys (--keys N, or --json)",
            m.keys.len() - args.keys
        );
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
    if let Some(p) = i.position {
        let whole = if p.done { ", whole" } else { "" };
        let _ = writeln!(out, "position        {} rows of {}{whole}", p.rows, p.file);
    }
    if let [base, deltas @ ..] = &i.chain[..]
        && !deltas.is_empty()
    {
        let bytes: u64 = deltas.iter().map(|d| d.bytes).sum();
        let nodes: Vec<String> = deltas.iter().map(|d| d.nodes.to_string()).collect();
        let _ = writeln!(
            out,
            "chain           base of {} bytes, then {} deltas of {bytes} bytes ({} nodes)",
            base.bytes,
            deltas.len(),
            nodes.join(", ")
        );
    }
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
    if let Some(b) = &i.batch {
        let _ = writeln!(
            out,
            "batch           {}: {} hypotheses of {:.1} leaves on average, {} rounds, trained \
             on {} rows",
            b.model, b.hypotheses, b.mean_leaves, b.rounds, b.rows_trained
        );
        if let Some(r) = &b.last_round {
            let bound = r
                .loss_bound
                .map_or(String::new(), |b| format!(", loss bound {b:.4}"));
            let _ = writeln!(
                out,
                "last round      training error {:.4}{bound}",
                r.train_error
            );
        }
        let _ = writeln!(
            out,
            "online          does not learn online: {} labelled rows scored since, not learnt",
            b.rows_not_learnt
        );
    } else {
        let _ = writeln!(
            out,
            "trees           {} trees, {} nodes, {} leaves ({} active), depth mean {:.1} max {}",
            t.trees, t.nodes, t.leaves, t.active_leaves, t.mean_depth, t.max_depth
        );
    }
    if let Some(e) = &i.ensemble {
        let rows = e
            .rows_learnt
            .map_or(String::new(), |r| format!(", {r} rows learnt"));
        let _ = writeln!(out, "ensemble        {} members{rows}", e.members);
        if let Some(w) = &e.weights {
            let _ = writeln!(
                out,
                "member weights  min {:.4} mean {:.4} max {:.4}",
                w.min, w.mean, w.max
            );
        }
        if let Some((best, p)) = e.best_expert {
            let _ = writeln!(
                out,
                "hedge           expert {best} has the largest weight ({p:.4})"
            );
        }
    }
}
