/**
 * `harnessweaver/otel`: the spans of a trace, in both shapes, and the same spans as Python's
 * `OTelExporter` for the same chain run in both languages (when a Python with the
 * OpenTelemetry SDK is found: HARNESSWEAVER_TEST_PYTHON; `nox -s ts` gives it).
 */

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { Block, Continue, Envelope, eventFromJSON, HookBus, middleware, RunContext, type HookPoint, type TraceRecord } from "../index.js";
import { EVENTS, genAIOptedIn, OTelExporter, type OTelExporterOptions } from "../otel.js";
import { appended, CATALOGUE, untimed } from "../testing/support.js";

const run = promisify(execFile);
const REPO = fileURLToPath(new URL("../../../", import.meta.url));
const SECRETS = ["secret-text", "secret-reason", "secret-warning"];

/** The emits of a two-step run: step 1's tool call is blocked, step 2's runs. */
const EMITS: [HookPoint, Record<string, unknown>][] = (() => {
  const sample = (hook: HookPoint, step?: number) => {
    const data = { ...(CATALOGUE.samples[hook] as Record<string, unknown>) };
    if (step !== undefined) data["step"] = step;
    return [hook, data] as [HookPoint, Record<string, unknown>];
  };
  const step = (n: number, tool: boolean): [HookPoint, Record<string, unknown>][] => [
    sample("step.start", n),
    sample("model.before", n),
    sample("model.after", n),
    ...(tool ? [sample("tool.before", n)] : []),
    ...(tool && n > 1 ? [sample("tool.after", n)] : []),
    sample("step.end", n),
  ];
  return [sample("task.start"), ...step(1, true), ...step(2, true), ...step(3, false), sample("task.end")];
})();

/** The chain, as the Python script below registers it too: a failure, a block, a modification, warnings. */
async function records(): Promise<TraceRecord[]> {
  const bus = new HookBus();
  bus.register(middleware({ name: "flaky", hooks: ["tool.before"], failMode: "open" }, () => { throw new Error("secret-text"); }));
  bus.register(
    middleware({ name: "deny_first", hooks: ["tool.before"], failMode: "closed", band: "task" }, (event) =>
      (event as { step: number }).step === 1 ? Block("secret-reason", { code: "denied" }) : undefined,
    ),
  );
  bus.register(middleware({ name: "rewrite", hooks: ["tool.before"], failMode: "closed" }, (event) => Continue(appended(event, "r"))));
  bus.register(middleware({ name: "noter", hooks: ["model.after"], failMode: "closed" }, () => Continue(null, { warnings: ["secret-warning"] })));
  const context = new RunContext({ envelope: new Envelope({ runId: "run-1" }) });
  for (const [hook, data] of EMITS) await bus.emit(hook, eventFromJSON(hook, data), context);
  return context.trace.records();
}

const PY_SPANS = `
import anyio, json, sys
import harnessweaver as hw
from harnessweaver.events import EVENT_TYPES
from harnessweaver.agent.otel import EVENTS, OTelExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

emits, configurations, record_sets = json.loads(sys.argv[1])

@hw.middleware(name="flaky", hooks=["tool.before"], fail_mode="open")
async def flaky(event, env):
    raise ValueError("secret-text")

@hw.middleware(name="deny_first", hooks=["tool.before"], fail_mode="closed", band="task")
async def deny_first(event, env):
    return hw.Block("secret-reason", code="denied") if event.step == 1 else None

@hw.middleware(name="rewrite", hooks=["tool.before"], fail_mode="closed")
async def rewrite(event, env):
    trail = list(event.call.arguments.get("trail", []))
    return hw.Continue(event.updated({"call.arguments.trail": [*trail, "r"]}))

@hw.middleware(name="noter", hooks=["model.after"], fail_mode="closed")
async def noter(event, env):
    return hw.Continue(None, warnings=["secret-warning"])

def dump(spans):
    ids = [s.context.span_id for s in spans]
    return [{
        "name": s.name,
        "kind": s.kind.value,
        "parent": ids.index(s.parent.span_id) if s.parent else None,
        "attributes": dict(s.attributes or {}),
        "events": [[e.name, dict(e.attributes or {})] for e in s.events],
        "status": [s.status.status_code.value, s.status.description or ""],
    } for s in spans]

async def main():
    bus = hw.HookBus()
    for item in (flaky, deny_first, rewrite, noter):
        bus.register(item)
    context = hw.RunContext(envelope=hw.Envelope(run_id="run-1"))
    for hook, data in emits:
        await bus.emit(hook, EVENT_TYPES[hook].model_validate(data), context)
    records = context.trace.records()
    out = {"records": [{k: v for k, v in r.items() if k not in ("t_ns", "duration_ns")} for r in records], "spans": [], "sets": []}
    def exported(records, options):
        memory = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(memory))
        OTelExporter(provider, **options).export(records, run_id="run-1", exit_reason="completed")
        return dump(memory.get_finished_spans())
    out["spans"] = [exported(records, options) for options in configurations]
    out["sets"] = [[exported(given, options) for options in configurations] for given in record_sets]
    out["events"] = list(EVENTS)
    print(json.dumps(out))

anyio.run(main)
`;

/** The TS options of each configuration, and Python's keyword arguments for the same. */
const CONFIGURATIONS: [OTelExporterOptions, Record<string, unknown>][] = [
  [{ genAI: false }, { gen_ai: false }],
  [{ genAI: true }, { gen_ai: true }],
  [
    { genAI: true, agentName: "support", providerName: "openai", requestModel: "m-1" },
    { gen_ai: true, agent_name: "support", provider_name: "openai", request_model: "m-1" },
  ],
];

/**
 * Records no run of today's bus writes, but a trace read back may hold: an emit cancelled from
 * outside (no hook record, I12), records of a trace written before I21 (no run, step or tool),
 * a tool.after and a model.after without their before (a trace that starts mid-call), a
 * contract rule, an audit-mode middleware; and no records at all.
 */
const ODD: TraceRecord[][] = [
  [
    { emit: 1, hook: "tool.before", kind: "outcome", middleware: "slow", band: "baseline", outcome: "continue", modified: false, t_ns: 5, duration_ns: 3 },
    { emit: 2, hook: "tool.before", kind: "hook", outcome: "block", modified: false, code: "c", t_ns: 9, duration_ns: 1 },
    { emit: 3, hook: "tool.after", step: 4, tool: "t", kind: "hook", outcome: "continue", modified: false, t_ns: 20, duration_ns: 1 },
    { emit: 4, hook: "model.after", step: 4, kind: "outcome", middleware: "m", band: "task", outcome: "continue", modified: true, contract: "step_changed", t_ns: 30, duration_ns: 1 },
    { emit: 4, hook: "model.after", step: 4, kind: "outcome", middleware: "a", band: "app", outcome: "block", modified: false, code: "x", audit: true, warnings: ["a text"], t_ns: 31, duration_ns: 1 },
    { emit: 4, hook: "model.after", step: 4, kind: "hook", outcome: "continue", modified: true, t_ns: 30, duration_ns: 3 },
  ],
  [],
];

interface Dumped {
  name: string;
  kind: number;
  parent: number | null;
  attributes: Record<string, unknown>;
  events: [string, Record<string, unknown>][];
  status: [number, string];
}

function dump(spans: readonly ReadableSpan[]): Dumped[] {
  const ids = spans.map((s) => s.spanContext().spanId);
  return spans.map((s) => ({
    name: s.name,
    kind: s.kind,
    parent: s.parentSpanContext ? ids.indexOf(s.parentSpanContext.spanId) : null,
    attributes: { ...s.attributes },
    events: s.events.map((e) => [e.name, { ...(e.attributes ?? {}) }] as [string, Record<string, unknown>]),
    status: [s.status.code, s.status.message ?? ""],
  }));
}

function exported(recordsOf: Iterable<TraceRecord>, options: OTelExporterOptions, exitReason = "completed"): Dumped[] {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(memory)] });
  new OTelExporter(provider, options).export(recordsOf, { runId: "run-1", exitReason });
  return dump(memory.getFinishedSpans());
}

/**
 * A Python that runs this checkout's harnessweaver with the OpenTelemetry SDK, or null. The one
 * HARNESSWEAVER_TEST_PYTHON names must (`nox -s ts` gives it): the comparison may not skip there.
 */
async function python(): Promise<string | null> {
  const given = process.env["HARNESSWEAVER_TEST_PYTHON"];
  for (const candidate of [given, "python3"]) {
    if (!candidate) continue;
    try {
      await run(candidate, ["-c", "import anyio, opentelemetry.sdk.trace; from harnessweaver.agent.otel import OTelExporter"], {
        env: { ...process.env, PYTHONPATH: join(REPO, "python") },
      });
      return candidate;
    } catch (error) {
      if (candidate === given) throw new Error(`HARNESSWEAVER_TEST_PYTHON=${given} cannot run harnessweaver.agent.otel with the OpenTelemetry SDK`, { cause: error });
    }
  }
  return null;
}

describe("OTelExporter (harnessweaver/otel)", () => {
  it("opts in when OTEL_SEMCONV_STABILITY_OPT_IN lists gen_ai_latest_experimental", () => {
    const cases: [string | undefined, boolean][] = [
      ["gen_ai_latest_experimental", true],
      ["http, gen_ai_latest_experimental ,database", true],
      ["", false],
      [undefined, false],
      ["http", false],
      ["gen_ai_latest_experimental_2", false],
      ["gen_ai", false],
    ];
    for (const [value, opted] of cases) {
      assert.equal(genAIOptedIn(value === undefined ? {} : { OTEL_SEMCONV_STABILITY_OPT_IN: value }), opted, String(value));
    }
    const provider = new BasicTracerProvider();
    const before = process.env["OTEL_SEMCONV_STABILITY_OPT_IN"];
    try {
      process.env["OTEL_SEMCONV_STABILITY_OPT_IN"] = "http,gen_ai_latest_experimental";
      assert.equal(new OTelExporter(provider).genAI, true);
      assert.equal(new OTelExporter(provider, { genAI: false }).genAI, false);
      process.env["OTEL_SEMCONV_STABILITY_OPT_IN"] = "http";
      assert.equal(new OTelExporter(provider).genAI, false);
      assert.equal(new OTelExporter(provider, { genAI: true }).genAI, true);
    } finally {
      if (before === undefined) delete process.env["OTEL_SEMCONV_STABILITY_OPT_IN"];
      else process.env["OTEL_SEMCONV_STABILITY_OPT_IN"] = before;
    }
  });

  it("without the opt-in: harnessweaver.run, hook and middleware spans", async () => {
    const spans = exported(await records(), { genAI: false });
    const names = spans.map((s) => s.name);
    assert.equal(names.at(-1), "harnessweaver.run");
    assert.deepEqual(spans.at(-1)?.attributes, { "harnessweaver.run_id": "run-1", "harnessweaver.exit_reason": "completed" });
    const flaky = spans.find((s) => s.name === "middleware flaky");
    assert.deepEqual(flaky?.attributes, {
      "harnessweaver.emit": 5,
      "harnessweaver.hook": "tool.before",
      "harnessweaver.step": 1,
      "harnessweaver.tool": "refund_payment",
      "harnessweaver.outcome": "continue",
      "harnessweaver.modified": false,
      "harnessweaver.middleware": "flaky",
      "harnessweaver.band": "app",
      "harnessweaver.failure": "exception",
      "harnessweaver.error": "Error",
      "harnessweaver.fail_mode": "open",
    });
    assert.deepEqual(flaky?.status, [SpanStatusCode.ERROR, "exception"]);
    assert.equal(spans[flaky?.parent ?? -1]?.name, "hook tool.before");
    assert.ok(!names.some((n) => /^(invoke_agent|chat|execute_tool)/.test(n)));
    assert.ok(spans.every((s) => s.events.length === 0));
  });

  it("with it: invoke_agent, chat and execute_tool spans, each decision an event named by its outcome", async () => {
    const spans = exported(await records(), { genAI: true, agentName: "support", providerName: "openai", requestModel: "m-1" });
    const tree = spans.map((s) => [s.name, s.parent === null ? null : spans[s.parent]?.name]);
    const step = (tool: "blocked" | "ran" | "none") => [
      ["hook step.start", "invoke_agent support"],
      ["hook model.before", "chat m-1"],
      ["hook model.after", "chat m-1"],
      ["chat m-1", "invoke_agent support"],
      ...(tool === "none" ? [] : [["hook tool.before", "execute_tool refund_payment"]]),
      ...(tool === "ran" ? [["hook tool.after", "execute_tool refund_payment"]] : []),
      ...(tool === "none" ? [] : [["execute_tool refund_payment", "invoke_agent support"]]),
      ["hook step.end", "invoke_agent support"],
    ];
    assert.deepEqual(tree, [
      ["hook task.start", "invoke_agent support"],
      ...step("blocked"),
      ...step("ran"),
      ...step("none"),
      ["hook task.end", "invoke_agent support"],
      ["invoke_agent support", null],
    ]);
    const agent = spans.at(-1) as Dumped;
    assert.equal(agent.kind, SpanKind.INTERNAL);
    assert.deepEqual(agent.attributes, {
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.provider.name": "openai",
      "gen_ai.request.model": "m-1",
      "gen_ai.conversation.id": "run-1",
      "gen_ai.agent.name": "support",
      "harnessweaver.run_id": "run-1",
      "harnessweaver.exit_reason": "completed",
    });
    const chat = spans.find((s) => s.name === "chat m-1") as Dumped;
    assert.equal(chat.kind, SpanKind.CLIENT);
    const tool = spans.find((s) => s.name === "execute_tool refund_payment") as Dumped;
    assert.deepEqual(tool.attributes, {
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.provider.name": "openai",
      "gen_ai.conversation.id": "run-1",
      "gen_ai.tool.name": "refund_payment",
      "harnessweaver.step": 1,
    });
    const [blocked, allowed] = spans.filter((s) => s.name === "hook tool.before") as [Dumped, Dumped];
    assert.deepEqual(blocked.events, [
      ["harnessweaver.failure", {
        "harnessweaver.middleware": "flaky",
        "harnessweaver.band": "app",
        "harnessweaver.outcome": "continue",
        "harnessweaver.failure": "exception",
        "harnessweaver.error": "Error",
        "harnessweaver.fail_mode": "open",
      }],
      ["harnessweaver.modify", { "harnessweaver.middleware": "rewrite", "harnessweaver.band": "app", "harnessweaver.outcome": "continue" }],
      ["harnessweaver.block", {
        "harnessweaver.middleware": "deny_first",
        "harnessweaver.band": "task",
        "harnessweaver.outcome": "block",
        "harnessweaver.code": "denied",
      }],
    ]);
    assert.deepEqual(blocked.status, [SpanStatusCode.ERROR, "exception"]);
    assert.deepEqual(allowed.events.map(([name]) => name), ["harnessweaver.failure", "harnessweaver.modify", "harnessweaver.continue"]);
    const events = new Set(spans.flatMap((s) => s.events.map(([name]) => name)));
    assert.ok([...events].every((name) => (EVENTS as readonly string[]).includes(name)), [...events].join());
    const text = JSON.stringify(spans);
    for (const secret of [...SECRETS, "order", "amount_usd", "Refund"]) assert.ok(!text.includes(secret), secret);
  });

  it("pairs calls of one tool in one step in order; no records: the run span alone", () => {
    const hook = (emit: number, name: "tool.before" | "tool.after", tool: string): TraceRecord => ({
      emit, hook: name, step: 1, tool, kind: "hook", outcome: "continue", modified: false, t_ns: emit * 10, duration_ns: 1,
    });
    const recordsOf = [hook(1, "tool.before", "a"), hook(2, "tool.before", "a"), hook(3, "tool.before", "b"), hook(4, "tool.after", "b"), hook(5, "tool.after", "a"), hook(6, "tool.after", "a")];
    const spans = exported(recordsOf, { genAI: true });
    const tools = spans.map((s, i) => [s, i] as const).filter(([s]) => s.name.startsWith("execute_tool"));
    assert.deepEqual(
      tools.map(([s, i]) => [s.name, spans.filter((c) => c.parent === i).map((c) => c.attributes["harnessweaver.emit"])]),
      [["execute_tool a", [1, 5]], ["execute_tool a", [2, 6]], ["execute_tool b", [3, 4]]],
    );
    assert.deepEqual(exported([], { genAI: true }, "suspended").map((s) => [s.name, s.attributes["harnessweaver.exit_reason"]]), [["invoke_agent", "suspended"]]);
  });

  it("Python exports the same spans for the same chain (when a Python is found)", async (t) => {
    const py = await python();
    if (py === null) return t.skip("no Python with harnessweaver and the OpenTelemetry SDK (set HARNESSWEAVER_TEST_PYTHON)");
    const argument = JSON.stringify([EMITS, CONFIGURATIONS.map(([, python]) => python), ODD]);
    const { stdout } = await run(py, ["-c", PY_SPANS, argument], { env: { ...process.env, PYTHONPATH: join(REPO, "python") } });
    const theirs = JSON.parse(stdout) as { records: unknown[]; spans: Dumped[][]; sets: Dumped[][][]; events: string[] };
    assert.deepEqual(theirs.events, [...EVENTS]);
    const ours = await records();
    // the same chain: the same records, but Python names the exception it raised ValueError
    const renamed = untimed(ours).map((r) => (r["error"] === "Error" ? { ...r, error: "ValueError" } : r));
    assert.deepEqual(theirs.records, renamed);
    const withValueError = ours.map((r) => (r.error === "Error" ? { ...r, error: "ValueError" } : r));
    CONFIGURATIONS.forEach(([options], i) => {
      assert.deepEqual(theirs.spans[i], exported(withValueError, options), JSON.stringify(options));
      ODD.forEach((given, j) => assert.deepEqual(theirs.sets[j]?.[i], exported(given, options), `${JSON.stringify(options)} ${j}`));
    });
  });
});
