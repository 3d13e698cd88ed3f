//! The chain walk of one emit, driven from plain Rust.
//!
//! TO BE REPLACED by the core's own walk (issue 17: the walk moves from the `PyO3` binding's
//! `EmitState` into `harnessweaver-core`). Until then this module mirrors `EmitState` over the
//! core pieces of today: `walk::Walk` judges each answer, `deadline::turn` decides skips and
//! cut-offs (I26), `clock` times, `TraceBuf` keeps the records. Nothing else in this crate
//! looks inside it: callers use `Drive::new`, `next`, `remaining`, `answer`, `timed_out`,
//! `event` and `finish` only.

use std::sync::Arc;
use std::time::Duration;

use harnessweaver_core::clock::precise_ns;
use harnessweaver_core::contract::{ContractMode, Rule};
use harnessweaver_core::deadline::{turn, Turn};
use harnessweaver_core::failure::{closed_reason, FailureKind};
use harnessweaver_core::identity::Identities;
use harnessweaver_core::registry::{Chain, Entry};
use harnessweaver_core::symbol::{Texts, NO_SYM};
use harnessweaver_core::trace::Correlation;
use harnessweaver_core::trace::{Packed, Record, RecordKind};
use harnessweaver_core::walk::{failure_error_text, Answer, Decision, Walk};
use harnessweaver_core::warning::Warnings;
use harnessweaver_core::{HookId, OutcomeKind, TraceBuf};

/// What the bus brings to one emit.
pub struct Options {
    pub contracts: Option<ContractMode>,
    /// The chain's time budget (I26), from the emit's start; `None`: no chain deadline.
    pub budget_ns: Option<u64>,
    /// The run, step and tool of the emit's records (I21).
    pub corr: Arc<Correlation>,
}

/// An answer, as the caller judged the value the middleware gave.
pub enum Taken<O, E> {
    /// An outcome (nothing counts as a plain `Continue`): its kind, code, the outcome to keep
    /// should it win, a modified event, its kept warnings (I24), and the contract rule its
    /// modification broke (I14), when the bus has a contract mode.
    Outcome {
        kind: OutcomeKind,
        code: Option<String>,
        keep: Option<O>,
        modified: Option<E>,
        warnings: Option<Warnings>,
        broken: Option<Rule>,
    },
    /// A failure of I5 (with the exception's type name for `exception`).
    Failed(FailureKind, Option<String>),
}

/// The combined outcome's object: an answer that won, or the Block of a closed failure (I6).
pub enum Best<O> {
    Answer(O),
    Block { reason: String, code: String },
}

/// What an emit ends with.
pub struct Finished<O, E> {
    /// `None`: a plain `Continue`.
    pub outcome: Option<Best<O>>,
    pub event: E,
    /// The warnings of the enforced answers taken (I24), by registered name, in run order.
    pub warnings: Vec<(String, Warnings)>,
}

/// One emit's walk along its chain.
pub struct Drive<P, O, E> {
    chain: Chain<P>,
    hook: HookId,
    emit: u64,
    walk: Walk,
    next: usize,
    current: usize,
    t_emit: u64,
    t0: u64,
    limit: Option<u64>,
    deadline: Option<u64>,
    contracts: Option<ContractMode>,
    corr: Arc<Correlation>,
    records: Vec<Packed>,
    texts: Texts,
    trace_warnings: Vec<(usize, Warnings)>,
    result_warnings: Vec<(usize, Warnings)>,
    event: E,
    best: Option<Best<O>>,
}

impl<P, O, E> Drive<P, O, E> {
    /// Starts the walk of `chain` for `event`, as emit number `emit` of its trace.
    pub fn new(chain: Chain<P>, hook: HookId, event: E, emit: u64, options: Options) -> Self {
        let t_emit = precise_ns();
        Self {
            chain,
            hook,
            emit,
            walk: Walk::new(),
            next: 0,
            current: 0,
            t_emit,
            t0: t_emit,
            limit: None,
            deadline: options.budget_ns.map(|ns| t_emit.saturating_add(ns)),
            contracts: options.contracts,
            corr: options.corr,
            records: Vec::new(),
            texts: Texts::new(),
            trace_warnings: Vec::new(),
            result_warnings: Vec::new(),
            event,
            best: None,
        }
    }

    /// The event as the chain has it so far.
    pub fn event(&self) -> &E {
        &self.event
    }

    /// The bus's contract mode: a modification is checked only with one (I14).
    pub fn contracts(&self) -> Option<ContractMode> {
        self.contracts
    }

    /// The next middleware to call, or `None` when the chain is done. Middleware whose turn
    /// comes after the chain deadline are skipped here (I26).
    pub fn next(&mut self) -> Option<Arc<Entry<P>>> {
        while self.next < self.chain.len() {
            self.current = self.next;
            self.next += 1;
            self.t0 = precise_ns();
            self.limit = self.entry().decl.timeout_ns;
            if let Some(deadline) = self.deadline {
                match turn(deadline, self.t0, self.entry().decl.timeout_ns) {
                    Turn::Skip => {
                        self.failed(FailureKind::Skipped, None);
                        continue;
                    }
                    Turn::CutOff(left) => self.limit = Some(left),
                    Turn::Own => {}
                }
            }
            return Some(self.chain[self.current].clone());
        }
        None
    }

    /// Time left before the current middleware is interrupted (its timeout, or the chain
    /// deadline when that cuts it off); `None`: no limit.
    pub fn remaining(&self) -> Option<Duration> {
        self.limit.map(|limit| {
            let spent = precise_ns().saturating_sub(self.t0);
            Duration::from_nanos(limit.saturating_sub(spent))
        })
    }

    /// The current middleware answered (or failed) with `taken`.
    pub fn answer(&mut self, taken: Taken<O, E>) {
        if self.late() {
            let kind = self.overrun();
            self.failed(kind, None); // a late answer (ruling 10, I9, I26)
            return;
        }
        match taken {
            Taken::Failed(kind, exception) => self.failed(kind, exception.as_deref()),
            Taken::Outcome {
                kind,
                code,
                keep,
                modified,
                warnings,
                broken,
            } => self.outcome(kind, code.as_deref(), keep, modified, warnings, broken),
        }
    }

    /// The current middleware was interrupted at its deadline (I9, I26).
    pub fn timed_out(&mut self) {
        let kind = self.overrun();
        self.failed(kind, None);
    }

    /// Ends the walk: writes its records to `trace`, the hook record last (with `identities`
    /// on a bus with a scheme, I27).
    pub fn finish(
        mut self,
        trace: &mut TraceBuf,
        identities: Option<Identities>,
    ) -> Finished<O, E> {
        let combined = self.walk.combined();
        let mut record = self.walk.hook_record(self.hook);
        self.keep_timed(&mut record, self.t_emit);
        let hook_at = self.records.len() - 1;
        trace.extend_packed_noted(
            &self.records,
            &self.texts,
            &self.corr,
            &self.trace_warnings,
            identities.map(|ids| (hook_at, ids)),
        );
        let plain = combined.outcome == OutcomeKind::Continue && !combined.modified;
        let warnings = self
            .result_warnings
            .iter()
            .map(|(index, kept)| (self.chain[*index].decl.name.clone(), kept.clone()))
            .collect();
        Finished {
            outcome: if plain { None } else { self.best },
            event: self.event,
            warnings,
        }
    }

    fn entry(&self) -> &Entry<P> {
        &self.chain[self.current]
    }

    /// Whether the current middleware's limit had passed (ruling 10, I9).
    fn late(&self) -> bool {
        self.limit
            .is_some_and(|limit| precise_ns().saturating_sub(self.t0) > limit)
    }

    /// Running past the limit: a timeout, or a `deadline` failure when cut off (I26).
    fn overrun(&self) -> FailureKind {
        if self.deadline.is_some() && self.limit != self.entry().decl.timeout_ns {
            FailureKind::Deadline
        } else {
            FailureKind::Timeout
        }
    }

    fn outcome(
        &mut self,
        kind: OutcomeKind,
        code: Option<&str>,
        keep: Option<O>,
        modified: Option<E>,
        warnings: Option<Warnings>,
        broken: Option<Rule>,
    ) {
        let code = code.map_or(NO_SYM, |code| self.texts.intern(code));
        let answer = Answer::Outcome {
            kind,
            modified: modified.is_some(),
            code,
        };
        let entry = &self.chain[self.current];
        let (decl, name) = (&entry.decl, entry.name);
        let audited = decl.mode.is_audit();
        let decision = match (broken, self.contracts) {
            (Some(rule), Some(mode)) if audited => {
                Walk::violated_audited(self.hook, name, decl.band, decl.fail_mode, rule, mode)
            }
            (Some(rule), Some(mode)) => self.walk.violated(
                self.current,
                self.hook,
                name,
                decl.band,
                decl.fail_mode,
                rule,
                mode,
            ),
            _ if audited => Walk::audited(self.hook, name, decl.band, decl.fail_mode, answer),
            _ => self.walk.answer(
                self.current,
                self.hook,
                name,
                decl.band,
                decl.fail_mode,
                answer,
            ),
        };
        let strict = broken.is_some() && self.contracts == Some(ContractMode::Strict);
        self.keep(decision);
        if let Some(kept) = warnings {
            self.note_warnings(decision.record.kind, kept);
        }
        if decision.accept_modification {
            if let Some(event) = modified {
                self.event = event;
            }
        }
        if decision.new_best {
            // A strict violation is a failure: its combined outcome is the Block of I6.
            self.best = if strict {
                self.failure_outcome(&decision, FailureKind::ContractViolation)
            } else {
                keep.map(Best::Answer)
            };
        }
        if decision.stop {
            self.next = self.chain.len();
        }
    }

    /// The current middleware failed (I5): traced, resolved by its fail mode (I6).
    fn failed(&mut self, kind: FailureKind, exception: Option<&str>) {
        let error = failure_error_text(&mut self.texts, kind, exception);
        if kind == FailureKind::Deadline {
            // I26: a cut-off middleware ends the chain's time, whatever the clock says next.
            self.deadline = Some(0);
        }
        let entry = &self.chain[self.current];
        let (decl, name) = (&entry.decl, entry.name);
        let answer = Answer::Failure {
            failure: kind,
            error,
        };
        let decision = if decl.mode.is_audit() {
            Walk::audited(self.hook, name, decl.band, decl.fail_mode, answer)
        } else {
            self.walk.answer(
                self.current,
                self.hook,
                name,
                decl.band,
                decl.fail_mode,
                answer,
            )
        };
        self.keep(decision);
        if decision.new_best {
            self.best = self.failure_outcome(&decision, kind);
        }
        if decision.stop {
            self.next = self.chain.len();
        }
    }

    /// The Block of I6 when the failure resolved closed, else nothing (a plain Continue).
    fn failure_outcome(&self, decision: &Decision, kind: FailureKind) -> Option<Best<O>> {
        if decision.outcome != OutcomeKind::Block {
            return None;
        }
        Some(Best::Block {
            reason: closed_reason(&self.entry().decl.name, kind),
            code: harnessweaver_core::symbol::text(decision.code)
                .map(std::borrow::Cow::into_owned)
                .unwrap_or_default(),
        })
    }

    /// A taken answer's warnings (I24), on its outcome record; an audited middleware's stay
    /// on its record only (I25).
    fn note_warnings(&mut self, kind: RecordKind, kept: Warnings) {
        if kind != RecordKind::Outcome {
            return;
        }
        let at = self.records.len() - 1;
        if !self.entry().decl.mode.is_audit() {
            self.result_warnings.push((self.current, kept.clone()));
        }
        self.trace_warnings.push((at, kept));
    }

    fn keep(&mut self, decision: Decision) {
        let mut record = decision.record;
        self.keep_timed(&mut record, self.t0);
    }

    fn keep_timed(&mut self, record: &mut Record, start: u64) {
        record.emit = self.emit;
        record.t_ns = start;
        record.duration_ns = precise_ns().saturating_sub(start);
        self.records.push(Packed::pack(record));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use harnessweaver_core::declaration::{declare, DeclarationInput, TimeoutInput};
    use harnessweaver_core::{FailMode, Registry};

    fn chain(middleware: &[(&str, &str, Option<&str>)]) -> Chain<()> {
        let mut registry = Registry::new();
        for (name, fail_mode, timeout) in middleware {
            let input = DeclarationInput {
                name,
                hooks: &["tool.before"],
                band: None,
                fail_mode: Some(fail_mode),
                timeout: timeout.map(TimeoutInput::Text),
                matcher: None,
                mode: None,
            };
            registry.register(declare(&input).unwrap(), ()).unwrap();
        }
        registry.chain(4)
    }

    fn options(budget_ns: Option<u64>) -> Options {
        Options {
            contracts: None,
            budget_ns,
            corr: Arc::new(Correlation::NONE),
        }
    }

    fn names(trace: &TraceBuf) -> Vec<(Option<String>, String, Option<String>)> {
        trace
            .iter()
            .map(|view| {
                let value = serde_json::to_value(&view).unwrap();
                let text = |key: &str| value.get(key).and_then(|v| v.as_str()).map(str::to_owned);
                (
                    text("middleware"),
                    text("kind").unwrap_or_default(),
                    text("code"),
                )
            })
            .collect()
    }

    #[test]
    fn a_closed_failure_blocks_and_stops_the_chain() {
        let mut trace = TraceBuf::new();
        let emit = trace.begin_emit();
        let mut drive: Drive<(), (), ()> = Drive::new(
            chain(&[("a", "closed", None), ("b", "closed", None)]),
            4,
            (),
            emit,
            options(None),
        );
        let entry = drive.next().unwrap();
        assert_eq!(entry.decl.fail_mode, FailMode::Closed);
        drive.answer(Taken::Failed(
            FailureKind::Exception,
            Some("KeyError".into()),
        ));
        assert!(drive.next().is_none(), "a Block stops the chain");
        let finished = drive.finish(&mut trace, None);
        let Some(Best::Block { reason, code }) = finished.outcome else {
            panic!("a closed failure is a Block");
        };
        assert_eq!(reason, "middleware a failed: exception");
        assert_eq!(code, "middleware_error");
        assert_eq!(
            names(&trace),
            [
                (
                    Some("a".into()),
                    "failure".into(),
                    Some("middleware_error".into())
                ),
                (None, "hook".into(), Some("middleware_error".into())),
            ]
        );
    }

    #[test]
    fn a_spent_chain_deadline_skips_every_open_middleware() {
        let mut trace = TraceBuf::new();
        let emit = trace.begin_emit();
        let mut drive: Drive<(), (), ()> = Drive::new(
            chain(&[("a", "open", None), ("b", "open", Some("2s"))]),
            4,
            (),
            emit,
            options(Some(0)),
        );
        assert!(drive.next().is_none(), "nothing is called");
        let finished = drive.finish(&mut trace, None);
        assert!(finished.outcome.is_none(), "open failures continue");
        let kinds: Vec<_> = names(&trace).into_iter().map(|(_, kind, _)| kind).collect();
        assert_eq!(kinds, ["failure", "failure", "hook"]);
    }

    #[test]
    fn a_cut_off_middleware_fails_as_deadline_and_ends_the_chains_time() {
        let mut trace = TraceBuf::new();
        let emit = trace.begin_emit();
        let mut drive: Drive<(), (), ()> = Drive::new(
            chain(&[("a", "open", Some("7200s")), ("b", "open", None)]),
            4,
            (),
            emit,
            options(Some(3_600_000_000_000)),
        );
        drive.next().unwrap();
        assert!(drive.remaining().is_some_and(|left| left.as_secs() < 3600));
        drive.timed_out();
        assert!(
            drive.next().is_none(),
            "b is skipped: the chain's time has ended"
        );
        drive.finish(&mut trace, None);
        let failures: Vec<String> = trace
            .iter()
            .filter_map(|view| {
                let value = serde_json::to_value(&view).unwrap();
                value
                    .get("failure")
                    .and_then(|f| f.as_str())
                    .map(str::to_owned)
            })
            .collect();
        assert_eq!(failures, ["deadline", "skipped"]);
    }
}
