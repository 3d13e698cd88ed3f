/**
 * Numbers, JSON and paths written exactly as Python writes them.
 *
 * `harnessweaver hooks` prints byte-identical output from Python and from Node (issue 18), and
 * Python is the reference: its JSON is `json.dumps(doc, indent=2)` (a float's `repr`, such as
 * `2.0` and `1e-05`; `ensure_ascii` escapes), its durations `f"{round(x, n):g}"`, its spec path
 * `str(Path(p))`. JavaScript writes each of these differently, so they are rebuilt here from
 * the exact value of the double (BigInt arithmetic): no rounding happens that Python would not
 * do, and ties round half to even as Python's do.
 */

/** A number that JSON must write as a float (`2.0`), as Python writes a `float`. */
export class PyFloat {
  constructor(readonly value: number) {}
}

/** The JSON values `pyJson` writes; `PyFloat` marks floats, other numbers must be integers. */
export type PyJson = null | boolean | string | number | PyFloat | readonly PyJson[] | { readonly [key: string]: PyJson };

/** A finite non-negative double as `n / 10**k`, exactly. */
interface Exact {
  readonly n: bigint;
  readonly k: number;
}

function exact(x: number): Exact {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, Math.abs(x));
  const bits = view.getBigUint64(0);
  const biased = Number((bits >> 52n) & 0x7ffn);
  const fraction = bits & ((1n << 52n) - 1n);
  const mantissa = biased === 0 ? fraction : fraction | (1n << 52n);
  const exponent = (biased === 0 ? 1 : biased) - 1075;
  // m * 2**e = m * 5**-e / 10**-e when e < 0: every double is a finite decimal.
  return exponent >= 0 ? { n: mantissa << BigInt(exponent), k: 0 } : { n: mantissa * 5n ** BigInt(-exponent), k: -exponent };
}

/** `n / 10**places` rounded to an integer, ties to even (Python's rounding of exact values). */
function roundHalfEven(n: bigint, places: number): bigint {
  if (places <= 0) return n;
  const unit = 10n ** BigInt(places);
  const q = n / unit;
  const twice = (n % unit) * 2n;
  return twice > unit || (twice === unit && q % 2n === 1n) ? q + 1n : q;
}

/** Python's `round(x, digits)` of a finite float: the nearest double to the rounded exact value. */
export function pyRound(x: number, digits: number): number {
  const { n, k } = exact(x);
  if (k <= digits || n === 0n) return x; // already short enough (and -0.0 stays -0.0)
  const rounded = roundHalfEven(n, k - digits);
  const value = Number(`${rounded}e-${digits}`); // decimal parsing is correctly rounded, as strtod
  return x < 0 ? -value : value;
}

function exponentText(exponent: number): string {
  return `e${exponent < 0 ? "-" : "+"}${String(Math.abs(exponent)).padStart(2, "0")}`;
}

/** `digits` (no point) with the point after `exponent + 1` digits: `d.ddd` scaled by 10**exponent. */
function fixed(digits: string, exponent: number): string {
  if (exponent < 0) return `0.${"0".repeat(-exponent - 1)}${digits}`;
  const whole = digits.slice(0, exponent + 1).padEnd(exponent + 1, "0");
  const rest = digits.slice(exponent + 1);
  return rest === "" ? whole : `${whole}.${rest}`;
}

/** Python's `format(x, "g")` of a finite float: 6 significant digits, trailing zeros dropped. */
export function pyG(x: number): string {
  const sign = x < 0 || Object.is(x, -0) ? "-" : "";
  const { n, k } = exact(x);
  if (n === 0n) return `${sign}0`;
  let text = n.toString();
  let exponent = text.length - 1 - k;
  if (text.length > 6) {
    text = roundHalfEven(n, text.length - 6).toString();
    if (text.length > 6) {
      text = text.slice(0, 6); // 999999.5 rounded up to 1000000: one more digit, one more power
      exponent += 1;
    }
  }
  const digits = text.replace(/0+$/, "");
  if (exponent >= -4 && exponent < 6) return sign + fixed(digits, exponent);
  const mantissa = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
  return sign + mantissa + exponentText(exponent);
}

/** Python's `repr` of a float (as `json.dumps` writes it): the shortest digits that read back. */
export function pyFloatRepr(x: number): string {
  if (Number.isNaN(x)) return "NaN";
  if (!Number.isFinite(x)) return x > 0 ? "Infinity" : "-Infinity";
  const sign = x < 0 || Object.is(x, -0) ? "-" : "";
  // toExponential() gives the shortest round-trip digits, as repr picks them.
  const [mantissa = "0", exp = "0"] = Math.abs(x).toExponential().split("e");
  const exponent = Number(exp);
  const digits = mantissa.replace(".", "");
  if (exponent < -4 || exponent >= 16) return sign + mantissa + exponentText(exponent);
  const text = fixed(digits, exponent);
  return sign + (text.includes(".") ? text : `${text}.0`);
}

/** A JSON string as `json.dumps` writes it (`ensure_ascii`): printable ASCII only. */
export function pyJsonString(text: string): string {
  let out = '"';
  for (let i = 0; i < text.length; i += 1) {
    const unit = text.charCodeAt(i); // UTF-16 units: a pair is written as two \u escapes, as Python does
    const ch = text[i] ?? "";
    if (ch === '"' || ch === "\\") out += `\\${ch}`;
    else if (unit >= 0x20 && unit <= 0x7e) out += ch;
    else out += ESCAPES[ch] ?? `\\u${unit.toString(16).padStart(4, "0")}`;
  }
  return `${out}"`;
}

const ESCAPES: Readonly<Record<string, string>> = { "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t" };

function write(value: PyJson, indent: string, out: string[]): void {
  if (value === null) out.push("null");
  else if (typeof value === "boolean") out.push(value ? "true" : "false");
  else if (typeof value === "string") out.push(pyJsonString(value));
  else if (value instanceof PyFloat) out.push(pyFloatRepr(value.value));
  else if (typeof value === "number") out.push(Number.isInteger(value) ? BigInt(value).toString() : pyFloatRepr(value));
  else if (isList(value)) {
    if (value.length === 0) return void out.push("[]");
    const inner = `${indent}  `;
    out.push("[");
    value.forEach((item, i) => {
      out.push(`${i ? "," : ""}\n${inner}`);
      write(item, inner, out);
    });
    out.push(`\n${indent}]`);
  } else {
    const entries = Object.entries(value);
    if (entries.length === 0) return void out.push("{}");
    const inner = `${indent}  `;
    out.push("{");
    entries.forEach(([key, item], i) => {
      out.push(`${i ? "," : ""}\n${inner}${pyJsonString(key)}: `);
      write(item, inner, out);
    });
    out.push(`\n${indent}}`);
  }
}

function isList(value: PyJson): value is readonly PyJson[] {
  return Array.isArray(value);
}

/** `json.dumps(value, indent=2)`: keys in insertion order, floats as `repr`, ASCII only. */
export function pyJson(value: PyJson): string {
  const out: string[] = [];
  write(value, "", out);
  return out.join("");
}

/** `str(PurePosixPath(text))`: empty and `.` parts dropped, no trailing slash; `.` for nothing. */
export function pyPath(text: string): string {
  const leading = text.startsWith("//") && !text.startsWith("///") ? "//" : text.startsWith("/") ? "/" : "";
  const parts = text.split("/").filter((part) => part !== "" && part !== ".");
  const joined = leading + parts.join("/");
  return joined === "" ? "." : joined;
}

/** `PurePosixPath(text).name`: the last part, or "" for a root or `.`. */
export function pyPathName(text: string): string {
  const parts = text.split("/").filter((part) => part !== "" && part !== ".");
  return parts.at(-1) ?? "";
}

const PY_SPACE = /[\t\n\x0b\x0c\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/u;

/** `str.rstrip()`: Python's whitespace, which is not quite JavaScript's `trimEnd`. */
export function pyRstrip(text: string): string {
  return text.replace(PY_SPACE, "");
}

/** `len(text)`: code points, not UTF-16 units. */
export function pyLen(text: string): number {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
}

/** `text.ljust(width)`. */
export function pyLjust(text: string, width: number): string {
  const length = pyLen(text);
  return length >= width ? text : text + " ".repeat(width - length);
}
