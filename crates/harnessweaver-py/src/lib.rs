//! `harnessweaver._core`: the Rust core of harnessweaver, for Python.
//!
//! The rules are decided in the pure-Rust `harnessweaver-core` crate (`docs/spec/hook-bus.md`
//! and `conformance/INTERPRETING.md` say what they are), the walk of an emit included: its
//! `Walk` says which middleware to call, judges every answer's timing, fail mode, contract and
//! warnings, keeps the records and says what the combined outcome is. This crate does what
//! only a Python binding can (`python/tests/test_binding_rules.py` checks that every rule it
//! cites is implemented in the core):
//! - native classes: the outcomes, `HookResult` and `HookWarning` (`outcome.rs`), `RunContext`
//!   (`context.rs`), `hw.Trace` with its sinks and `drain()` (`trace.rs`), the `Registry` that
//!   `hw.HookBus` wraps (`registry.rs`);
//! - the emit: a native coroutine (`emit.rs`) started by a bare-minimum call (`emitter.rs`);
//!   the host side of the core's walk (`walk.rs`): calling each middleware and stepping its
//!   coroutine without the event loop until one really suspends, holding the event and the kept
//!   outcome, doing what each verdict says; the raw CPython calls behind safe functions
//!   (`cpython.rs`); hook names looked up by hash (`hook_names.rs`), the emit's correlation
//!   read and shared (`correlation.rs`, I21), which async library runs it (`backend.rs`);
//! - turning Python values into the core's inputs: a declaration's fields, each handed to the
//!   core as it is converted so a wrong type is reported in the order of I4 (`declaration.rs`,
//!   I17), an answer as an outcome or a failure, with its texts (I16) and an event's real type
//!   (I18) (`walk.rs`), warnings (`warning.rs`, I24), deadlines (`deadline.rs`, I26), the view
//!   hook contracts compare (`contract.rs`, I14) and the JSON value content identities hash
//!   (`identity.rs`, I27);
//! - errors as the exceptions of `harnessweaver.errors` (`errors.rs`); the small state every
//!   emit touches, in plain cells under the GIL and a mutex on free-threaded builds
//!   (`gil_cell.rs`); references an emit holds, released at once when dropped (`Held`, in `cpython.rs`).
//!
//! Nothing here panics across the boundary: bad input becomes a Python exception.

mod backend;
mod context;
mod contract;
mod correlation;
mod cpython;
mod deadline;
mod declaration;
mod emit;
mod emitter;
mod errors;
mod gil_cell;
mod hook_names;
mod identity;
mod outcome;
mod registry;
mod trace;
mod walk;
mod warning;

use pyo3::prelude::*;

#[pymodule(gil_used = false)]
mod _core {
    #[pymodule_export]
    use super::context::RunContext;
    #[pymodule_export]
    use super::contract::check_contract;
    #[pymodule_export]
    use super::declaration::{declare, declare_in, parse_duration, snake_case, Declaration};
    #[pymodule_export]
    use super::emit::Emit;
    #[pymodule_export]
    use super::identity::content_identity;
    #[pymodule_export]
    use super::outcome::{Block, Continue, Escalate, HookResult, HookWarning, Retry, Suspend};
    #[pymodule_export]
    use super::registry::Registry;
    #[pymodule_export]
    use super::trace::Trace;
    #[pymodule_export]
    use super::walk::Pending;

    /// A debug figure for tests (issue 13): how many strings the core's interner holds now,
    /// as (permanent, counted). Permanent ones are bounded (declared names, the rules' names and
    /// a fixed budget of codes and error type names); counted ones are freed with the last
    /// trace record naming them.
    #[pyfunction]
    fn _interned() -> (usize, usize) {
        harnessweaver_core::symbol::interned()
    }

    use super::declaration::Missing;
    use pyo3::prelude::*;

    #[pymodule_init]
    fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
        m.add("MISSING", Py::new(m.py(), Missing)?)?;
        m.add("CORE", "rust")?;
        m.add("CONTRACT_RULES", super::contract::rule_ids(m.py())?)?;
        #[cfg(not(Py_LIMITED_API))] // no type slots to patch under the limited API
        super::emit::install_slots(m.py())?;
        m.add("__version__", env!("CARGO_PKG_VERSION"))?;
        Ok(())
    }
}
