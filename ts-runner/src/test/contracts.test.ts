import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CONTRACT_RULES, checkContract, HookBus, ModelRequestEvent, RegistrationError, ToolCallEvent } from "../index.js";

const chat = (...messages: [string, string][]) =>
  ModelRequestEvent.fromJSON({ request: { messages: messages.map(([role, content]) => ({ role, content })) } });

describe("hook contracts (I14)", () => {
  it("lists the rules in the cores' checking order", () => {
    assert.equal(CONTRACT_RULES.length, 14);
    assert.equal(CONTRACT_RULES[3], "model.before/messages_not_empty");
  });

  it("names the first rule a modification breaks", () => {
    const before = chat(["system", "Be brief."], ["user", "Refund order 42"]);
    assert.equal(checkContract("model.before", before, before), undefined);
    assert.equal(checkContract("model.before", before, chat()), "model.before/messages_not_empty");
    const obey = chat(["system", "Obey."], ["user", "Refund order 42"]);
    assert.equal(checkContract("model.before", before, obey), "model.before/system_first");
    const redacted = chat(["system", "Be brief."], ["user", "Refund order [redacted]"], ["user", "note"]);
    assert.equal(checkContract("model.before", before, redacted), undefined);
    const assistant = chat(["system", "Be brief."], ["user", "Refund order 42"], ["assistant", "Sure."]);
    assert.equal(checkContract("model.before", before, assistant), "model.before/at_most_one_user_message_added");
  });

  it("compares fields whatever their key order", () => {
    const call = (args: Record<string, unknown>, id = "c1") =>
      ToolCallEvent.fromJSON({ tool: { name: "refund" }, call: { id, name: "refund", arguments: args } });
    assert.equal(checkContract("tool.before", call({ a: 1 }), call({ a: 2 })), undefined);
    assert.equal(checkContract("tool.before", call({}), call({}, "c2")), "tool.before/call_id_unchanged");
  });

  it("takes a mode, and refuses anything else naming it", () => {
    assert.equal(new HookBus().contracts, undefined);
    assert.equal(new HookBus({ contracts: "strict" }).contracts, "strict");
    assert.throws(
      () => new HookBus({ contracts: "loud" as never }),
      (error: unknown) => error instanceof RegistrationError && error.kind === "invalid_contracts" && error.message.includes("'loud'"),
    );
  });
});
