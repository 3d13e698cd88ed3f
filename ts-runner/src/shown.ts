/**
 * How error messages show a bad value.
 *
 * The conformance driver compares the observations of every implementation byte for byte
 * (`--require-identical`), error messages included, so every harnessweaver implementation
 * shows a value the same way: text is quoted verbatim in single quotes (no escaping, so the
 * raw value is always a substring of the message); any other value is written in the
 * notation of the reference implementation (Python's `repr` of the JSON value): `True`,
 * `False`, `None`, `42`, `0.5`, `['tool.before', 7]`, `{'a': 1}`. A lone surrogate, which no
 * valid text holds, is written as a `\udcff` escape wherever it appears (I17).
 */

import { isPlainObject } from "./json.js";

/** A value as messages show it: text quoted verbatim, anything else in the shared notation. */
export function shown(value: unknown): string {
  return typeof value === "string" ? `'${value.replace(LONE_SURROGATE, escape)}'` : notation(value);
}

/** A UTF-16 code unit that is half of no surrogate pair. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

function escape(unit: string): string {
  return `\\u${unit.charCodeAt(0).toString(16).padStart(4, "0")}`;
}

function notation(value: unknown): string {
  if (value === null || value === undefined) return "None";
  if (typeof value === "boolean") return value ? "True" : "False";
  if (typeof value === "number") return numberNotation(value);
  if (typeof value === "string") return quoted(value);
  if (typeof value === "bigint") return value.toString();
  if (Array.isArray(value)) return `[${value.map(notation).join(", ")}]`;
  if (value instanceof Set) return value.size ? `{${[...value].map(notation).join(", ")}}` : "set()";
  if (isPlainObject(value)) {
    const items = Object.entries(value).map(([k, v]) => `${quoted(k)}: ${notation(v)}`);
    return `{${items.join(", ")}}`;
  }
  if (typeof value === "function") return `<function ${value.name || "anonymous"}>`;
  const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
  return `<${typeof name === "string" ? name : "object"} object>`;
}

/** Integers as integers; other numbers as Python writes a float (`1e-05`, `1.5e+16`). */
function numberNotation(value: number): string {
  if (Number.isNaN(value)) return "nan";
  if (!Number.isFinite(value)) return value > 0 ? "inf" : "-inf";
  if (Number.isInteger(value)) return BigInt(value).toString();
  const [mantissa = "", exp = "0"] = value.toExponential().split("e");
  const exponent = Number(exp);
  if (exponent < -4 || exponent >= 16) {
    const sign = exponent < 0 ? "-" : "+";
    return `${mantissa}e${sign}${String(Math.abs(exponent)).padStart(2, "0")}`;
  }
  return String(value);
}

/** A string inside a list or dict, quoted as Python's `repr` quotes it. */
function quoted(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let out = "";
  for (const ch of text) {
    const code = ch.codePointAt(0) ?? 0;
    if (ch === "\\" || ch === quote) out += `\\${ch}`;
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, "0")}`;
    else if (code >= 0xd800 && code <= 0xdfff) out += escape(ch);
    else out += ch;
  }
  return `${quote}${out}${quote}`;
}
