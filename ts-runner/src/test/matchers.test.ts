import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { declare } from "../declaration.js";
import { globMatch } from "../matcher.js";
import { MAX_KEYED_PLANS, planFor, Registry } from "../registry.js";

// Matchers (I22): the corpus pins the behaviour shared with Python; these pin what only
// TypeScript can get wrong (UTF-16 strings, the bounded per-key cache).

const call = () => undefined;

describe("matchers (I22)", () => {
  it("globs match by code point, so ? is one astral character", () => {
    assert.equal(globMatch("a?c", "a\u{1F600}c"), true);
    assert.equal(globMatch("a??c", "a\u{1F600}c"), false);
    assert.equal(globMatch("refund_*", "refund_payment"), true);
    assert.equal(globMatch("Refund*", "refund"), false);
  });

  it("agrees with a regular expression on * and ?", () => {
    const toRegex = (p: string) =>
      new RegExp(`^${[...p].map((c) => (c === "*" ? ".*" : c === "?" ? "." : c)).join("")}$`, "su");
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom("a", "b", "*", "?"), minLength: 1, maxLength: 6 }),
        fc.string({ unit: fc.constantFrom("a", "b"), maxLength: 6 }),
        (pattern, name) => globMatch(pattern, name) === toRegex(pattern).test(name),
      ),
    );
  });

  it("keeps at most MAX_KEYED_PLANS plans per hook point under endless tool names", () => {
    const registry = new Registry();
    registry.register(declare({ name: "r", hooks: ["tool.before"], failMode: "closed", match: { tool: "refund_*" } }), call);
    const plan = registry.plan("tool.before");
    assert.equal(plan.key, "tool");
    for (let i = 0; i < 10 * MAX_KEYED_PLANS; i += 1) {
      assert.equal(planFor(plan, `tool_${i}`).entries.length, 0);
      assert.ok(plan.byKey.size <= MAX_KEYED_PLANS);
    }
    assert.equal(planFor(plan, "refund_1").entries.length, 1);
  });

  it("a chain without matchers reads no key", () => {
    const registry = new Registry();
    registry.register(declare({ name: "p", hooks: ["tool.before"], failMode: "closed" }), call);
    const plan = registry.plan("tool.before");
    assert.equal(plan.key, null);
    assert.equal(planFor(plan, "anything"), plan);
  });
});
