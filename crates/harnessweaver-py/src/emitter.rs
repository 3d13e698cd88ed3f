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

use pyo3::prelude::*;
use pyo3::{intern, PyTraverseError, PyVisit};

use crate::cpython::{self, FastArgs, Fastcall, FastcallDef};
use crate::emit::Emit;
use crate::gil_cell::GilCell;
use crate::registry::Registry;

/// The method definition behind every registry's `emit` builtin.
static EMIT_DEF: FastcallDef = FastcallDef::new::<EmitCall>(
    c"emit",
    c"emit(hook, event, ctx)\n--\n\nRun hook's chain on event: an awaitable HookResult.",
);

/// `registry.emitter()`: the `emit` builtin bound to `registry`.
pub fn emitter<'py>(registry: &Bound<'py, Registry>) -> PyResult<Bound<'py, PyAny>> {
    cpython::fastcall_builtin(&EMIT_DEF, registry.as_any())
}

/// The `emit` builtin: three positional arguments on the fast path; any other call goes
/// through the generic `Registry.emit_call` (keywords, errors).
struct EmitCall;

impl Fastcall for EmitCall {
    #[inline]
    fn call<'py>(
        registry: &Bound<'py, PyAny>,
        args: &FastArgs<'_, 'py>,
    ) -> PyResult<Bound<'py, PyAny>> {
        if let Some([hook, event, ctx]) = args.three() {
            return new_emit(registry.cast::<Registry>()?, hook, event, ctx, None);
        }
        let (positional, kwargs) = args.to_tuple_and_dict()?;
        registry.call_method(
            intern!(registry.py(), "emit_call"),
            positional,
            Some(&kwargs),
        )
    }
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
        // With the GIL held nothing can take a new reference between this check and the reuse.
        let unshared = cpython::is_only_reference(kept.as_any());
        unshared.then_some(kept) // a shared one is dropped here
    }

    /// Shows the kept `Emit` to the garbage collector.
    pub fn traverse(&self, visit: &PyVisit<'_>) -> Result<(), PyTraverseError> {
        self.0
            .traverse(|kept| kept.as_ref().map_or(Ok(()), |emit| visit.call(emit)))
    }
}
