/**
 * A model call's parameters as harnessweaver's `ModelRequest`, and a modified request back.
 *
 * Going there is best effort: what the bus sees is the text of each message, its tool calls
 * and tool results, and the function tools offered. Coming back, a change is applied where it
 * was made: a message whose harnessweaver form is unchanged keeps the SDK's own (files,
 * reasoning, provider options); a changed one is rebuilt from its text, keeping its non-text
 * parts. A change the SDK cannot be given (another model, a tool added) is refused by the
 * caller, never dropped silently.
 */

import { Message, ModelRequest, ToolCall, ToolSpec } from "../../events.js";
import { jsonEqual, type JsonObject } from "../../json.js";
import type { CallOptions, CallTool, Prompt, PromptMessage } from "./types.js";

type Part<M extends PromptMessage> = M["content"] extends readonly (infer P)[] ? P : never;
type AssistantMessage = Extract<PromptMessage, { role: "assistant" }>;
type UserMessage = Extract<PromptMessage, { role: "user" }>;
type ToolMessage = Extract<PromptMessage, { role: "tool" }>;
type ToolResultPart = Extract<Part<ToolMessage>, { type: "tool-result" }>;
type ToolCallPart = Extract<Part<AssistantMessage>, { type: "tool-call" }>;

/** Where a harnessweaver message came from: a prompt message, and for tool results its part. */
interface Origin {
  readonly message: number;
  readonly part: number | null;
}

/** The request as the bus sees it, and where each of its messages came from. */
export interface SeenRequest {
  readonly request: ModelRequest;
  readonly origins: readonly Origin[];
}

/**
 * An object as JSON, the way the SDK itself serialises values (`toJSON`, a Date as text,
 * `undefined` dropped); null for anything but an object, or one JSON cannot hold (a cycle, a
 * BigInt).
 */
export function jsonObject(value: unknown): JsonObject | null {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  try {
    const copy: unknown = JSON.parse(JSON.stringify(value));
    return typeof copy === "object" && copy !== null && !Array.isArray(copy) ? (copy as JsonObject) : null;
  } catch {
    return null;
  }
}

/** A value as JSON for an event: its JSON form, or its text when it has none. */
export function jsonValue(value: unknown): import("../../json.js").JsonValue {
  if (value === undefined) return null;
  try {
    const text = JSON.stringify(value);
    return text === undefined ? String(value) : (JSON.parse(text) as import("../../json.js").JsonValue);
  } catch {
    return String(value);
  }
}

function textOf(parts: readonly ({ readonly type: "text"; readonly text: string } | { readonly type: string })[]): string {
  return parts.map((part) => ("text" in part && part.type === "text" ? part.text : "")).join("");
}

/** The text the model reads for a tool result. */
export function resultText(output: ToolResultPart["output"]): string {
  switch (output.type) {
    case "text":
    case "error-text":
      return output.value;
    case "json":
    case "error-json":
      return JSON.stringify(output.value);
    case "execution-denied":
      return `execution denied${output.reason === undefined ? "" : `: ${output.reason}`}`;
    case "content":
      return output.value.map((part) => (part.type === "text" ? part.text : "")).join("");
  }
}

function callOf(part: ToolCallPart): ToolCall {
  return new ToolCall({ id: part.toolCallId, name: part.toolName, arguments: jsonObject(part.input) ?? {} });
}

/** The function tools offered, as tool specs (provider tools by name, without a schema). */
export function toolSpecs(tools: readonly CallTool[] | undefined): ToolSpec[] {
  return (tools ?? []).map((tool) =>
    tool.type === "function"
      ? new ToolSpec({ name: tool.name, description: tool.description ?? "", parameters: jsonObject(tool.inputSchema) ?? {} })
      : new ToolSpec({ name: tool.name }),
  );
}

/** `params` as a `ModelRequest` for model `modelId`. */
export function requestOf(params: CallOptions, modelId: string): SeenRequest {
  const messages: Message[] = [];
  const origins: Origin[] = [];
  params.prompt.forEach((message, index) => {
    switch (message.role) {
      case "system":
        messages.push(new Message({ role: "system", content: message.content }));
        origins.push({ message: index, part: null });
        break;
      case "user":
        messages.push(new Message({ role: "user", content: textOf(message.content) }));
        origins.push({ message: index, part: null });
        break;
      case "assistant": {
        const calls = message.content.filter((part): part is ToolCallPart => part.type === "tool-call").map(callOf);
        messages.push(new Message({ role: "assistant", content: textOf(message.content), toolCalls: calls }));
        origins.push({ message: index, part: null });
        break;
      }
      case "tool":
        message.content.forEach((part, partIndex) => {
          if (part.type !== "tool-result") return; // approval responses are the SDK's, not the model's
          messages.push(new Message({ role: "tool", content: resultText(part.output), name: part.toolName, toolCallId: part.toolCallId }));
          origins.push({ message: index, part: partIndex });
        });
        break;
    }
  });
  const request = new ModelRequest({ model: modelId, messages, tools: toolSpecs(params.tools) });
  return { request, origins };
}

function callPart(call: ToolCall, before: readonly ToolCallPart[]): ToolCallPart {
  const same = before.find((part) => part.toolCallId === call.id);
  return { ...same, type: "tool-call", toolCallId: call.id, toolName: call.name, input: call.arguments };
}

/** Message `message` of the prompt with `changed`'s text and tool calls in place of its own. */
function rebuilt(message: PromptMessage, changed: Message, part: number | null): PromptMessage {
  switch (message.role) {
    case "system":
      return { ...message, content: changed.content };
    case "user": {
      const kept = message.content.filter((p) => p.type !== "text");
      const text: Part<UserMessage> = { type: "text", text: changed.content };
      return { ...message, content: [text, ...kept] };
    }
    case "assistant": {
      const before = message.content.filter((p): p is ToolCallPart => p.type === "tool-call");
      const kept = message.content.filter((p) => p.type !== "text" && p.type !== "tool-call");
      const text: Part<AssistantMessage>[] = changed.content === "" ? [] : [{ type: "text", text: changed.content }];
      return { ...message, content: [...kept, ...text, ...changed.toolCalls.map((call) => callPart(call, before))] };
    }
    case "tool": {
      const content = message.content.map((p, i) =>
        i === part && p.type === "tool-result" ? { ...p, output: { type: "text" as const, value: changed.content } } : p,
      );
      return { ...message, content };
    }
  }
}

/** A whole prompt built from messages alone (a middleware added or removed messages). */
function fresh(messages: readonly Message[]): Prompt {
  const prompt: PromptMessage[] = [];
  const names = new Map<string, string>();
  for (const message of messages) {
    if (message.role === "system") prompt.push({ role: "system", content: message.content });
    else if (message.role === "user") prompt.push({ role: "user", content: [{ type: "text", text: message.content }] });
    else if (message.role === "assistant") {
      for (const call of message.toolCalls) names.set(call.id, call.name);
      prompt.push(rebuilt({ role: "assistant", content: [] }, message, null));
    } else {
      const id = message.toolCallId ?? "";
      const part: ToolResultPart = {
        type: "tool-result",
        toolCallId: id,
        toolName: message.name ?? names.get(id) ?? "",
        output: { type: "text", value: message.content },
      };
      const last = prompt.at(-1);
      if (last?.role === "tool") prompt[prompt.length - 1] = { ...last, content: [...last.content, part] };
      else prompt.push({ role: "tool", content: [part] });
    }
  }
  return prompt;
}

/**
 * The prompt with the messages of `changed` (the chain's request) in place of `seen`'s. When the
 * chain kept the messages it was given (changed in place or not) and appended some (a guard's
 * note to the model), the given ones are applied in place and the new ones follow, so the SDK's
 * own messages keep their files and provider options; any other reshaping rebuilds the prompt.
 */
export function promptWith(prompt: Prompt, seen: SeenRequest, changed: readonly Message[]): Prompt {
  const before = seen.request.messages;
  const kept = changed.length >= before.length && before.every((m, i) => m.role === changed[i]?.role);
  if (!kept) return fresh(changed);
  const out = [...prompt];
  changed.slice(0, before.length).forEach((message, i) => {
    const origin = seen.origins[i];
    const original = before[i];
    if (origin === undefined || original === undefined || jsonEqual(message.toJSON(), original.toJSON())) return;
    const at = out[origin.message];
    if (at !== undefined) out[origin.message] = rebuilt(at, message, origin.part);
  });
  return [...out, ...fresh(changed.slice(before.length))];
}

/**
 * The tools of `params` as the chain left them: a tool removed is not offered, a function
 * tool's description and parameters are the chain's. A tool the chain added (nothing would run
 * it) is named in the result's `unknown`, for the caller to refuse.
 */
export function toolsWith(tools: readonly CallTool[] | undefined, changed: readonly ToolSpec[]): { tools: CallTool[]; unknown: string[] } {
  const given = new Map((tools ?? []).map((tool) => [tool.name, tool]));
  const out: CallTool[] = [];
  const unknown: string[] = [];
  for (const spec of changed) {
    const tool = given.get(spec.name);
    if (tool === undefined) unknown.push(spec.name);
    else if (tool.type !== "function" || jsonEqual(toolSpecs([tool])[0]?.toJSON(), spec.toJSON())) out.push(tool);
    else out.push({ ...tool, description: spec.description, inputSchema: { ...spec.parameters } });
  }
  return { tools: out, unknown };
}
