/**
 * Issue 13, as a property: whatever hostile value a middleware throws, rejects with, returns
 * or resolves to (Proxies whose traps throw, revoked Proxies, getters that throw, thenables,
 * symbols, BigInts, cyclic objects, and compositions of them), `emit()` resolves under the
 * middleware's fail mode, the secret never gets into the result or the trace (R9), and the
 * trace stays well-formed: the strict reader reads it back as it was written. The caller's
 * event and run id are hostile too (I21): any integer step (negative, -0, past 2^53 - 1), any
 * tool name and run id (lone surrogates included); every record carries their correlation.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { outcomeJSON, ToolCallEvent, Trace, type Answer, type FailMode } from "../index.js";
import { emitWith, SECRET } from "../testing/hostile.js";
import { build, mayHang, recipes, type Recipe } from "../testing/recipes.js";

type How = "throw" | "reject" | "return" | "resolve";

/** What the `guard` middleware does with the value its recipe makes. */
function answer(how: How, recipe: Recipe): () => Answer | PromiseLike<Answer> {
  switch (how) {
    case "throw":
      return () => {
        throw build(recipe);
      };
    case "reject":
      return async () => {
        throw build(recipe);
      };
    case "return":
      return () => build(recipe) as Answer;
    case "resolve":
      return async () => build(recipe) as Answer;
  }
}

/** Text of any UTF-16 code units, lone surrogates included, and any code points. */
const anyText = fc.string({
  unit: fc.oneof(
    fc.integer({ min: 0, max: 0xffff }).map((unit) => String.fromCharCode(unit)),
    fc.constantFrom("\ud800", "\udbff", "\udc00", "\udfff"),
    fc.string({ unit: "binary", minLength: 1, maxLength: 1 }),
  ),
  maxLength: 12,
});

/** Any step an event's checks let through: every integer, the boundaries of I21 among them. */
const anyStep = fc.oneof(
  fc.integer(),
  fc.maxSafeInteger(),
  fc.constantFrom(0, -0, -1, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER + 1, 2 ** 64, 1e300, -Number.MAX_SAFE_INTEGER),
);

/** A type name as I5 and failure.ts allow it (these recipes only make ASCII ones). */
const TYPE_NAME = /^[$_A-Za-z][$\w]*(?:\.[$_A-Za-z][$\w]*)*$/;

describe("hostile middleware, as a property (issue 13)", () => {
  it("emit resolves, R9 holds and the trace is well-formed, whatever a middleware throws or answers", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<How>("throw", "reject", "return", "resolve"),
        recipes,
        fc.constantFrom<FailMode>("closed", "open"),
        fc.boolean(),
        anyStep,
        anyText,
        anyText,
        async (how, recipe, failMode, timed, step, tool, runId) => {
          // A value that never settles needs a timeout (without one, waiting forever is allowed).
          const timeout = mayHang(recipe) ? "20ms" : timed ? "2s" : null;
          const event = new ToolCallEvent({ step, tool: { name: tool }, call: { name: tool } });
          const { result, context, shown } = await emitWith(answer(how, recipe), { failMode, timeout, event, runId });
          assert.ok(!shown.includes(SECRET), "the secret got out (R9)");

          const jsonl = context.trace.toJSONL();
          assert.equal(Trace.fromJSONL(jsonl).toJSONL(), jsonl);
          assert.ok(jsonl.isWellFormed(), "a trace's text is UTF-8 (I21: surrogates become U+FFFD)");
          const records = context.trace.records();
          const correlation = {
            run: runId.toWellFormed(),
            ...(Number.isSafeInteger(step) && step >= 0 ? { step: Object.is(step, -0) ? 0 : step } : {}),
            tool: tool.toWellFormed(),
          };
          for (const record of records) {
            assert.deepEqual({ run: record.run, step: record.step, tool: record.tool }, { step: undefined, ...correlation });
          }
          const [guard, hook] = [records[0], records.at(-1)];
          assert.ok(guard !== undefined && hook !== undefined);
          assert.equal(guard.middleware, "guard");
          assert.equal(hook.kind, "hook");
          assert.equal(hook.outcome, result.outcome.kind);
          const stopped = guard.outcome === "block";
          assert.equal(records.length, stopped ? 2 : 3); // `after` runs unless guard blocked
          if (guard.kind === "failure") {
            assert.ok(guard.error !== undefined && guard.error.length <= 128 && TYPE_NAME.test(guard.error), "error is a type name");
            assert.equal(guard.fail_mode, failMode);
            if (failMode === "closed") {
              const code = guard.failure === "timeout" ? "middleware_timeout" : "middleware_error";
              assert.deepEqual(outcomeJSON(result.outcome), { kind: "block", reason: `middleware guard failed: ${guard.failure}`, code });
            } else {
              assert.deepEqual([guard.outcome, guard.modified], ["continue", false]);
            }
          } else {
            assert.equal(guard.kind, "outcome");
          }
        },
      ),
      { numRuns: 400 },
    );
  });
});
