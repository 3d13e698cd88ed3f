//! Core errors become the Python exceptions of `harnessweaver.errors`, so both cores raise the
//! same classes. The classes live in Python; the factory is looked up once.

use harnessweaver_core::{Error, ErrorKind};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

/// Where an error happened: picks `DeclarationError`, `RegistrationError`, `EmitError` or
/// `TraceFormatError` (see `harnessweaver/errors.py`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Declare,
    Register,
    Emit,
    Trace,
}

impl Phase {
    fn as_str(self) -> &'static str {
        match self {
            Self::Declare => "declare",
            Self::Register => "register",
            Self::Emit => "emit",
            Self::Trace => "trace",
        }
    }
}

static ERROR_FOR: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// The Python exception for a core error.
pub fn to_py(py: Python<'_>, phase: Phase, err: &Error) -> PyErr {
    let factory = ERROR_FOR.get_or_try_init(py, || -> PyResult<Py<PyAny>> {
        Ok(py
            .import("harnessweaver.errors")?
            .getattr("error_for")?
            .unbind())
    });
    let built = factory.and_then(|f| {
        f.bind(py).call1((
            phase.as_str(),
            err.kind.as_str(),
            err.kind.rule(),
            err.message.as_str(),
        ))
    });
    match built {
        Ok(exc) => PyErr::from_value(exc),
        Err(_) => PyRuntimeError::new_err(format!("{} ({})", err.message, err.kind.as_str())),
    }
}

/// A value of the wrong Python type, reported like the core reports a bad value of that kind.
pub fn wrong_type(
    py: Python<'_>,
    phase: Phase,
    kind: ErrorKind,
    field: &str,
    value: &Bound<'_, PyAny>,
) -> PyErr {
    let repr = value
        .repr()
        .map_or_else(|_| "<unprintable>".to_owned(), |r| r.to_string());
    to_py(
        py,
        phase,
        &harnessweaver_core::error::invalid_value(kind, field, &repr),
    )
}

/// Why an object of the bus is neither copied nor pickled: what `__reduce_ex__` raises, so
/// `copy.copy`, `copy.deepcopy` and `pickle` refuse it alike, in the words of the pure core's
/// `refuse_copy` (docs/events.md, "Odd values at the Python API").
pub fn not_copyable(name: &str, why: &str) -> PyErr {
    pyo3::exceptions::PyTypeError::new_err(format!(
        "harnessweaver.{name} objects cannot be copied or pickled: {why}"
    ))
}

/// The reason of a value that cannot change: the object itself can be shared.
pub const IMMUTABLE: &str = "it cannot change, so share the object itself";
/// The reason of an object that holds what runs in this process.
pub const LIVE: &str = "it holds live state of this process (middleware, records, a sink)";
