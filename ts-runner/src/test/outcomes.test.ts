import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Block, Continue, Escalate, isOutcome, outcomeJSON, Retry, severity, Suspend } from "../index.js";
import { toolCall } from "../testing/support.js";

describe("outcomes", () => {
  it("are frozen objects discriminated on kind, absent fields null", () => {
    const suspend = Suspend("needs approval");
    assert.deepEqual({ ...suspend }, { kind: "suspend", reason: "needs approval", approverRole: null, code: null });
    assert.ok(Object.isFrozen(suspend));
    assert.deepEqual({ ...Continue() }, { kind: "continue" });
    assert.deepEqual({ ...Escalate("review", { to: "ops", code: "x" }) }, { kind: "escalate", reason: "review", to: "ops", code: "x" });
  });

  it("Retry takes a delay per ruling 15 and a whole number of attempts", () => {
    assert.equal(Retry("later", { delay: "250ms" }).delay, 0.25);
    assert.equal(Retry("later", { delay: 2 }).delay, 2);
    assert.equal(Retry("later", { maxAttempts: 3 }).maxAttempts, 3);
    for (const delay of [0, -1, "2 s", Number.NaN, true]) {
      assert.throws(() => Retry("later", { delay: delay as never }), RangeError);
    }
    for (const maxAttempts of [0, 1.5, -2, true, "3"]) {
      assert.throws(() => Retry("later", { maxAttempts: maxAttempts as never }), RangeError);
    }
  });

  it("validate reasons and codes like the Python constructors", () => {
    assert.throws(() => Block(42 as never), { name: "TypeError", message: "Block.reason must be a string, got 42" });
    assert.throws(() => Block("x", { code: 7 as never }), TypeError);
    assert.throws(() => Suspend("x", { approverRole: false as never }), TypeError);
    assert.throws(() => Escalate(undefined as never), TypeError);
  });

  it("are recognised only when the helpers made them", () => {
    assert.ok(isOutcome(Block("x")));
    assert.equal(isOutcome({ kind: "block", reason: "looks like an outcome", code: null }), false);
    assert.equal(isOutcome({ ...Block("x") }), false);
  });

  it("rank Block > Suspend > Escalate > Retry > Continue(modified) > Continue (ruling 4)", () => {
    const ranked = [Block("b"), Suspend("s"), Escalate("e"), Retry("r"), Continue(toolCall()), Continue()];
    assert.deepEqual(ranked.map(severity), [5, 4, 3, 2, 1, 0]);
  });

  it("have the JSON form of INTERPRETING.md §6.2", () => {
    assert.deepEqual(outcomeJSON(Continue()), { kind: "continue", modified: false });
    assert.deepEqual(outcomeJSON(Continue(toolCall())), { kind: "continue", modified: true });
    assert.deepEqual(outcomeJSON(Block("b", { code: "c" })), { kind: "block", reason: "b", code: "c" });
    assert.deepEqual(outcomeJSON(Suspend("s", { approverRole: "finance" })), {
      kind: "suspend",
      reason: "s",
      approver_role: "finance",
      code: null,
    });
    assert.deepEqual(outcomeJSON(Escalate("e")), { kind: "escalate", reason: "e", to: null, code: null });
    assert.deepEqual(outcomeJSON(Retry("r", { delay: 0.5, maxAttempts: 3 })), {
      kind: "retry",
      reason: "r",
      delay: 0.5,
      max_attempts: 3,
      code: null,
    });
  });
});
