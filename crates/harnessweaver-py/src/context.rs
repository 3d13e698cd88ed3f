//! `hw.RunContext` (paired with `_pycore/context.py`): the envelope middleware see and the
//! trace an emit writes. A native class so an emit reads both fields without attribute
//! lookups, and the envelope's run id (I21) once: an `Envelope` is frozen.

use std::sync::Arc;

use pyo3::exceptions::PyTypeError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

use crate::correlation::run_text;
use crate::trace::Trace;

static ENVELOPE: PyOnceLock<Py<PyType>> = PyOnceLock::new();

fn envelope_type(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    ENVELOPE
        .get_or_try_init(py, || {
            py.import("harnessweaver.envelope")?
                .getattr("Envelope")?
                .cast_into::<PyType>()
                .map(Bound::unbind)
                .map_err(PyErr::from)
        })
        .map(|t| t.bind(py))
}

/// One run's context. `trace=None` starts a new, empty trace; give concurrent runs separate
/// contexts and each trace holds only its own records (ruling 21).
#[pyclass(frozen, module = "harnessweaver", name = "RunContext")]
pub struct RunContext {
    #[pyo3(get)]
    pub envelope: Py<PyAny>,
    #[pyo3(get)]
    pub trace: Py<Trace>,
    /// `envelope.run_id` as trace text (I21).
    pub run: Arc<str>,
}

#[pymethods]
impl RunContext {
    /// Refused: `copy`, `deepcopy` and `pickle` all raise this `TypeError` (both cores alike).
    #[allow(clippy::unused_self)] // a Python method needs its receiver
    fn __reduce_ex__(&self, _protocol: &Bound<'_, PyAny>) -> PyResult<()> {
        Err(crate::errors::not_copyable(
            "RunContext",
            crate::errors::LIVE,
        ))
    }
    #[new]
    #[pyo3(signature = (envelope = None, trace = None))]
    fn new(
        py: Python<'_>,
        envelope: Option<Bound<'_, PyAny>>,
        trace: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let kind = envelope_type(py)?;
        let envelope = match envelope.filter(|e| !e.is_none()) {
            None => kind.call0()?,
            Some(given) if given.is_instance(kind)? => given,
            Some(given) => {
                return Err(PyTypeError::new_err(format!(
                    "RunContext envelope must be an hw.Envelope, got {}",
                    given.repr()?
                )))
            }
        };
        let trace = match trace.filter(|t| !t.is_none()) {
            None => Py::new(py, Trace::empty(false))?,
            Some(given) => match given.cast_into::<Trace>() {
                Ok(trace) => trace.unbind(),
                Err(err) => {
                    return Err(PyTypeError::new_err(format!(
                        "RunContext trace must be an hw.Trace, got {}",
                        err.into_inner().repr()?
                    )))
                }
            },
        };
        let run = run_text(&envelope.getattr(intern!(py, "run_id"))?, None)?;
        Ok(Self {
            envelope: envelope.unbind(),
            trace,
            run,
        })
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "RunContext(envelope={}, trace={})",
            self.envelope.bind(py).repr()?,
            self.trace.bind(py).repr()?
        ))
    }
}
