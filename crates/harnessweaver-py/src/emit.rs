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

use pyo3::exceptions::{PyRuntimeError, PyStopIteration, PyTypeError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::{intern, PyTraverseError, PyVisit};

use crate::cpython::{self, Sent};
#[cfg(not(Py_LIMITED_API))]
use crate::cpython::{install_async_slots, AsyncSlots, Sending};
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
    Return(
        Py<PyAny>,
        #[cfg_attr(Py_LIMITED_API, allow(dead_code))] // kept for reuse by `am_send` only
        Option<Py<Registry>>,
    ),
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
                // Bound handles: released at once when this returns (see `Held` in `cpython.rs`).
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
        match cpython::send(&coro, sent) {
            Sent::ReturnedNone => Ok(Step::Return(py.None(), None)),
            Sent::Returned(value) => Ok(Step::Return(value.unbind(), None)),
            Sent::Yielded(value) => {
                self.stage = Stage::Driving(coro.unbind());
                Ok(Step::Yield(value.unbind()))
            }
            Sent::Raised(err) => Err(err),
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

/// What `await` does, served by the `am_send` slot (`cpython.rs`): returns the result directly
/// on the fast path, and keeps a finished `Emit` for reuse (`emitter.rs`).
#[cfg(not(Py_LIMITED_API))]
impl AsyncSlots for Emit {
    fn send(slf: &Bound<'_, PyAny>, sent: &Bound<'_, PyAny>) -> PyResult<Sending> {
        let py = slf.py();
        let emit = slf
            .cast::<Emit>()
            .map_err(|_| PyTypeError::new_err("not an Emit"))?;
        let stepped = emit.try_borrow_mut()?.step(py, sent)?;
        Ok(match stepped {
            Step::Return(value, registry) => {
                if let Some(registry) = registry {
                    // Bound: dropped by a plain decref (see `Held` in `cpython.rs`).
                    registry.into_bound(py).get().spare.keep(emit);
                }
                Sending::Return(value)
            }
            Step::Yield(value) => Sending::Yield(value),
        })
    }
}

/// Installs `am_await` and `am_send` on the `Emit` type.
#[cfg(not(Py_LIMITED_API))]
pub fn install_slots(py: Python<'_>) -> PyResult<()> {
    install_async_slots::<Emit>(py)
}
