/**
 * OpenTelemetry spans from the bus trace (`harnessweaver/otel`; install `@opentelemetry/api`,
 * an optional peer dependency). The same spans as Python's
 * `harnessweaver.agent.otel.OTelExporter`, in two shapes, as the GenAI semantic conventions ask
 * of an instrumentation that already emits spans (the new shape only on opt-in, never both):
 *
 * - by default: `harnessweaver.run` per run segment, `hook <name>` per hook point emitted,
 *   `middleware <name>` per middleware that ran;
 * - with `OTEL_SEMCONV_STABILITY_OPT_IN` listing `gen_ai_latest_experimental` (or
 *   `{genAI: true}`), the GenAI spans: `invoke_agent` per segment, `chat` around a model call
 *   (model.before to model.after), `execute_tool <tool>` around a tool call (tool.before to
 *   tool.after), the `hook <name>` spans inside them, and each middleware's decision a span
 *   event of its hook span named by its outcome (`harnessweaver.block`…: {@link EVENTS}).
 *
 * The exporter is given its tracer provider and never sets the global one. Spans are built from
 * trace records after the fact; their times come from the records' monotonic `t_ns` and
 * `duration_ns`. Attributes hold names, outcomes, codes and exception type names: like the
 * trace, never a reason, an argument or a message (R9, I8) — the records hold none.
 *
 * @module
 */

import { context, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import type { Attributes, Context, HrTime, Span, Tracer, TracerProvider } from "@opentelemetry/api";
import { performance } from "node:perf_hooks";
import { VERSION } from "./index.js";
import type { TraceRecord } from "./record.js";

/**
 * The value of `OTEL_SEMCONV_STABILITY_OPT_IN` (a comma-separated list) that asks for the
 * GenAI spans, as the conventions' transition plan names it.
 */
export const OPT_IN = "gen_ai_latest_experimental";

/**
 * The span event names of the GenAI shape: one per middleware record, named by its outcome
 * (`modify` is a Continue that modified the event; `failure` a middleware that failed, its fail
 * mode deciding the outcome it counts as).
 */
export const EVENTS = [
  "harnessweaver.continue",
  "harnessweaver.modify",
  "harnessweaver.block",
  "harnessweaver.suspend",
  "harnessweaver.escalate",
  "harnessweaver.retry",
  "harnessweaver.failure",
] as const;

/** How an {@link OTelExporter} builds its spans. */
export interface OTelExporterOptions {
  /** The GenAI semantic-convention spans; when absent, as `OTEL_SEMCONV_STABILITY_OPT_IN` says at construction. */
  readonly genAI?: boolean;
  /** `gen_ai.agent.name` (the trace does not know it); GenAI shape only. */
  readonly agentName?: string;
  /** `gen_ai.provider.name`; GenAI shape only. */
  readonly providerName?: string;
  /** `gen_ai.request.model`; GenAI shape only. */
  readonly requestModel?: string;
}

/** The run segment the records are of, as Python's `export(records, run_id=…, exit_reason=…)`. */
export interface ExportOptions {
  readonly runId: string;
  readonly exitReason: string;
}

/** Whether `OTEL_SEMCONV_STABILITY_OPT_IN` lists `gen_ai_latest_experimental`. */
export function genAIOptedIn(env: Readonly<Record<string, string | undefined>> = process.env): boolean {
  const value = env["OTEL_SEMCONV_STABILITY_OPT_IN"] ?? "";
  return value.split(",").some((part) => part.trim() === OPT_IN);
}

const PREFIX = "harnessweaver.";
const KEYS = ["hook", "step", "tool", "outcome", "modified", "code", "middleware", "band", "failure", "error", "fail_mode"] as const;
// A decision's event: who decided what; never `warnings` (texts a middleware wrote, I24)
const EVENT_KEYS = ["middleware", "band", "outcome", "code", "failure", "error", "fail_mode", "contract", "audit"] as const;

type Fields = Readonly<Record<string, unknown>>;

function pick(record: Fields, keys: readonly string[], into: Attributes): Attributes {
  for (const key of keys) {
    const value = record[key];
    if (value !== undefined && value !== null) into[PREFIX + key] = value as string | number | boolean;
  }
  return into;
}

function attributes(record: Fields): Attributes {
  return pick(record, KEYS, { [`${PREFIX}emit`]: record["emit"] as number });
}

/** The records' time span, in epoch nanoseconds (the records' clock is `performance.now()`). */
function bounds(records: readonly TraceRecord[], origin: bigint): [bigint, bigint] {
  let start = Infinity;
  let end = -Infinity;
  for (const record of records) {
    const t = record.t_ns ?? 0;
    start = Math.min(start, t);
    end = Math.max(end, t + (record.duration_ns ?? 0));
  }
  return [origin + BigInt(Math.round(start)), origin + BigInt(Math.round(end))];
}

function hrTime(ns: bigint): HrTime {
  return [Number(ns / 1_000_000_000n), Number(ns % 1_000_000_000n)];
}

/** Records grouped by emit, in the order the emits first appear. */
function byEmit(records: Iterable<TraceRecord>): TraceRecord[][] {
  const groups = new Map<number, TraceRecord[]>();
  for (const record of records) {
    const group = groups.get(record.emit);
    if (group) group.push(record);
    else groups.set(record.emit, [record]);
  }
  return [...groups.values()];
}

type Operation = "" | "chat" | "execute_tool";

/**
 * The emits (their indexes) grouped as the GenAI shape nests them, in order: `chat` from a
 * model.before to the next model.after of its step, `execute_tool` from a tool.before to the
 * first open tool.before's tool.after of the same step and tool (the records hold no call id, so
 * calls of one tool in one step pair in order), `""` for an emit of its own. An operation whose
 * closing emit never came (a blocked tool call, a segment that stopped) ends with its last emit.
 */
function operations(emits: readonly TraceRecord[][]): [Operation, number[]][] {
  const groups: [Operation, number[]][] = [];
  const open = new Map<string, number[]>(); // key → indexes in groups, oldest first
  emits.forEach((emit, index) => {
    const first = emit[0] as TraceRecord;
    const { hook } = first;
    const isTool = hook === "tool.before" || hook === "tool.after";
    const key = JSON.stringify([hook.slice(0, 4), first.step ?? null, isTool ? (first.tool ?? null) : null]);
    const operation: Operation = isTool ? "execute_tool" : "chat";
    if (hook === "model.before" || hook === "tool.before") {
      const waiting = open.get(key);
      if (waiting) waiting.push(groups.length);
      else open.set(key, [groups.length]);
      groups.push([operation, [index]]);
    } else if (hook === "model.after" || hook === "tool.after") {
      const at = open.get(key)?.shift();
      if (at !== undefined) (groups[at] as [Operation, number[]])[1].push(index);
      else groups.push([operation, [index]]); // an after without its before (a trace that starts mid-call)
    } else {
      groups.push(["", [index]]);
    }
  });
  return groups;
}

function eventName(record: TraceRecord): string {
  if (record.kind === "failure") return `${PREFIX}failure`;
  if (record.outcome === "continue" && record.modified) return `${PREFIX}modify`;
  return PREFIX + record.outcome;
}

/**
 * Turns trace records into spans: `exporter.export(trace.records(), {runId, exitReason})` after
 * each run segment. Python's `OTelExporter` builds the same spans from the same records.
 */
export class OTelExporter {
  readonly #tracer: Tracer;
  readonly #genAI: boolean;
  readonly #agent: string | undefined;
  readonly #provider: string | undefined;
  readonly #model: string | undefined;

  constructor(tracerProvider: TracerProvider, options: OTelExporterOptions = {}) {
    this.#tracer = tracerProvider.getTracer("harnessweaver", VERSION);
    this.#genAI = options.genAI ?? genAIOptedIn();
    this.#agent = options.agentName || undefined;
    this.#provider = options.providerName || undefined;
    this.#model = options.requestModel || undefined;
  }

  /** Whether this exporter builds the GenAI spans. */
  get genAI(): boolean {
    return this.#genAI;
  }

  /** The spans of one run segment's records (`trace.records()`), ended and handed to the provider's processors. */
  export(records: Iterable<TraceRecord>, { runId, exitReason }: ExportOptions): void {
    const all = [...records];
    // monotonic → epoch: the records' clock is performance.now(), spans want wall-clock times
    const origin = BigInt(Math.round(performance.timeOrigin * 1e6));
    const now = BigInt(Math.round((performance.timeOrigin + performance.now()) * 1e6));
    const [start, end] = all.length > 0 ? bounds(all, origin) : [now, now];
    let name = "harnessweaver.run";
    let attrs: Attributes = {};
    if (this.#genAI) {
      name = this.#agent ? `invoke_agent ${this.#agent}` : "invoke_agent";
      attrs = this.#genAIAttributes("invoke_agent", runId);
      if (this.#agent) attrs["gen_ai.agent.name"] = this.#agent;
    }
    attrs[`${PREFIX}run_id`] = runId;
    attrs[`${PREFIX}exit_reason`] = exitReason;
    const run = this.#tracer.startSpan(name, { startTime: hrTime(start), attributes: attrs, kind: SpanKind.INTERNAL }, context.active());
    const emits = byEmit(all);
    const inRun = trace.setSpan(context.active(), run);
    if (this.#genAI) {
      for (const [operation, indexes] of operations(emits)) {
        this.#operation(inRun, operation, indexes.map((i) => emits[i] as TraceRecord[]), runId, origin);
      }
    } else {
      for (const emit of emits) this.#emit(inRun, emit, origin);
    }
    run.end(hrTime(end));
  }

  #genAIAttributes(operation: string, runId: string): Attributes {
    const attrs: Attributes = { "gen_ai.operation.name": operation };
    if (this.#provider) attrs["gen_ai.provider.name"] = this.#provider;
    if (this.#model && operation !== "execute_tool") attrs["gen_ai.request.model"] = this.#model;
    attrs["gen_ai.conversation.id"] = runId; // a run id lasts across its segments
    return attrs;
  }

  /** A `chat` or `execute_tool` span with its hook spans inside, or a hook span of its own. */
  #operation(parent: Context, operation: Operation, emits: TraceRecord[][], runId: string, origin: bigint): void {
    if (operation === "") {
      this.#emit(parent, emits[0] as TraceRecord[], origin);
      return;
    }
    const first = (emits[0] as TraceRecord[])[0] as TraceRecord;
    const attrs = this.#genAIAttributes(operation, runId);
    let name: string;
    let kind: SpanKind;
    if (operation === "chat") {
      name = this.#model ? `chat ${this.#model}` : "chat";
      kind = SpanKind.CLIENT;
    } else {
      // a record of a trace written before I21 has no tool name
      name = first.tool ? `execute_tool ${first.tool}` : "execute_tool";
      if (first.tool !== undefined && first.tool !== null) attrs["gen_ai.tool.name"] = first.tool;
      kind = SpanKind.INTERNAL;
    }
    if (first.step !== undefined && first.step !== null) attrs[`${PREFIX}step`] = first.step;
    const [start, end] = bounds(emits.flat(), origin);
    const span = this.#tracer.startSpan(name, { startTime: hrTime(start), attributes: attrs, kind }, parent);
    const inside = trace.setSpan(parent, span);
    for (const emit of emits) this.#emit(inside, emit, origin);
    span.end(hrTime(end));
  }

  /**
   * One hook point's span, its middleware inside (spans, or events of the GenAI shape). An emit
   * cancelled from outside has no hook record (I12): its span has the hook's name and no outcome.
   */
  #emit(parent: Context, records: TraceRecord[], origin: bigint): void {
    const first = records[0] as TraceRecord;
    const hook = records.find((r) => r.kind === "hook");
    const attrs = attributes((hook ?? { emit: first.emit, hook: first.hook }) as unknown as Fields);
    const [start, end] = bounds(records, origin);
    const span = this.#tracer.startSpan(`hook ${first.hook}`, { startTime: hrTime(start), attributes: attrs }, parent);
    const inside = trace.setSpan(parent, span);
    let failed: TraceRecord | undefined;
    for (const record of records) {
      if (record.kind === "hook") continue;
      if (record.kind === "failure") failed ??= record;
      if (this.#genAI) {
        span.addEvent(eventName(record), pick(record as unknown as Fields, EVENT_KEYS, {}), hrTime(bounds([record], origin)[1]));
      } else {
        this.#middleware(inside, record, origin);
      }
    }
    if (this.#genAI && failed) span.setStatus({ code: SpanStatusCode.ERROR, message: String(failed.failure) });
    span.end(hrTime(end));
  }

  #middleware(parent: Context, record: TraceRecord, origin: bigint): void {
    const [start, end] = bounds([record], origin);
    const span: Span = this.#tracer.startSpan(
      `middleware ${record.middleware ?? ""}`,
      { startTime: hrTime(start), attributes: attributes(record as unknown as Fields) },
      parent,
    );
    if (record.kind === "failure") span.setStatus({ code: SpanStatusCode.ERROR, message: String(record.failure) });
    span.end(hrTime(end));
  }
}
