//! The host side of the core's walk for Python middleware (`harnessweaver_core::walk`, paired
//! with `_pycore/walk.py`; `docs/architecture.md`).
//!
//! The core's `Walk` decides everything about an emit: which middleware runs next, its limit,
//! late answers, failures and fail modes, contracts, warnings, records and the combined
//! outcome. This file does only what needs Python: it calls each middleware and steps its
//! coroutine (`cpython.rs`: vectorcall, `PyIter_Send`, so a middleware that does not suspend
//! finishes without the event loop), turns the Python value it returned into an `Answer`,
//! holds the Python objects (event, the kept outcome, env) and does what each `Verdict` says
//! (replace the event, keep the outcome object, call the logger). When a coroutine does
//! suspend, the walk becomes a `Pending` that Python awaits and then resumes.

use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyString, PyType};
use pyo3::{IntoPyObjectExt, PyTraverseError, PyVisit};

use harnessweaver_core::catalogue::hook_name;
use harnessweaver_core::contract::UNREADABLE;
use harnessweaver_core::failure::FailureKind;
use harnessweaver_core::outcome::{within, OutcomeKind, MAX_REASON_CHARS, MAX_TOKEN_CHARS};
use harnessweaver_core::symbol::{Texts, NO_SYM};
use harnessweaver_core::walk::{Answer, Ending, Log, Step, Verdict, Walk};
use harnessweaver_core::Sym;

use crate::contract::violation;
use crate::cpython::Held;
use crate::cpython::{self, Sent};
use crate::declaration::Declaration;
use crate::identity::Identifying;
use crate::outcome::{plain_continue, Block, Continue, Escalate, HookResult, Retry, Suspend};
use crate::trace::Trace;
use crate::warning::{judge_warnings, result_warnings};

/// What a registry holds for one middleware.
pub struct Payload {
    pub call: Py<PyAny>,
    pub decl: Py<Declaration>,
}

/// One emit between middleware: the core's walk, and the Python objects only the binding can
/// hold.
pub struct EmitState {
    pub walk: Walk<Payload>,
    pub event: Held<PyAny>,
    pub env: Held<PyAny>,
    pub event_type: Held<PyType>,
    pub trace: Held<Trace>,
    /// The outcome object the walk said to keep last ([`Verdict::keep`]).
    pub best: Option<Held<PyAny>>,
    /// The event given and the scheme, on a bus with an identity scheme (I27); `None` on every
    /// other, which then computes nothing.
    pub identifying: Option<Identifying>,
}

impl Drop for EmitState {
    /// An emit abandoned half-way (cancelled from outside, I12) still leaves the records of the
    /// middleware that finished: nothing recorded is dropped (ruling 21).
    fn drop(&mut self) {
        self.flush();
    }
}

/// Where a walk stopped: done, or waiting on a suspended middleware.
pub enum Stop {
    Done(Py<HookResult>),
    Wait {
        awaitable: Py<PyAny>,
        yielded: Py<PyAny>,
    },
}

/// What a Python value means as an answer, plus the object to keep if it wins.
enum Judged {
    Answer {
        answer: Answer,
        keep: Option<Py<PyAny>>,
        modified: Option<Py<PyAny>>,
        /// The outcome's `warnings` as given (I24), judged after the rest of the answer.
        warnings: Option<Py<PyAny>>,
    },
    Failure(FailureKind),
}

/// The code as a symbol, held by `texts`; `None` when it is no valid text (a lone surrogate,
/// I16), or longer than [`MAX_TOKEN_CHARS`] (I28).
fn code_sym(code: Option<&Py<PyString>>, py: Python<'_>, texts: &mut Texts) -> Option<Sym> {
    match code {
        Some(code) => code
            .bind(py)
            .to_str()
            .ok()
            .filter(|code| within(code, MAX_TOKEN_CHARS))
            .map(|code| texts.intern(code)),
        None => Some(NO_SYM),
    }
}

/// Whether every text of an outcome is valid text within its bound: one holding a lone
/// surrogate, which no trace or JSON can carry (I16), or longer than its bound (I28) makes the
/// outcome an invalid return. `to_str` reads a str subclass's characters, never its methods.
fn valid_texts(py: Python<'_>, texts: &[(Option<&Py<PyString>>, usize)]) -> bool {
    texts.iter().all(|(text, max)| match text {
        Some(text) => text.bind(py).to_str().is_ok_and(|t| within(t, *max)),
        None => true,
    })
}

/// An outcome of `kind` with `code`, or an invalid return when `code` or any other text of
/// it is no valid text (I16).
fn outcome(
    kind: OutcomeKind,
    code: Option<Sym>,
    texts_valid: bool,
    value: &Bound<'_, PyAny>,
    warnings: Option<&Py<PyAny>>,
) -> Judged {
    let Some(code) = code.filter(|_| texts_valid) else {
        return Judged::Failure(FailureKind::InvalidReturn);
    };
    Judged::Answer {
        answer: Answer::Outcome {
            kind,
            modified: false,
            code,
        },
        keep: Some(value.clone().unbind()),
        modified: None,
        warnings: warnings.map(|w| w.clone_ref(value.py())),
    }
}

/// Whether `value`'s real type is `event_type` or a subclass of it (I18).
pub(crate) fn is_event_of(value: &Bound<'_, PyAny>, event_type: &Bound<'_, PyType>) -> bool {
    cpython::is_instance_exact(value, event_type)
}

/// Classifies an answer by exact type: outcomes are final classes.
fn judge(value: &Bound<'_, PyAny>, event_type: &Bound<'_, PyType>, texts: &mut Texts) -> Judged {
    let py = value.py();
    if value.is_none() {
        let answer = Answer::Outcome {
            kind: OutcomeKind::Continue,
            modified: false,
            code: NO_SYM,
        };
        return Judged::Answer {
            answer,
            keep: None,
            modified: None,
            warnings: None,
        };
    }
    if let Ok(c) = value.cast_exact::<Continue>() {
        let warnings = c.get().warnings.as_ref().map(|w| w.clone_ref(py));
        return match &c.get().modified {
            None => Judged::Answer {
                answer: Answer::Outcome {
                    kind: OutcomeKind::Continue,
                    modified: false,
                    code: NO_SYM,
                },
                keep: None,
                modified: None,
                warnings,
            },
            Some(event) if is_event_of(event.bind(py), event_type) => Judged::Answer {
                answer: Answer::Outcome {
                    kind: OutcomeKind::Continue,
                    modified: true,
                    code: NO_SYM,
                },
                keep: Some(value.clone().unbind()),
                modified: Some(event.clone_ref(py)),
                warnings,
            },
            Some(_) => Judged::Failure(FailureKind::WrongEventType),
        };
    }
    if let Ok(b) = value.cast_exact::<Block>() {
        let b = b.get();
        return outcome(
            OutcomeKind::Block,
            code_sym(b.code.as_ref(), py, texts),
            valid_texts(py, &[(Some(&b.reason), MAX_REASON_CHARS)]),
            value,
            b.warnings.as_ref(),
        );
    }
    if let Ok(s) = value.cast_exact::<Suspend>() {
        let s = s.get();
        return outcome(
            OutcomeKind::Suspend,
            code_sym(s.code.as_ref(), py, texts),
            valid_texts(
                py,
                &[
                    (Some(&s.reason), MAX_REASON_CHARS),
                    (s.approver_role.as_ref(), MAX_TOKEN_CHARS),
                ],
            ),
            value,
            s.warnings.as_ref(),
        );
    }
    if let Ok(e) = value.cast_exact::<Escalate>() {
        let e = e.get();
        return outcome(
            OutcomeKind::Escalate,
            code_sym(e.code.as_ref(), py, texts),
            valid_texts(
                py,
                &[
                    (Some(&e.reason), MAX_REASON_CHARS),
                    (e.to.as_ref(), MAX_TOKEN_CHARS),
                ],
            ),
            value,
            e.warnings.as_ref(),
        );
    }
    if let Ok(r) = value.cast_exact::<Retry>() {
        let r = r.get();
        return outcome(
            OutcomeKind::Retry,
            code_sym(r.code.as_ref(), py, texts),
            valid_texts(py, &[(Some(&r.reason), MAX_REASON_CHARS)]),
            value,
            r.warnings.as_ref(),
        );
    }
    Judged::Failure(FailureKind::InvalidReturn)
}

impl EmitState {
    /// Writes the records the walk buffered to the trace (the lock only when there are some).
    fn flush(&mut self) {
        if self.walk.unflushed() {
            self.walk.flush(&mut self.trace.get().get().lock());
        }
    }

    pub fn remaining(&self) -> f64 {
        self.walk.remaining()
    }

    pub fn timeout(&self) -> Option<f64> {
        self.walk.timeout()
    }

    /// Runs middleware until the chain ends or one suspends.
    pub fn run(&mut self, py: Python<'_>) -> PyResult<Stop> {
        loop {
            let called = match self.walk.next() {
                Step::Call(entry) => cpython::call(py, &entry.payload.call, &self.event, &self.env),
                Step::Skipped(verdict) => {
                    self.obey(py, verdict, None, None)?;
                    continue;
                }
                Step::Done => break,
            };
            let awaitable = match called {
                Ok(awaitable) => awaitable,
                Err(err) => {
                    self.raised(py, err)?;
                    continue;
                }
            };
            let iterator = match cpython::step_target(&awaitable) {
                Ok(Some(iterator)) => iterator,
                Ok(None) => {
                    let verdict = self.walk.failed(FailureKind::InvalidReturn, None);
                    self.obey(py, verdict, None, None)?;
                    continue;
                }
                Err(err) => {
                    self.raised(py, err)?;
                    continue;
                }
            };
            match cpython::send_none(&iterator) {
                Sent::ReturnedNone => {
                    if let Some(late) = self.walk.continued() {
                        self.obey(py, late, None, None)?;
                    }
                }
                Sent::Returned(value) => self.answered(py, &value)?,
                Sent::Yielded(yielded) => {
                    // What finished so far goes to the trace now: a suspended emit may be
                    // cancelled and never resumed (I12), and nothing recorded is lost.
                    self.flush();
                    return Ok(Stop::Wait {
                        awaitable: iterator.unbind(),
                        yielded: yielded.unbind(),
                    });
                }
                Sent::Raised(err) => self.raised(py, err)?,
            }
        }
        Ok(Stop::Done(self.finish(py)?))
    }

    /// Does what the walk said about the current middleware's answer: the modified event goes
    /// on, the outcome object is kept, the log is written.
    #[inline]
    fn obey(
        &mut self,
        py: Python<'_>,
        verdict: Verdict,
        keep: Option<Py<PyAny>>,
        modified: Option<Py<PyAny>>,
    ) -> PyResult<()> {
        if verdict.accept {
            if let Some(event) = modified {
                self.event.replace(event);
            }
        }
        if verdict.keep {
            self.best = keep.map(Held::new);
        }
        match verdict.log {
            None => Ok(()),
            Some(log) => self.log(py, log),
        }
    }

    /// Logs what the walk said to (`buslog.py`, docs/logging.md): a slow path only, so the
    /// plain-answer path never touches the logger (and, cold and never inlined, does not
    /// change how that path is compiled).
    #[cold]
    #[inline(never)]
    fn log(&self, py: Python<'_>, log: Log) -> PyResult<()> {
        static FAILED_OPEN: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
        static CONTRACT_WARNING: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
        let name = self.walk.entry().decl.name.as_str();
        let hook = hook_name(self.walk.hook());
        match log {
            Log::FailedOpen { failure, error } => {
                let log = FAILED_OPEN.import(py, "harnessweaver.buslog", "failed_open")?;
                let error = harnessweaver_core::symbol::text(error);
                let error = error.as_deref().unwrap_or("Exception");
                log.call1((name, hook, failure.as_str(), error))?;
            }
            Log::ContractWarning(rule) => {
                let log =
                    CONTRACT_WARNING.import(py, "harnessweaver.buslog", "contract_warning")?;
                log.call1((name, hook, rule.as_str()))?;
            }
        }
        Ok(())
    }

    /// The current middleware answered `value` (maybe after suspending).
    pub fn answered(&mut self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        if let Some(late) = self.walk.returned() {
            return self.obey(py, late, None, None); // a late answer (ruling 10, I26)
        }
        match judge(value, self.event_type.bind(py), self.walk.texts()) {
            Judged::Failure(kind) => {
                let verdict = self.walk.failed(kind, None);
                self.obey(py, verdict, None, None)
            }
            Judged::Answer {
                answer,
                keep,
                modified,
                warnings,
            } => {
                // I24: warnings that are no list of texts make the answer invalid.
                let kept = match warnings.map(|given| judge_warnings(given.bind(py))) {
                    None => None,
                    Some(Ok(kept)) => kept,
                    Some(Err(())) => {
                        let verdict = self.walk.failed(FailureKind::InvalidReturn, None);
                        return self.obey(py, verdict, None, None);
                    }
                };
                // I14: the core says whether contracts are checked; the rule broken is read
                // from the Python events here.
                let broken = match (self.walk.contracts(), &modified) {
                    (Some(_), Some(event)) => {
                        match violation(self.walk.hook(), self.event.bind(py), event.bind(py)) {
                            Ok(broken) => broken,
                            // What a contract compares cannot be read (a property raised): the
                            // answer cannot be judged, so it is invalid (I29). What is not an
                            // Exception (KeyboardInterrupt) is the caller's and propagates.
                            Err(err) if err.is_instance_of::<PyException>(py) => {
                                let verdict = self.walk.failed(UNREADABLE, None);
                                return self.obey(py, verdict, None, None);
                            }
                            Err(err) => return Err(err),
                        }
                    }
                    _ => None,
                };
                let verdict = self.walk.answer(answer, broken, kept);
                self.obey(py, verdict, keep, modified)
            }
        }
    }

    /// The current middleware raised `err`: an `Exception` is a failure, and so is the
    /// runtime's cancellation while the caller is not being cancelled (I15); anything else
    /// (the caller's cancellation, `KeyboardInterrupt`) belongs to the caller and propagates
    /// (I12), leaving the records of what finished in the trace.
    pub fn raised(&mut self, py: Python<'_>, err: PyErr) -> PyResult<()> {
        let cancelled = !err.is_instance_of::<PyException>(py);
        if cancelled && !stray_cancellation(py, &err)? {
            return Err(err);
        }
        let verdict = if cancelled {
            self.walk.raised(FailureKind::Cancelled, None)
        } else {
            // The type's own name (CPython's `PyType_GetName`): no metaclass `__name__` and no
            // str subclass method runs; the core keeps it only when it is a type name (I28).
            let name = err.get_type(py).name();
            let name = name.as_ref().ok().and_then(|n| n.to_str().ok());
            self.walk
                .raised(FailureKind::Exception, Some(name.unwrap_or("")))
        };
        self.obey(py, verdict, None, None)
    }

    /// Its deadline passed (its own, or the chain's when it was cut off, I26).
    pub fn timed_out(&mut self, py: Python<'_>) -> PyResult<()> {
        let verdict = self.walk.timed_out();
        self.obey(py, verdict, None, None)
    }

    fn finish(&mut self, py: Python<'_>) -> PyResult<Py<HookResult>> {
        // I27: the identities of the event given and of the one the chain left, only with a
        // scheme. Computed before the hook record is kept: should the caller be interrupted
        // here, the emit ends without one, as a cancelled emit does (I12).
        let identities = match &self.identifying {
            None => None,
            Some(identifying) => Some(identifying.identities(self.event.bind(py))?),
        };
        let ending = self
            .walk
            .finish(&mut self.trace.get().get().lock(), identities);
        let outcome = match (ending, &self.best) {
            (Ending::Kept, Some(best)) => best.get().clone_ref(py),
            (Ending::Block { reason, code }, _) => closed_block(py, &reason, code)?,
            _ => plain_continue(py)?.clone_ref(py).into_any(),
        };
        let warnings = if self.walk.warnings().is_empty() {
            None
        } else {
            result_warnings(py, self.walk.chain(), self.walk.warnings())?
        };
        Py::new(
            py,
            HookResult {
                outcome,
                event: self.event.get().clone_ref(py),
                warnings,
            },
        )
    }

    pub fn traverse(&self, visit: &PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(self.event.get())?;
        visit.call(self.env.get())?;
        visit.call(self.event_type.get())?;
        visit.call(self.trace.get())?;
        if let Some(best) = &self.best {
            visit.call(best.get())?;
        }
        if let Some(identifying) = &self.identifying {
            identifying.traverse(visit)?;
        }
        Ok(())
    }
}

/// The Block a closed failure answers (I6), with the walk's reason and code.
#[cold]
#[inline(never)]
fn closed_block(py: Python<'_>, reason: &str, code: Sym) -> PyResult<Py<PyAny>> {
    let code = harnessweaver_core::symbol::resolve_opt(code).map(|c| PyString::new(py, c).unbind());
    let block = Block {
        reason: PyString::new(py, reason).unbind(),
        code,
        warnings: None,
    };
    Ok(Py::new(py, block)?.into_any())
}

static STRAY_CANCELLATION: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// Whether `err` is the runtime's cancellation raised while the caller is not being cancelled
/// (I15): `_slowpath.stray_cancellation` knows asyncio's and trio's ways to tell.
fn stray_cancellation(py: Python<'_>, err: &PyErr) -> PyResult<bool> {
    let judge = STRAY_CANCELLATION.get_or_try_init(py, || {
        Ok::<_, PyErr>(
            py.import("harnessweaver._slowpath")?
                .getattr("stray_cancellation")?
                .unbind(),
        )
    })?;
    judge.bind(py).call1((err.value(py),))?.is_truthy()
}

/// A middleware that suspended: Python awaits `awaitable` (first yield: `yielded`) and hands
/// back the answer with `resume`, `fail` or `timed_out`.
#[pyclass(module = "harnessweaver._core", name = "Pending")]
pub struct Pending {
    state: EmitState,
    #[pyo3(get)]
    awaitable: Option<Py<PyAny>>,
    #[pyo3(get)]
    yielded: Option<Py<PyAny>>,
}

impl Pending {
    /// A walk that suspended, as the pending step Python awaits.
    pub fn wait(
        py: Python<'_>,
        state: EmitState,
        awaitable: Py<PyAny>,
        yielded: Py<PyAny>,
    ) -> PyResult<Py<PyAny>> {
        let pending = Pending {
            state,
            awaitable: Some(awaitable),
            yielded: Some(yielded),
        };
        Py::new(py, pending)?.into_py_any(py)
    }

    fn advance(mut slf: PyRefMut<'_, Self>) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        match slf.state.run(py)? {
            Stop::Done(result) => {
                slf.awaitable = None;
                slf.yielded = None;
                Ok(result.into_any())
            }
            Stop::Wait { awaitable, yielded } => {
                slf.awaitable = Some(awaitable);
                slf.yielded = Some(yielded);
                slf.into_py_any(py)
            }
        }
    }
}

#[pymethods]
impl Pending {
    #[getter]
    fn timeout(&self) -> Option<f64> {
        self.state.timeout()
    }

    /// Seconds left before the suspended middleware's deadline.
    fn remaining(&self) -> f64 {
        self.state.remaining()
    }

    /// It answered `value`.
    fn resume(mut slf: PyRefMut<'_, Self>, value: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        slf.state.answered(py, value)?;
        Self::advance(slf)
    }

    /// It raised `exc`.
    fn fail(mut slf: PyRefMut<'_, Self>, exc: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let err = PyErr::from_value(exc.clone());
        slf.state.raised(py, err)?;
        Self::advance(slf)
    }

    /// Its deadline passed (its own, or the chain's when it was cut off, I26).
    fn timed_out(mut slf: PyRefMut<'_, Self>) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        slf.state.timed_out(py)?;
        Self::advance(slf)
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        if let Some(a) = &self.awaitable {
            visit.call(a)?;
        }
        if let Some(y) = &self.yielded {
            visit.call(y)?;
        }
        self.state.traverse(&visit)
    }

    fn __clear__(&mut self) {
        self.awaitable = None;
        self.yielded = None;
        self.state.best = None;
        self.state.identifying = None;
    }
}
