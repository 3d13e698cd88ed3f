//! `HookBus.emit`: the call that starts every emit, kept to the bare minimum.
//!
//! Two costs of a short emit are not the bus's work at all, and this file removes them:
//! - PyO3's method wrapper parses arguments generically (keywords, defaults), about a fifth of
//!   an emit with no middleware. `emit(hook, event, ctx)` is nearly always called with three
//!   positional arguments, so it is a `METH_FASTCALL` builtin bound to its registry that reads
//!   them straight from the argument vector; any other call goes to the generic wrapper
//!   (`Registry.emit_call`), which words the errors.
//! - Allocating and freeing the `Emit` object is another sixth. A registry keeps the last
//!   `Emit` that finished on the fast path (a free list of one). When the next call finds that
//!   nobody else holds it any more (reference count 1: only the registry), it is reused. It is
//!   never observable: a finished `Emit` holds nothing, supports no weak references, and an
//!   object nobody references cannot be told from a fresh one. An `Emit` that did not finish is
//!   never kept, so an abandoned emit is still freed (and flushes its records) when its last
//!   reference goes. Free-threaded builds skip the reuse: reference counts there are not exact.

use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::exceptions::PyRuntimeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use pyo3::{intern, PyTraverseError, PyVisit};

use crate::emit::Emit;
use crate::gil_cell::GilCell;
use crate::registry::Registry;

/// The method definition behind every registry's `emit` builtin. CPython only reads it.
struct EmitDef(ffi::PyMethodDef);

// SAFETY: never written after initialisation; the raw pointers in it point to static data.
unsafe impl Sync for EmitDef {}

static EMIT_DEF: EmitDef = EmitDef(ffi::PyMethodDef {
    ml_name: c"emit".as_ptr(),
    ml_meth: ffi::PyMethodDefPointer {
        PyCFunctionFastWithKeywords: emit_fast,
    },
    ml_flags: ffi::METH_FASTCALL | ffi::METH_KEYWORDS,
    ml_doc: c"emit(hook, event, ctx)\n--\n\nRun hook's chain on event: an awaitable HookResult."
        .as_ptr(),
});

/// `registry.emitter()`: the `emit` builtin bound to `registry`.
pub fn emitter<'py>(registry: &Bound<'py, Registry>) -> PyResult<Bound<'py, PyAny>> {
    let py = registry.py();
    let def = (&raw const EMIT_DEF.0).cast_mut();
    // SAFETY: `def` is static and only read; `registry` is a live object, which the new
    // builtin keeps a reference to. The result is a new reference or null with an error set.
    unsafe {
        let function = ffi::PyCFunction_NewEx(def, registry.as_ptr(), std::ptr::null_mut());
        Bound::from_owned_ptr_or_err(py, function)
    }
}

/// The `emit` builtin: three positional arguments on the fast path.
///
/// # Safety
/// Called only by CPython, as a `METH_FASTCALL | METH_KEYWORDS` function: on an attached
/// thread, with `slf` the bound registry, `args` holding `nargs` live objects followed by one
/// per name in `kwnames` (null or a tuple).
unsafe extern "C" fn emit_fast(
    slf: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargs: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: CPython calls builtins only from a thread attached to the interpreter.
        let py = unsafe { Python::assume_attached() };
        // SAFETY: `slf` is the registry this builtin was bound to, alive while it is.
        let registry = unsafe { Bound::from_borrowed_ptr(py, slf) };
        let emitted = if nargs == 3 && kwnames.is_null() {
            // SAFETY: CPython passes `nargs` live, borrowed arguments.
            let arg = |i: usize| unsafe { Bound::from_borrowed_ptr(py, *args.add(i)) };
            registry
                .cast::<Registry>()
                .map_err(PyErr::from)
                .and_then(|r| new_emit(r, arg(0), arg(1), arg(2), None))
        } else {
            // SAFETY: as above; `kwnames` is null or a tuple of names for the trailing values.
            unsafe { generic(&registry, args, nargs, kwnames) }
        };
        match emitted {
            Ok(emit) => emit.into_ptr(),
            Err(err) => {
                err.restore(py);
                std::ptr::null_mut()
            }
        }
    }));
    outcome.unwrap_or_else(|_| {
        // A panic must not cross into CPython: report it as an error instead.
        Python::attach(|py| {
            PyRuntimeError::new_err("harnessweaver: internal error in emit").restore(py);
        });
        std::ptr::null_mut()
    })
}

/// Any other call, through the generic `Registry.emit_call` (keywords, errors).
///
/// # Safety
/// `args` holds `nargs` live objects followed by one per name in `kwnames`, which is null or a
/// live tuple of names (the vectorcall convention `emit_fast` receives).
unsafe fn generic<'py>(
    registry: &Bound<'py, PyAny>,
    args: *const *mut ffi::PyObject,
    nargs: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
) -> PyResult<Bound<'py, PyAny>> {
    let py = registry.py();
    let positional = usize::try_from(nargs).unwrap_or(0);
    let names = if kwnames.is_null() {
        None
    } else {
        // SAFETY: a live tuple (see the caller).
        Some(unsafe { Bound::from_borrowed_ptr(py, kwnames) }.cast_into::<PyTuple>()?)
    };
    let total = positional + names.as_ref().map_or(0, PyTupleMethods::len);
    // SAFETY: CPython passes `total` live, borrowed values: positionals, then keyword values.
    let values: Vec<Bound<'py, PyAny>> = (0..total)
        .map(|i| unsafe { Bound::from_borrowed_ptr(py, *args.add(i)) })
        .collect();
    let kwargs = pyo3::types::PyDict::new(py);
    if let Some(names) = &names {
        for (name, value) in names.iter().zip(&values[positional..]) {
            kwargs.set_item(name, value)?;
        }
    }
    let positional = PyTuple::new(py, &values[..positional])?;
    registry.call_method(intern!(py, "emit_call"), positional, Some(&kwargs))
}

/// A ready `Emit` for these arguments (`deadline`: the emit's own chain deadline, I26): the kept one when nobody else holds it, else a new one.
pub fn new_emit<'py>(
    registry: &Bound<'py, Registry>,
    hook: Bound<'py, PyAny>,
    event: Bound<'py, PyAny>,
    ctx: Bound<'py, PyAny>,
    deadline: Option<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = registry.py();
    let fresh = Emit::new(
        registry.clone().unbind(),
        hook.unbind(),
        event.unbind(),
        ctx.unbind(),
        deadline.map(Bound::unbind),
    );
    if let Some(kept) = registry.get().spare.take_unshared(py) {
        kept.borrow_mut().restart(fresh);
        return Ok(kept.into_any());
    }
    Ok(Bound::new(py, fresh)?.into_any())
}

/// The registry's free list of one finished `Emit`.
#[derive(Default)]
pub struct Spare(GilCell<Option<Py<Emit>>>);

impl Spare {
    /// Keeps `emit`, which just finished, for reuse (replacing any kept before).
    pub fn keep(&self, emit: &Bound<'_, Emit>) {
        if cfg!(Py_GIL_DISABLED) {
            return;
        }
        let py = emit.py();
        let replaced = self.0.replace(py, Some(emit.clone().unbind()));
        // After the swap (freeing an object may run Python code), and as a `Bound`: dropping
        // a `Py` where PyO3 cannot see the attached thread defers it to PyO3's pool.
        drop(replaced.map(|old| old.into_bound(py)));
    }

    /// The kept `Emit`, when nothing but this list references it.
    fn take_unshared<'py>(&self, py: Python<'py>) -> Option<Bound<'py, Emit>> {
        let kept = self.0.take(py)?.into_bound(py);
        // SAFETY: a live object; reading its reference count. With the GIL held nothing can
        // take a new reference between this check and the reuse.
        let unshared = unsafe { ffi::Py_REFCNT(kept.as_ptr()) } == 1;
        unshared.then_some(kept) // a shared one is dropped here
    }

    /// Shows the kept `Emit` to the garbage collector.
    pub fn traverse(&self, visit: &PyVisit<'_>) -> Result<(), PyTraverseError> {
        self.0
            .traverse(|kept| kept.as_ref().map_or(Ok(()), |emit| visit.call(emit)))
    }
}
