//! The Arrow layer: CSV and Parquet files through the arrow readers, encoded as rows of
//! `f64` for the algorithms, and results written back as Arrow data.

mod delayed;
mod encode;
mod input;
pub mod keyed;
mod label_sets;
mod operator;
mod output;
mod rows;
mod waiting;

pub use crate::core::{Encodings, OperatorStats, Ordinal};
pub use delayed::{Side, TimeMerge, outcome_schema};
pub use encode::{
    Encoded, StreamEncoder, encode_tables, encode_with_spec, grow_spec, infer_spec,
    infer_spec_declared, load_stream,
};
#[cfg(feature = "sql")]
pub(crate) use input::nominal_type;
pub use input::{Batches, FileFormat, Table, open_table, read_csv_bytes, read_table};
pub use keyed::{KeyMemory, KeyedOperator, OperatorFactory, SpillFn};
pub use label_sets::{LabelSetLayout, LabelSetReader, flag_column, label_set_layout};
pub use operator::{
    BatchOperator, BoostOperator, CLASSES_KEY, output_schema, ranking_output_schema,
};
pub use output::{BatchRows, BatchWriter, PipeFormat, RowsWriter, ScoredRows, write_batch};
pub use rows::RowEncoder;
