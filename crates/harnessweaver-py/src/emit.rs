//! `bus.emit(...)`: a native coroutine.
//!
//! `HookBus.emit` returns an `Emit`, which implements the coroutine protocol (`__await__`,
//! `send`, `throw`, `close`, so `asyncio.create_task` and trio accept it) and, for speed, the
//! `am_send` slot: `await bus.emit(...)` runs the chain on the first send and hands the
//! `HookResult` straight back through `PyIter_Send`, with no Python frame and no
//! `StopIteration`. Nothing runs until it is awaited, like an `async def`. When a middleware
//! suspends (or trio runs a chain with timeouts), the rest is a Python coroutine from
//! `_slowpath.py`, which this object then forwards every send and throw to.
//!
//! Under the limited API (the opt-in `abi3-*` features, see `build.rs`) type slots cannot be
//! patched: there is no `am_send`, and `await` goes through `__await__`/`__next__`, the
//! result arriving as `StopIteration(result)`. Same behaviour, one Python exception dearer.

#[cfg(not(Py_LIMITED_API))]
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

use pyo3::exceptions::{PyRuntimeError, PyStopIteration, PyTypeError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::{intern, PyTraverseError, PyVisit};

use crate::outcome::HookResult;
use crate::registry::Registry;

enum Stage {
    /// Not started: what to emit.
    Ready {
        registry: Py<Registry>,
        hook: Py<PyAny>,
        event: Py<PyAny>,
        ctx: Py<PyAny>,
        /// The emit's own chain deadline as given (I26), parsed when the emit starts.
        deadline: Option<Py<PyAny>>,
    },
    /// A middleware suspended: the Python coroutine that finishes the emit.
    Driving(Py<PyAny>),
    Done,
}

/// One emit, awaitable once.
#[pyclass(module = "harnessweaver._core", name = "Emit")]
pub struct Emit {
    stage: Stage,
}

/// What one step of the coroutine produced.
enum Step {
    /// The result; with the registry when the emit finished on the fast path, for the
    /// registry to keep this `Emit` for reuse (see `emitter.rs`).
    Return(Py<PyAny>, Option<Py<Registry>>),
    Yield(Py<PyAny>),
}

static CONTINUE_EMIT: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// `_slowpath.continue_emit`: the Python coroutine for what cannot finish synchronously.
fn continue_emit(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    CONTINUE_EMIT
        .get_or_try_init(py, || {
            Ok::<_, PyErr>(
                py.import("harnessweaver._slowpath")?
                    .getattr("continue_emit")?
                    .unbind(),
            )
        })
        .map(|f| f.bind(py))
}

impl Emit {
    pub fn new(
        registry: Py<Registry>,
        hook: Py<PyAny>,
        event: Py<PyAny>,
        ctx: Py<PyAny>,
        deadline: Option<Py<PyAny>>,
    ) -> Self {
        Self {
            stage: Stage::Ready {
                registry,
                hook,
                event,
                ctx,
                deadline,
            },
        }
    }

    /// Makes a finished `Emit` ready again with `fresh`'s arguments (reuse, `emitter.rs`).
    pub fn restart(&mut self, fresh: Emit) {
        self.stage = fresh.stage;
    }

    fn step(&mut self, py: Python<'_>, sent: &Bound<'_, PyAny>) -> PyResult<Step> {
        match std::mem::replace(&mut self.stage, Stage::Done) {
            Stage::Ready {
                registry,
                hook,
                event,
                ctx,
                deadline,
            } => {
                if !sent.is_none() {
                    return Err(PyTypeError::new_err(
                        "can't send non-None value to a just-started emit",
                    ));
                }
                // Bound handles: released at once when this returns (see `held.rs`).
                let registry = registry.into_bound(py);
                let (hook, event, ctx) = (
                    hook.into_bound(py),
                    event.into_bound(py),
                    ctx.into_bound(py),
                );
                let deadline = deadline.map(|d| d.into_bound(py));
                let started =
                    registry
                        .get()
                        .start_ctx(py, &hook, &event, &ctx, deadline.as_ref())?;
                if started.bind(py).is_exact_instance_of::<HookResult>() {
                    return Ok(Step::Return(started, Some(registry.unbind())));
                }
                let done = py.get_type::<HookResult>();
                let coro = continue_emit(py)?
                    .call1((started, registry, hook, event, ctx, done, deadline))?;
                self.forward(py, coro.unbind(), py.None().bind(py))
            }
            Stage::Driving(coro) => self.forward(py, coro, sent),
            Stage::Done => Err(PyRuntimeError::new_err(
                "cannot reuse an emit that was already awaited",
            )),
        }
    }

    fn forward(
        &mut self,
        py: Python<'_>,
        coro: Py<PyAny>,
        sent: &Bound<'_, PyAny>,
    ) -> PyResult<Step> {
        let coro = coro.into_bound(py); // released at once, unless kept below
        let mut out: *mut ffi::PyObject = ptr::null_mut();
        // SAFETY: `coro` is a live coroutine and `sent` a live object; `out` receives a new
        // reference on RETURN and NEXT, and stays null with an exception set on ERROR.
        let status = unsafe { ffi::PyIter_Send(coro.as_ptr(), sent.as_ptr(), &raw mut out) };
        match status {
            ffi::PySendResult::PYGEN_RETURN => {
                // SAFETY: a new, non-null reference.
                Ok(Step::Return(
                    unsafe { Bound::from_owned_ptr(py, out) }.unbind(),
                    None,
                ))
            }
            ffi::PySendResult::PYGEN_NEXT => {
                self.stage = Stage::Driving(coro.unbind());
                // SAFETY: a new, non-null reference.
                Ok(Step::Yield(
                    unsafe { Bound::from_owned_ptr(py, out) }.unbind(),
                ))
            }
            ffi::PySendResult::PYGEN_ERROR => Err(PyErr::fetch(py)),
        }
    }
}

/// A step as a Python method returns it: the yielded value, or `StopIteration(result)`.
fn as_method_result(step: Step) -> PyResult<Py<PyAny>> {
    match step {
        Step::Yield(value) => Ok(value),
        Step::Return(value, _) => Err(PyStopIteration::new_err((value,))),
    }
}

#[pymethods]
impl Emit {
    fn __await__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        as_method_result(self.step(py, py.None().bind(py))?)
    }

    fn send(&mut self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        as_method_result(self.step(py, value)?)
    }

    /// Delivers an exception (a cancellation, usually) to the middleware that is waiting.
    #[pyo3(signature = (typ, val = None, tb = None))]
    fn throw(
        &mut self,
        py: Python<'_>,
        typ: &Bound<'_, PyAny>,
        val: Option<&Bound<'_, PyAny>>,
        tb: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        match std::mem::replace(&mut self.stage, Stage::Done) {
            Stage::Driving(coro) => {
                // The caller's own form is passed on: since Python 3.12 the three-argument
                // form warns (DeprecationWarning), and asyncio and trio throw one exception.
                let method = intern!(py, "throw");
                let coroutine = coro.bind(py);
                let yielded = match (val, tb) {
                    (None, None) => coroutine.call_method1(method, (typ,)),
                    (Some(val), None) => coroutine.call_method1(method, (typ, val)),
                    (val, Some(tb)) => {
                        let val = val.map_or_else(|| py.None(), |v| v.clone().unbind());
                        coroutine.call_method1(method, (typ, val, tb))
                    }
                }?;
                self.stage = Stage::Driving(coro);
                Ok(yielded.unbind())
            }
            _ => Err(PyErr::from_value(
                py.import("harnessweaver._slowpath")?
                    .getattr("exception_of")?
                    .call1((typ, val))?,
            )),
        }
    }

    fn close(&mut self, py: Python<'_>) -> PyResult<()> {
        if let Stage::Driving(coro) = std::mem::replace(&mut self.stage, Stage::Done) {
            coro.bind(py).call_method0(intern!(py, "close"))?;
        }
        Ok(())
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        match &self.stage {
            Stage::Ready {
                registry,
                hook,
                event,
                ctx,
                deadline,
            } => {
                visit.call(registry)?;
                visit.call(hook)?;
                visit.call(event)?;
                visit.call(ctx)?;
                if let Some(deadline) = deadline {
                    visit.call(deadline)?;
                }
                Ok(())
            }
            Stage::Driving(coro) => visit.call(coro),
            Stage::Done => Ok(()),
        }
    }

    fn __clear__(&mut self) {
        self.stage = Stage::Done;
    }
}

/// The `am_send` slot: what `await` calls. Returns the result directly on the fast path.
#[cfg(not(Py_LIMITED_API))]
unsafe extern "C" fn am_send(
    slf: *mut ffi::PyObject,
    arg: *mut ffi::PyObject,
    result: *mut *mut ffi::PyObject,
) -> ffi::PySendResult {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: CPython calls type slots only from a thread attached to the interpreter;
        // asserting that is much cheaper than `Python::attach`'s checks on every await.
        let py = unsafe { Python::assume_attached() };
        {
            // SAFETY: CPython passes live, borrowed `slf` and `arg`.
            let this = unsafe { Bound::from_borrowed_ptr(py, slf) };
            let sent = unsafe { Bound::from_borrowed_ptr(py, arg) };
            let Ok(emit) = this.cast::<Emit>() else {
                return send_failed(py, PyTypeError::new_err("not an Emit"), result);
            };
            let stepped = match emit.try_borrow_mut() {
                Ok(mut borrowed) => borrowed.step(py, &sent),
                Err(err) => Err(err.into()),
            };
            match stepped {
                Ok(Step::Return(value, registry)) => {
                    if let Some(registry) = registry {
                        // Bound: dropped by a plain decref (see `held.rs`).
                        registry.into_bound(py).get().spare.keep(emit);
                    }
                    // SAFETY: `result` is a valid out-pointer; we pass on our reference.
                    unsafe { *result = value.into_ptr() };
                    ffi::PySendResult::PYGEN_RETURN
                }
                Ok(Step::Yield(value)) => {
                    // SAFETY: as above.
                    unsafe { *result = value.into_ptr() };
                    ffi::PySendResult::PYGEN_NEXT
                }
                Err(err) => send_failed(py, err, result),
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

/// `am_send`'s error exit: `err` raised, no value.
#[cfg(not(Py_LIMITED_API))]
fn send_failed(py: Python<'_>, err: PyErr, result: *mut *mut ffi::PyObject) -> ffi::PySendResult {
    err.restore(py);
    // SAFETY: `result` is a valid out-pointer.
    unsafe { *result = ptr::null_mut() };
    ffi::PySendResult::PYGEN_ERROR
}

/// The `am_await` slot: an `Emit` is its own iterator. PyO3's wrapper for `__await__` would
/// check and borrow the object first, a quarter of the cost of a short emit's `await`.
#[cfg(not(Py_LIMITED_API))]
unsafe extern "C" fn am_await(slf: *mut ffi::PyObject) -> *mut ffi::PyObject {
    // SAFETY: CPython passes a live `Emit`; we return a new reference to it.
    unsafe { ffi::Py_INCREF(slf) };
    slf
}

/// Installs `am_await` and `am_send` on the `Emit` type (PyO3 has no attribute for the
/// latter and only a checked wrapper for the former).
#[cfg(not(Py_LIMITED_API))]
pub fn install_slots(py: Python<'_>) -> PyResult<()> {
    let emit_type = py.get_type::<Emit>();
    let raw = emit_type.as_type_ptr();
    // SAFETY: `raw` is our live heap type; defining `__await__` gave it a `tp_as_async`
    // table, which lives as long as the type. Setting a slot before any instance exists is
    // what CPython's own type machinery does.
    unsafe {
        let table = (*raw).tp_as_async;
        if table.is_null() {
            return Err(PyRuntimeError::new_err("Emit has no async slots"));
        }
        (*table).am_await = Some(am_await);
        (*table).am_send = Some(am_send);
    }
    Ok(())
}
