//! `Registry` (paired with `_pycore/registry.py`): the core registry holding Python
//! middleware, and the entry point of every emit.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple, PyType};
use pyo3::{intern, PyTraverseError, PyVisit};

use harnessweaver_core::catalogue::{HookId, CATALOGUE};
use harnessweaver_core::contract::ContractMode;
use harnessweaver_core::deadline::{chain_deadline, DeadlineOf};
use harnessweaver_core::duration::nanos_to_seconds;
use harnessweaver_core::error::Error;
use harnessweaver_core::identity::IdentityScheme;
use harnessweaver_core::matcher::MatchKey;
use harnessweaver_core::walk::{Options, Walk};
use harnessweaver_core::{Chain, ErrorKind, Registry as CoreRegistry};

use crate::backend::structured;
use crate::context::RunContext;
use crate::contract::mode_of;
use crate::correlation::{LastSeen, Run};
use crate::cpython::Held;
use crate::deadline::{deadline_ns, deadlines_of};
use crate::declaration::{layer_of, not_text, overridden, Declaration};
use crate::emitter::{emitter, new_emit, Spare};
use crate::errors::{to_py, wrong_type, Phase};
use crate::gil_cell::{GilCell, Plain};
use crate::hook_names::hook_of;
use crate::identity::{scheme_of, Identifying};
use crate::trace::Trace;
use crate::walk::{is_event_of, EmitState, Payload, Pending, Stop};

/// What a bus has registered, compiled into one chain per hook point.
#[pyclass(frozen, module = "harnessweaver._core", name = "Registry")]
pub struct Registry {
    inner: Mutex<CoreRegistry<Payload>>,
    /// The planned chains, read by emits without taking the lock: `None` once a registration
    /// changed the hook point, until the next emit (or `chain`) plans it again from the core.
    /// So registering plans nothing (issue 13), an emit with nothing changed only checks for
    /// `None`, and an emit in flight keeps the chain it loaded (ruling 3, I11).
    plans: Vec<GilCell<Option<Plan>>>,
    event_types: Vec<Py<PyType>>,
    /// The hook-contract mode (I14); `None` checks nothing.
    contracts: Option<ContractMode>,
    /// A finished `Emit` kept for reuse (see `emitter.rs`).
    pub spare: Spare,
    /// The last emit's correlation (I21), for the next emit of the same event to share.
    last_seen: LastSeen,
    /// The chain deadline of each hook point (I26), by hook id; `None` for none.
    deadlines: Vec<Option<u64>>,
    /// The content-identity scheme (I27); `None` computes no identities.
    identity: Option<IdentityScheme>,
}

/// One hook point's chain, whether any of it has a timeout, and the key its matchers read
/// (I22; `None` for a chain without matchers there, which an emit walks as is).
#[derive(Clone)]
struct Plan {
    chain: Chain<Payload>,
    timed: bool,
    key: Option<MatchKey>,
    /// The hook point's chain deadline (I26); a chain with one is `timed` too.
    deadline: Option<u64>,
}

// SAFETY: cloning an `Option<Plan>` clones an `Arc` and copies plain values: no Python code.
unsafe impl Plain for Option<Plan> {}

impl Registry {
    fn lock(&self) -> MutexGuard<'_, CoreRegistry<Payload>> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Withdraws the published chains of `hooks` (called under the core's lock, so that a
    /// registration and the replanning emit after it take turns) and returns them. The caller
    /// drops them once the lock is released: they may hold the last reference to a
    /// middleware, and a finalizer run under the lock that registers on this bus would wait on
    /// it forever (or, having let go of the GIL, wait for a thread that is itself waiting on
    /// the lock).
    #[must_use = "drop the replaced chains after releasing the lock"]
    fn withdraw(
        &self,
        py: Python<'_>,
        hooks: impl IntoIterator<Item = HookId>,
    ) -> Vec<Option<Plan>> {
        hooks
            .into_iter()
            .filter_map(|id| self.plans.get(usize::from(id)))
            .map(|plan| plan.replace(py, None))
            .collect()
    }

    /// The plan of `hook`: its chain, whether any of it has a timeout, its match key.
    fn planned(&self, py: Python<'_>, hook: HookId) -> Plan {
        match self.plans[usize::from(hook)].get(py) {
            Some(plan) => plan,
            None => self.replan(py, hook),
        }
    }

    /// The chain an emit of `event` runs when `hook`'s matchers read `key` (I22): the core
    /// plans it once per key value. The key is read from the caller's event; anything but a
    /// `str` holding valid text (absent, raising, another type, a lone surrogate) is `None`,
    /// which every matcher matches.
    #[cold]
    #[inline(never)]
    fn keyed(&self, hook: HookId, key: MatchKey, event: &Bound<'_, PyAny>) -> Chain<Payload> {
        let py = event.py();
        let field = match key {
            MatchKey::Tool => event
                .getattr(intern!(py, "tool"))
                .and_then(|t| t.getattr(intern!(py, "name"))),
            MatchKey::Model => event
                .getattr(intern!(py, "request"))
                .and_then(|r| r.getattr(intern!(py, "model"))),
        };
        let field = field.ok();
        let text = field
            .as_ref()
            .and_then(|f| f.cast::<PyString>().ok())
            .and_then(|s| s.to_str().ok());
        self.lock().chain_for(hook, text)
    }

    /// Plans `hook` in the core (its first emit since a registration changed it) and
    /// publishes the plan for the emits after it.
    #[cold]
    #[inline(never)]
    fn replan(&self, py: Python<'_>, hook: HookId) -> Plan {
        let (plan, replaced) = {
            let core = self.lock();
            let deadline = self.deadlines[usize::from(hook)];
            let plan = Plan {
                chain: core.chain(hook),
                timed: core.has_timeouts(hook) || deadline.is_some(),
                key: core.match_key(hook),
                deadline,
            };
            let replaced = self.plans[usize::from(hook)].replace(py, Some(plan.clone()));
            (plan, replaced)
        };
        drop(replaced); // `None` under the GIL; after the lock all the same (see `withdraw`)
        plan
    }

    /// An emit with a run context: a `HookResult`, a `Pending` when a middleware suspended,
    /// or `None` when trio runs a chain with timeouts (see `emit.rs`).
    pub(crate) fn start_ctx(
        &self,
        py: Python<'_>,
        hook: &Bound<'_, PyAny>,
        event: &Bound<'_, PyAny>,
        ctx: &Bound<'_, PyAny>,
        deadline: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let hook = hook_of(hook)?;
        let Plan {
            chain,
            timed,
            key,
            deadline: hook_deadline,
        } = self.planned(py, hook);
        if (timed || deadline.is_some()) && structured(py)? {
            return Ok(py.None());
        }
        let planned = Planned {
            chain,
            key,
            hook_deadline,
            deadline,
        };
        if let Ok(native) = ctx.cast::<RunContext>() {
            let native = native.get();
            let (env, trace) = (native.envelope.bind(py), native.trace.bind(py).as_any());
            let run = Run::Read(&native.run);
            return self.start(py, hook, planned, event, env, trace, &run);
        }
        let env = ctx.getattr(intern!(py, "envelope"))?;
        let trace = ctx.getattr(intern!(py, "trace"))?;
        self.start(py, hook, planned, event, &env, &trace, &Run::Envelope(&env))
    }

    /// Checks the event, reads the emit's correlation (I21), then walks the chain until it
    /// ends or a middleware suspends.
    #[allow(clippy::too_many_arguments)]
    fn start(
        &self,
        py: Python<'_>,
        hook: HookId,
        planned: Planned<'_, '_>,
        event: &Bound<'_, PyAny>,
        env: &Bound<'_, PyAny>,
        trace: &Bound<'_, PyAny>,
        run: &Run<'_, '_>,
    ) -> PyResult<Py<PyAny>> {
        let event_type = self.event_types[usize::from(hook)].bind(py);
        // The real type (I18): `isinstance` would believe a `__class__` that claims the event
        // type, and call one that raises.
        if !is_event_of(event, event_type) {
            return Err(to_py(py, Phase::Emit, &mismatch(hook, event_type, event)?));
        }
        let Planned {
            chain,
            key,
            hook_deadline,
            deadline,
        } = planned;
        // I26: checked after the event, like the caller errors of I7 (nothing runs or is traced).
        let budget = if hook_deadline.is_none() && deadline.is_none() {
            None
        } else {
            budget(hook, hook_deadline, deadline)?
        };
        let Ok(trace) = trace.cast::<Trace>() else {
            return Err(PyTypeError::new_err(format!(
                "emit() needs an hw.Trace, got {}",
                trace.repr()?
            )));
        };
        // I22: only a chain with matchers on this hook point reads its key from the event.
        let chain = match key {
            None => chain,
            Some(key) => self.keyed(hook, key, event),
        };
        let corr = self.last_seen.correlation(py, hook, event, run)?;
        let options = Options {
            hook,
            emit: trace.get().begin_emit(),
            budget_ns: budget,
            contracts: self.contracts,
            precise: trace.get().precise,
            correlation: corr,
        };
        let mut state = EmitState {
            walk: Walk::new(chain, options),
            event: Held::new(event.clone().unbind()),
            env: Held::new(env.clone().unbind()),
            event_type: Held::new(event_type.clone().unbind()),
            trace: Held::new(trace.clone().unbind()),
            best: None,
            // I27: the event given is kept for its identity, only on a bus with a scheme.
            identifying: self.identity.map(|scheme| Identifying::new(scheme, event)),
        };
        match state.run(py)? {
            Stop::Done(result) => Ok(result.into_any()),
            // Only a suspended walk is moved into a `Pending`: the fast path copies nothing.
            Stop::Wait { awaitable, yielded } => Pending::wait(py, state, awaitable, yielded),
        }
    }
}

/// The chain's time budget (I26): the earlier of the hook point's deadline and the emit's
/// own, which is parsed here. Only for an emit that has one.
#[cold]
#[inline(never)]
fn budget(
    hook: HookId,
    hook_deadline: Option<u64>,
    deadline: Option<&Bound<'_, PyAny>>,
) -> PyResult<Option<u64>> {
    let own = deadline_ns(deadline, hook, DeadlineOf::Emit, Phase::Emit)?;
    Ok(chain_deadline(0, hook_deadline, own))
}

/// What an emit walks: the planned chain and its match key, the hook point's chain deadline,
/// and the emit's own deadline as the caller gave it (I26), parsed once the event is checked.
struct Planned<'a, 'py> {
    chain: Chain<Payload>,
    key: Option<MatchKey>,
    hook_deadline: Option<u64>,
    deadline: Option<&'a Bound<'py, PyAny>>,
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
    /// Refused: `copy`, `deepcopy` and `pickle` all raise this `TypeError` (both cores alike).
    #[allow(clippy::unused_self)] // a Python method needs its receiver
    fn __reduce_ex__(&self, _protocol: &Bound<'_, PyAny>) -> PyResult<()> {
        Err(crate::errors::not_copyable("Registry", crate::errors::LIVE))
    }
    #[new]
    #[pyo3(signature = (event_types, *, contracts = None, deadlines = None, identity = None))]
    fn new(
        event_types: &Bound<'_, PyAny>,
        contracts: Option<&Bound<'_, PyAny>>,
        deadlines: Option<&Bound<'_, PyAny>>,
        identity: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let contracts = mode_of(contracts)?;
        let deadlines = deadlines_of(deadlines)?;
        let identity = scheme_of(identity)?;
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
        let plans = deadlines
            .iter()
            .map(|&deadline| {
                GilCell::new(Some(Plan {
                    chain: Arc::from(Vec::new()),
                    timed: deadline.is_some(),
                    key: None,
                    deadline,
                }))
            })
            .collect();
        Ok(Self {
            inner: Mutex::new(CoreRegistry::new()),
            plans,
            event_types: types,
            contracts,
            spare: Spare::default(),
            last_seen: LastSeen::default(),
            deadlines,
            identity,
        })
    }

    /// Register `call` under `decl` with the overrides of I10; return what took effect.
    #[pyo3(signature = (decl, call, *, layer = None, name = None, band = None, hooks = None, fail_mode = None, timeout = None, r#match = None, mode = None))]
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
        r#match: Option<&Bound<'_, PyAny>>,
        mode: Option<&Bound<'_, PyAny>>,
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
            r#match,
            mode,
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
        // On an error the payload is dropped under the lock, which runs no Python code: the
        // caller still holds `call` and `declared`. The error becomes an exception after it.
        let replaced = {
            let mut core = self.lock();
            core.register(result, payload)
                .map(|entry| self.withdraw(py, entry.decl.hooks.iter().copied()))
        };
        drop(replaced.map_err(|e| to_py(py, Phase::Register, &e))?);
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
        // A lone surrogate is no valid text: no middleware has that name (I17).
        let Ok(text) = text.to_str() else {
            return Err(not_text(
                Phase::Register,
                ErrorKind::UnknownMiddleware,
                "name",
                text,
            ));
        };
        // The removed entry and the replaced chains may hold the last references to the
        // middleware: they are dropped after the lock (see `withdraw`).
        let unregistered = {
            let mut core = self.lock();
            core.unregister(text).map(|removed| {
                let replaced = self.withdraw(py, removed.decl.hooks.iter().copied());
                (removed, replaced)
            })
        };
        let (removed, replaced) = unregistered.map_err(|e| to_py(py, Phase::Register, &e))?;
        drop(replaced);
        Ok(removed.payload.decl.clone_ref(py))
    }

    /// The declarations of the chain an event of `hook` whose key (I22: `tool.name` or
    /// `request.model`) is `value` runs, in run order; `None` is a key absent or not text.
    #[pyo3(signature = (hook, value = None))]
    fn chain_for<'py>(
        &self,
        py: Python<'py>,
        hook: &Bound<'py, PyAny>,
        value: Option<&str>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let chain = self.lock().chain_for(hook_of(hook)?, value);
        PyTuple::new(py, chain.iter().map(|e| e.payload.decl.clone_ref(py)))
    }

    /// The declarations of `hook`'s chain in run order (direction applied).
    fn chain<'py>(
        &self,
        py: Python<'py>,
        hook: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let chain = self.planned(py, hook_of(hook)?).chain;
        PyTuple::new(py, chain.iter().map(|e| e.payload.decl.clone_ref(py)))
    }

    /// The hook-contract mode: `"warn"`, `"strict"` or `None` (I14).
    #[getter]
    fn contracts(&self) -> Option<&'static str> {
        self.contracts.map(ContractMode::as_str)
    }

    /// The content-identity scheme: `"jcs-sha256"` or `None` (I27).
    #[getter]
    fn identity(&self) -> Option<&'static str> {
        self.identity.map(IdentityScheme::as_str)
    }

    /// The chain deadline of `hook` in seconds (I26), or `None`.
    fn deadline(&self, hook: &Bound<'_, PyAny>) -> PyResult<Option<f64>> {
        let hook = hook_of(hook)?;
        Ok(self.deadlines[usize::from(hook)].map(nanos_to_seconds))
    }

    fn has_timeouts(&self, hook: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.planned(hook.py(), hook_of(hook)?).timed)
    }

    /// How many chains the core has planned: none while middleware are only registered (see
    /// `plan_builds` in the core). For tests of the cost of registering.
    #[getter]
    fn _plan_builds(&self) -> u64 {
        self.lock().plan_builds()
    }

    /// Run `hook`'s chain as far as it goes without waiting: a `HookResult`, or a `Pending`.
    #[pyo3(signature = (hook, event, env, trace, deadline = None))]
    fn emit(
        &self,
        py: Python<'_>,
        hook: &Bound<'_, PyAny>,
        event: &Bound<'_, PyAny>,
        env: &Bound<'_, PyAny>,
        trace: &Bound<'_, PyAny>,
        deadline: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let hook = hook_of(hook)?;
        let Plan {
            chain,
            key,
            deadline: hook_deadline,
            ..
        } = self.planned(py, hook);
        let planned = Planned {
            chain,
            key,
            hook_deadline,
            deadline: deadline.filter(|d| !d.is_none()),
        };
        self.start(py, hook, planned, event, env, trace, &Run::Envelope(env))
    }

    /// `emit` with the run context's envelope and trace, as `HookBus.emit` calls it; or `None`
    /// when the chain has timeouts and trio runs it: then Python runs it under one cancel scope
    /// (`_slowpath.run_structured`).
    #[pyo3(signature = (hook, event, ctx, deadline = None))]
    fn emit_ctx(
        &self,
        py: Python<'_>,
        hook: &Bound<'_, PyAny>,
        event: &Bound<'_, PyAny>,
        ctx: &Bound<'_, PyAny>,
        deadline: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        self.start_ctx(py, hook, event, ctx, deadline.filter(|d| !d.is_none()))
    }

    /// `await bus.emit(hook, event, ctx)`: run `hook`'s chain on `event`; the combined outcome
    /// and the event as the last middleware left it (a native coroutine, see `emit.rs`).
    /// `deadline` is the emit's own chain deadline (I26).
    #[pyo3(signature = (hook, event, ctx, *, deadline = None))]
    fn emit_call<'py>(
        slf: &Bound<'py, Self>,
        hook: &Bound<'py, PyAny>,
        event: &Bound<'py, PyAny>,
        ctx: &Bound<'py, PyAny>,
        deadline: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let deadline = deadline.filter(|d| !d.is_none()).cloned();
        new_emit(slf, hook.clone(), event.clone(), ctx.clone(), deadline)
    }

    /// `emit_call` as a bare builtin bound to this registry: what `HookBus.emit` is.
    fn emitter<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        emitter(slf)
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        for t in &self.event_types {
            visit.call(t)?;
        }
        self.spare.traverse(&visit)?;
        self.last_seen.traverse(&visit)?;
        if let Ok(inner) = self.inner.try_lock() {
            for entry in inner.entries() {
                visit.call(&entry.payload.call)?;
                visit.call(&entry.payload.decl)?;
            }
        }
        Ok(())
    }

    fn __clear__(&self) {
        // The collector calls this on a thread attached to the interpreter.
        Python::attach(|py| {
            let released = {
                let mut core = self.lock();
                let old = std::mem::replace(&mut *core, CoreRegistry::new());
                let hooks = (0..).zip(&self.plans).map(|(id, _)| id);
                (old, self.withdraw(py, hooks))
            };
            drop(released); // after the lock (see `withdraw`)
            self.last_seen.clear(py);
        });
    }
}
