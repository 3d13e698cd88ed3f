//! The chain walk over Python middleware (paired with `_pycore/walk.py`).
//!
//! Each middleware is called and its coroutine stepped with `PyIter_Send`, which hands back
//! the return value directly (no `StopIteration`), so a middleware that does not suspend is
//! finished here without the event loop. The core's `Walk` judges each answer; this file turns
//! Python values into answers and keeps the Python objects (event, combined outcome). When a
//! coroutine does suspend, the walk becomes a `Pending` that Python awaits and then resumes.

use std::ptr;

use pyo3::exceptions::PyException;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyString, PyType};
use pyo3::{intern, IntoPyObjectExt, PyTraverseError, PyVisit};

use harnessweaver_core::catalogue::{hook_name, HookId};
use harnessweaver_core::clock::{self, precise_ns};
use harnessweaver_core::contract::{ContractMode, Rule};
use harnessweaver_core::deadline::{turn, Turn};
use harnessweaver_core::fail_mode::FailMode;
use harnessweaver_core::failure::{closed_reason, FailureKind};
use harnessweaver_core::identity::Identities;
use harnessweaver_core::outcome::OutcomeKind;
use harnessweaver_core::registry::{Chain, Entry};
use harnessweaver_core::symbol::{Texts, NO_SYM};
use harnessweaver_core::trace::{Packed, Record, RecordKind};
use harnessweaver_core::walk::{failure_error_sym, failure_error_text, Answer, Walk};
use harnessweaver_core::warning::Warnings;
use harnessweaver_core::{duration::nanos_to_seconds, Sym};
use smallvec::SmallVec;

use crate::contract::violation;
use crate::correlation::Shared;
use crate::declaration::Declaration;
use crate::held::Held;
use crate::identity::Identifying;
use crate::outcome::{plain_continue, Block, Continue, Escalate, HookResult, Retry, Suspend};
use crate::trace::Trace;
use crate::warning::{judge_warnings, Warned};

/// What a registry holds for one middleware.
pub struct Payload {
    pub call: Py<PyAny>,
    pub decl: Py<Declaration>,
}

/// The state of one emit between middleware.
pub struct EmitState {
    pub chain: Chain<Payload>,
    pub next: usize,
    pub current: usize,
    pub hook: HookId,
    pub event: Held<PyAny>,
    pub env: Held<PyAny>,
    pub event_type: Held<PyType>,
    pub trace: Held<Trace>,
    pub emit: u64,
    pub walk: Walk,
    pub best: Option<Held<PyAny>>,
    pub t_emit: u64,
    pub t0: u64,
    /// Whether the current middleware is timed on the precise clock (see `clock.rs`).
    pub t0_precise: bool,
    /// Whether the trace asked for precise timings of every record.
    pub precise: bool,
    /// The last clock reading (and whether it was precise): the end of one middleware is the
    /// start of the next, so the chain reads the clock once per middleware.
    pub last: u64,
    pub last_precise: bool,
    /// This emit's records, written to the trace in one go (or when the emit is dropped).
    pub records: Records,
    /// The bus's hook-contract mode (I14): modified events are checked only with one.
    pub contracts: Option<ContractMode>,
    /// Holds the codes and error type names this emit's records name until the trace holds
    /// them (`symbol.rs`, issue 13): dropped after `records` are flushed.
    pub texts: Texts,
    /// The run, step and tool every record of this emit names (I21).
    pub corr: Shared,
    /// The chain deadline (I26), an instant on the precise clock; `None` for nearly every emit.
    pub deadline: Option<u64>,
    /// The current middleware's limit: its timeout, or, when the chain deadline cuts it off
    /// (I26), the time left at its start. Set as it starts, so checking an answer reads one
    /// field.
    pub limit: Option<u64>,
    /// The warnings of the answers taken so far (I24); `None` until one has some, so a chain
    /// without warnings carries one empty pointer.
    pub warned: Option<Box<Warned>>,
    /// The event given and the scheme, on a bus with an identity scheme (I27); `None` on every
    /// other, which then computes nothing.
    pub identifying: Option<Identifying>,
}

/// Records of one emit, packed as the trace stores them (so flushing them is a copy): inline
/// up to a dozen (no allocation for most chains).
pub type Records = SmallVec<[Packed; 12]>;

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
/// I16).
fn code_sym(code: Option<&Py<PyString>>, py: Python<'_>, texts: &mut Texts) -> Option<Sym> {
    match code {
        Some(code) => code.bind(py).to_str().ok().map(|code| texts.intern(code)),
        None => Some(NO_SYM),
    }
}

/// Whether every text of an outcome is valid text: one holding a lone surrogate, which no
/// trace or JSON can carry, makes the outcome an invalid return (I16).
fn valid_texts(py: Python<'_>, texts: &[Option<&Py<PyString>>]) -> bool {
    texts
        .iter()
        .flatten()
        .all(|text| text.bind(py).to_str().is_ok())
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

/// Whether `value`'s real type is `event_type` or a subclass of it (I18): `isinstance` would
/// believe a `__class__` that claims the type, and call one that raises.
pub(crate) fn is_event_of(value: &Bound<'_, PyAny>, event_type: &Bound<'_, PyType>) -> bool {
    let kind = value.get_type();
    // SAFETY: both are live type objects; `PyType_IsSubtype` only reads their MROs.
    kind.is(event_type)
        || unsafe { ffi::PyType_IsSubtype(kind.as_type_ptr(), event_type.as_type_ptr()) != 0 }
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
            valid_texts(py, &[Some(&b.reason)]),
            value,
            b.warnings.as_ref(),
        );
    }
    if let Ok(s) = value.cast_exact::<Suspend>() {
        let s = s.get();
        return outcome(
            OutcomeKind::Suspend,
            code_sym(s.code.as_ref(), py, texts),
            valid_texts(py, &[Some(&s.reason), s.approver_role.as_ref()]),
            value,
            s.warnings.as_ref(),
        );
    }
    if let Ok(e) = value.cast_exact::<Escalate>() {
        let e = e.get();
        return outcome(
            OutcomeKind::Escalate,
            code_sym(e.code.as_ref(), py, texts),
            valid_texts(py, &[Some(&e.reason), e.to.as_ref()]),
            value,
            e.warnings.as_ref(),
        );
    }
    if let Ok(r) = value.cast_exact::<Retry>() {
        let r = r.get();
        return outcome(
            OutcomeKind::Retry,
            code_sym(r.code.as_ref(), py, texts),
            valid_texts(py, &[Some(&r.reason)]),
            value,
            r.warnings.as_ref(),
        );
    }
    Judged::Failure(FailureKind::InvalidReturn)
}

impl EmitState {
    fn entry(&self) -> &Entry<Payload> {
        &self.chain[self.current]
    }

    /// Seconds left before the current middleware's deadline (negative once it passed). A
    /// coarse start is never later than the true one, so this errs on the early side.
    #[allow(clippy::cast_precision_loss)] // nanosecond counts far below 2^52 in practice
    pub fn remaining(&self) -> f64 {
        match self.limit_ns() {
            Some(limit) => (limit as f64 - precise_ns().saturating_sub(self.t0) as f64) / 1e9,
            None => f64::INFINITY,
        }
    }

    /// The current middleware's limit: its timeout, or the time left to the chain deadline
    /// when it is cut off (I26).
    fn limit_ns(&self) -> Option<u64> {
        self.limit
    }

    /// What running past the limit is: a timeout, or a `deadline` failure when cut off (I26).
    fn overrun(&self) -> FailureKind {
        // Cut off exactly when the limit is not its own timeout (see `deadline_turn`).
        if self.deadline.is_some() && self.limit != self.entry().decl.timeout_ns {
            FailureKind::Deadline
        } else {
            FailureKind::Timeout
        }
    }

    /// I26, before the current middleware is called: skipped when the chain deadline has
    /// passed (true: do not call it), else cut off or timed as before.
    #[cold]
    #[inline(never)]
    fn deadline_turn(&mut self, py: Python<'_>, deadline: u64) -> PyResult<bool> {
        match turn(deadline, self.t0, self.entry().decl.timeout_ns) {
            Turn::Skip => {
                self.failed(py, FailureKind::Skipped, None)?;
                Ok(true)
            }
            Turn::CutOff(left) => {
                self.limit = Some(left);
                Ok(false)
            }
            Turn::Own => Ok(false),
        }
    }

    /// The answer just recorded carries `kept` (I24): a taken answer's record is an outcome
    /// record; a strict contract violation made it a failure, which carries none.
    #[cold]
    #[inline(never)]
    fn note_warnings(&mut self, kind: RecordKind, kept: Warnings) {
        if kind != RecordKind::Outcome {
            return;
        }
        let at = self.records.len() - 1;
        let audited = self.chain[self.current].decl.mode.is_audit();
        let warned = self.warned.get_or_insert_with(Box::default);
        if audited {
            // I24, I25: on the audited middleware's record only, like the rest of its answer.
            warned.trace.push((at, kept));
            return;
        }
        warned.trace.push((at, kept.clone()));
        warned.result.push((self.current, kept));
    }

    /// Writes the buffered records to the trace, once.
    fn flush(&mut self) {
        if self.warned.is_some() {
            self.flush_warned();
            return;
        }
        if !self.records.is_empty() {
            (self.trace.get().get().lock()).extend_packed_from_with(
                &self.records,
                &self.texts,
                &self.corr,
            );
            self.records.clear();
        }
    }

    /// [`EmitState::flush`] once an answer had warnings (I24): kept apart, so that the plain
    /// path stays as it was.
    #[cold]
    #[inline(never)]
    fn flush_warned(&mut self) {
        let Some(warned) = self.warned.as_mut() else {
            return;
        };
        if !self.records.is_empty() {
            (self.trace.get().get().lock()).extend_packed_warned(
                &self.records,
                &self.texts,
                &self.corr,
                &warned.trace,
            );
            self.records.clear();
        }
        warned.trace.clear();
    }

    /// [`EmitState::flush`] for the records ending with a hook record that carries
    /// `identities` (I27), beside any warnings (I24): kept apart like `flush_warned`.
    #[cold]
    #[inline(never)]
    fn flush_identified(&mut self, identities: Identities) {
        let hook = self.records.len().saturating_sub(1);
        let warnings = self.warned.as_ref().map_or(&[][..], |w| &w.trace[..]);
        (self.trace.get().get().lock()).extend_packed_noted(
            &self.records,
            &self.texts,
            &self.corr,
            warnings,
            Some((hook, identities)),
        );
        self.records.clear();
        if let Some(warned) = self.warned.as_mut() {
            warned.trace.clear();
        }
    }

    /// A clock reading of the wanted precision, reusing the last one when it has it.
    fn read_clock(&mut self, precise: bool) -> u64 {
        if precise != self.last_precise {
            self.last = clock::now(precise);
            self.last_precise = precise;
        }
        self.last
    }

    /// A fresh reading of the wanted precision, remembered for the next middleware's start.
    fn tick(&mut self, precise: bool) -> u64 {
        self.last = clock::now(precise);
        self.last_precise = precise;
        self.last
    }

    pub fn timeout(&self) -> Option<f64> {
        self.limit_ns().map(nanos_to_seconds)
    }

    /// Runs middleware from `next` on until the chain ends or one suspends.
    pub fn run(&mut self, py: Python<'_>) -> PyResult<Stop> {
        let chain = self.chain.clone();
        while self.next < chain.len() {
            self.current = self.next;
            self.next += 1;
            let entry = &chain[self.current];
            let precise = self.precise || entry.precise;
            self.t0_precise = precise;
            self.t0 = self.read_clock(precise);
            self.limit = entry.decl.timeout_ns;
            if let Some(deadline) = self.deadline {
                if self.deadline_turn(py, deadline)? {
                    continue;
                }
            }
            let called = call(py, &entry.payload.call, &self.event, &self.env);
            let awaitable = match called {
                Ok(awaitable) => awaitable,
                Err(err) => {
                    self.raised(py, err)?;
                    continue;
                }
            };
            let iterator = match step_target(&awaitable) {
                Ok(Some(iterator)) => iterator,
                Ok(None) => {
                    self.failed(py, FailureKind::InvalidReturn, None)?;
                    continue;
                }
                Err(err) => {
                    self.raised(py, err)?;
                    continue;
                }
            };
            let mut out: *mut ffi::PyObject = ptr::null_mut();
            // SAFETY: `iterator` is a live coroutine or iterator; `out` receives a new reference
            // (or stays null when an exception is set), which we take ownership of below.
            let status =
                unsafe { ffi::PyIter_Send(iterator.as_ptr(), ffi::Py_None(), &raw mut out) };
            match status {
                // SAFETY (both arms): on PYGEN_RETURN `out` is a new, non-null reference.
                ffi::PySendResult::PYGEN_RETURN if out == unsafe { ffi::Py_None() } => {
                    unsafe { ffi::Py_DECREF(out) };
                    self.continued(py)?;
                }
                ffi::PySendResult::PYGEN_RETURN => {
                    let value = unsafe { Bound::from_owned_ptr(py, out) };
                    self.answered(py, &value)?;
                }
                ffi::PySendResult::PYGEN_NEXT => {
                    // What finished so far goes to the trace now: a suspended emit may be
                    // cancelled and never resumed (I12), and nothing recorded is lost.
                    self.flush();
                    // SAFETY: on PYGEN_NEXT `out` is a new, non-null reference (the yielded value).
                    let yielded = unsafe { Bound::from_owned_ptr(py, out) };
                    return Ok(Stop::Wait {
                        awaitable: iterator.unbind(),
                        yielded: yielded.unbind(),
                    });
                }
                ffi::PySendResult::PYGEN_ERROR => {
                    let err = PyErr::fetch(py);
                    self.raised(py, err)?;
                }
            }
        }
        Ok(Stop::Done(self.finish(py)?))
    }

    /// The current middleware answered `None`, a plain `Continue`: the common case, with
    /// nothing to judge or decide.
    fn continued(&mut self, py: Python<'_>) -> PyResult<()> {
        let now = self.tick(self.t0_precise);
        if self.late(now) {
            return self.failed(py, self.overrun(), None); // a late answer (ruling 10, I26)
        }
        let entry = &self.chain[self.current];
        let record = if entry.decl.mode.is_audit() {
            Walk::continued_audited(self.hook, entry.name, entry.decl.band) // I25
        } else {
            self.walk
                .continued(self.current, self.hook, entry.name, entry.decl.band)
        };
        self.keep(record, now);
        Ok(())
    }

    /// Buffers the current middleware's record, timed from its start to `now`.
    fn keep(&mut self, record: Record, now: u64) {
        self.keep_timed(record, self.t0, now);
    }

    /// Buffers one of this emit's records, timed from `start` to `now`.
    fn keep_timed(&mut self, mut record: Record, start: u64, now: u64) {
        record.emit = self.emit;
        record.t_ns = start;
        record.duration_ns = now.saturating_sub(start);
        self.records.push(Packed::pack(&record));
    }

    /// The current middleware answered `value` (maybe after suspending).
    pub fn answered(&mut self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let now = self.tick(self.t0_precise);
        if self.late(now) {
            return self.failed(py, self.overrun(), None); // a late answer (ruling 10, I26)
        }
        match judge(value, self.event_type.bind(py), &mut self.texts) {
            Judged::Failure(kind) => self.failed(py, kind, None),
            Judged::Answer {
                answer,
                keep,
                modified,
                warnings,
            } => {
                // I24: warnings that are no list of texts make the answer invalid.
                let kept = match warnings {
                    None => None,
                    Some(given) => match judge_warnings(given.bind(py)) {
                        Ok(kept) => kept,
                        Err(()) => return self.failed(py, FailureKind::InvalidReturn, None),
                    },
                };
                let decision = match (self.contracts, &modified) {
                    (Some(mode), Some(event)) => match self.broken(py, event)? {
                        Some(rule) => self.violated(py, rule, mode, now)?,
                        None => self.decide(answer, now),
                    },
                    _ => self.decide(answer, now),
                };
                if let Some(kept) = kept {
                    self.note_warnings(decision.record.kind, kept);
                }
                if decision.accept_modification {
                    if let Some(event) = modified {
                        self.event.replace(event);
                    }
                }
                if decision.new_best {
                    self.best = keep.map(Held::new);
                }
                if decision.stop {
                    self.next = self.chain.len();
                }
                Ok(())
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
        let now = self.tick(self.t0_precise);
        if self.late(now) {
            return self.failed(py, self.overrun(), None); // raised after its deadline (I9, I26)
        }
        if cancelled {
            return self.failed(py, FailureKind::Cancelled, None);
        }
        let name = err.get_type(py).name()?;
        self.failed(py, FailureKind::Exception, Some(name.to_str()?))
    }

    /// Whether the current middleware's deadline had passed by `now` (ruling 10, I9).
    /// Its limit is its timeout or, cut off, the time left to the chain deadline (I26).
    fn late(&self, now: u64) -> bool {
        self.limit
            .is_some_and(|limit| now.saturating_sub(self.t0) > limit)
    }

    /// The current middleware failed (I5): trace it, and resolve it by its fail mode. Never
    /// inlined: kept out of the plain-answer path that calls it only for a late answer.
    #[inline(never)]
    pub fn failed(
        &mut self,
        py: Python<'_>,
        kind: FailureKind,
        exception: Option<&str>,
    ) -> PyResult<()> {
        let error = failure_error_text(&mut self.texts, kind, exception);
        if kind == FailureKind::Deadline {
            // I26: a cut-off middleware ends the chain's time, whatever the clock says next.
            self.deadline = Some(0);
        }
        let now = self.tick(self.t0_precise);
        let decision = self.decide(
            Answer::Failure {
                failure: kind,
                error,
            },
            now,
        );
        if decision.new_best {
            self.best = self.failure_outcome(py, &decision, kind)?;
        }
        if decision.stop {
            self.next = self.chain.len();
        }
        if self.entry().decl.fail_mode == FailMode::Open {
            self.log_failed_open(py, kind, error)?;
        }
        Ok(())
    }

    /// Logs that the current middleware failed open (`buslog.py`, docs/logging.md): a slow
    /// path only, so the plain-answer path never touches the logger (and, cold and never
    /// inlined, does not change how that path is compiled).
    #[cold]
    #[inline(never)]
    fn log_failed_open(&self, py: Python<'_>, kind: FailureKind, error: Sym) -> PyResult<()> {
        static FAILED_OPEN: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
        let log = FAILED_OPEN.import(py, "harnessweaver.buslog", "failed_open")?;
        let error = harnessweaver_core::symbol::text(error);
        let error = error.as_deref().unwrap_or("Exception");
        let name = self.entry().decl.name.as_str();
        log.call1((name, hook_name(self.hook), kind.as_str(), error))?;
        Ok(())
    }

    /// Logs that the current middleware's modification broke `rule` on a bus in warn mode.
    #[cold]
    #[inline(never)]
    fn log_contract_warning(&self, py: Python<'_>, rule: Rule) -> PyResult<()> {
        static CONTRACT_WARNING: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
        let log = CONTRACT_WARNING.import(py, "harnessweaver.buslog", "contract_warning")?;
        let name = self.entry().decl.name.as_str();
        log.call1((name, hook_name(self.hook), rule.as_str()))?;
        Ok(())
    }

    /// What a failure of `kind` answers: the Block of I6 when it is closed, else nothing (a
    /// plain Continue).
    fn failure_outcome(
        &self,
        py: Python<'_>,
        decision: &harnessweaver_core::walk::Decision,
        kind: FailureKind,
    ) -> PyResult<Option<Held<PyAny>>> {
        if decision.outcome != OutcomeKind::Block {
            return Ok(None);
        }
        let reason = closed_reason(&self.entry().decl.name, kind);
        let code = harnessweaver_core::symbol::resolve_opt(decision.code)
            .map(|c| PyString::new(py, c).unbind());
        let block = Block {
            reason: PyString::new(py, &reason).unbind(),
            code,
            warnings: None,
        };
        Ok(Some(Held::new(Py::new(py, block)?.into_any())))
    }

    /// The contract rule that the current middleware's modified `event` breaks, if any.
    fn broken(&self, py: Python<'_>, event: &Py<PyAny>) -> PyResult<Option<Rule>> {
        violation(self.hook, self.event.bind(py), event.bind(py))
    }

    /// The current middleware's modification broke `rule` (I14): traced with the rule; in
    /// strict mode a `contract_violation` failure, resolved by its fail mode.
    fn violated(
        &mut self,
        py: Python<'_>,
        rule: Rule,
        mode: ContractMode,
        now: u64,
    ) -> PyResult<harnessweaver_core::walk::Decision> {
        let entry = &self.chain[self.current];
        let decl = &entry.decl;
        let mut decision = if decl.mode.is_audit() {
            Walk::violated_audited(self.hook, entry.name, decl.band, decl.fail_mode, rule, mode)
        } else {
            self.walk.violated(
                self.current,
                self.hook,
                entry.name,
                decl.band,
                decl.fail_mode,
                rule,
                mode,
            )
        };
        self.keep(decision.record, now);
        if mode == ContractMode::Strict {
            // A failure: the combined outcome is a fresh Block when closed, never the answer.
            if decision.new_best {
                self.best = self.failure_outcome(py, &decision, FailureKind::ContractViolation)?;
            }
            decision.new_best = false;
            if self.entry().decl.fail_mode == FailMode::Open {
                let error = failure_error_sym(FailureKind::ContractViolation, None);
                self.log_failed_open(py, FailureKind::ContractViolation, error)?;
            }
        } else {
            self.log_contract_warning(py, rule)?;
        }
        Ok(decision)
    }

    fn decide(&mut self, answer: Answer, now: u64) -> harnessweaver_core::walk::Decision {
        let entry = &self.chain[self.current];
        let decl = &entry.decl;
        let decision = if decl.mode.is_audit() {
            // I25: traced as it would be; counts as a plain Continue.
            Walk::audited(self.hook, entry.name, decl.band, decl.fail_mode, answer)
        } else {
            self.walk.answer(
                self.current,
                self.hook,
                entry.name,
                decl.band,
                decl.fail_mode,
                answer,
            )
        };
        self.keep(decision.record, now);
        decision
    }

    fn finish(&mut self, py: Python<'_>) -> PyResult<Py<HookResult>> {
        let combined = self.walk.combined();
        let record = self.walk.hook_record(self.hook);
        // I27: the identities of the event given and of the one the chain left, only with a
        // scheme. Computed before the hook record is kept: should the caller be interrupted
        // here, the emit ends without one, as a cancelled emit does (I12).
        let identities = match &self.identifying {
            None => None,
            Some(identifying) => Some(identifying.identities(self.event.bind(py))?),
        };
        let now = self.read_clock(self.precise);
        self.keep_timed(record, self.t_emit, now);
        match identities {
            None => self.flush(),
            Some(identities) => self.flush_identified(identities),
        }
        let plain = combined.outcome == OutcomeKind::Continue && !combined.modified;
        let outcome = match (&self.best, plain) {
            (Some(best), false) => best.get().clone_ref(py),
            _ => plain_continue(py)?.clone_ref(py).into_any(),
        };
        let warnings = match &self.warned {
            Some(warned) => warned.result_tuple(py, &self.chain)?,
            None => None,
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

/// `middleware(event, env)` through vectorcall, with borrowed arguments (no reference
/// counting on the way in: the hot path calls this once per middleware). Vectorcall is in
/// the limited API from 3.12 on; see the `abi3-py311` variant below.
#[cfg(any(not(Py_LIMITED_API), Py_3_12))]
fn call<'py>(
    py: Python<'py>,
    middleware: &Py<PyAny>,
    event: &Held<PyAny>,
    env: &Held<PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    // Slot 0 is scratch space that PY_VECTORCALL_ARGUMENTS_OFFSET lets the callee use.
    let args = [ptr::null_mut(), event.get().as_ptr(), env.get().as_ptr()];
    // SAFETY: `middleware` and both arguments are live for the call; the result is a new
    // reference or null with an exception set.
    unsafe {
        let result = ffi::PyObject_Vectorcall(
            middleware.as_ptr(),
            args.as_ptr().add(1),
            2 | ffi::PY_VECTORCALL_ARGUMENTS_OFFSET,
            ptr::null_mut(),
        );
        Bound::from_owned_ptr_or_err(py, result)
    }
}

/// `middleware(event, env)` under the 3.11 limited API, which has no vectorcall: an argument
/// tuple per call (the `abi3-py311` feature only; see docs/packaging.md for what it costs).
#[cfg(all(Py_LIMITED_API, not(Py_3_12)))]
fn call<'py>(
    py: Python<'py>,
    middleware: &Py<PyAny>,
    event: &Held<PyAny>,
    env: &Held<PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    middleware.bind(py).call1((event.bind(py), env.bind(py)))
}

/// Whether `awaitable` is exactly a native coroutine, under the limited API: it does not
/// export `PyCoro_Type`, so compare with `types.CoroutineType`.
#[cfg(Py_LIMITED_API)]
fn is_coroutine(awaitable: &Bound<'_, PyAny>) -> PyResult<bool> {
    static COROUTINE: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    let coroutine = COROUTINE.import(awaitable.py(), "types", "CoroutineType")?;
    Ok(awaitable.get_type().is(coroutine))
}

/// What to step: a coroutine itself, another awaitable's `__await__()` iterator, or `None`
/// for a value that is not awaitable at all (an invalid return).
fn step_target<'py>(awaitable: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
    // SAFETY: a type check on a live object.
    #[cfg(not(Py_LIMITED_API))]
    if unsafe { ffi::PyCoro_CheckExact(awaitable.as_ptr()) } != 0 {
        return Ok(Some(awaitable.clone()));
    }
    #[cfg(Py_LIMITED_API)]
    if is_coroutine(awaitable)? {
        return Ok(Some(awaitable.clone()));
    }
    let py = awaitable.py();
    if awaitable.hasattr(intern!(py, "__await__"))? {
        return Ok(Some(awaitable.call_method0(intern!(py, "__await__"))?));
    }
    Ok(None)
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
        let kind = slf.state.overrun();
        slf.state.failed(py, kind, None)?;
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
