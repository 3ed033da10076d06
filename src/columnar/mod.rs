//! The Arrow layer: CSV and Parquet files through the arrow readers, encoded as rows of
//! `f64` for the algorithms, and results written back as Arrow data.

mod encode;
mod input;
mod label_sets;
mod operator;
#[cfg(test)]
pub(crate) use operator::tests as operator_tests;
mod output;
mod ranking;
mod rows;

pub use crate::core::{Encodings, Ordinal};
pub use encode::{
    Encoded, StreamEncoder, encode_tables, encode_with_spec, grow_spec, infer_spec,
    infer_spec_declared, load_stream,
};
#[cfg(feature = "sql")]
pub(crate) use input::nominal_type;
pub use input::{Batches, FileFormat, Table, open_table, read_csv_bytes, read_table};
pub use label_sets::{LabelSetLayout, LabelSetReader, flag_column, label_set_layout};
pub use operator::BoostOperator;
pub use output::{
    BatchRows, BatchWriter, CLASSES_KEY, PipeFormat, RowsWriter, ScoredRows, output_schema,
    ranking_output_schema, write_batch,
};
pub use rows::RowEncoder;
pub(crate) use rows::utf8;
