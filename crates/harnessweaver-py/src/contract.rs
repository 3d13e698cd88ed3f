//! Hook contracts over Python events (paired with `_pycore/contracts.py`).
//!
//! The rules live in the core (`harnessweaver_core::contract`); this file extracts the
//! language-neutral view they compare from a pydantic event: at each path the core names, the
//! message roles and fingerprints, and field fingerprints. A fingerprint is the value's
//! canonical JSON (sorted keys), so equal values give equal text whatever their dict order.
//! Only a modified event on a bus with a contract mode is ever looked at.

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyString, PyTuple};

use harnessweaver_core::catalogue::HookId;
use harnessweaver_core::contract::{
    check, view_spec, ContractMode, EventView, MessageView, Rule, NO_ROLE,
};
use harnessweaver_core::error::invalid_value;
use harnessweaver_core::ErrorKind;

use crate::errors::{to_py, Phase};
use crate::hook_names::hook_of;

/// A bus's contract mode from Python: `None`, `"warn"` or `"strict"`; anything else is
/// `invalid_contracts` naming the value (I14).
pub fn mode_of(value: Option<&Bound<'_, PyAny>>) -> PyResult<Option<ContractMode>> {
    let Some(value) = value.filter(|v| !v.is_none()) else {
        return Ok(None);
    };
    let py = value.py();
    let parsed = match value.cast::<PyString>() {
        Ok(text) => ContractMode::parse(text.to_str()?),
        Err(_) => Err(invalid_value(
            ErrorKind::InvalidContracts,
            "contracts mode",
            &value.repr()?.to_string(),
        )),
    };
    parsed.map(Some).map_err(|e| to_py(py, Phase::Register, &e))
}

/// The first rule of `hook` that changing `before` into `after` breaks, if any. Reading an
/// event may run a subclass's code (a property, `__iter__`): what it raises is the `Err`, which
/// the walk makes an invalid return (I29).
pub fn violation(
    hook: HookId,
    before: &Bound<'_, PyAny>,
    after: &Bound<'_, PyAny>,
) -> PyResult<Option<Rule>> {
    Ok(check(hook, &view(hook, before)?, &view(hook, after)?))
}

/// The view of `event` that the rules of `hook` compare.
fn view(hook: HookId, event: &Bound<'_, PyAny>) -> PyResult<EventView> {
    let spec = view_spec(hook);
    let py = event.py();
    let mut messages = Vec::new();
    if let Some(path) = spec.messages {
        for message in at(event, path)?.try_iter()? {
            let message = message?;
            let role = message.getattr(intern!(py, "role"))?;
            messages.push(MessageView::new(role_of(&role), fingerprint(&message)?));
        }
    }
    let fields = spec
        .fields
        .iter()
        .map(|path| fingerprint(&at(event, path)?))
        .collect::<PyResult<Vec<_>>>()?;
    Ok(EventView { messages, fields })
}

/// A message's role as the rules compare it: its text when it is a `str` holding valid text;
/// anything else is no role (`""`), neither `system` nor `user` (I29), as in
/// `_pycore/contracts.py`.
fn role_of<'a>(role: &'a Bound<'_, PyAny>) -> &'a str {
    role.cast::<PyString>()
        .ok()
        .and_then(|text| text.to_str().ok())
        .unwrap_or(NO_ROLE)
}

/// The attribute at a dotted path.
fn at<'py>(event: &Bound<'py, PyAny>, path: &str) -> PyResult<Bound<'py, PyAny>> {
    path.split('.')
        .try_fold(event.clone(), |value, name| value.getattr(name))
}

/// A value's canonical JSON: `json.dumps(to_jsonable_python(value), sort_keys=True)`. A `str`
/// is its own fingerprint, unless it holds a lone surrogate (no Rust text can): then its JSON,
/// with `\ud800` escapes (I29), as in `_pycore/contracts.py`.
fn fingerprint(value: &Bound<'_, PyAny>) -> PyResult<String> {
    static JSONABLE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    static DUMPS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let py = value.py();
    if let Some(text) = value
        .cast_exact::<PyString>()
        .ok()
        .and_then(|text| text.to_str().ok().map(str::to_owned))
    {
        return Ok(text);
    }
    let jsonable = JSONABLE.import(py, "pydantic_core", "to_jsonable_python")?;
    let dumps = DUMPS.import(py, "json", "dumps")?;
    let kwargs = PyDict::new(py);
    kwargs.set_item(intern!(py, "sort_keys"), true)?;
    let text = dumps.call((jsonable.call1((value,))?,), Some(&kwargs))?;
    Ok(text.cast::<PyString>()?.to_str()?.to_owned())
}

/// `check_contract(hook, before, after)`: the id of the first contract rule of `hook` that
/// changing `before` into `after` breaks, or `None` (I14). Both must be events of `hook`.
#[pyfunction]
pub fn check_contract(
    hook: &Bound<'_, PyAny>,
    before: &Bound<'_, PyAny>,
    after: &Bound<'_, PyAny>,
) -> PyResult<Option<&'static str>> {
    Ok(violation(hook_of(hook)?, before, after)?.map(Rule::as_str))
}

/// Every contract rule id, in checking order (the value of `CONTRACT_RULES`).
pub fn rule_ids(py: Python<'_>) -> PyResult<Bound<'_, PyTuple>> {
    PyTuple::new(py, Rule::all().map(Rule::as_str).collect::<Vec<_>>())
}
