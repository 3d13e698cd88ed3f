/**
 * Reading one JSON Lines trace record back, as strictly as the Rust reader and the Python
 * reader (`_pycore/trace.py` `_record`): the problem named is the first one found, in the
 * same order of checks.
 */

import { isHookPoint } from "./catalogue.js";
import { invalidTrace } from "./errors.js";
import { closedCode, isTypeName, MAX_TYPE_NAME, type FailureKind } from "./failure.js";
import { MAX_TOKEN_CHARS, tooLong } from "./outcomes.js";
import { JsonFloat, parseStrict, type Parsed } from "./jsontext.js";
import { shown } from "./shown.js";
import { CONTRACT_RULES } from "./contracts.js";
import { FIELDS, orderedRecord, type TraceRecord } from "./record.js";
import { warningsProblem } from "./warnings.js";

const TEXT_KEYS = ["hook", "kind", "outcome", "middleware", "band", "code", "failure", "error", "fail_mode", "contract"] as const;
type TextKey = (typeof TEXT_KEYS)[number];

const PER_KIND: Readonly<Record<string, readonly TextKey[]>> = {
  outcome: ["middleware", "band"],
  failure: ["middleware", "band", "failure", "error", "fail_mode"],
  hook: [],
};
const ALLOWED: Readonly<Partial<Record<TextKey, readonly string[]>>> = {
  kind: ["outcome", "failure", "hook"],
  outcome: ["continue", "retry", "escalate", "suspend", "block"],
  band: ["baseline", "platform", "app", "task"],
  failure: ["exception", "timeout", "invalid_return", "wrong_event_type", "contract_violation", "cancelled", "deadline", "skipped"],
  fail_mode: ["closed", "open"],
};
const CHECKED: readonly TextKey[] = ["middleware", "band", "failure", "error", "fail_mode"];
const IDENTITY_KEYS = ["input_identity", "enforced_identity"] as const;
const IDENTITY = /^sha256:[0-9a-f]{64}$/;

/** A hook record's identities as read (I27), null ones included; undefined when it has none. */
interface Identities {
  readonly input_identity: string | null;
  readonly enforced_identity: string | null;
}

/** One line → a record; throws the I8 `TraceFormatError` naming the line and the problem. */
export function parseRecord(line: string, number: number): TraceRecord {
  let data: Parsed;
  try {
    data = parseStrict(line);
  } catch (error) {
    throw invalidTrace(number, error instanceof Error ? error.message : String(error));
  }
  if (!(data instanceof Map)) throw invalidTrace(number, "not a JSON object");
  try {
    // Before nulls are dropped (a null identity is present, not absent), and first, as in the Python reader.
    const identities = identitiesOf(data);
    for (const [key, value] of data) if (value === null) data.delete(key); // null means absent
    return checked(data, identities);
  } catch (error) {
    if (error instanceof Problem) throw invalidTrace(number, error.message);
    throw error;
  }
}

class Problem extends Error {}

function show(value: Parsed | undefined): string {
  if (value instanceof JsonFloat) return value.toString();
  return shown(value instanceof Map ? Object.fromEntries(value) : value);
}

function whole(data: Map<string, Parsed>, key: string, fallback: number | null, limit: bigint): number {
  const value = data.has(key) ? data.get(key) : fallback;
  const exact = typeof value === "number" && Number.isInteger(value) ? BigInt(value) : value;
  if (typeof exact !== "bigint" || exact < 0n || exact > limit) throw new Problem(`invalid ${key} ${show(value ?? null)}`);
  return Number(exact);
}

/**
 * I27: a record's identities, taken out of `data`. Only a hook record has them, both or
 * neither, each null or `sha256:` and 64 lowercase hex digits.
 */
function identitiesOf(data: Map<string, Parsed>): Identities | undefined {
  const present = IDENTITY_KEYS.filter((key) => data.has(key));
  if (present[0] === undefined) return undefined;
  if (present.length === 1) throw new Problem(`${present[0]} without its pair: a hook record has both or neither (I27)`);
  if (data.get("kind") !== "hook") throw new Problem("only a hook record has input_identity and enforced_identity (I27)");
  const [input, enforced] = IDENTITY_KEYS.map((key) => {
    const value = data.get(key);
    data.delete(key);
    if (value !== null && !(typeof value === "string" && IDENTITY.test(value))) {
      throw new Problem(`invalid ${key} ${show(value)}: null or sha256: and 64 hex digits (I27)`);
    }
    return value;
  }) as [string | null, string | null];
  return { input_identity: input, enforced_identity: enforced };
}

/** A code within its bound, an error that is a type name (I28): what no implementation records is no trace line. */
function checkNames(code: string | undefined, error: string | undefined): void {
  if (code !== undefined && tooLong(code, MAX_TOKEN_CHARS)) throw new Problem(`invalid code: longer than ${String(MAX_TOKEN_CHARS)} characters (I28)`);
  if (error !== undefined && !isTypeName(error)) {
    throw new Problem(`invalid error: a type name is ASCII identifiers joined by dots, at most ${String(MAX_TYPE_NAME)} characters (I28)`);
  }
}

function checked(data: Map<string, Parsed>, identities: Identities | undefined): TraceRecord {
  const unknown = [...data.keys()].filter((key) => !(FIELDS as readonly string[]).includes(key)).sort();
  if (unknown[0] !== undefined) throw new Problem(`unknown field '${unknown[0]}'`);
  for (const key of ["emit", "hook", "kind", "outcome", "modified"]) {
    if (!data.has(key)) throw new Problem(`missing field '${key}'`);
  }
  const emit = whole(data, "emit", null, 2n ** 64n - 1n);
  if (emit === 0) throw new Problem("emit is an ordinal from 1, not 0");
  if (emit > Number.MAX_SAFE_INTEGER) {
    throw new Problem(`invalid emit ${show(data.get("emit"))}: ordinals end at ${String(Number.MAX_SAFE_INTEGER)} (I19)`);
  }
  const texts: Partial<Record<TextKey, string>> = {};
  for (const key of TEXT_KEYS) {
    const value = data.get(key);
    if (value !== undefined && typeof value !== "string") throw new Problem(`invalid ${key} ${show(value)}`);
    if (value !== undefined) texts[key] = wellFormed(key, value);
  }
  if (!isHookPoint(texts.hook)) throw new Problem(`unknown hook '${texts.hook ?? ""}'`);
  const correlation = correlationOf(data);
  for (const [key, allowed] of Object.entries(ALLOWED) as [TextKey, readonly string[]][]) {
    const value = texts[key];
    if (value !== undefined && !allowed.includes(value)) throw new Problem(`unknown ${key} '${value}'`);
  }
  const modified = data.get("modified");
  if (typeof modified !== "boolean") throw new Problem(`invalid modified ${show(modified)}`);
  const { kind = "", outcome } = texts;
  if (modified && outcome !== "continue") throw new Problem(`modified is true only for a continue, not for '${outcome ?? ""}'`);
  if (texts.code !== undefined && outcome === "continue") throw new Problem("a continue has no code");
  checkNames(texts.code, texts.error);
  const wanted = PER_KIND[kind] ?? [];
  for (const key of CHECKED) {
    if (wanted.includes(key) && texts[key] === undefined) throw new Problem(`a ${kind} record needs ${key}`);
    if (!wanted.includes(key) && texts[key] !== undefined) throw new Problem(`a ${kind} record has no ${key}`);
  }
  if (kind === "failure") checkResolution(texts);
  checkContract(kind, modified, texts);
  const warnings = data.get("warnings");
  if (warnings !== undefined) {
    if (kind !== "outcome") throw new Problem("only an outcome record has warnings (I24)");
    const problem = warningsProblem(warnings);
    if (problem !== undefined) throw new Problem(problem);
  }
  const audit = data.get("audit");
  if (audit !== undefined && audit !== true) throw new Problem("audit is true when present (I25)");
  if (audit !== undefined && kind === "hook") throw new Problem("a hook record has no audit");
  return orderedRecord({
    ...(texts as Omit<TraceRecord, "emit" | "run" | "step" | "tool" | "modified" | "t_ns" | "duration_ns">),
    ...correlation,
    emit,
    modified,
    warnings: warnings === undefined ? undefined : Object.freeze([...(warnings as string[])]),
    audit,
    ...identities,
    t_ns: whole(data, "t_ns", 0, 2n ** 64n - 1n),
    duration_ns: whole(data, "duration_ns", 0, 2n ** 64n - 1n),
  });
}

/**
 * I21: a record's correlation, each field optional (traces written before I21 have none): a
 * run id and a tool name are text, a step an integer from 0 to 2^53 - 1.
 */
/** A text as read: a lone surrogate (an escape such as `\ud800`) is refused, as the Rust
 * core's reader refuses it: no writer writes one (I21 writes U+FFFD in its place). */
function wellFormed(key: string, value: string): string {
  if (!value.isWellFormed()) throw new Problem(`invalid ${key}: it holds a lone surrogate, which no trace writer writes (I21)`);
  return value;
}

function correlationOf(data: Map<string, Parsed>): { run?: string; step?: number; tool?: string } {
  const out: { run?: string; step?: number; tool?: string } = {};
  for (const key of ["run", "tool"] as const) {
    const value = data.get(key);
    if (value === undefined) continue;
    if (typeof value !== "string") throw new Problem(`invalid ${key} ${show(value)}: ${key === "run" ? "a run id" : "a tool name"} is a string (I21)`);
    out[key] = wellFormed(key, value);
  }
  const step = data.get("step");
  if (step !== undefined) {
    if (typeof step !== "number" || !Number.isSafeInteger(step) || step < 0) {
      throw new Problem(`invalid step ${show(step)}: a step is an integer from 0 to ${String(Number.MAX_SAFE_INTEGER)} (I21)`);
    }
    out.step = step;
  }
  return out;
}

/**
 * I14: a contract rule is named by the record of a modification that broke it (a modified
 * outcome record in warn mode, a contract_violation failure record in strict mode), only.
 */
function checkContract(kind: string, modified: boolean, texts: Partial<Record<TextKey, string>>): void {
  const { contract } = texts;
  if (contract !== undefined && !CONTRACT_RULES.includes(contract)) throw new Problem(`unknown contract '${contract}'`);
  const violation = texts.failure === "contract_violation";
  if (kind === "failure" && violation && contract === undefined) throw new Problem("a contract_violation failure record needs contract");
  if (kind === "failure" && !violation && contract !== undefined) throw new Problem("only a contract_violation failure record has a contract");
  if (kind === "outcome" && contract !== undefined && !modified) throw new Problem("only a modified outcome record has a contract");
  if (kind === "hook" && contract !== undefined) throw new Problem("a hook record has no contract");
}

/** A failure record's outcome and code are the resolved ones (I8): closed blocks, open continues. */
function checkResolution(texts: Partial<Record<TextKey, string>>): void {
  const failure = texts.failure as FailureKind;
  const closed = texts.fail_mode === "closed";
  const [outcome, code] = closed ? ["block", closedCode(failure)] : ["continue", undefined];
  if (texts.outcome !== outcome || texts.code !== code) {
    throw new Problem(
      `a ${failure} failure of a fail_mode ${texts.fail_mode ?? ""} middleware is recorded as ${outcome} ` +
        `with code ${code === undefined ? "none" : `'${code}'`}`,
    );
  }
}
