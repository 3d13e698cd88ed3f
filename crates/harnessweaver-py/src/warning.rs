//! Warnings on answers (I24), paired with `_pycore/warnings.py`: judging a Python value as
//! warnings (the core bounds what is kept) and making the result's `HookWarning`s.

use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};

use harnessweaver_core::registry::Chain;
use harnessweaver_core::warning::{keep, Warnings};

use crate::outcome::HookWarning;
use crate::walk::Payload;

/// The result's `warnings`: a `HookWarning` per text, in run order (`None`: none), from the
/// walk's `(run-order index, kept texts)` pairs.
#[cold]
#[inline(never)]
pub fn result_warnings(
    py: Python<'_>,
    chain: &Chain<Payload>,
    result: &[(usize, Warnings)],
) -> PyResult<Option<Py<PyTuple>>> {
    if result.is_empty() {
        return Ok(None);
    }
    let mut items = Vec::new();
    for (index, texts) in result {
        let name = PyString::new(py, chain[*index].decl.name.as_str()).unbind();
        for text in texts.iter() {
            let warning = HookWarning {
                middleware: name.clone_ref(py),
                text: PyString::new(py, text).unbind(),
            };
            items.push(Py::new(py, warning)?);
        }
    }
    Ok(Some(PyTuple::new(py, items)?.unbind()))
}

/// Judges an outcome's `warnings` (I24): a list or tuple whose every item is a `str` holding
/// no lone surrogate; then the kept ones (`None` when none is). Anything else is `Err`: the
/// answer is an invalid return.
pub fn judge_warnings(value: &Bound<'_, PyAny>) -> Result<Option<Warnings>, ()> {
    let items: Vec<Bound<'_, PyAny>> = if let Ok(list) = value.cast::<PyList>() {
        list.iter().collect()
    } else if let Ok(tuple) = value.cast::<PyTuple>() {
        tuple.iter().collect()
    } else {
        return Err(());
    };
    let mut texts = Vec::with_capacity(items.len());
    for item in &items {
        let text = item.cast::<PyString>().map_err(|_| ())?;
        texts.push(text.to_str().map_err(|_| ())?);
    }
    Ok(keep(texts))
}
