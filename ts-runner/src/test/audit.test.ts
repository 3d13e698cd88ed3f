import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { Block, Continue, Escalate, HookBus, middleware, Retry, RunContext, Suspend, type Answer, type Event } from "../index.js";
import { appended, toolCall, untimed } from "../testing/support.js";
import { Envelope } from "../envelope.js";

// Audit mode (I25): the corpus pins the cases shared with Python; this pins the rule for any
// chain: audited middleware change nothing but their own records.

type Kind = "none" | "modify" | "block" | "suspend" | "escalate" | "retry" | "throw";

function answer(kind: Kind, i: number, event: Event): Answer | Promise<Answer> {
  switch (kind) {
    case "none":
      return undefined;
    case "modify":
      return Continue(appended(event, `m${String(i)}`));
    case "block":
      return Block("b", { code: `b${String(i)}` });
    case "suspend":
      return Suspend("s", { code: `s${String(i)}` });
    case "escalate":
      return Escalate("e", { code: `e${String(i)}` });
    case "retry":
      return Retry("r", { code: `r${String(i)}` });
    case "throw":
      return Promise.reject(new Error("boom"));
  }
}

/** Emits once through `chain` (each: its answer, whether it is audited, its number). */
async function run(chain: readonly (readonly [Kind, boolean, number])[]) {
  const bus = new HookBus();
  const ran: string[] = [];
  chain.forEach(([kind, audit, i]) => {
    const name = `m${String(i)}`;
    const declared = middleware({ name, hooks: ["tool.before"], failMode: "closed", mode: audit ? "audit" : "enforce" }, (event) => {
      ran.push(name);
      return answer(kind, i, event);
    });
    bus.register(declared);
  });
  const context = new RunContext({ envelope: new Envelope({ runId: "r" }) });
  const result = await bus.emit("tool.before", toolCall(), context);
  return { result, ran, records: untimed(context.trace.records()) };
}

const KINDS: readonly Kind[] = ["none", "modify", "block", "suspend", "escalate", "retry", "throw"];

describe("audit mode (I25)", () => {
  it("an audited chain decides as the enforced middleware alone, and records the rest as audit", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(fc.constantFrom(...KINDS), fc.boolean()), { maxLength: 6 }), async (drawn) => {
        const chain = drawn.map(([kind, audit], i) => [kind, audit, i] as const);
        const full = await run(chain);
        const enforcedOnly = await run(chain.filter(([, audit]) => !audit));
        assert.deepEqual(full.result.outcome, enforcedOnly.result.outcome);
        assert.deepEqual(full.result.event.toJSON(), enforcedOnly.result.event.toJSON());
        assert.deepEqual(full.records.at(-1), enforcedOnly.records.at(-1)); // the hook record
        // Every audited middleware before the first enforced stop ran and says so; no other does.
        const audited = full.records.filter((r) => r["audit"] === true).map((r) => r["middleware"]);
        assert.deepEqual(audited, full.ran.filter((name) => chain[Number(name.slice(1))]?.[1] === true));
      }),
      { numRuns: 200 },
    );
  });
});

describe("audited warnings (I24 with I25)", () => {
  it("are on the record, before audit, in the line every implementation writes, and not on the result", async () => {
    const bus = new HookBus();
    bus.register(middleware({ name: "shadow", hooks: ["tool.before"], failMode: "closed", mode: "audit" }, () => Block("would block", { code: "policy", warnings: ["w1"] })));
    const context = new RunContext({ envelope: new Envelope({ runId: "r" }) });
    const result = await bus.emit("tool.before", toolCall(), context);
    assert.deepEqual([...result.warnings], []);
    const line = context.trace.toJSONL().split("\n")[0] ?? "";
    assert.deepEqual(Object.keys(JSON.parse(line) as object).slice(-5), ["code", "warnings", "audit", "t_ns", "duration_ns"]);
  });
});
