import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Envelope, FixedClock, isOutcome, outcomeJSON, ToolCallEvent, type Event } from "../index.js";
import { Behaviours, modified, raised, THROW_VALUES, type Host } from "../conformance/behaviours.js";
import { ABSENT, append, lookup, put } from "../conformance/paths.js";
import { toolCall } from "../testing/support.js";

const SATURDAY = new Envelope({ clock: new FixedClock("2026-11-28T10:00:00+00:00") });
const signal = new AbortController().signal;

function host(features: string[] = []): Host & { fatals: unknown[]; ran: () => string[] } {
  const ran: string[] = [];
  const fatals: unknown[] = [];
  return {
    sample: () => toolCall({ order: 1 }),
    register: () => {
      throw new Error("no registering here");
    },
    unregister: () => undefined,
    ran: () => ran,
    fatal: (error) => void fatals.push(error),
    features: new Set(features),
    fatals,
  };
}

async function perform(b: Record<string, unknown>, event: Event = toolCall(), h: Host = host()) {
  return new Behaviours(h).perform(b, event, SATURDAY, signal);
}

describe("paths into the JSON form", () => {
  it("look up objects and list items", () => {
    const data = { call: { arguments: { order: 42 } }, list: [{ a: 1 }] };
    assert.equal(lookup(data, "call.arguments.order"), 42);
    assert.equal(lookup(data, "list.0.a"), 1);
    assert.equal(lookup(data, "call.missing"), ABSENT);
    assert.equal(lookup(data, "list.1"), ABSENT);
  });

  it("create absent keys and append to absent lists", () => {
    const data = { call: { arguments: {} } };
    put(data, "call.arguments.note.deep", "x");
    append(data, "call.arguments.trail", "a");
    append(data, "call.arguments.trail", "b");
    assert.deepEqual(data, { call: { arguments: { note: { deep: "x" }, trail: ["a", "b"] } } });
    assert.throws(() => append(data, "call.arguments.note", "c"), TypeError);
  });

  it("modify a copy of an event: set before append, validated", () => {
    const event = toolCall();
    const changed = modified(event, { append: { "call.arguments.trail": "seen" }, set: { "call.arguments.trail": ["first"], step: 2 } });
    assert.ok(changed instanceof ToolCallEvent);
    assert.deepEqual(changed.call.arguments["trail"], ["first", "seen"]);
    assert.equal(changed.step, 2);
    assert.equal(event.call.arguments["trail"], undefined);
    assert.throws(() => modified(event, { set: { step: "two" } }), TypeError);
  });
});

describe("behaviours (INTERPRETING.md §3)", () => {
  it("return every outcome kind, with optional fields", async () => {
    assert.equal(await perform({ return: "none" }), undefined);
    assert.deepEqual(outcomeJSON((await perform({ return: "continue" }))!), { kind: "continue", modified: false });
    assert.deepEqual(outcomeJSON((await perform({ return: "continue", modified_as: "tool.before" }))!), { kind: "continue", modified: true });
    assert.deepEqual(outcomeJSON((await perform({ return: "block", reason: "r", code: "c" }))!), { kind: "block", reason: "r", code: "c" });
    assert.deepEqual(outcomeJSON((await perform({ return: "suspend", reason: "r", approver_role: "a" }))!), { kind: "suspend", reason: "r", approver_role: "a", code: null });
    assert.deepEqual(outcomeJSON((await perform({ return: "escalate", reason: "r", to: "t" }))!), { kind: "escalate", reason: "r", to: "t", code: null });
    assert.deepEqual(outcomeJSON((await perform({ return: "retry", reason: "r", delay: 1, max_attempts: 3 }))!), { kind: "retry", reason: "r", delay: 1, max_attempts: 3, code: null });
  });

  it("return plain values that are not outcomes", async () => {
    const value = await perform({ return: "value", value: { kind: "block", reason: "x", code: null } });
    assert.deepEqual(value, { kind: "block", reason: "x", code: null });
    assert.equal(isOutcome(value), false);
  });

  it("raise Errors named as asked", async () => {
    await assert.rejects(perform({ raise: "ValueError", message: "bad" }), { name: "ValueError", message: "bad" });
    assert.equal(raised("RefundServiceDown", "x") instanceof Error, true);
  });

  it("branch on paths (JSON equality) and on the weekend", async () => {
    const kind = async (cond: Record<string, unknown>, event?: Event) =>
      (await perform({ if: cond, then: { return: "block", reason: "yes" }, else: { return: "continue" } }, event))?.kind;
    assert.equal(await kind({ path: "tool.name", equals: "refund_payment", weekend: true }), "block");
    assert.equal(await kind({ weekend: false }), "continue");
    assert.equal(await kind({ path: "call.arguments.amount_usd", equals: 120.0 }), "block");
    assert.equal(await kind({ path: "call.arguments.flag", equals: 1 }, toolCall({ flag: "1" })), "continue");
    assert.equal(await kind({ path: "call.arguments.missing", equals: null }), "continue");
    assert.equal(await kind({ path: "call.arguments.amount_usd", greater_than: 119 }), "block");
    assert.equal(await kind({ path: "call.arguments.amount_usd", greater_than: 120 }), "continue");
    assert.equal(await kind({ path: "tool.name", greater_than: 1 }), "continue");
    assert.equal((await perform({ if: { weekend: false }, then: { return: "continue" } })), undefined);
  });

  it("count calls per sequence node and reuse the last", async () => {
    const behaviours = new Behaviours(host());
    const node = { sequence: [{ return: "block", reason: "first" }, { return: "none" }] };
    const kinds = [];
    for (let i = 0; i < 3; i += 1) kinds.push((await behaviours.perform(node, toolCall(), SATURDAY, signal))?.kind);
    assert.deepEqual(kinds, ["block", undefined, undefined]);
  });

  it("record the registered name when the body starts", async () => {
    const h = host();
    await new Behaviours(h).function("guard_v2", { sleep: 0, then: { return: "none" } })(toolCall(), SATURDAY, signal);
    assert.deepEqual(h.ran(), ["guard_v2"]);
  });

  it("fail the case on what the runner cannot do", async () => {
    const h = host();
    await assert.rejects(perform({ dance: true }, toolCall(), h), { name: "BehaviourError" });
    await assert.rejects(perform({ register: {}, then: { return: "none" } }, toolCall(), h), /no registering here/);
    assert.equal(h.fatals.length, 2);
  });
});

describe(`the proposed ${THROW_VALUES} behaviour`, () => {
  it("throws the raw JSON value, asynchronously or synchronously", async () => {
    const h = host([THROW_VALUES]);
    await assert.rejects(perform({ throw: "oops" }, toolCall(), h), (thrown: unknown) => thrown === "oops");
    const body = new Behaviours(h).function("sync", { throw: 42, sync: true });
    assert.throws(() => body(toolCall(), SATURDAY, signal), (thrown: unknown) => thrown === 42);
    assert.deepEqual(h.ran(), ["sync"]);
  });

  it("needs the feature tag", async () => {
    const h = host();
    await assert.rejects(perform({ throw: null }, toolCall(), h), /needs the runner feature throw-values/);
    assert.equal(h.fatals.length, 1);
  });
});
