/**
 * A rewrite the chain made, carried back into the SDK: the task's input (`task.start`) and the
 * model request (`step.start`'s messages, `model.before`'s request).
 *
 * The bus sees a picture of the SDK's values (convert.ts); coming back, each change is applied
 * where it was made, to the SDK item the message came from: an unchanged message keeps the
 * SDK's own item (ids, images, provider data), a changed one gets its new text (or tool-call
 * arguments) and keeps the rest. Messages appended at the end (a guard's note to the model) are
 * new user or system items. Anything the SDK's items cannot carry faithfully (a message removed
 * or reordered, a role changed, a tool call renamed, the model or the tools changed) is refused:
 * `null` with the reason, for the caller to end the run rather than send the request unchanged.
 */

import type { AgentInputItem, ModelRequest as SdkModelRequest } from "@openai/agents";
import { jsonEqual, type JsonValue, type Message, type ModelRequest } from "harnessweaver";

type Item = { readonly [key: string]: unknown };

/** Where each message of a request came from: the system instructions, or an input item. */
export type Origin = "instructions" | number;

/** The rewritten request, or why it cannot be given to the SDK. */
export type Rewritten = { readonly request: SdkModelRequest } | { readonly refused: string };

function isItem(value: unknown): value is Item {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** What `messagesOf` made each message from (the same walk, convert.ts): one origin a message. */
export function originsOf(system: string | undefined, input: SdkModelRequest["input"]): Origin[] {
  const origins: Origin[] = system ? ["instructions"] : [];
  if (typeof input === "string") return [...origins, 0];
  (input as readonly unknown[]).forEach((item, index) => {
    if (!isItem(item)) return;
    const kind = item["type"];
    const role = item["role"];
    if (kind === "function_call" || kind === "function_call_result") origins.push(index);
    else if (role === "user" || role === "assistant" || role === "system" || role === "developer") origins.push(index);
  });
  return origins;
}

/** A message's content with `text` as its text: text parts replaced by one, other parts kept. */
function contentWith(content: unknown, text: string, role: string): unknown {
  if (typeof content === "string" || !Array.isArray(content)) return text;
  const first = content.findIndex((part) => isItem(part) && typeof part["text"] === "string");
  if (first === -1) {
    return text === "" ? content : [{ type: role === "assistant" ? "output_text" : "input_text", text }, ...content];
  }
  return content.flatMap((part, i) => {
    if (!isItem(part) || typeof part["text"] !== "string") return [part];
    return i === first ? [{ ...part, text }] : [];
  });
}

/** A tool result's output with `text` as what the model reads (convert.ts's `outputText`, inverted). */
function outputWith(output: unknown, text: string): unknown {
  if (typeof output === "string") return text;
  if (isItem(output) && typeof output["text"] === "string") return { ...output, text };
  try {
    const parsed: unknown = JSON.parse(text); // the output was read as its JSON text
    if (Array.isArray(parsed) === Array.isArray(output) && typeof parsed === typeof output) return parsed;
  } catch {
    // not JSON any more: below
  }
  return undefined;
}

/** Whether `changed` differs from `original` in its text alone (nothing an item could not carry). */
function textOnly(original: Message, changed: Message): boolean {
  return jsonEqual(changed.with({ content: original.content }).toJSON(), original.toJSON());
}

/** Item `item` with `changed` in place of `original`; a string saying why when it cannot be. */
function itemWith(item: Item, original: Message, changed: Message): Item | string {
  const kind = item["type"];
  if (kind === "function_call") {
    const [before] = original.toolCalls;
    const [after, ...more] = changed.toolCalls;
    if (before === undefined || after === undefined || more.length > 0) return "a tool call's message changed beyond its arguments";
    if (after.id !== before.id || after.name !== before.name) return "a tool call was renamed";
    if (!jsonEqual(changed.with({ toolCalls: original.toolCalls }).toJSON(), original.toJSON())) return "a tool call's message changed beyond its arguments";
    return { ...item, arguments: JSON.stringify(after.arguments) };
  }
  if (!textOnly(original, changed)) return "a message changed beyond its text (its name, tool calls or call id)";
  if (kind === "function_call_result") {
    const output = outputWith(item["output"], changed.content);
    return output === undefined ? "a tool result's content can no longer be read as its output" : { ...item, output };
  }
  return { ...item, content: contentWith(item["content"], changed.content, String(item["role"])) };
}

/** A message appended at the end, as a new input item (a user or system message only). */
function appended(message: Message): AgentInputItem | null {
  if (message.toolCalls.length > 0) return null;
  if (message.role === "user") return { role: "user", content: message.content };
  if (message.role === "system") return { role: "system", content: message.content };
  return null;
}

/**
 * `request` with the messages of `changed` (the chain's request) in place of `seen`'s (what the
 * bus was given, made from `request`). The model and the tools are the SDK's to choose: a change
 * of either is refused.
 */
export function requestWith(request: SdkModelRequest, seen: ModelRequest, changed: ModelRequest): Rewritten {
  if (changed.model !== seen.model) return { refused: `the model was changed to '${changed.model}'` };
  if (!jsonEqual(changed.tools.map((t) => t.toJSON()), seen.tools.map((t) => t.toJSON()))) return { refused: "the tools offered were changed" };
  const before = seen.messages;
  const after = changed.messages;
  if (after.length < before.length) return { refused: "messages were removed" };
  const origins = originsOf(request.systemInstructions, request.input);
  let system = request.systemInstructions;
  const items: unknown[] = typeof request.input === "string" ? [{ role: "user", content: request.input }] : [...request.input];
  let touched = false;
  for (let i = 0; i < before.length; i++) {
    const original = before[i]!;
    const message = after[i]!;
    if (jsonEqual(message.toJSON(), original.toJSON())) continue;
    if (message.role !== original.role) return { refused: "a message's role was changed" };
    const origin = origins[i];
    if (origin === undefined) return { refused: "a message the SDK did not send was changed" };
    if (origin === "instructions") {
      if (!textOnly(original, message)) return { refused: "the instructions changed beyond their text" };
      system = message.content;
      continue;
    }
    const item = items[origin];
    if (!isItem(item)) return { refused: "a message the SDK did not send was changed" };
    const rewritten = itemWith(item, original, message);
    if (typeof rewritten === "string") return { refused: rewritten };
    items[origin] = rewritten;
    touched = true;
  }
  for (const message of after.slice(before.length)) {
    const item = appended(message);
    if (item === null) return { refused: `a ${message.role} message was added (only user and system messages can be)` };
    items.push(item);
    touched = true;
  }
  const input =
    typeof request.input === "string" && !touched
      ? request.input
      : typeof request.input === "string" && items.length === 1
        ? String((items[0] as Item)["content"])
        : (items as AgentInputItem[]);
  const out: SdkModelRequest = { ...request, input };
  if (system === undefined) delete (out as { systemInstructions?: string }).systemInstructions;
  else out.systemInstructions = system;
  return { request: out };
}

/**
 * The task's input as the chain left it, in the form `Runner.run` was given: a text for a text,
 * input items for items (the same JSON the bus saw, rewritten); `null` when the chain changed
 * its kind (the SDK would not take it as the run's input).
 */
export function inputWith(given: string | AgentInputItem[], changed: JsonValue): string | AgentInputItem[] | null {
  if (typeof given === "string") return typeof changed === "string" ? changed : null;
  if (!Array.isArray(changed) || !changed.every(isItem)) return null;
  return changed as unknown as AgentInputItem[];
}
