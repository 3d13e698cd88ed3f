/**
 * Matchers (I22): which events of its hook points a middleware applies to.
 *
 * The same rules and messages as the Rust core's `matcher.rs`: keys `tool` and `model`,
 * `*`/`?` globs matched against the whole name by code point, case-sensitively; a key absent
 * from the event or not text matches. Checked once, when declared or registered; the registry
 * plans one chain per (hook point, key value).
 */

import type { HookPoint } from "./catalogue.js";
import { valueError, type HarnessweaverError, type Phase } from "./errors.js";
import { isPlainObject } from "./json.js";
import { shown } from "./shown.js";

export const MAX_PATTERNS = 32;
export const MAX_PATTERN_CHARS = 128;
export const MATCH_KEYS = ["tool", "model"] as const;
export type MatchKey = (typeof MATCH_KEYS)[number];

/** A checked matcher: for each key it has, 1 to 32 distinct patterns in the order given. */
export type Matcher = Readonly<Partial<Record<MatchKey, readonly string[]>>>;

/** What `match` may say: a pattern or a list of them per key. */
export type MatchOptions = Readonly<Partial<Record<MatchKey, string | readonly string[]>>>;

/** The key each hook point carries (`model.after`'s event holds no model name). */
export const CARRIED: Readonly<Partial<Record<HookPoint, MatchKey>>> = Object.freeze({
  "tool.before": "tool",
  "tool.after": "tool",
  "model.before": "model",
});

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function isText(value: unknown): value is string {
  return typeof value === "string" && !LONE_SURROGATE.test(value);
}

/** `*` any run of characters, `?` one, everything else itself; the whole name (code points). */
export function globMatch(pattern: string, name: string): boolean {
  const p = Array.from(pattern);
  const n = Array.from(name);
  let pi = 0;
  let ni = 0;
  let star = -1;
  let starN = 0;
  while (ni < n.length) {
    if (pi < p.length && p[pi] === "*") {
      star = pi;
      starN = ni;
      pi += 1;
    } else if (pi < p.length && (p[pi] === "?" || p[pi] === n[ni])) {
      pi += 1;
      ni += 1;
    } else if (star >= 0) {
      pi = star + 1;
      starN += 1;
      ni = starN;
    } else {
      return false;
    }
  }
  return p.slice(pi).every((c) => c === "*");
}

/** The key's text in the caller's event, or null (absent, not text), which matches. */
export function keyValue(key: MatchKey, event: unknown): string | null {
  try {
    const holder = event as { tool?: { name?: unknown }; request?: { model?: unknown } };
    const value = key === "tool" ? holder.tool?.name : holder.request?.model;
    return isText(value) ? value : null;
  } catch {
    return null; // an event built without validation may hold anything (I22)
  }
}

/** Whether a middleware with `matcher` runs on an event of `hook` holding `value`. */
export function admits(matcher: Matcher | null, hook: HookPoint, value: string | null): boolean {
  const key = CARRIED[hook];
  if (matcher === null || key === undefined || value === null) return true;
  const patterns = matcher[key];
  return patterns === undefined || patterns.some((p) => globMatch(p, value));
}

function invalid(phase: Phase, what: string, detail?: string): HarnessweaverError {
  return valueError(phase, "invalid_match", "match", what, detail);
}

function patternsOf(key: MatchKey, value: unknown, phase: Phase): readonly string[] {
  let items: readonly unknown[];
  if (typeof value === "string") items = [value];
  else if (Array.isArray(value)) items = value;
  else throw invalid(phase, shown(value), `match.${key} is a pattern or a list of patterns`);
  if (items.length === 0) throw invalid(phase, "[]", `match.${key} lists at least one pattern`);
  if (items.length > MAX_PATTERNS) {
    throw invalid(phase, `${items.length} patterns`, `match.${key} lists at most ${MAX_PATTERNS} patterns`);
  }
  const patterns: string[] = [];
  for (const item of items) {
    if (!isText(item)) throw invalid(phase, shown(item), "a pattern is text");
    if (item.length === 0) throw invalid(phase, "''", "a pattern holds 1 to 128 characters");
    if (Array.from(item).length > MAX_PATTERN_CHARS) throw invalid(phase, shown(item), "a pattern holds 1 to 128 characters");
    if (!patterns.includes(item)) patterns.push(item);
  }
  return Object.freeze(patterns);
}

function values(value: unknown, phase: Phase): Record<string, readonly string[]> {
  if (!isPlainObject(value)) throw invalid(phase, shown(value));
  const keys = Object.keys(value);
  if (keys.length === 0) throw invalid(phase, "{}", "a matcher names at least one key");
  for (const key of keys) {
    if (!isText(key) || !(MATCH_KEYS as readonly string[]).includes(key)) {
      throw valueError(phase, "unknown_match_key", "match key", shown(key));
    }
  }
  const out: Record<string, readonly string[]> = {};
  for (const key of MATCH_KEYS) if (key in value) out[key] = patternsOf(key, value[key], phase);
  return out;
}

function checkCarried(matcher: Matcher, keys: readonly MatchKey[], hooks: readonly HookPoint[], phase: Phase): void {
  for (const key of keys) {
    if (matcher[key] !== undefined && !hooks.some((hook) => CARRIED[hook] === key)) {
      throw valueError(
        phase,
        "match_key_not_carried",
        "match key",
        shown(key),
        `none of its hook points (${hooks.join(", ")}) carries it; tool is carried by tool.before and tool.after, model by model.before`,
      );
    }
  }
}

/** A declared `match` checked in the order of I22; null/undefined is no matcher. */
export function parseMatcher(value: unknown, hooks: readonly HookPoint[], phase: Phase): Matcher | null {
  if (value === undefined || value === null) return null;
  const matcher = Object.freeze(values(value, phase));
  checkCarried(matcher, MATCH_KEYS, hooks, phase);
  return matcher;
}

function covered(pattern: string, declared: readonly string[]): boolean {
  if (declared.includes(pattern)) return true;
  return !pattern.includes("*") && !pattern.includes("?") && declared.some((d) => globMatch(d, pattern));
}

/** A registration's `match` applied to the declared matcher: it may narrow, never widen. */
export function narrowMatcher(
  declared: Matcher | null,
  value: unknown,
  hooks: readonly HookPoint[],
  middleware: string,
  phase: Phase,
): Matcher | null {
  if (value === undefined || value === null) return declared;
  const given = values(value, phase);
  const result: Record<string, readonly string[]> = { ...(declared ?? {}) };
  const added: MatchKey[] = [];
  for (const key of MATCH_KEYS) {
    const patterns = given[key];
    if (patterns === undefined) continue;
    const old = declared?.[key];
    if (old === undefined) added.push(key);
    else {
      const wide = patterns.find((p) => !covered(p, old));
      if (wide !== undefined) {
        throw valueError(
          phase,
          "match_widened",
          `match.${key} of middleware ${shown(middleware)}`,
          shown(wide),
          `it declares ${old.join(", ")}; a registration may narrow a matcher (a declared pattern, or a name one matches), never widen it`,
        );
      }
    }
    result[key] = patterns;
  }
  checkCarried(result, added, hooks, phase);
  const ordered: Record<string, readonly string[]> = {};
  for (const key of MATCH_KEYS) if (result[key] !== undefined) ordered[key] = result[key];
  return Object.freeze(ordered);
}
