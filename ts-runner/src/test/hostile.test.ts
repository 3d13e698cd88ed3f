/**
 * Issue 13: whatever a middleware throws or returns, `emit()` resolves under the middleware's
 * fail mode, the trace records only a type name, and no secret text gets out (R9). Each
 * instance runs closed and open, with and without a timeout (the walk settles a timed emit
 * its own way).
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Block, Continue, NON_ERROR_THROWN, outcomeJSON, Suspend, ToolCallEvent, ToolSpec, type Answer } from "../index.js";
import {
  emitWith,
  errorNamed,
  revokedProxy,
  SECRET,
  selfThrowingProxy,
  thenable,
  throwingGetter,
  trapEverything,
} from "../testing/hostile.js";
import { toolCall } from "../testing/support.js";

/**
 * A `new.target` whose prototype is a Proxy that refuses only `getPrototypeOf`: a real event
 * built with it gets that Proxy for prototype, so `instanceof` on it throws.
 */
function protoProxyTarget(): () => void {
  const target = function () {};
  target.prototype = new Proxy(ToolCallEvent.prototype, { getPrototypeOf: () => { throw new Error(SECRET); } });
  return target;
}

type Failure = "exception" | "invalid_return" | "wrong_event_type" | "timeout";

/** A middleware's answer, the failure it must come to, and the `error` name it must record. */
const HOSTILE: [string, () => Answer | PromiseLike<Answer>, Failure, string][] = [
  // Thrown (synchronously) or rejected values.
  ["throws an Error whose name getter throws", () => { throw errorNamed(() => { throw new Error(SECRET); }); }, "exception", "UnnamedException"],
  ["throws an Error whose name getter throws a Proxy", () => { throw errorNamed(() => { throw selfThrowingProxy(); }); }, "exception", "UnnamedException"],
  ["throws an Error whose name is a number", () => { throw errorNamed(() => 42); }, "exception", "UnnamedException"],
  ["throws an Error whose name is an object with a throwing toString", () => { throw errorNamed(() => ({ toString() { throw SECRET; } })); }, "exception", "UnnamedException"],
  ["throws an Error whose name is a huge string", () => { throw errorNamed(() => "Boom".repeat(1 << 18)); }, "exception", "UnnamedException"],
  ["throws an Error whose name is a message", () => { throw errorNamed(() => SECRET); }, "exception", "UnnamedException"],
  ["throws a Proxy whose every trap throws", () => { throw trapEverything(); }, "exception", NON_ERROR_THROWN],
  ["throws a Proxy whose traps throw the Proxy", () => { throw selfThrowingProxy(); }, "exception", NON_ERROR_THROWN],
  ["throws a Proxy of an Error", () => { throw new Proxy(new TypeError(SECRET), {}); }, "exception", NON_ERROR_THROWN],
  ["throws a revoked Proxy", () => { throw revokedProxy(); }, "exception", NON_ERROR_THROWN],
  ["rejects with a Proxy whose every trap throws", () => Promise.reject(trapEverything()), "exception", NON_ERROR_THROWN],
  ["throws an object whose Symbol.toStringTag getter throws", () => { throw throwingGetter({}, Symbol.toStringTag, selfThrowingProxy()); }, "exception", NON_ERROR_THROWN],
  ["throws an object whose Symbol.toPrimitive and toString throw", () => { throw { [Symbol.toPrimitive]() { throw SECRET; }, toString() { throw SECRET; } }; }, "exception", NON_ERROR_THROWN],
  ["throws an object whose then getter throws", () => { throw throwingGetter({}, "then", new Error(SECRET)); }, "exception", NON_ERROR_THROWN],
  ["throws an Error whose prototype is a throwing Proxy", () => { throw Object.setPrototypeOf(new Error(SECRET), trapEverything()); }, "exception", "UnnamedException"],
  ["throws an object whose prototype is a throwing Proxy", () => { throw Object.create(trapEverything()); }, "exception", NON_ERROR_THROWN],
  ["throws a frozen Error", () => { throw Object.freeze(new TypeError(SECRET)); }, "exception", "TypeError"],
  ["throws a symbol", () => { throw Symbol(SECRET); }, "exception", NON_ERROR_THROWN],
  ["throws a BigInt", () => { throw 10n ** 30n; }, "exception", NON_ERROR_THROWN],
  ["throws a cyclic object", () => { const o: Record<string, unknown> = { message: SECRET }; o["self"] = o; throw o; }, "exception", NON_ERROR_THROWN],
  // Returned values.
  ["returns a Proxy whose every trap throws", () => trapEverything() as never, "exception", "Error"],
  ["returns a Proxy whose traps throw the Proxy", () => selfThrowingProxy() as never, "exception", NON_ERROR_THROWN],
  ["returns a revoked Proxy", () => revokedProxy() as never, "exception", "TypeError"],
  ["returns an object whose then getter throws a Proxy", () => throwingGetter({}, "then", selfThrowingProxy()) as never, "exception", NON_ERROR_THROWN],
  ["returns a look-alike outcome with throwing getters", () => throwingGetter(throwingGetter(throwingGetter({}, "kind", SECRET), "reason", SECRET), "code", SECRET) as never, "invalid_return", "InvalidReturn"],
  ["returns an object whose Symbol.toPrimitive and toString throw", () => ({ [Symbol.toPrimitive]() { throw SECRET; }, toString() { throw SECRET; } }) as never, "invalid_return", "InvalidReturn"],
  ["returns a frozen Error", () => Object.freeze(new TypeError(SECRET)) as never, "invalid_return", "InvalidReturn"],
  ["returns a cyclic object", () => { const o: Record<string, unknown> = { reason: SECRET }; o["self"] = o; return o as never; }, "invalid_return", "InvalidReturn"],
  // Continue(modified) with a modified event that is none.
  ["returns Continue(a Proxy whose every trap throws)", () => Continue(trapEverything() as never), "wrong_event_type", "WrongEventType"],
  ["returns Continue(a Proxy of a real event)", () => Continue(new Proxy(toolCall(), {})), "wrong_event_type", "WrongEventType"],
  ["returns Continue(a revoked Proxy)", () => Continue(revokedProxy() as never), "wrong_event_type", "WrongEventType"],
  [
    "returns Continue(a ToolCallEvent look-alike with throwing getters)",
    () => Continue(throwingGetter(throwingGetter(Object.create(ToolCallEvent.prototype) as object, "step", SECRET), "toJSON", SECRET) as never),
    "wrong_event_type",
    "WrongEventType",
  ],
  [
    "returns Continue(an event built with a Proxy for prototype)",
    () => Continue(Reflect.construct(ToolCallEvent, [{ tool: { name: "t" }, call: {} }], protoProxyTarget()) as never),
    "wrong_event_type",
    "WrongEventType",
  ],
  [
    "returns Continue(an event holding a ToolSpec look-alike)",
    () => Continue(toolCall().with({ tool: throwingGetter(throwingGetter(Object.create(ToolSpec.prototype) as object, "name", new RangeError(SECRET)), "toJSON", SECRET) as never })),
    "exception",
    "RangeError",
  ],
  // Non-Promise thenables.
  ["returns a thenable whose then throws a Proxy", () => thenable(() => { throw selfThrowingProxy(); }), "exception", NON_ERROR_THROWN],
  ["returns a thenable that rejects with a revoked Proxy", () => thenable((_, reject) => reject(revokedProxy())), "exception", NON_ERROR_THROWN],
  ["returns a thenable that resolves to a Proxy", () => thenable((resolve) => resolve(selfThrowingProxy())), "exception", NON_ERROR_THROWN],
  ["returns a thenable that resolves to Continue(a Proxy)", () => thenable((resolve) => resolve(Continue(trapEverything() as never))), "wrong_event_type", "WrongEventType"],
];

const CHAINS = [
  ["without a timeout", null],
  ["with a timeout", "2s"],
] as const;

describe("hostile middleware (issue 13): emit resolves, R9 holds", () => {
  for (const [title, answer, failure, error] of HOSTILE) {
    for (const [timed, timeout] of CHAINS) {
      it(`closed, ${timed}: a middleware that ${title} blocks with middleware_error`, async () => {
        const { result, context, shown } = await emitWith(answer, { timeout });
        assert.deepEqual(outcomeJSON(result.outcome), {
          kind: "block",
          reason: `middleware guard failed: ${failure}`,
          code: "middleware_error",
        });
        assert.deepEqual(
          context.trace.records().map((r) => [r.kind, r.middleware, r.failure, r.error]),
          [["failure", "guard", failure, error], ["hook", undefined, undefined, undefined]],
        );
        assert.ok(!shown.includes(SECRET), shown.slice(0, 500)); // R9
      });

      it(`open, ${timed}: a middleware that ${title} counts as Continue`, async () => {
        const { result, context, shown } = await emitWith(answer, { failMode: "open", timeout });
        assert.deepEqual(outcomeJSON(result.outcome), { kind: "continue", modified: false });
        assert.deepEqual(result.event.toJSON(), toolCall().toJSON());
        assert.deepEqual(
          context.trace.records().map((r) => [r.kind, r.middleware, r.failure, r.error]),
          [["failure", "guard", failure, error], ["outcome", "after", undefined, undefined], ["hook", undefined, undefined, undefined]],
        );
        assert.ok(!shown.includes(SECRET), shown.slice(0, 500)); // R9
      });
    }
  }

  it("strict contracts: Continue(a look-alike event) is wrong_event_type, never checked against a contract", async () => {
    const fake = throwingGetter(Object.create(ToolCallEvent.prototype) as object, "toJSON", new Error(SECRET));
    const { result, context, shown } = await emitWith(() => Continue(fake as never), { contracts: "strict" });
    assert.equal(result.outcome.kind === "block" && result.outcome.code, "middleware_error");
    assert.equal(context.trace.at(0)?.failure, "wrong_event_type");
    assert.ok(!shown.includes(SECRET));
  });

  it("contracts: an event holding a model look-alike is never made, so never checked", async () => {
    const fake = throwingGetter(Object.create(ToolSpec.prototype) as object, "toJSON", new Error(SECRET));
    for (const contracts of ["warn", "strict"] as const) {
      const { result, context, shown } = await emitWith(() => Continue(toolCall().with({ tool: fake as never })), { contracts, failMode: "open" });
      assert.deepEqual(outcomeJSON(result.outcome), { kind: "continue", modified: false });
      assert.equal(context.trace.at(0)?.failure, "exception");
      assert.ok(!shown.includes(SECRET));
    }
  });

  it("still awaits a non-Promise thenable and takes its outcome", async () => {
    const { result, context } = await emitWith(() => thenable((resolve) => resolve(Suspend("wait", { code: "hold" }))));
    assert.deepEqual(outcomeJSON(result.outcome), { kind: "suspend", reason: "wait", approver_role: null, code: "hold" });
    assert.equal(context.trace.at(0)?.kind, "outcome");
  });

  it("times out a thenable that never calls back, at the middleware's timeout", async () => {
    const { result, context } = await emitWith(() => thenable(() => {}), { timeout: "20ms" });
    assert.deepEqual(outcomeJSON(result.outcome), { kind: "block", reason: "middleware guard failed: timeout", code: "middleware_timeout" });
    assert.equal(context.trace.at(0)?.error, "MiddlewareTimeout");
  });

  it("times out a Promise that never settles, at the middleware's timeout", async () => {
    const { result, context } = await emitWith(() => new Promise<never>(() => {}), { failMode: "open", timeout: "20ms" });
    assert.deepEqual(outcomeJSON(result.outcome), { kind: "continue", modified: false });
    assert.equal(context.trace.at(0)?.failure, "timeout");
  });

  it("keeps the name of an Error whose name is a type name, from a field, a getter or a DOMException", async () => {
    class RefundServiceDown extends Error {
      override get name() {
        return "RefundServiceDown";
      }
    }
    class Dotted extends Error {
      override name = "payments.CardDeclined";
    }
    // (a DOMException named AbortError is the runtime's cancellation: kind `cancelled`, I15)
    const names = [];
    for (const thrown of [new RefundServiceDown(SECRET), new Dotted(SECRET), new DOMException(SECRET, "NotFoundError"), Object.freeze(new RangeError(SECRET))]) {
      const { context } = await emitWith(() => Promise.reject(thrown));
      names.push(context.trace.at(0)?.error);
    }
    assert.deepEqual(names, ["RefundServiceDown", "payments.CardDeclined", "NotFoundError", "RangeError"]);
  });

  it("records an Error whose name is no type name as UnnamedException (I28): empty, spaced, too long", async () => {
    const names = [];
    for (const name of ["", "Refund Service Down", `E${"x".repeat(128)}`, "line\nbreak", "9Lives"]) {
      const thrown = new Error(SECRET);
      thrown.name = name;
      const { context } = await emitWith(() => { throw thrown; });
      names.push(context.trace.at(0)?.error);
    }
    assert.deepEqual(names, ["UnnamedException", "UnnamedException", "UnnamedException", "UnnamedException", "UnnamedException"]);
  });

  it("records an Error whose name is 128 characters long", async () => {
    const thrown = new Error(SECRET);
    thrown.name = `E${"x".repeat(127)}`;
    const { context } = await emitWith(() => { throw thrown; });
    assert.equal(context.trace.at(0)?.error, thrown.name);
  });

  it("lets a Block answered after a hostile open failure win", async () => {
    const { result } = await emitWith(() => { throw selfThrowingProxy(); }, { failMode: "open" });
    assert.equal(result.outcome.kind, "continue");
    const blocked = await emitWith(() => thenable((resolve) => resolve(Block("no", { code: "deny" }))));
    assert.deepEqual(outcomeJSON(blocked.result.outcome), { kind: "block", reason: "no", code: "deny" });
  });
});
