//! `hw.Trace` (paired with `_pycore/trace.py`): the core's compact record buffer, turned into
//! dicts or JSON Lines only when someone reads it.

use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use pyo3::exceptions::PyIndexError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyType};
use pyo3::{intern, IntoPyObjectExt};

use harnessweaver_core::trace::{RecordView, TraceBuf};

use crate::errors::{to_py, Phase};

/// Every record of the emits made with one run context. Nothing recorded is dropped.
#[pyclass(frozen, module = "harnessweaver", name = "Trace")]
pub struct Trace {
    buf: Mutex<TraceBuf>,
    /// Emit ordinals are handed out here, without the lock (I8: in the order emits start).
    emits: AtomicU32,
    /// Time every record on the precise clock (see `clock.rs` in the core).
    #[pyo3(get)]
    pub precise: bool,
}

impl Trace {
    pub fn lock(&self) -> MutexGuard<'_, TraceBuf> {
        self.buf.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn from_buf(buf: TraceBuf) -> Self {
        Self {
            emits: AtomicU32::new(buf.emits()),
            buf: Mutex::new(buf),
            precise: false,
        }
    }

    /// A new, empty trace.
    pub fn empty(precise: bool) -> Self {
        Self {
            buf: Mutex::new(TraceBuf::new()),
            emits: AtomicU32::new(0),
            precise,
        }
    }

    /// The ordinal of an emit starting now: 1, 2, 3, … (I8).
    pub fn begin_emit(&self) -> u32 {
        self.emits.fetch_add(1, Ordering::Relaxed).saturating_add(1)
    }
}

/// One record as a plain dict with the keys of I8, absent ones left out.
fn as_dict<'py>(py: Python<'py>, view: &RecordView) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item(intern!(py, "emit"), view.emit)?;
    dict.set_item(intern!(py, "hook"), PyString::intern(py, view.hook))?;
    dict.set_item(intern!(py, "kind"), PyString::intern(py, view.kind))?;
    if let Some(name) = view.middleware {
        dict.set_item(intern!(py, "middleware"), PyString::intern(py, name))?;
    }
    if let Some(band) = view.band {
        dict.set_item(intern!(py, "band"), PyString::intern(py, band))?;
    }
    dict.set_item(intern!(py, "outcome"), PyString::intern(py, view.outcome))?;
    dict.set_item(intern!(py, "modified"), view.modified)?;
    let optional = [
        (intern!(py, "code"), view.code),
        (intern!(py, "failure"), view.failure),
        (intern!(py, "error"), view.error),
        (intern!(py, "fail_mode"), view.fail_mode),
        (intern!(py, "contract"), view.contract),
    ];
    for (key, value) in optional {
        if let Some(value) = value {
            dict.set_item(key, PyString::intern(py, value))?;
        }
    }
    dict.set_item(intern!(py, "t_ns"), view.t_ns)?;
    dict.set_item(intern!(py, "duration_ns"), view.duration_ns)?;
    Ok(dict)
}

/// A path for `str`/`os.PathLike` arguments; `None` for an open file object.
fn path_of(file: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
    let py = file.py();
    if file.is_instance_of::<PyString>() || file.hasattr(intern!(py, "__fspath__"))? {
        let path = py.import("os")?.call_method1("fspath", (file,))?;
        return Ok(Some(path.extract::<String>()?));
    }
    Ok(None)
}

#[pymethods]
impl Trace {
    #[new]
    #[pyo3(signature = (*, precise = false))]
    fn new(precise: bool) -> Self {
        Self::empty(precise)
    }

    fn __len__(&self) -> usize {
        self.lock().len()
    }

    /// Bytes held, for `sys.getsizeof`: this object and its record storage (32 bytes a record,
    /// plus at most one chunk of room to grow).
    fn __sizeof__(&self) -> usize {
        std::mem::size_of::<Self>() + self.lock().memory_bytes()
    }

    fn __iter__(slf: Bound<'_, Self>) -> TraceIter {
        TraceIter {
            trace: slf.unbind(),
            index: 0,
        }
    }

    fn __getitem__<'py>(&self, py: Python<'py>, index: isize) -> PyResult<Bound<'py, PyDict>> {
        let view = {
            let buf = self.lock();
            let len = isize::try_from(buf.len()).unwrap_or(isize::MAX);
            let at = if index < 0 { index + len } else { index };
            usize::try_from(at).ok().and_then(|i| buf.get(i))
        };
        match view {
            Some(view) => as_dict(py, &view),
            None => Err(PyIndexError::new_err(format!(
                "trace index {index} out of range"
            ))),
        }
    }

    /// Every record as a plain dict with the fields of ruling 20 / I8.
    ///
    /// The lock is held while a record is copied out, never while Python objects are made: a
    /// collection they set off may run a finalizer that emits into this trace, on this thread
    /// or (having let go of the GIL) on another one that then waits on the lock.
    fn records<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let len = self.lock().len(); // records are only ever appended
        let list = PyList::empty(py);
        for index in 0..len {
            let view = self.lock().get(index);
            if let Some(view) = view {
                list.append(as_dict(py, &view)?)?;
            }
        }
        Ok(list)
    }

    /// The records as JSON Lines, one compact object per line.
    fn to_jsonl(&self) -> String {
        self.lock().to_jsonl()
    }

    /// Write the records as JSON Lines to a path or an open text file.
    fn write_jsonl(&self, file: &Bound<'_, PyAny>) -> PyResult<()> {
        if let Some(path) = path_of(file)? {
            let handle = File::create(&path)?;
            self.lock().write_jsonl(BufWriter::new(handle))?;
        } else {
            let text = self.to_jsonl();
            file.call_method1(intern!(file.py(), "write"), (text,))?;
        }
        Ok(())
    }

    /// Read records written by `to_jsonl`/`write_jsonl` (any implementation's).
    #[classmethod]
    fn from_jsonl(_cls: &Bound<'_, PyType>, py: Python<'_>, text: &str) -> PyResult<Self> {
        TraceBuf::from_jsonl_str(text)
            .map(Self::from_buf)
            .map_err(|e| to_py(py, Phase::Trace, &e))
    }

    /// Read a JSON Lines trace from a path or an open text file.
    #[classmethod]
    fn read_jsonl(cls: &Bound<'_, PyType>, file: &Bound<'_, PyAny>) -> PyResult<Self> {
        let py = file.py();
        if let Some(path) = path_of(file)? {
            let reader = BufReader::new(File::open(&path)?);
            return TraceBuf::read_jsonl(reader)
                .map(Self::from_buf)
                .map_err(|e| to_py(py, Phase::Trace, &e));
        }
        let text = file.call_method0(intern!(py, "read"))?;
        Self::from_jsonl(cls, py, text.extract::<&str>()?)
    }

    fn __repr__(&self) -> String {
        let buf = self.lock();
        let emits = self.emits.load(Ordering::Relaxed);
        format!("<Trace of {} records, {emits} emits>", buf.len())
    }
}

/// Iterates a trace's records as dicts, one at a time.
#[pyclass(module = "harnessweaver._core")]
pub struct TraceIter {
    trace: Py<Trace>,
    index: usize,
}

#[pymethods]
impl TraceIter {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        let view = self.trace.get().lock().get(self.index); // the lock ends here (see `records`)
        match view {
            Some(view) => {
                self.index += 1;
                Ok(Some(as_dict(py, &view)?.into_py_any(py)?))
            }
            None => Ok(None),
        }
    }
}
