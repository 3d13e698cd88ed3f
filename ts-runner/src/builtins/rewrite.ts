/**
 * Rewriting the text of an event: what the redacting built-ins share (python's `_rewrite.py`).
 *
 * Each function applies a text rewrite to every string of one part of an event and returns
 * the modified event, or `null` when the rewrite changed nothing: a middleware then answers a
 * plain `Continue()` instead of building a copy nobody needs (the trace says `modified: false`).
 *
 * What counts as the text of each event:
 * - `task.start`: the task's input, every string at any depth (keys are left alone);
 * - `tool.before`: the call's arguments, the same way;
 * - `tool.after`: the result's output, the same way;
 * - `model.before`: each message's content and the arguments of the tool calls it carries.
 */

import type { Message, ModelRequestEvent, TaskStartEvent, ToolCall, ToolCallEvent, ToolResultEvent } from "../events.js";
import type { JsonObject, JsonValue } from "../json.js";

/** A text rewrite, such as a pattern's replace-all. */
export type Rewrite = (text: string) => string;

/** `value` with every string rewritten; the very same object when nothing changed. */
export function rewriteJson(value: JsonValue, rewrite: Rewrite): JsonValue {
  if (typeof value === "string") {
    const next = rewrite(value);
    return next === value ? value : next;
  }
  if (Array.isArray(value)) {
    const items = (value as readonly JsonValue[]).map((item) => rewriteJson(item, rewrite));
    return items.some((item, i) => item !== value[i]) ? items : value;
  }
  if (typeof value === "object" && value !== null) {
    const object = value as JsonObject;
    let changed = false;
    const out: Record<string, JsonValue> = {};
    for (const [key, item] of Object.entries(object)) {
      const next = rewriteJson(item, rewrite);
      if (next !== item) changed = true;
      out[key] = next;
    }
    return changed ? out : value;
  }
  return value;
}

function rewriteArguments(call: ToolCall, rewrite: Rewrite): ToolCall {
  const args = rewriteJson(call.arguments, rewrite);
  return args === call.arguments ? call : call.with({ arguments: args as JsonObject });
}

/** The messages with their contents and tool-call arguments rewritten, or `null`. */
export function rewriteMessages(messages: readonly Message[], rewrite: Rewrite): Message[] | null {
  let changed = false;
  const out = messages.map((message) => {
    const content = rewrite(message.content);
    const calls = message.toolCalls.map((call) => rewriteArguments(call, rewrite));
    const sameCalls = calls.every((call, i) => call === message.toolCalls[i]);
    if (content === message.content && sameCalls) return message;
    changed = true;
    return message.with({ content, toolCalls: calls });
  });
  return changed ? out : null;
}

/** `model.before`: the request with its messages rewritten, or `null`. */
export function rewriteRequest(event: ModelRequestEvent, rewrite: Rewrite): ModelRequestEvent | null {
  const messages = rewriteMessages(event.request.messages, rewrite);
  return messages === null ? null : event.with({ request: event.request.with({ messages }) });
}

/** `task.start`: the task with its input rewritten, or `null`. */
export function rewriteTaskInput(event: TaskStartEvent, rewrite: Rewrite): TaskStartEvent | null {
  const input = rewriteJson(event.input, rewrite);
  return input === event.input ? null : event.with({ input });
}

/** `tool.before`: the call with its arguments rewritten, or `null`. */
export function rewriteToolCall(event: ToolCallEvent, rewrite: Rewrite): ToolCallEvent | null {
  const call = rewriteArguments(event.call, rewrite);
  return call === event.call ? null : event.with({ call });
}

/** `tool.after`: the result with its output rewritten, or `null`. */
export function rewriteToolResult(event: ToolResultEvent, rewrite: Rewrite): ToolResultEvent | null {
  const output = rewriteJson(event.result.output, rewrite);
  return output === event.result.output ? null : event.with({ result: event.result.with({ output }) });
}
