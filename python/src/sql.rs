//! streamboost's SQL functions for datafusion-python, through DataFusion's FFI.
//!
//! A [`Registry`] holds named models as the crate's `sql::ModelRegistry` does (a checkpoint,
//! a fresh model's config, a live model); [`Registry::functions`] gives the scalar functions
//! (`boost_predict`, `boost_predict_proba`) and the window function (`boost_prequential`)
//! over it, each an object with the PyCapsule method datafusion-python reads
//! (`__datafusion_scalar_udf__`, `__datafusion_window_udf__`): DataFusion's FFI structs,
//! stable within a DataFusion major. `streamboost/datafusion.py` refuses, at import, a
//! datafusion-python of another major than [`DATAFUSION_MAJOR`].
//!
//! `boost_score` is a plan node of its own, not a function, and plan nodes do not cross the
//! FFI; a table provider does: [`Registry::scored_table`] is `boost_score` over Arrow data
//! given from Python, as the crate's `sql::score::ScoredTable`.

use std::path::PathBuf;
use std::sync::Arc;

use datafusion::logical_expr::{ScalarUDF, WindowUDF};
use datafusion_ffi::proto::logical_extension_codec::FFI_LogicalExtensionCodec;
use datafusion_ffi::table_provider::FFI_TableProvider;
use datafusion_ffi::udf::FFI_ScalarUDF;
use datafusion_ffi::udwf::FFI_WindowUDF;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

use streamboost::model::ModelConfig;
use streamboost::runtime::live::CheckpointPolicy;
use streamboost::sql::score::ScoredTable;
use streamboost::sql::{ModelRegistry, functions};

use crate::{batches_of, parse_config, py_error};

/// The DataFusion major the FFI structs are built for (the crate's DataFusion).
pub const DATAFUSION_MAJOR: u32 = 55;

/// Named models that SQL functions score with (see the module doc).
#[pyclass(module = "streamboost._streamboost", frozen)]
pub struct Registry {
    inner: ModelRegistry,
}

#[pymethods]
impl Registry {
    #[new]
    fn new() -> Self {
        Registry {
            inner: ModelRegistry::new(),
        }
    }

    /// Registers the checkpoint at `path` as model `name`.
    fn load_checkpoint(&self, py: Python<'_>, name: &str, path: PathBuf) -> PyResult<()> {
        py.detach(|| self.inner.load_checkpoint(name, &path))
            .map_err(py_error)
    }

    /// Registers a fresh model of `config` (JSON), `classes` and `seed` as model `name`: each
    /// query that trains it starts it anew.
    fn register_config(
        &self, name: &str, config: &str, classes: Vec<String>, seed: u64,
    ) -> PyResult<()> {
        let config: ModelConfig = parse_config(config)?;
        (self.inner)
            .register_config(name, config, classes, seed)
            .map_err(py_error)
    }

    /// Registers the live model at `path` as model `name` (fresh from `config`, `classes`
    /// and `seed` while the checkpoint does not exist): `boost_predict` scores with its last
    /// commit.
    #[pyo3(signature = (name, path, config=None, classes=Vec::new(), seed=1))]
    fn register_live(
        &self, name: &str, path: PathBuf, config: Option<&str>, classes: Vec<String>, seed: u64,
    ) -> PyResult<()> {
        let fresh = config
            .map(|c| parse_config(c).map(|c| (c, classes, seed)))
            .transpose()?;
        (self.inner)
            .register_live(name, CheckpointPolicy::new(path), fresh)
            .map_err(py_error)
    }

    /// The registered models' names.
    fn names(&self) -> Vec<String> {
        (self.inner.entries().into_iter())
            .map(|(name, _)| name)
            .collect()
    }

    /// `boost_score` over the rows of `data` (Arrow) as a table: model `model` scores and
    /// learns them in the order of column `ts`, labels in column `label` (see
    /// `sql::score::ScoredTable`).
    fn scored_table(
        &self, data: &Bound<'_, PyAny>, model: &str, label: &str, ts: &str,
    ) -> PyResult<ScoredTableExport> {
        let batches = batches_of(data)?;
        let schema = (batches.first())
            .map(|b| b.schema())
            .ok_or_else(|| pyo3::exceptions::PyValueError::new_err("no rows to score"))?;
        let table =
            ScoredTable::new(&self.inner, model, schema, batches, label, ts).map_err(py_error)?;
        Ok(ScoredTableExport {
            inner: Arc::new(table),
        })
    }

    /// The SQL functions over these models: scalar functions first, then window functions.
    fn functions(&self) -> (Vec<ScalarFunction>, Vec<WindowFunction>) {
        let (scalars, windows) = functions(&self.inner);
        (
            (scalars.into_iter())
                .map(|f| ScalarFunction { inner: Arc::new(f) })
                .collect(),
            (windows.into_iter())
                .map(|f| WindowFunction { inner: Arc::new(f) })
                .collect(),
        )
    }
}

/// A scalar function, exported to datafusion-python.
#[pyclass(module = "streamboost._streamboost", frozen)]
pub struct ScalarFunction {
    inner: Arc<ScalarUDF>,
}

#[pymethods]
impl ScalarFunction {
    /// Its SQL name.
    #[getter]
    fn name(&self) -> String {
        self.inner.name().to_string()
    }

    fn __datafusion_scalar_udf__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        let udf = FFI_ScalarUDF::from(Arc::clone(&self.inner));
        PyCapsule::new_with_value(py, udf, c"datafusion_scalar_udf")
    }
}

/// `boost_score` as a table provider, exported to datafusion-python.
#[pyclass(module = "streamboost._streamboost", frozen)]
pub struct ScoredTableExport {
    inner: Arc<ScoredTable>,
}

#[pymethods]
impl ScoredTableExport {
    /// The provider, with the logical codec of the session it is registered with.
    fn __datafusion_table_provider__<'py>(
        &self, py: Python<'py>, session: Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let codec = logical_codec(&session)?;
        let provider =
            FFI_TableProvider::new_with_ffi_codec(self.inner.clone(), false, None, codec);
        PyCapsule::new_with_value(py, provider, c"datafusion_table_provider")
    }
}

/// The logical codec of a datafusion-python session: its
/// `__datafusion_logical_extension_codec__` capsule (or the capsule itself), checked by name.
fn logical_codec(session: &Bound<'_, PyAny>) -> PyResult<FFI_LogicalExtensionCodec> {
    let method = "__datafusion_logical_extension_codec__";
    let capsule = match session.hasattr(method)? {
        true => session.getattr(method)?.call0()?,
        false => session.clone(),
    };
    let capsule = capsule.cast::<PyCapsule>()?;
    let expected = c"datafusion_logical_extension_codec";
    let pointer = capsule.pointer_checked(Some(expected))?;
    // The name is checked above, so the capsule holds that struct; it is cloned, not taken.
    let codec = unsafe { pointer.cast::<FFI_LogicalExtensionCodec>().as_ref() };
    Ok(codec.clone())
}

/// A window function, exported to datafusion-python.
#[pyclass(module = "streamboost._streamboost", frozen)]
pub struct WindowFunction {
    inner: Arc<WindowUDF>,
}

#[pymethods]
impl WindowFunction {
    /// Its SQL name.
    #[getter]
    fn name(&self) -> String {
        self.inner.name().to_string()
    }

    fn __datafusion_window_udf__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        let udwf = FFI_WindowUDF::from(Arc::clone(&self.inner));
        PyCapsule::new_with_value(py, udwf, c"datafusion_window_udf")
    }
}
