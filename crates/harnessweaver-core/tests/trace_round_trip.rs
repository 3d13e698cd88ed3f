//! Whole traces, recorded the way a binding records them, survive JSON Lines exactly (I8).

use harnessweaver_core::symbol::{intern, NO_SYM};
use harnessweaver_core::trace::now_ns;
use harnessweaver_core::walk::failure_error_sym;
use harnessweaver_core::{
    Answer, Band, FailMode, FailureKind, Fold, OutcomeKind, Record, TraceBuf,
};

/// A varied answer: every outcome, modified or not, with and without codes, and every failure.
fn answer(i: usize) -> Answer {
    let codes = [NO_SYM, intern("refund_cap"), intern("weekend \"quoted\" é")];
    let outcome = |kind, modified| Answer::Outcome {
        kind,
        modified,
        code: codes[i % 3],
    };
    match i % 9 {
        0 => outcome(OutcomeKind::Continue, false),
        1 => outcome(OutcomeKind::Continue, true),
        2 => outcome(OutcomeKind::Retry, false),
        3 => outcome(OutcomeKind::Escalate, false),
        4 => outcome(OutcomeKind::Suspend, false),
        5 => outcome(OutcomeKind::Block, false),
        _ => {
            let failure = FailureKind::ALL[i % 4];
            let error = failure_error_sym(failure, Some("ValueError"));
            Answer::Failure { failure, error }
        }
    }
}

/// At least `size` records: emits of 0 to 4 middleware on every hook point, in every band
/// and fail mode, each followed by its hook record.
fn recorded(size: usize) -> TraceBuf {
    let names = ["guard", "acme.cap", "_t9", "tracer"].map(intern);
    let mut trace = TraceBuf::new();
    let mut i = 0usize;
    while trace.len() < size {
        let emit = trace.begin_emit();
        let hook = u8::try_from(emit % 8).unwrap();
        let mut walk = Fold::new();
        for index in 0..i % 5 {
            let band = Band::ALL[i % 4];
            let open = band != Band::Baseline && i % 2 == 1;
            let fail_mode = if open {
                FailMode::Open
            } else {
                FailMode::Closed
            };
            let decision = walk.answer(index, hook, names[i % 4], band, fail_mode, answer(i));
            let duration_ns = u64::try_from(i % 1000).unwrap();
            trace.push(Record {
                emit,
                t_ns: now_ns(),
                duration_ns,
                ..decision.record
            });
            i += 1;
            if decision.stop {
                break;
            }
        }
        trace.push(Record {
            emit,
            t_ns: now_ns(),
            ..walk.hook_record(hook)
        });
        i += 1;
    }
    trace
}

fn round_trip(size: usize) {
    let trace = recorded(size);
    let mut bytes = Vec::new();
    trace.write_jsonl(&mut bytes).unwrap();
    let mut back = TraceBuf::read_jsonl(&bytes[..]).unwrap();
    assert_eq!(back.len(), trace.len());
    // Compared as a whole rather than with assert_eq!, which would print a million records.
    assert!(back.records() == trace.records(), "the trace changed");
    let mut original = trace;
    assert_eq!(back.begin_emit(), original.begin_emit());
}

#[test]
fn ten_thousand_records_round_trip() {
    round_trip(10_000);
}

#[test]
#[ignore = "slow in debug builds: a million records"]
fn a_million_records_round_trip() {
    round_trip(1_000_000);
}
