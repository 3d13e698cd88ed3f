//! The walk: one emit along its planned chain, as a resumable state machine that knows nothing
//! of the host language (paired with `Walk` in `_pycore/walk.py` and `Run`/`walk` in
//! `ts-runner/src/walk.ts`; `docs/architecture.md` pairs the names).
//!
//! The walk owns every rule of an emit that is not about host values: the run-order index and
//! stopping (rulings 6, 11), the clock reads (precise or coarse, `clock.rs`), each
//! middleware's limit and whether an answer came too late (ruling 10, I9), the chain deadline
//! that skips or cuts off middleware (I26), audit mode (I25), what a broken hook contract
//! means in strict or warn mode (I14), the warnings kept on records and on the result (I24),
//! the buffered records of the emit and their flush into a [`TraceBuf`] with the emit's
//! correlation (I21), the hook record (ruling 19) with its identities (I27) and the combined
//! outcome (rulings 4, 5, 8). A host (the PyO3 binding, a Rust testee) only calls the
//! middleware, turns what it returned into an [`Answer`], holds its own objects (the event,
//! the kept outcome) and does what each [`Verdict`] says.
//!
//! One emit:
//! 1. [`Walk::new`] with the planned chain and [`Options`] (the emit ordinal from
//!    [`TraceBuf::begin_emit`], the chain deadline's budget, the contract mode, ...);
//! 2. [`Walk::next`] gives the next middleware to call ([`Step::Call`], its run-order index
//!    is [`Walk::index`]), a middleware skipped because the chain deadline passed
//!    ([`Step::Skipped`], already recorded), or [`Step::Done`];
//! 3. when the call returns, [`Walk::continued`] for a plain `Continue` (nothing to do unless
//!    it came too late), or
//!    [`Walk::returned`] (too late?) then [`Walk::answer`]; when it raised,
//!    [`Walk::raised`]; when the host stopped waiting ([`Walk::remaining`]),
//!    [`Walk::timed_out`]; for a value that is no answer, [`Walk::failed`];
//! 4. [`Walk::finish`] writes the records and the hook record to the trace and says what the
//!    combined outcome is ([`Ending`]); a walk abandoned half-way is flushed with
//!    [`Walk::flush`] (ruling 21: nothing recorded is lost).
//!
//! ```
//! use std::sync::Arc;
//! use harnessweaver_core::catalogue::hook_id;
//! use harnessweaver_core::declaration::declare;
//! use harnessweaver_core::symbol::intern;
//! use harnessweaver_core::trace::Correlation;
//! use harnessweaver_core::walk::{Ending, Options, Step};
//! use harnessweaver_core::{Answer, DeclarationInput, OutcomeKind, Registry, TraceBuf, Walk};
//!
//! // Two middleware on tool.before: "redact" modifies the event, "cap" blocks.
//! let mut registry: Registry<&str> = Registry::new();
//! for name in ["redact", "cap"] {
//!     let input = DeclarationInput {
//!         name,
//!         hooks: &["tool.before"],
//!         band: Some("app"),
//!         fail_mode: Some("closed"),
//!         timeout: None,
//!         matcher: None,
//!         mode: None,
//!     };
//!     registry.register(declare(&input).unwrap(), name).unwrap();
//! }
//! let hook = hook_id("tool.before").unwrap();
//! let chain = registry.chain(hook);
//! let mut trace = TraceBuf::new();
//! let options = Options {
//!     emit: trace.begin_emit(),
//!     ..Options::new(hook, Arc::new(Correlation::NONE))
//! };
//! let mut walk = Walk::new(chain, options);
//! let mut event = vec![];
//! while let Step::Call(entry) = walk.next() {
//!     // A host calls the middleware (`entry.payload`) here; this one knows its answers.
//!     let name = entry.payload;
//!     let answer = match name {
//!         "redact" => Answer::Outcome { kind: OutcomeKind::Continue, modified: true, code: 0 },
//!         _ => Answer::Outcome { kind: OutcomeKind::Block, modified: false, code: intern("cap") },
//!     };
//!     if let Some(late) = walk.returned() {
//!         assert!(!late.accept); // too late: the answer is not looked at
//!         continue;
//!     }
//!     let verdict = walk.answer(answer, None, None);
//!     if verdict.accept {
//!         event.push(name); // the modified event goes on
//!     }
//! }
//! assert_eq!(walk.finish(&mut trace, None), Ending::Kept); // the Block "cap" returned
//! assert_eq!(walk.combined().outcome, OutcomeKind::Block);
//! assert_eq!(event, ["redact"]);
//! assert_eq!(trace.len(), 3); // two middleware records and the hook record
//! ```

mod fold;

use std::sync::Arc;

use smallvec::SmallVec;

use crate::catalogue::HookId;
use crate::clock::{self, precise_ns};
use crate::contract::{ContractMode, Rule};
use crate::deadline::{turn, Turn};
use crate::duration::nanos_to_seconds;
use crate::fail_mode::FailMode;
use crate::failure::{closed_reason, FailureKind};
use crate::identity::Identities;
use crate::registry::{Chain, Entry};
use crate::symbol::{Sym, Texts};
use crate::trace::{Correlation, Packed, Record, RecordKind, TraceBuf};
use crate::warning::Warnings;

pub use fold::{failure_error_sym, failure_error_text, Answer, Combined, Decision, Fold};

/// What a walk needs besides its chain.
#[derive(Debug, Clone)]
pub struct Options {
    pub hook: HookId,
    /// The emit's ordinal on its trace ([`TraceBuf::begin_emit`], I8); every record carries it.
    pub emit: u64,
    /// The chain deadline's budget (I26) from the walk's start: the earlier of the hook
    /// point's and the emit's own ([`crate::deadline::chain_deadline`] with start 0); `None`
    /// for nearly every emit.
    pub budget_ns: Option<u64>,
    /// The bus's hook-contract mode (I14): modified events are checked only with one.
    pub contracts: Option<ContractMode>,
    /// Time every record on the precise clock (the trace asked for it, see `clock.rs`).
    pub precise: bool,
    /// The run, step and tool every record of this emit names (I21).
    pub correlation: Arc<Correlation>,
}

impl Options {
    /// The options of a plain emit on `hook`: emit ordinal 0, no deadline, no contracts,
    /// coarse timing where it is enough.
    pub fn new(hook: HookId, correlation: Arc<Correlation>) -> Self {
        Self {
            hook,
            emit: 0,
            budget_ns: None,
            contracts: None,
            precise: false,
            correlation,
        }
    }
}

/// What [`Walk::next`] says to do.
#[derive(Debug)]
pub enum Step<'w, P> {
    /// Call this middleware (at run-order index [`Walk::index`] of the chain).
    Call(&'w Entry<P>),
    /// The chain deadline had passed before this middleware's turn (I26): it was not called
    /// and is recorded as a `skipped` failure; do what the verdict says and ask again.
    Skipped(Verdict),
    /// The chain ended: call [`Walk::finish`].
    Done,
}

/// What the host must log about one middleware (`buslog.py`, docs/logging.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Log {
    /// It failed open (ruling 12): the failure, and the error name of its record (I5).
    FailedOpen { failure: FailureKind, error: Sym },
    /// Its modification broke this contract rule on a bus in warn mode (I14).
    ContractWarning(Rule),
}

/// What the host does after one middleware's answer or failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Verdict {
    /// The answer's modified event replaces the event for later middleware and the caller.
    pub accept: bool,
    /// The answer's outcome object is now the combined outcome: keep it (replacing the one
    /// kept before) for [`Ending::Kept`].
    pub keep: bool,
    pub log: Option<Log>,
}

impl Verdict {
    /// Nothing to do: a plain `Continue` taken.
    pub const NONE: Verdict = Verdict {
        accept: false,
        keep: false,
        log: None,
    };
}

/// The combined outcome of a finished walk, as the host makes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// Nothing but plain `Continue`s (and open failures): a plain `Continue`.
    Continue,
    /// The outcome object last kept ([`Verdict::keep`]).
    Kept,
    /// A closed failure (I6): a fresh `Block` with this reason and code.
    Block { reason: String, code: Sym },
}

/// Records of one emit, packed as the trace stores them (so flushing them is a copy): inline
/// up to a dozen (no allocation for most chains).
pub type Records = SmallVec<[Packed; 12]>;

/// The warnings of one emit's taken answers (I24), once one has some.
#[derive(Debug, Default)]
struct Warned {
    /// Index among the records not yet written to the trace, and the record's warnings.
    trace: Vec<(usize, Warnings)>,
    /// Run-order index of the middleware, and its warnings, for the result.
    result: Vec<(usize, Warnings)>,
}

/// One emit's walk along its chain (see the module doc).
#[derive(Debug)]
pub struct Walk<P> {
    chain: Chain<P>,
    next: usize,
    current: usize,
    hook: HookId,
    emit: u64,
    fold: Fold,
    t_emit: u64,
    /// The current middleware's start.
    t0: u64,
    /// Whether the current middleware is timed on the precise clock (see `clock.rs`).
    t0_precise: bool,
    /// Whether the trace asked for precise timings of every record.
    precise: bool,
    /// The last clock reading (and whether it was precise): the end of one middleware is the
    /// start of the next, so the chain reads the clock once per middleware.
    last: u64,
    last_precise: bool,
    /// This emit's records, written to the trace in one go (or by [`Walk::flush`]).
    records: Records,
    contracts: Option<ContractMode>,
    /// Holds the codes and error type names this emit's records name until the trace holds
    /// them (`symbol.rs`, issue 13): cleared once `records` are flushed.
    texts: Texts,
    corr: Arc<Correlation>,
    /// The chain deadline (I26), an instant on the precise clock; `None` for nearly every emit.
    deadline: Option<u64>,
    /// The current middleware's limit: its timeout, or, when the chain deadline cuts it off
    /// (I26), the time left at its start. Set as it starts, so checking an answer reads one
    /// field.
    limit: Option<u64>,
    /// `None` until an answer has warnings, so a chain without carries one empty pointer.
    warned: Option<Box<Warned>>,
}

impl<P> Walk<P> {
    /// A walk of `chain` starting now (a chain deadline is measured from here, on the precise
    /// clock, and so is everything in its emit).
    pub fn new(chain: Chain<P>, options: Options) -> Self {
        let precise = options.precise || options.budget_ns.is_some();
        let t_emit = clock::now(precise);
        Self {
            chain,
            next: 0,
            current: 0,
            hook: options.hook,
            emit: options.emit,
            fold: Fold::new(),
            t_emit,
            t0: t_emit,
            t0_precise: precise,
            precise,
            last: t_emit,
            last_precise: precise,
            records: Records::new(),
            contracts: options.contracts,
            texts: Texts::new(),
            corr: options.correlation,
            deadline: options.budget_ns.map(|ns| t_emit.saturating_add(ns)),
            limit: None,
            warned: None,
        }
    }

    /// The chain walked.
    pub fn chain(&self) -> &Chain<P> {
        &self.chain
    }

    pub fn hook(&self) -> HookId {
        self.hook
    }

    /// The middleware called last (or being called).
    pub fn entry(&self) -> &Entry<P> {
        &self.chain[self.current]
    }

    /// The contract mode when modified events are to be checked (I14): the host computes the
    /// [`Rule`] a modification breaks for [`Walk::answer`] only then.
    #[inline]
    pub fn contracts(&self) -> Option<ContractMode> {
        self.contracts
    }

    /// Where the host interns the codes of the answers it makes (`symbol.rs`): they live as
    /// long as this emit's records need them.
    #[inline]
    pub fn texts(&mut self) -> &mut Texts {
        &mut self.texts
    }

    /// The next middleware to call (see [`Step`]). Starts its clock and its limit.
    #[allow(clippy::should_implement_trait)] // a step of the walk, not an iterator's item
    #[inline]
    pub fn next(&mut self) -> Step<'_, P> {
        if self.deadline.is_some() {
            return self.next_under_deadline();
        }
        let Some(entry) = self.chain.get(self.next) else {
            return Step::Done;
        };
        self.current = self.next;
        self.next += 1;
        // Field by field (not `read_clock`): `entry` borrows the chain, and is handed out.
        let precise = self.precise || entry.precise;
        self.t0_precise = precise;
        self.limit = entry.decl.timeout_ns;
        if precise != self.last_precise {
            self.last = clock::now(precise);
            self.last_precise = precise;
        }
        self.t0 = self.last;
        Step::Call(entry)
    }

    /// [`Walk::next`] in an emit with a chain deadline (I26): the middleware is skipped when
    /// the deadline has passed, else cut off or timed as before.
    #[cold]
    #[inline(never)]
    fn next_under_deadline(&mut self) -> Step<'_, P> {
        let Some(deadline) = self.deadline else {
            return Step::Done;
        };
        if self.next >= self.chain.len() {
            return Step::Done;
        }
        self.current = self.next;
        self.next += 1;
        let entry = &self.chain[self.current];
        let precise = self.precise || entry.precise;
        self.t0_precise = precise;
        self.limit = entry.decl.timeout_ns;
        self.t0 = self.read_clock(precise);
        match turn(deadline, self.t0, self.entry().decl.timeout_ns) {
            Turn::Skip => return Step::Skipped(self.failed(FailureKind::Skipped, None)),
            Turn::CutOff(left) => self.limit = Some(left),
            Turn::Own => {}
        }
        Step::Call(&self.chain[self.current])
    }

    /// The run-order index of the middleware called last (or being called).
    pub fn index(&self) -> usize {
        self.current
    }

    /// The current middleware's limit in nanoseconds: its timeout, or the time left to the
    /// chain deadline when it is cut off (I26); `None`: no limit.
    #[inline]
    pub fn limit_ns(&self) -> Option<u64> {
        self.limit
    }

    /// [`Walk::limit_ns`] in seconds.
    pub fn timeout(&self) -> Option<f64> {
        self.limit.map(nanos_to_seconds)
    }

    /// Seconds left before the current middleware's limit (negative once it passed; infinite
    /// without one), for a host that waits. A coarse start is never later than the true one,
    /// so this errs on the early side.
    #[allow(clippy::cast_precision_loss)] // nanosecond counts far below 2^52 in practice
    pub fn remaining(&self) -> f64 {
        match self.limit {
            Some(limit) => (limit as f64 - precise_ns().saturating_sub(self.t0) as f64) / 1e9,
            None => f64::INFINITY,
        }
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

    /// Whether the current middleware's limit had passed by `now` (ruling 10, I9, I26).
    #[inline]
    fn late(&self, now: u64) -> bool {
        self.limit
            .is_some_and(|limit| now.saturating_sub(self.t0) > limit)
    }

    /// A clock reading of the wanted precision, reusing the last one when it has it.
    #[inline]
    fn read_clock(&mut self, precise: bool) -> u64 {
        if precise != self.last_precise {
            self.last = clock::now(precise);
            self.last_precise = precise;
        }
        self.last
    }

    /// A fresh reading of the wanted precision, remembered for the next middleware's start.
    #[inline]
    fn tick(&mut self, precise: bool) -> u64 {
        self.last = clock::now(precise);
        self.last_precise = precise;
        self.last
    }

    /// The current middleware answered a plain `Continue` (`None` in Python): the common
    /// case, with nothing to judge and nothing to do (`None`). A late one is a timeout
    /// (ruling 10): `Some` of what to do about it.
    #[inline]
    pub fn continued(&mut self) -> Option<Verdict> {
        if let Some(late) = self.returned() {
            return Some(late);
        }
        let now = self.last;
        let entry = &self.chain[self.current];
        let record = if entry.decl.mode.is_audit() {
            Fold::continued_audited(self.hook, entry.name, entry.decl.band) // I25
        } else {
            self.fold
                .continued(self.current, self.hook, entry.name, entry.decl.band)
        };
        self.keep(record, now);
        None
    }

    /// The current middleware returned (anything but a plain `Continue`, which
    /// [`Walk::continued`] takes): reads the clock. `Some`: it answered past its limit, a
    /// timeout or deadline failure already recorded (ruling 10, I26), and the answer is not to
    /// be looked at; `None`: judge it and call [`Walk::answer`] (or [`Walk::failed`]).
    #[inline]
    pub fn returned(&mut self) -> Option<Verdict> {
        let now = self.tick(self.t0_precise);
        if self.late(now) {
            return Some(self.failed(self.overrun(), None));
        }
        None
    }

    /// The current middleware's answer, after [`Walk::returned`]: `broken` is the contract
    /// rule its modified event breaks, computed by the host only when [`Walk::contracts`] is
    /// set (I14), and `warnings` what it kept of the answer's warnings (I24,
    /// [`crate::warning::keep`]).
    #[inline]
    pub fn answer(
        &mut self,
        answer: Answer,
        broken: Option<Rule>,
        warnings: Option<Warnings>,
    ) -> Verdict {
        let now = self.last;
        let mut log = None;
        let decision = match (self.contracts, broken) {
            (Some(mode), Some(rule)) => self.violated(rule, mode, now, &mut log),
            _ => self.decide(answer, now),
        };
        if let Some(kept) = warnings {
            self.note_warnings(decision.record.kind, kept);
        }
        if decision.stop {
            self.next = self.chain.len();
        }
        Verdict {
            accept: decision.accept_modification,
            keep: decision.new_best,
            log,
        }
    }

    /// The current middleware raised (`kind` is [`FailureKind::Exception`] with the
    /// exception's type name, or [`FailureKind::Cancelled`], I15): a timeout or deadline
    /// failure instead when it raised past its limit (I9, I26).
    pub fn raised(&mut self, kind: FailureKind, exception_type: Option<&str>) -> Verdict {
        match self.returned() {
            Some(late) => late,
            None => self.failed(kind, exception_type),
        }
    }

    /// The host stopped waiting for the current middleware at its limit (its own timeout, or
    /// the chain's deadline when it was cut off, I26).
    pub fn timed_out(&mut self) -> Verdict {
        self.failed(self.overrun(), None)
    }

    /// The current middleware failed with `kind` (I5): traced, and resolved by its fail mode
    /// (rulings 11, 12). `exception_type` names an exception's type (I5's `error`).
    #[inline(never)]
    pub fn failed(&mut self, kind: FailureKind, exception_type: Option<&str>) -> Verdict {
        let error = failure_error_text(&mut self.texts, kind, exception_type);
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
        if decision.stop {
            self.next = self.chain.len();
        }
        let open = self.entry().decl.fail_mode == FailMode::Open;
        Verdict {
            accept: false,
            keep: false,
            log: open.then_some(Log::FailedOpen {
                failure: kind,
                error,
            }),
        }
    }

    /// The current middleware's modification broke `rule` (I14): traced with the rule; in
    /// strict mode a `contract_violation` failure resolved by its fail mode (never the answer
    /// kept: a closed one ends as a fresh Block), in warn mode the modification stands.
    #[cold]
    #[inline(never)]
    fn violated(
        &mut self,
        rule: Rule,
        mode: ContractMode,
        now: u64,
        log: &mut Option<Log>,
    ) -> Decision {
        let entry = &self.chain[self.current];
        let decl = &entry.decl;
        let mut decision = if decl.mode.is_audit() {
            Fold::violated_audited(self.hook, entry.name, decl.band, decl.fail_mode, rule, mode)
        } else {
            self.fold.violated(
                self.current,
                self.hook,
                entry.name,
                decl.band,
                decl.fail_mode,
                rule,
                mode,
            )
        };
        let open = decl.fail_mode == FailMode::Open;
        self.keep(decision.record, now);
        if mode == ContractMode::Strict {
            decision.new_best = false;
            if open {
                let failure = FailureKind::ContractViolation;
                let error = failure_error_sym(failure, None);
                *log = Some(Log::FailedOpen { failure, error });
            }
        } else {
            *log = Some(Log::ContractWarning(rule));
        }
        decision
    }

    fn decide(&mut self, answer: Answer, now: u64) -> Decision {
        let entry = &self.chain[self.current];
        let decl = &entry.decl;
        let decision = if decl.mode.is_audit() {
            // I25: traced as it would be; counts as a plain Continue.
            Fold::audited(self.hook, entry.name, decl.band, decl.fail_mode, answer)
        } else {
            self.fold.answer(
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

    /// The warnings for the result (I24): run-order index of the middleware and what it kept,
    /// in run order.
    pub fn warnings(&self) -> &[(usize, Warnings)] {
        self.warned.as_ref().map_or(&[][..], |w| &w.result[..])
    }

    /// Buffers the current middleware's record, timed from its start to `now`.
    #[inline]
    fn keep(&mut self, record: Record, now: u64) {
        self.keep_timed(record, self.t0, now);
    }

    /// Buffers one of this emit's records, timed from `start` to `now`.
    #[inline]
    fn keep_timed(&mut self, mut record: Record, start: u64, now: u64) {
        record.emit = self.emit;
        record.t_ns = start;
        record.duration_ns = now.saturating_sub(start);
        self.records.push(Packed::pack(&record));
    }

    /// The combined outcome so far (rulings 4, 5, 8).
    pub fn combined(&self) -> Combined {
        self.fold.combined()
    }

    /// Whether records wait to be written: a host that must lock its trace checks this first.
    #[inline]
    pub fn unflushed(&self) -> bool {
        !self.records.is_empty()
    }

    /// Writes the records buffered so far to `trace` (before a suspension, or when the emit is
    /// abandoned, I12: nothing recorded is lost, ruling 21).
    pub fn flush(&mut self, trace: &mut TraceBuf) {
        if self.warned.is_some() {
            self.flush_warned(trace);
            return;
        }
        if !self.records.is_empty() {
            trace.extend_packed_from_with(&self.records, &self.texts, &self.corr);
            self.records.clear();
        }
    }

    /// [`Walk::flush`] once an answer had warnings (I24): kept apart, so that the plain path
    /// stays as it was.
    #[cold]
    #[inline(never)]
    fn flush_warned(&mut self, trace: &mut TraceBuf) {
        let Some(warned) = self.warned.as_mut() else {
            return;
        };
        if !self.records.is_empty() {
            trace.extend_packed_warned(&self.records, &self.texts, &self.corr, &warned.trace);
            self.records.clear();
        }
        warned.trace.clear();
    }

    /// [`Walk::flush`] for the records ending with a hook record that carries `identities`
    /// (I27), beside any warnings (I24): kept apart like `flush_warned`.
    #[cold]
    #[inline(never)]
    fn flush_identified(&mut self, trace: &mut TraceBuf, identities: Identities) {
        let hook = self.records.len().saturating_sub(1);
        let warnings = self.warned.as_ref().map_or(&[][..], |w| &w.trace[..]);
        trace.extend_packed_noted(
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

    /// Ends the walk: the hook record (ruling 19, with `identities` on a bus with a scheme,
    /// I27) after the middleware's records, all written to `trace`; and what the combined
    /// outcome is.
    pub fn finish(&mut self, trace: &mut TraceBuf, identities: Option<Identities>) -> Ending {
        let record = self.fold.hook_record(self.hook);
        let now = self.read_clock(self.precise);
        self.keep_timed(record, self.t_emit, now);
        match identities {
            None => self.flush(trace),
            Some(identities) => self.flush_identified(trace, identities),
        }
        self.ending()
    }

    /// What the combined outcome is (see [`Ending`]).
    pub fn ending(&self) -> Ending {
        let combined = self.fold.combined();
        if combined.outcome == crate::outcome::OutcomeKind::Continue && !combined.modified {
            return Ending::Continue;
        }
        match (combined.failure, combined.index) {
            (Some(failure), Some(index)) => Ending::Block {
                reason: closed_reason(&self.chain[index].decl.name, failure),
                code: combined.code,
            },
            _ => Ending::Kept,
        }
    }
}
