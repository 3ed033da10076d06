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
//! | `observers` | `list<struct<kind: utf8, stats: list<f64>>>`? | a leaf's attribute observers, one per feature the tree sees (null where no value has reached the leaf) |
//!
//! An observer's `kind` is `numeric`, `nominal` or `disabled`; its `stats` are its numbers,
//! flat: per class `weight, mean, m2, min, max` for a numeric feature, and for a nominal one
//! `missing_weight`, the `k` class totals, then `k` weights per category code
//! ([`Observer::for_each_run`](crate::weak::hoeffding::observer::Observer::for_each_run)). Stored as binary floats they round-trip exactly, and stay
//! readable from SQL (`SELECT unnest(observers) FROM 'model.parquet'`).
//!
//! Format 1 spelled each leaf's observers as one JSON text in a `utf8` column: such tables
//! are still read ([`check_schema`] accepts both).

use std::hash::Hasher;
use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, BooleanBufferBuilder, Float64Array, Float64Builder, ListArray,
    ListBuilder, StringArray, StringBuilder, StructArray, UInt32Builder,
};
use arrow::buffer::{NullBuffer, OffsetBuffer};
use arrow::datatypes::{
    DataType, Field, FieldRef, Fields, Float64Type, Schema, SchemaRef, UInt32Type,
};
use arrow::record_batch::RecordBatch;
use twox_hash::XxHash64;

use crate::core::StreamSpec;
use crate::weak::hoeffding::arena::NodeRecord;
use crate::weak::hoeffding::node::{Leaf, LeafState, Node, SplitNode, SplitTest};
use crate::weak::hoeffding::observer::{ObserverData, Observers};

/// The item of a list column, as every list of the table names it.
fn item(data_type: DataType) -> FieldRef {
    Arc::new(Field::new("item", data_type, true))
}

/// The fields of one observer.
fn observer_fields() -> Fields {
    Fields::from(vec![
        Field::new("kind", DataType::Utf8, true),
        Field::new("stats", DataType::List(item(DataType::Float64)), true),
    ])
}

/// The node table's schema.
pub fn schema() -> SchemaRef {
    schema_with(DataType::List(item(DataType::Struct(observer_fields()))))
}

/// The node table's schema in format 1: a leaf's observers as one JSON text.
fn schema_v1() -> SchemaRef {
    schema_with(DataType::Utf8)
}

fn schema_with(observers: DataType) -> SchemaRef {
    let u32_list = DataType::List(item(DataType::UInt32));
    let f64_list = DataType::List(item(DataType::Float64));
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
        Field::new("observers", observers, true),
    ]))
}

fn state_name(state: LeafState) -> &'static str {
    match state {
        LeafState::Active => "active",
        LeafState::Inactive => "inactive",
        LeafState::Parked => "parked",
    }
}

/// Builds the node table of `trees` (each tree's records in node-id order), its builders
/// sized for them up front.
pub fn to_batch(trees: &[Vec<NodeRecord>], spec: &StreamSpec) -> RecordBatch {
    let (mut rows, mut observer_n, mut number_n) = (0, 0, 0);
    for r in trees.iter().flatten() {
        rows += 1;
        if let Node::Leaf(leaf) = &r.node {
            for o in leaf.observers.iter() {
                observer_n += 1;
                number_n += o.map_or(0, |o| o.number_count());
            }
        }
    }
    let mut table = NodeTable::with_capacity(rows, observer_n, number_n);
    for (t, records) in trees.iter().enumerate() {
        for (id, r) in records.iter().enumerate() {
            table.push(t as u32, id as u32, r, spec);
        }
    }
    table.finish()
}

/// Hashes every node of `trees` ([`record_hash`]) and tabulates those whose hash is not the
/// one `before` holds for it (every node of a tree or id `before` lacks; all of them
/// without `before`): the hashes, tree by tree, and the table of those rows in parts, in
/// (tree, node id) order. A tree's nodes are hashed and tabulated in one go, while they are
/// in the cache. On a thread of a pool of several ([`crate::core::spread_here`]) the trees
/// are shared out in as many parts, of about equal node counts, and done side by side.
pub fn hash_and_tabulate(
    trees: &[Vec<NodeRecord>], before: Option<&[Vec<u64>]>, spec: &StreamSpec,
) -> (Vec<Vec<u64>>, Vec<RecordBatch>) {
    let total: usize = trees.iter().map(Vec::len).sum();
    let parts = match crate::core::spread_here() {
        true => rayon::current_num_threads().min(total / PART_ROWS).max(1),
        false => 1,
    };
    // Cut the trees into `parts` runs of about `total / parts` nodes.
    let mut cuts = vec![0];
    let mut nodes = 0;
    for (t, tree) in trees.iter().enumerate() {
        nodes += tree.len();
        if nodes * parts >= total * cuts.len() && cuts.len() < parts {
            cuts.push(t + 1);
        }
    }
    cuts.push(trees.len());
    cuts.dedup();
    if cuts.len() == 1 {
        // No tree (a model of other learners): one empty table.
        cuts.push(0);
    }
    let part = |range: std::ops::Range<usize>| {
        let rows: usize = trees[range.clone()].iter().map(Vec::len).sum();
        let mut table = NodeTable::with_capacity(rows, 0, 0);
        let hashes: Vec<Vec<u64>> = range
            .map(|t| {
                let was = before.map(|b| b.get(t).map_or(&[][..], Vec::as_slice));
                trees[t]
                    .iter()
                    .enumerate()
                    .map(|(id, r)| {
                        let hash = record_hash(r);
                        if was.is_none_or(|was| was.get(id) != Some(&hash)) {
                            table.push(t as u32, id as u32, r, spec);
                        }
                        hash
                    })
                    .collect()
            })
            .collect();
        (hashes, table.finish())
    };
    let ranges: Vec<_> = cuts.windows(2).map(|w| w[0]..w[1]).collect();
    let done: Vec<(Vec<Vec<u64>>, RecordBatch)> = if ranges.len() > 1 {
        use rayon::prelude::*;
        ranges.into_par_iter().map(part).collect()
    } else {
        ranges.into_iter().map(part).collect()
    };
    let mut hashes = Vec::with_capacity(trees.len());
    let mut table = Vec::with_capacity(done.len());
    for (h, t) in done {
        hashes.extend(h);
        table.push(t);
    }
    (hashes, table)
}

/// Below this many nodes a part of the work on the node table is not worth a thread's
/// hand-off.
const PART_ROWS: usize = 512;

/// A node table being built, row by row.
struct NodeTable {
    tree: UInt32Builder,
    node: UInt32Builder,
    depth: UInt32Builder,
    kind: StringBuilder,
    test: StringBuilder,
    feature: StringBuilder,
    threshold: Float64Builder,
    category: UInt32Builder,
    children: ListBuilder<UInt32Builder>,
    class_weights: ListBuilder<Float64Builder>,
    weight: Float64Builder,
    leaf_state: StringBuilder,
    last_attempt: Float64Builder,
    mc_correct: Float64Builder,
    nb_correct: Float64Builder,
    observers: ObserversColumn,
}

impl NodeTable {
    /// A table with room for `n` rows, `observers` observers and `numbers` of their numbers.
    fn with_capacity(n: usize, observers: usize, numbers: usize) -> Self {
        NodeTable {
            tree: UInt32Builder::with_capacity(n),
            node: UInt32Builder::with_capacity(n),
            depth: UInt32Builder::with_capacity(n),
            kind: StringBuilder::with_capacity(n, 5 * n),
            test: StringBuilder::new(),
            feature: StringBuilder::new(),
            threshold: Float64Builder::with_capacity(n),
            category: UInt32Builder::with_capacity(n),
            children: ListBuilder::with_capacity(UInt32Builder::with_capacity(2 * n), n),
            class_weights: ListBuilder::with_capacity(Float64Builder::with_capacity(2 * n), n),
            weight: Float64Builder::with_capacity(n),
            leaf_state: StringBuilder::with_capacity(n, 6 * n),
            last_attempt: Float64Builder::with_capacity(n),
            mc_correct: Float64Builder::with_capacity(n),
            nb_correct: Float64Builder::with_capacity(n),
            observers: ObserversColumn::with_capacity(n, observers, numbers),
        }
    }

    /// Appends node `id` of tree `t`, `r`, of a stream whose features `spec` names.
    fn push(&mut self, t: u32, id: u32, r: &NodeRecord, spec: &StreamSpec) {
        self.tree.append_value(t);
        self.node.append_value(id);
        self.children.append_value(r.children.iter().copied());
        match r.test {
            None => {
                self.test.append_null();
                self.feature.append_null();
                self.threshold.append_null();
                self.category.append_null();
            }
            Some(t) => {
                self.feature.append_value(&spec.features[t.feature()].name);
                let (name, thr, cat) = match t {
                    SplitTest::Numeric { threshold, .. } => ("numeric", Some(threshold), None),
                    SplitTest::Multiway { .. } => ("multiway", None, None),
                    SplitTest::Binary { value, .. } => ("binary", None, Some(value)),
                };
                self.test.append_value(name);
                self.threshold.append_option(thr);
                self.category.append_option(cat);
            }
        }
        match &r.node {
            Node::Leaf(leaf) => {
                self.depth.append_value(leaf.depth);
                self.kind.append_value("leaf");
                self.class_weights
                    .append_value(leaf.class_weights.iter().map(|&w| Some(w)));
                self.weight.append_value(leaf.total);
                self.leaf_state.append_value(state_name(leaf.state));
                self.last_attempt.append_value(leaf.weight_at_last_attempt);
                self.mc_correct.append_value(leaf.mc_correct);
                self.nb_correct.append_value(leaf.nb_correct);
                self.observers.push_leaf(&leaf.observers);
            }
            Node::Split(split) => {
                self.depth.append_value(split.depth);
                self.kind.append_value("split");
                self.class_weights
                    .append_value(split.class_weights.iter().map(|&w| Some(w)));
                self.weight.append_value(split.weight);
                self.leaf_state.append_null();
                self.last_attempt.append_null();
                self.mc_correct.append_null();
                self.nb_correct.append_null();
                self.observers.push_none();
            }
        }
    }

    fn finish(mut self) -> RecordBatch {
        let columns: Vec<ArrayRef> = vec![
            Arc::new(self.tree.finish()),
            Arc::new(self.node.finish()),
            Arc::new(self.depth.finish()),
            Arc::new(self.kind.finish()),
            Arc::new(self.test.finish()),
            Arc::new(self.feature.finish()),
            Arc::new(self.threshold.finish()),
            Arc::new(self.category.finish()),
            Arc::new(self.children.finish()),
            Arc::new(self.class_weights.finish()),
            Arc::new(self.weight.finish()),
            Arc::new(self.leaf_state.finish()),
            Arc::new(self.last_attempt.finish()),
            Arc::new(self.mc_correct.finish()),
            Arc::new(self.nb_correct.finish()),
            self.observers.finish(),
        ];
        RecordBatch::try_new(schema(), columns).expect("columns match the node schema")
    }
}

/// The `observers` column, gathered in flat buffers (offsets, validity, values) and
/// assembled into its nested arrays at the end: a builder per nesting level would cost
/// several calls per observer.
struct ObserversColumn {
    /// Per row: where its observers end, and whether it has a list (a leaf's).
    rows: Vec<i32>,
    rows_valid: BooleanBufferBuilder,
    /// Per observer: where its kind's bytes and its numbers end, and whether it is there.
    kinds: Vec<i32>,
    kind_bytes: Vec<u8>,
    numbers: Vec<i32>,
    observers_valid: BooleanBufferBuilder,
    values: Vec<f64>,
}

impl ObserversColumn {
    fn with_capacity(rows: usize, observers: usize, numbers: usize) -> Self {
        let offsets = |n: usize| {
            let mut v = Vec::with_capacity(n + 1);
            v.push(0);
            v
        };
        ObserversColumn {
            rows: offsets(rows),
            rows_valid: BooleanBufferBuilder::new(rows),
            kinds: offsets(observers),
            kind_bytes: Vec::with_capacity(8 * observers),
            numbers: offsets(observers),
            observers_valid: BooleanBufferBuilder::new(observers),
            values: Vec::with_capacity(numbers),
        }
    }

    /// A leaf's observers: one entry per feature, null where unseen.
    fn push_leaf(&mut self, observers: &Observers) {
        for observer in observers.iter() {
            if let Some(o) = &observer {
                self.kind_bytes.extend_from_slice(o.kind().as_bytes());
                o.for_each_run(|xs| self.values.extend_from_slice(xs));
            }
            self.kinds.push(offset(self.kind_bytes.len()));
            self.numbers.push(offset(self.values.len()));
            self.observers_valid.append(observer.is_some());
        }
        self.rows.push(offset(self.kinds.len() - 1));
        self.rows_valid.append(true);
    }

    /// A split node's: null.
    fn push_none(&mut self) {
        self.rows.push(offset(self.kinds.len() - 1));
        self.rows_valid.append(false);
    }

    fn finish(mut self) -> ArrayRef {
        let fields = observer_fields();
        let observers_valid = NullBuffer::new(self.observers_valid.finish());
        let kinds = StringArray::new(
            OffsetBuffer::new(self.kinds.into()),
            self.kind_bytes.into(),
            Some(observers_valid.clone()),
        );
        let stats = ListArray::new(
            item(DataType::Float64),
            OffsetBuffer::new(self.numbers.into()),
            Arc::new(Float64Array::from(self.values)),
            Some(observers_valid.clone()),
        );
        let entries = StructArray::new(
            fields.clone(),
            vec![Arc::new(kinds), Arc::new(stats)],
            Some(observers_valid),
        );
        Arc::new(ListArray::new(
            item(DataType::Struct(fields)),
            OffsetBuffer::new(self.rows.into()),
            Arc::new(entries),
            Some(NullBuffer::new(self.rows_valid.finish())),
        ))
    }
}

/// A position in a column's values as an Arrow offset (a node table's column holds far
/// fewer than 2³¹ values: a single tree's rows are bounded by its memory).
fn offset(len: usize) -> i32 {
    i32::try_from(len).expect("a node table column of fewer than 2^31 values")
}

/// Whether a table read back has the node table's columns (of this format or of format 1):
/// what [`digest`] and [`for_each_row`] may assume.
pub fn check_schema(found: &Schema) -> Result<(), String> {
    if found.fields() == schema().fields() || found.fields() == schema_v1().fields() {
        Ok(())
    } else {
        Err("the node table does not have the expected columns".into())
    }
}

/// Reads each row of a node table: `visit(row, tree, node id, record)`.
pub fn for_each_row(
    batch: &RecordBatch, spec: &StreamSpec,
    mut visit: impl FnMut(usize, u32, u32, NodeRecord) -> Result<(), String>,
) -> Result<(), String> {
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
    let observers = batch.column(15);
    for r in 0..batch.num_rows() {
        let at = |what: &str| format!("node table row {r}: {what}");
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
                required(observers.as_ref(), "observers")?;
                let observers = read_observers(observers.as_ref(), r, weights.len())
                    .map_err(|e| at(&format!("observers: {e}")))?;
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
                    observers,
                    mc_correct: mc_correct.value(r),
                    nb_correct: nb_correct.value(r),
                })
            }
            other => return Err(at(&format!("unknown node kind `{other}`"))),
        };
        let record = NodeRecord {
            node: stats,
            test: split_test,
            children: child_ids,
        };
        visit(r, tree.value(r), node.value(r), record)?;
    }
    Ok(())
}

/// A hash of every value [`to_batch`] writes for `record` (its tree and id aside):
/// two records with the same hash are, but for a collision, the same row. A chain's writer
/// compares them to find the nodes that changed since its last file. Records that differ in
/// one word (a number, a child, a test) always hash differently ([`WordHash`]).
pub fn record_hash(record: &NodeRecord) -> u64 {
    let mut h = WordHash::default();
    let floats = |h: &mut WordHash, xs: &[f64]| {
        h.write_usize(xs.len());
        for x in xs {
            h.write_u64(x.to_bits());
        }
    };
    h.write_usize(record.children.len());
    for c in &record.children {
        h.write_u32(c.map_or(u32::MAX, |c| c));
    }
    match record.test {
        None => h.write_u8(0),
        Some(SplitTest::Numeric { feature, threshold }) => {
            h.write_u8(1);
            h.write_u32(feature);
            h.write_u64(threshold.to_bits());
        }
        Some(SplitTest::Multiway { feature }) => {
            h.write_u8(2);
            h.write_u32(feature);
        }
        Some(SplitTest::Binary { feature, value }) => {
            h.write_u8(3);
            h.write_u32(feature);
            h.write_u32(value);
        }
    }
    match &record.node {
        Node::Split(split) => {
            h.write_u8(0);
            h.write_u32(split.depth);
            h.write_u64(split.weight.to_bits());
            floats(&mut h, &split.class_weights);
        }
        Node::Leaf(leaf) => {
            h.write_u8(1);
            h.write_u32(leaf.depth);
            h.write(state_name(leaf.state).as_bytes());
            for x in [
                leaf.total,
                leaf.weight_at_last_attempt,
                leaf.mc_correct,
                leaf.nb_correct,
            ] {
                h.write_u64(x.to_bits());
            }
            floats(&mut h, &leaf.class_weights);
            for observer in leaf.observers.iter() {
                match observer {
                    None => h.write_u8(u8::MAX),
                    Some(o) => {
                        h.write(o.kind().as_bytes());
                        o.for_each_run(|xs| xs.iter().for_each(|x| h.write_u64(x.to_bits())));
                        h.write_usize(o.number_count());
                    }
                }
            }
        }
    }
    h.finish()
}

/// A hash of a stream of words, each mixed in by a bijection of the state (the word xored
/// in, a multiplication by an odd constant, a xor-shift): two streams of the same length
/// that differ in one word end in different states, whatever the word, and streams that
/// differ in several collide about once in 2⁶⁴. All a chain needs to find the nodes that
/// changed, at a few cycles a word; a hash of bytes (such as [`XxHash64`]) would need the
/// record's words gathered into a buffer first.
#[derive(Default)]
struct WordHash(u64);

impl Hasher for WordHash {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
        self.write_usize(bytes.len());
    }

    #[inline]
    fn write_u8(&mut self, x: u8) {
        self.write_u64(x.into());
    }

    #[inline]
    fn write_u32(&mut self, x: u32) {
        self.write_u64(x.into());
    }

    #[inline]
    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64);
    }

    #[inline]
    fn write_u64(&mut self, x: u64) {
        // The multiplier of SplitMix64's finalizer (odd, so the product is a bijection).
        let h = (self.0 ^ x).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        self.0 = h ^ (h >> 31);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// Row `r`'s observers, from a column of either format, for a leaf of `k` classes.
fn read_observers(column: &dyn Array, r: usize, k: usize) -> Result<Observers, String> {
    if let Some(texts) = column.as_string_opt::<i32>() {
        return serde_json::from_str(texts.value(r)).map_err(|e| e.to_string());
    }
    let entries = column.as_list::<i32>().value(r);
    let entries = entries.as_struct();
    let (kinds, stats) = (
        entries.column(0).as_string::<i32>(),
        entries.column(1).as_list::<i32>(),
    );
    let data = (0..entries.len())
        .map(|j| {
            if entries.is_null(j) {
                return Ok(None);
            }
            if kinds.is_null(j) || stats.is_null(j) {
                return Err(format!("observer {j} without its kind or stats"));
            }
            let values = stats.value(j);
            let values = values.as_primitive::<Float64Type>();
            if values.null_count() > 0 {
                return Err(format!("observer {j} has a null number"));
            }
            ObserverData::unflatten(kinds.value(j), values.values(), k)
                .map(Some)
                .map_err(|e| format!("observer {j}: {e}"))
        })
        .collect::<Result<Vec<_>, String>>()?;
    Observers::from_data(data)
}

/// A checksum of the table's values (not of their encoding): every cell's validity and
/// value, column by column, list cells with their lengths. It checks what the Parquet
/// reader decoded against what the writer was given. The table is given in `parts` (one or
/// more batches of its rows, in order): the checksum is that of their concatenation. The
/// table has [`schema`]'s columns ([`check_schema`]).
pub fn digest(parts: &[RecordBatch], hasher: &mut XxHash64) {
    // The bytes are gathered and hashed a block at a time: the hash of a stream of writes
    // is that of their concatenation, and one call per cell would cost more than the hash.
    let mut sink = Bytes(Vec::with_capacity(DIGEST_BLOCK));
    let columns = parts.first().map_or(0, RecordBatch::num_columns);
    for c in 0..columns {
        for part in parts {
            let column = part.column(c);
            digest_rows(column.as_ref(), 0..column.len(), &mut sink, hasher);
        }
    }
    hasher.write(&sink.0);
}

const DIGEST_BLOCK: usize = 1 << 16;

/// Bytes written through [`Hasher`]'s methods (a [`XxHash64`] given them in one call
/// finishes where one given them call by call does).
struct Bytes(Vec<u8>);

impl Hasher for Bytes {
    fn write(&mut self, bytes: &[u8]) {
        self.0.extend_from_slice(bytes);
    }

    // Fixed-size appends, inlined: the default methods pass a slice to `write`, a call to
    // `memcpy` for each cell.
    #[inline]
    fn write_u8(&mut self, x: u8) {
        self.0.push(x);
    }

    #[inline]
    fn write_u32(&mut self, x: u32) {
        self.0.extend_from_slice(&x.to_ne_bytes());
    }

    #[inline]
    fn write_u64(&mut self, x: u64) {
        self.0.extend_from_slice(&x.to_ne_bytes());
    }

    #[inline]
    fn write_usize(&mut self, x: usize) {
        self.0.extend_from_slice(&x.to_ne_bytes());
    }

    fn finish(&self) -> u64 {
        unreachable!("a byte sink is hashed by its owner")
    }
}

/// Adds rows `rows` of `a` to the checksum: for each, 0 if null, else 1 and its value
/// (strings and lists with their lengths first).
fn digest_rows(a: &dyn Array, rows: std::ops::Range<usize>, sink: &mut Bytes, h: &mut XxHash64) {
    if sink.0.len() >= DIGEST_BLOCK {
        h.write(&sink.0);
        sink.0.clear();
    }
    match a.data_type() {
        DataType::UInt32 => {
            let v = a.as_primitive::<UInt32Type>();
            for r in rows {
                match v.is_null(r) {
                    true => sink.write_u8(0),
                    false => {
                        sink.write_u8(1);
                        sink.write_u32(v.value(r));
                    }
                }
            }
        }
        DataType::Float64 => {
            let v = a.as_primitive::<Float64Type>();
            for r in rows {
                match v.is_null(r) {
                    true => sink.write_u8(0),
                    false => {
                        sink.write_u8(1);
                        sink.write_u64(v.value(r).to_bits());
                    }
                }
            }
        }
        DataType::Utf8 => {
            let v = a.as_string::<i32>();
            for r in rows {
                match v.is_null(r) {
                    true => sink.write_u8(0),
                    false => {
                        sink.write_u8(1);
                        let text = v.value(r);
                        sink.write_u64(text.len() as u64);
                        sink.write(text.as_bytes());
                    }
                }
            }
        }
        DataType::List(_) => {
            let v = a.as_list::<i32>();
            let offsets = v.value_offsets();
            for r in rows {
                match v.is_null(r) {
                    true => sink.write_u8(0),
                    false => {
                        sink.write_u8(1);
                        let (start, end) = (offsets[r] as usize, offsets[r + 1] as usize);
                        sink.write_u64((end - start) as u64);
                        digest_rows(v.values().as_ref(), start..end, sink, h);
                    }
                }
            }
        }
        DataType::Struct(_) => {
            let v = a.as_struct();
            for r in rows {
                match v.is_null(r) {
                    true => sink.write_u8(0),
                    false => {
                        sink.write_u8(1);
                        for column in v.columns() {
                            digest_rows(column.as_ref(), r..r + 1, sink, h);
                        }
                    }
                }
            }
        }
        other => unreachable!("the node table has no {other} column"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::{Rng, StreamSpec};
    use crate::weak::HoeffdingTreeConfig;
    use crate::{Classifier, Config};

    /// A grown tree's node records: numeric observers on 3 features, 3 classes.
    fn grown() -> (StreamSpec, Vec<NodeRecord>) {
        let spec = StreamSpec::numeric(3, 3).unwrap();
        let config = HoeffdingTreeConfig {
            grace_period: 30.0,
            ..Default::default()
        };
        let mut tree = config.build(&spec, 1).unwrap();
        let mut rng = Rng::new(5);
        for _ in 0..3000 {
            let x = [rng.uniform(), rng.uniform(), rng.uniform()];
            let y = usize::from(x[0] > 0.33) + usize::from(x[0] > 0.66);
            tree.learn(&x, y, 1.0);
        }
        let records = tree.take_nodes();
        assert!(records.len() > 5, "the tree grew: {} nodes", records.len());
        (spec, records)
    }

    /// Changing any one number of a leaf (its weights or one observer's statistics) changes
    /// its hash: each word is mixed in by a bijection of the state.
    #[test]
    fn a_one_word_change_always_changes_a_records_hash() {
        let (_, records) = grown();
        let leaf = records
            .iter()
            .find(|r| matches!(&r.node, Node::Leaf(l) if l.observers.iter().any(|o| o.is_some())))
            .expect("a leaf that observed");
        let before = record_hash(leaf);
        assert_eq!(record_hash(&leaf.clone()), before, "a copy hashes alike");
        let Node::Leaf(l) = &leaf.node else {
            unreachable!()
        };
        // The lowest bit, one in the middle, the sign.
        let flip = |x: f64, bit: u32| f64::from_bits(x.to_bits() ^ (1 << bit));
        for bit in [0, 40, 63] {
            let mut changed = leaf.clone();
            let Node::Leaf(cl) = &mut changed.node else {
                unreachable!()
            };
            cl.total = flip(cl.total, bit);
            assert_ne!(record_hash(&changed), before, "total, bit {bit}");
            let mut changed = leaf.clone();
            let Node::Leaf(cl) = &mut changed.node else {
                unreachable!()
            };
            let last = l.class_weights.len() - 1;
            cl.class_weights[last] = flip(cl.class_weights[last], bit);
            assert_ne!(record_hash(&changed), before, "a class weight, bit {bit}");
        }
        // One observer's statistics, through a round trip of its numbers.
        let j = l.observers.iter().position(|o| o.is_some()).unwrap();
        let o = l.observers.iter().nth(j).flatten().unwrap();
        let mut numbers = Vec::new();
        o.for_each_run(|xs| numbers.extend_from_slice(xs));
        assert_eq!(numbers.len(), o.number_count());
        for i in 0..numbers.len() {
            let mut bumped = numbers.clone();
            bumped[i] = f64::from_bits(bumped[i].to_bits() ^ 1);
            let data = l
                .observers
                .iter()
                .enumerate()
                .map(|(f, o)| {
                    o.map(|o| {
                        let mut xs = Vec::new();
                        o.for_each_run(|run| xs.extend_from_slice(run));
                        let xs = if f == j { bumped.clone() } else { xs };
                        ObserverData::unflatten(o.kind(), &xs, l.class_weights.len()).unwrap()
                    })
                })
                .collect();
            let mut changed = leaf.clone();
            let Node::Leaf(cl) = &mut changed.node else {
                unreachable!()
            };
            cl.observers = Observers::from_data(data).unwrap();
            assert_ne!(record_hash(&changed), before, "observer {j}, number {i}");
        }
    }

    /// A table tabulated in parts has the checksum of the whole table, and the single pass
    /// tabulates exactly the rows whose hash changed.
    #[test]
    fn parts_hash_as_their_whole_and_the_pass_takes_the_changed_rows() {
        let (spec, records) = grown();
        let trees = vec![records.clone(), records.clone(), records];
        let whole = to_batch(&trees, &spec);
        let digest_of = |parts: &[RecordBatch]| {
            let mut h = XxHash64::with_seed(0);
            digest(parts, &mut h);
            h.finish()
        };
        let cut = whole.num_rows() / 3;
        let parts = [
            whole.slice(0, cut),
            whole.slice(cut, whole.num_rows() - cut),
        ];
        assert_eq!(digest_of(&parts), digest_of(std::slice::from_ref(&whole)));

        let (hashes, all) = hash_and_tabulate(&trees, None, &spec);
        assert_eq!(digest_of(&all), digest_of(std::slice::from_ref(&whole)));
        let (none, empty) = hash_and_tabulate(&[], None, &spec);
        assert!(none.is_empty());
        assert_eq!(empty.len(), 1, "one table, empty");
        assert_eq!(empty[0].num_rows(), 0);
        // Tree 1 changed in one node; tree 2 is new to `before`.
        let mut before = hashes.clone();
        before[1][0] ^= 1;
        before.truncate(2);
        let (again, changed) = hash_and_tabulate(&trees, Some(&before), &spec);
        assert_eq!(again, hashes);
        let rows: usize = changed.iter().map(RecordBatch::num_rows).sum();
        assert_eq!(rows, 1 + trees[2].len());
        let first = &changed[0];
        assert_eq!(first.column(0).as_primitive::<UInt32Type>().value(0), 1);
        assert_eq!(first.column(1).as_primitive::<UInt32Type>().value(0), 0);
    }
}
