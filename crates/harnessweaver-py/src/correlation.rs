//! An emit's correlation (I21): the run, step and tool its trace records name, taken from the
//! run context and the caller's event when the emit starts.
//!
//! Reading them costs attribute look-ups on the event (`step`, `tool.name`). Events are
//! immutable (I18), so an emit of the very object the bus's last emit read, on the same hook
//! point and run, has the same correlation: the bus keeps the last one it made, with a strong
//! reference to that event (so its address cannot be reused by another object), and such an
//! emit shares it: no look-up, no allocation, one counter increment. A correlation read anew
//! that equals the last one is shared too, and the texts of a new one are shared with the
//! last one's when equal, so the trace's comparison (`correlation.rs` in the core) is mostly a
//! pointer comparison.

use std::sync::Arc;

use pyo3::exceptions::PyTypeError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyInt, PyString};

use harnessweaver_core::catalogue::{carries_step, carries_tool, HookId};
use harnessweaver_core::trace::{text_replacing_surrogates, Correlation, MAX_EMIT};

use crate::cpython::Held;
use crate::gil_cell::{GilCell, Plain};

/// What an emit holds: the correlation it writes its records with.
pub type Shared = Arc<Correlation>;

/// The last correlation a bus made, and the address of the event and the hook point it was
/// read from (the event itself is kept alive next to it, see [`LastSeen`]).
#[derive(Clone)]
struct Seen {
    event: usize,
    hook: HookId,
    corr: Shared,
}

// SAFETY: cloning a `Seen` copies an address and an id and clones an `Arc`: no Python code.
unsafe impl Plain for Option<Seen> {}

/// The last correlation a bus made (see the module comment): what the hot path compares,
/// cloned out of the cell, and a strong reference to the event it was read from, swapped in
/// and out with it (one value), so that no other object can take that address while a `Seen`
/// names it.
#[derive(Default)]
pub struct LastSeen(GilCell<(Option<Seen>, Option<Held<PyAny>>)>);

/// Where an emit's run id comes from.
pub enum Run<'a, 'py> {
    /// A native `RunContext`, which read it once.
    Read(&'a Arc<str>),
    /// Any other envelope: its `run_id`, read now.
    Envelope(&'a Bound<'py, PyAny>),
}

impl LastSeen {
    /// The correlation of an emit of `event` on `hook` in `run`.
    #[inline]
    pub fn correlation(
        &self,
        py: Python<'_>,
        hook: HookId,
        event: &Bound<'_, PyAny>,
        run: &Run<'_, '_>,
    ) -> PyResult<Shared> {
        if let (Run::Read(run), Some(seen)) = (run, self.0.get_first(py)) {
            // A new context of the same run (one per round, per request) holds its own copy
            // of the run id: equal text is the same run.
            let same_run =
                (seen.corr.run.as_ref()).is_some_and(|r| Arc::ptr_eq(r, run) || r == *run);
            if same_run && seen.event == event.as_ptr() as usize && seen.hook == hook {
                return Ok(seen.corr);
            }
        }
        self.read(py, hook, event, run)
    }

    /// A correlation read from the event (and the envelope), kept as the last one.
    #[inline(never)]
    fn read(
        &self,
        py: Python<'_>,
        hook: HookId,
        event: &Bound<'_, PyAny>,
        run: &Run<'_, '_>,
    ) -> PyResult<Shared> {
        let last = self.0.get_first(py).map(|seen| seen.corr);
        let before = last.as_deref();
        let run = match run {
            Run::Read(run) => Arc::clone(run),
            Run::Envelope(env) => run_of_envelope(env, before.and_then(|c| c.run.as_ref()))?,
        };
        let step = if carries_step(hook) {
            step_of(event)
        } else {
            None
        };
        let tool = if carries_tool(hook) {
            tool_of(event, before.and_then(|c| c.tool.as_ref()))?
        } else {
            None
        };
        let corr = Correlation {
            run: Some(run),
            step,
            tool,
        };
        let corr = match last {
            Some(last) if *last == corr => last,
            _ => Arc::new(corr),
        };
        let seen = Seen {
            event: event.as_ptr() as usize,
            hook,
            corr: Arc::clone(&corr),
        };
        let kept = Some(Held::new(event.clone().unbind()));
        // Dropped out of the cell: letting go of the old event may run Python code.
        drop(self.0.replace(py, (Some(seen), kept)));
        Ok(corr)
    }

    /// Shows the kept event to the garbage collector.
    pub fn traverse(&self, visit: &pyo3::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        self.0.traverse(|(_, event)| match event {
            Some(event) => visit.call(event.get()),
            None => Ok(()),
        })
    }

    /// Lets go of the kept event.
    pub fn clear(&self, py: Python<'_>) {
        drop(self.0.replace(py, (None, None)));
    }
}

/// The run id of an envelope that is not a native `RunContext`'s: read each emit.
fn run_of_envelope(env: &Bound<'_, PyAny>, last: Option<&Arc<str>>) -> PyResult<Arc<str>> {
    let id = env.getattr(intern!(env.py(), "run_id"))?;
    run_text(&id, last)
}

/// A run id as trace text (I21): a `str`, else a `TypeError` naming it.
pub fn run_text(id: &Bound<'_, PyAny>, last: Option<&Arc<str>>) -> PyResult<Arc<str>> {
    match id.cast::<PyString>() {
        Ok(id) => shared_text(id, last),
        Err(_) => Err(PyTypeError::new_err(format!(
            "Envelope run_id must be a string, got {} (I21)",
            id.repr()?
        ))),
    }
}

/// The event's `step` when it is an `int` (not a `bool`) from 0 to 2^53 − 1; else none (I21).
fn step_of(event: &Bound<'_, PyAny>) -> Option<u64> {
    let step = event.getattr(intern!(event.py(), "step")).ok()?;
    let step = step.cast_exact::<PyInt>().ok()?;
    step.extract::<u64>().ok().filter(|s| *s <= MAX_EMIT)
}

/// The event's `tool.name` when it is a `str`; else none (I21).
fn tool_of(event: &Bound<'_, PyAny>, last: Option<&Arc<str>>) -> PyResult<Option<Arc<str>>> {
    let py = event.py();
    let Ok(tool) = event.getattr(intern!(py, "tool")) else {
        return Ok(None);
    };
    let Ok(name) = tool.getattr(intern!(py, "name")) else {
        return Ok(None);
    };
    match name.cast::<PyString>() {
        Ok(name) => shared_text(name, last).map(Some),
        Err(_) => Ok(None),
    }
}

/// `text` as shared trace text: `last` itself when it holds the same text (no allocation),
/// and each surrogate code point written as U+FFFD (I21).
fn shared_text(text: &Bound<'_, PyString>, last: Option<&Arc<str>>) -> PyResult<Arc<str>> {
    if let Ok(valid) = text.to_str() {
        return Ok(match last {
            Some(last) if **last == *valid => Arc::clone(last),
            _ => Arc::from(valid),
        });
    }
    let py = text.py();
    // `str.encode` itself, never a subclass's own `encode` (I29): read from the storage.
    let encode = py.get_type::<PyString>().getattr(intern!(py, "encode"))?;
    let encoded = encode.call1((text, "utf-8", "surrogatepass"))?;
    let bytes = encoded.cast::<PyBytes>()?;
    Ok(Arc::from(text_replacing_surrogates(bytes.as_bytes())))
}
