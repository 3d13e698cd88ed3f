// redact_pii and redact_secrets in TypeScript: the same spans as Python's. The tables below
// are Python's own output (python/harnessweaver/builtins/pii.py's RedactPii().redact and
// re.sub for patterns of Python's dialect), written here by a one-off script; the examples
// of python/tests/builtins/test_builtin_redact_pii.py come first.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  Continue,
  Envelope,
  HookBus,
  Message,
  ModelRequest,
  ModelRequestEvent,
  RunContext,
  TaskStartEvent,
  ToolCall,
  ToolCallEvent,
  ToolResult,
  ToolResultEvent,
  ToolSpec,
  type JsonValue,
} from "../index.js";
import { luhnValid, redactCards, redactPii, redactSecrets, SettingsError } from "../builtins/index.js";
import { piiRedactor } from "../builtins/pii.js";
import { patternProblem } from "../builtins/patterns.js";
import { compilePython, PythonRegexError } from "../builtins/pyregex.js";

const redact = piiRedactor({});
const CARD = "4111 1111 1111 1111";
const run = () => new RunContext({ envelope: new Envelope({ runId: "run-1" }) });
const call = (args: Record<string, JsonValue>) =>
  new ToolCallEvent({ tool: new ToolSpec({ name: "search" }), call: new ToolCall({ id: "c1", name: "search", arguments: args }) });
const user = (content: string) => new Message({ role: "user", content });

/** [text, Python's redaction] for RedactPii(PiiSettings()).redact. */
const PYTHON_PII: readonly (readonly [string, string])[] = [["3782-822463-10005+44 20 7946 0958Z\n]\u0663ax 0+b8\ud835\udfd8\u2028%a\u001c:Z3a[\ufeff", "[redacted:credit_card]+44 20 7946 0958Z\n]\u0663ax 0+b8\ud835\udfd8\u2028%a\u001c:Z3a[\ufeff"], ["4111 1111 1111 11113782-822463-10005a.b@c.de", "4111 1111 1111 [redacted:email]"], ["\ud835\udfd8\u00dfZ:)\ud835\udfd8b@4111 1111 1111 1111:8\n.4\ud835\udfd8\u00e9@\u00df)0\u001c20b86\u00a0[", "\ud835\udfd8\u00dfZ:)\ud835\udfd8b@[redacted:credit_card]:8\n.4\ud835\udfd8\u00e9@\u00df)0\u001c20b86\u00a0["], ["7).7@a.b@c.de-Z\u00dfa8\u06604\u00dfb0\ud835\udfd8\ufeff\u202881\u001cZ:a))\u0660\u20284_5", "7).7@[redacted:email]-Z\u00dfa8\u06604\u00dfb0\ud835\udfd8\ufeff\u202881\u001cZ:a))\u0660\u20284_5"], ["xoxb-1234567890\ud835\udfd8 \u2028@\rx\u2028%]-[81 x\ud835\udfd8_9\u001c(\ufeff-x\ud835\udfd84111 1111 1111 1111", "xoxb-1234567890\ud835\udfd8 \u2028@\rx\u2028%]-[81 x\ud835\udfd8_9\u001c(\ufeff-x\ud835\udfd8[redacted:credit_card]"], ["[[4\ufeff5x 684]@(\u20280bo@ex.com", "[[4\ufeff5x 684]@(\u2028[redacted:email]"], ["3782-822463-10005\ud835\udfd8\u0663]]\u0663\n6\u2028b]\n\u0660(-\ud835\udfd8]b\u00e9\u00df\nbo@ex.com", "[redacted:credit_card]\ud835\udfd8\u0663]]\u0663\n6\u2028b]\n\u0660(-\ud835\udfd8]b\u00e9\u00df\n[redacted:email]"], ["+44 20 7946 0958", "[redacted:phone]"], ["(x:8%8\u00df\u20283(\u001c.)E123456a.b@c.de+44 20 7946 0958ZZ0\ud835\udfd89@x\ufeff4_-", "(x:8%8\u00df\u20283(\u001c.)[redacted:email]+44 20 7946 0958ZZ0\ud835\udfd89@x\ufeff4_-"], ["70\u066377+1 (555) 123 4567", "70\u066377+1 [redacted:phone]"], ["555-123-4567", "[redacted:phone]"], ["a.b@c.de%", "[redacted:email]%"], ["a.b@c.de4\u00df\u00e9\u0663._xb14.@\u00df\ud835\udfd8\u00dfZ8[555-123-4567%7_6\u00e91@)", "[redacted:email]4\u00df\u00e9\u0663._xb14.@\u00df\ud835\udfd8\u00dfZ8[[redacted:phone]%7_6\u00e91@)"], ["+44 20 7946 0958(555) 123-4567a5Z@\na[1 ", "[redacted:phone] 123-4567a5Z@\na[1 "], ["945\r%\ufeff%64\n1\u001c \u0663]829\u00e9(2\r[@+1 (555) 123 4567", "945\r%\ufeff%64\n1\u001c \u0663]829\u00e9(2\r[@[redacted:phone]"], ["555-123-4567", "[redacted:phone]"], ["bo@ex.com:2\u0663", "[redacted:email]:2\u0663"], ["2[ 5bo@ex.com\u001c555-123-4567", "2[ [redacted:email]\u001c[redacted:phone]"], ["ghp_aaaaaaaaaaaaaaaaaaaaaa4111 1111 1111 1111]7.0[[. \u0663\u00df4\u06635", "ghp_aaaaaaaaaaaaaaaaaaaaaa[redacted:credit_card]]7.0[[. \u0663\u00df4\u06635"], ["%1\u06605\u00a0\u001c\r\u20287(+1 (555) 123 4567\r1..\u00df\u2028\u06639", "%1\u06605\u00a0\u001c\r\u20287([redacted:phone]\r1..\u00df\u2028\u06639"], ["]6\ufeff\ud835\udfd8\u001cZ\u00a02@49\n)bo@ex.com\u0660b\r-%(x\u0663\ufeff99636+)b:\u00a0.\u00e91ba\n._7(b\n\u001c76\r+", "]6\ufeff\ud835\udfd8\u001cZ\u00a02@49\n)[redacted:email]\u0660b\r-%(x\u0663\ufeff99636+)b:\u00a0.\u00e91ba\n._7(b\n\u001c76\r+"], ["bo@ex.com\ufeff6Z[303782-822463-10005sk-abcdefgh12", "[redacted:email]\ufeff6Z[303782-822463-10005sk-abcdefgh12"], ["a.b@c.dexa\u2028\ud835\udfd8a.b@c.de(555) 123-4567", "[redacted:email]\u2028\ud835\udfd8[redacted:email](555) 123-4567"], ["\u00e92@4b.@a.AKIAABCDEFGHIJKLMNOP", "\u00e92@[redacted:email]"], ["xoxb-12345678903782-822463-10005a.b@c.dea.b@c.deb\u001c_6\u00a03\u001c92\u001c", "[redacted:email].b@c.deb\u001c_6\u00a03\u001c92\u001c"], ["\ud835\udfd8b -\u00a01b.b(:[):216 9-@5\n\u00df.+1 (555) 123 4567\rx7b7%29[", "\ud835\udfd8b -\u00a01b.b(:[):216 9-@5\n\u00df.+1 [redacted:phone]\rx7b7%29["], ["555-123-4567", "[redacted:phone]"], ["\u2028\r%2+\ud835\udfd80a936\ufeffa.b@c.de", "\u2028\r%2+\ud835\udfd80a936\ufeff[redacted:email]"], ["3782-822463-10005\u0663.\u00e9_(555) 123-4567a.b@c.de\u0660\u00a0:\ud835\udfd8\u00a0\u00dfb-\n\u0663]1", "[redacted:credit_card]\u0663.\u00e9_(555) [redacted:email]\u0660\u00a0:\ud835\udfd8\u00a0\u00dfb-\n\u0663]1"], ["555-123-4567\r][Z\u00e9(555) 123-4567b\n+a", "[redacted:phone]\r][Z\u00e9(555) 123-4567b\n+a"], ["x@y.co]a@b.cd", "[redacted:email]]a@b.cd"], ["+1234567", "+1234567"], ["+12345678", "[redacted:phone]"], ["+1234567890123456", "+1234567890123456"], ["[redacted:phone]555-123-4567", "[redacted:phone]555-123-4567"], ["555-123-4567-", "[redacted:phone]-"], ["555-123-4567.5", "555-123-4567.5"], ["1555-123-4567", "1555-123-4567"], ["\u00e9555-123-4567", "\u00e9555-123-4567"], ["\u0663555-123-4567", "\u0663555-123-4567"], ["_555-123-4567", "_555-123-4567"], ["(555)123-4567", "[redacted:phone]"], ["4111-1111-1111-1111", "[redacted:credit_card]"], ["4111  1111 1111 1111", "4111  1111 1111 1111"], ["41111111111111111", "41111111111111111"], ["ana@\u4f8b\u3048.jp", "ana@\u4f8b\u3048.jp"], ["ana@exa_mple.com", "ana@exa_mple.com"], ["bo@ex.c", "bo@ex.c"], ["tel:+44 (0)20 7946 0958", "tel:[redacted:phone]"]];

/** pattern -> [text, Python's re.sub(pattern, "[X]", text)]. */
const PYTHON_SUB: Readonly<Record<string, readonly (readonly [string, string])[]>> = {"\\bE\\d{6}\\b": [["E123456 and xE123456 and E1234567 and E\u0661\u0662\u0663\u0664\u0665\u0666", "[X] and xE123456 and E1234567 and [X]"], ["\u00e9 E123456\u00e9", "\u00e9 E123456\u00e9"]], "(?i)ab+": [["ABbb aB", "[X] [X]"]], "\\d{3}\\s\\d": [["123\u001c4 123\ufeff4 \u0661\u0662\u0663 \u0664", "[X] 123\ufeff4 [X]"]], "a.b": [["a\rb a\nb a\u2028b", "[X] a\nb [X]"]], "\\s+$": [["x  \n", "x[X]"], ["x \n\n", "x[X]"]], "(?m)^\\d": [["1\n2\r3", "[X]\n[X]\r3"]], "(?x) a \\  b # c": [["a b ab", "[X] ab"]], "\\B\\d\\B": [["123 4", "1[X]3 4"]], "[^\\W\\d]{2,}": [["ab1c\u00e9_ 12 \u65e5\u672c", "[X]1[X] 12 [X]"]], "(?P<x>[ab])(?P=x)": [["aab bba ab", "[X]b [X]a ab"]]};

describe("builtins: redact_pii finds what Python finds", () => {
  it("finds emails, phones and cards (Python's examples)", () => {
    const cases: [string, string][] = [
      ["write to ana.lopez+news@mail.example.co.uk today", "write to [redacted:email] today"],
      ["call +44 20 7946 0958", "call [redacted:phone]"],
      ["call (555) 123-4567 or 555.123.4567", "call [redacted:phone] or [redacted:phone]"],
      [`card ${CARD}, thanks`, "card [redacted:credit_card], thanks"],
      ["amex 3782-822463-10005", "amex [redacted:credit_card]"],
      [`card ${CARD} 123`, "card [redacted:credit_card] 123"],
    ];
    for (const [text, redacted] of cases) assert.equal(redact(text), redacted, text);
  });

  it("leaves alone what Python leaves alone", () => {
    for (const text of [
      "order 1234 5678 9012 3456",
      "id 41111111111111111111",
      "on 2026-11-30 at 10:15, +100 points, version 1.2.3, pi 3.14159",
      "ip 192.168.1.10 and a user@localhost without a domain",
    ]) {
      assert.equal(redact(text), text);
    }
  });

  it("redacts exactly Python's spans on its table of texts, and twice is once", () => {
    for (const [text, python] of PYTHON_PII) {
      assert.equal(redact(text), python, JSON.stringify(text));
      assert.equal(redact(python), python, JSON.stringify(python));
    }
  });

  it("checks Luhn and cards as Python", () => {
    assert.ok(luhnValid("4111111111111111") && luhnValid("378282246310005"));
    assert.ok(!luhnValid("4111111111111112") && !luhnValid("1234567890123456"));
    assert.equal(redactCards(`a ${CARD}-4111 1111 1111 1111 b`, "#"), "a #-# b");
  });

  it("rewrites each event type, and answers a plain Continue when nothing is found", async () => {
    const bus = new HookBus();
    bus.register(redactPii.build({}));
    const ctx = run();
    const asked = new Message({ role: "assistant", toolCalls: [new ToolCall({ name: "lookup", arguments: { email: "bo@example.com" } })] });
    const system = new Message({ role: "system", content: "be kind" });
    const event = new ModelRequestEvent({ request: new ModelRequest({ model: "m", messages: [system, user("I am bo@example.com"), asked] }) });
    const done = await bus.emit("model.before", event, ctx);
    const [kept, said, called] = done.event.request.messages;
    assert.equal(kept, system); // untouched messages are kept as they are
    assert.equal(said?.content, "I am [redacted:email]");
    assert.deepEqual(called?.toolCalls[0]?.arguments, { email: "[redacted:email]" });

    const task = new TaskStartEvent({ task: "support", input: { from: "bo@example.com", n: [1, "x"] } });
    const started = await bus.emit("task.start", task, ctx);
    assert.deepEqual(started.event.input, { from: "[redacted:email]", n: [1, "x"] });
    assert.equal(started.outcome.kind, "continue");
    assert.ok(started.outcome.kind === "continue" && started.outcome.modified !== undefined);

    const before = await bus.emit("tool.before", call({ to: ["bo@example.com", 3], note: null }), ctx);
    assert.deepEqual(before.event.call.arguments, { to: ["[redacted:email]", 3], note: null });
    const output = { rows: [{ phone: "555-123-4567", n: 1 }], ok: true };
    const result = new ToolResultEvent({ tool: new ToolSpec({ name: "search" }), call: new ToolCall({ id: "c1", name: "search" }), result: new ToolResult({ output }) });
    const after = await bus.emit("tool.after", result, ctx);
    assert.deepEqual(after.event.result.output, { rows: [{ phone: "[redacted:phone]", n: 1 }], ok: true });
    assert.equal(after.event.result.isError, false);

    const plain = call({ q: "weather", n: [1, 2] });
    const same = await bus.emit("tool.before", plain, ctx);
    assert.deepEqual(same.outcome, Continue());
    assert.equal(same.event, plain);
  });

  it("runs your own patterns first, with the chosen detectors only", async () => {
    const bus = new HookBus();
    bus.register(redactPii.build({ detect: ["email"], patterns: { employee_id: String.raw`\bE\d{6}\b` } }));
    const done = await bus.emit("tool.before", call({ note: `E123456 at bo@example.com paid with ${CARD}` }), run());
    assert.deepEqual(done.event.call.arguments, { note: `[redacted:employee_id] at [redacted:email] paid with ${CARD}` });
  });

  it("checks the settings as Python does", () => {
    const refused: [Record<string, unknown>, RegExp][] = [
      [{ patterns: { id: "(" } }, /patterns: Value error, invalid regular expression '\('/],
      [{ patterns: { id: "x*" } }, /patterns: Value error, the regular expression 'x\*' matches the empty string/],
      [{ patterns: { "Bad Name": "x" } }, /patterns: Value error, pattern name 'Bad Name' must/],
      [{ detect: [] }, /Value error, detect is empty and there are no patterns/],
    ];
    for (const [settings, message] of refused) {
      assert.throws(() => redactPii.build(settings), (e: unknown) => e instanceof SettingsError && message.test(e.message), JSON.stringify(settings));
    }
  });
});

describe("builtins: patterns in Python's dialect", () => {
  it("match what Python's re.sub matches", () => {
    for (const [pattern, rows] of Object.entries(PYTHON_SUB)) {
      const compiled = compilePython(pattern);
      for (const [text, python] of rows) assert.equal(text.replace(compiled, () => "[X]"), python, `${pattern} on ${JSON.stringify(text)}`);
    }
  });

  it("are refused where Python refuses them", () => {
    for (const pattern of ["(", "x*", "a{2,1}", "(?<=a+)b", String.raw`\1(a)`, String.raw`[\d-z]`, "(?<!ab|c)d", String.raw`\p{L}`, "a**", "[", "(?P<1a>x)", "(?L)a", "a(?i)", String.raw`\400`, "(?P<a>x)(?P<a>y)", "a{,}"]) {
      assert.notEqual(patternProblem(pattern), null, pattern);
    }
    for (const pattern of [String.raw`\B`, "{", "a{", "}", "]", "(?P<n>x)(?P=n)", String.raw`(a)\1`, String.raw`\012`, "(?#c)a", "(?x)a b", "(?s).", String.raw`(?a)\w`, "a+?", String.raw`[\b]`, "[]]", "[^]]", String.raw`\-`, "é+", "(?i)É", "(?i:a)", "\u{1D7D8}+", String.raw`(?<=ab|cd)e`]) {
      assert.equal(patternProblem(pattern), null, pattern);
    }
  });

  it("refuse, naming the construct, what JavaScript cannot run the same way", () => {
    for (const [pattern, construct] of [[String.raw`(?i)(a)\1`, /back-reference under IGNORECASE/], ["(ab)++", /possessive quantifier on a group/], ["(?(1)a|b)", /conditional/], [String.raw`\N{DASH}`, /named character/]] as const) {
      assert.throws(() => compilePython(pattern), (e: unknown) => e instanceof PythonRegexError && construct.test(e.message), pattern);
    }
  });
});

describe("builtins: IGNORECASE, atomic groups and possessive quantifiers as Python's re", () => {
  it("match what Python's re.sub matches, scoped (?i:...) and (?ai) included", () => {
    // [pattern, text, Python's re.sub(pattern, "[X]", text)]
    const rows: [string, string, string][] = [
      ["(?i)i", "iI\u0130\u0131j", "[X][X][X][X]j"],
      ["(?i)k", "kK\u212a", "[X][X][X]"],
      ["(?ai)k", "kK\u212a", "[X][X]\u212a"],
      ["(?i)s", "sS\u017f\u00df", "[X][X][X]\u00df"],
      ["(?i)\u03c3", "\u03a3\u03c3\u03c2", "[X][X][X]"],
      ["(?i)[a-c]+", "AbC\u0130", "[X]\u0130"],
      ["(?i)[^k]", "k\u212aKx", "k\u212aK[X]"],
      [String.raw`(?i:secret)=\w+`, "SECRET=abc Secret=x", "[X] [X]"],
      ["x(?i:ab)c(?-i:d)", "xABcd xabCd xABcD", "[X] xabCd xABcD"],
      // atomic groups and possessive quantifiers (Python 3.11): never backtracked into
      ["(?>a+)b", "aab ab b", "[X] [X] b"],
      ["a*+a", "aaa", "aaa"],
      ["(?>x|xy)z", "xyz xz", "xyz [X]"],
      [String.raw`(?>b)(a)\1`, "baa ba", "[X] ba"],
      ["x?+x", "x xx", "x [X]"],
    ];
    for (const [pattern, text, python] of rows) assert.equal(text.replace(compilePython(pattern), () => "[X]"), python, `${pattern} on ${JSON.stringify(text)}`);
  });
});

describe("builtins: redact_secrets", () => {
  it("replaces API-key-like tokens in arguments and messages by [redacted]", async () => {
    const bus = new HookBus();
    bus.register(redactSecrets.build({}));
    const ctx = run();
    const key = "sk-abcdefgh12";
    const done = await bus.emit("tool.before", call({ auth: `Bearer ${key}`, nested: [{ aws: "AKIAABCDEFGHIJKLMNOP" }] }), ctx);
    assert.deepEqual(done.event.call.arguments, { auth: "Bearer [redacted]", nested: [{ aws: "[redacted]" }] });
    const asked = new ModelRequestEvent({ request: new ModelRequest({ model: "m", messages: [user(`use ghp_${"a".repeat(22)} and xoxb-1234567890`)] }) });
    const sent = await bus.emit("model.before", asked, ctx);
    assert.equal(sent.event.request.messages[0]?.content, "use [redacted] and [redacted]");
    assert.deepEqual((await bus.emit("tool.before", call({ q: "sk-short" }), ctx)).outcome, Continue());
  });

  it("takes your patterns, checked as Python checks them", async () => {
    const bus = new HookBus();
    bus.register(redactSecrets.build({ patterns: [String.raw`token=\w+`] }));
    const done = await bus.emit("tool.before", call({ url: "x?token=abc_é1&y=2" }), run());
    assert.deepEqual(done.event.call.arguments, { url: "x?[redacted]&y=2" });
    assert.throws(() => redactSecrets.build({ patterns: ["a?"] }), /matches the empty string/);
    assert.throws(() => redactSecrets.build({ patterns: [] }), /at least 1 item/);
  });
});

describe("builtins: redact_pii's promises, for any text (Python's hypothesis tests, with fast-check)", () => {
  /** Every card the guard promises to find, by brute force (python: luhn_valid_cards_left). */
  function cardsLeft(text: string): string[] {
    const found: string[] = [];
    const digit = (c: string | undefined) => c !== undefined && c >= "0" && c <= "9";
    for (let start = 0; start < text.length; start++) {
      if (!digit(text[start]) || (start > 0 && digit(text[start - 1]))) continue;
      for (let end = start + 1; end <= text.length; end++) {
        const piece = text.slice(start, end);
        if (!/^[0-9](?:[ -]?[0-9])*$/.test(piece) || digit(text[end])) continue;
        const digits = piece.replace(/[ -]/g, "");
        if (digits.length >= 13 && digits.length <= 19 && luhnValid(digits)) found.push(piece);
      }
    }
    return found;
  }
  const withCheckDigit = (body: string) => [..."0123456789"].map((d) => body + d).find(luhnValid) as string;
  const cards = fc
    .stringMatching(/^[0-9]{12,18}$/)
    .map(withCheckDigit)
    .map((digits) => (digits.match(/.{1,4}/g) ?? []).join(" "));
  const noise = fc.array(fc.constantFrom(..."0123456789 -ab+@.()[]_%:\n"), { maxLength: 16 }).map((chars) => chars.join(""));
  const known = fc.constantFrom("bo@ex.com", "+44 20 7946 0958", "(555) 123-4567", "555-123-4567");
  const texts = fc.array(fc.oneof(cards, noise, known), { maxLength: 6 }).map((parts) => parts.join(""));

  it("leaves no Luhn-valid card number in the text", () => {
    fc.assert(fc.property(texts, (text) => assert.deepEqual(cardsLeft(redact(text)), [])), { numRuns: 300 });
  });

  it("gives, redacting twice, what redacting once gave", () => {
    fc.assert(
      fc.property(texts, (text) => {
        const once = redact(text);
        assert.equal(redact(once), once);
      }),
      { numRuns: 300 },
    );
  });
});
