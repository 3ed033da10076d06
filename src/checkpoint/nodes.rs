//! Trees as one table: a row per node of every tree, in (tree, node id) order.
//!
//! | column | type | meaning |
//! |---|---|---|
//! | `tree` | u32 | member index (0 for a single tree) |
//! | `node` | u32 | node id within the tree (`0..n`, the root first) |
//! | `depth` | u32 | depth (root = 0) |
//! | `kind` | utf8 | `leaf` or `split` |
//! | `test` | utf8? | `numeric` (`x ≤ threshold` → branch 0), `multiway`, `binary` (`x = category` → branch 0) |
//! | `feature` | utf8? | the tested feature's name |
//! | `threshold` | f64? | numeric tests |
//! | `category` | u32? | binary tests: the category code |
//! | `children` | list<u32?> | child id per branch, null where a branch has no child yet |
//! | `class_weights` | `list<f64>` | `n[c]`: a leaf's, or a split node's when it was split |
//! | `weight` | f64 | a leaf's `W`, a split node's weight below it |
//! | `leaf_state` | utf8? | `active`, `inactive`, `parked` |
//! | `weight_at_last_attempt`, `mc_correct`, `nb_correct` | f64? | leaf bookkeeping |
//! | `observers` | utf8? | a leaf's attribute observers, JSON (exact floats) |
//!
//! The observers are the one nested part; JSON keeps them readable from SQL while their
//! numbers round-trip exactly.

use std::hash::Hasher;
use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, Float64Builder, ListBuilder, StringBuilder, UInt32Builder,
};
use arrow::datatypes::{DataType, Field, Float64Type, Schema, SchemaRef, UInt32Type};
use arrow::record_batch::RecordBatch;
use twox_hash::XxHash64;

use crate::core::StreamSpec;
use crate::weak::hoeffding::arena::NodeRecord;
use crate::weak::hoeffding::node::{Leaf, LeafState, Node, SplitNode, SplitTest};

/// The node table's schema.
pub fn schema() -> SchemaRef {
    let u32_list = DataType::List(Arc::new(Field::new("item", DataType::UInt32, true)));
    let f64_list = DataType::List(Arc::new(Field::new("item", DataType::Float64, true)));
    Arc::new(Schema::new(vec![
        Field::new("tree", DataType::UInt32, false),
        Field::new("node", DataType::UInt32, false),
        Field::new("depth", DataType::UInt32, false),
        Field::new("kind", DataType::Utf8, false),
        Field::new("test", DataType::Utf8, true),
        Field::new("feature", DataType::Utf8, true),
        Field::new("threshold", DataType::Float64, true),
        Field::new("category", DataType::UInt32, true),
        Field::new("children", u32_list, false),
        Field::new("class_weights", f64_list, false),
        Field::new("weight", DataType::Float64, false),
        Field::new("leaf_state", DataType::Utf8, true),
        Field::new("weight_at_last_attempt", DataType::Float64, true),
        Field::new("mc_correct", DataType::Float64, true),
        Field::new("nb_correct", DataType::Float64, true),
        Field::new("observers", DataType::Utf8, true),
    ]))
}

fn state_name(state: LeafState) -> &'static str {
    match state {
        LeafState::Active => "active",
        LeafState::Inactive => "inactive",
        LeafState::Parked => "parked",
    }
}

/// Builds the node table of `trees` (each tree's records in node-id order).
pub fn to_batch(trees: &[Vec<NodeRecord>], spec: &StreamSpec) -> RecordBatch {
    let mut tree = UInt32Builder::new();
    let mut node = UInt32Builder::new();
    let mut depth = UInt32Builder::new();
    let mut kind = StringBuilder::new();
    let mut test = StringBuilder::new();
    let mut feature = StringBuilder::new();
    let mut threshold = Float64Builder::new();
    let mut category = UInt32Builder::new();
    let mut children = ListBuilder::new(UInt32Builder::new());
    let mut class_weights = ListBuilder::new(Float64Builder::new());
    let mut weight = Float64Builder::new();
    let mut leaf_state = StringBuilder::new();
    let mut last_attempt = Float64Builder::new();
    let mut mc_correct = Float64Builder::new();
    let mut nb_correct = Float64Builder::new();
    let mut observers = StringBuilder::new();
    for (t, records) in trees.iter().enumerate() {
        for (id, r) in records.iter().enumerate() {
            tree.append_value(t as u32);
            node.append_value(id as u32);
            children.append_value(r.children.iter().copied());
            match r.test {
                None => {
                    test.append_null();
                    feature.append_null();
                    threshold.append_null();
                    category.append_null();
                }
                Some(t) => {
                    feature.append_value(&spec.features[t.feature()].name);
                    let (name, thr, cat) = match t {
                        SplitTest::Numeric { threshold, .. } => ("numeric", Some(threshold), None),
                        SplitTest::Multiway { .. } => ("multiway", None, None),
                        SplitTest::Binary { value, .. } => ("binary", None, Some(value)),
                    };
                    test.append_value(name);
                    threshold.append_option(thr);
                    category.append_option(cat);
                }
            }
            match &r.node {
                Node::Leaf(leaf) => {
                    depth.append_value(leaf.depth);
                    kind.append_value("leaf");
                    class_weights.append_value(leaf.class_weights.iter().map(|&w| Some(w)));
                    weight.append_value(leaf.total);
                    leaf_state.append_value(state_name(leaf.state));
                    last_attempt.append_value(leaf.weight_at_last_attempt);
                    mc_correct.append_value(leaf.mc_correct);
                    nb_correct.append_value(leaf.nb_correct);
                    observers.append_value(
                        serde_json::to_string(&leaf.observers).expect("observers serialize"),
                    );
                }
                Node::Split(split) => {
                    depth.append_value(split.depth);
                    kind.append_value("split");
                    class_weights.append_value(split.class_weights.iter().map(|&w| Some(w)));
                    weight.append_value(split.weight);
                    leaf_state.append_null();
                    last_attempt.append_null();
                    mc_correct.append_null();
                    nb_correct.append_null();
                    observers.append_null();
                }
            }
        }
    }
    let columns: Vec<ArrayRef> = vec![
        Arc::new(tree.finish()),
        Arc::new(node.finish()),
        Arc::new(depth.finish()),
        Arc::new(kind.finish()),
        Arc::new(test.finish()),
        Arc::new(feature.finish()),
        Arc::new(threshold.finish()),
        Arc::new(category.finish()),
        Arc::new(children.finish()),
        Arc::new(class_weights.finish()),
        Arc::new(weight.finish()),
        Arc::new(leaf_state.finish()),
        Arc::new(last_attempt.finish()),
        Arc::new(mc_correct.finish()),
        Arc::new(nb_correct.finish()),
        Arc::new(observers.finish()),
    ];
    RecordBatch::try_new(schema(), columns).expect("columns match the node schema")
}

/// Whether a table read back has the node table's columns: what [`digest`] and
/// [`from_batch`] may assume.
pub fn check_schema(found: &Schema) -> Result<(), String> {
    if found.fields() == schema().fields() {
        Ok(())
    } else {
        Err("the node table does not have the expected columns".into())
    }
}

/// Reads the node rows back into `n_trees` arenas. Errors say which row is wrong;
/// tree-shape checks are the tree's own ([`crate::weak::HoeffdingTree::put_nodes`]).
pub fn from_batch(
    batch: &RecordBatch, n_trees: usize, spec: &StreamSpec,
) -> Result<Vec<Vec<NodeRecord>>, String> {
    let mut trees: Vec<Vec<NodeRecord>> = (0..n_trees).map(|_| Vec::new()).collect();
    check_schema(&batch.schema())?;
    let u32s = |i: usize| batch.column(i).as_primitive::<UInt32Type>();
    let f64s = |i: usize| batch.column(i).as_primitive::<Float64Type>();
    let texts = |i: usize| batch.column(i).as_string::<i32>();
    let (tree, node, depth) = (u32s(0), u32s(1), u32s(2));
    let (kind, test, feature) = (texts(3), texts(4), texts(5));
    let (threshold, category) = (f64s(6), u32s(7));
    let (children, class_weights) = (
        batch.column(8).as_list::<i32>(),
        batch.column(9).as_list::<i32>(),
    );
    let weight = f64s(10);
    let leaf_state = texts(11);
    let (last_attempt, mc_correct, nb_correct) = (f64s(12), f64s(13), f64s(14));
    let observers = texts(15);
    for r in 0..batch.num_rows() {
        let at = |what: &str| format!("node table row {r}: {what}");
        let t = tree.value(r) as usize;
        let records = trees
            .get_mut(t)
            .ok_or_else(|| at(&format!("tree {t} of a model with {n_trees}")))?;
        if node.value(r) as usize != records.len() {
            return Err(at("nodes out of order"));
        }
        let weights: Vec<f64> = {
            let list = class_weights.value(r);
            let list = list.as_primitive::<Float64Type>();
            if list.null_count() > 0 {
                return Err(at("a null class weight"));
            }
            list.values().to_vec()
        };
        let child_ids: Vec<Option<u32>> = children
            .value(r)
            .as_primitive::<UInt32Type>()
            .iter()
            .collect();
        let required = |a: &dyn Array, name: &str| {
            if a.is_valid(r) {
                Ok(())
            } else {
                Err(at(&format!("`{name}` is null")))
            }
        };
        let split_test = if test.is_valid(r) {
            required(feature, "feature")?;
            let name = feature.value(r);
            let column = spec
                .features
                .iter()
                .position(|f| f.name == name)
                .ok_or_else(|| at(&format!("unknown feature `{name}`")))?
                as u32;
            Some(match test.value(r) {
                "numeric" => {
                    required(threshold, "threshold")?;
                    SplitTest::Numeric {
                        feature: column,
                        threshold: threshold.value(r),
                    }
                }
                "multiway" => SplitTest::Multiway { feature: column },
                "binary" => {
                    required(category, "category")?;
                    SplitTest::Binary {
                        feature: column,
                        value: category.value(r),
                    }
                }
                other => return Err(at(&format!("unknown test `{other}`"))),
            })
        } else {
            None
        };
        let stats = match kind.value(r) {
            "split" => Node::Split(SplitNode {
                class_weights: weights,
                weight: weight.value(r),
                depth: depth.value(r),
            }),
            "leaf" => {
                for (a, name) in [
                    (last_attempt, "weight_at_last_attempt"),
                    (mc_correct, "mc_correct"),
                    (nb_correct, "nb_correct"),
                ] {
                    required(a, name)?;
                }
                required(leaf_state, "leaf_state")?;
                required(observers, "observers")?;
                Node::Leaf(Leaf {
                    class_weights: weights,
                    total: weight.value(r),
                    weight_at_last_attempt: last_attempt.value(r),
                    depth: depth.value(r),
                    state: match leaf_state.value(r) {
                        "active" => LeafState::Active,
                        "inactive" => LeafState::Inactive,
                        "parked" => LeafState::Parked,
                        other => return Err(at(&format!("unknown leaf state `{other}`"))),
                    },
                    observers: serde_json::from_str(observers.value(r))
                        .map_err(|e| at(&format!("observers: {e}")))?,
                    mc_correct: mc_correct.value(r),
                    nb_correct: nb_correct.value(r),
                })
            }
            other => return Err(at(&format!("unknown node kind `{other}`"))),
        };
        records.push(NodeRecord {
            node: stats,
            test: split_test,
            children: child_ids,
        });
    }
    Ok(trees)
}

/// A checksum of the table's values (not of their encoding): every cell's validity and
/// value, column by column, list cells with their lengths. It checks what the Parquet
/// reader decoded against what the writer was given. The table has [`schema`]'s columns
/// ([`check_schema`]).
pub fn digest(batch: &RecordBatch, hasher: &mut XxHash64) {
    for column in batch.columns() {
        digest_array(column.as_ref(), hasher);
    }
}

fn digest_array(a: &dyn Array, h: &mut XxHash64) {
    for r in 0..a.len() {
        if a.is_null(r) {
            h.write_u8(0);
            continue;
        }
        h.write_u8(1);
        match a.data_type() {
            DataType::UInt32 => h.write_u32(a.as_primitive::<UInt32Type>().value(r)),
            DataType::Float64 => h.write_u64(a.as_primitive::<Float64Type>().value(r).to_bits()),
            DataType::Utf8 => {
                let v = a.as_string::<i32>().value(r);
                h.write_u64(v.len() as u64);
                h.write(v.as_bytes());
            }
            DataType::List(_) => {
                let v = a.as_list::<i32>().value(r);
                h.write_u64(v.len() as u64);
                digest_array(v.as_ref(), h);
            }
            other => unreachable!("the node table has no {other} column"),
        }
    }
}
