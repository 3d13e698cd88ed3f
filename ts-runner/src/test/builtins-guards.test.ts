// The stateful built-in guards in TypeScript (src/builtins/): loop_guard, budget_guard,
// tool_failure_guard, and the per-run state they share. The examples are Python's own
// (python/tests/builtins/), with the same reasons, codes and notes.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  Block,
  Continue,
  Envelope,
  FixedClock,
  HookBus,
  Message,
  ModelRequest,
  ModelRequestEvent,
  ModelResponse,
  ModelResponseEvent,
  RunContext,
  TaskEndEvent,
  ToolCall,
  ToolCallEvent,
  ToolResult,
  ToolResultEvent,
  ToolSpec,
  Usage,
  type Configurable,
  type JsonValue,
} from "../index.js";
import { budgetGuard, fingerprint, FINAL_EXIT_REASONS, loopGuard, RunStates, SettingsError, toolFailureGuard } from "../builtins/index.js";
import { dollars } from "../builtins/budget.js";
import { NOTE_PREFIX, withNote } from "../builtins/notes.js";
import { attach, MemoryStore } from "../state/index.js";

const CLOCK = new FixedClock("2026-11-30T12:00:00+00:00");
const run = (runId = "run-1") => new RunContext({ envelope: new Envelope({ clock: CLOCK, runId }) });

function busWith(configurable: Configurable, settings: Record<string, unknown> = {}): HookBus {
  const bus = new HookBus();
  bus.register(configurable.build(settings));
  return bus;
}

const call = (name = "search", args: Record<string, JsonValue> = {}) =>
  new ToolCallEvent({ tool: new ToolSpec({ name }), call: new ToolCall({ id: "c1", name, arguments: args }) });
const result = (name = "search", isError = false) =>
  new ToolResultEvent({ tool: new ToolSpec({ name }), call: new ToolCall({ id: "c1", name }), result: new ToolResult({ output: "ok", isError }) });
const user = (content: string) => new Message({ role: "user", content });
const request = (...messages: Message[]) => new ModelRequestEvent({ request: new ModelRequest({ model: "m", messages }) });
const response = (inputTokens = 0, outputTokens = 0, costUsd = 0) =>
  new ModelResponseEvent({
    response: new ModelResponse({ message: new Message({ role: "assistant", content: "working on it" }), usage: new Usage({ inputTokens, outputTokens, costUsd }) }),
  });
const taskEnd = (exitReason = "completed") => new TaskEndEvent({ exitReason });

/** The outcome records of one middleware: hook and modified. */
function modifiedOf(ctx: RunContext, name: string): [unknown, unknown][] {
  return ctx.trace
    .records()
    .filter((r) => r["middleware"] === name)
    .map((r) => [r["hook"], r["modified"]]);
}

async function kinds(bus: HookBus, ctx: RunContext, ...events: ToolCallEvent[]): Promise<string[]> {
  const out: string[] = [];
  for (const event of events) out.push((await bus.emit("tool.before", event, ctx)).outcome.kind);
  return out;
}

const repeat = <T>(value: T, n: number): T[] => Array.from({ length: n }, () => value);

describe("builtins: loop_guard", () => {
  it("refuses the fifth identical call with a stable code", async () => {
    const bus = busWith(loopGuard);
    const ctx = run();
    assert.deepEqual(await kinds(bus, ctx, ...repeat(call("search", { q: "weather" }), 4)), repeat("continue", 4));
    const refused = await bus.emit("tool.before", call("search", { q: "weather" }), ctx);
    assert.deepEqual(
      refused.outcome,
      Block("search was called with the same arguments 5 times within the last 20 tool calls; try something else", { code: "loop_detected" }),
    );
  });

  it("counts other arguments or tools as other calls", async () => {
    const bus = busWith(loopGuard, { warn_after: 2, block_after: 3, window: 10 });
    const ctx = run();
    const got = await kinds(bus, ctx, call("search", { q: "a" }), call("search", { q: "b" }), call("fetch", { q: "a" }), call("search", { q: "a" }), call("search", { q: "a" }));
    assert.deepEqual(got, ["continue", "continue", "continue", "continue", "block"]);
  });

  it("warns the model once, at its next request, and the trace shows it", async () => {
    const bus = busWith(loopGuard, { warn_after: 2, block_after: 4, window: 10 });
    const ctx = run();
    await kinds(bus, ctx, call("search", { q: "a" }), call("search", { q: "a" }));
    const warned = await bus.emit("model.before", request(user("go on")), ctx);
    const again = await bus.emit("model.before", request(user("go on")), ctx);
    assert.equal(warned.outcome.kind, "continue");
    assert.deepEqual(
      warned.event.request.messages.map((m) => m.content),
      [
        `go on\n\n${NOTE_PREFIX} you have called search with the same arguments 2 times in your last 10 tool calls; ` +
          "from 4 such calls on it will be refused, so try something else.",
      ],
    );
    assert.deepEqual(again.outcome, Continue());
    assert.deepEqual(modifiedOf(ctx, "loop_guard"), [
      ["tool.before", false],
      ["tool.before", false],
      ["model.before", true],
      ["model.before", false],
    ]);
  });

  it("gives no warning without warn_after, and none after a refusal", async () => {
    const quiet = busWith(loopGuard, { warn_after: null, block_after: 3 });
    const ctx = run();
    await kinds(quiet, ctx, call("search", { q: "a" }), call("search", { q: "a" }));
    assert.deepEqual((await quiet.emit("model.before", request(user("hi")), ctx)).outcome, Continue());
    assert.deepEqual(await kinds(quiet, ctx, call("search", { q: "a" })), ["block"]);
    const loud = busWith(loopGuard, { warn_after: 2, block_after: 3 });
    const other = run();
    assert.deepEqual(await kinds(loud, other, ...repeat(call("search", { q: "a" }), 3)), ["continue", "continue", "block"]);
    assert.deepEqual((await loud.emit("model.before", request(user("hi")), other)).outcome, Continue());
  });

  it("counts over a sliding window, refused calls included", async () => {
    const bus = busWith(loopGuard, { warn_after: 2, block_after: 3, window: 4 });
    const ctx = run();
    const a = call("search", { q: "a" });
    const got = await kinds(bus, ctx, a, a, call("search", { q: "b" }), call("search", { q: "c" }), call("search", { q: "d" }), a);
    assert.deepEqual(got, repeat("continue", 6));
    const insist = busWith(loopGuard, { warn_after: null, block_after: 2, window: 3 });
    assert.deepEqual(await kinds(insist, run(), a, a, a, a), ["continue", "block", "block", "block"]);
  });

  it("keeps runs apart, forgets a run over for good, keeps a suspended one", async () => {
    const bus = busWith(loopGuard, { warn_after: null, block_after: 2 });
    const [one, two] = [run("one"), run("two")];
    const a = call("search", { q: "a" });
    assert.deepEqual(await kinds(bus, one, a), ["continue"]);
    assert.deepEqual(await kinds(bus, two, a), ["continue"]);
    await bus.emit("task.end", taskEnd(), one);
    assert.deepEqual(await kinds(bus, one, a), ["continue"]);
    assert.deepEqual(await kinds(bus, two, a), ["block"]);
    const kept = busWith(loopGuard, { warn_after: null, block_after: 2 });
    const ctx = run();
    await kinds(kept, ctx, a);
    await kept.emit("task.end", taskEnd("suspended"), ctx);
    assert.deepEqual(await kinds(kept, ctx, a), ["block"]);
  });

  it("checks the rules between settings as Python does", () => {
    assert.throws(() => loopGuard.build({ warn_after: 5, block_after: 3 }), (e: unknown) => e instanceof SettingsError && /block_after: Value error, block_after \(3\) must be greater than warn_after \(5\)/.test(e.message));
    assert.throws(() => loopGuard.build({ window: 3 }), /window: Value error, window \(3\) must be at least block_after \(5\)/);
    assert.doesNotThrow(() => loopGuard.build({ warn_after: null, block_after: 2, window: 2 }));
  });

  it("fingerprints as Python: sorted keys, 1.0 as 1, a string is not a number", () => {
    const print = fingerprint("search", { b: 1, a: [1.0, { y: null, x: "é" }] });
    assert.equal(print.length, 64);
    assert.equal(print, fingerprint("search", { a: [1, { x: "é", y: null }], b: 1.0 }));
    assert.notEqual(print, fingerprint("fetch", { b: 1, a: [1, { y: null, x: "é" }] }));
    assert.notEqual(fingerprint("search", { q: "1" }), fingerprint("search", { q: 1 }));
    // the very hex of Python's loops.fingerprint for the same arguments
    assert.equal(print, "54fdbaedd4ba4734a1e9226c2f6e949df77cd4bb871c5dfd6cf0a7db8cab270a");
    const odd = { x: [1e-5, 0.1, 1.5e-300, 123.456, 1e22, -0.0, 2 ** 60, 'a\u2028"\\\x01\u{1F600}', { é: 1, z: 2, "\u{1F600}": 3, "\uffff": 4 }] };
    assert.equal(fingerprint("t", odd), "6cc4f75a99f92e5092e009695b50df7031508844a7c36252ceac04bd8e4c2cde");
    assert.throws(() => fingerprint("t", { q: "\ud800" }), { name: "UnicodeEncodeError" }); // Python cannot encode it either
  });
});

describe("builtins: budget_guard", () => {
  const spend = async (bus: HookBus, ctx: RunContext, input = 0, output = 0, cost = 0) => {
    assert.deepEqual((await bus.emit("model.after", response(input, output, cost), ctx)).outcome, Continue());
  };
  const ask = (bus: HookBus, ctx: RunContext) => bus.emit("model.before", request(user("next")), ctx);

  it("lets a run that ends before its response release its reservation (any exit reason)", async () => {
    for (const exitReason of ["not_expressible", "completed", "suspended"]) {
      const store = new MemoryStore();
      const guard = budgetGuard.build({ max_tokens: 1000, reserve_tokens: 300, warn_at: null, scope: "org" });
      attach(guard, store, { name: "budget" });
      const bus = new HookBus();
      bus.register(guard);
      const [a, b] = [run("a"), run("b")];
      assert.deepEqual((await ask(bus, a)).outcome, Continue());
      assert.deepEqual((await ask(bus, b)).outcome, Continue());
      const key = "hw1/app/budget/org/-/tokens";
      assert.equal(await store.total(key), 600);
      await bus.emit("task.end", taskEnd(exitReason), a);
      assert.equal(await store.total(key), 300); // b's request still holds
      await spend(bus, b, 40);
      await bus.emit("task.end", taskEnd(exitReason), b);
      assert.equal(await store.total(key), 40);
    }
  });

  it("lets a fresh run's request through untouched", async () => {
    const got = await ask(busWith(budgetGuard, { max_tokens: 1000 }), run());
    assert.deepEqual(got.outcome, Continue());
  });

  it("counts input and output tokens and blocks at 100%", async () => {
    const bus = busWith(budgetGuard, { max_tokens: 1000, warn_at: null });
    const ctx = run();
    await spend(bus, ctx, 600, 399);
    assert.deepEqual((await ask(bus, ctx)).outcome, Continue());
    await spend(bus, ctx, 0, 1);
    assert.deepEqual((await ask(bus, ctx)).outcome, Block("the run has spent 1,000 tokens of its 1,000 tokens budget", { code: "budget_exceeded" }));
  });

  it("warns once per limit with a note to the model", async () => {
    const bus = busWith(budgetGuard, { max_tokens: 1000 });
    const ctx = run();
    await spend(bus, ctx, 699);
    assert.deepEqual((await ask(bus, ctx)).outcome, Continue());
    await spend(bus, ctx, 0, 51);
    const warned = await ask(bus, ctx);
    assert.deepEqual(
      warned.event.request.messages.map((m) => m.content),
      [`next\n\n${NOTE_PREFIX} this run has spent 750 tokens of its 1,000 tokens budget (75%); model requests stop at 100%, so finish the task soon.`],
    );
    await spend(bus, ctx, 0, 100);
    assert.deepEqual((await ask(bus, ctx)).outcome, Continue());
    assert.deepEqual(modifiedOf(ctx, "budget_guard").filter(([hook]) => hook === "model.before").map(([, m]) => m), [false, true, false]);
  });

  it("warns and blocks on a cost budget on its own", async () => {
    const bus = busWith(budgetGuard, { max_tokens: 10_000, max_cost_usd: 0.01, warn_at: 0.5 });
    const ctx = run();
    await spend(bus, ctx, 10, 0, 0.006);
    const warned = await ask(bus, ctx);
    const last = warned.event.request.messages.at(-1)?.content ?? "";
    assert.match(last, /\$0\.0060 of its \$0\.0100 budget \(60%\)/);
    assert.doesNotMatch(last, /tokens/);
    await spend(bus, ctx, 10, 0, 0.005);
    assert.deepEqual((await ask(bus, ctx)).outcome, Block("the run has spent $0.0110 of its $0.0100 budget", { code: "budget_exceeded" }));
  });

  it("puts the note after a tool message as a new user message; a block wins over warnings", async () => {
    const bus = busWith(budgetGuard, { max_tokens: 10 });
    const ctx = run();
    await spend(bus, ctx, 8);
    const toolAnswer = new Message({ role: "tool", content: "42", toolCallId: "c1" });
    const got = await bus.emit("model.before", request(user("sum?"), toolAnswer), ctx);
    assert.deepEqual(got.event.request.messages.map((m) => m.role), ["user", "tool", "user"]);
    assert.ok(got.event.request.messages.at(-1)?.content.startsWith(NOTE_PREFIX));
    const both = busWith(budgetGuard, { max_tokens: 100, max_cost_usd: 1.0 });
    await spend(both, ctx, 80, 0, 1.0);
    assert.equal((await ask(both, ctx)).outcome.kind, "block");
  });

  it("keeps each run's budget until its task ends for good", async () => {
    const bus = busWith(budgetGuard, { max_tokens: 10, warn_at: null });
    const [one, two] = [run("one"), run("two")];
    await spend(bus, one, 10);
    assert.deepEqual((await ask(bus, two)).outcome, Continue());
    await bus.emit("task.end", taskEnd("suspended"), one);
    assert.equal((await ask(bus, one)).outcome.kind, "block");
    await bus.emit("task.end", taskEnd("completed"), one);
    assert.deepEqual((await ask(bus, one)).outcome, Continue());
  });

  it("needs a limit, as Python, and a finite one (YAML's .inf passes a JSON Schema's minimum)", () => {
    assert.throws(() => budgetGuard.build({}), /give max_tokens, max_cost_usd or both/);
    assert.throws(() => budgetGuard.build({ max_cost_usd: Infinity }), /max_cost_usd: Input should be a finite number/);
    assert.throws(() => budgetGuard.build({ max_tokens: Infinity }), /max_tokens: Input should be a finite number/);
    assert.throws(() => loopGuard.build({ block_after: Infinity }), /block_after: Input should be a finite number/);
    assert.throws(() => toolFailureGuard.build({ max_total: Infinity }), /max_total: Input should be a finite number/);
  });

  it("writes dollars as Python's ,.4f: grouping, and a tie rounded to even", () => {
    // f"{x:,.4f}" in Python for each
    const cases: [number, string][] = [
      [0.006, "$0.0060"],
      [1 / 32, "$0.0312"],
      [3 / 32, "$0.0938"],
      [1234567.03125, "$1,234,567.0312"],
      [0.011, "$0.0110"],
      [2.5, "$2.5000"],
      [0.00015, "$0.0001"],
    ];
    for (const [amount, shown] of cases) assert.equal(dollars(amount), shown, String(amount));
  });
});

describe("builtins: tool_failure_guard", () => {
  const results = async (bus: HookBus, ctx: RunContext, errors: boolean[], tool = "search") => {
    for (const error of errors) assert.deepEqual((await bus.emit("tool.after", result(tool, error), ctx)).outcome, Continue());
  };
  const check = async (bus: HookBus, ctx: RunContext, tool = "search") => (await bus.emit("tool.before", call(tool), ctx)).outcome;

  it("takes a tool out of the run after three failures in a row", async () => {
    const bus = busWith(toolFailureGuard);
    const ctx = run();
    await results(bus, ctx, [true, true]);
    assert.deepEqual(await check(bus, ctx), Continue());
    await results(bus, ctx, [true]);
    assert.deepEqual(await check(bus, ctx), Block("tool 'search' failed 3 times in a row; it is not called again in this run", { code: "tool_failing" }));
    assert.deepEqual(await check(bus, ctx, "fetch"), Continue());
  });

  it("ends a streak on a success; max_total counts failures apart", async () => {
    const streak = busWith(toolFailureGuard, { max_consecutive: 2 });
    const ctx = run();
    await results(streak, ctx, [true, false, true, false, true]);
    assert.deepEqual(await check(streak, ctx), Continue());
    const total = busWith(toolFailureGuard, { max_consecutive: null, max_total: 3 });
    const other = run();
    await results(total, other, [true, false, true, false]);
    assert.deepEqual(await check(total, other), Continue());
    await results(total, other, [true]);
    assert.deepEqual(await check(total, other), Block("tool 'search' failed 3 times in this run; it is not called again in this run", { code: "tool_failing" }));
  });

  it("keeps runs apart; a suspended run keeps its counts, an escalated one is forgotten", async () => {
    const bus = busWith(toolFailureGuard, { max_consecutive: 1 });
    const [one, two] = [run("one"), run("two")];
    await results(bus, one, [true]);
    assert.equal((await check(bus, one)).kind, "block");
    assert.deepEqual(await check(bus, two), Continue());
    await bus.emit("task.end", taskEnd("suspended"), one);
    assert.equal((await check(bus, one)).kind, "block");
    await bus.emit("task.end", taskEnd("escalated"), one);
    assert.deepEqual(await check(bus, one), Continue());
  });

  it("quotes the tool's name as Python's repr", async () => {
    const bus = busWith(toolFailureGuard, { max_consecutive: 1 });
    const ctx = run();
    await results(bus, ctx, [true], "it's");
    assert.deepEqual(await check(bus, ctx, "it's"), Block(`tool "it's" failed 1 times in a row; it is not called again in this run`, { code: "tool_failing" }));
  });

  it("checks the rules between settings as Python does", () => {
    assert.throws(() => toolFailureGuard.build({ max_consecutive: null }), /give max_consecutive, max_total or both/);
    assert.throws(() => toolFailureGuard.build({ max_total: 2 }), /max_total: Value error, max_total \(2\) must be at least max_consecutive \(3\)/);
  });
});

describe("builtins: per-run state", () => {
  it("is made on first use and bounded, least recently used first", () => {
    const states = new RunStates<number[]>(() => [], 2);
    states.get("a").push(1);
    states.get("b").push(2);
    states.get("a").push(3);
    states.get("c").push(4);
    assert.equal(states.size, 2);
    assert.ok(!states.has("b"));
    assert.deepEqual(states.get("a"), [1, 3]);
    assert.equal(states.peek("b"), undefined);
    assert.ok(!states.has("b")); // peek creates nothing
    assert.deepEqual(states.peek("a"), [1, 3]); // ... but it is a use: "c" is now the oldest
    states.get("d").push(5);
    assert.ok(!states.has("c") && states.has("a"));
  });

  it("keeps a run that can be resumed, forgets one over for good", () => {
    for (const reason of ["suspended", "provider_error", "error", "max_steps", "something_new"]) {
      const states = new RunStates<number[]>(() => []);
      states.get("a").push(1);
      states.end("a", taskEnd(reason));
      assert.deepEqual(states.get("a"), [1], reason);
    }
    assert.deepEqual([...FINAL_EXIT_REASONS].sort(), ["blocked", "completed", "denied", "escalated", "retry_exhausted"]);
    for (const reason of FINAL_EXIT_REASONS) {
      const states = new RunStates<number[]>(() => []);
      states.get("a").push(1);
      states.end("a", taskEnd(reason));
      assert.ok(!states.has("a"), reason);
      states.end("never-seen", taskEnd(reason));
    }
    assert.throws(() => new RunStates(() => 0, 0), /at least 1/);
  });

  it("stays flat over many runs that never end (a long-running process)", async () => {
    const bus = new HookBus();
    const built = loopGuard.build({});
    bus.register(built);
    for (let i = 0; i < 5000; i++) await bus.emit("tool.before", call("search", { i }), run(`r${i}`));
    // 4096 runs are kept at most: the first runs were forgotten, so their count starts again
    const ctx = run("r0");
    for (let i = 0; i < 4; i++) await bus.emit("tool.before", call("search", { i: 0 }), ctx);
    assert.equal((await bus.emit("tool.before", call("search", { i: 0 }), ctx)).outcome.kind, "block");
    const fresh = run("r4999");
    assert.equal((await bus.emit("tool.before", call("search", { i: 4999 }), fresh)).outcome.kind, "continue");
  });

  it("a note extends a last user message, or is one new user message", () => {
    assert.deepEqual(withNote(request(user("hi")), "careful").request.messages.map((m) => m.content), [`hi\n\n${NOTE_PREFIX} careful`]);
    const said = new Message({ role: "assistant", content: "ok" });
    const twice = withNote(withNote(request(said), "a"), "b").request.messages;
    assert.deepEqual(twice.map((m) => [m.role, m.content]), [["assistant", "ok"], ["user", `${NOTE_PREFIX} a\n\n${NOTE_PREFIX} b`]]);
    assert.deepEqual(withNote(request(), "a").request.messages.map((m) => m.content), [`${NOTE_PREFIX} a`]);
  });
});
