/**
 * A strict JSON reader for trace lines. `JSON.parse` cannot be strict enough: it keeps the
 * last of duplicate keys and turns `1.0` and 18446744073709551615 into the same kind of
 * number as `1`. This reader rejects duplicate keys, keeps integer literals exact (`bigint`
 * beyond 2^53) and marks numbers written with a fraction or exponent as `JsonFloat`, so a
 * trace is read exactly as strictly as the Rust and Python readers read it.
 */

/** A number written with a fraction or an exponent (never a whole-number field). */
export class JsonFloat {
  constructor(readonly value: number) {}
  toString(): string {
    return Number.isInteger(this.value) ? this.value.toFixed(1) : String(this.value);
  }
}

export type Parsed = null | boolean | string | number | bigint | JsonFloat | Parsed[] | Map<string, Parsed>;

const NUMBER = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;
const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;
const SPACE = /[ \t\n\r]*/y;

/**
 * How deeply arrays and objects may nest (the text itself is 1). A trace record nests 2 deep;
 * the bound keeps this recursive reader far from the end of the stack, so a line nested
 * 100,000 deep is refused as nested too deeply, not with whatever the stack's end throws (I32).
 */
export const MAX_DEPTH = 64;

/** Parses one JSON text; throws a SyntaxError naming the column of the first fault. */
export function parseStrict(text: string): Parsed {
  const reader = new Reader(text);
  const value = reader.value();
  reader.space();
  if (reader.at < text.length) reader.fail("extra data");
  return value;
}

class Reader {
  at = 0;
  private depth = 0;
  constructor(private readonly text: string) {}

  fail(problem: string): never {
    throw new SyntaxError(`${problem} at column ${this.at + 1}`);
  }

  space(): void {
    SPACE.lastIndex = this.at;
    SPACE.exec(this.text);
    this.at = SPACE.lastIndex;
  }

  private match(pattern: RegExp): RegExpExecArray | null {
    pattern.lastIndex = this.at;
    const found = pattern.exec(this.text);
    if (found !== null) this.at = pattern.lastIndex;
    return found;
  }

  private literal(word: string): boolean {
    if (!this.text.startsWith(word, this.at)) return false;
    this.at += word.length;
    return true;
  }

  value(): Parsed {
    this.space();
    const ch = this.text[this.at];
    if (ch === "{" || ch === "[") {
      if (this.depth === MAX_DEPTH) this.fail(`arrays and objects nest more than ${String(MAX_DEPTH)} deep`);
      this.depth += 1;
      const inner = ch === "{" ? this.object() : this.array();
      this.depth -= 1;
      return inner;
    }
    if (ch === '"') return this.string();
    if (this.literal("true")) return true;
    if (this.literal("false")) return false;
    if (this.literal("null")) return null;
    const number = this.match(NUMBER);
    if (number === null) this.fail("expected a value");
    if (number[1] !== undefined || number[2] !== undefined) return new JsonFloat(Number(number[0]));
    const whole = BigInt(number[0]);
    return whole >= BigInt(Number.MIN_SAFE_INTEGER) && whole <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(whole) : whole;
  }

  private string(): string {
    const found = this.match(STRING);
    if (found === null) this.fail("invalid string");
    return JSON.parse(found[0]) as string;
  }

  private array(): Parsed[] {
    this.at += 1;
    const items: Parsed[] = [];
    this.space();
    if (this.literal("]")) return items;
    for (;;) {
      items.push(this.value());
      this.space();
      if (this.literal("]")) return items;
      if (!this.literal(",")) this.fail("expected , or ]");
    }
  }

  private object(): Map<string, Parsed> {
    this.at += 1;
    const members = new Map<string, Parsed>();
    this.space();
    if (this.literal("}")) return members;
    for (;;) {
      this.space();
      if (this.text[this.at] !== '"') this.fail("expected a key");
      const key = this.string();
      if (members.has(key)) this.fail(`duplicate field '${key}'`);
      this.space();
      if (!this.literal(":")) this.fail("expected :");
      members.set(key, this.value());
      this.space();
      if (this.literal("}")) return members;
      if (!this.literal(",")) this.fail("expected , or }");
    }
  }
}
