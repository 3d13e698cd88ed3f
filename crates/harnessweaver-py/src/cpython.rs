//! The raw CPython calls of the emit, behind safe functions: calling a middleware through
//! vectorcall, stepping a coroutine with `PyIter_Send`, the exact type checks, and the
//! `am_await`/`am_send` slots of the `Emit` type. Every `unsafe` block of the emit path is
//! here, each with the reason it holds; callers hand in live, bound objects and get bound
//! objects or `PyErr`s back.
//!
//! `PyIter_Send` hands back a coroutine's return value directly (no `StopIteration`), so a
//! middleware that does not suspend is finished without the event loop; the `am_send` slot
//! does the same for `await bus.emit(...)` itself.

#[cfg(not(Py_LIMITED_API))]
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

#[cfg(not(Py_LIMITED_API))]
use pyo3::exceptions::PyRuntimeError;
use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
#[cfg(Py_LIMITED_API)]
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

use crate::held::Held;

/// What sending into a coroutine (or an `__await__` iterator) did.
pub enum Sent<'py> {
    /// It returned `None` (only [`send_none`] tells this apart, for the plain `Continue`).
    ReturnedNone,
    Returned(Bound<'py, PyAny>),
    /// It suspended, yielding this.
    Yielded(Bound<'py, PyAny>),
    Raised(PyErr),
}

/// Sends `value` into `iterator` (`PyIter_Send`).
#[inline]
pub fn send<'py>(iterator: &Bound<'py, PyAny>, value: &Bound<'py, PyAny>) -> Sent<'py> {
    send_raw(iterator, value.as_ptr(), false)
}

/// Sends `None` into `iterator`: the first step of a middleware's coroutine. A return of
/// `None` is [`Sent::ReturnedNone`], with no reference handed over.
#[inline]
pub fn send_none<'py>(iterator: &Bound<'py, PyAny>) -> Sent<'py> {
    // SAFETY: `Py_None` is the immortal `None`; reading its address has no precondition.
    let none = unsafe { ffi::Py_None() };
    send_raw(iterator, none, true)
}

#[inline]
fn send_raw<'py>(iterator: &Bound<'py, PyAny>, value: *mut ffi::PyObject, none: bool) -> Sent<'py> {
    let py = iterator.py();
    let mut out: *mut ffi::PyObject = ptr::null_mut();
    // SAFETY: `iterator` is a live object (bound to an attached thread) and `value` a live
    // borrowed object; `out` receives a new reference on RETURN and NEXT, and stays null with
    // an exception set on ERROR.
    let status = unsafe { ffi::PyIter_Send(iterator.as_ptr(), value, &raw mut out) };
    match status {
        // SAFETY: reading the address of the immortal `None`.
        ffi::PySendResult::PYGEN_RETURN if none && out == unsafe { ffi::Py_None() } => {
            // SAFETY: on RETURN `out` is a new, non-null reference, given back here.
            unsafe { ffi::Py_DECREF(out) };
            Sent::ReturnedNone
        }
        ffi::PySendResult::PYGEN_RETURN => {
            // SAFETY: on RETURN `out` is a new, non-null reference, owned from here on.
            let value = unsafe { Bound::from_owned_ptr(py, out) };
            Sent::Returned(value)
        }
        ffi::PySendResult::PYGEN_NEXT => {
            // SAFETY: on NEXT `out` is a new, non-null reference (the yielded value).
            let yielded = unsafe { Bound::from_owned_ptr(py, out) };
            Sent::Yielded(yielded)
        }
        ffi::PySendResult::PYGEN_ERROR => Sent::Raised(PyErr::fetch(py)),
    }
}

/// `middleware(event, env)` through vectorcall, with borrowed arguments (no reference
/// counting on the way in: the hot path calls this once per middleware). Vectorcall is in
/// the limited API from 3.12 on; see the `abi3-py311` variant below.
#[cfg(any(not(Py_LIMITED_API), Py_3_12))]
#[inline]
pub fn call<'py>(
    py: Python<'py>,
    middleware: &Py<PyAny>,
    event: &Held<PyAny>,
    env: &Held<PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    // Slot 0 is scratch space that PY_VECTORCALL_ARGUMENTS_OFFSET lets the callee use.
    let args = [ptr::null_mut(), event.get().as_ptr(), env.get().as_ptr()];
    // SAFETY: `middleware` and both arguments are live for the call (held by the caller, on
    // an attached thread); `args` has the scratch slot the offset flag promises; the result is
    // a new reference or null with an exception set.
    unsafe {
        let result = ffi::PyObject_Vectorcall(
            middleware.as_ptr(),
            args.as_ptr().add(1),
            2 | ffi::PY_VECTORCALL_ARGUMENTS_OFFSET,
            ptr::null_mut(),
        );
        Bound::from_owned_ptr_or_err(py, result)
    }
}

/// `middleware(event, env)` under the 3.11 limited API, which has no vectorcall: an argument
/// tuple per call (the `abi3-py311` feature only; see docs/packaging.md for what it costs).
#[cfg(all(Py_LIMITED_API, not(Py_3_12)))]
pub fn call<'py>(
    py: Python<'py>,
    middleware: &Py<PyAny>,
    event: &Held<PyAny>,
    env: &Held<PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    middleware.bind(py).call1((event.bind(py), env.bind(py)))
}

/// Whether `value`'s real type is `expected` or a subclass of it (I18): `isinstance` would
/// believe a `__class__` that claims the type, and call one that raises.
#[inline]
pub fn is_instance_exact(value: &Bound<'_, PyAny>, expected: &Bound<'_, PyType>) -> bool {
    let kind = value.get_type();
    // SAFETY: both are live type objects; `PyType_IsSubtype` only reads their MROs.
    kind.is(expected)
        || unsafe { ffi::PyType_IsSubtype(kind.as_type_ptr(), expected.as_type_ptr()) != 0 }
}

/// Whether `awaitable` is exactly a native coroutine, under the limited API: it does not
/// export `PyCoro_Type`, so compare with `types.CoroutineType`.
#[cfg(Py_LIMITED_API)]
fn is_coroutine(awaitable: &Bound<'_, PyAny>) -> PyResult<bool> {
    static COROUTINE: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    let coroutine = COROUTINE.import(awaitable.py(), "types", "CoroutineType")?;
    Ok(awaitable.get_type().is(coroutine))
}

/// What to step: a coroutine itself, another awaitable's `__await__()` iterator, or `None`
/// for a value that is not awaitable at all (an invalid return).
#[inline]
pub fn step_target<'py>(awaitable: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
    // SAFETY: a type check on a live object.
    #[cfg(not(Py_LIMITED_API))]
    if unsafe { ffi::PyCoro_CheckExact(awaitable.as_ptr()) } != 0 {
        return Ok(Some(awaitable.clone()));
    }
    #[cfg(Py_LIMITED_API)]
    if is_coroutine(awaitable)? {
        return Ok(Some(awaitable.clone()));
    }
    let py = awaitable.py();
    if awaitable.hasattr(intern!(py, "__await__"))? {
        return Ok(Some(awaitable.call_method0(intern!(py, "__await__"))?));
    }
    Ok(None)
}

/// What one `am_send` step gives back.
#[cfg(not(Py_LIMITED_API))]
pub enum Sending {
    Return(Py<PyAny>),
    Yield(Py<PyAny>),
}

/// A type whose `await` is served by [`install_async_slots`]: `send` is what the `am_send`
/// slot does, safely.
#[cfg(not(Py_LIMITED_API))]
pub trait AsyncSlots: pyo3::PyTypeInfo {
    /// One step of `await`: `slf` is an object of this type (not yet checked), `sent` what was
    /// sent in.
    fn send(slf: &Bound<'_, PyAny>, sent: &Bound<'_, PyAny>) -> PyResult<Sending>;
}

/// The `am_send` slot of `T`: what `await` calls. Returns the result directly.
///
/// # Safety
/// Called only by CPython, on an attached thread, with live `slf` (an object of `T`'s type)
/// and `arg`, and `result` a valid out-pointer.
#[cfg(not(Py_LIMITED_API))]
unsafe extern "C" fn am_send<T: AsyncSlots>(
    slf: *mut ffi::PyObject,
    arg: *mut ffi::PyObject,
    result: *mut *mut ffi::PyObject,
) -> ffi::PySendResult {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: CPython calls type slots only from a thread attached to the interpreter;
        // asserting that is much cheaper than `Python::attach`'s checks on every await.
        let py = unsafe { Python::assume_attached() };
        // SAFETY: CPython passes live, borrowed `slf` and `arg`.
        let (this, sent) = unsafe {
            (
                Bound::from_borrowed_ptr(py, slf),
                Bound::from_borrowed_ptr(py, arg),
            )
        };
        match T::send(&this, &sent) {
            Ok(Sending::Return(value)) => {
                // SAFETY: `result` is CPython's valid out-pointer; our reference passes to it.
                unsafe { *result = value.into_ptr() };
                ffi::PySendResult::PYGEN_RETURN
            }
            Ok(Sending::Yield(value)) => {
                // SAFETY: as above.
                unsafe { *result = value.into_ptr() };
                ffi::PySendResult::PYGEN_NEXT
            }
            Err(err) => {
                err.restore(py);
                // SAFETY: `result` is a valid out-pointer.
                unsafe { *result = ptr::null_mut() };
                ffi::PySendResult::PYGEN_ERROR
            }
        }
    }));
    outcome.unwrap_or_else(|_| {
        // A panic must not cross into CPython: report it as an error instead.
        Python::attach(|py| {
            PyRuntimeError::new_err("harnessweaver: internal error in emit").restore(py);
        });
        // SAFETY: `result` is a valid out-pointer.
        unsafe { *result = ptr::null_mut() };
        ffi::PySendResult::PYGEN_ERROR
    })
}

/// The `am_await` slot: the object is its own iterator. PyO3's wrapper for `__await__` would
/// check and borrow the object first, a quarter of the cost of a short emit's `await`.
///
/// # Safety
/// Called only by CPython, on an attached thread, with a live `slf`.
#[cfg(not(Py_LIMITED_API))]
unsafe extern "C" fn am_await(slf: *mut ffi::PyObject) -> *mut ffi::PyObject {
    // SAFETY: CPython passes a live object; we return a new reference to it.
    unsafe { ffi::Py_INCREF(slf) };
    slf
}

/// Installs `am_await` and `am_send` on `T` (PyO3 has no attribute for the latter and only a
/// checked wrapper for the former); `T` must define `__await__`, which gives it the table.
#[cfg(not(Py_LIMITED_API))]
pub fn install_async_slots<T: AsyncSlots>(py: Python<'_>) -> PyResult<()> {
    let raw = py.get_type::<T>().as_type_ptr();
    // SAFETY: `raw` is our live heap type; defining `__await__` gave it a `tp_as_async`
    // table, which lives as long as the type. Setting a slot before any instance exists is
    // what CPython's own type machinery does.
    unsafe {
        let table = (*raw).tp_as_async;
        if table.is_null() {
            return Err(PyRuntimeError::new_err("the type has no async slots"));
        }
        (*table).am_await = Some(am_await);
        (*table).am_send = Some(am_send::<T>);
    }
    Ok(())
}
