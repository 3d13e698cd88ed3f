//! `harnessweaver._core`: the Rust core of harnessweaver, for Python.
//!
//! The rules live in the pure-Rust `harnessweaver-core` crate; this crate only carries Python
//! values across: outcomes and results (`outcome.rs`), declarations (`declaration.rs`), the
//! registry and the emit entry point (`registry.rs`, hook names in `hook_names.rs`), the chain walk over coroutines
//! (`walk.rs`), the trace (`trace.rs`), errors (`errors.rs`) and which async library runs an
//! emit (`backend.rs`). Nothing here panics across the boundary: bad input becomes a Python
//! exception.

mod backend;
mod context;
mod contract;
mod correlation;
mod deadline;
mod declaration;
mod emit;
mod emitter;
mod errors;
mod gil_cell;
mod held;
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
