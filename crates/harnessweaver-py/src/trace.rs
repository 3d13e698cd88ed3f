//! `hw.Trace` (paired with `_pycore/trace.py`): the core's compact record buffer, turned into
//! dicts or JSON Lines only when someone reads it.
//!
//! A trace keeps the newest `limit` records (I20); a service hands them on as they come with a
//! sink (a callable taking a list of record dicts, or `hw.JsonlSink`, written from here without
//! dicts), or takes them out with `drain()`. The walk appends under the lock without Python
//! (`walk.rs`); the lock's guard raises a flag when a batch is due or records were dropped, and
//! the next emit's start (or `flush()`) serves it, outside the lock.

use std::borrow::Cow;
use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use pyo3::exceptions::{PyIndexError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict, PyInt, PyList, PyString, PyType};
use pyo3::{intern, IntoPyObjectExt};

use harnessweaver_core::failure::exception_name;
use harnessweaver_core::identity::Identity;
use harnessweaver_core::trace::{
    read_jsonl_into, RecordView, Taken, TraceBuf, DEFAULT_LIMIT, MAX_EMIT,
};

use crate::errors::{to_py, Phase};

/// Records a sink is handed at once, unless the trace says otherwise.
const DEFAULT_BATCH: usize = 4096;

// The defaults are spelled out in the signatures below (so Python's signatures show them).
const _: () = assert!(DEFAULT_LIMIT == 1_048_576 && DEFAULT_BATCH == 4096);

/// Every record of the emits made with one run context: the newest `limit` of them (I20).
#[pyclass(frozen, module = "harnessweaver", name = "Trace")]
pub struct Trace {
    buf: Mutex<TraceBuf>,
    /// Emit ordinals are handed out here, without the lock (I8: in the order emits start).
    /// It may count past [`MAX_EMIT`]; ordinals stop there (I19).
    emits: AtomicU64,
    /// Time every record on the precise clock (see `clock.rs` in the core).
    #[pyo3(get)]
    pub precise: bool,
    /// Where records go as they come, in batches of `batch`; `None` keeps them.
    sink: Option<Py<PyAny>>,
    /// The sink is an `hw.JsonlSink`: it is handed JSON Lines text, not dicts.
    jsonl: bool,
    #[pyo3(get)]
    batch: usize,
    /// Set by the lock's guard: a batch is due, or records were dropped and not yet warned of.
    due: AtomicBool,
    warned: AtomicBool,
    /// A sink is being served (a sink that emits into its own trace does not recurse).
    serving: AtomicBool,
}

/// The trace's buffer, locked. Dropping it raises the trace's flag when there is work for the
/// next emit's start (see the module comment): a comparison, no Python.
pub struct TraceGuard<'a> {
    buf: MutexGuard<'a, TraceBuf>,
    trace: &'a Trace,
}

impl Deref for TraceGuard<'_> {
    type Target = TraceBuf;
    fn deref(&self) -> &TraceBuf {
        &self.buf
    }
}

impl DerefMut for TraceGuard<'_> {
    fn deref_mut(&mut self) -> &mut TraceBuf {
        &mut self.buf
    }
}

impl Drop for TraceGuard<'_> {
    fn drop(&mut self) {
        let trace = self.trace;
        let batch_due = trace.sink.is_some() && self.buf.len() >= trace.batch;
        let unwarned = self.buf.dropped() > 0 && !trace.warned.load(Ordering::Relaxed);
        if batch_due || unwarned {
            trace.due.store(true, Ordering::Relaxed);
        }
    }
}

static JSONL_SINK: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// `harnessweaver.context.JsonlSink`.
fn jsonl_sink_type(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    JSONL_SINK
        .get_or_try_init(py, || {
            py.import("harnessweaver.context")?
                .getattr("JsonlSink")?
                .cast_into::<PyType>()
                .map(Bound::unbind)
                .map_err(PyErr::from)
        })
        .map(|t| t.bind(py))
}

/// Logs `message` as a WARNING on the `harnessweaver.trace` logger.
fn warn(py: Python<'_>, message: String) -> PyResult<()> {
    py.import("logging")?
        .call_method1("getLogger", ("harnessweaver.trace",))?
        .call_method1("warning", (message,))?;
    Ok(())
}

impl Trace {
    pub fn lock(&self) -> TraceGuard<'_> {
        TraceGuard {
            buf: self.buf.lock().unwrap_or_else(PoisonError::into_inner),
            trace: self,
        }
    }

    fn with_buf(buf: TraceBuf, precise: bool) -> Self {
        Self {
            emits: AtomicU64::new(buf.emits()),
            buf: Mutex::new(buf),
            precise,
            sink: None,
            jsonl: false,
            batch: DEFAULT_BATCH,
            due: AtomicBool::new(false),
            warned: AtomicBool::new(false),
            serving: AtomicBool::new(false),
        }
    }

    /// A new, empty trace with the default limit and no sink.
    pub fn empty(precise: bool) -> Self {
        Self::with_buf(TraceBuf::new(), precise)
    }

    /// The ordinal of an emit starting now: 1, 2, 3, … (I8), at most [`MAX_EMIT`] (I19).
    /// First serves the sink or the warning the last records left due (a relaxed load when
    /// there is none).
    pub fn begin_emit(&self) -> u64 {
        if self.due.load(Ordering::Relaxed) {
            // Never an error: a failing sink is logged and its records counted (see `serve`).
            let _ = Python::attach(|py| self.serve(py, false));
        }
        self.emits
            .fetch_add(1, Ordering::Relaxed)
            .saturating_add(1)
            .min(MAX_EMIT)
    }

    /// Hands the sink every full batch (every record with `all`), and warns once of dropped
    /// records. A failing sink's records are counted as dropped and its error type logged
    /// (never its message, R9); with `all` (an explicit `flush()`) the error is raised.
    fn serve(&self, py: Python<'_>, all: bool) -> PyResult<usize> {
        if self.serving.swap(true, Ordering::Acquire) {
            return Ok(0);
        }
        self.due.store(false, Ordering::Relaxed);
        let served = self.serve_batches(py, all);
        self.serving.store(false, Ordering::Release);
        self.warn_of_drops(py);
        served
    }

    /// Logs one WARNING, the first time the trace finds it dropped records.
    fn warn_of_drops(&self, py: Python<'_>) -> u64 {
        let (dropped, limit) = {
            let buf = self.lock();
            (buf.dropped(), buf.limit().unwrap_or(usize::MAX))
        };
        if dropped > 0 && !self.warned.swap(true, Ordering::Relaxed) {
            let _ = warn(
                py,
                format!(
                    "harnessweaver trace dropped its oldest records: it keeps the newest \
                     {limit} (I20); give it a sink or drain() it"
                ),
            );
        }
        dropped
    }

    fn serve_batches(&self, py: Python<'_>, all: bool) -> PyResult<usize> {
        let Some(sink) = &self.sink else {
            return Ok(0);
        };
        let mut served = 0;
        loop {
            let records = {
                let mut buf = self.lock();
                if buf.is_empty() || (!all && buf.len() < self.batch) {
                    break;
                }
                buf.take(self.batch)
            };
            let count = records.len();
            if let Err(err) = self.hand(py, sink.bind(py), &records) {
                self.lock().count_dropped(count as u64);
                if all {
                    return Err(err);
                }
                // The type's own name, bounded like a failure record's (I28): no method of a
                // metaclass or a str subclass runs, nothing but a type name is logged.
                let name = err.get_type(py).name();
                let name = name.as_ref().ok().and_then(|n| n.to_str().ok());
                let kind = exception_name(name.unwrap_or(""));
                let _ = warn(
                    py,
                    format!("harnessweaver trace sink failed ({kind}); {count} records dropped"),
                );
            }
            served += count;
        }
        Ok(served)
    }

    /// One batch to the sink: JSON Lines text for a `JsonlSink`, else a list of dicts.
    fn hand(&self, py: Python<'_>, sink: &Bound<'_, PyAny>, records: &Taken) -> PyResult<()> {
        if self.jsonl {
            sink.call_method1(intern!(py, "write_text"), (records.to_jsonl(),))?;
        } else {
            sink.call1((dicts(py, records)?,))?;
        }
        Ok(())
    }
}

/// Records taken out, with their correlations (I21), as a list of dicts.
fn dicts<'py>(py: Python<'py>, records: &Taken) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for view in records.views() {
        list.append(as_dict(py, &view)?)?;
    }
    Ok(list)
}

/// The limit asked for: `None` is no bound; otherwise at least 1.
/// A `limit` or `batch` argument: a count of records (`None` for `None`), or how messages
/// show a bad one. Judged when called, so a bad value never runs its own `__index__`.
pub struct Count(Result<Option<usize>, String>);

impl<'a, 'py> FromPyObject<'a, 'py> for Count {
    type Error = PyErr;
    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        let obj: &Bound<'py, PyAny> = &obj;
        if obj.is_none() {
            return Ok(Self(Ok(None)));
        }
        Ok(Self(
            count_of(obj).map(Some).ok_or_else(|| shown_count(obj)),
        ))
    }
}

const DEFAULT_LIMIT_ARG: Count = Count(Ok(Some(1_048_576)));
const DEFAULT_BATCH_ARG: Count = Count(Ok(Some(4096)));

fn limit_of(limit: Count) -> PyResult<Option<usize>> {
    limit.0.map_err(|shown| {
        PyValueError::new_err(format!(
            "Trace limit must be a positive number of records or None, got {shown} (I20)"
        ))
    })
}

fn batch_of(batch: Count) -> PyResult<usize> {
    match batch.0 {
        Ok(Some(n)) => Ok(n),
        Ok(None) => Err(batch_error("None")),
        Err(shown) => Err(batch_error(&shown)),
    }
}

fn batch_error(shown: &str) -> PyErr {
    PyValueError::new_err(format!(
        "Trace batch must be a positive number of records, got {shown} (I20)"
    ))
}

/// A count of records: an `int` (not a bool) from 1 to 2^63 − 1, read as its plain value;
/// `None` for anything else (both cores alike).
fn count_of(value: &Bound<'_, PyAny>) -> Option<usize> {
    if value.is_instance_of::<PyBool>() || !value.is_instance_of::<PyInt>() {
        return None;
    }
    let n = value.extract::<i64>().ok().filter(|n| *n >= 1)?;
    Some(usize::try_from(n).unwrap_or(usize::MAX))
}

/// A count as messages show it: an `int` as its plain value, anything else as its repr.
fn shown_count(value: &Bound<'_, PyAny>) -> String {
    let shown = if value.is_instance_of::<PyInt>() && !value.is_instance_of::<PyBool>() {
        plain_int(value)
    } else {
        value.repr().map(|r| r.to_string())
    };
    shown.unwrap_or_else(|_| "<unprintable>".to_owned())
}

/// An `int` (or subclass) as its plain decimal value, never through its own `__repr__`.
fn plain_int(value: &Bound<'_, PyAny>) -> PyResult<String> {
    let py = value.py();
    let int_type = py.get_type::<PyInt>();
    Ok(int_type
        .getattr(intern!(py, "__repr__"))?
        .call1((value,))?
        .to_string())
}

/// A record's text: interned in Python too when it is permanent in the core, a plain string
/// when it is counted (interning it in Python would keep it for good, issue 13).
#[allow(clippy::ptr_arg)] // the variant is the point: whether the core keeps it for good
fn text_object<'py>(py: Python<'py>, text: &Cow<'static, str>) -> Bound<'py, PyString> {
    match text {
        Cow::Borrowed(text) => PyString::intern(py, text),
        Cow::Owned(text) => PyString::new(py, text),
    }
}

/// One record as a plain dict with the keys of I8, absent ones left out.
fn as_dict<'py>(py: Python<'py>, view: &RecordView) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item(intern!(py, "emit"), view.emit)?;
    dict.set_item(intern!(py, "hook"), PyString::intern(py, view.hook))?;
    // The correlation (I21), between hook and kind.
    if let Some(run) = &view.run {
        dict.set_item(intern!(py, "run"), PyString::new(py, run))?;
    }
    if let Some(step) = view.step {
        dict.set_item(intern!(py, "step"), step)?;
    }
    if let Some(tool) = &view.tool {
        dict.set_item(intern!(py, "tool"), PyString::new(py, tool))?;
    }
    dict.set_item(intern!(py, "kind"), PyString::intern(py, view.kind))?;
    if let Some(name) = &view.middleware {
        dict.set_item(intern!(py, "middleware"), text_object(py, name))?;
    }
    if let Some(band) = view.band {
        dict.set_item(intern!(py, "band"), PyString::intern(py, band))?;
    }
    dict.set_item(intern!(py, "outcome"), PyString::intern(py, view.outcome))?;
    dict.set_item(intern!(py, "modified"), view.modified)?;
    // In the key order of I8: code, failure, error, fail_mode, contract.
    if let Some(code) = &view.code {
        dict.set_item(intern!(py, "code"), text_object(py, code))?;
    }
    if let Some(failure) = view.failure {
        dict.set_item(intern!(py, "failure"), PyString::intern(py, failure))?;
    }
    if let Some(error) = &view.error {
        dict.set_item(intern!(py, "error"), text_object(py, error))?;
    }
    let names = [
        (intern!(py, "fail_mode"), view.fail_mode),
        (intern!(py, "contract"), view.contract),
    ];
    for (key, value) in names {
        if let Some(value) = value {
            dict.set_item(key, PyString::intern(py, value))?;
        }
    }
    if let Some(warnings) = &view.warnings {
        let texts = warnings.iter().map(|t| PyString::new(py, t));
        dict.set_item(intern!(py, "warnings"), PyList::new(py, texts)?)?;
    }
    if let Some(audit) = view.audit {
        dict.set_item(intern!(py, "audit"), audit)?; // I25: audited middleware only
    }
    // I27: both on the hook records of a bus with an identity scheme (None outside the domain).
    if let (Some(input), Some(enforced)) = (view.input_identity, view.enforced_identity) {
        let text = |id: Option<Identity>| id.map(|id| id.to_string());
        dict.set_item(intern!(py, "input_identity"), text(input))?;
        dict.set_item(intern!(py, "enforced_identity"), text(enforced))?;
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
    /// Refused: `copy`, `deepcopy` and `pickle` all raise this `TypeError` (both cores alike).
    #[allow(clippy::unused_self)] // a Python method needs its receiver
    fn __reduce_ex__(&self, _protocol: &Bound<'_, PyAny>) -> PyResult<()> {
        Err(crate::errors::not_copyable("Trace", crate::errors::LIVE))
    }
    #[new]
    #[pyo3(
        signature = (*, precise = false, limit = DEFAULT_LIMIT_ARG, sink = None, batch = DEFAULT_BATCH_ARG),
        text_signature = "(*, precise=False, limit=1048576, sink=None, batch=4096)"
    )]
    fn new(
        py: Python<'_>,
        precise: bool,
        limit: Count,
        sink: Option<Bound<'_, PyAny>>,
        batch: Count,
    ) -> PyResult<Self> {
        let mut trace = Self::with_buf(TraceBuf::with_limit(limit_of(limit)?), precise);
        trace.batch = batch_of(batch)?;
        if let Some(sink) = sink.filter(|s| !s.is_none()) {
            if !sink.is_callable() {
                return Err(PyTypeError::new_err(format!(
                    "Trace sink must be callable (taking a list of records), got {}",
                    sink.repr()?
                )));
            }
            trace.jsonl = sink.is_instance(jsonl_sink_type(py)?)?;
            trace.sink = Some(sink.unbind());
        }
        Ok(trace)
    }

    /// How many records the trace keeps at most (I20); `None` for no bound.
    #[getter]
    fn limit(&self) -> Option<usize> {
        self.lock().limit()
    }

    /// Records dropped because the limit was reached or a sink failed to take them.
    #[getter]
    fn dropped(&self, py: Python<'_>) -> u64 {
        self.warn_of_drops(py)
    }

    /// The number of emits begun on this trace: the last ordinal handed out (I8, I19).
    #[getter]
    fn emits(&self) -> u64 {
        let counted = self.emits.load(Ordering::Relaxed).min(MAX_EMIT);
        counted.max(self.lock().emits())
    }

    /// The sink records go to, or `None`.
    #[getter]
    fn sink(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.sink.as_ref().map(|s| s.clone_ref(py))
    }

    /// Takes out every record held, as dicts: they are no longer held. Emit ordinals go on.
    fn drain<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let records = self.lock().drain(); // the lock ends here (see `records`)
        dicts(py, &records)
    }

    /// Hands every record held to the sink now; returns how many. Without a sink, 0. A
    /// sink's error is raised (its records are counted as dropped).
    fn flush(&self, py: Python<'_>) -> PyResult<usize> {
        self.serve(py, true)
    }

    /// `flush()`, then the sink's own `close()` when it has one.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        self.flush(py)?;
        if let Some(sink) = &self.sink {
            let sink = sink.bind(py);
            if sink.hasattr(intern!(py, "close"))? {
                sink.call_method0(intern!(py, "close"))?;
            }
        }
        Ok(())
    }

    fn __enter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    fn __exit__(
        &self,
        py: Python<'_>,
        _kind: Option<Bound<'_, PyAny>>,
        _value: Option<Bound<'_, PyAny>>,
        _traceback: Option<Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        self.close(py)?;
        Ok(false)
    }

    fn __traverse__(&self, visit: pyo3::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        if let Some(sink) = &self.sink {
            visit.call(sink)?;
        }
        Ok(())
    }

    fn __len__(&self) -> usize {
        self.lock().len()
    }

    /// Bytes held, for `sys.getsizeof`: this object and its record storage (32 bytes a record,
    /// plus at most one chunk of room to grow, plus the correlation spans of I21: one per
    /// change of run, step or tool).
    fn __sizeof__(&self) -> usize {
        std::mem::size_of::<Self>() + self.lock().memory_bytes()
    }

    fn __iter__(slf: Bound<'_, Self>) -> TraceIter {
        TraceIter {
            trace: slf.unbind(),
            index: 0,
        }
    }

    /// Record `index` (negative from the end). An `int` (bool and subclasses read as their
    /// plain value, never through `__index__`); one out of range, however large, is an
    /// `IndexError`, anything else a `TypeError` (both cores alike).
    fn __getitem__<'py>(
        &self,
        py: Python<'py>,
        index: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyDict>> {
        if !index.is_instance_of::<PyInt>() {
            return Err(PyTypeError::new_err(format!(
                "trace indices must be integers, not {}",
                index.get_type().name()?
            )));
        }
        let at = index.extract::<i64>().ok();
        let view = {
            let buf = self.lock();
            let len = i64::try_from(buf.len()).unwrap_or(i64::MAX);
            at.map(|at| if at < 0 { at + len } else { at })
                .and_then(|at| usize::try_from(at).ok())
                .and_then(|i| buf.get(i))
        };
        match view {
            Some(view) => as_dict(py, &view),
            None => Err(PyIndexError::new_err(format!(
                "trace index {} out of range",
                plain_int(index)?
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

    /// Read records written by `to_jsonl`/`write_jsonl` (any implementation's); the trace
    /// keeps the newest `limit` of them (I20).
    #[classmethod]
    #[pyo3(
        signature = (text, *, limit = DEFAULT_LIMIT_ARG),
        text_signature = "(text, *, limit=1048576)"
    )]
    fn from_jsonl(
        _cls: &Bound<'_, PyType>,
        py: Python<'_>,
        text: &str,
        limit: Count,
    ) -> PyResult<Self> {
        let trace = read_jsonl_into(text.as_bytes(), TraceBuf::with_limit(limit_of(limit)?))
            .map(|buf| Self::with_buf(buf, false))
            .map_err(|e| to_py(py, Phase::Trace, &e))?;
        trace.warn_of_drops(py);
        Ok(trace)
    }

    /// Read a JSON Lines trace from a path or an open text file.
    #[classmethod]
    #[pyo3(
        signature = (file, *, limit = DEFAULT_LIMIT_ARG),
        text_signature = "(file, *, limit=1048576)"
    )]
    fn read_jsonl(
        cls: &Bound<'_, PyType>,
        file: &Bound<'_, PyAny>,
        limit: Count,
    ) -> PyResult<Self> {
        let py = file.py();
        if let Some(path) = path_of(file)? {
            let reader = BufReader::new(File::open(&path)?);
            let trace = read_jsonl_into(reader, TraceBuf::with_limit(limit_of(limit)?))
                .map(|buf| Self::with_buf(buf, false))
                .map_err(|e| to_py(py, Phase::Trace, &e))?;
            trace.warn_of_drops(py);
            return Ok(trace);
        }
        let text = file.call_method0(intern!(py, "read"))?;
        Self::from_jsonl(cls, py, text.extract::<&str>()?, limit)
    }

    fn __repr__(&self) -> String {
        let emits = self.emits();
        let buf = self.lock();
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
