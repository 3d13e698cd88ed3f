//! Criterion benchmarks of the core alone (no Python): planning, the walk, recording.
//!
//! ```sh
//! cargo bench -p harnessweaver-core --bench core -- --warm-up-time 1 --measurement-time 2
//! ```
//!
//! Every bench id is `<group>/<bench>/<n>` (for example `planning/register/8`,
//! `walk/continued/8`, `recording/emit/8`), so a script reads the median, in ns per
//! iteration, from `target/criterion/<group>/<bench>/<n>/new/estimates.json`
//! (`median.point_estimate`).
//!
//! Each bench checks what it computed: once in full before it is timed (chain order against an
//! independent sort, combined outcomes, a byte-exact round trip), and cheaply (lengths, outcome
//! kinds) on every timed iteration, so a broken core fails the bench instead of timing garbage.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, SamplingMode};
use harnessweaver_core::catalogue::hook_id;
use harnessweaver_core::declaration::declare;
use harnessweaver_core::symbol::{intern, resolve, NO_SYM};
use harnessweaver_core::trace::Correlation;
use harnessweaver_core::walk::{Ending, Options, Step};
use harnessweaver_core::{
    Answer, Chain, Declaration, DeclarationInput, Direction, FailMode, FailureKind, HookId,
    OutcomeKind, Record, RecordKind, Registry, TimeoutInput, TraceBuf, Walk, CATALOGUE,
};

// ---------------------------------------------------------------------------------------------
// Shared inputs

fn hook(name: &str) -> HookId {
    hook_id(name).expect("a catalogue hook point")
}

/// Registration order deliberately disagrees with band order, so planning has to sort.
const BANDS: [&str; 4] = ["task", "app", "baseline", "platform"];

/// The name of the `i`-th bench middleware.
fn mw_name(i: usize) -> String {
    format!("bench.mw{i}")
}

/// `n` declarations as `@hw.middleware` would make them: every one on `tool.before` (inbound)
/// and `tool.after` (outbound) plus one more hook point in turn, bands in rotation, every
/// other one with a 2 s timeout, some failing open (never in the baseline band, R2).
fn declarations(n: usize) -> Vec<Declaration> {
    (0..n)
        .map(|i| {
            let name = mw_name(i);
            let band = BANDS[i % BANDS.len()];
            let hooks = [
                "tool.before",
                "tool.after",
                CATALOGUE[i % CATALOGUE.len()].name,
            ];
            let fail_mode = if band != "baseline" && i % 3 == 0 {
                "open"
            } else {
                "closed"
            };
            let input = DeclarationInput {
                name: &name,
                hooks: &hooks,
                band: Some(band),
                fail_mode: Some(fail_mode),
                timeout: (i % 2 == 0).then_some(TimeoutInput::Text("2s")),
                matcher: None,
                mode: None,
            };
            declare(&input).expect("a valid declaration")
        })
        .collect()
}

/// Registers every declaration (payload: its index) into a fresh registry.
fn register_all(decls: Vec<Declaration>) -> Registry<usize> {
    let mut registry = Registry::new();
    for (index, decl) in decls.into_iter().enumerate() {
        registry.register(decl, index).expect("a new name");
    }
    registry
}

/// The full check of a registry's plans against an independent oracle: for every hook point,
/// the declarations that name it, stably sorted by band (registration order breaks ties),
/// reversed for outbound hook points; and `has_timeouts` as any of them declaring one.
fn check_plans(registry: &Registry<usize>, decls: &[Declaration]) {
    assert_eq!(registry.len(), decls.len());
    for (point, id) in CATALOGUE.iter().zip(0..) {
        let mut expected: Vec<&Declaration> =
            decls.iter().filter(|d| d.hooks.contains(&id)).collect();
        expected.sort_by_key(|d| d.band); // stable: registration order within a band
        if point.direction == Direction::Outbound {
            expected.reverse();
        }
        let expected: Vec<&str> = expected.iter().map(|d| d.name.as_str()).collect();
        let chain = registry.chain(id);
        let planned: Vec<&str> = chain.iter().map(|e| e.decl.name.as_str()).collect();
        assert_eq!(planned, expected, "chain of {}", point.name);
        let timed = decls
            .iter()
            .any(|d| d.hooks.contains(&id) && d.timeout_ns.is_some());
        assert_eq!(
            registry.has_timeouts(id),
            timed,
            "has_timeouts({})",
            point.name
        );
    }
}

// ---------------------------------------------------------------------------------------------
// (1) planning: register N declarations and plan a chain, register and unregister one more on
// a full registry (each change marks its hook points stale; the next ask plans one), and the
// per-emit plan lookup.

fn planning(c: &mut Criterion) {
    let tool_before = hook("tool.before");
    let tool_after = hook("tool.after");
    let mut group = c.benchmark_group("planning");
    // 100,000: registering costs O(log n) a middleware, and a chain is planned once, on first
    // ask (issue 13); the old replan of every chain at each registration took minutes there.
    for n in [8_usize, 32, 1000, 100_000] {
        let decls = declarations(n);
        check_plans(&register_all(decls.clone()), &decls);
        if n >= 1000 {
            // Up to tens of milliseconds per registry: ten flat samples fit the measurement time.
            group.sample_size(10).sampling_mode(SamplingMode::Flat);
        } else {
            group.sample_size(100).sampling_mode(SamplingMode::Auto);
        }

        // From an empty registry to N registered and the chain of `tool.before` planned.
        group.bench_with_input(BenchmarkId::new("register", n), &decls, |b, decls| {
            b.iter_batched(
                || decls.clone(),
                |decls| {
                    let registry = register_all(black_box(decls));
                    assert_eq!(registry.chain(tool_before).len(), n);
                    registry
                },
                BatchSize::SmallInput,
            );
        });

        // One more middleware (baseline, so it lands inside the chains) registered and
        // unregistered again on a registry of N, the chain of `tool.after` planned in between
        // (the other hook points it touched are planned by `check_plans`, not here).
        let mut registry = register_all(decls.clone());
        let extra_input = DeclarationInput {
            name: "bench.extra",
            hooks: &["tool.before", "tool.after", "model.before"],
            band: Some("baseline"),
            fail_mode: Some("closed"),
            timeout: Some(TimeoutInput::Text("2s")),
            matcher: None,
            mode: None,
        };
        let extra = declare(&extra_input).expect("a valid declaration");
        let mut with_extra = decls.clone();
        with_extra.push(extra.clone());
        registry.register(extra.clone(), n).expect("a new name");
        check_plans(&registry, &with_extra);
        registry.unregister("bench.extra").expect("registered");
        check_plans(&registry, &decls);
        group.bench_with_input(BenchmarkId::new("replan", n), &extra, |b, extra| {
            b.iter_batched(
                || extra.clone(),
                |extra| {
                    let entry = registry.register(black_box(extra), n).expect("a new name");
                    assert_eq!(registry.chain(tool_after).len(), n + 1);
                    registry.unregister("bench.extra").expect("registered");
                    entry
                },
                BatchSize::SmallInput,
            );
        });
        check_plans(&registry, &decls);

        // What every emit asks of the registry: its chain (an `Arc` clone) and whether to
        // read clocks. Independent of N; measured at 32 only.
        if n == 32 {
            group.bench_function(BenchmarkId::new("chain", n), |b| {
                b.iter(|| {
                    let hook = black_box(tool_before);
                    let chain = registry.chain(hook);
                    let timed = registry.has_timeouts(hook);
                    assert!(chain.len() == n && timed);
                    chain
                });
            });
        }
    }
    group.finish();
}

// ---------------------------------------------------------------------------------------------
// (2) walk: the core's `Walk` driven along a planned chain of N middleware, as a host drives
// it (clock reads, late checks, the fold, records buffered; the trace write is in (3)).

const TOOL_BEFORE: &str = "tool.before";

const PLAIN: Answer = Answer::Outcome {
    kind: OutcomeKind::Continue,
    modified: false,
    code: NO_SYM,
};
const MODIFIED: Answer = Answer::Outcome {
    kind: OutcomeKind::Continue,
    modified: true,
    code: NO_SYM,
};

/// The answers of one mix, in run order (the walk stops at the first Block).
#[derive(Clone, Copy)]
enum Mix {
    /// Every middleware answers a plain Continue through `Walk::answer` (the general path).
    Plain,
    /// A modified Continue first, an open failure (a timeout) at N/4, a Block with a code at
    /// the middle (N/2): the Block wins and stops the chain.
    Mixed,
    /// A closed failure (an exception) at the middle: a Block `middleware_error`, and stop.
    Failure,
}

/// What a bench middleware does when the walk calls it.
#[derive(Clone, Copy)]
enum Does {
    /// Returns `None`: [`Walk::continued`].
    Nothing,
    Answers(Answer),
    /// The host stopped waiting: [`Walk::timed_out`].
    TimesOut,
    Raises,
}

fn behaviour(mix: Mix, n: usize) -> Vec<(FailMode, Does)> {
    let block = Answer::Outcome {
        kind: OutcomeKind::Block,
        modified: false,
        code: intern("refund_cap"),
    };
    (0..n)
        .map(|i| match mix {
            Mix::Mixed if i == n / 2 => (FailMode::Closed, Does::Answers(block)),
            Mix::Mixed if i == 0 => (FailMode::Closed, Does::Answers(MODIFIED)),
            Mix::Mixed if i == n / 4 => (FailMode::Open, Does::TimesOut),
            Mix::Failure if i == n / 2 => (FailMode::Closed, Does::Raises),
            Mix::Plain | Mix::Mixed | Mix::Failure => (FailMode::Closed, Does::Answers(PLAIN)),
        })
        .collect()
}

/// The planned chain of `behaviour` on tool.before, in its order (bands ascend with `i`).
fn planned(behaviour: &[(FailMode, Does)]) -> Chain<Does> {
    let mut registry = Registry::new();
    let n = behaviour.len();
    for (i, &(fail_mode, does)) in behaviour.iter().enumerate() {
        let name = mw_name(i);
        let band = ["baseline", "platform", "app", "task"][i * 4 / n.max(1)];
        let fail_mode = if fail_mode == FailMode::Open {
            "open"
        } else {
            "closed"
        };
        let input = DeclarationInput {
            name: &name,
            hooks: &[TOOL_BEFORE],
            band: Some(band),
            fail_mode: Some(fail_mode),
            timeout: None,
            matcher: None,
            mode: None,
        };
        registry.register(declare(&input).unwrap(), does).unwrap();
    }
    registry.chain(hook(TOOL_BEFORE))
}

/// Drives the real walk along `chain` as a host does; returns it unfinished, how many
/// middleware it called and how many modifications it accepted.
fn drive(chain: &Chain<Does>) -> (Walk<Does>, usize, usize) {
    let options = Options::new(hook(TOOL_BEFORE), Arc::new(Correlation::NONE));
    let mut walk = Walk::new(chain.clone(), options);
    let (mut ran, mut accepted) = (0, 0);
    loop {
        let does = match walk.next() {
            Step::Call(entry) => entry.payload,
            Step::Skipped(_) => continue,
            Step::Done => break,
        };
        ran += 1;
        let verdict = match does {
            Does::Nothing => walk.continued().unwrap_or_default(),
            Does::TimesOut => walk.timed_out(),
            Does::Raises => walk.raised(FailureKind::Exception, Some("ValueError")),
            Does::Answers(answer) => match walk.returned() {
                Some(late) => late,
                None => walk.answer(answer, None, None),
            },
        };
        accepted += usize::from(black_box(verdict).accept);
    }
    (walk, ran, accepted)
}

fn walking(c: &mut Criterion) {
    let mut group = c.benchmark_group("walk");
    for n in [1_usize, 8, 32] {
        // The common case: every middleware answers a plain Continue (`Walk::continued`).
        let chain = planned(&vec![(FailMode::Closed, Does::Nothing); n]);
        {
            let (mut walk, ran, _) = drive(&chain);
            assert_eq!(ran, n);
            let combined = walk.combined();
            assert_eq!(
                (combined.index, combined.outcome, combined.modified),
                (Some(0), OutcomeKind::Continue, false)
            );
            let mut trace = TraceBuf::new();
            assert_eq!(walk.finish(&mut trace, None), Ending::Continue);
            let records = trace.records();
            assert_eq!(records.len(), n + 1);
            assert_eq!(resolve(records[0].middleware), Some(mw_name(0).as_str()));
            assert_eq!(records[n].kind, RecordKind::Hook);
        }
        group.bench_with_input(BenchmarkId::new("continued", n), &chain, |b, chain| {
            b.iter(|| {
                let (walk, ran, _) = drive(black_box(chain));
                assert!(ran == n && walk.combined().outcome == OutcomeKind::Continue);
                walk
            });
        });

        for (label, mix, expected) in [
            // (combined outcome, its index, its code, answers taken, modifications accepted)
            ("answer", Mix::Plain, (OutcomeKind::Continue, 0, None, n, 0)),
            (
                "mixed",
                Mix::Mixed,
                (
                    OutcomeKind::Block,
                    n / 2,
                    Some("refund_cap"),
                    n / 2 + 1,
                    usize::from(n > 1),
                ),
            ),
            (
                "failure",
                Mix::Failure,
                (
                    OutcomeKind::Block,
                    n / 2,
                    Some("middleware_error"),
                    n / 2 + 1,
                    0,
                ),
            ),
        ] {
            let chain = planned(&behaviour(mix, n));
            let (kind, index, code, ran, accepted) = expected;
            let (mut walk, took, modified) = drive(&chain);
            let combined = walk.combined();
            assert_eq!(
                (combined.outcome, combined.index),
                (kind, Some(index)),
                "{label}/{n}"
            );
            assert_eq!(resolve(combined.code), code, "{label}/{n}");
            assert_eq!((took, modified), (ran, accepted), "{label}/{n}");
            let mut trace = TraceBuf::new();
            walk.finish(&mut trace, None);
            let hook_record = trace.records()[took];
            assert_eq!(
                (hook_record.kind, hook_record.outcome, hook_record.code),
                (RecordKind::Hook, kind, combined.code)
            );
            group.bench_with_input(BenchmarkId::new(label, n), &chain, |b, chain| {
                b.iter(|| {
                    let (walk, took, _) = drive(black_box(chain));
                    assert!(walk.combined().outcome == kind && took == ran);
                    walk
                });
            });
        }
    }
    group.finish();
}

// ---------------------------------------------------------------------------------------------
// (3) recording: records pushed per emit, the JSON Lines round trip, memory per record.

/// One emit's records as the walk makes them: N middleware records (the last a
/// closed-failure Block, a timeout) and the hook record, timed.
fn emit_records(n: usize) -> (Vec<Record>, Record) {
    let mut behaviour = behaviour(Mix::Plain, n);
    if let Some(last) = behaviour.last_mut() {
        *last = (FailMode::Closed, Does::TimesOut);
    }
    let (mut walk, _, _) = drive(&planned(&behaviour));
    let mut trace = TraceBuf::new();
    walk.finish(&mut trace, None);
    let mut records = trace.records();
    let hook_record = records.pop().expect("the hook record");
    (records, hook_record)
}

/// `total` records in emits of 8 middleware records and a hook record, as a long run leaves.
fn long_trace(total: usize) -> TraceBuf {
    let (records, hook_record) = emit_records(8);
    let mut trace = TraceBuf::new();
    while trace.len() < total {
        let emit = trace.begin_emit();
        for record in records
            .iter()
            .chain([&hook_record])
            .take(total - trace.len())
        {
            trace.push(Record { emit, ..*record });
        }
    }
    trace
}

/// Emits per batch in `recording/emit`: each batch starts a fresh trace (untimed), so memory
/// stays bounded and the cost includes the trace's amortised growth.
const EMITS_PER_TRACE: u64 = 10_000;

/// Times `iters` emits of `per_emit`, one fresh trace per batch of [`EMITS_PER_TRACE`].
fn time_emits(iters: u64, per_emit: usize, mut emit: impl FnMut(&mut TraceBuf)) -> Duration {
    let mut total = Duration::ZERO;
    let mut left = iters;
    while left > 0 {
        let batch = left.min(EMITS_PER_TRACE);
        let mut trace = TraceBuf::new();
        let start = Instant::now();
        for _ in 0..batch {
            emit(&mut trace);
        }
        total += start.elapsed();
        let batch_len = usize::try_from(batch).expect("a batch fits in usize");
        assert_eq!(trace.len(), batch_len * per_emit);
        assert_eq!(trace.emits(), batch);
        left -= batch;
    }
    total
}

fn recording(c: &mut Criterion) {
    // What a trace stores a record in (`trace/packed.rs`); a `Record` is the walk's in-flight
    // form (48 bytes since emit ordinals are 64-bit, I19) and is never stored.
    let record_bytes = harnessweaver_core::trace::RECORD_BYTES;
    println!("recording: a stored record = {record_bytes} bytes (target: <= 40)");
    assert!(
        record_bytes <= 40,
        "a trace record takes {record_bytes} bytes"
    );

    let mut group = c.benchmark_group("recording");
    let n = 8;
    let (records, hook_record) = emit_records(n);
    assert_eq!(records.len(), n);
    assert_eq!(records.last().map(|r| r.kind), Some(RecordKind::Failure));
    assert_eq!(hook_record.outcome, OutcomeKind::Block);

    // Per emit: number it, push its 8 middleware records as they come, then the hook record.
    group.bench_function(BenchmarkId::new("emit", n), |b| {
        let records = black_box(&records);
        b.iter_custom(|iters| {
            time_emits(iters, n + 1, |trace| {
                let emit = trace.begin_emit();
                for record in records {
                    trace.push(Record { emit, ..*record });
                }
                trace.push(Record {
                    emit,
                    ..hook_record
                });
            })
        });
    });

    // The same records appended in one go (`TraceBuf::extend`), as a binding that gathers an
    // emit's records first.
    group.bench_function(BenchmarkId::new("extend", n), |b| {
        let records = black_box(&records);
        b.iter_custom(|iters| {
            time_emits(iters, n + 1, |trace| {
                let emit = trace.begin_emit();
                let mut batch = [hook_record; 9];
                for (slot, record) in batch.iter_mut().zip(records) {
                    *slot = *record;
                }
                for slot in &mut batch {
                    slot.emit = emit;
                }
                trace.extend(&batch);
            })
        });
    });

    // JSON Lines of a 100,000-record trace: written, read back, and both.
    let total = 100_000;
    let trace = long_trace(total);
    let text = trace.to_jsonl();
    let back = TraceBuf::from_jsonl_str(&text).expect("a valid trace");
    assert_eq!(
        back.records(),
        trace.records(),
        "the round trip changes nothing"
    );
    assert_eq!(back.emits(), trace.emits());
    assert_eq!(text.lines().count(), total);
    println!(
        "recording: {total} records = {} bytes in memory ({record_bytes} per record), {} bytes \
         of JSON Lines ({} per record)",
        total * record_bytes,
        text.len(),
        text.len() / total,
    );
    group.sample_size(10).sampling_mode(SamplingMode::Flat);
    let bytes = text.len();
    group.bench_function(BenchmarkId::new("to_jsonl", total), |b| {
        b.iter_with_large_drop(|| {
            let text = black_box(&trace).to_jsonl();
            assert_eq!(text.len(), bytes);
            text
        });
    });
    group.bench_function(BenchmarkId::new("from_jsonl", total), |b| {
        b.iter_with_large_drop(|| {
            let back = TraceBuf::from_jsonl_str(black_box(&text)).expect("a valid trace");
            assert_eq!(back.len(), total);
            back
        });
    });
    group.bench_function(BenchmarkId::new("roundtrip", total), |b| {
        b.iter_with_large_drop(|| {
            let back =
                TraceBuf::from_jsonl_str(&black_box(&trace).to_jsonl()).expect("a valid trace");
            assert_eq!(back.len(), total);
            back
        });
    });
    group.finish();
}

criterion_group! {
    name = benches;
    // No plots (nothing reads them), and 10,000 bootstrap resamples instead of 100,000: the
    // medians are the same, the analysis of a bench takes 0.1 s instead of 0.8 s.
    config = Criterion::default().without_plots().nresamples(10_000);
    targets = planning, walking, recording
}
criterion_main!(benches);
