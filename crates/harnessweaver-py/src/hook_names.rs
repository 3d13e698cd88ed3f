//! Hook point names to ids, once per emit.
//!
//! Names arrive as Python strings. The compiler interns only identifier-like literals, so a
//! dotted name such as `"tool.before"` is rarely the very object we hold, and decoding it to
//! compare text costs more than the rest of a short emit. A `str` caches its hash, though:
//! compare that with the catalogue's hashes (taken once per process, since string hashing is
//! randomised per process), then confirm the one candidate by identity or by its text.
//!
//! Most callers pass the same string object every time (a constant at the call site), so the
//! last name found is kept, with a reference (an object kept alive cannot be replaced by
//! another at its address), and a call with that very object is answered by identity.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyString;

use harnessweaver_core::catalogue::{hook_id, HookId, CATALOGUE};
use harnessweaver_core::ErrorKind;

use crate::declaration::not_text;
use crate::errors::{to_py, wrong_type, Phase};
use crate::gil_cell::GilCell;

/// The catalogue's names as Python strings with their hashes, in hook id order.
static NAMES: PyOnceLock<Vec<(isize, Py<PyString>)>> = PyOnceLock::new();

fn names(py: Python<'_>) -> PyResult<&'static [(isize, Py<PyString>)]> {
    if let Some(names) = NAMES.get(py) {
        return Ok(names);
    }
    let names = CATALOGUE
        .iter()
        .map(|point| {
            let name = PyString::intern(py, point.name);
            Ok((name.hash()?, name.unbind()))
        })
        .collect::<PyResult<Vec<_>>>()?;
    Ok(NAMES.get_or_init(py, || names))
}

/// The last `str` object found, and its id.
static LAST: GilCell<Option<(Py<PyString>, HookId)>> = GilCell::new(None);

/// The id of the hook point named `hook`, or the error `emit` raises for it.
pub fn hook_of(hook: &Bound<'_, PyAny>) -> PyResult<HookId> {
    let py = hook.py();
    let repeated = LAST.peek(py, |last| match last {
        Some((name, id)) if name.as_ptr() == hook.as_ptr() => Some(*id),
        _ => None,
    });
    if let Some(id) = repeated {
        return Ok(id);
    }
    if let Ok(name) = hook.cast_exact::<PyString>() {
        let hash = name.hash()?;
        for (id, ((known_hash, known), point)) in (0..).zip(names(py)?.iter().zip(CATALOGUE)) {
            if *known_hash == hash && (known.bind(py).is(name) || name.to_str()? == point.name) {
                let replaced = LAST.replace(py, Some((name.clone().unbind(), id)));
                drop(replaced); // after the swap: freeing the old name may run Python code
                return Ok(id);
            }
        }
    }
    // Unknown names and `str` subclasses: by text, which also words the error.
    match hook.cast::<PyString>() {
        // A lone surrogate is no valid text: an unknown hook point, shown escaped (I17).
        Ok(name) => match name.to_str() {
            Ok(text) => hook_id(text).map_err(|e| to_py(py, Phase::Emit, &e)),
            Err(_) => Err(not_text(Phase::Emit, ErrorKind::UnknownHook, "hook", name)),
        },
        Err(_) => Err(wrong_type(
            py,
            Phase::Emit,
            ErrorKind::UnknownHook,
            "hook",
            hook,
        )),
    }
}
