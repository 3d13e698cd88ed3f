//! Which async library runs the current task, asked by every emit of a chain with timeouts
//! (trio needs its cancel scope entered before a middleware's first step; see `emit.rs`).
//!
//! trio names itself in sniffio's thread-local while it runs (`sniffio.thread_local.name`);
//! asyncio leaves it unset. Reading an attribute of a `threading.local` costs about half a
//! microsecond here (the thread's dict is found through the thread state, then a full
//! attribute lookup runs), more than the rest of a short emit, and asking asyncio instead
//! makes a `getpid()` system call on 3.11. So the calling thread's dict of that local is looked
//! up once and kept with the id of the thread state it belongs to; later emits on the same
//! thread read `name` from it directly. Thread state ids are never reused, so a kept dict is
//! never taken for another thread's, and a `threading.local`'s dict for a thread lives as long
//! as the thread and cannot be replaced (`__dict__` is read-only).

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyDict;

use crate::cpython;
use crate::gil_cell::GilCell;

/// `sniffio.thread_local`, or `None` without sniffio (then trio cannot be running either).
static SNIFFIO_LOCAL: PyOnceLock<Option<Py<PyAny>>> = PyOnceLock::new();

/// The last thread's dict of `sniffio.thread_local`, with that thread state's id.
static KEPT: GilCell<Option<(i64, Py<PyDict>)>> = GilCell::new(None);

/// Whether a structured-concurrency library (trio) runs the current task.
pub fn structured(py: Python<'_>) -> PyResult<bool> {
    let Some(local) = SNIFFIO_LOCAL.get_or_init(py, || sniffio_local(py)) else {
        return Ok(false);
    };
    let dict = thread_dict(py, local.bind(py))?;
    // Empty: nothing ever named itself on this thread (asyncio never does), so there is
    // nothing to look up.
    if dict.is_empty() {
        return Ok(false);
    }
    // As `getattr` would see it: the thread's own value, else the class default (`None`);
    // absent: asyncio, or no library that names itself.
    cpython::holds_some(&dict, intern!(py, "name"))
}

fn sniffio_local(py: Python<'_>) -> Option<Py<PyAny>> {
    py.import("sniffio")
        .and_then(|m| m.getattr("thread_local"))
        .map(Bound::unbind)
        .ok()
}

/// The calling thread's dict of `local`: the kept one when this thread asked last.
fn thread_dict<'py>(py: Python<'py>, local: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
    let thread = cpython::thread_state_id(py);
    let kept = KEPT.peek(py, |kept| match kept {
        Some((id, dict)) if *id == thread => Some(dict.clone_ref(py)),
        _ => None,
    });
    if let Some(dict) = kept {
        return Ok(dict.into_bound(py));
    }
    // Looked up outside the cell: attribute access may run Python code.
    let dict = local
        .getattr(intern!(py, "__dict__"))?
        .cast_into::<PyDict>()?;
    let replaced = KEPT.replace(py, Some((thread, dict.clone().unbind())));
    drop(replaced); // after the swap: freeing the old dict may run Python code
    Ok(dict)
}
