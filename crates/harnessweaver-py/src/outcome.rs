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

/// What an outcome's `warnings` attribute shows (I24): the value as given, the empty tuple
/// when none was.
fn warnings_of<'py>(py: Python<'py>, warnings: Option<&Py<PyAny>>) -> Bound<'py, PyAny> {
    warnings.map_or_else(|| PyTuple::empty(py).into_any(), |w| w.bind(py).clone())
}

/// `None` for no warnings, so an outcome without them holds nothing more.
fn given(warnings: Option<Py<PyAny>>, py: Python<'_>) -> Option<Py<PyAny>> {
    warnings.filter(|w| !w.bind(py).is_none())
}

/// The fields with `warnings` after them when some were given (repr, pickling).
fn with_warnings<'py>(
    py: Python<'py>,
    mut values: Vec<Bound<'py, PyAny>>,
    warnings: Option<&Py<PyAny>>,
) -> Vec<Bound<'py, PyAny>> {
    if let Some(w) = warnings {
        values.push(w.bind(py).clone());
    }
    values
}

fn repr_warned(
    py: Python<'_>,
    name: &str,
    fields: &[&str],
    values: Vec<Bound<'_, PyAny>>,
    warnings: Option<&Py<PyAny>>,
) -> PyResult<String> {
    let mut names = fields.to_vec();
    if warnings.is_some() {
        names.push("warnings");
    }
    repr(name, &names, &with_warnings(py, values, warnings))
}

/// Compares two outcomes of the same class field by field; anything else is `NotImplemented`.
macro_rules! rich_eq {
    ($slf:ident, $other:ident, $ty:ty) => {{
        let py = $slf.py();
        match $other.cast::<$ty>() {
            Ok(other) if other.get_type().is(&$slf.get_type()) => {
                let (a, b) = ($slf.get(), other.get());
                let same = equal(&a.values(py), &b.values(py))?
                    && warnings_of(py, a.warnings.as_ref())
                        .eq(warnings_of(py, b.warnings.as_ref()))?;
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
    /// The warnings as given (I24); `None` when none were.
    pub warnings: Option<Py<PyAny>>,
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
    CONTINUE.get_or_try_init(py, || {
        Py::new(
            py,
            Continue {
                modified: None,
                warnings: None,
            },
        )
    })
}

#[pymethods]
impl Continue {
    #[new]
    #[pyo3(signature = (modified = None, warnings = None))]
    fn new(py: Python<'_>, modified: Option<Py<PyAny>>, warnings: Option<Py<PyAny>>) -> Self {
        Self {
            modified,
            warnings: given(warnings, py),
        }
    }
    #[classattr]
    fn kind() -> &'static str {
        "continue"
    }
    /// The warnings as given (I24): a list or tuple of `str`, judged when the bus takes the
    /// answer; the empty tuple when none were given.
    #[getter]
    fn warnings<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        warnings_of(py, self.warnings.as_ref())
    }
    #[classattr]
    fn __match_args__() -> (&'static str,) {
        ("modified",)
    }
    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let (py, this) = (slf.py(), slf.get());
        repr_warned(
            py,
            "Continue",
            &Self::FIELDS,
            this.values(py),
            this.warnings.as_ref(),
        )
    }
    fn __eq__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        rich_eq!(slf, other, Continue)
    }
    fn __hash__(slf: &Bound<'_, Self>) -> PyResult<isize> {
        hash(slf.py(), "Continue", &slf.get().values(slf.py()))
    }
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let (py, this) = (slf.py(), slf.get());
        reduce(
            slf.as_any(),
            with_warnings(py, this.values(py), this.warnings.as_ref()),
        )
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
    /// The warnings as given (I24); `None` when none were.
    pub warnings: Option<Py<PyAny>>,
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
    #[pyo3(signature = (reason, code = None, warnings = None))]
    fn new(
        reason: &Bound<'_, PyAny>,
        code: Option<&Bound<'_, PyAny>>,
        warnings: Option<Py<PyAny>>,
    ) -> PyResult<Self> {
        Ok(Self {
            reason: text("Block", "reason", reason)?,
            code: optional_text("Block", "code", code)?,
            warnings: given(warnings, reason.py()),
        })
    }
    #[classattr]
    fn kind() -> &'static str {
        "block"
    }
    /// The warnings as given (I24): a list or tuple of `str`, judged when the bus takes the
    /// answer; the empty tuple when none were given.
    #[getter]
    fn warnings<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        warnings_of(py, self.warnings.as_ref())
    }
    #[classattr]
    fn __match_args__() -> (&'static str, &'static str) {
        ("reason", "code")
    }
    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let (py, this) = (slf.py(), slf.get());
        repr_warned(
            py,
            "Block",
            &Self::FIELDS,
            this.values(py),
            this.warnings.as_ref(),
        )
    }
    fn __eq__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        rich_eq!(slf, other, Block)
    }
    fn __hash__(slf: &Bound<'_, Self>) -> PyResult<isize> {
        hash(slf.py(), "Block", &slf.get().values(slf.py()))
    }
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let (py, this) = (slf.py(), slf.get());
        reduce(
            slf.as_any(),
            with_warnings(py, this.values(py), this.warnings.as_ref()),
        )
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
    /// The warnings as given (I24); `None` when none were.
    pub warnings: Option<Py<PyAny>>,
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
    #[pyo3(signature = (reason, approver_role = None, code = None, warnings = None))]
    fn new(
        reason: &Bound<'_, PyAny>,
        approver_role: Option<&Bound<'_, PyAny>>,
        code: Option<&Bound<'_, PyAny>>,
        warnings: Option<Py<PyAny>>,
    ) -> PyResult<Self> {
        Ok(Self {
            reason: text("Suspend", "reason", reason)?,
            approver_role: optional_text("Suspend", "approver_role", approver_role)?,
            code: optional_text("Suspend", "code", code)?,
            warnings: given(warnings, reason.py()),
        })
    }
    #[classattr]
    fn kind() -> &'static str {
        "suspend"
    }
    /// The warnings as given (I24): a list or tuple of `str`, judged when the bus takes the
    /// answer; the empty tuple when none were given.
    #[getter]
    fn warnings<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        warnings_of(py, self.warnings.as_ref())
    }
    #[classattr]
    fn __match_args__() -> (&'static str, &'static str, &'static str) {
        ("reason", "approver_role", "code")
    }
    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let (py, this) = (slf.py(), slf.get());
        repr_warned(
            py,
            "Suspend",
            &Self::FIELDS,
            this.values(py),
            this.warnings.as_ref(),
        )
    }
    fn __eq__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        rich_eq!(slf, other, Suspend)
    }
    fn __hash__(slf: &Bound<'_, Self>) -> PyResult<isize> {
        hash(slf.py(), "Suspend", &slf.get().values(slf.py()))
    }
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let (py, this) = (slf.py(), slf.get());
        reduce(
            slf.as_any(),
            with_warnings(py, this.values(py), this.warnings.as_ref()),
        )
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
    /// The warnings as given (I24); `None` when none were.
    pub warnings: Option<Py<PyAny>>,
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
    #[pyo3(signature = (reason, to = None, code = None, warnings = None))]
    fn new(
        reason: &Bound<'_, PyAny>,
        to: Option<&Bound<'_, PyAny>>,
        code: Option<&Bound<'_, PyAny>>,
        warnings: Option<Py<PyAny>>,
    ) -> PyResult<Self> {
        Ok(Self {
            reason: text("Escalate", "reason", reason)?,
            to: optional_text("Escalate", "to", to)?,
            code: optional_text("Escalate", "code", code)?,
            warnings: given(warnings, reason.py()),
        })
    }
    #[classattr]
    fn kind() -> &'static str {
        "escalate"
    }
    /// The warnings as given (I24): a list or tuple of `str`, judged when the bus takes the
    /// answer; the empty tuple when none were given.
    #[getter]
    fn warnings<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        warnings_of(py, self.warnings.as_ref())
    }
    #[classattr]
    fn __match_args__() -> (&'static str, &'static str, &'static str) {
        ("reason", "to", "code")
    }
    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let (py, this) = (slf.py(), slf.get());
        repr_warned(
            py,
            "Escalate",
            &Self::FIELDS,
            this.values(py),
            this.warnings.as_ref(),
        )
    }
    fn __eq__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        rich_eq!(slf, other, Escalate)
    }
    fn __hash__(slf: &Bound<'_, Self>) -> PyResult<isize> {
        hash(slf.py(), "Escalate", &slf.get().values(slf.py()))
    }
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let (py, this) = (slf.py(), slf.get());
        reduce(
            slf.as_any(),
            with_warnings(py, this.values(py), this.warnings.as_ref()),
        )
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
    /// The warnings as given (I24); `None` when none were.
    pub warnings: Option<Py<PyAny>>,
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
    #[pyo3(signature = (reason, delay = None, max_attempts = None, code = None, warnings = None))]
    fn new(
        reason: &Bound<'_, PyAny>,
        delay: Option<&Bound<'_, PyAny>>,
        max_attempts: Option<&Bound<'_, PyAny>>,
        code: Option<&Bound<'_, PyAny>>,
        warnings: Option<Py<PyAny>>,
    ) -> PyResult<Self> {
        Ok(Self {
            reason: text("Retry", "reason", reason)?,
            delay: self::delay(delay)?,
            max_attempts: self::max_attempts(max_attempts)?,
            code: optional_text("Retry", "code", code)?,
            warnings: given(warnings, reason.py()),
        })
    }
    #[classattr]
    fn kind() -> &'static str {
        "retry"
    }
    /// The warnings as given (I24): a list or tuple of `str`, judged when the bus takes the
    /// answer; the empty tuple when none were given.
    #[getter]
    fn warnings<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        warnings_of(py, self.warnings.as_ref())
    }
    #[classattr]
    fn __match_args__() -> (&'static str, &'static str, &'static str, &'static str) {
        ("reason", "delay", "max_attempts", "code")
    }
    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let (py, this) = (slf.py(), slf.get());
        repr_warned(
            py,
            "Retry",
            &Self::FIELDS,
            this.values(py),
            this.warnings.as_ref(),
        )
    }
    fn __eq__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        rich_eq!(slf, other, Retry)
    }
    fn __hash__(slf: &Bound<'_, Self>) -> PyResult<isize> {
        hash(slf.py(), "Retry", &slf.get().values(slf.py()))
    }
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let (py, this) = (slf.py(), slf.get());
        reduce(
            slf.as_any(),
            with_warnings(py, this.values(py), this.warnings.as_ref()),
        )
    }
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        to_dict(py, "retry", &Self::FIELDS, self.values(py))
    }
}

/// One warning on a `HookResult` (I24): the middleware that gave it and its bounded text.
#[pyclass(frozen, module = "harnessweaver", name = "HookWarning")]
pub struct HookWarning {
    #[pyo3(get)]
    pub middleware: Text,
    #[pyo3(get)]
    pub text: Text,
}

impl HookWarning {
    fn values<'py>(&self, py: Python<'py>) -> Vec<Bound<'py, PyAny>> {
        vec![
            self.middleware.bind(py).clone().into_any(),
            self.text.bind(py).clone().into_any(),
        ]
    }
}

#[pymethods]
impl HookWarning {
    #[new]
    fn new(middleware: &Bound<'_, PyAny>, text: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(Self {
            middleware: self::text("HookWarning", "middleware", middleware)?,
            text: self::text("HookWarning", "text", text)?,
        })
    }
    #[classattr]
    fn __match_args__() -> (&'static str, &'static str) {
        ("middleware", "text")
    }
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        repr("HookWarning", &["middleware", "text"], &self.values(py))
    }
    fn __eq__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        match other.cast::<HookWarning>() {
            Ok(other) => {
                let same = equal(&slf.get().values(py), &other.get().values(py))?;
                Ok(same.into_pyobject(py)?.to_owned().into_any().unbind())
            }
            Err(_) => Ok(py.NotImplemented()),
        }
    }
    fn __hash__(&self, py: Python<'_>) -> PyResult<isize> {
        hash(py, "HookWarning", &self.values(py))
    }
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        reduce(slf.as_any(), slf.get().values(slf.py()))
    }
}

/// What `emit` returns: the combined `outcome`, the `event` as the chain left it and the
/// `warnings` of the answers the bus took, in the order the middleware ran (I24).
#[pyclass(frozen, module = "harnessweaver", name = "HookResult")]
pub struct HookResult {
    #[pyo3(get)]
    pub outcome: Py<PyAny>,
    #[pyo3(get)]
    pub event: Py<PyAny>,
    /// A tuple of `HookWarning`s; `None` for the shared empty tuple (nothing allocated).
    pub warnings: Option<Py<PyTuple>>,
}

#[pymethods]
impl HookResult {
    /// Refused: `copy`, `deepcopy` and `pickle` all raise this `TypeError` (both cores alike).
    #[allow(clippy::unused_self)] // a Python method needs its receiver
    fn __reduce_ex__(&self, _protocol: &Bound<'_, PyAny>) -> PyResult<()> {
        Err(crate::errors::not_copyable(
            "HookResult",
            crate::errors::IMMUTABLE,
        ))
    }
    #[new]
    #[pyo3(signature = (outcome, event, warnings = None))]
    fn new(
        py: Python<'_>,
        outcome: Py<PyAny>,
        event: Py<PyAny>,
        warnings: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let warnings = match warnings.filter(|w| !w.is_none()) {
            None => None,
            Some(w) => {
                let items: Vec<Bound<'_, PyAny>> = w.try_iter()?.collect::<PyResult<_>>()?;
                for item in &items {
                    if item.cast::<HookWarning>().is_err() {
                        return Err(PyTypeError::new_err(format!(
                            "HookResult.warnings must hold HookWarning items, got {}",
                            item.repr()?
                        )));
                    }
                }
                (!items.is_empty())
                    .then(|| PyTuple::new(py, items))
                    .transpose()?
                    .map(Bound::unbind)
            }
        };
        Ok(Self {
            outcome,
            event,
            warnings,
        })
    }
    /// The warnings of the answers taken (I24): a tuple of `HookWarning`, in run order.
    #[getter]
    fn warnings<'py>(&self, py: Python<'py>) -> Bound<'py, PyTuple> {
        self.warnings
            .as_ref()
            .map_or_else(|| PyTuple::empty(py), |w| w.bind(py).clone())
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
                    && a.event.bind(py).eq(b.event.bind(py))?
                    && a.warnings(py).eq(b.warnings(py))?;
                Ok(same.into_pyobject(py)?.to_owned().into_any().unbind())
            }
            Err(_) => Ok(py.NotImplemented()),
        }
    }
}
