// The AuthZEN interop Todo scenario (conformance/authzen-interop) through harnessweaver.authzen
// as the PEP (Python: test_authzen_interop.py): each of the 40 published decisions becomes a
// tool call, is mapped by the PEP (I38), decided by the local Cedar decision point on the
// scenario's policies, and must come out as published.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { Continue, HookBus, type JsonValue } from "../index.js";
import { AuthZen, authzen, authzenRequest, denied } from "../policies/authzen.js";
import { call, REPO, run, startPdp, withoutGo, type Pdp } from "./authzen-support.test.js";

interface Decision {
  readonly request: {
    readonly subject: { readonly type: string; readonly id: string };
    readonly action: { readonly name: string };
    readonly resource: { readonly [key: string]: JsonValue };
  };
  readonly expected: boolean;
}

const SCENARIO = join(REPO, "conformance", "authzen-interop");
const DECISIONS = (JSON.parse(readFileSync(join(SCENARIO, "decisions.json"), "utf8")) as { decisions: Decision[] }).decisions;

/** The published request as the PEP sees it: a call of the tool named by the action, the resource as its argument, the subject as the run's user. */
const asEvent = (decision: Decision) =>
  [call(decision.request.action.name, { resource: decision.request.resource }), run({ user: decision.request.subject.id })] as const;

describe("authzen interop: the Todo scenario through the PEP", { skip: withoutGo() }, () => {
  let pdp: Pdp;
  before(async () => {
    pdp = await startPdp([join(SCENARIO, "policies.cedar")], join(SCENARIO, "entities.json"));
  });
  after(async () => pdp.stop());

  it("is whole: 40 decisions, 26 allowed, 5 users", () => {
    assert.equal(DECISIONS.length, 40);
    assert.equal(DECISIONS.filter((decision) => decision.expected).length, 26);
    assert.equal(new Set(DECISIONS.map((decision) => decision.request.subject.id)).size, 5);
  });

  it("gives every published decision, one by one through the bus", async () => {
    const bus = new HookBus();
    bus.register(authzen.build({ url: pdp.url, batch: false }));
    const got: boolean[] = [];
    for (const decision of DECISIONS) {
      const [event, ctx] = asEvent(decision);
      const outcome = (await bus.emit("tool.before", event, ctx)).outcome;
      assert.ok([Continue(), denied()].some((expected) => JSON.stringify(expected) === JSON.stringify(outcome)), JSON.stringify(outcome));
      got.push(outcome.kind === "continue");
    }
    assert.deepEqual(got, DECISIONS.map((decision) => decision.expected));
  });

  it("gives every published decision in one batch", async () => {
    const questions = DECISIONS.map((decision) => {
      const [event, ctx] = asEvent(decision);
      return authzenRequest("tool.before", event, ctx.envelope.attributes);
    });
    assert.deepEqual(await new AuthZen({ url: pdp.url }).evaluateMany(questions), DECISIONS.map((decision) => decision.expected));
  });
});
