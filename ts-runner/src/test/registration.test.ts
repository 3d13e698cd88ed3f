import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { HookPoint } from "../catalogue.js";
import { declare, type Band } from "../declaration.js";
import { Registry } from "../registry.js";

// What registering costs (issue 13), counted rather than timed: `planBuilds` counts the chains
// a registry has planned. Registering n middleware used to replan each one's hook points, every
// one from all n entries: quadratic.

const BANDS: readonly Band[] = ["task", "platform", "baseline", "app"]; // against band order
const call = () => undefined;

function registered(registry: Registry, count: number, start = 0): void {
  for (let i = start; i < start + count; i += 1) {
    const hooks: HookPoint[] = i % 2 ? ["tool.before", "tool.after"] : ["model.before"];
    registry.register(declare({ name: `mw${i}`, hooks, failMode: "closed", band: BANDS[i % 4] }), call);
  }
}

const bandsOf = (registry: Registry, hook: HookPoint) => registry.plan(hook).entries.map((e) => e.declaration.band);

describe("registration cost (issue 13)", () => {
  it("plans no chain until one is asked for, then each once", () => {
    const registry = new Registry();
    registered(registry, 2000);
    assert.equal(registry.planBuilds, 0);
    for (let k = 0; k < 3; k += 1) assert.equal(registry.plan("tool.before").entries.length, 1000);
    assert.equal(registry.planBuilds, 1);
    const inward = ["baseline", "platform", "app", "task"];
    const before = bandsOf(registry, "tool.before");
    assert.deepEqual(before, [...before].sort((a, b) => inward.indexOf(a) - inward.indexOf(b)));
    const after = bandsOf(registry, "tool.after");
    assert.deepEqual(after, [...before].reverse());
    assert.equal(registry.planBuilds, 2);
  });

  it("replans only the hook points a change touched, and only when asked", () => {
    const registry = new Registry();
    for (let step = 0; step < 50; step += 1) {
      registered(registry, 20, 20 * step);
      registry.plan("tool.before");
      registry.plan("tool.before");
    }
    assert.equal(registry.planBuilds, 50);
    registry.unregister("mw1"); // tool.before and tool.after
    registry.unregister("mw0"); // model.before: not asked for, so not planned
    assert.equal(registry.plan("tool.before").entries.length, 499);
    assert.equal(registry.planBuilds, 51);
    assert.ok(!registry.plan("tool.after").entries.some((e) => e.declaration.name === "mw1"));
    assert.equal(registry.planBuilds, 52);
  });

  it("keeps a plan handed out unchanged (ruling 3, I11)", () => {
    const registry = new Registry();
    registered(registry, 4);
    const held = registry.plan("tool.before");
    registry.unregister("mw1");
    registered(registry, 2, 4);
    assert.deepEqual(held.entries.map((e) => e.declaration.name), ["mw1", "mw3"]);
    assert.deepEqual(registry.plan("tool.before").entries.map((e) => e.declaration.name), ["mw5", "mw3"]);
  });
});
