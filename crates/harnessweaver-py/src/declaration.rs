//! Declarations across the boundary (paired with `_pycore/declaration.py`).
//!
//! Python values of the wrong *type* are reported here, field by field in the check order of
//! I4, so that a wrong type and a bad value in different fields report the same first error as
//! the pure-Python core; the values themselves are judged by the core.

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyFrozenSet, PyInt, PyList, PySet, PyString, PyTuple};

use harnessweaver_core::catalogue::hook_id;
use harnessweaver_core::declaration::{
    self as core_decl, DeclarationInput, Overriding, TimeoutInput,
};
use harnessweaver_core::duration::nanos_to_seconds;
use harnessweaver_core::error::invalid_value;
use harnessweaver_core::layer::Layer;
use harnessweaver_core::matcher::{MatchKey, MatchText, MatchValue};
use harnessweaver_core::{Band, ErrorKind, FailMode};

use crate::errors::{to_py, wrong_type, Phase};

/// Marks an argument that was not given (`fail_mode` has no default, ruling 14).
#[pyclass(frozen, module = "harnessweaver._core", name = "_Missing")]
pub struct Missing;

#[pymethods]
impl Missing {
    #[allow(clippy::unused_self)] // a Python method needs its receiver
    fn __repr__(&self) -> &'static str {
        "MISSING"
    }
}

/// A validated declaration: name, hook points, band, fail mode and timeout.
#[pyclass(frozen, module = "harnessweaver", name = "Declaration")]
pub struct Declaration {
    pub inner: core_decl::Declaration,
}

#[pymethods]
impl Declaration {
    /// Refused: `copy`, `deepcopy` and `pickle` all raise this `TypeError` (both cores alike).
    #[allow(clippy::unused_self)] // a Python method needs its receiver
    fn __reduce_ex__(&self, _protocol: &Bound<'_, PyAny>) -> PyResult<()> {
        Err(crate::errors::not_copyable(
            "Declaration",
            crate::errors::IMMUTABLE,
        ))
    }
    #[getter]
    fn name(&self) -> &str {
        &self.inner.name
    }
    #[getter]
    fn hooks<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.inner.hook_names())
    }
    #[getter]
    fn band(&self) -> &'static str {
        self.inner.band.as_str()
    }
    #[getter]
    fn fail_mode(&self) -> &'static str {
        self.inner.fail_mode.as_str()
    }
    #[getter]
    fn timeout(&self) -> Option<f64> {
        self.inner.timeout_ns.map(nanos_to_seconds)
    }
    #[getter]
    fn timeout_ns(&self) -> Option<u64> {
        self.inner.timeout_ns
    }
    /// The matcher (I22): `{"tool": ("refund_*",), ...}`, or `None` for every event.
    #[getter]
    fn r#match<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(matcher) = &self.inner.matcher else {
            return Ok(None);
        };
        let dict = PyDict::new(py);
        for key in MatchKey::ALL {
            if let Some(patterns) = matcher.patterns(key) {
                dict.set_item(key.as_str(), PyTuple::new(py, patterns)?)?;
            }
        }
        Ok(Some(dict))
    }
    /// `"enforce"` or `"audit"` (I25).
    #[getter]
    fn mode(&self) -> &'static str {
        self.inner.mode.as_str()
    }
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "Declaration(name={}, hooks={}, band={}, fail_mode={}, timeout={})",
            PyString::new(py, &self.inner.name).repr()?,
            self.hooks(py)?.repr()?,
            PyString::new(py, self.band()).repr()?,
            PyString::new(py, self.fail_mode()).repr()?,
            self.timeout().into_pyobject(py)?.repr()?,
        ))
    }
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> Py<PyAny> {
        let py = other.py();
        match other.cast::<Declaration>() {
            Ok(other) => PyBool::new(py, self.inner == other.get().inner)
                .to_owned()
                .into_any()
                .unbind(),
            Err(_) => py.NotImplemented(),
        }
    }
    fn __hash__(&self, py: Python<'_>) -> PyResult<isize> {
        (
            self.inner.name.as_str(),
            self.hooks(py)?,
            self.band(),
            self.fail_mode(),
            self.inner.timeout_ns,
        )
            .into_pyobject(py)?
            .hash()
    }
}

/// Text of a string-typed field, or the error of `kind`: for a value that is not a string,
/// and for a string holding a lone surrogate, which is no valid text (I17).
fn text<'a>(
    value: &'a Bound<'_, PyAny>,
    phase: Phase,
    kind: ErrorKind,
    field: &str,
) -> PyResult<&'a str> {
    match value.cast::<PyString>() {
        Ok(s) => s.to_str().map_err(|_| not_text(phase, kind, field, s)),
        Err(_) => Err(wrong_type(value.py(), phase, kind, field, value)),
    }
}

/// The error of `kind` for a string that is not valid text (a lone surrogate, I17).
pub(crate) fn not_text(
    phase: Phase,
    kind: ErrorKind,
    field: &str,
    value: &Bound<'_, PyString>,
) -> PyErr {
    let py = value.py();
    to_py(py, phase, &invalid_value(kind, field, &shown_text(value)))
}

/// A string as messages show it: quoted verbatim, its lone surrogates written as `\udcff`
/// escapes (a message is valid text; the pure-Python core's `shown` does the same, I17).
pub(crate) fn shown_text(value: &Bound<'_, PyString>) -> String {
    // `str.encode` itself: a subclass's own `encode` is never called (it may raise or lie).
    let py = value.py();
    let escaped = py
        .get_type::<PyString>()
        .getattr(intern!(py, "encode"))
        .and_then(|encode| encode.call1((value, "utf-8", "backslashreplace")))
        .and_then(|b| b.extract::<Vec<u8>>());
    match escaped {
        Ok(bytes) => format!("'{}'", String::from_utf8_lossy(&bytes)),
        Err(_) => "<unprintable>".to_owned(),
    }
}

/// A `match` text as converted: valid text, or anything else as messages show it (I22).
enum OwnedText {
    Text(String),
    Bad(String),
}

enum OwnedValue {
    One(OwnedText),
    List(Vec<OwnedText>),
    Other(String),
}

type OwnedMatch = Vec<(OwnedText, OwnedValue)>;

fn owned_text(value: &Bound<'_, PyAny>) -> OwnedText {
    match value.cast::<PyString>() {
        Ok(s) => match s.to_str() {
            Ok(text) => OwnedText::Text(text.to_owned()),
            Err(_) => OwnedText::Bad(shown_text(s)),
        },
        Err(_) => OwnedText::Bad(repr_of(value)),
    }
}

fn repr_of(value: &Bound<'_, PyAny>) -> String {
    value
        .repr()
        .map_or_else(|_| "<unprintable>".to_owned(), |r| r.to_string())
}

/// A `match` argument converted for the core (I22): `None` when absent or `None`; a value
/// that is not a `dict` is `invalid_match` here; the entries are judged by the core.
fn match_arg(value: Option<&Bound<'_, PyAny>>, phase: Phase) -> PyResult<Option<OwnedMatch>> {
    let Some(value) = value.filter(|v| !v.is_none()) else {
        return Ok(None);
    };
    let Ok(dict) = value.cast::<PyDict>() else {
        return Err(wrong_type(
            value.py(),
            phase,
            ErrorKind::InvalidMatch,
            "match",
            value,
        ));
    };
    let mut entries = Vec::with_capacity(dict.len());
    for (key, item) in dict.iter() {
        let converted = if item.is_instance_of::<PyString>() {
            OwnedValue::One(owned_text(&item))
        } else if let Ok(list) = item.cast::<PyList>() {
            OwnedValue::List(list.iter().map(|i| owned_text(&i)).collect())
        } else if let Ok(tuple) = item.cast::<PyTuple>() {
            OwnedValue::List(tuple.iter().map(|i| owned_text(&i)).collect())
        } else {
            OwnedValue::Other(repr_of(&item))
        };
        entries.push((owned_text(&key), converted));
    }
    Ok(Some(entries))
}

fn borrow_text(text: &OwnedText) -> MatchText<'_> {
    match text {
        OwnedText::Text(t) => MatchText::Text(t),
        OwnedText::Bad(shown) => MatchText::Bad(shown.clone()),
    }
}

fn borrowed(owned: &OwnedMatch) -> Vec<(MatchText<'_>, MatchValue<'_>)> {
    owned
        .iter()
        .map(|(key, value)| {
            let value = match value {
                OwnedValue::One(t) => MatchValue::One(borrow_text(t)),
                OwnedValue::List(items) => {
                    MatchValue::List(items.iter().map(borrow_text).collect())
                }
                OwnedValue::Other(shown) => MatchValue::Other(shown.clone()),
            };
            (borrow_text(key), value)
        })
        .collect()
}

/// The hook names of a `hooks` argument: a list, tuple or set of strings (I3). Every item is
/// checked to be a string before any is looked up (I4, I17): `["nope", 5]` is not a list of
/// strings at all, rather than an unknown hook point.
fn hook_names(value: &Bound<'_, PyAny>, phase: Phase) -> PyResult<Vec<String>> {
    let py = value.py();
    let listed = value.is_instance_of::<PyList>()
        || value.is_instance_of::<PyTuple>()
        || value.is_instance_of::<PySet>()
        || value.is_instance_of::<PyFrozenSet>();
    // Not a list of strings: the whole value is named, whichever item gave it away.
    let not_a_list = || wrong_type(py, phase, ErrorKind::InvalidHooks, "hooks", value);
    if !listed {
        return Err(not_a_list());
    }
    let mut items = Vec::new();
    for item in value.try_iter()? {
        match item?.cast_into::<PyString>() {
            Ok(s) => items.push(s),
            Err(_) => return Err(not_a_list()),
        }
    }
    if items.is_empty() {
        return Err(to_py(
            py,
            phase,
            &invalid_value(ErrorKind::InvalidHooks, "hooks", "[]"),
        ));
    }
    let mut names = Vec::with_capacity(items.len());
    for item in &items {
        // A string that is no valid text names no hook point: unknown, like any other.
        let name = item
            .to_str()
            .map_err(|_| not_text(phase, ErrorKind::UnknownHook, "hook", item))?;
        hook_id(name).map_err(|e| to_py(py, phase, &e))?;
        names.push(name.to_owned());
    }
    Ok(names)
}

fn timeout_input<'a>(value: &'a Bound<'_, PyAny>, phase: Phase) -> PyResult<TimeoutInput<'a>> {
    let py = value.py();
    // A number is an int or a float (I17): not a bool, nor a Decimal, a Fraction or anything
    // else that merely converts to a float.
    let input = if let Ok(s) = value.cast::<PyString>() {
        TimeoutInput::Text(
            s.to_str()
                .map_err(|_| not_text(phase, ErrorKind::InvalidDuration, "timeout", s))?,
        )
    } else if value.is_instance_of::<PyBool>()
        || !(value.is_instance_of::<PyInt>() || value.is_instance_of::<PyFloat>())
    {
        return Err(wrong_type(
            py,
            phase,
            ErrorKind::InvalidDuration,
            "timeout",
            value,
        ));
    } else if let Ok(seconds) = value.extract::<f64>() {
        TimeoutInput::Seconds(seconds)
    } else {
        return Err(wrong_type(
            py,
            phase,
            ErrorKind::InvalidDuration,
            "timeout",
            value,
        ));
    };
    input.to_nanos().map_err(|e| match input {
        // A number is shown as Python shows it, the same as the pure-Python core does.
        TimeoutInput::Seconds(_) => {
            wrong_type(py, phase, ErrorKind::InvalidDuration, "timeout", value)
        }
        TimeoutInput::Text(_) => to_py(py, phase, &e),
    })?;
    Ok(input)
}

fn fail_mode_text<'a>(value: &'a Bound<'_, PyAny>, phase: Phase) -> PyResult<Option<&'a str>> {
    let py = value.py();
    if value.is_none() || value.is_instance_of::<Missing>() {
        return Ok(None);
    }
    let mode = text(value, phase, ErrorKind::InvalidFailMode, "fail_mode")?;
    FailMode::parse(mode).map_err(|e| to_py(py, phase, &e))?;
    Ok(Some(mode))
}

fn band_text<'a>(value: &'a Bound<'_, PyAny>, phase: Phase) -> PyResult<&'a str> {
    let band = text(value, phase, ErrorKind::InvalidBand, "band")?;
    Band::parse(band).map_err(|e| to_py(value.py(), phase, &e))?;
    Ok(band)
}

fn name_text<'a>(value: &'a Bound<'_, PyAny>, phase: Phase) -> PyResult<&'a str> {
    let name = text(value, phase, ErrorKind::InvalidName, "name")?;
    core_decl::validate_name(name).map_err(|e| to_py(value.py(), phase, &e))?;
    Ok(name)
}

/// A `mode` argument (I25): `None` when not given; a value that is not text is kept as its
/// error, to be reported at mode's place in the order of I4 (after match, before R2).
fn mode_arg<'a>(
    value: Option<&'a Bound<'_, PyAny>>,
    phase: Phase,
) -> Result<Option<&'a str>, PyErr> {
    match value.filter(|v| !v.is_none()) {
        Some(value) => text(value, phase, ErrorKind::InvalidMode, "mode").map(Some),
        None => Ok(None),
    }
}

/// Validate a declaration in the order of I4; raise `DeclarationError` on the first fault.
#[pyfunction]
#[pyo3(signature = (name, hooks, *, band = None, fail_mode = None, timeout = None, r#match = None, mode = None))]
#[allow(clippy::too_many_arguments)]
pub fn declare(
    py: Python<'_>,
    name: &Bound<'_, PyAny>,
    hooks: &Bound<'_, PyAny>,
    band: Option<&Bound<'_, PyAny>>,
    fail_mode: Option<&Bound<'_, PyAny>>,
    timeout: Option<&Bound<'_, PyAny>>,
    r#match: Option<&Bound<'_, PyAny>>,
    mode: Option<&Bound<'_, PyAny>>,
) -> PyResult<Declaration> {
    let phase = Phase::Declare;
    let name = name_text(name, phase)?;
    let hooks = hook_names(hooks, phase)?;
    let band = band.map(|b| band_text(b, phase)).transpose()?;
    let fail_mode = match fail_mode {
        Some(mode) => fail_mode_text(mode, phase)?,
        None => None,
    };
    // A missing fail mode is reported before the timeout is looked at (I4): the core does it.
    let timeout = match (fail_mode, timeout.filter(|t| !t.is_none())) {
        (Some(_), Some(t)) => Some(timeout_input(t, phase)?),
        _ => None,
    };
    let hook_refs: Vec<&str> = hooks.iter().map(String::as_str).collect();
    let owned = match_arg(r#match, phase)?;
    let entries = owned.as_ref().map(borrowed);
    let mode_text = mode_arg(mode, phase);
    let input = DeclarationInput {
        name,
        hooks: &hook_refs,
        band,
        fail_mode,
        timeout,
        matcher: entries.as_deref(),
        mode: mode_text.as_ref().ok().copied().flatten(),
    };
    let inner = core_decl::with_mode_error(core_decl::declare(&input), mode_text.map(drop), |e| {
        to_py(py, phase, &e)
    })?;
    Ok(Declaration { inner })
}

/// The registration overrides of I10, or a spec item's keys in `layer` (I13), checked in the
/// order of I4 (`None` keeps a value): each Python value is turned into text or a number and
/// handed to the core's `Overriding` at once, which checks it, so a value of the wrong type is
/// reported at its own place in that order (I17).
#[allow(clippy::too_many_arguments)]
pub fn overridden(
    py: Python<'_>,
    decl: &core_decl::Declaration,
    layer: Option<Layer>,
    name: Option<&Bound<'_, PyAny>>,
    hooks: Option<&Bound<'_, PyAny>>,
    band: Option<&Bound<'_, PyAny>>,
    fail_mode: Option<&Bound<'_, PyAny>>,
    timeout: Option<&Bound<'_, PyAny>>,
    r#match: Option<&Bound<'_, PyAny>>,
    mode: Option<&Bound<'_, PyAny>>,
) -> PyResult<core_decl::Declaration> {
    let phase = Phase::Register;
    let core = |e: harnessweaver_core::Error| to_py(py, phase, &e);
    let mut overriding = Overriding::new(decl, layer);
    if let Some(name) = given(name) {
        let name = text(name, phase, ErrorKind::InvalidName, "name")?;
        overriding.name(name).map_err(core)?;
    }
    if let Some(hooks) = given(hooks) {
        let hooks = hook_names(hooks, phase)?;
        let refs: Vec<&str> = hooks.iter().map(String::as_str).collect();
        overriding.hooks(&refs).map_err(core)?;
    }
    if let Some(band) = given(band) {
        let band = text(band, phase, ErrorKind::InvalidBand, "band")?;
        overriding.band(band).map_err(core)?;
    }
    if let Some(fail_mode) = given(fail_mode) {
        if let Some(fail_mode) = fail_mode_text(fail_mode, phase)? {
            overriding.fail_mode(fail_mode).map_err(core)?;
        }
    }
    if let Some(timeout) = given(timeout) {
        let timeout = timeout_input(timeout, phase)?;
        overriding.timeout(timeout).map_err(core)?;
    }
    if let Some(owned) = match_arg(r#match, phase)? {
        overriding.matcher(&borrowed(&owned)).map_err(core)?;
    }
    if let Some(mode) = given(mode) {
        let mode = text(mode, phase, ErrorKind::InvalidMode, "mode")?;
        overriding.mode(mode).map_err(core)?;
    }
    overriding.finish().map_err(core)
}

/// A keyword argument that was given: `None` and a missing one keep the declared value.
fn given<'a, 'py>(value: Option<&'a Bound<'py, PyAny>>) -> Option<&'a Bound<'py, PyAny>> {
    value.filter(|v| !v.is_none())
}

/// The layer named by a `layer` argument (I13).
pub fn layer_of(value: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Layer>> {
    let Some(value) = value.filter(|v| !v.is_none()) else {
        return Ok(None);
    };
    let py = value.py();
    let text = text(value, Phase::Register, ErrorKind::UnknownLayer, "layer")?;
    Layer::parse(text)
        .map(Some)
        .map_err(|e| to_py(py, Phase::Register, &e))
}

/// A middleware as a spec item of `layer` declares it (I13, rulings 16-18, S8, R2), without
/// registering it: what a harness spec loader checks before building anything.
#[pyfunction]
#[pyo3(signature = (decl, layer, *, name = None, band = None, hooks = None, fail_mode = None, timeout = None, r#match = None, mode = None))]
#[allow(clippy::too_many_arguments)]
pub fn declare_in(
    py: Python<'_>,
    decl: &Bound<'_, Declaration>,
    layer: &Bound<'_, PyAny>,
    name: Option<&Bound<'_, PyAny>>,
    band: Option<&Bound<'_, PyAny>>,
    hooks: Option<&Bound<'_, PyAny>>,
    fail_mode: Option<&Bound<'_, PyAny>>,
    timeout: Option<&Bound<'_, PyAny>>,
    r#match: Option<&Bound<'_, PyAny>>,
    mode: Option<&Bound<'_, PyAny>>,
) -> PyResult<Declaration> {
    if layer.is_none() {
        // No layer is not a way around the layer rules: unknown_layer, like any other value.
        return Err(wrong_type(
            py,
            Phase::Register,
            ErrorKind::UnknownLayer,
            "layer",
            layer,
        ));
    }
    let layer = layer_of(Some(layer))?;
    let inner = overridden(
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
    Ok(Declaration { inner })
}

/// Seconds of a timeout (`"250ms"` → 0.25); raises `DeclarationError` otherwise (ruling 15).
#[pyfunction]
pub fn parse_duration(value: &Bound<'_, PyAny>) -> PyResult<f64> {
    let input = timeout_input(value, Phase::Declare)?;
    let ns = input
        .to_nanos()
        .map_err(|e| to_py(value.py(), Phase::Declare, &e))?;
    Ok(nanos_to_seconds(ns))
}

/// A class's default middleware name (I1): `RefundCap` → `refund_cap`.
#[pyfunction]
pub fn snake_case(class_name: &str) -> String {
    core_decl::snake_case(class_name)
}
