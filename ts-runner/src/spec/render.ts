/**
 * Showing a loaded harness's chains: a text listing, JSON for tools, a mermaid flowchart.
 *
 * Every hook point of the catalogue is shown, in catalogue order, with its middleware in the
 * order they run; a hook point with no middleware is shown as empty. The output is byte for
 * byte that of Python's `harnessweaver/spec/render.py` (the reference), so that `harnessweaver
 * hooks` prints the same from either language for the same spec: Python's number, JSON and
 * path notations come from `pytext.ts`.
 */

import { DIRECTIONS, HOOK_POINTS, type HookPoint } from "../catalogue.js";
import type { Declaration } from "../declaration.js";
import { CARRIED, MATCH_KEYS, type Matcher } from "../matcher.js";
import { PyFloat, pyG, pyJson, pyLen, pyLjust, pyPath, pyPathName, pyRound, pyRstrip, type PyJson } from "./pytext.js";

export const FORMATS = ["text", "json", "mermaid"] as const;
export type Format = (typeof FORMATS)[number];

/** What a shown middleware says of itself: a loaded harness's entry (`HarnessEntry`). */
export interface ShownEntry {
  readonly name: string;
  readonly label: string;
  readonly use: string | null | undefined;
  readonly declaration: Declaration;
  readonly layer: string | null | undefined;
  readonly file: string | null | undefined;
  readonly line: number | null | undefined;
  /** The files its middleware read when the spec loaded, as written (I38; absent or empty: none). */
  readonly loads?: readonly string[] | undefined;
}

/** The bus calls rendering makes: a chain per hook point (per tool or model name, I22), deadlines. */
export interface ShownBus {
  chain(hook: HookPoint): readonly Declaration[];
  chainFor(hook: HookPoint, value: string | null): readonly Declaration[];
  deadline(hook: HookPoint): number | undefined;
}

/** What rendering reads of a harness (`Harness`): its bus, entries, spec path, task, env, mode. */
export interface ShownHarness {
  readonly bus: ShownBus;
  readonly entries: readonly ShownEntry[];
  /** The spec's path as given to `load` (null: a harness built in code). */
  readonly spec: string | null | undefined;
  readonly task: string | null | undefined;
  readonly env: string | null | undefined;
  /** The harness-wide mode (I25), when the spec sets one. */
  readonly mode?: string | null | undefined;
}

/** The match keys (I22) whose chains are shown: a tool's on the tool hook points, a model's on `model.before`. */
export interface Only {
  readonly tool?: string | null | undefined;
  readonly model?: string | null | undefined;
}

const COLUMNS = ["#", "middleware", "use", "band", "fail mode", "timeout", "layer", "declared in"] as const;
const OPERATIONS = [
  ["task", "task"],
  ["step", "step"],
  ["model", "model call"],
  ["tool", "tool call"],
] as const;

/** Seconds as Python's `ns / 1e9` gives them: the bus keeps deadlines in milliseconds, so the
 * nanoseconds are recovered first (exactly: far below 2**53) and divided as Python divides. */
function seconds(value: number): number {
  return Math.round(value * 1e9) / 1e9;
}

/** A timeout as it would be written: `2s`, `250ms`, `1.5s`; `-` for none. */
export function timeoutText(value: number | null | undefined): string {
  if (value === null || value === undefined) return "-";
  if (value < 1) return `${pyG(pyRound(value * 1000, 6))}ms`;
  return `${pyG(pyRound(value, 9))}s`;
}

/** A matcher as it would be written: `tool: refund_*, search`; `-` for none (I22). */
export function matchText(match: Matcher | null | undefined): string {
  const keys = match ? MATCH_KEYS.filter((key) => match[key] !== undefined) : [];
  if (!match || keys.length === 0) return "-";
  return keys.map((key) => `${key}: ${(match[key] ?? []).join(", ")}`).join("; ");
}

function hasMatch(decl: Declaration): boolean {
  return matchText(decl.match) !== "-";
}

function order(hook: HookPoint): string {
  return DIRECTIONS[hook] === "inbound" ? "outermost first" : "innermost first";
}

function deadlineOf(harness: ShownHarness, hook: HookPoint): number | null {
  const deadline = harness.bus.deadline(hook);
  return deadline === undefined || deadline === null ? null : seconds(deadline);
}

/** Direction and run order, and the chain deadline when the hook point has one (I26). */
function heading(harness: ShownHarness, hook: HookPoint): string {
  const deadline = deadlineOf(harness, hook);
  const shown = deadline === null ? "" : `, deadline ${timeoutText(deadline)}`;
  return `${DIRECTIONS[hook]}, ${order(hook)}${shown}`;
}

/** Every hook point, in catalogue order, with its entries in run order (`Harness.chains`):
 * with `only.tool` (`only.model`), the chain a call of that tool (a request to that model)
 * runs on the hook points carrying it (I22). Middleware registered by code have no entry:
 * they are shown by their name, with no `use` and no source. */
export function chainsOf(harness: ShownHarness, only: Only = {}): Map<HookPoint, ShownEntry[]> {
  const known = new Map(harness.entries.map((entry) => [entry.name, entry]));
  const chains = new Map<HookPoint, ShownEntry[]>();
  for (const hook of HOOK_POINTS) {
    const key = CARRIED[hook];
    const value = key === undefined ? null : (only[key] ?? null);
    const decls = value === null ? harness.bus.chain(hook) : harness.bus.chainFor(hook, value);
    chains.set(
      hook,
      decls.map(
        (decl) =>
          known.get(decl.name) ?? { name: decl.name, label: decl.name, use: null, declaration: decl, layer: null, file: null, line: null },
      ),
    );
  }
  return chains;
}

function source(entry: ShownEntry): string {
  if (entry.file === null || entry.file === undefined) return "-";
  return entry.line === null || entry.line === undefined ? entry.file : `${entry.file}:${entry.line}`;
}

function row(position: number, entry: ShownEntry, matched: boolean, audited: boolean): string[] {
  const decl = entry.declaration;
  // The name, as the trace names it (Python: `_row`).
  const cells = [String(position), entry.name, entry.use || "-", decl.band, decl.failMode, timeoutText(decl.timeout)];
  if (matched) cells.push(matchText(decl.match));
  if (audited) cells.push(decl.mode);
  cells.push(entry.layer || "(code)", source(entry));
  return cells;
}

function title(harness: ShownHarness, only: Only): string {
  let shown = "";
  for (const key of ["tool", "model"] as const) {
    const value = only[key];
    if (value !== null && value !== undefined) shown += `, ${key}: ${value}`;
  }
  if (harness.mode !== null && harness.mode !== undefined) shown += `, mode: ${harness.mode}`; // I25
  const spec = harness.spec === null || harness.spec === undefined ? "a harness built in code" : pyPathName(harness.spec);
  return `chains of ${spec} (task: ${harness.task || "none"}, env: ${harness.env || "none"}${shown}), each in run order`;
}

/** Every hook point with its chain: position, name (as the trace names it), use, band, fail mode, timeout, the
 * matcher when any middleware has one (I22), the mode when any is audited (I25), layer and
 * the file and line that declared it. */
export function renderText(harness: ShownHarness, only: Only = {}): string {
  const chains = chainsOf(harness, only);
  const everyone = [...chains.values()].flat();
  const matched = everyone.some((entry) => hasMatch(entry.declaration));
  const audited = everyone.some((entry) => entry.declaration.mode === "audit");
  const columns: string[] = [...COLUMNS.slice(0, 6), ...(matched ? ["match"] : []), ...(audited ? ["mode"] : []), ...COLUMNS.slice(6)];
  const rows = [...chains.values()].flatMap((entries) => entries.map((entry, i) => row(i + 1, entry, matched, audited)));
  const widths = columns.map((_, k) => Math.max(...[columns, ...rows].map((cells) => pyLen(cells[k] ?? ""))));
  const line = (cells: readonly string[]): string => pyRstrip(`  ${cells.map((cell, k) => pyLjust(cell, widths[k] ?? 0)).join("  ")}`);

  const out = [title(harness, only)];
  for (const [hook, entries] of chains) {
    out.push("", `${hook}  (${heading(harness, hook)})`);
    if (entries.length === 0) {
      out.push("  (none)");
      continue;
    }
    out.push(line(columns));
    entries.forEach((entry, i) => {
      out.push(line(row(i + 1, entry, matched, audited)));
      if (entry.loads !== undefined && entry.loads.length > 0) out.push(`     loads: ${entry.loads.join(", ")}`); // I38
    });
  }
  return `${out.join("\n")}\n`;
}

function entryJson(entry: ShownEntry): { [key: string]: PyJson } {
  const decl = entry.declaration;
  const shown: { [key: string]: PyJson } = {
    name: entry.name,
    label: entry.label,
    use: entry.use ?? null,
    band: decl.band,
    fail_mode: decl.failMode,
    timeout: decl.timeout === null ? null : new PyFloat(decl.timeout),
    layer: entry.layer ?? null,
    file: entry.file ?? null,
    line: entry.line ?? null,
  };
  if (hasMatch(decl) && decl.match) {
    // I22: only a middleware with a matcher says one (absent: every event)
    const match: { [key: string]: PyJson } = {};
    for (const key of MATCH_KEYS) {
      const patterns = decl.match[key];
      if (patterns !== undefined) match[key] = [...patterns];
    }
    shown["match"] = match;
  }
  if (decl.mode === "audit") shown["mode"] = "audit"; // I25: absent means enforce
  if (entry.loads !== undefined && entry.loads.length > 0) shown["loads"] = [...entry.loads]; // I38: absent when none
  return shown;
}

/** `{"spec", "task", "env", "hooks": [{"hook", "direction", "chain": [...]}]}`, and `"tool"`
 * (`"model"`) when the hook points carrying it show one tool's (model's) chain (I22). */
export function renderJson(harness: ShownHarness, only: Only = {}): string {
  const hooks: PyJson[] = [];
  for (const [hook, entries] of chainsOf(harness, only)) {
    const shown: { [key: string]: PyJson } = { hook, direction: DIRECTIONS[hook] };
    const deadline = deadlineOf(harness, hook);
    if (deadline !== null) shown["deadline"] = new PyFloat(deadline); // I26
    shown["chain"] = entries.map(entryJson);
    hooks.push(shown);
  }
  const document: { [key: string]: PyJson } = {
    spec: harness.spec === null || harness.spec === undefined ? null : pyPath(harness.spec),
    task: harness.task ?? null,
    env: harness.env ?? null,
    hooks,
  };
  for (const key of ["tool", "model"] as const) {
    const value = only[key];
    if (value !== null && value !== undefined) document[key] = value;
  }
  return `${pyJson(document)}\n`;
}

function nodeText(entry: ShownEntry): string {
  const decl = entry.declaration;
  let details = `${decl.band}, ${decl.failMode}`;
  if (decl.timeout !== null) details += `, ${timeoutText(decl.timeout)}`;
  if (hasMatch(decl)) details += `, ${matchText(decl.match)}`;
  if (decl.mode === "audit") details += ", audit";
  return `${entry.name}<br/>${details}`.replaceAll('"', "#quot;");
}

/** A hook point's subgraph, and the ids of its first and last nodes. */
function subgraph(harness: ShownHarness, hook: HookPoint, entries: readonly ShownEntry[]): [string[], string, string] {
  const key = hook.replace(".", "_");
  const texts = entries.length ? entries.map(nodeText) : ["(none)"];
  const ids = texts.map((_, i) => `${key}_${i + 1}`);
  const lines = [`    subgraph ${key}["${hook}: ${heading(harness, hook)}"]`, "        direction LR"];
  texts.forEach((text, i) => lines.push(`        ${ids[i]}["${text}"]`));
  if (ids.length > 1) lines.push(`        ${ids.join(" --> ")}`);
  lines.push("    end");
  return [lines, ids[0] ?? "", ids.at(-1) ?? ""];
}

/** A `flowchart LR` in the style of hook-bus.md's onion diagram: for each operation, its
 * inbound hook point's chain leads into it and its outbound one leads out of it. */
export function renderMermaid(harness: ShownHarness, only: Only = {}): string {
  const chains = chainsOf(harness, only);
  const out = ["flowchart LR"];
  for (const [prefix, operation] of OPERATIONS) {
    const [inbound, outbound] = HOOK_POINTS.filter((hook) => hook.startsWith(`${prefix}.`)) as [HookPoint, HookPoint];
    const [into, , last] = subgraph(harness, inbound, chains.get(inbound) ?? []);
    const [outOf, first] = subgraph(harness, outbound, chains.get(outbound) ?? []);
    out.push(...into, ...outOf, `    ${last} --> ${prefix}_op((${operation})) --> ${first}`);
  }
  return `${out.join("\n")}\n`;
}

/** Whether `value` names one of `FORMATS`. */
export function isFormat(value: unknown): value is Format {
  return typeof value === "string" && (FORMATS as readonly string[]).includes(value);
}

/** The chains of `harness` in one of `FORMATS`; with `only.tool`, the tool hook points show
 * the chain a call of that tool runs, with `only.model`, `model.before` the chain a request
 * to that model runs (I22). */
export function render(harness: ShownHarness, format: Format = "text", only: Only = {}): string {
  if (!isFormat(format)) throw new RangeError(`unknown format '${String(format)}': one of ${FORMATS.join(", ")}`);
  if (format === "json") return renderJson(harness, only);
  if (format === "mermaid") return renderMermaid(harness, only);
  return renderText(harness, only);
}
