//! `Registry` (paired with `_pycore/registry.py`): the core registry holding Python
//! middleware, and the entry point of every emit.

use std::sync::{Mutex, MutexGuard, PoisonError};

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple, PyType};
use pyo3::{PyTraverseError, PyVisit};

use harnessweaver_core::catalogue::{hook_id, HookId, CATALOGUE};
use harnessweaver_core::clock;
use harnessweaver_core::error::Error;
use harnessweaver_core::walk::Walk;
use harnessweaver_core::{ErrorKind, Registry as CoreRegistry};

use crate::declaration::{layer_of, overridden, Declaration};
use crate::errors::{to_py, wrong_type, Phase};
use crate::trace::Trace;
use crate::walk::{EmitState, Payload, Pending};

/// What a bus has registered, compiled into one chain per hook point.
#[pyclass(frozen, module = "harnessweaver._core", name = "Registry")]
pub struct Registry {
    inner: Mutex<CoreRegistry<Payload>>,
    event_types: Vec<Py<PyType>>,
}

impl Registry {
    fn lock(&self) -> MutexGuard<'_, CoreRegistry<Payload>> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn hook_of(hook: &Bound<'_, PyAny>) -> PyResult<HookId> {
    let py = hook.py();
    match hook.cast::<PyString>() {
        Ok(name) => hook_id(name.to_str()?).map_err(|e| to_py(py, Phase::Emit, &e)),
        Err(_) => Err(wrong_type(
            py,
            Phase::Emit,
            ErrorKind::UnknownHook,
            "hook",
            hook,
        )),
    }
}

fn mismatch(
    hook: HookId,
    expected: &Bound<'_, PyType>,
    event: &Bound<'_, PyAny>,
) -> PyResult<Error> {
    let hook = CATALOGUE.get(usize::from(hook)).map_or("", |h| h.name);
    let message = format!(
        "hook point '{hook}' takes a {}, got {} (I7)",
        expected.name()?,
        event.get_type().name()?
    );
    Ok(Error::new(ErrorKind::EventTypeMismatch, message))
}

#[pymethods]
impl Registry {
    #[new]
    fn new(event_types: &Bound<'_, PyAny>) -> PyResult<Self> {
        let mut types = Vec::with_capacity(CATALOGUE.len());
        let mut missing = Vec::new();
        for point in &CATALOGUE {
            match event_types.get_item(point.name) {
                Ok(t) => types.push(t.cast_into::<PyType>()?.unbind()),
                Err(_) => missing.push(point.name),
            }
        }
        if !missing.is_empty() {
            return Err(PyValueError::new_err(format!(
                "event_types lacks the hook points {missing:?}"
            )));
        }
        Ok(Self {
            inner: Mutex::new(CoreRegistry::new()),
            event_types: types,
        })
    }

    /// Register `call` under `decl` with the overrides of I10; return what took effect.
    #[pyo3(signature = (decl, call, *, layer = None, name = None, band = None, hooks = None, fail_mode = None, timeout = None))]
    #[allow(clippy::too_many_arguments)]
    fn register(
        &self,
        py: Python<'_>,
        decl: &Bound<'_, PyAny>,
        call: &Bound<'_, PyAny>,
        layer: Option<&Bound<'_, PyAny>>,
        name: Option<&Bound<'_, PyAny>>,
        band: Option<&Bound<'_, PyAny>>,
        hooks: Option<&Bound<'_, PyAny>>,
        fail_mode: Option<&Bound<'_, PyAny>>,
        timeout: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<Declaration>> {
        let Ok(decl) = decl.cast::<Declaration>() else {
            return Err(PyTypeError::new_err(format!(
                "register() needs a Declaration, got {}",
                decl.repr()?
            )));
        };
        if !call.is_callable() {
            return Err(PyTypeError::new_err(format!(
                "register() needs a callable middleware, got {}",
                call.repr()?
            )));
        }
        let layer = layer_of(layer)?;
        let result = overridden(
            py,
            &decl.get().inner,
            layer,
            name,
            hooks,
            band,
            fail_mode,
            timeout,
        )?;
        let declared = Py::new(
            py,
            Declaration {
                inner: result.clone(),
            },
        )?;
        let payload = Payload {
            call: call.clone().unbind(),
            decl: declared.clone_ref(py),
        };
        self.lock()
            .register(result, payload)
            .map_err(|e| to_py(py, Phase::Register, &e))?;
        Ok(declared)
    }

    /// Remove the middleware called `name`; emits in flight keep their chains (I11).
    fn unregister(&self, py: Python<'_>, name: &Bound<'_, PyAny>) -> PyResult<Py<Declaration>> {
        let Ok(text) = name.cast::<PyString>() else {
            return Err(wrong_type(
                py,
                Phase::Register,
                ErrorKind::UnknownMiddleware,
                "name",
                name,
            ));
        };
        let text = text.to_str()?;
        let removed = self
            .lock()
            .unregister(text)
            .map_err(|e| to_py(py, Phase::Register, &e))?;
        Ok(removed.payload.decl.clone_ref(py))
    }

    /// The declarations of `hook`'s chain in run order (direction applied).
    fn chain<'py>(
        &self,
        py: Python<'py>,
        hook: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let chain = self.lock().chain(hook_of(hook)?);
        PyTuple::new(py, chain.iter().map(|e| e.payload.decl.clone_ref(py)))
    }

    fn has_timeouts(&self, hook: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.lock().has_timeouts(hook_of(hook)?))
    }

    /// Run `hook`'s chain as far as it goes without waiting: a `HookResult`, or a `Pending`.
    fn emit(
        &self,
        py: Python<'_>,
        hook: &Bound<'_, PyAny>,
        event: &Bound<'_, PyAny>,
        env: &Bound<'_, PyAny>,
        trace: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        let hook = hook_of(hook)?;
        let event_type = self.event_types[usize::from(hook)].bind(py);
        if !event.is_instance(event_type)? {
            return Err(to_py(py, Phase::Emit, &mismatch(hook, event_type, event)?));
        }
        let Ok(trace) = trace.cast::<Trace>() else {
            return Err(PyTypeError::new_err(format!(
                "emit() needs an hw.Trace, got {}",
                trace.repr()?
            )));
        };
        let chain = self.lock().chain(hook);
        let emit = trace.get().lock().begin_emit();
        let precise = trace.get().precise;
        let records = Vec::with_capacity(chain.len() + 1);
        let mut state = EmitState {
            chain,
            next: 0,
            current: 0,
            hook,
            event: event.clone().unbind(),
            env: env.clone().unbind(),
            event_type: event_type.clone().unbind(),
            trace: trace.clone().unbind(),
            emit,
            walk: Walk::new(),
            best: None,
            t_emit: clock::now(precise),
            t0: 0,
            t0_precise: precise,
            precise,
            records,
        };
        let stop = state.run(py)?;
        Pending::settle(py, stop, state)
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        for t in &self.event_types {
            visit.call(t)?;
        }
        if let Ok(inner) = self.inner.try_lock() {
            for entry in inner.entries() {
                visit.call(&entry.payload.call)?;
                visit.call(&entry.payload.decl)?;
            }
        }
        Ok(())
    }

    fn __clear__(&self) {
        *self.lock() = CoreRegistry::new();
    }
}
