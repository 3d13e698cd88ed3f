//! The outcomes and `HookResult` as native classes (paired with `_pycore/outcomes.py`).
//!
//! They are created on the hot path, so they are frozen `#[pyclass]`es that keep their fields
//! as Python objects: building one is an allocation, reading one from Rust a pointer load.
//! Equality, hashing, `repr` and pickling follow the pure-Python classes exactly.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyString, PyTuple};

use harnessweaver_core::duration::{duration_from_seconds, nanos_to_seconds, parse_duration_text};

type Text = Py<PyString>;

fn text(owner: &str, field: &str, value: &Bound<'_, PyAny>) -> PyResult<Text> {
    match value.cast::<PyString>() {
        Ok(s) => Ok(s.clone().unbind()),
        Err(_) => Err(PyTypeError::new_err(format!(
            "{owner}.{field} must be a str, got {}",
            value.repr()?
        ))),
    }
}

fn optional_text(
    owner: &str,
    field: &str,
    value: Option<&Bound<'_, PyAny>>,
) -> PyResult<Option<Text>> {
    match value {
        None => Ok(None),
        Some(v) if v.is_none() => Ok(None),
        Some(v) => match v.cast::<PyString>() {
            Ok(s) => Ok(Some(s.clone().unbind())),
            Err(_) => Err(PyTypeError::new_err(format!(
                "{owner}.{field} must be a str or None, got {}",
                v.repr()?
            ))),
        },
    }
}

fn any_opt<'py, T>(py: Python<'py>, value: Option<&Py<T>>) -> Bound<'py, PyAny> {
    value.map_or_else(
        || py.None().into_bound(py),
        |v| v.bind(py).clone().into_any(),
    )
}

/// `Name(field=repr, ...)`, as the pure-Python classes print themselves.
fn repr(name: &str, fields: &[&str], values: &[Bound<'_, PyAny>]) -> PyResult<String> {
    let mut parts = Vec::with_capacity(fields.len());
    for (field, value) in fields.iter().zip(values) {
        parts.push(format!("{field}={}", value.repr()?));
    }
    Ok(format!("{name}({})", parts.join(", ")))
}

/// `hash((name, *values))`, the same number the pure-Python classes give.
fn hash(py: Python<'_>, name: &str, values: &[Bound<'_, PyAny>]) -> PyResult<isize> {
    let mut items = vec![PyString::new(py, name).into_any()];
    items.extend(values.iter().cloned());
    PyTuple::new(py, items)?.hash()
}

fn equal(a: &[Bound<'_, PyAny>], b: &[Bound<'_, PyAny>]) -> PyResult<bool> {
    for (x, y) in a.iter().zip(b) {
        if !x.eq(y)? {
            return Ok(false);
        }
    }
    Ok(true)
}

fn reduce<'py>(
    slf: &Bound<'py, PyAny>,
    values: Vec<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyTuple>> {
    let py = slf.py();
    PyTuple::new(
        py,
        [
            slf.get_type().into_any(),
            PyTuple::new(py, values)?.into_any(),
        ],
    )
}

fn to_dict<'py>(
    py: Python<'py>,
    kind: &str,
    fields: &[&str],
    values: Vec<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("kind", kind)?;
    for (field, value) in fields.iter().zip(values) {
        dict.set_item(field, value)?;
    }
    Ok(dict)
}

/// Compares two outcomes of the same class field by field; anything else is `NotImplemented`.
macro_rules! rich_eq {
    ($slf:ident, $other:ident, $ty:ty) => {{
        let py = $slf.py();
        match $other.cast::<$ty>() {
            Ok(other) if other.get_type().is(&$slf.get_type()) => {
                let same = equal(&$slf.get().values(py), &other.get().values(py))?;
                Ok(same.into_pyobject(py)?.to_owned().into_any().unbind())
            }
            _ => Ok(py.NotImplemented()),
        }
    }};
}

/// Let the event through, optionally replaced by `modified` for everything after.
#[pyclass(frozen, module = "harnessweaver", name = "Continue")]
pub struct Continue {
    #[pyo3(get)]
    pub modified: Option<Py<PyAny>>,
}

impl Continue {
    const FIELDS: [&'static str; 1] = ["modified"];
    fn values<'py>(&self, py: Python<'py>) -> Vec<Bound<'py, PyAny>> {
        vec![any_opt(py, self.modified.as_ref())]
    }
}

static CONTINUE: PyOnceLock<Py<Continue>> = PyOnceLock::new();

/// The shared plain `Continue()`: what an emit returns when nothing more severe was answered.
pub fn plain_continue(py: Python<'_>) -> PyResult<&Py<Continue>> {
    CONTINUE.get_or_try_init(py, || Py::new(py, Continue { modified: None }))
}

#[pymethods]
impl Continue {
    #[new]
    #[pyo3(signature = (modified = None))]
    fn new(modified: Option<Py<PyAny>>) -> Self {
        Self { modified }
    }
    #[classattr]
    fn kind() -> &'static str {
        "continue"
    }
    #[classattr]
    fn __match_args__() -> (&'static str,) {
        ("modified",)
    }
    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        repr("Continue", &Self::FIELDS, &slf.get().values(slf.py()))
    }
    fn __eq__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        rich_eq!(slf, other, Continue)
    }
    fn __hash__(slf: &Bound<'_, Self>) -> PyResult<isize> {
        hash(slf.py(), "Continue", &slf.get().values(slf.py()))
    }
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        reduce(slf.as_any(), slf.get().values(slf.py()))
    }
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        dict.set_item("kind", "continue")?;
        dict.set_item("modified", self.modified.is_some())?;
        Ok(dict)
    }
}

/// Stop: nothing after this middleware runs, and the operation does not happen.
#[pyclass(frozen, module = "harnessweaver", name = "Block")]
pub struct Block {
    #[pyo3(get)]
    pub reason: Text,
    #[pyo3(get)]
    pub code: Option<Text>,
}

impl Block {
    const FIELDS: [&'static str; 2] = ["reason", "code"];
    fn values<'py>(&self, py: Python<'py>) -> Vec<Bound<'py, PyAny>> {
        vec![
            self.reason.bind(py).clone().into_any(),
            any_opt(py, self.code.as_ref()),
        ]
    }
}

#[pymethods]
impl Block {
    #[new]
    #[pyo3(signature = (reason, code = None))]
    fn new(reason: &Bound<'_, PyAny>, code: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        Ok(Self {
            reason: text("Block", "reason", reason)?,
            code: optional_text("Block", "code", code)?,
        })
    }
    #[classattr]
    fn kind() -> &'static str {
        "block"
    }
    #[classattr]
    fn __match_args__() -> (&'static str, &'static str) {
        ("reason", "code")
    }
    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        repr("Block", &Self::FIELDS, &slf.get().values(slf.py()))
    }
    fn __eq__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        rich_eq!(slf, other, Block)
    }
    fn __hash__(slf: &Bound<'_, Self>) -> PyResult<isize> {
        hash(slf.py(), "Block", &slf.get().values(slf.py()))
    }
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        reduce(slf.as_any(), slf.get().values(slf.py()))
    }
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        to_dict(py, "block", &Self::FIELDS, self.values(py))
    }
}

/// Pause until someone (`approver_role`) approves.
#[pyclass(frozen, module = "harnessweaver", name = "Suspend")]
pub struct Suspend {
    #[pyo3(get)]
    pub reason: Text,
    #[pyo3(get)]
    pub approver_role: Option<Text>,
    #[pyo3(get)]
    pub code: Option<Text>,
}

impl Suspend {
    const FIELDS: [&'static str; 3] = ["reason", "approver_role", "code"];
    fn values<'py>(&self, py: Python<'py>) -> Vec<Bound<'py, PyAny>> {
        vec![
            self.reason.bind(py).clone().into_any(),
            any_opt(py, self.approver_role.as_ref()),
            any_opt(py, self.code.as_ref()),
        ]
    }
}

#[pymethods]
impl Suspend {
    #[new]
    #[pyo3(signature = (reason, approver_role = None, code = None))]
    fn new(
        reason: &Bound<'_, PyAny>,
        approver_role: Option<&Bound<'_, PyAny>>,
        code: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        Ok(Self {
            reason: text("Suspend", "reason", reason)?,
            approver_role: optional_text("Suspend", "approver_role", approver_role)?,
            code: optional_text("Suspend", "code", code)?,
        })
    }
    #[classattr]
    fn kind() -> &'static str {
        "suspend"
    }
    #[classattr]
    fn __match_args__() -> (&'static str, &'static str, &'static str) {
        ("reason", "approver_role", "code")
    }
    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        repr("Suspend", &Self::FIELDS, &slf.get().values(slf.py()))
    }
    fn __eq__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        rich_eq!(slf, other, Suspend)
    }
    fn __hash__(slf: &Bound<'_, Self>) -> PyResult<isize> {
        hash(slf.py(), "Suspend", &slf.get().values(slf.py()))
    }
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        reduce(slf.as_any(), slf.get().values(slf.py()))
    }
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        to_dict(py, "suspend", &Self::FIELDS, self.values(py))
    }
}

/// Hand the decision to someone else (`to`).
#[pyclass(frozen, module = "harnessweaver", name = "Escalate")]
pub struct Escalate {
    #[pyo3(get)]
    pub reason: Text,
    #[pyo3(get)]
    pub to: Option<Text>,
    #[pyo3(get)]
    pub code: Option<Text>,
}

impl Escalate {
    const FIELDS: [&'static str; 3] = ["reason", "to", "code"];
    fn values<'py>(&self, py: Python<'py>) -> Vec<Bound<'py, PyAny>> {
        vec![
            self.reason.bind(py).clone().into_any(),
            any_opt(py, self.to.as_ref()),
            any_opt(py, self.code.as_ref()),
        ]
    }
}

#[pymethods]
impl Escalate {
    #[new]
    #[pyo3(signature = (reason, to = None, code = None))]
    fn new(
        reason: &Bound<'_, PyAny>,
        to: Option<&Bound<'_, PyAny>>,
        code: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        Ok(Self {
            reason: text("Escalate", "reason", reason)?,
            to: optional_text("Escalate", "to", to)?,
            code: optional_text("Escalate", "code", code)?,
        })
    }
    #[classattr]
    fn kind() -> &'static str {
        "escalate"
    }
    #[classattr]
    fn __match_args__() -> (&'static str, &'static str, &'static str) {
        ("reason", "to", "code")
    }
    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        repr("Escalate", &Self::FIELDS, &slf.get().values(slf.py()))
    }
    fn __eq__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        rich_eq!(slf, other, Escalate)
    }
    fn __hash__(slf: &Bound<'_, Self>) -> PyResult<isize> {
        hash(slf.py(), "Escalate", &slf.get().values(slf.py()))
    }
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        reduce(slf.as_any(), slf.get().values(slf.py()))
    }
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        to_dict(py, "escalate", &Self::FIELDS, self.values(py))
    }
}

fn delay(value: Option<&Bound<'_, PyAny>>) -> PyResult<Option<f64>> {
    let Some(value) = value.filter(|v| !v.is_none()) else {
        return Ok(None);
    };
    let parsed = if let Ok(text) = value.cast::<PyString>() {
        parse_duration_text(text.to_str()?).ok()
    } else if value.is_instance_of::<pyo3::types::PyBool>() {
        None
    } else {
        value
            .extract::<f64>()
            .ok()
            .and_then(|s| duration_from_seconds(s).ok())
    };
    match parsed {
        Some(ns) => Ok(Some(nanos_to_seconds(ns))),
        None => Err(PyValueError::new_err(format!(
            "Retry.delay must be a positive number of seconds or a duration such as 250ms, got {} (ruling 15)",
            value.repr()?
        ))),
    }
}

fn max_attempts(value: Option<&Bound<'_, PyAny>>) -> PyResult<Option<u64>> {
    let Some(value) = value.filter(|v| !v.is_none()) else {
        return Ok(None);
    };
    let whole = !value.is_instance_of::<pyo3::types::PyBool>()
        && value.is_instance_of::<pyo3::types::PyInt>();
    match whole.then(|| value.extract::<u64>().ok()).flatten() {
        Some(n) if n >= 1 => Ok(Some(n)),
        _ => Err(PyValueError::new_err(format!(
            "Retry.max_attempts must be a whole number of at least 1, got {}",
            value.repr()?
        ))),
    }
}

/// Do the operation again, after `delay` seconds, at most `max_attempts` times.
#[pyclass(frozen, module = "harnessweaver", name = "Retry")]
pub struct Retry {
    #[pyo3(get)]
    pub reason: Text,
    #[pyo3(get)]
    pub delay: Option<f64>,
    #[pyo3(get)]
    pub max_attempts: Option<u64>,
    #[pyo3(get)]
    pub code: Option<Text>,
}

impl Retry {
    const FIELDS: [&'static str; 4] = ["reason", "delay", "max_attempts", "code"];
    fn values<'py>(&self, py: Python<'py>) -> Vec<Bound<'py, PyAny>> {
        let delay = self
            .delay
            .into_pyobject(py)
            .map_or_else(|_| py.None().into_bound(py), Bound::into_any);
        let attempts = self
            .max_attempts
            .into_pyobject(py)
            .map_or_else(|_| py.None().into_bound(py), Bound::into_any);
        vec![
            self.reason.bind(py).clone().into_any(),
            delay,
            attempts,
            any_opt(py, self.code.as_ref()),
        ]
    }
}

#[pymethods]
impl Retry {
    #[new]
    #[pyo3(signature = (reason, delay = None, max_attempts = None, code = None))]
    fn new(
        reason: &Bound<'_, PyAny>,
        delay: Option<&Bound<'_, PyAny>>,
        max_attempts: Option<&Bound<'_, PyAny>>,
        code: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        Ok(Self {
            reason: text("Retry", "reason", reason)?,
            delay: self::delay(delay)?,
            max_attempts: self::max_attempts(max_attempts)?,
            code: optional_text("Retry", "code", code)?,
        })
    }
    #[classattr]
    fn kind() -> &'static str {
        "retry"
    }
    #[classattr]
    fn __match_args__() -> (&'static str, &'static str, &'static str, &'static str) {
        ("reason", "delay", "max_attempts", "code")
    }
    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        repr("Retry", &Self::FIELDS, &slf.get().values(slf.py()))
    }
    fn __eq__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        rich_eq!(slf, other, Retry)
    }
    fn __hash__(slf: &Bound<'_, Self>) -> PyResult<isize> {
        hash(slf.py(), "Retry", &slf.get().values(slf.py()))
    }
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        reduce(slf.as_any(), slf.get().values(slf.py()))
    }
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        to_dict(py, "retry", &Self::FIELDS, self.values(py))
    }
}

/// What `emit` returns: the combined `outcome` and the `event` as the chain left it.
#[pyclass(frozen, module = "harnessweaver", name = "HookResult")]
pub struct HookResult {
    #[pyo3(get)]
    pub outcome: Py<PyAny>,
    #[pyo3(get)]
    pub event: Py<PyAny>,
}

#[pymethods]
impl HookResult {
    #[new]
    fn new(outcome: Py<PyAny>, event: Py<PyAny>) -> Self {
        Self { outcome, event }
    }
    #[classattr]
    fn __match_args__() -> (&'static str, &'static str) {
        ("outcome", "event")
    }
    /// Unhashable, like the pure-Python class: events hold dicts.
    #[classattr]
    const __hash__: Option<Py<PyAny>> = None;
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "HookResult(outcome={}, event={})",
            self.outcome.bind(py).repr()?,
            self.event.bind(py).repr()?
        ))
    }
    fn __eq__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        match other.cast::<HookResult>() {
            Ok(other) => {
                let (a, b) = (slf.get(), other.get());
                let same = a.outcome.bind(py).eq(b.outcome.bind(py))?
                    && a.event.bind(py).eq(b.event.bind(py))?;
                Ok(same.into_pyobject(py)?.to_owned().into_any().unbind())
            }
            Err(_) => Ok(py.NotImplemented()),
        }
    }
}
