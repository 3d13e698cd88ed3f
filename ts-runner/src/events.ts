/**
 * Typed, immutable events: one class per hook point, with exactly the fields and defaults of
 * conformance/catalogue.json, and the models they are made of.
 *
 * Properties are camelCase (`event.call.arguments`, `result.isError`); the JSON form
 * (`toJSON()`, `fromJSON()`) keeps the catalogue's snake_case keys. Change an event by
 * returning `Continue(event.with({...}))`: instances are frozen.
 */

import type { HookPoint } from "./catalogue.js";
import { flag, integer, json, list, number, object, oneOf, optionalText, required, requiredText, text, withDefault } from "./fields.js";
import { model } from "./model.js";

/** A call of a tool as the model asked for it. */
export class ToolCall extends model("ToolCall", {
  id: text("id"),
  name: text("name"),
  arguments: object("arguments"),
}) {}

export class Message extends model("Message", {
  role: oneOf("role", ["system", "user", "assistant", "tool"]),
  content: text("content"),
  name: optionalText("name"),
  toolCallId: optionalText("tool_call_id"),
  toolCalls: list("tool_calls", ToolCall),
}) {}

/** A tool as offered to the model: name, description and JSON Schema parameters. */
export class ToolSpec extends model("ToolSpec", {
  name: requiredText("name"),
  description: text("description"),
  parameters: object("parameters"),
}) {}

export class ToolResult extends model("ToolResult", {
  output: json("output"),
  isError: flag("is_error"),
  truncated: flag("truncated"),
}) {}

export class Usage extends model("Usage", {
  inputTokens: integer("input_tokens"),
  outputTokens: integer("output_tokens"),
  costUsd: number("cost_usd"),
}) {}

export class ModelRequest extends model("ModelRequest", {
  model: text("model"),
  messages: list("messages", Message),
  tools: list("tools", ToolSpec),
}) {}

export class ModelResponse extends model("ModelResponse", {
  message: required("message", Message),
  stopReason: text("stop_reason", "end_turn"),
  usage: withDefault("usage", Usage),
}) {}

/** `task.start`: a task begins. */
export class TaskStartEvent extends model("TaskStartEvent", {
  task: text("task"),
  input: json("input"),
}) {}

/** `step.start`: a step of the run loop begins. */
export class StepStartEvent extends model("StepStartEvent", {
  step: integer("step"),
  messages: list("messages", Message),
  tools: list("tools", ToolSpec),
}) {}

/** `model.before`: the request about to be sent to the model. */
export class ModelRequestEvent extends model("ModelRequestEvent", {
  step: integer("step"),
  request: required("request", ModelRequest),
}) {}

/** `model.after`: the model's response. */
export class ModelResponseEvent extends model("ModelResponseEvent", {
  step: integer("step"),
  response: required("response", ModelResponse),
}) {}

/** `tool.before`: a tool call about to run (`event.tool.name`, `event.call.arguments`). */
export class ToolCallEvent extends model("ToolCallEvent", {
  step: integer("step"),
  tool: required("tool", ToolSpec),
  call: required("call", ToolCall),
}) {}

/** `tool.after`: a tool call and its result. */
export class ToolResultEvent extends model("ToolResultEvent", {
  step: integer("step"),
  tool: required("tool", ToolSpec),
  call: required("call", ToolCall),
  result: withDefault("result", ToolResult),
}) {}

/** `step.end`: a step finished, with the usage it cost. */
export class StepEndEvent extends model("StepEndEvent", {
  step: integer("step"),
  usage: withDefault("usage", Usage),
}) {}

/** `task.end`: the task finished, with its output and exit reason. */
export class TaskEndEvent extends model("TaskEndEvent", {
  output: json("output"),
  exitReason: text("exit_reason", "completed"),
  steps: integer("steps"),
  usage: withDefault("usage", Usage),
}) {}

/** The event class of every hook point, in catalogue order. */
export const EVENT_TYPES = Object.freeze({
  "task.start": TaskStartEvent,
  "step.start": StepStartEvent,
  "model.before": ModelRequestEvent,
  "model.after": ModelResponseEvent,
  "tool.before": ToolCallEvent,
  "tool.after": ToolResultEvent,
  "step.end": StepEndEvent,
  "task.end": TaskEndEvent,
} as const satisfies Record<HookPoint, unknown>);

export type EventTypes = typeof EVENT_TYPES;

/** The event type of hook point `H` (a union for a union of hook points). */
export type EventOf<H extends HookPoint> = InstanceType<EventTypes[H]>;

/** Any hook point's event. */
export type Event = EventOf<HookPoint>;

/** The name of an event's type (`ToolCallEvent`), or a description of a value that is none. */
export function typeNameOf(value: unknown): string {
  for (const Cls of Object.values(EVENT_TYPES)) if (value instanceof Cls) return Cls.typeName;
  if (value === null) return "null";
  if (typeof value !== "object") return typeof value;
  const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === "string" && name !== "" ? name : "Object";
}

/** Whether `value` is an event of any hook point. */
export function isEvent(value: unknown): value is Event {
  return Object.values(EVENT_TYPES).some((Cls) => value instanceof Cls);
}

/** Parses the JSON form of hook point `hook`'s event (strictly; a TypeError names the fault). */
export function eventFromJSON<H extends HookPoint>(hook: H, data: unknown): EventOf<H> {
  const Cls = EVENT_TYPES[hook] as unknown as { fromJSON(data: unknown): EventOf<H> };
  return Cls.fromJSON(data);
}
