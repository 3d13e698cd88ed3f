/**
 * The fingerprint of a tool call (python's `loops.fingerprint`): the SHA-256 (hex) of the
 * tool's name and the canonical JSON of its arguments, written as Python's
 * `json.dumps([tool, args], sort_keys=True, separators=(",", ":"), ensure_ascii=False)` writes
 * it, so that the two languages give the same hex for the same call: keys sorted by code
 * point, no white space, integral numbers as integers (`2.0` is `2`: a model may write
 * either), other numbers as Python's `repr` of a float (`1e-05`, not `0.00001`).
 *
 * Known difference: an integer beyond 2^53 is exact in Python and rounded by JSON.parse in
 * JavaScript, so two such integers that differ only past double precision are one call here.
 */

import { createHash } from "node:crypto";
import type { JsonObject, JsonValue } from "../json.js";

/** `text` as Python's `repr(float)` writes a finite, non-integral number. */
function pythonFloat(value: number): string {
  const [mantissa = "", exp = "0"] = value.toExponential().split("e"); // shortest round-trip digits
  const negative = mantissa.startsWith("-");
  const digits = mantissa.replace("-", "").replace(".", "");
  const e = Number(exp);
  let out: string;
  if (e < -4 || e >= 16) {
    const shown = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    out = `${shown}e${e < 0 ? "-" : "+"}${String(Math.abs(e)).padStart(2, "0")}`;
  } else if (e < 0) {
    out = `0.${"0".repeat(-e - 1)}${digits}`;
  } else {
    const whole = digits.slice(0, e + 1).padEnd(e + 1, "0");
    const fraction = digits.slice(e + 1);
    out = fraction === "" ? `${whole}.0` : `${whole}.${fraction}`;
  }
  return negative ? `-${out}` : out;
}

function number(value: number): string {
  if (!Number.isFinite(value)) throw new RangeError(`a tool argument is not a finite number: ${value}`);
  // an integral double is written exactly, as Python writes int(x) (String() would round 2**60)
  if (Number.isInteger(value)) return Number.isSafeInteger(value) ? String(value) : BigInt(value).toString();
  return pythonFloat(value);
}

function byCodePoint(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = (x[i]?.codePointAt(0) ?? 0) - (y[i]?.codePointAt(0) ?? 0);
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

/**
 * What Python raises when the canonical JSON holds a lone surrogate (it cannot be encoded as
 * UTF-8): the guard fails, closed, with the same type name in the trace's failure record.
 */
export class UnicodeEncodeError extends Error {
  override readonly name = "UnicodeEncodeError";
}

function text(value: string): string {
  if (!value.isWellFormed()) throw new UnicodeEncodeError("'utf-8' codec can't encode a lone surrogate of a tool argument");
  return JSON.stringify(value);
}

/** `value` as Python's canonical `json.dumps` writes it. */
export function canonicalJson(value: JsonValue): string {
  if (value === null) return "null";
  if (typeof value === "boolean") return value ? "true" : "false";
  if (typeof value === "number") return number(value);
  if (typeof value === "string") return text(value);
  if (Array.isArray(value)) return `[${(value as readonly JsonValue[]).map(canonicalJson).join(",")}]`;
  const object = value as JsonObject;
  const keys = Object.keys(object).sort(byCodePoint);
  return `{${keys.map((key) => `${text(key)}:${canonicalJson(object[key] as JsonValue)}`).join(",")}}`;
}

/** The SHA-256 (hex) of `tool` and the canonical JSON of `args`. */
export function fingerprint(tool: string, args: JsonObject): string {
  return createHash("sha256").update(canonicalJson([tool, args]), "utf8").digest("hex");
}
