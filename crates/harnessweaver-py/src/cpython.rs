//! The raw CPython calls of the binding, behind safe functions: calling a middleware through
//! vectorcall, stepping a coroutine with `PyIter_Send`, the exact type checks, the
//! `am_await`/`am_send` slots of the `Emit` type, the `METH_FASTCALL` builtin behind
//! `HookBus.emit`, the borrowed dict look-up and thread state id of the trio check, and
//! [`Held`]'s release. Every `unsafe` block of the binding is here (the one other module with
//! `unsafe` is `gil_cell.rs`, a cell abstraction with no FFI; `python/tests/test_binding_rules.py`
//! holds that line), each with the reason it holds; callers hand in live, bound objects and
//! get bound objects or `PyErr`s back.
//!
//! `PyIter_Send` hands back a coroutine's return value directly (no `StopIteration`), so a
//! middleware that does not suspend is finished without the event loop; the `am_send` slot
//! does the same for `await bus.emit(...)` itself.

use std::ffi::CStr;
use std::mem::ManuallyDrop;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

use pyo3::exceptions::PyRuntimeError;
use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
#[cfg(Py_LIMITED_API)]
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyString, PyTuple, PyType};

/// A strong reference that is released at once when dropped.
///
/// PyO3's `Py<T>` cannot know, when dropped, whether the thread is attached to the
/// interpreter unless PyO3 itself attached it; from a type slot CPython calls directly (our
/// `am_send`) it is not counted as attached, so every drop would be queued in PyO3's reference
/// pool: about a thousand instructions per emit. The objects of an emit are only ever dropped
/// on an attached thread (the emit runs in a Python call, or lives inside a Python object), so
/// `Held` releases them directly.
pub struct Held<T>(ManuallyDrop<Py<T>>);

impl<T> Held<T> {
    pub fn new(object: Py<T>) -> Self {
        Self(ManuallyDrop::new(object))
    }

    pub fn get(&self) -> &Py<T> {
        &self.0
    }

    pub fn bind<'a, 'py>(&'a self, py: Python<'py>) -> &'a Bound<'py, T> {
        self.0.bind(py)
    }

    /// Swaps in `object`, releasing the one held before.
    pub fn replace(&mut self, object: Py<T>) {
        let old = std::mem::replace(self, Self::new(object));
        drop(old);
    }
}

impl<T> Drop for Held<T> {
    fn drop(&mut self) {
        // SAFETY: see the type's doc: an emit's objects are dropped on an attached thread.
        let py = unsafe { Python::assume_attached() };
        // SAFETY: the reference is taken exactly once, here, and never used again.
        let object = unsafe { ManuallyDrop::take(&mut self.0) };
        drop(object.into_bound(py));
    }
}

/// Whether `dict` holds `key` with a value other than `None`: a borrowed look-up, with no
/// reference counting (PyO3's `get_item` takes a new reference through a compatibility shim on
/// 3.11). Errors of the look-up (a key's `__eq__`) are raised.
#[inline]
pub fn holds_some(dict: &Bound<'_, PyDict>, key: &Bound<'_, PyString>) -> PyResult<bool> {
    let py = dict.py();
    // SAFETY: a live dict and key (bound to an attached thread); the result is borrowed and
    // only compared with `None` here, with no Python code run in between; it is null when the
    // key is absent, or with an error set when the look-up failed.
    let value = unsafe { ffi::PyDict_GetItemWithError(dict.as_ptr(), key.as_ptr()) };
    if value.is_null() {
        // SAFETY: reading the thread's error indicator (attached: `py`).
        if unsafe { ffi::PyErr_Occurred() }.is_null() {
            return Ok(false); // absent
        }
        return Err(PyErr::fetch(py));
    }
    // SAFETY: reading the address of the `None` singleton.
    Ok(value != unsafe { ffi::Py_None() })
}

/// Whether `object` (a reference the caller holds) is its only reference (`Py_REFCNT` is 1).
#[inline]
pub fn is_only_reference(object: &Bound<'_, PyAny>) -> bool {
    // SAFETY: a live object; reading its reference count.
    unsafe { ffi::Py_REFCNT(object.as_ptr()) == 1 }
}

/// The id of the calling thread's state: never reused by another thread state.
#[inline]
pub fn thread_state_id(_py: Python<'_>) -> i64 {
    // SAFETY: attached to the interpreter (`_py`), so this thread has a current thread state.
    unsafe { ffi::PyThreadState_GetID(ffi::PyThreadState_Get()) }
}

/// A `METH_FASTCALL | METH_KEYWORDS` builtin: what [`fastcall_builtin`] calls `T::call` with.
pub trait Fastcall {
    /// The call: `slf` is the object the builtin is bound to.
    fn call<'py>(slf: &Bound<'py, PyAny>, args: &FastArgs<'_, 'py>) -> PyResult<Bound<'py, PyAny>>;
}

/// The arguments of a fastcall: `nargs` positional values and then one per name in `kwnames`
/// (the vectorcall convention), all borrowed from the caller for the call.
pub struct FastArgs<'a, 'py> {
    py: Python<'py>,
    args: *const *mut ffi::PyObject,
    nargs: usize,
    kwnames: Option<Borrowed<'a, 'py, PyTuple>>,
}

impl<'py> FastArgs<'_, 'py> {
    /// The three positional arguments, when the call has exactly those and no keywords.
    #[inline]
    pub fn three(&self) -> Option<[Bound<'py, PyAny>; 3]> {
        if self.nargs != 3 || self.kwnames.is_some() {
            return None;
        }
        // SAFETY: CPython passes `nargs` (three) live, borrowed arguments; each gets a new
        // reference here.
        let arg = |i: usize| unsafe { Bound::from_borrowed_ptr(self.py, *self.args.add(i)) };
        Some([arg(0), arg(1), arg(2)])
    }

    /// The positional arguments as a tuple and the keyword arguments as a dict.
    pub fn to_tuple_and_dict(&self) -> PyResult<(Bound<'py, PyTuple>, Bound<'py, PyDict>)> {
        let py = self.py;
        let names = self.kwnames.as_ref().map_or(0, |names| names.len());
        // SAFETY: CPython passes `nargs` positional values, then one per name: live, borrowed.
        let values: Vec<Bound<'py, PyAny>> = (0..self.nargs + names)
            .map(|i| unsafe { Bound::from_borrowed_ptr(py, *self.args.add(i)) })
            .collect();
        let kwargs = PyDict::new(py);
        if let Some(names) = &self.kwnames {
            for (name, value) in names.iter().zip(&values[self.nargs..]) {
                kwargs.set_item(name, value)?;
            }
        }
        Ok((PyTuple::new(py, &values[..self.nargs])?, kwargs))
    }
}

/// The static method definition of a fastcall builtin (CPython only reads it).
pub struct FastcallDef(ffi::PyMethodDef);

// SAFETY: never written after initialisation; the raw pointers in it point to static data.
unsafe impl Sync for FastcallDef {}

impl FastcallDef {
    /// The definition of the builtin `name` (with the docstring `doc`) that calls `T::call`.
    pub const fn new<T: Fastcall>(name: &'static CStr, doc: &'static CStr) -> Self {
        Self(ffi::PyMethodDef {
            ml_name: name.as_ptr(),
            ml_meth: ffi::PyMethodDefPointer {
                PyCFunctionFastWithKeywords: fastcall::<T>,
            },
            ml_flags: ffi::METH_FASTCALL | ffi::METH_KEYWORDS,
            ml_doc: doc.as_ptr(),
        })
    }
}

/// The builtin of `def` bound to `slf` (`PyCFunction_NewEx`), which keeps a reference to it.
pub fn fastcall_builtin<'py>(
    def: &'static FastcallDef,
    slf: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let raw = (&raw const def.0).cast_mut();
    // SAFETY: `raw` is static and only read; `slf` is a live object, which the new builtin
    // keeps a reference to. The result is a new reference or null with an error set.
    unsafe {
        let function = ffi::PyCFunction_NewEx(raw, slf.as_ptr(), ptr::null_mut());
        Bound::from_owned_ptr_or_err(slf.py(), function)
    }
}

/// The C function of a [`FastcallDef`]: `T::call` with the arguments as [`FastArgs`].
///
/// # Safety
/// Called only by CPython, as a `METH_FASTCALL | METH_KEYWORDS` function: on an attached
/// thread, with `slf` the bound object, `args` holding `nargs` live objects followed by one
/// per name in `kwnames` (null or a tuple).
unsafe extern "C" fn fastcall<T: Fastcall>(
    slf: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargs: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: CPython calls builtins only from a thread attached to the interpreter.
        let py = unsafe { Python::assume_attached() };
        // SAFETY: `slf` is the object this builtin was bound to, alive while it is.
        let this = unsafe { Bound::from_borrowed_ptr(py, slf) };
        // SAFETY: `kwnames` is null or a live tuple of names, borrowed for the call.
        let kwnames = unsafe {
            Borrowed::from_ptr_or_opt(py, kwnames).map(|names| names.cast_unchecked::<PyTuple>())
        };
        let args = FastArgs {
            py,
            args,
            nargs: usize::try_from(nargs).unwrap_or(0),
            kwnames,
        };
        match T::call(&this, &args) {
            Ok(result) => result.into_ptr(),
            Err(err) => {
                err.restore(py);
                ptr::null_mut()
            }
        }
    }));
    outcome.unwrap_or_else(|_| {
        // A panic must not cross into CPython: report it as an error instead.
        Python::attach(|py| {
            PyRuntimeError::new_err("harnessweaver: internal error in emit").restore(py);
        });
        ptr::null_mut()
    })
}

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
