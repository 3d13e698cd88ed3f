import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  Block,
  Continue,
  Envelope,
  FixedClock,
  middleware,
  NON_ERROR_THROWN,
  outcomeJSON,
  RunContext,
  StepEndEvent,
  Suspend,
  ToolResultEvent,
  type Answer,
} from "../index.js";
import { appended, harness, TOOL_CALL, toolCall, trail, untimed } from "../testing/support.js";

class RefundServiceDown extends Error {
  override name = "RefundServiceDown";
}

/** Each way a middleware can fail, the failure kind and the `error` name it must record (I5). */
const FAILURES: [string, () => Answer | Promise<Answer>, string, string][] = [
  ["throws a TypeError", () => { throw new TypeError("secret"); }, "exception", "TypeError"],
  ["throws a named Error subclass", () => { throw new RefundServiceDown("secret"); }, "exception", "RefundServiceDown"],
  ["returns a rejected promise", () => Promise.reject(new RangeError("secret")), "exception", "RangeError"],
  ["throws a string", () => { throw "secret"; }, "exception", NON_ERROR_THROWN],
  ["throws a number", () => { throw 42; }, "exception", NON_ERROR_THROWN],
  ["throws undefined", () => { throw undefined; }, "exception", NON_ERROR_THROWN],
  ["throws a plain object", () => { throw { message: "secret" }; }, "exception", NON_ERROR_THROWN],
  ["rejects with null", () => Promise.reject(null), "exception", NON_ERROR_THROWN],
  ["throws an AbortError (I15)", () => { throw new DOMException("secret", "AbortError"); }, "cancelled", "MiddlewareCancelled"],
  [
    "rejects with the reason of someone else's aborted signal (I15)",
    () => {
      const other = new AbortController();
      other.abort();
      return Promise.reject(other.signal.reason);
    },
    "cancelled",
    "MiddlewareCancelled",
  ],
  ["returns a Block whose code holds a lone surrogate (I16)", () => Block("r", { code: "c\udcff" }), "invalid_return", "InvalidReturn"],
  ["returns a Suspend whose approver holds a lone surrogate (I16)", () => Suspend("r", { approverRole: "\ud800" }), "invalid_return", "InvalidReturn"],
  ["returns a string", () => "approved" as never, "invalid_return", "InvalidReturn"],
  ["returns false", () => false as never, "invalid_return", "InvalidReturn"],
  ["returns 0", () => 0 as never, "invalid_return", "InvalidReturn"],
  ["returns an empty object", () => ({}) as never, "invalid_return", "InvalidReturn"],
  ["returns an outcome look-alike", () => ({ kind: "block", reason: "x", code: null }) as never, "invalid_return", "InvalidReturn"],
  [
    "modifies into another hook's event",
    () => Continue(new ToolResultEvent({ tool: { name: "t" }, call: {} }) as never),
    "wrong_event_type",
    "WrongEventType",
  ],
];

describe("failures (rulings 9-13, I5, I6)", () => {
  for (const [title, answer, failure, error] of FAILURES) {
    it(`closed: a middleware that ${title} blocks with middleware_error and stops the chain`, async () => {
      const { bus, ran, context, add } = harness();
      add("editor", (e) => Continue(appended(e, "edited")));
      add("guard", answer);
      add("after");
      const result = await bus.emit("tool.before", toolCall(), context);
      assert.deepEqual(outcomeJSON(result.outcome), {
        kind: "block",
        reason: `middleware guard failed: ${failure}`,
        code: "middleware_error",
      });
      assert.deepEqual(ran, ["editor", "guard"]);
      assert.deepEqual(trail(result.event), ["edited"]);
      assert.deepEqual(untimed(context.trace).slice(1), [
        { emit: 1, hook: "tool.before", ...TOOL_CALL, kind: "failure", middleware: "guard", band: "app", outcome: "block", modified: false, code: "middleware_error", failure, error, fail_mode: "closed" },
        { emit: 1, hook: "tool.before", ...TOOL_CALL, kind: "hook", outcome: "block", modified: false, code: "middleware_error" },
      ]);
      assert.doesNotMatch(JSON.stringify([result.outcome, context.trace.records()]), /secret/); // R9
    });

    it(`open: a middleware that ${title} counts as Continue, its changes discarded`, async () => {
      const { bus, ran, context, add } = harness();
      add("guard", answer, { failMode: "open" });
      add("after", (e) => Continue(appended(e, "after")));
      const result = await bus.emit("tool.before", toolCall(), context);
      assert.deepEqual(ran, ["guard", "after"]);
      assert.deepEqual(outcomeJSON(result.outcome), { kind: "continue", modified: true });
      assert.deepEqual(trail(result.event), ["after"]);
      assert.deepEqual(untimed(context.trace)[0], {
        emit: 1, hook: "tool.before", ...TOOL_CALL, kind: "failure", middleware: "guard", band: "app", outcome: "continue", modified: false, failure, error, fail_mode: "open",
      });
    });
  }

  it("handles a plain function's synchronous throw like a rejection", async () => {
    const { bus, context } = harness();
    bus.register(middleware({ name: "sync", hooks: ["tool.before"], failMode: "closed" }, () => {
      throw new SyntaxError("secret");
    }));
    const result = await bus.emit("tool.before", toolCall(), context);
    assert.equal(result.outcome.kind === "block" && result.outcome.code, "middleware_error");
    assert.equal(context.trace.at(0)?.error, "SyntaxError");
  });

  it("treats a `then` getter that throws as a throw", async () => {
    const { bus, context } = harness();
    const hostile = Object.defineProperty({}, "then", { get: () => { throw new EvalError("x"); } });
    bus.register(middleware({ name: "odd", hooks: ["tool.before"], failMode: "open" }, () => hostile as never));
    await bus.emit("tool.before", toolCall(), context);
    assert.equal(context.trace.at(0)?.error, "EvalError");
  });

  it("ranks an open failure as a plain Continue, below a later Block", async () => {
    const { bus, context, add } = harness();
    add("flaky", () => Promise.reject(new Error("x")), { failMode: "open" });
    add("gate", () => Block("no", { code: "deny" }));
    const { outcome } = await bus.emit("tool.before", toolCall(), context);
    assert.deepEqual(outcomeJSON(outcome), { kind: "block", reason: "no", code: "deny" });
  });

  it("ranks a closed failure (a Block) above an earlier Suspend", async () => {
    const { bus, context, add } = harness();
    add("approver", () => Suspend("wait"));
    add("broken", () => { throw new Error("x"); });
    assert.equal((await bus.emit("tool.before", toolCall(), context)).outcome.kind, "block");
  });

  it("names a renamed middleware by its registered name in the reason (I6)", async () => {
    const { bus, context } = harness();
    const declared = middleware({ name: "guard", hooks: ["tool.before"], failMode: "closed" }, async () => {
      throw new Error("x");
    });
    bus.register(declared, { name: "renamed" });
    const { outcome } = await bus.emit("tool.before", toolCall(), context);
    assert.equal(outcome.kind === "block" && outcome.reason, "middleware renamed failed: exception");
  });

  it("fails baseline middleware closed on an outbound hook before outer ones run", async () => {
    const { bus, ran, context, add } = harness();
    const hooks = ["step.end"] as const;
    add("outer", undefined, { band: "baseline", hooks });
    add("broken", () => { throw new Error("x"); }, { band: "task", hooks });
    await bus.emit("step.end", new StepEndEvent({}), context);
    assert.deepEqual(ran, ["broken"]);
  });

  it("lets middleware read the envelope's clock", async () => {
    const { bus } = harness();
    bus.register(middleware({ name: "weekend", hooks: ["tool.before"], failMode: "closed" }, (_e, env) => (env.isWeekend() ? Suspend("weekend") : undefined)));
    const saturday = new RunContext({ envelope: new Envelope({ clock: new FixedClock("2026-11-28T10:00:00+00:00") }) });
    assert.equal((await bus.emit("tool.before", toolCall(), saturday)).outcome.kind, "suspend");
  });
});
