import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { Block, Continue, MAX_WARNING_CHARS, MAX_WARNINGS, Retry, Trace, TraceFormatError } from "../index.js";
import { CUT_MARK, judgeWarnings, INVALID } from "../warnings.js";
import { harness, toolCall, untimed } from "../testing/support.js";

const EMOJI = "\u{1F600}"; // two UTF-16 units, one code point

describe("warnings (I24)", () => {
  it("reach the result in run order, frozen; a result without any shares one empty array", async () => {
    const { bus, context, add } = harness();
    add("first", () => Continue(null, { warnings: ["one", "two"] }));
    add("second", () => Retry("later", { warnings: ["three"] }));
    const result = await bus.emit("tool.before", toolCall(), context);
    assert.deepEqual(result.warnings, [
      { middleware: "first", text: "one" },
      { middleware: "first", text: "two" },
      { middleware: "second", text: "three" },
    ]);
    assert.ok(Object.isFrozen(result.warnings) && result.warnings.every((w) => Object.isFrozen(w)));
    const plain = harness();
    plain.add("quiet");
    const a = await plain.bus.emit("tool.before", toolCall(), plain.context);
    const b = await plain.bus.emit("tool.before", toolCall(), plain.context);
    assert.equal(a.warnings.length, 0);
    assert.equal(a.warnings, b.warnings); // the shared empty array: nothing made per emit
  });

  it("are cut by code points, never splitting a surrogate pair", () => {
    const kept = judgeWarnings([EMOJI.repeat(MAX_WARNING_CHARS + 1), EMOJI.repeat(MAX_WARNING_CHARS)]);
    assert.ok(Array.isArray(kept));
    const [cut, whole] = kept as readonly string[];
    assert.equal([...(cut as string)].length, MAX_WARNING_CHARS);
    assert.ok((cut as string).endsWith(EMOJI + CUT_MARK));
    assert.ok((cut as string).isWellFormed());
    assert.equal(whole, EMOJI.repeat(MAX_WARNING_CHARS));
  });

  it("keep at most eight non-empty texts; anything but an array of well-formed strings is invalid", () => {
    const many = Array.from({ length: 12 }, (_, i) => `w${String(i)}`);
    assert.deepEqual(judgeWarnings(["", ...many]), many.slice(0, MAX_WARNINGS));
    assert.equal(judgeWarnings(["", ""]), undefined);
    for (const bad of ["text", 5, { 0: "a", length: 1 }, ["a", 1], [...many, null], ["\uD800"]]) {
      assert.equal(judgeWarnings(bad), INVALID, JSON.stringify(bad));
    }
  });

  it("bound any array of strings (property)", () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: "grapheme", maxLength: 300 }), { maxLength: 12 }), (texts) => {
        const kept = judgeWarnings(texts);
        const expected = texts.filter((t) => t !== "");
        if (expected.length === 0) return kept === undefined;
        const list = kept as readonly string[];
        return (
          list.length === Math.min(expected.length, MAX_WARNINGS) &&
          list.every((t, i) => {
            const chars = [...(expected[i] as string)];
            return chars.length <= MAX_WARNING_CHARS ? t === expected[i] : [...t].length === MAX_WARNING_CHARS && t.endsWith(CUT_MARK);
          })
        );
      }),
    );
  });

  it("of an invalid answer never reach the result or the trace", async () => {
    const { bus, context, add } = harness();
    add("sloppy", () => Block("no", { warnings: "hidden" as unknown as string[] }), { failMode: "open" });
    const result = await bus.emit("tool.before", toolCall(), context);
    assert.deepEqual(result.warnings, []);
    assert.equal(untimed(context.trace)[0]?.["failure"], "invalid_return");
    assert.ok(!context.trace.toJSONL().includes("hidden"));
  });

  it("are written to an outcome record only, and read back", async () => {
    const { bus, context, add } = harness();
    add("advisor", () => Continue(null, { warnings: ["watch \"this\""] }));
    await bus.emit("tool.before", toolCall(), context);
    const text = context.trace.toJSONL();
    assert.equal(untimed(context.trace)[0]?.["warnings"]?.toString(), 'watch "this"');
    assert.equal(untimed(context.trace)[1]?.["warnings"], undefined);
    assert.equal(Trace.fromJSONL(text).toJSONL(), text);
    const line = (extra: string, kind = "outcome") =>
      `{"emit":1,"hook":"tool.before","kind":"${kind}",${kind === "hook" ? "" : '"middleware":"m","band":"app",'}"outcome":"continue","modified":false${extra}}\n`;
    for (const bad of [line(',"warnings":["a"]', "hook"), line(',"warnings":[]'), line(',"warnings":[""]'), line(',"warnings":["x"]'.replace("x", "x".repeat(257)))]) {
      assert.throws(() => Trace.fromJSONL(bad), TraceFormatError, bad);
    }
  });
});

describe("hostile warnings (I29)", () => {
  const SECRET = "hostile-message-7f3a";
  const boom = (): never => {
    throw new Error(SECRET);
  };

  it("read an array by index, never through an iterator a subclass overrides", async () => {
    class Lying extends Array<unknown> {
      override [Symbol.iterator](): ArrayIterator<unknown> {
        return boom();
      }
    }
    const given = Lying.from(["careful"]);
    const { bus, context, add } = harness();
    add("m", () => Continue(null, { warnings: given as unknown as string[] }));
    const result = await bus.emit("tool.before", toolCall(), context);
    assert.deepEqual(result.warnings, [{ middleware: "m", text: "careful" }]);
  });

  it("that throw while read, or are a Proxy, are an invalid return and leak nothing", async () => {
    const getter: unknown[] = ["ok"];
    Object.defineProperty(getter, 1, { get: boom, enumerable: true });
    const proxy = new Proxy(["ok"], { get: boom });
    const claims = new Proxy(["ok"], {}); // even a Proxy that only forwards: its traps may lie
    for (const given of [getter, proxy, claims]) {
      const { bus, context, add } = harness();
      add("m", () => Continue(null, { warnings: given as string[] }));
      const result = await bus.emit("tool.before", toolCall(), context);
      assert.equal(result.outcome.kind, "block");
      const records = untimed(context.trace);
      assert.equal(records[0]?.["failure"], "invalid_return");
      assert.ok(!JSON.stringify(records).includes(SECRET));
    }
  });

  it("check a long text once however often it is given: the work is bounded", () => {
    const long = "\u0100".repeat(10_000);
    const original = Object.getOwnPropertyDescriptor(String.prototype, "isWellFormed");
    let checks = 0;
    const counted = function (this: string): boolean {
      checks += 1;
      return (original?.value as (this: string) => boolean).call(this);
    };
    Object.defineProperty(String.prototype, "isWellFormed", { ...original, value: counted });
    try {
      const kept = judgeWarnings(Array<string>(10_000).fill(long));
      assert.ok(Array.isArray(kept) && kept.length === MAX_WARNINGS);
    } finally {
      Object.defineProperty(String.prototype, "isWellFormed", original as PropertyDescriptor);
    }
    assert.equal(checks, 1);
  });
});
