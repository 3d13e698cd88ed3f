//! A binding's emit, end to end through the public API: declare, override, register, plan the
//! chain, walk it, trace it. This is the loop `crates/harnessweaver-py` runs around Python calls.

use harnessweaver_core::catalogue::hook_id;
use harnessweaver_core::declaration::{apply_overrides, declare};
use harnessweaver_core::symbol::{intern, resolve, NO_SYM};
use harnessweaver_core::walk::failure_error_sym;
use harnessweaver_core::{
    Answer, Combined, DeclarationInput, FailureKind, OutcomeKind, Overrides, Record, Registry,
    TraceBuf, Walk,
};

/// What a test middleware does when called (the closed vocabulary of the corpus, in small).
#[derive(Clone, Copy)]
enum Does {
    Nothing,
    Modify,
    Block(&'static str),
    Suspend(&'static str),
    Raise(&'static str),
    Late,
}

struct Emitted {
    combined: Combined,
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

fn answer(does: Does) -> Answer {
    let outcome = |kind, modified, code| Answer::Outcome {
        kind,
        modified,
        code,
    };
    match does {
        Does::Nothing => outcome(OutcomeKind::Continue, false, NO_SYM),
        Does::Modify => outcome(OutcomeKind::Continue, true, NO_SYM),
        Does::Block(code) => outcome(OutcomeKind::Block, false, intern(code)),
        Does::Suspend(code) => outcome(OutcomeKind::Suspend, false, intern(code)),
        Does::Raise(ty) => Answer::Failure {
            failure: FailureKind::Exception,
            error: failure_error_sym(FailureKind::Exception, Some(ty)),
        },
        Does::Late => Answer::Failure {
            failure: FailureKind::Timeout,
            error: failure_error_sym(FailureKind::Timeout, None),
        },
    }
}

fn emit(registry: &Registry<Does>, trace: &mut TraceBuf, hook: &str) -> Emitted {
    let hook = hook_id(hook).unwrap();
    let chain = registry.chain(hook);
    let emit = trace.begin_emit();
    let mut walk = Walk::new();
    let (mut event, mut ran) = (Vec::new(), Vec::new());
    for (index, entry) in chain.iter().enumerate() {
        ran.push(entry.decl.name.clone());
        let decl = &entry.decl;
        let decision = walk.answer(
            index,
            hook,
            entry.name,
            decl.band,
            decl.fail_mode,
            answer(entry.payload),
        );
        if decision.accept_modification {
            event.push(decl.name.clone());
        }
        trace.push(Record {
            emit,
            ..decision.record
        });
        if decision.stop {
            break;
        }
    }
    trace.push(Record {
        emit,
        ..walk.hook_record(hook)
    });
    Emitted {
        combined: walk.combined(),
        event,
        ran,
    }
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
    let text = trace.to_jsonl();
    assert_eq!(text.lines().collect::<Vec<_>>(), expected);
    let back = TraceBuf::from_jsonl_str(&text).unwrap();
    assert_eq!(back.records(), trace.records());
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
