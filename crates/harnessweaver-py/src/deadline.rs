//! Chain deadlines (I26) from Python values: the core parses, this file only converts.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyString};

use harnessweaver_core::catalogue::{hook_id, HookId, CATALOGUE};
use harnessweaver_core::deadline::{
    deadline_seconds_ns, deadline_text_ns, deadline_type_error, DeadlineOf,
};

use crate::declaration::shown_text;
use crate::errors::{to_py, Phase};

/// Nanoseconds of a deadline for `hook`: a `str` with a unit or an `int`/`float` of seconds
/// (not a `bool`, I17); `None` is no deadline.
pub fn deadline_ns(
    value: Option<&Bound<'_, PyAny>>,
    hook: HookId,
    of: DeadlineOf,
    phase: Phase,
) -> PyResult<Option<u64>> {
    let Some(value) = value.filter(|v| !v.is_none()) else {
        return Ok(None);
    };
    let py = value.py();
    let name = CATALOGUE.get(usize::from(hook)).map_or("", |h| h.name);
    let parsed = if let Ok(text) = value.cast::<PyString>() {
        match text.to_str() {
            Ok(text) => deadline_text_ns(name, text, of),
            // A lone surrogate is no valid text (I17): shown escaped, like the pure core.
            Err(_) => Err(deadline_type_error(name, &shown_text(text))),
        }
    } else if value.is_instance_of::<PyBool>()
        || !(value.is_instance_of::<PyInt>() || value.is_instance_of::<PyFloat>())
    {
        Err(deadline_type_error(name, &value.repr()?.to_string()))
    } else {
        // A bad number is shown as Python writes it (`repr`), as the pure core shows it.
        match value.extract::<f64>() {
            Ok(seconds) => match deadline_seconds_ns(name, seconds, of) {
                Ok(ns) => Ok(ns),
                Err(_) => Err(deadline_type_error(name, &value.repr()?.to_string())),
            },
            Err(_) => Err(deadline_type_error(name, &value.repr()?.to_string())),
        }
    };
    parsed.map(Some).map_err(|e| to_py(py, phase, &e))
}

/// A bus's deadlines per hook point, indexed by hook id: `{hook name: deadline}` or `None`.
pub fn deadlines_of(value: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<Option<u64>>> {
    let mut deadlines = vec![None; CATALOGUE.len()];
    let Some(value) = value.filter(|v| !v.is_none()) else {
        return Ok(deadlines);
    };
    let py = value.py();
    let dict = value.cast::<PyDict>().map_err(|_| {
        let err = deadline_type_error(
            "the bus",
            &value
                .repr()
                .map_or_else(|_| String::new(), |r| r.to_string()),
        );
        to_py(py, Phase::Register, &err)
    })?;
    for (hook, deadline) in dict.iter() {
        let hook = match hook.cast::<PyString>() {
            Ok(name) => hook_id(name.to_str()?),
            Err(_) => hook_id(&hook.repr()?.to_string()),
        }
        .map_err(|e| to_py(py, Phase::Register, &e))?;
        deadlines[usize::from(hook)] = deadline_ns(
            Some(&deadline),
            hook,
            DeadlineOf::HookPoint,
            Phase::Register,
        )?;
    }
    Ok(deadlines)
}
