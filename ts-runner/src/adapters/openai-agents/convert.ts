/**
 * The SDK's values as harnessweaver's: input items as messages, a model response, tool specs.
 *
 * Best effort: what the bus sees is what the SDK asked for or answered, so a middleware can
 * judge it. A rewritten model request goes back item by item (rewrite.ts, which walks the items
 * as `messagesOf` does); a rewritten response does not (docs/integrations/openai-agents-js.md).
 * The SDK's items are read as plain JSON-like objects, as Python's
 * adapter reads them, so a field the SDK adds or drops changes what the bus sees, not whether
 * the run goes on.
 */

import type { ModelRequest as SdkModelRequest, ModelResponse as SdkModelResponse } from "@openai/agents";
import { Message, ModelResponse, ToolCall, ToolSpec, Usage, type JsonObject, type JsonValue } from "harnessweaver";

type Item = { readonly [key: string]: unknown };

const ROLES: Readonly<Record<string, "user" | "assistant" | "system">> = {
  user: "user",
  assistant: "assistant",
  system: "system",
  developer: "system",
};

function isItem(value: unknown): value is Item {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function str(value: unknown): string {
  return typeof value === "string" ? value : "";
}

/** The text of a message's content: a string, or the text parts of a list. */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((part) => (isItem(part) ? str(part["text"]) : "")).join("");
}

/** A value as JSON (text for what has no JSON form: the model reads its text anyway). */
export function jsonable(value: unknown): JsonValue {
  if (value === undefined) return null;
  try {
    const text = JSON.stringify(value);
    return text === undefined ? String(value) : (JSON.parse(text) as JsonValue);
  } catch {
    return String(value);
  }
}

/** A tool call's JSON arguments as an object; `null` when they are not a JSON object. */
export function argumentsOf(text: unknown): JsonObject | null {
  if (text === undefined || text === null || text === "") return {};
  if (typeof text !== "string") return null;
  try {
    const parsed: unknown = JSON.parse(text);
    return isItem(parsed) ? (parsed as JsonObject) : null;
  } catch {
    return null;
  }
}

function callOf(item: Item): ToolCall {
  return new ToolCall({ id: str(item["callId"]), name: str(item["name"]), arguments: argumentsOf(item["arguments"]) ?? {} });
}

function outputText(output: unknown): string {
  if (typeof output === "string") return output;
  if (isItem(output) && typeof output["text"] === "string") return output["text"];
  return JSON.stringify(jsonable(output));
}

/**
 * The conversation as the model is asked it: the system prompt, then each message, tool call and
 * tool output of the input items (other items, e.g. reasoning, are left out).
 */
export function messagesOf(system: string | undefined, input: SdkModelRequest["input"]): Message[] {
  const messages = system ? [new Message({ role: "system", content: system })] : [];
  const items: readonly unknown[] = typeof input === "string" ? [{ role: "user", content: input }] : input;
  for (const item of items) {
    if (!isItem(item)) continue;
    const kind = item["type"];
    const role = str(item["role"]);
    if (kind === "function_call") {
      messages.push(new Message({ role: "assistant", toolCalls: [callOf(item)] }));
    } else if (kind === "function_call_result") {
      messages.push(new Message({ role: "tool", content: outputText(item["output"]), toolCallId: str(item["callId"]) }));
    } else if (Object.hasOwn(ROLES, role)) {
      messages.push(new Message({ role: ROLES[role] ?? "user", content: textOf(item["content"]) }));
    }
  }
  return messages;
}

/** An SDK model response as harnessweaver's: its text and tool calls, its usage. */
export function responseOf(response: Pick<SdkModelResponse, "output" | "usage">): ModelResponse {
  const text: string[] = [];
  const calls: ToolCall[] = [];
  for (const item of response.output as readonly unknown[]) {
    if (!isItem(item)) continue;
    if (item["type"] === "function_call") calls.push(callOf(item));
    else if (item["type"] === "message") text.push(textOf(item["content"]));
  }
  const usage = response.usage as unknown as Item | undefined;
  const tokens = (key: string): number => {
    const value = usage?.[key];
    return typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : 0;
  };
  return new ModelResponse({
    message: new Message({ role: "assistant", content: text.join(""), toolCalls: calls }),
    stopReason: calls.length > 0 ? "tool_use" : "end_turn",
    usage: new Usage({ inputTokens: tokens("inputTokens"), outputTokens: tokens("outputTokens") }),
  });
}

function schemaOf(value: unknown): JsonObject {
  const schema = jsonable(value);
  return isItem(schema) ? (schema as JsonObject) : {};
}

/** A function tool as offered to the model: its name, description and JSON Schema. */
export function specOf(tool: { readonly name: string; readonly description?: unknown; readonly parameters?: unknown }): ToolSpec {
  return new ToolSpec({ name: tool.name || "tool", description: str(tool.description), parameters: schemaOf(tool.parameters) });
}

/**
 * The tools a model request offers: its tools (function tools with their schema, others by name)
 * and its handoffs, as the tools the model sees them as (`transfer_to_<agent>`).
 */
export function requestTools(request: Pick<SdkModelRequest, "tools" | "handoffs">): ToolSpec[] {
  const tools = request.tools.map((tool) => {
    const item = tool as unknown as Item;
    return specOf({ name: str(item["name"]) || str(item["type"]), description: item["description"], parameters: item["parameters"] });
  });
  const handoffs = request.handoffs.map((handoff) =>
    specOf({ name: handoff.toolName, description: handoff.toolDescription, parameters: handoff.inputJsonSchema }),
  );
  return [...tools, ...handoffs];
}

/** A model as a name: its `model` field if it has one (a provider's models do), else its class. */
export function modelName(model: object, given: string | undefined): string {
  if (given !== undefined && given !== "") return given;
  const own = (model as Item)["model"];
  if (typeof own === "string" && own !== "") return own;
  return model.constructor.name;
}
