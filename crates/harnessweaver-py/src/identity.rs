//! Content identity over Python values (I27), paired with `_pycore/identity.py`.
//!
//! The scheme, the domain and the hash are the core's (`harnessweaver_core::identity`); this
//! file only carries a Python value across as a `serde_json::Value`. An event is read through
//! `model_dump()`, the values as the event holds them: inside the domain that is its JSON form
//! (the one the conformance testee reports), but `model_dump(mode="json")` would write a key's
//! lone surrogate as U+FFFD and so hide that the event is outside it (`_pycore/identity.py`
//! reads events the same way). What a `Value` cannot hold is outside the domain, so it is
//! `None` here: a `str` with a lone surrogate, an `int` beyond 64 bits (far beyond 2^53 − 1
//! anyway), a non-finite `float`; and so is a value nested too deeply to follow.

use pyo3::exceptions::{PyException, PyTypeError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple, PyType};
use pyo3::{PyTraverseError, PyVisit};
use serde_json::{Map, Number, Value};

use harnessweaver_core::error::invalid_value;
use harnessweaver_core::identity::{identity, Identities, Identity, IdentityScheme};
use harnessweaver_core::ErrorKind;

use crate::cpython::Held;
use crate::errors::{to_py, Phase};

/// How deeply a value may nest. The conversion, the canonical form and dropping a `Value` all
/// recurse (some 1 KiB of stack a level in all), so a bound keeps a hostile value from
/// exhausting the stack: a Rust stack overflow aborts the process. Every event fits: pydantic
/// refuses a value nested deeper than 255 levels, and an event's deepest free-form value sits
/// a few levels down. Deeper is outside the domain, as in `_pycore/identity.py`, where
/// Python's recursion limit ends the walk (at a depth that depends on the caller's stack).
const MAX_DEPTH: usize = 300;

/// A bus's identity scheme from Python: `None`, or `"jcs-sha256"`; anything else is
/// `invalid_identity` naming the value (I27), like `invalid_contracts` (`contract.rs`).
pub fn scheme_of(value: Option<&Bound<'_, PyAny>>) -> PyResult<Option<IdentityScheme>> {
    let Some(value) = value.filter(|v| !v.is_none()) else {
        return Ok(None);
    };
    let py = value.py();
    // A str that is no valid text (a lone surrogate) is named by its repr, like another type.
    let text = value.cast::<PyString>().ok().and_then(|t| t.to_str().ok());
    let parsed = match text {
        Some(text) => IdentityScheme::parse(text),
        None => Err(invalid_value(
            ErrorKind::InvalidIdentity,
            "identity scheme",
            &value.repr()?.to_string(),
        )),
    };
    parsed.map(Some).map_err(|e| to_py(py, Phase::Register, &e))
}

/// What an emit on a bus with a scheme keeps for its hook record (I27): the scheme, and the
/// event the emit was given (the walk replaces its own with each modification).
pub struct Identifying {
    scheme: IdentityScheme,
    given: Held<PyAny>,
}

impl Identifying {
    pub fn new(scheme: IdentityScheme, event: &Bound<'_, PyAny>) -> Self {
        Self {
            scheme,
            given: Held::new(event.clone().unbind()),
        }
    }

    /// The identities of the event given and of `enforced`, the event the chain left: hashed
    /// once when the chain left the very event it was given (events never change in place,
    /// I18).
    #[cold]
    #[inline(never)]
    pub fn identities(&self, enforced: &Bound<'_, PyAny>) -> PyResult<Identities> {
        let given = self.given.bind(enforced.py());
        let input = event_identity(self.scheme, given)?;
        let enforced = if enforced.is(given) {
            input
        } else {
            event_identity(self.scheme, enforced)?
        };
        Ok(Identities { input, enforced })
    }

    pub fn traverse(&self, visit: &PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(self.given.get())
    }
}

/// The identity of `event` for a hook record: `None` outside the domain, and `None` when its
/// values cannot be had at all (the identity is what the trace says was seen, never an error
/// of the emit). Only the caller's own interruptions (not an `Exception`) propagate.
fn event_identity(scheme: IdentityScheme, event: &Bound<'_, PyAny>) -> PyResult<Option<Identity>> {
    let py = event.py();
    let json = dumped(event).and_then(|values| to_json(&values, 0));
    match json {
        Ok(Some(value)) => Ok(scheme.identity_of(&value)),
        Ok(None) => Ok(None),
        Err(err) if err.is_instance_of::<PyException>(py) => Ok(None),
        Err(err) => Err(err),
    }
}

/// `event.model_dump()`: see the module comment for why not its JSON mode.
fn dumped<'py>(event: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    event.call_method0(intern!(event.py(), "model_dump"))
}

/// `content_identity(value)`: the identity (I27) of an event (a pydantic model, through its
/// JSON form) or of a JSON value (dict with str keys, list, tuple, str, int, float, bool,
/// None), as `"sha256:…"`; `None` outside the domain. Any other type is a `TypeError`.
#[pyfunction]
pub fn content_identity(value: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
    let py = value.py();
    let json = if is_json(value) {
        to_json(value, 0)?
    } else if !value.is_instance_of::<PyType>() && value.hasattr(intern!(py, "model_dump"))? {
        to_json(&dumped(value)?, 0)?
    } else {
        return Err(not_json(value));
    };
    Ok(json.as_ref().and_then(identity))
}

/// Whether `value` is one of the Python types a JSON value is made of.
fn is_json(value: &Bound<'_, PyAny>) -> bool {
    value.is_none()
        || value.is_instance_of::<PyBool>()
        || value.is_instance_of::<PyInt>()
        || value.is_instance_of::<PyFloat>()
        || value.is_instance_of::<PyString>()
        || value.is_instance_of::<PyList>()
        || value.is_instance_of::<PyTuple>()
        || value.is_instance_of::<PyDict>()
}

fn type_name(value: &Bound<'_, PyAny>) -> String {
    value
        .get_type()
        .name()
        .map_or_else(|_| "?".to_owned(), |n| n.to_string())
}

/// `value` as a `serde_json::Value`; `Ok(None)` when it is outside the domain, a `TypeError`
/// naming the type of a part that is no JSON value.
fn to_json(value: &Bound<'_, PyAny>, depth: usize) -> PyResult<Option<Value>> {
    if value.is_none() {
        return Ok(Some(Value::Null));
    }
    // A bool is an int in Python: asked first.
    if let Ok(flag) = value.cast::<PyBool>() {
        return Ok(Some(Value::Bool(flag.is_true())));
    }
    if let Ok(int) = value.cast::<PyInt>() {
        let number = match int.extract::<i64>() {
            Ok(n) => Some(Number::from(n)),
            Err(_) => int.extract::<u64>().ok().map(Number::from),
        };
        return Ok(number.map(Value::Number));
    }
    if let Ok(float) = value.cast::<PyFloat>() {
        return Ok(Number::from_f64(float.value()).map(Value::Number));
    }
    if let Ok(text) = value.cast::<PyString>() {
        return Ok(text.to_str().ok().map(|t| Value::String(t.to_owned())));
    }
    if depth >= MAX_DEPTH {
        return Ok(None);
    }
    if let Ok(list) = value.cast::<PyList>() {
        return items(list.iter(), list.len(), depth);
    }
    if let Ok(tuple) = value.cast::<PyTuple>() {
        return items(tuple.iter(), tuple.len(), depth);
    }
    if let Ok(dict) = value.cast::<PyDict>() {
        let mut map = Map::new();
        for (key, item) in dict.iter() {
            let Ok(key) = key.cast::<PyString>() else {
                let shown = key
                    .repr()
                    .map_or_else(|_| type_name(&key), |r| r.to_string());
                return Err(PyTypeError::new_err(format!(
                    "content identity: an object key is a str, not {shown} (I27)"
                )));
            };
            let Ok(key) = key.to_str() else {
                return Ok(None); // a lone surrogate in a key
            };
            let Some(item) = to_json(&item, depth + 1)? else {
                return Ok(None);
            };
            map.insert(key.to_owned(), item);
        }
        return Ok(Some(Value::Object(map)));
    }
    Err(not_json(value))
}

/// The error for a value (or a part of one) that is neither an event nor a JSON value: it
/// names the type and the rule, in the words of `_pycore/identity.py`.
fn not_json(value: &Bound<'_, PyAny>) -> PyErr {
    PyTypeError::new_err(format!(
        "content identity of a {}: an event or a JSON value (I27)",
        type_name(value)
    ))
}

/// A list or tuple as a JSON array; `Ok(None)` when an item is outside the domain.
fn items<'py>(
    values: impl Iterator<Item = Bound<'py, PyAny>>,
    len: usize,
    depth: usize,
) -> PyResult<Option<Value>> {
    let mut array = Vec::with_capacity(len);
    for item in values {
        let Some(item) = to_json(&item, depth + 1)? else {
            return Ok(None);
        };
        array.push(item);
    }
    Ok(Some(Value::Array(array)))
}
