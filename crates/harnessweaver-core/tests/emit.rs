//! An emit end to end through the public API: declare, override, register, plan the chain,
//! walk it with the core's `Walk` (the state machine `crates/harnessweaver-py` drives around
//! Python calls), trace it.

use std::sync::Arc;

use harnessweaver_core::catalogue::hook_id;
use harnessweaver_core::contract::{ContractMode, Rule};
use harnessweaver_core::declaration::{apply_overrides, declare};
use harnessweaver_core::symbol::{intern, resolve, NO_SYM};
use harnessweaver_core::trace::Correlation;
use harnessweaver_core::walk::{Ending, Log, Options, Step, Verdict};
use harnessweaver_core::{
    Answer, Combined, DeclarationInput, FailMode, FailureKind, OutcomeKind, Overrides, Record,
    RecordKind, Registry, TraceBuf, Walk,
};

/// What a test middleware does when called (the closed vocabulary of the corpus, in small).
#[derive(Clone, Copy)]
enum Does {
    Nothing,
    Modify,
    Block(&'static str),
    Suspend(&'static str),
    Raise(&'static str),
    /// The host stops waiting at its limit (a timeout).
    Late,
    /// A modification that breaks a hook contract (I14).
    Break,
    /// A Block that carries warnings (I24).
    Warn(&'static str),
}

struct Emitted {
    combined: Combined,
    ending: Ending,
    /// What the host was told to log, in order.
    logs: Vec<Log>,
    /// The event: the names of the middleware whose modification was accepted.
    event: Vec<String>,
    ran: Vec<String>,
}

fn add(registry: &mut Registry<Does>, name: &str, band: &str, fail_mode: &str, does: Does) {
    let hooks = ["tool.before", "tool.after"];
    let input = DeclarationInput {
        name,
        hooks: &hooks,
        band: Some("app"),
        fail_mode: Some(fail_mode),
        timeout: None,
        matcher: None,
        mode: None,
    };
    let decl = declare(&input).unwrap();
    let overrides = Overrides {
        band: Some(band),
        ..Overrides::default()
    };
    registry
        .register(apply_overrides(&decl, &overrides).unwrap(), does)
        .unwrap();
}

fn outcome(kind: OutcomeKind, modified: bool, code: &str) -> Answer {
    Answer::Outcome {
        kind,
        modified,
        code: if code.is_empty() {
            NO_SYM
        } else {
            intern(code)
        },
    }
}

fn rule() -> Rule {
    Rule::parse("tool.before/tool_unchanged").unwrap()
}

/// One emit as a host drives the core's walk: call, hand the answer over, obey the verdict.
fn emit_with(
    registry: &Registry<Does>,
    trace: &mut TraceBuf,
    hook: &str,
    options: Options,
) -> Emitted {
    let chain = registry.chain(options.hook);
    let _ = hook;
    let mut walk = Walk::new(chain, options);
    let (mut event, mut ran, mut logs) = (Vec::new(), Vec::new(), Vec::new());
    let mut obey = |verdict: Verdict, name: &str, event: &mut Vec<String>| {
        if verdict.accept {
            event.push(name.to_string());
        }
        logs.extend(verdict.log);
    };
    loop {
        let (name, does) = match walk.next() {
            Step::Call(entry) => (entry.decl.name.clone(), entry.payload),
            Step::Skipped(verdict) => {
                obey(verdict, "", &mut event);
                continue;
            }
            Step::Done => break,
        };
        ran.push(name.clone());
        let verdict = match does {
            Does::Nothing => walk.continued().unwrap_or_default(),
            Does::Raise(ty) => walk.raised(FailureKind::Exception, Some(ty)),
            Does::Late => walk.timed_out(),
            does => {
                if let Some(late) = walk.returned() {
                    late
                } else {
                    let (answer, broken, warnings) = match does {
                        Does::Modify => (outcome(OutcomeKind::Continue, true, ""), None, None),
                        Does::Block(code) => (outcome(OutcomeKind::Block, false, code), None, None),
                        Does::Suspend(code) => {
                            (outcome(OutcomeKind::Suspend, false, code), None, None)
                        }
                        Does::Break => (
                            outcome(OutcomeKind::Continue, true, ""),
                            walk.contracts().map(|_| rule()),
                            None,
                        ),
                        Does::Warn(text) => (
                            outcome(OutcomeKind::Block, false, "warned"),
                            None,
                            harnessweaver_core::warning::keep([text]),
                        ),
                        _ => unreachable!(),
                    };
                    walk.answer(answer, broken, warnings)
                }
            }
        };
        obey(verdict, &name, &mut event);
    }
    let ending = walk.finish(trace, None);
    Emitted {
        combined: walk.combined(),
        ending,
        logs,
        event,
        ran,
    }
}

fn emit(registry: &Registry<Does>, trace: &mut TraceBuf, hook: &str) -> Emitted {
    let options = Options {
        emit: trace.begin_emit(),
        ..Options::new(hook_id(hook).unwrap(), Arc::new(Correlation::NONE))
    };
    emit_with(registry, trace, hook, options)
}

/// `trace`'s records with their timings zeroed: what a test may pin (no wall-clock asserts).
fn untimed(trace: &TraceBuf) -> TraceBuf {
    let mut copy = TraceBuf::new();
    for record in trace.records() {
        copy.push(Record {
            t_ns: 0,
            duration_ns: 0,
            ..record
        });
    }
    copy
}

/// Registered innermost-first so that band order and registration order disagree.
fn onion() -> Registry<Does> {
    let mut registry = Registry::new();
    add(&mut registry, "task_mw", "task", "closed", Does::Nothing);
    add(&mut registry, "app_mw", "app", "closed", Does::Nothing);
    add(&mut registry, "tracer", "baseline", "closed", Does::Nothing);
    add(
        &mut registry,
        "platform_mw",
        "platform",
        "closed",
        Does::Nothing,
    );
    registry
}

#[test]
fn a_baseline_tracer_wraps_everything_in_and_out_rules_1_2() {
    let registry = onion();
    let mut trace = TraceBuf::new();
    let inbound = emit(&registry, &mut trace, "tool.before").ran;
    let outbound = emit(&registry, &mut trace, "tool.after").ran;
    assert_eq!(inbound, ["tracer", "platform_mw", "app_mw", "task_mw"]);
    assert_eq!(outbound, ["task_mw", "app_mw", "platform_mw", "tracer"]);
    assert_eq!(trace.len(), 10);
}

#[test]
fn modifications_made_before_a_block_stay_in_the_event_rulings_6_7() {
    let mut registry = Registry::new();
    add(&mut registry, "redact", "platform", "closed", Does::Modify);
    add(&mut registry, "stamp", "app", "open", Does::Modify);
    add(
        &mut registry,
        "cap",
        "app",
        "closed",
        Does::Block("refund_cap"),
    );
    add(&mut registry, "never", "task", "closed", Does::Modify);
    let emitted = emit(&registry, &mut TraceBuf::new(), "tool.before");
    assert_eq!(emitted.ran, ["redact", "stamp", "cap"]);
    assert_eq!(emitted.event, ["redact", "stamp"]);
    assert_eq!(emitted.combined.outcome, OutcomeKind::Block);
    assert_eq!(resolve(emitted.combined.code), Some("refund_cap"));
}

#[test]
fn an_open_failure_keeps_the_event_and_the_chain_going_ruling_12() {
    let mut registry = Registry::new();
    add(&mut registry, "redact", "app", "closed", Does::Modify);
    add(
        &mut registry,
        "flaky",
        "app",
        "open",
        Does::Raise("KeyError"),
    );
    add(
        &mut registry,
        "wait",
        "task",
        "closed",
        Does::Suspend("weekend"),
    );
    let emitted = emit(&registry, &mut TraceBuf::new(), "tool.before");
    assert_eq!(emitted.ran, ["redact", "flaky", "wait"]);
    assert_eq!(emitted.event, ["redact"]);
    assert_eq!(emitted.combined.index, Some(2));
    assert_eq!(emitted.combined.outcome, OutcomeKind::Suspend);
}

#[test]
fn the_trace_of_a_closed_failure_reads_as_i8_says() {
    let mut registry = Registry::new();
    add(&mut registry, "tracer", "baseline", "closed", Does::Late);
    add(&mut registry, "guard", "app", "closed", Does::Nothing);
    let mut trace = TraceBuf::new();
    emit(&registry, &mut trace, "model.before");
    emit(&registry, &mut trace, "tool.after");
    let expected = [
        r#"{"emit":1,"hook":"model.before","kind":"hook","outcome":"continue","modified":false,"t_ns":0,"duration_ns":0}"#,
        r#"{"emit":2,"hook":"tool.after","kind":"outcome","middleware":"guard","band":"app","outcome":"continue","modified":false,"t_ns":0,"duration_ns":0}"#,
        r#"{"emit":2,"hook":"tool.after","kind":"failure","middleware":"tracer","band":"baseline","outcome":"block","modified":false,"code":"middleware_timeout","failure":"timeout","error":"MiddlewareTimeout","fail_mode":"closed","t_ns":0,"duration_ns":0}"#,
        r#"{"emit":2,"hook":"tool.after","kind":"hook","outcome":"block","modified":false,"code":"middleware_timeout","t_ns":0,"duration_ns":0}"#,
    ];
    let untimed = untimed(&trace);
    let text = untimed.to_jsonl();
    assert_eq!(text.lines().collect::<Vec<_>>(), expected);
    let back = TraceBuf::from_jsonl_str(&text).unwrap();
    assert_eq!(back.records(), untimed.records());
    // The walk times every record: a middleware's start is never before its emit's.
    let records = trace.records();
    assert!(records
        .windows(2)
        .all(|w| w[0].emit != w[1].emit || w[0].t_ns <= w[1].t_ns));
}

#[test]
fn registry_changes_show_in_the_next_emit_only_ruling_3_i11() {
    let mut registry = onion();
    let hook = hook_id("tool.before").unwrap();
    let in_flight = registry.chain(hook);
    registry.unregister("app_mw").unwrap();
    add(&mut registry, "late", "app", "closed", Does::Nothing);
    let old: Vec<&str> = in_flight.iter().map(|e| e.decl.name.as_str()).collect();
    assert_eq!(old, ["tracer", "platform_mw", "app_mw", "task_mw"]);
    let next = emit(&registry, &mut TraceBuf::new(), "tool.before").ran;
    assert_eq!(next, ["tracer", "platform_mw", "late", "task_mw"]);
}

fn registry_of(mws: &[(&str, &str, &str, Does)]) -> Registry<Does> {
    let mut registry = Registry::new();
    for &(name, band, fail_mode, does) in mws {
        add(&mut registry, name, band, fail_mode, does);
    }
    registry
}

fn options(trace: &mut TraceBuf) -> Options {
    Options {
        emit: trace.begin_emit(),
        ..Options::new(hook_id("tool.before").unwrap(), Arc::new(Correlation::NONE))
    }
}

#[test]
fn a_closed_failure_ends_as_a_fresh_block_with_its_reason_i6() {
    let registry = registry_of(&[
        ("stamp", "app", "closed", Does::Modify),
        ("boom", "app", "closed", Does::Raise("KeyError")),
        ("never", "task", "closed", Does::Nothing),
    ]);
    let emitted = emit(&registry, &mut TraceBuf::new(), "tool.before");
    assert_eq!(emitted.ran, ["stamp", "boom"]);
    let Ending::Block { reason, code } = emitted.ending else {
        panic!("{:?}", emitted.ending);
    };
    assert!(reason.contains("boom"), "{reason}");
    assert_eq!(resolve(code), Some("middleware_error"));
    assert!(emitted.logs.is_empty());
}

#[test]
fn an_open_failure_is_logged_and_a_plain_chain_ends_as_continue_ruling_12() {
    let registry = registry_of(&[
        ("flaky", "app", "open", Does::Raise("KeyError")),
        ("fine", "task", "closed", Does::Nothing),
    ]);
    let emitted = emit(&registry, &mut TraceBuf::new(), "tool.before");
    assert_eq!(emitted.ending, Ending::Continue);
    let [Log::FailedOpen { failure, error }] = emitted.logs[..] else {
        panic!("{:?}", emitted.logs);
    };
    assert_eq!(
        (failure, resolve(error)),
        (FailureKind::Exception, Some("KeyError"))
    );
}

#[test]
fn a_spent_chain_deadline_skips_every_middleware_i26() {
    let registry = registry_of(&[
        ("open_one", "platform", "open", Does::Block("never")),
        ("closed_one", "app", "closed", Does::Block("never")),
        ("after", "task", "closed", Does::Block("never")),
    ]);
    let mut trace = TraceBuf::new();
    let spent = Options {
        budget_ns: Some(0),
        ..options(&mut trace)
    };
    let emitted = emit_with(&registry, &mut trace, "tool.before", spent);
    assert!(
        emitted.ran.is_empty(),
        "nothing is called: {:?}",
        emitted.ran
    );
    let Ending::Block { code, .. } = emitted.ending else {
        panic!("{:?}", emitted.ending);
    };
    assert_eq!(resolve(code), Some("chain_deadline"));
    let failures: Vec<_> = trace
        .records()
        .iter()
        .filter(|r| r.kind == RecordKind::Failure)
        .map(|r| (resolve(r.middleware), r.failure))
        .collect();
    // The closed skip blocks and stops the chain (ruling 11): "after" is not even skipped.
    assert_eq!(
        failures,
        [
            (Some("open_one"), FailureKind::Skipped as u8),
            (Some("closed_one"), FailureKind::Skipped as u8)
        ]
    );
    assert!(matches!(
        emitted.logs[..],
        [Log::FailedOpen {
            failure: FailureKind::Skipped,
            ..
        }]
    ));
}

#[test]
fn a_broken_contract_warns_or_fails_by_the_walks_mode_i14() {
    let registry = registry_of(&[
        ("rewriter", "app", "closed", Does::Break),
        ("next", "task", "closed", Does::Nothing),
    ]);
    // No contracts on the bus: the host is not asked for a rule and the modification stands.
    let plain = emit(&registry, &mut TraceBuf::new(), "tool.before");
    assert_eq!((plain.event.len(), plain.logs.len()), (1, 0));
    let mut trace = TraceBuf::new();
    let warn = Options {
        contracts: Some(ContractMode::Warn),
        ..options(&mut trace)
    };
    let warned = emit_with(&registry, &mut trace, "tool.before", warn);
    assert_eq!(warned.event, ["rewriter"]);
    assert_eq!(warned.logs, [Log::ContractWarning(rule())]);
    assert_eq!(warned.ending, Ending::Kept);
    assert_eq!(trace.records()[0].contract, rule().as_u8());
    let mut trace = TraceBuf::new();
    let strict = Options {
        contracts: Some(ContractMode::Strict),
        ..options(&mut trace)
    };
    let failed = emit_with(&registry, &mut trace, "tool.before", strict);
    assert!(failed.event.is_empty(), "a failure never changes the event");
    assert_eq!(failed.ran, ["rewriter"]);
    let Ending::Block { code, .. } = failed.ending else {
        panic!("{:?}", failed.ending);
    };
    assert_eq!(resolve(code), Some("contract_violation"));
}

#[test]
fn warnings_go_to_the_record_and_the_result_i24() {
    let registry = registry_of(&[("careful", "app", "closed", Does::Warn("mind the cap"))]);
    let mut trace = TraceBuf::new();
    let hook = hook_id("tool.before").unwrap();
    let chain = registry.chain(hook);
    let mut walk = Walk::new(chain, options(&mut trace));
    assert!(matches!(walk.next(), Step::Call(entry) if entry.decl.name == "careful"));
    assert!(walk.returned().is_none());
    let kept = harnessweaver_core::warning::keep(["mind the cap"]);
    let verdict = walk.answer(outcome(OutcomeKind::Block, false, "cap"), None, kept);
    assert!(verdict.keep);
    assert!(matches!(walk.next(), Step::Done));
    assert_eq!(walk.finish(&mut trace, None), Ending::Kept);
    let warnings = walk.warnings();
    assert_eq!(warnings.len(), 1);
    assert_eq!((warnings[0].0, &*warnings[0].1[0]), (0, "mind the cap"));
    assert!(trace.to_jsonl().contains("mind the cap"));
}

#[test]
fn an_audited_middleware_is_traced_and_changes_nothing_i25() {
    let mut registry = Registry::new();
    let hooks = ["tool.before"];
    let input = DeclarationInput {
        name: "shadow",
        hooks: &hooks,
        band: Some("app"),
        fail_mode: Some("closed"),
        timeout: None,
        matcher: None,
        mode: Some("audit"),
    };
    registry
        .register(declare(&input).unwrap(), Does::Block("shadow_cap"))
        .unwrap();
    let mut trace = TraceBuf::new();
    let emitted = emit(&registry, &mut trace, "tool.before");
    assert_eq!(emitted.ending, Ending::Continue);
    let records = trace.records();
    assert!(records[0].audit && records[0].outcome == OutcomeKind::Block);
    assert_eq!(records[1].outcome, OutcomeKind::Continue);
}

#[test]
fn the_host_waits_no_longer_than_the_limit_ruling_10() {
    let mut registry = Registry::new();
    let hooks = ["tool.before"];
    let input = DeclarationInput {
        name: "slow",
        hooks: &hooks,
        band: Some("app"),
        fail_mode: Some("open"),
        timeout: Some(harnessweaver_core::TimeoutInput::Text("2s")),
        matcher: None,
        mode: None,
    };
    registry
        .register(declare(&input).unwrap(), Does::Late)
        .unwrap();
    let mut trace = TraceBuf::new();
    let mut walk = Walk::new(
        registry.chain(hook_id("tool.before").unwrap()),
        options(&mut trace),
    );
    assert!(walk.remaining().is_infinite(), "no middleware started yet");
    assert!(matches!(walk.next(), Step::Call(_)));
    assert_eq!((walk.index(), walk.limit_ns()), (0, Some(2_000_000_000)));
    assert!(walk.remaining() <= 2.0);
    let verdict = walk.timed_out();
    assert_eq!(
        verdict.log,
        Some(Log::FailedOpen {
            failure: FailureKind::Timeout,
            error: intern("MiddlewareTimeout")
        })
    );
    assert!(matches!(walk.next(), Step::Done));
    assert_eq!(walk.finish(&mut trace, None), Ending::Continue);
    assert_eq!(trace.records()[0].failure, FailureKind::Timeout as u8);
    let _ = FailMode::Open;
}
