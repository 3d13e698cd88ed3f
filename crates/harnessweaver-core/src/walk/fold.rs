//! The fold of a walk: each answer, in run order, into its trace record and the combined
//! outcome (paired with TypeScript's `fold` in `walk.ts` and `Walk._trace` in `_pycore/walk.py`).
//!
//! Per answer it says what to trace (ruling 19, I8), whether the event changes for the next
//! middleware (detail "modified", ruling 12), whether this is now the combined outcome
//! (rulings 4, 5, 8) and whether the chain stops (rulings 6, 11). At the end it gives the
//! combined outcome and the hook record. [`super::Walk`] drives it and fills in the timing.

use crate::band::Band;
use crate::catalogue::HookId;
use crate::contract::{ContractMode, Rule};
use crate::fail_mode::FailMode;
use crate::failure::{exception_name, resolve, FailureKind};
use crate::outcome::{severity, OutcomeKind, Reducer};
use crate::symbol::{intern, intern_opt, Sym, Texts, NO_SYM};
use crate::trace::{Record, RecordKind, ABSENT};

/// What one middleware did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// It returned an outcome (None counts as a plain Continue). `code` is `NO_SYM` when none.
    Outcome {
        kind: OutcomeKind,
        modified: bool,
        code: Sym,
    },
    /// It failed (ruling 9); `error` is the type name of I5, see [`failure_error_sym`].
    Failure { failure: FailureKind, error: Sym },
}

/// The `error` symbol of a failure record (I5): the fixed name for a timeout, an invalid return
/// or a wrong event type, whatever `exception_type` says; for an exception its type name as
/// I28 records it, or `Exception` if the binding could not tell.
pub fn failure_error_sym(kind: FailureKind, exception_type: Option<&str>) -> Sym {
    intern(
        kind.fixed_error_name()
            .or(exception_type.map(exception_name))
            .unwrap_or("Exception"),
    )
}

/// [`failure_error_sym`] for a binding: an exception's type name, which a program may make
/// anew per call, is interned into `texts` (counted past the budget, see `symbol.rs`); the
/// fixed names are permanent.
pub fn failure_error_text(
    texts: &mut Texts,
    kind: FailureKind,
    exception_type: Option<&str>,
) -> Sym {
    match kind.fixed_error_name() {
        Some(name) => intern(name),
        None => texts.intern(exception_type.map_or("Exception", exception_name)),
    }
}

/// What the binding does with one answer.
#[allow(clippy::struct_excessive_bools)] // four independent yes/no decisions, by design
#[derive(Debug, Clone, Copy)]
pub struct Decision {
    /// The middleware's outcome: its answer, or what its failure resolved to.
    pub outcome: OutcomeKind,
    pub modified: bool,
    pub code: Sym,
    /// The modified event replaces the event for later middleware and the operation.
    pub accept_modification: bool,
    /// This answer is now the combined outcome (keep its outcome object).
    pub new_best: bool,
    /// Run no further middleware (a Block).
    pub stop: bool,
    /// The trace record, with `emit`, `t_ns` and `duration_ns` left 0 for the binding.
    pub record: Record,
}

/// The combined outcome of a walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Combined {
    /// Run-order index of the answer that won; `None` when nothing answered.
    pub index: Option<usize>,
    pub outcome: OutcomeKind,
    pub modified: bool,
    pub code: Sym,
    /// The failure that won, resolved closed to a Block (I6); `None` for an answer.
    pub failure: Option<FailureKind>,
}

impl Combined {
    /// No middleware answered: a plain Continue.
    pub const NOTHING: Combined = Combined {
        index: None,
        outcome: OutcomeKind::Continue,
        modified: false,
        code: NO_SYM,
        failure: None,
    };
}

/// The record of a plain `Continue` from `entry_name`; timings and the emit are filled in by
/// whoever timed it.
fn continue_record(hook: HookId, entry_name: Sym, band: Band) -> Record {
    Record {
        t_ns: 0,
        duration_ns: 0,
        emit: 0,
        middleware: entry_name,
        code: NO_SYM,
        error: NO_SYM,
        hook,
        kind: RecordKind::Outcome,
        outcome: OutcomeKind::Continue,
        modified: false,
        band: band as u8,
        fail_mode: ABSENT,
        failure: ABSENT,
        contract: ABSENT,
        audit: false,
    }
}

/// `decision`, its record naming the contract `rule` that the modification broke (I14).
fn naming(mut decision: Decision, rule: Rule) -> Decision {
    decision.record.contract = rule.as_u8();
    decision
}

/// The answer a modification that broke a contract stands for (I14): warn keeps the modified
/// Continue, strict makes it a `contract_violation` failure.
fn violation(mode: ContractMode) -> Answer {
    match mode {
        ContractMode::Warn => Answer::Outcome {
            kind: OutcomeKind::Continue,
            modified: true,
            code: NO_SYM,
        },
        ContractMode::Strict => Answer::Failure {
            failure: FailureKind::ContractViolation,
            error: failure_error_sym(FailureKind::ContractViolation, None),
        },
    }
}

/// The record of one answer, and whether its modification may be applied.
///
/// An outcome is normalised so the trace stays consistent: only a Continue can be modified,
/// and a Continue has no code.
fn judge(
    hook: HookId,
    entry_name: Sym,
    band: Band,
    fail_mode: FailMode,
    answer: Answer,
) -> (Record, bool) {
    let mut record = continue_record(hook, entry_name, band);
    let accept_modification = match answer {
        Answer::Outcome {
            kind,
            modified,
            code,
        } => {
            let is_continue = kind == OutcomeKind::Continue;
            record.outcome = kind;
            record.modified = modified && is_continue;
            record.code = if is_continue { NO_SYM } else { code };
            record.modified
        }
        Answer::Failure { failure, error } => {
            // Rulings 11–12: the fail mode decides; an open failure's modification is
            // discarded, so a failure never changes the event.
            let resolution = resolve(fail_mode, failure);
            record.kind = RecordKind::Failure;
            record.outcome = resolution.outcome;
            record.code = intern_opt(resolution.code);
            record.error = error;
            record.fail_mode = fail_mode as u8;
            record.failure = failure as u8;
            false
        }
    };
    (record, accept_modification)
}

/// One emit's answers folded: each into the combined outcome (rulings 4, 5, 8) and into its
/// record of the trace.
#[derive(Debug, Default)]
pub struct Fold {
    reducer: Reducer,
    best: Option<Combined>,
}

impl Fold {
    pub fn new() -> Self {
        Self::default()
    }

    /// Folds in the answer of the middleware at run-order `index`. Answers must arrive in
    /// run order (ties go to the earliest, ruling 5).
    ///
    /// An outcome is normalised so the trace stays consistent: only a Continue can be modified,
    /// and a Continue has no code.
    pub fn answer(
        &mut self,
        index: usize,
        hook: HookId,
        entry_name: Sym,
        band: Band,
        fail_mode: FailMode,
        answer: Answer,
    ) -> Decision {
        let (record, accept_modification) = judge(hook, entry_name, band, fail_mode, answer);
        let new_best = self.offer(index, &record);
        Decision {
            outcome: record.outcome,
            modified: record.modified,
            code: record.code,
            accept_modification,
            new_best,
            // Ruling 6 (Block stops the chain either way) and ruling 11 (a closed failure).
            stop: record.outcome == OutcomeKind::Block,
            record,
        }
    }

    /// The answer of a middleware in audit mode (I25): its record is the one [`Fold::answer`]
    /// makes, marked `audit`, and the answer takes no part in the walk: it is no candidate for
    /// the combined outcome, its modification is not applied and it never stops the chain.
    pub fn audited(
        hook: HookId,
        entry_name: Sym,
        band: Band,
        fail_mode: FailMode,
        answer: Answer,
    ) -> Decision {
        let (mut record, _) = judge(hook, entry_name, band, fail_mode, answer);
        record.audit = true;
        Decision {
            outcome: record.outcome,
            modified: record.modified,
            code: record.code,
            accept_modification: false,
            new_best: false,
            stop: false,
            record,
        }
    }

    /// [`Fold::violated`] for a middleware in audit mode (I25): recorded the same, marked
    /// `audit`, and nothing applied.
    pub fn violated_audited(
        hook: HookId,
        entry_name: Sym,
        band: Band,
        fail_mode: FailMode,
        rule: Rule,
        mode: ContractMode,
    ) -> Decision {
        let decision = Self::audited(hook, entry_name, band, fail_mode, violation(mode));
        naming(decision, rule)
    }

    /// [`Fold::continued`] for a middleware in audit mode (I25): the same record, marked
    /// `audit`, offered to nothing (a plain Continue never changes the combined outcome anyway).
    pub fn continued_audited(hook: HookId, entry_name: Sym, band: Band) -> Record {
        let mut record = continue_record(hook, entry_name, band);
        record.audit = true;
        record
    }

    /// A `Continue(modified)` that broke contract `rule` (I14). Warn: the modification stands
    /// and its record names the rule. Strict: a `contract_violation` failure, resolved by the
    /// fail mode like any other (closed blocks, open continues with the event unmodified), and
    /// its record names the rule too.
    #[allow(clippy::too_many_arguments)] // `answer`'s arguments, plus the verdict
    pub fn violated(
        &mut self,
        index: usize,
        hook: HookId,
        entry_name: Sym,
        band: Band,
        fail_mode: FailMode,
        rule: Rule,
        mode: ContractMode,
    ) -> Decision {
        let decision = self.answer(index, hook, entry_name, band, fail_mode, violation(mode));
        naming(decision, rule)
    }

    /// The answer of nearly every middleware, a plain `Continue`, without building a
    /// [`Decision`]: the same record and reduction as `answer`, and nothing to decide (it never
    /// stops the chain, modifies the event or brings an outcome object of its own).
    pub fn continued(&mut self, index: usize, hook: HookId, entry_name: Sym, band: Band) -> Record {
        let record = continue_record(hook, entry_name, band);
        self.offer(index, &record);
        record
    }

    /// Folds the answer into the combined outcome (rulings 4, 5, 8); true when it leads now.
    fn offer(&mut self, index: usize, record: &Record) -> bool {
        let wins = self
            .reducer
            .offer(severity(record.outcome, record.modified), index);
        if wins {
            self.best = Some(Combined {
                index: Some(index),
                outcome: record.outcome,
                modified: record.modified,
                code: record.code,
                failure: if record.kind == RecordKind::Failure {
                    FailureKind::from_u8(record.failure)
                } else {
                    None
                },
            });
        }
        wins
    }

    /// The combined outcome so far; a plain Continue with no index when nothing answered.
    pub fn combined(&self) -> Combined {
        self.best.unwrap_or(Combined::NOTHING)
    }

    /// The hook record of ruling 19: the combined outcome, no middleware fields.
    pub fn hook_record(&self, hook: HookId) -> Record {
        let combined = self.combined();
        Record {
            t_ns: 0,
            duration_ns: 0,
            emit: 0,
            middleware: NO_SYM,
            code: combined.code,
            error: NO_SYM,
            hook,
            kind: RecordKind::Hook,
            outcome: combined.outcome,
            modified: combined.modified,
            band: ABSENT,
            fail_mode: ABSENT,
            failure: ABSENT,
            contract: ABSENT,
            audit: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::symbol::resolve;
    use crate::trace::TraceBuf;

    const TOOL_BEFORE: HookId = 4;

    fn outcome(kind: OutcomeKind) -> Answer {
        Answer::Outcome {
            kind,
            modified: false,
            code: NO_SYM,
        }
    }

    fn with_code(kind: OutcomeKind, code: &str) -> Answer {
        Answer::Outcome {
            kind,
            modified: false,
            code: intern(code),
        }
    }

    const MODIFIED: Answer = Answer::Outcome {
        kind: OutcomeKind::Continue,
        modified: true,
        code: NO_SYM,
    };

    fn failure(kind: FailureKind) -> Answer {
        Answer::Failure {
            failure: kind,
            error: failure_error_sym(kind, Some("ValueError")),
        }
    }

    /// Runs answers the way the binding does: in order, until one says stop.
    fn walk(answers: &[(FailMode, Answer)]) -> (Fold, Vec<Decision>) {
        let mut walk = Fold::new();
        let mut decisions = Vec::new();
        for (index, &(fail_mode, answer)) in answers.iter().enumerate() {
            let name = intern(&format!("mw{index}"));
            let decision = walk.answer(index, TOOL_BEFORE, name, Band::App, fail_mode, answer);
            decisions.push(decision);
            if decision.stop {
                break;
            }
        }
        (walk, decisions)
    }

    fn closed(answer: Answer) -> (FailMode, Answer) {
        (FailMode::Closed, answer)
    }

    #[test]
    fn nothing_answered_is_a_plain_continue_with_a_hook_record_ruling_19() {
        let walk = Fold::new();
        assert_eq!(walk.combined(), Combined::NOTHING);
        let record = walk.hook_record(7);
        assert_eq!(
            (record.kind, record.hook, record.outcome),
            (RecordKind::Hook, 7, OutcomeKind::Continue)
        );
        assert_eq!(
            (record.middleware, record.code, record.error),
            (NO_SYM, NO_SYM, NO_SYM)
        );
        assert_eq!(
            (record.band, record.fail_mode, record.failure),
            (ABSENT, ABSENT, ABSENT)
        );
    }

    #[test]
    fn an_outcome_record_carries_the_answer_i8() {
        let (_, decisions) = walk(&[closed(with_code(OutcomeKind::Suspend, "weekend"))]);
        let record = decisions[0].record;
        assert_eq!(record.kind, RecordKind::Outcome);
        assert_eq!(resolve(record.middleware), Some("mw0"));
        assert_eq!(
            (record.band, record.hook, record.outcome),
            (Band::App as u8, TOOL_BEFORE, OutcomeKind::Suspend)
        );
        assert_eq!(resolve(record.code), Some("weekend"));
        assert_eq!(
            (record.error, record.fail_mode, record.failure),
            (NO_SYM, ABSENT, ABSENT)
        );
        assert_eq!((record.emit, record.t_ns, record.duration_ns), (0, 0, 0));
    }

    #[test]
    fn a_modification_is_accepted_and_the_chain_goes_on_detail_modified() {
        let (walk, decisions) = walk(&[closed(MODIFIED), closed(outcome(OutcomeKind::Continue))]);
        assert!(decisions[0].accept_modification && decisions[0].record.modified);
        assert!(!decisions[0].stop);
        assert_eq!(decisions.len(), 2);
        assert_eq!(walk.combined().index, Some(0));
        assert!(walk.combined().modified);
    }

    #[test]
    fn block_stops_the_chain_ruling_6() {
        let answers = [
            closed(MODIFIED),
            closed(outcome(OutcomeKind::Block)),
            closed(MODIFIED),
        ];
        let (walk, decisions) = walk(&answers);
        assert_eq!(decisions.len(), 2);
        assert!(decisions[1].stop && decisions[1].new_best);
        assert_eq!(walk.combined().outcome, OutcomeKind::Block);
        assert_eq!(walk.hook_record(TOOL_BEFORE).outcome, OutcomeKind::Block);
    }

    #[test]
    fn closed_failures_block_and_stop_ruling_11() {
        for (kind, code) in [
            (FailureKind::Exception, "middleware_error"),
            (FailureKind::Timeout, "middleware_timeout"),
        ] {
            let (walk, decisions) = walk(&[closed(failure(kind)), closed(MODIFIED)]);
            let decision = decisions[0];
            assert_eq!(decisions.len(), 1);
            assert!(decision.stop && !decision.accept_modification);
            assert_eq!(
                (decision.outcome, resolve(decision.code)),
                (OutcomeKind::Block, Some(code))
            );
            let record = decision.record;
            assert_eq!(
                (record.kind, record.fail_mode, record.failure),
                (RecordKind::Failure, 0, kind as u8)
            );
            assert_eq!(resolve(walk.hook_record(TOOL_BEFORE).code), Some(code));
        }
        let (_, decisions) = walk(&[closed(failure(FailureKind::Exception))]);
        assert_eq!(resolve(decisions[0].record.error), Some("ValueError"));
    }

    #[test]
    fn open_failures_continue_unmodified_ruling_12() {
        let (walk, decisions) = walk(&[
            (FailMode::Open, failure(FailureKind::Timeout)),
            closed(outcome(OutcomeKind::Retry)),
        ]);
        let decision = decisions[0];
        assert!(!decision.stop && !decision.accept_modification && !decision.modified);
        assert_eq!(
            (decision.outcome, decision.code),
            (OutcomeKind::Continue, NO_SYM)
        );
        assert_eq!(resolve(decision.record.error), Some("MiddlewareTimeout"));
        assert_eq!(decision.record.fail_mode, FailMode::Open as u8);
        assert_eq!(decisions.len(), 2);
        assert_eq!(walk.combined().index, Some(1));
    }

    #[test]
    fn most_severe_wins_and_ties_go_to_the_earliest_rulings_4_5() {
        let answers = [
            closed(outcome(OutcomeKind::Retry)),
            closed(with_code(OutcomeKind::Suspend, "first")),
            closed(outcome(OutcomeKind::Escalate)),
            closed(with_code(OutcomeKind::Suspend, "second")),
        ];
        let (walk, decisions) = walk(&answers);
        let new_best: Vec<bool> = decisions.iter().map(|d| d.new_best).collect();
        assert_eq!(new_best, [true, true, false, false]);
        let combined = walk.combined();
        assert_eq!(
            (combined.index, combined.outcome),
            (Some(1), OutcomeKind::Suspend)
        );
        assert_eq!(resolve(combined.code), Some("first"));
    }

    #[test]
    fn continue_modified_wins_only_over_plain_continues_ruling_8() {
        let (walk1, _) = walk(&[closed(MODIFIED), closed(outcome(OutcomeKind::Retry))]);
        assert_eq!(
            (walk1.combined().outcome, walk1.combined().modified),
            (OutcomeKind::Retry, false)
        );
        let (walk2, _) = walk(&[closed(outcome(OutcomeKind::Continue)), closed(MODIFIED)]);
        assert_eq!(
            (walk2.combined().index, walk2.combined().modified),
            (Some(1), true)
        );
        let (walk3, _) = walk(&[
            closed(MODIFIED),
            (FailMode::Open, failure(FailureKind::Exception)),
        ]);
        assert_eq!(walk3.combined().index, Some(0));
    }

    #[test]
    fn answers_are_normalised_for_the_trace() {
        let odd_block = Answer::Outcome {
            kind: OutcomeKind::Block,
            modified: true,
            code: NO_SYM,
        };
        let coded_continue = with_code(OutcomeKind::Continue, "why");
        let (_, decisions) = walk(&[closed(coded_continue), closed(odd_block)]);
        assert_eq!(decisions[0].code, NO_SYM);
        assert!(!decisions[1].modified && !decisions[1].accept_modification);
    }

    #[test]
    fn contract_violations_warn_or_fail_by_fail_mode_i14() {
        let rule = Rule::parse("model.before/history_unchanged").unwrap();
        let name = intern("rewriter");
        let mut walk = Fold::new();
        let warned = walk.violated(
            0,
            2,
            name,
            Band::App,
            FailMode::Closed,
            rule,
            ContractMode::Warn,
        );
        assert!(warned.accept_modification && warned.record.modified && !warned.stop);
        assert_eq!(warned.record.view().contract, Some(rule.as_str()));
        for (fail_mode, outcome, code) in [
            (FailMode::Closed, "block", Some("contract_violation")),
            (FailMode::Open, "continue", None),
        ] {
            let mut walk = Fold::new();
            let decision =
                walk.violated(0, 2, name, Band::App, fail_mode, rule, ContractMode::Strict);
            let view = decision.record.view();
            assert!(!decision.accept_modification);
            assert_eq!(
                (view.kind, view.outcome, view.code.as_deref()),
                ("failure", outcome, code)
            );
            assert_eq!(view.failure, Some("contract_violation"));
            assert_eq!(view.error.as_deref(), Some("ContractViolation"));
            assert_eq!(view.contract, Some(rule.as_str()));
            let mut trace = TraceBuf::new();
            let emit = trace.begin_emit();
            trace.push(Record {
                emit,
                ..decision.record
            });
            let back = TraceBuf::from_jsonl_str(&trace.to_jsonl()).unwrap();
            assert_eq!(back.records(), trace.records());
        }
    }

    #[test]
    fn failure_error_names_follow_i5() {
        let name = |kind, ty| resolve(failure_error_sym(kind, ty));
        assert_eq!(
            name(FailureKind::Exception, Some("KeyError")),
            Some("KeyError")
        );
        assert_eq!(name(FailureKind::Exception, None), Some("Exception"));
        assert_eq!(
            name(FailureKind::Timeout, Some("CancelledError")),
            Some("MiddlewareTimeout")
        );
        assert_eq!(
            name(FailureKind::InvalidReturn, None),
            Some("InvalidReturn")
        );
        assert_eq!(
            name(FailureKind::WrongEventType, Some("X")),
            Some("WrongEventType")
        );
    }

    #[test]
    fn a_walks_records_are_a_valid_trace_i8() {
        let answers = [
            closed(MODIFIED),
            (FailMode::Open, failure(FailureKind::InvalidReturn)),
            closed(with_code(OutcomeKind::Escalate, "human")),
            closed(failure(FailureKind::WrongEventType)),
        ];
        let (walk, decisions) = walk(&answers);
        let mut trace = TraceBuf::new();
        let emit = trace.begin_emit();
        for record in decisions
            .iter()
            .map(|d| d.record)
            .chain([walk.hook_record(TOOL_BEFORE)])
        {
            trace.push(Record { emit, ..record });
        }
        let back = TraceBuf::from_jsonl_str(&trace.to_jsonl()).unwrap();
        assert_eq!(back.records(), trace.records());
        assert_eq!(trace.len(), 5);
    }

    /// `continued` is `answer(plain Continue)` minus the decision: over every sequence of up
    /// to four answers of six kinds, both give the same records and the same combined outcome.
    #[test]
    fn continued_is_answer_of_a_plain_continue_exhaustively() {
        let kinds = [
            closed(outcome(OutcomeKind::Continue)),
            closed(MODIFIED),
            closed(with_code(OutcomeKind::Retry, "again")),
            closed(outcome(OutcomeKind::Block)),
            (FailMode::Open, failure(FailureKind::Exception)),
            closed(failure(FailureKind::Timeout)),
        ];
        let mut sequences: Vec<Vec<usize>> = vec![vec![]];
        for _ in 0..4 {
            let longer: Vec<Vec<usize>> = sequences
                .iter()
                .filter(|s| s.len() == sequences.last().map_or(0, Vec::len))
                .flat_map(|s| (0..kinds.len()).map(move |k| [s.clone(), vec![k]].concat()))
                .collect();
            sequences.extend(longer);
        }
        assert_eq!(sequences.len(), 1 + 6 + 36 + 216 + 1296);
        for sequence in &sequences {
            let answers: Vec<_> = sequence.iter().map(|&k| kinds[k]).collect();
            let (general, decisions) = walk(&answers);
            let mut fast = Fold::new();
            let mut records = Vec::new();
            for (index, &(fail_mode, answer)) in answers.iter().enumerate() {
                let name = intern(&format!("mw{index}"));
                if answer == outcome(OutcomeKind::Continue) {
                    records.push(fast.continued(index, TOOL_BEFORE, name, Band::App));
                    continue;
                }
                let decision = fast.answer(index, TOOL_BEFORE, name, Band::App, fail_mode, answer);
                records.push(decision.record);
                if decision.stop {
                    break;
                }
            }
            let expected: Vec<Record> = decisions.iter().map(|d| d.record).collect();
            assert_eq!(records, expected, "{sequence:?}");
            assert_eq!(fast.combined(), general.combined(), "{sequence:?}");
        }
    }

    /// I25: an audited answer is recorded as it would be, marked audit, and changes nothing.
    #[test]
    fn audited_answers_are_traced_and_count_as_continue_i25() {
        let name = intern("shadow");
        let mut walk = Fold::new();
        let block = with_code(OutcomeKind::Block, "refund_cap");
        let audited = Fold::audited(TOOL_BEFORE, name, Band::App, FailMode::Closed, block);
        assert!(!audited.stop && !audited.new_best && !audited.accept_modification);
        assert_eq!(
            (
                audited.record.outcome,
                audited.record.code,
                audited.record.audit
            ),
            (OutcomeKind::Block, intern("refund_cap"), true)
        );
        let modified = Fold::audited(TOOL_BEFORE, name, Band::App, FailMode::Closed, MODIFIED);
        assert!(modified.record.modified && !modified.accept_modification);
        let closed = Fold::audited(
            TOOL_BEFORE,
            name,
            Band::App,
            FailMode::Closed,
            failure(FailureKind::Timeout),
        );
        assert_eq!(
            (closed.record.kind, closed.record.outcome, closed.stop),
            (RecordKind::Failure, OutcomeKind::Block, false)
        );
        assert_eq!(resolve_sym(closed.record.code), "middleware_timeout");
        let violated = Fold::violated_audited(
            TOOL_BEFORE,
            name,
            Band::App,
            FailMode::Closed,
            Rule::from_u8(0).unwrap(),
            ContractMode::Strict,
        );
        assert!(violated.record.audit && !violated.stop);
        assert_eq!(violated.record.contract, Rule::from_u8(0).unwrap().as_u8());
        assert!(Fold::continued_audited(TOOL_BEFORE, name, Band::App).audit);
        // The walk itself saw nothing: the hook record is a plain Continue.
        assert_eq!(walk.combined(), Combined::NOTHING);
        let enforced = walk.answer(1, TOOL_BEFORE, name, Band::App, FailMode::Closed, MODIFIED);
        assert!(enforced.accept_modification && !enforced.record.audit);
        assert!(walk.hook_record(TOOL_BEFORE).modified);
    }

    fn resolve_sym(sym: Sym) -> String {
        resolve(sym)
            .map(std::string::ToString::to_string)
            .unwrap_or_default()
    }
}
