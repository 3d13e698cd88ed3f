/**
 * What `harnessweaver bench` prints: the JSON document of docs/bench.md (keys in its order,
 * written as Python's `json.dumps` writes it, so the two commands' documents read the same), or an
 * aligned plain-text table, the lines a user can act on, and a footer saying what the columns
 * mean.
 */

import { PyFloat, pyFloatRepr, pyJsonString, type PyJson } from "../spec/pytext.js";
import type { OutcomeKind } from "../outcomes.js";
import { median } from "./floor.js";
import { percentile, WARMUP, type Measured, type Stopped } from "./measure.js";

/** What the run was asked for, as the document repeats it. */
export interface Run {
  readonly spec: string;
  readonly task: string | null;
  readonly env: string | null;
  /** "samples", or the events file as given. */
  readonly events: string;
  readonly rounds: number;
  readonly per: number;
}

/** The figures of one hook point (`HookFigures` in the document's words). */
export interface Figures {
  readonly hook: string;
  readonly middleware: readonly string[];
  readonly events: number;
  readonly emit: { readonly p50_ns: number; readonly p99_ns: number };
  readonly floor: { readonly p50_ns: number; readonly p99_ns: number };
  readonly ratio: number;
  readonly outcomes: Readonly<Record<string, number>>;
  readonly dominant: { readonly name: string; readonly use: string | null; readonly share: number };
  readonly each: readonly { readonly name: string; readonly use: string | null; readonly p50_ns: number; readonly share: number }[];
  readonly stopped: readonly Stopped[];
}

/** The outcome kinds in the order the document lists them (least severe first). */
const KINDS: readonly OutcomeKind[] = ["continue", "block", "suspend", "escalate", "retry"];

/**
 * The figures of a measurement whose paired ratio is `ratio` (the command refuses one without);
 * `useOf` gives a middleware's `use` (null: registered by code).
 */
export function figuresOf(measured: Measured, ratio: number, useOf: (name: string) => string | null): Figures {
  const { target } = measured;
  const p50s = measured.each.map((times) => median(times));
  const total = p50s.reduce((a, b) => a + b, 0);
  const each = target.names.map((name, i) => {
    const p50 = p50s[i] ?? 0;
    return { name, use: useOf(name), p50_ns: p50, share: total > 0 ? p50 / total : 1 / p50s.length };
  });
  const top = each.reduce((best, item) => (item.share > best.share ? item : best));
  const outcomes: Record<string, number> = {};
  for (const kind of KINDS) if (measured.outcomes[kind] !== undefined) outcomes[kind] = measured.outcomes[kind];
  return {
    hook: target.hook,
    middleware: target.names,
    events: target.events.length,
    emit: { p50_ns: median(measured.emits), p99_ns: percentile(measured.emits, 0.99) },
    floor: { p50_ns: median(measured.floors), p99_ns: percentile(measured.floors, 0.99) },
    ratio,
    outcomes,
    dominant: { name: top.name, use: top.use, share: top.share },
    each,
    stopped: measured.stopped,
  };
}

function times(pair: { readonly p50_ns: number; readonly p99_ns: number }): PyJson {
  return { p50_ns: new PyFloat(pair.p50_ns), p99_ns: new PyFloat(pair.p99_ns) };
}

/**
 * `json.dumps(value)` as Python's command prints the document: one line, `", "` and `": "`
 * between items, floats as `repr` (`1423.0`), ASCII only. The two commands' documents then
 * differ only in their numbers.
 */
export function compactPyJson(value: PyJson): string {
  if (value === null) return "null";
  if (typeof value === "boolean") return value ? "true" : "false";
  if (typeof value === "string") return pyJsonString(value);
  if (value instanceof PyFloat) return pyFloatRepr(value.value);
  if (typeof value === "number") return Number.isInteger(value) ? BigInt(value).toString() : pyFloatRepr(value);
  if (Array.isArray(value)) return `[${(value as readonly PyJson[]).map(compactPyJson).join(", ")}]`;
  const entries = Object.entries(value as { readonly [key: string]: PyJson });
  return `{${entries.map(([key, item]) => `${pyJsonString(key)}: ${compactPyJson(item)}`).join(", ")}}`;
}

/** The JSON document (`--format json`), one object on one line, with a final newline. */
export function jsonReport(run: Run, hooks: readonly Figures[]): string {
  const doc: PyJson = {
    harnessweaver_bench: 1,
    implementation: "ts",
    spec: run.spec,
    task: run.task,
    env: run.env,
    events: run.events,
    rounds: run.rounds,
    per: run.per,
    hooks: hooks.map((h) => ({
      hook: h.hook,
      middleware: [...h.middleware],
      events: h.events,
      emit: times(h.emit),
      floor: times(h.floor),
      ratio: new PyFloat(h.ratio),
      outcomes: { ...h.outcomes },
      dominant: { name: h.dominant.name, use: h.dominant.use, share: new PyFloat(h.dominant.share) },
      each: h.each.map((e) => ({ name: e.name, use: e.use, p50_ns: new PyFloat(e.p50_ns), share: new PyFloat(e.share) })),
    })),
  };
  return `${compactPyJson(doc)}\n`;
}

/** Nanoseconds as µs with 3 significant digits: `0.912`, `12.3`, `1230` (Python's `fmt_us`). */
export function micros(ns: number): string {
  const us = ns / 1000;
  return us >= 999.5 ? Number(us.toPrecision(3)).toFixed(0) : us.toPrecision(3);
}

function percent(share: number): string {
  return `${Math.round(share * 100)}%`;
}

const HEADER = ["hook", "middleware", "emit p50", "emit p99", "floor p50", "ratio", "dominant (share)", "outcomes"];
/** The columns written flush right (numbers). */
const RIGHT = new Set([2, 3, 4, 5]);

/** The rows of the table, aligned: columns two spaces apart, numbers flush right. */
function table(hooks: readonly Figures[]): string[] {
  const rows = hooks.map((h) => [
    h.hook,
    h.middleware.join(", "),
    micros(h.emit.p50_ns),
    micros(h.emit.p99_ns),
    micros(h.floor.p50_ns),
    `${h.ratio.toFixed(2)}x`,
    `${h.dominant.name} (${percent(h.dominant.share)})`,
    Object.entries(h.outcomes)
      .map(([kind, n]) => `${kind} ${n}`)
      .join(", "),
  ]);
  const all = [HEADER, ...rows];
  const widths = HEADER.map((_, c) => Math.max(...all.map((row) => [...(row[c] ?? "")].length)));
  const line = (row: readonly string[]) =>
    row
      .map((cell, c) => {
        const pad = " ".repeat((widths[c] ?? 0) - [...cell].length);
        return RIGHT.has(c) ? pad + cell : cell + pad;
      })
      .join("  ")
      .trimEnd();
  const rule = widths.map((w) => "-".repeat(w)).join("  ");
  return [line(HEADER), rule, ...rows.map(line)];
}

const VERBS: Readonly<Record<OutcomeKind, string>> = { continue: "let through", block: "blocked", suspend: "suspended", escalate: "escalated", retry: "retried" };

/** A middleware as the lines name it: its name, and its `use` when that says more. */
function named(name: string, use: string | null): string {
  return use === null || use === name ? `\`${name}\`` : `\`${name}\` (${use})`;
}

/** What to do about the events the chain did not let through: one line per middleware and outcome. */
function stopLines(run: Run, h: Figures): string[] {
  return h.stopped.map((s) => {
    const who = s.middleware === null ? "a middleware" : `\`${s.middleware}\``;
    const coded = s.code === null ? "" : ` (code ${s.code})`;
    const samples = run.events === "samples";
    const subject = samples ? "the sample event was" : `${s.events} of ${h.events} events of ${run.events} ${s.events === 1 ? "was" : "were"}`;
    const after = samples ? "the emit" : "their emits";
    const hint = samples ? "time your own events with --events FILE" : "that is what those events cost";
    const result = s.kind === "block" ? `later middleware did not run in ${after}` : `the outcome of ${after} was ${s.kind}, not continue`;
    return `${h.hook}: ${subject} ${VERBS[s.kind]} by ${who}${coded}: ${result}; ${hint}`;
  });
}

/**
 * A line when timed emits were stopped though every event came through its first emit: a
 * stateful middleware (a rate or budget guard) changed its answer as the rounds went on.
 */
function drift(h: Figures): string[] {
  const stopped = Object.entries(h.outcomes).filter(([kind]) => kind !== "continue");
  if (h.stopped.length > 0 || stopped.length === 0) return [];
  const counts = stopped.map(([kind, n]) => `${kind} ${n}`).join(", ");
  const timed = Object.values(h.outcomes).reduce((a, b) => a + b, 0);
  const total = stopped.reduce((a, [, n]) => a + n, 0);
  return [
    `${h.hook}: ${total} of ${timed} timed emits were not let through (${counts}) though every event came through its first emit: ` +
      "a stateful middleware (a rate or budget guard) changed its answer as the rounds went on, so these times are partly those of stopped chains",
  ];
}

/** The lines under the table: who dominates each chain, and which events were stopped. */
function actions(run: Run, hooks: readonly Figures[]): string[] {
  const out: string[] = [];
  for (const h of hooks) {
    if (h.each.length > 1) out.push(`${h.hook}: ${named(h.dominant.name, h.dominant.use)} is ${percent(h.dominant.share)} of the chain's own time`);
    out.push(...drift(h), ...stopLines(run, h));
  }
  return out;
}

/** What was run, above the table (Python's `title`). */
function title(run: Run): string {
  const chosen = [run.task === null ? null : `task ${run.task}`, run.env === null ? null : `env ${run.env}`].filter((x) => x !== null).join(", ");
  return (
    `harnessweaver bench ${run.spec}${chosen ? ` (${chosen})` : ""} on ts: ${run.rounds} rounds (first ${WARMUP} dropped) ` +
    `of ${run.per} per batch, events: ${run.events}`
  );
}

export const FOOTER =
  "floor = the same middleware awaited in a plain loop in the same rounds (no timeout, fail mode, trace or combining); " +
  "ratio = what the bus adds around them: the median over rounds of (emit batch time / floor batch time). Times are per emit, in µs.";

/** The text report: what was run, the table, the lines to act on, `notes` (hook points not timed), the footer. */
export function textReport(run: Run, hooks: readonly Figures[], notes: readonly string[] = []): string {
  return `${[title(run), ...table(hooks), "", ...actions(run, hooks), ...notes, FOOTER].join("\n")}\n`;
}
