/**
 * Python regular expressions, run by JavaScript's engine: a translation to a `v`-mode RegExp.
 *
 * A harness spec is shared by the Python and the TypeScript loaders, so the `patterns` of
 * `redact_pii` and `redact_secrets` are written in Python's dialect (`re`), and must redact
 * exactly the same spans here. Both engines backtrack the same way (leftmost, first
 * alternative first); the dialects differ in what some tokens mean, which this module
 * rewrites into explicit JavaScript:
 *
 * - `\w`, `\d`, `\s`, `\b` are Unicode-aware in Python (`\w` is a letter, a number or `_`;
 *   `\d` a decimal digit; `\s` includes `\x1c`-`\x1f` and `\x85` but not U+FEFF); in
 *   JavaScript they are ASCII-only, or another set. Flag `(?a)` gives Python's ASCII sets.
 * - `.` leaves out only `\n` in Python (JavaScript also leaves out `\r`, U+2028, U+2029);
 *   `$` also matches before a final `\n`; `^`/`$` under `(?m)` see only `\n` as a line end.
 * - `\A`, `\Z`, `(?P<name>…)`, `(?P=name)`, `{,n}`, `(?#…)`, `(?x)`, `\a`, octal escapes, and
 *   a `{` or `]` that is a literal (JavaScript's `u`/`v` modes refuse them) are rewritten.
 *
 * - IGNORECASE (`(?i)`, scoped `(?i:…)`) folds as Python's does, which JavaScript's `i` flag
 *   does not (`casefold.ts`): literals and classes are written as explicit sets.
 *
 * - Atomic groups `(?>X)` and possessive quantifiers `X*+` are `(?=(?<h>X))\k<h>`: a
 *   JavaScript look-ahead never backtracks into what it matched.
 *
 * What JavaScript cannot express (a possessive quantifier on a group, conditionals, `\N{…}`,
 * a back-reference under IGNORECASE) is refused with an error naming the construct, rather than
 * translated into something that would redact other spans. Every literal character is
 * written as `\u{…}`, so no character can take a meaning in `v` mode that it had not in
 * Python.
 */

interface Flags {
  readonly i: boolean;
  readonly m: boolean;
  readonly s: boolean;
  readonly x: boolean;
  readonly a: boolean;
}

const UNICODE_WORD = String.raw`[\p{L}\p{N}_]`;
const ASCII_WORD = "[A-Za-z0-9_]";
// str.isspace(): what Python's \s matches in a str pattern.
const UNICODE_SPACE = String.raw`[\u{9}-\u{d}\u{1c}-\u{20}\u{85}\u{a0}\u{1680}\u{2000}-\u{200a}\u{2028}\u{2029}\u{202f}\u{205f}\u{3000}]`;
const ASCII_SPACE = String.raw`[\u{9}-\u{d}\u{20}]`;
const START = String.raw`(?<![\s\S])`;
const END = String.raw`(?![\s\S])`;

/** A pattern of Python's `re` dialect that cannot be run the same way by JavaScript. */
import { lowered, matching, matchingSpans, ranges } from "./casefold.js";

export class PythonRegexError extends Error {
  override readonly name = "PythonRegexError";
}

function cpLength(text: string): number {
  return [...text].length;
}

/** A literal code point, written so that no dialect gives it a meaning. */
function lit(cp: number): string {
  const c = String.fromCodePoint(cp);
  return /^[A-Za-z0-9]$/.test(c) ? c : `\\u{${cp.toString(16)}}`;
}

function classes(flags: Flags): Record<string, string> {
  const word = flags.a ? ASCII_WORD : UNICODE_WORD;
  const digit = flags.a ? "[0-9]" : String.raw`[\p{Nd}]`;
  const space = flags.a ? ASCII_SPACE : UNICODE_SPACE;
  const not = (set: string) => `[^${set.slice(1, -1)}]`;
  return { w: word, W: not(word), d: digit, D: not(digit), s: space, S: not(space) };
}

/** An open group: what closing it restores and checks. */
interface Frame {
  readonly outer: Flags;
  readonly kind: "top" | "group" | "capture" | "lookahead" | "lookbehind" | "atomic";
  readonly number: number | null;
  readonly name: string | null;
  /** An atomic group's helper group (JavaScript has no atomic groups: a look-ahead is one). */
  readonly helper: string | null;
  /** The widths of the alternatives so far (null: not fixed), and of the current one. */
  readonly alternatives: (number | null)[];
  width: number | null;
}

/** Python's rules that JavaScript does not check: look-behinds of fixed width, references to closed groups. */
class Translator {
  readonly #cps: number[];
  #pos = 0;
  #flags: Flags = { i: false, m: false, s: false, x: false, a: false };
  readonly #frames: Frame[] = [];
  #groups = 0;
  readonly #closed = new Set<number>();
  readonly #names = new Map<string, number>();
  /** JavaScript numbers every capture group, helpers included: Python's number → JavaScript's. */
  readonly #jsNumbers = new Map<number, number>();
  #jsGroups = 0;
  #helpers = 0;

  constructor(pattern: string) {
    this.#cps = [...pattern].map((c) => c.codePointAt(0) ?? 0);
  }

  get flags(): Flags {
    return this.#flags;
  }

  get #frame(): Frame {
    return this.#frames[this.#frames.length - 1] as Frame;
  }

  #peek(offset = 0): string | undefined {
    const cp = this.#cps[this.#pos + offset];
    return cp === undefined ? undefined : String.fromCodePoint(cp);
  }

  #rest(): string {
    return String.fromCodePoint(...this.#cps.slice(this.#pos));
  }

  #fail(what: string): never {
    throw new PythonRegexError(`${what} (at position ${this.#pos}) has no JavaScript equivalent`);
  }

  #bad(what: string): never {
    throw new PythonRegexError(`${what} at position ${this.#pos}`);
  }

  translate(): string {
    this.#leadingFlags();
    this.#frames.push({ outer: this.#flags, kind: "top", number: null, name: null, helper: null, alternatives: [], width: 0 });
    let out = "";
    while (this.#pos < this.#cps.length) out += this.#atom();
    if (this.#frames.length > 1) this.#bad("missing ), unterminated subpattern");
    return out;
  }

  /** `(?aimsx)` at the very start sets flags for the whole pattern, as Python allows. */
  #leadingFlags(): void {
    for (;;) {
      const m = /^\(\?([aiLmsux]+)\)/.exec(String.fromCodePoint(...this.#cps.slice(this.#pos, this.#pos + 12)));
      if (m === null || m[1] === undefined) return;
      this.#flags = this.#withFlags(this.#flags, m[1], "");
      this.#pos += m[0].length;
    }
  }

  #withFlags(base: Flags, on: string, off: string): Flags {
    if (on.includes("L")) this.#fail("flag L (locale)");
    const set = (f: keyof Flags) => (on.includes(f) ? true : off.includes(f) ? false : base[f]);
    return { i: set("i"), m: set("m"), s: set("s"), x: set("x"), a: on.includes("u") ? false : set("a") };
  }

  /** Adds `width` to the current alternative (null: not fixed). */
  #grow(width: number | null): void {
    const frame = this.#frame;
    frame.width = frame.width === null || width === null ? null : frame.width + width;
  }

  #atom(): string {
    const c = this.#peek() as string;
    if (this.#flags.x) {
      if (" \t\n\r\f\v".includes(c)) {
        this.#pos++;
        return "";
      }
      if (c === "#") {
        while (this.#pos < this.#cps.length && this.#peek() !== "\n") this.#pos++;
        return "";
      }
    }
    switch (c) {
      case "\\": {
        // an assertion (\b \B \A \Z) takes no quantifier, as in Python ("nothing to repeat")
        if ("bBAZ".includes(this.#peek(1) ?? "")) return this.#escape();
        const ref = /^\\([1-9][0-9]?)/.exec(this.#rest());
        if (ref !== null && !/^\\[0-7]{3}/.test(this.#rest())) return this.#quantified(this.#reference(ref), null);
        return this.#quantified(this.#escape(), 1);
      }
      case "[":
        return this.#quantified(this.#charClass(), 1);
      case "(":
        return this.#group();
      case ")":
        return this.#close();
      case "|": {
        this.#pos++;
        const frame = this.#frame;
        frame.alternatives.push(frame.width);
        frame.width = 0;
        return "|";
      }
      case ".":
        this.#pos++;
        return this.#quantified(this.#flags.s ? String.raw`[\s\S]` : String.raw`[^\n]`, 1);
      case "^":
        this.#pos++;
        return this.#flags.m ? String.raw`(?:${START}|(?<=\n))` : START;
      case "$":
        this.#pos++;
        return this.#flags.m ? String.raw`(?=\n|${END})` : String.raw`(?=\n?${END})`;
      case "*":
      case "+":
      case "?":
        this.#bad("nothing to repeat");
      // eslint-disable-next-line no-fallthrough
      case "{":
        if (this.#quantifier() !== null) this.#bad("nothing to repeat");
        this.#pos++;
        return this.#quantified(this.#literal(0x7b), 1);
      default:
        this.#pos++;
        return this.#quantified(this.#literal(c.codePointAt(0) ?? 0), 1);
    }
  }

  /** `\N`: a reference to group N, which must be closed already (Python's rule). */
  #reference(ref: RegExpExecArray): string {
    if (this.#flags.i) this.#fail("a back-reference under IGNORECASE");
    const number = Number(ref[1]);
    if (!this.#closed.has(number)) {
      this.#bad(number <= this.#groups ? "cannot refer to an open group" : `invalid group reference ${number}`);
    }
    this.#pos += ref[0].length;
    return `(?:\\${this.#jsNumbers.get(number) as number})`;
  }

  /** An optional quantifier after an atom of `width`; `{` that is no quantifier is a literal. */
  #quantified(atom: string, width: number | null): string {
    if (this.#flags.x) this.#skipVerbose();
    const q = this.#quantifier();
    if (q === null) {
      this.#grow(width);
      return atom;
    }
    let out = q;
    const lazy = this.#peek() === "?";
    if (lazy) {
      this.#pos++;
      out += "?";
    }
    const possessive = !lazy && this.#peek() === "+";
    if (possessive) {
      if (atom.endsWith(")") && !atom.startsWith("(")) this.#fail("a possessive quantifier on a group");
      this.#pos++;
    }
    if (/^[*+?{]$/.test(this.#peek() ?? "") && this.#quantifier(true) !== null) this.#bad("multiple repeat");
    const exact = /^\{([0-9]+)\}$/.exec(q) ?? /^\{([0-9]+),\1\}$/.exec(q);
    this.#grow(exact !== null && width !== null ? width * Number(exact[1]) : null);
    if (atom.endsWith(")") && !atom.startsWith("(")) return atom + out; // the close of a group opened earlier
    const repeated = `(?:${atom})${out}`;
    return possessive ? this.#atomic(repeated) : repeated; // X*+ is (?>X*)
  }

  /** `(?>X)` in JavaScript: a look-ahead is atomic, and a back-reference takes what it matched. */
  #atomic(inner: string): string {
    // "$" is in no Python group name, so a helper never clashes with one of the pattern's
    const helper = `$atomic${++this.#helpers}`;
    this.#jsGroups += 1;
    return `(?:(?=(?<${helper}>${inner}))\\k<${helper}>)`;
  }

  #skipVerbose(): void {
    for (;;) {
      const c = this.#peek();
      if (c !== undefined && " \t\n\r\f\v".includes(c)) this.#pos++;
      else if (c === "#") while (this.#pos < this.#cps.length && this.#peek() !== "\n") this.#pos++;
      else return;
    }
  }

  /** The quantifier at the position, consumed (unless `look`), or null. */
  #quantifier(look = false): string | null {
    const c = this.#peek();
    if (c === "*" || c === "+" || c === "?") {
      if (!look) this.#pos++;
      return c;
    }
    if (c !== "{") return null;
    const rest = String.fromCodePoint(...this.#cps.slice(this.#pos, this.#pos + 40));
    const m = /^\{([0-9]*)(,([0-9]*))?\}/.exec(rest);
    if (m === null || (m[1] === "" && m[2] === undefined)) return null;
    const low = m[1] === "" ? "0" : (m[1] as string);
    if (m[2] !== undefined && m[3] !== "" && Number(m[3]) < Number(low)) this.#bad("min repeat greater than max repeat");
    if (!look) this.#pos += m[0].length;
    return m[2] === undefined ? `{${low}}` : `{${low},${m[3] ?? ""}}`;
  }

  #group(): string {
    const rest = this.#rest();
    if (!rest.startsWith("(?")) {
      this.#groups += 1;
      this.#jsNumbers.set(this.#groups, ++this.#jsGroups);
      return this.#open(1, "(", "capture", this.#groups, null);
    }
    const tail = rest.slice(2);
    if (tail.startsWith("#")) {
      const close = rest.indexOf(")");
      if (close < 0) this.#bad("missing ), unterminated comment");
      this.#pos += cpLength(rest.slice(0, close + 1));
      return "";
    }
    if (tail.startsWith(":")) return this.#open(3, "(?:", "group", null, null);
    for (const start of ["=", "!"]) if (tail.startsWith(start)) return this.#open(3, `(?${start}`, "lookahead", null, null);
    for (const start of ["<=", "<!"]) if (tail.startsWith(start)) return this.#open(4, `(?${start}`, "lookbehind", null, null);
    let m = /^P<([^>]*)>/.exec(tail);
    if (m !== null) {
      const name = m[1] as string;
      if (!/^[\p{L}_][\p{L}\p{N}_]*$/u.test(name)) this.#bad(`bad character in group name '${name}'`);
      if (this.#names.has(name)) this.#bad(`redefinition of group name '${name}'`);
      this.#groups += 1;
      this.#jsNumbers.set(this.#groups, ++this.#jsGroups);
      this.#names.set(name, this.#groups);
      return this.#open(2 + cpLength(m[0]), `(?<${name}>`, "capture", this.#groups, name);
    }
    m = /^P=([^)]*)\)/.exec(tail);
    if (m !== null) {
      const number = this.#names.get(m[1] as string);
      if (number === undefined) this.#bad(`unknown group name '${m[1]}'`);
      if (!this.#closed.has(number)) this.#bad("cannot refer to an open group");
      if (this.#flags.i) this.#fail("a back-reference under IGNORECASE");
      this.#pos += 2 + cpLength(m[0]);
      return this.#quantified(`\\k<${m[1]}>`, null);
    }
    m = /^([aiLmsux]*)(?:-([imsx]+))?:/.exec(tail);
    if (m !== null && (m[1] !== "" || m[2] !== undefined)) {
      const flags = this.#withFlags(this.#flags, m[1] as string, m[2] ?? "");
      const js = this.#open(2 + m[0].length, "(?:", "group", null, null);
      this.#flags = flags;
      return js;
    }
    if (tail.startsWith(">")) {
      // "$" is in no Python group name, so a helper never clashes with one of the pattern's
    const helper = `$atomic${++this.#helpers}`;
      this.#jsGroups += 1;
      this.#pos += 3;
      this.#frames.push({ outer: this.#flags, kind: "atomic", number: null, name: null, helper, alternatives: [], width: 0 });
      return `(?:(?=(?<${helper}>`;
    }
    if (tail.startsWith("(")) this.#fail("a conditional group (?(...)...)");
    if (/^[aiLmsux]+\)/.test(tail)) this.#bad("global flags not at the start of the expression");
    this.#bad(`unknown extension ?${tail.slice(0, 1)}`);
  }

  #open(length: number, js: string, kind: Frame["kind"], number: number | null, name: string | null): string {
    this.#pos += length;
    this.#frames.push({ outer: this.#flags, kind, number, name, helper: null, alternatives: [], width: 0 });
    return js;
  }

  #close(): string {
    if (this.#frames.length <= 1) this.#bad("unbalanced parenthesis");
    const frame = this.#frames.pop() as Frame;
    const widths = [...frame.alternatives, frame.width];
    const width = widths.every((w) => w !== null && w === widths[0]) ? (widths[0] as number) : null;
    if (frame.kind === "lookbehind" && width === null) this.#bad("look-behind requires fixed-width pattern");
    if (frame.number !== null) this.#closed.add(frame.number);
    this.#flags = frame.outer;
    this.#pos++;
    const look = frame.kind === "lookahead" || frame.kind === "lookbehind";
    const close = frame.helper === null ? ")" : `))\\k<${frame.helper}>)`;
    return this.#quantified(close, look ? 0 : width);
  }

  /** An escape outside a class. */
  #escape(): string {
    this.#pos++;
    const c = this.#peek();
    if (c === undefined) this.#bad("bad escape (end of pattern)");
    const sets = classes(this.#flags);
    if ("wWdDsS".includes(c)) {
      this.#pos++;
      return sets[c] as string;
    }
    const word = sets["w"] as string;
    switch (c) {
      case "b":
        this.#pos++;
        return `(?:(?<=${word})(?!${word})|(?<!${word})(?=${word}))`;
      case "B":
        // Python (before 3.14) never finds \B in an empty string
        this.#pos++;
        return String.raw`(?:(?=[\s\S])|(?<=[\s\S]))` + `(?:(?<=${word})(?=${word})|(?<!${word})(?!${word}))`;
      case "A":
        this.#pos++;
        return START;
      case "Z":
        this.#pos++;
        return END;
    }
    if (/^[1-7]$/.test(c)) {
      const digits = String.fromCodePoint(...this.#cps.slice(this.#pos, this.#pos + 3));
      this.#pos += 3; // three octal digits (a reference was taken before)
      return this.#literal(this.#octalValue(digits));
    }
    return this.#literal(this.#charEscape());
  }

  #octalValue(digits: string): number {
    const cp = parseInt(digits, 8);
    if (cp > 0o377) this.#bad(`octal escape value \\${digits} outside of range 0-0o377`);
    return cp;
  }

  /** A literal character; under IGNORECASE, the class of every character Python matches with it. */
  #literal(cp: number): string {
    if (!this.#flags.i) return lit(cp);
    const all = matching(lowered([cp], this.#flags.a), this.#flags.a);
    return all.length === 1 && all[0] === cp ? lit(cp) : `[${ranges(all, lit)}]`;
  }

  /** An escape that stands for one character (the backslash consumed); its code point. */
  #charEscape(): number {
    const c = this.#peek() as string;
    this.#pos++;
    const simple: Record<string, number> = { n: 10, t: 9, r: 13, f: 12, v: 11, a: 7 };
    if (c in simple) return simple[c] as number;
    const hex = (n: number): number => {
      const digits = String.fromCodePoint(...this.#cps.slice(this.#pos, this.#pos + n));
      if (!new RegExp(`^[0-9a-fA-F]{${n}}$`).test(digits)) this.#bad(`incomplete escape \\${c}${digits}`);
      this.#pos += n;
      const cp = parseInt(digits, 16);
      if (cp > 0x10ffff) this.#bad(`bad escape \\${c}${digits}`);
      return cp;
    };
    if (c === "x") return hex(2);
    if (c === "u") return hex(4);
    if (c === "U") return hex(8);
    if (c === "0") {
      const more = /^[0-7]{0,2}/.exec(String.fromCodePoint(...this.#cps.slice(this.#pos, this.#pos + 2)))?.[0] ?? "";
      this.#pos += more.length;
      return parseInt(`0${more}`, 8);
    }
    if (c === "N") this.#fail("a named character \\N{...}");
    if (/^[A-Za-z0-9]$/.test(c)) this.#bad(`bad escape \\${c}`);
    return c.codePointAt(0) ?? 0;
  }

  /** `[...]`: a class, each member written so that `v` mode reads it as Python did. */
  #charClass(): string {
    this.#pos++;
    let out = "[";
    if (this.#peek() === "^") {
      out += "^";
      this.#pos++;
    }
    const spans: [number, number][] = [];
    let first = true;
    for (;;) {
      const c = this.#peek();
      if (c === undefined) this.#bad("unterminated character set");
      if (c === "]" && !first) {
        this.#pos++;
        return `${out}${this.#members(spans)}]`;
      }
      first = false;
      let low: number;
      if (c === "\\") {
        this.#pos++;
        const e = this.#peek();
        const sets = classes(this.#flags);
        if (e !== undefined && "wWdDsS".includes(e)) {
          this.#pos++;
          if (this.#peek() === "-" && this.#peek(1) !== "]" && this.#peek(1) !== undefined) this.#bad(`bad character range \\${e}-`);
          out += sets[e] as string;
          continue;
        }
        if (e === "b") {
          this.#pos++;
          low = 8;
        } else if (e !== undefined && /^[1-7]$/.test(e)) {
          const digits = /^[0-7]{1,3}/.exec(String.fromCodePoint(...this.#cps.slice(this.#pos, this.#pos + 3)))?.[0] as string;
          this.#pos += digits.length;
          low = parseInt(digits, 8);
          if (low > 0o377) this.#bad(`octal escape value \\${digits} outside of range 0-0o377`);
        } else {
          low = this.#charEscape();
        }
      } else {
        this.#pos++;
        low = c.codePointAt(0) ?? 0;
      }
      if (this.#peek() === "-" && this.#peek(1) !== "]" && this.#peek(1) !== undefined) {
        this.#pos++;
        let high: number;
        if (this.#peek() === "\\") {
          this.#pos++;
          const e = this.#peek() as string;
          if ("wWdDsS".includes(e)) this.#bad(`bad character range ${String.fromCodePoint(low)}-\\${e}`);
          high = e === "b" ? (this.#pos++, 8) : this.#charEscape();
        } else {
          high = this.#peek()?.codePointAt(0) ?? 0;
          this.#pos++;
        }
        if (high < low) this.#bad("bad character range");
        spans.push([low, high]);
      } else {
        spans.push([low, low]);
      }
    }
  }
  /** A class's characters and ranges; under IGNORECASE, every character Python matches with them. */
  #members(spans: readonly (readonly [number, number])[]): string {
    if (!this.#flags.i) return spans.map(([low, high]) => (low === high ? lit(low) : `${lit(low)}-${lit(high)}`)).join("");
    const size = spans.reduce((total, [low, high]) => total + high - low + 1, 0);
    if (!this.#flags.a && size > 4096) return ranges(matchingSpans(spans), lit); // a bitmap beats a Set for wide ranges
    function* each(): Generator<number> {
      for (const [low, high] of spans) for (let cp = low; cp <= high; cp++) if (cp < 0xd800 || cp > 0xdfff) yield cp;
    }
    return ranges(matching(lowered(each(), this.#flags.a), this.#flags.a), lit);
  }

}

/** The JavaScript source and flags that run the Python pattern `pattern` the same way. */
export function translate(pattern: string): { readonly source: string; readonly flags: string } {
  const t = new Translator(pattern);
  const source = t.translate();
  // IGNORECASE is spelled out in the source (casefold.ts): JavaScript's i flag folds otherwise
  return { source, flags: "v" };
}

/**
 * The Python pattern `pattern` compiled for JavaScript, global (for replace-all); a
 * `PythonRegexError` or `SyntaxError` when it cannot be.
 */
export function compilePython(pattern: string, extraFlags = "g"): RegExp {
  const { source, flags } = translate(pattern);
  return new RegExp(source, flags + extraFlags);
}
