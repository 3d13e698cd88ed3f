import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  EVENT_TYPES,
  eventFromJSON,
  HOOK_POINTS,
  isEvent,
  Message,
  ModelRequest,
  ModelResponse,
  ModelResponseEvent,
  TaskStartEvent,
  ToolCall,
  ToolCallEvent,
  ToolResult,
  ToolResultEvent,
  ToolSpec,
  Usage,
  type HookPoint,
} from "../index.js";
import { CATALOGUE, toolCall } from "../testing/support.js";

/** A minimal valid JSON form of a catalogue type: its required fields, recursively. */
function minimal(type: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(CATALOGUE.types[type] ?? {})) {
    if (!field.required) continue;
    out[key] = field.type === "enum" ? "user" : field.type === "string" ? "x" : minimal(field.type);
  }
  return out;
}

describe("events", () => {
  it("match the catalogue: one class per hook point, named as its event type", () => {
    assert.deepEqual(Object.keys(EVENT_TYPES), [...HOOK_POINTS]);
    for (const hook of CATALOGUE.hooks) {
      assert.equal(EVENT_TYPES[hook.name as keyof typeof EVENT_TYPES].typeName, hook.event);
    }
  });

  it("have exactly the catalogue's fields and defaults in their JSON form", () => {
    for (const { name, event } of CATALOGUE.hooks) {
      const json = eventFromJSON(name as HookPoint, minimal(event)).toJSON();
      const fields = CATALOGUE.types[event]!;
      assert.deepEqual(Object.keys(json), Object.keys(fields), event);
      for (const [key, field] of Object.entries(fields)) {
        if (!field.required) assert.deepEqual(json[key], field.default, `${event}.${key}`);
      }
    }
  });

  it("declare every catalogue type's fields: JSON key, type and whether required", () => {
    const classes = [...Object.values(EVENT_TYPES), Message, ToolSpec, ToolCall, ToolResult, Usage, ModelRequest, ModelResponse];
    assert.deepEqual(classes.map((C) => C.typeName).sort(), Object.keys(CATALOGUE.types).sort());
    for (const Cls of classes) {
      const declared = Object.values(Cls.schema as Record<string, { json: string; type: string; required: boolean }>).map(
        (field) => [field.json, field.type, field.required],
      );
      const expected = Object.entries(CATALOGUE.types[Cls.typeName] ?? {}).map(([key, field]) => [key, field.type, field.required === true]);
      assert.deepEqual(declared, expected, Cls.typeName);
    }
  });

  it("read and write every catalogue sample unchanged", () => {
    for (const hook of HOOK_POINTS) {
      const sample = CATALOGUE.samples[hook];
      assert.deepEqual(eventFromJSON(hook, sample).toJSON(), sample, hook);
    }
  });

  it("use camelCase properties and snake_case JSON", () => {
    const event = new ModelResponseEvent({ response: { message: { role: "assistant", toolCallId: "c1" } } });
    assert.equal(event.response.message.toolCallId, "c1");
    assert.equal(event.response.stopReason, "end_turn");
    assert.equal(event.response.usage.costUsd, 0);
    const json = event.toJSON() as { response: { message: Record<string, unknown> } };
    assert.equal(json.response.message["tool_call_id"], "c1");
    assert.ok(event.response instanceof ModelResponse && event.response.message instanceof Message);
    assert.ok(event.response.usage instanceof Usage);
  });

  it("are immutable, deeply", () => {
    const event = toolCall();
    assert.ok(Object.isFrozen(event) && Object.isFrozen(event.call) && Object.isFrozen(event.call.arguments));
    assert.throws(() => {
      (event as { step: number }).step = 2;
    }, TypeError);
    assert.throws(() => {
      (event.call.arguments as Record<string, unknown>)["amount_usd"] = 1;
    }, TypeError);
  });

  it("copy what they are given, and give out fresh JSON", () => {
    const args: Record<string, unknown> = { order: 42 };
    const event = new ToolCallEvent({ tool: { name: "t" }, call: { arguments: args as never } });
    args["order"] = 43;
    assert.equal(event.call.arguments["order"], 42);
    const json = event.toJSON() as { call: { arguments: Record<string, unknown> } };
    json.call.arguments["order"] = 44;
    assert.equal(event.call.arguments["order"], 42);
  });

  it("make modified copies of their own type with with()", () => {
    const event = new TaskStartEvent({ task: "refunds", input: "card 4242" });
    const redacted = event.with({ input: "[redacted]" });
    assert.ok(redacted instanceof TaskStartEvent);
    assert.equal(redacted.input, "[redacted]");
    assert.equal(redacted.task, "refunds");
    assert.equal(event.input, "card 4242");
    assert.throws(() => event.with({ task: 7 as never }), TypeError);
  });

  it("parse strictly: unknown keys, wrong types and missing required fields are errors", () => {
    const sample = CATALOGUE.samples["tool.before"] as Record<string, unknown>;
    assert.throws(() => ToolCallEvent.fromJSON({ ...sample, extra: 1 }), /has no field "extra"/);
    assert.throws(() => ToolCallEvent.fromJSON({ ...sample, step: "1" }), /step must be a whole number/);
    assert.throws(() => ToolCallEvent.fromJSON({ ...sample, step: 1.5 }), TypeError);
    assert.throws(() => ToolCallEvent.fromJSON({ step: 1 }), /ToolCallEvent.tool is required/);
    assert.throws(() => ToolCallEvent.fromJSON([]), TypeError);
    assert.throws(() => new Message({ role: "robot" as never }), /one of system, user, assistant, tool/);
    assert.throws(() => new TaskStartEvent({ input: Number.NaN }), TypeError);
    assert.throws(() => new TaskStartEvent({ input: new Date() as never }), TypeError);
  });

  it("keep types apart at run time", () => {
    const result = new ToolResultEvent({ tool: { name: "t" }, call: {} });
    assert.equal(result instanceof ToolCallEvent, false);
    assert.ok(isEvent(result) && !isEvent({ step: 1 }));
    assert.equal(Object.prototype.toString.call(result), "[object ToolResultEvent]");
  });
});
