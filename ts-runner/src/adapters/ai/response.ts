/**
 * A model's answer (`doGenerate`'s result, or a whole `doStream` stream) as harnessweaver's
 * `ModelResponse`, and a modified response back: its text and tool calls are what the SDK gets.
 *
 * A stream is read to its end before `model.after` is asked (the chain judges the whole
 * answer, so nothing it would block reaches the caller first), then played again: unchanged
 * part by part, or rebuilt from the chain's response.
 */

import { Message, ModelResponse, ToolCall } from "../../events.js";
import { jsonObject } from "./request.js";
import type { Content, FinishReason, GenerateResult, StreamPart } from "./types.js";

type Usage = GenerateResult["usage"];
type ToolCallContent = Extract<Content, { type: "tool-call" }>;

const STOP_REASONS: Readonly<Record<string, string>> = { stop: "end_turn", "tool-calls": "tool_use", length: "max_tokens" };
const FINISH_REASONS: Readonly<Record<string, FinishReason["unified"]>> = { end_turn: "stop", tool_use: "tool-calls", max_tokens: "length" };

/** Tool calls the SDK runs itself (not the provider), as harnessweaver's. */
function callsOf(content: readonly Content[]): ToolCall[] {
  return content
    .filter((part): part is ToolCallContent => part.type === "tool-call" && part.providerExecuted !== true)
    .map((part) => new ToolCall({ id: part.toolCallId, name: part.toolName, arguments: argumentsOf(part.input) }));
}

/** A tool call's JSON-encoded input as an object (`{}` when it is not one). */
export function argumentsOf(input: string): ReturnType<typeof jsonObject> & object {
  try {
    return jsonObject(JSON.parse(input === "" ? "{}" : input)) ?? {};
  } catch {
    return {};
  }
}

export function responseOf(content: readonly Content[], finishReason: FinishReason, usage: Usage): ModelResponse {
  const text = content.map((part) => (part.type === "text" ? part.text : "")).join("");
  return new ModelResponse({
    message: new Message({ role: "assistant", content: text, toolCalls: callsOf(content) }),
    stopReason: STOP_REASONS[finishReason.unified] ?? finishReason.unified,
    usage: { inputTokens: usage.inputTokens.total ?? 0, outputTokens: usage.outputTokens.total ?? 0 },
  });
}

function finishWith(before: FinishReason, seen: ModelResponse, changed: ModelResponse): FinishReason {
  if (changed.stopReason === seen.stopReason) {
    if (before.unified === "tool-calls" && changed.message.toolCalls.length === 0) return { ...before, unified: "stop" };
    return before;
  }
  return { unified: FINISH_REASONS[changed.stopReason] ?? "other", raw: before.raw };
}

function callContent(call: ToolCall, before: readonly Content[]): ToolCallContent {
  const same = before.find((part): part is ToolCallContent => part.type === "tool-call" && part.toolCallId === call.id);
  return { ...same, type: "tool-call", toolCallId: call.id, toolName: call.name, input: JSON.stringify(call.arguments) };
}

/** `result` with the chain's text and tool calls in place of the model's. */
export function resultWith(result: GenerateResult, seen: ModelResponse, changed: ModelResponse): GenerateResult {
  const content = result.content;
  const first = content.findIndex((part) => part.type === "text");
  const out: Content[] = [];
  content.forEach((part, i) => {
    if (i === first && changed.message.content !== "") out.push({ ...part, type: "text", text: changed.message.content });
    else if (part.type !== "text" && !(part.type === "tool-call" && part.providerExecuted !== true)) out.push(part);
  });
  if (first < 0 && changed.message.content !== "") out.unshift({ type: "text", text: changed.message.content });
  out.push(...changed.message.toolCalls.map((call) => callContent(call, content)));
  return { ...result, content: out, finishReason: finishWith(result.finishReason, seen, changed) };
}

/** A stream read to its end: its parts, and what they add up to. */
export interface ReadStream {
  readonly parts: readonly StreamPart[];
  readonly content: readonly Content[];
  readonly finish: Extract<StreamPart, { type: "finish" }> | undefined;
}

export async function readAll(stream: ReadableStream<StreamPart>): Promise<ReadStream> {
  const parts: StreamPart[] = [];
  const content: Content[] = [];
  const texts = new Map<string, { type: "text"; text: string }>();
  let finish: ReadStream["finish"];
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    if (value.type === "text-start") {
      const text = { type: "text" as const, text: "" };
      texts.set(value.id, text);
      content.push(text);
    } else if (value.type === "text-delta") {
      const text = texts.get(value.id);
      if (text !== undefined) text.text += value.delta;
    } else if (value.type === "tool-call") content.push(value);
    else if (value.type === "finish") finish = value;
  }
  return { parts, content, finish };
}

export function streamOf(parts: readonly StreamPart[]): ReadableStream<StreamPart> {
  return new ReadableStream({
    start(controller) {
      for (const part of parts) controller.enqueue(part);
      controller.close();
    },
  });
}

const TEXT_PARTS = new Set(["text-start", "text-delta", "text-end"]);
const CALL_PARTS = new Set(["tool-input-start", "tool-input-delta", "tool-input-end", "tool-call"]);

/** The parts of `read` with the chain's text (one text block) and tool calls in place of the model's. */
export function partsWith(read: ReadStream, seen: ModelResponse, changed: ModelResponse): StreamPart[] {
  const out: StreamPart[] = [];
  const provider = new Set(
    read.parts.flatMap((p) => (p.type === "tool-call" && p.providerExecuted === true ? [p.toolCallId] : [])),
  );
  let textDone = false;
  const text = (): StreamPart[] => {
    textDone = true;
    if (changed.message.content === "") return [];
    const id = "harnessweaver-text";
    return [
      { type: "text-start", id },
      { type: "text-delta", id, delta: changed.message.content },
      { type: "text-end", id },
    ];
  };
  for (const part of read.parts) {
    if (TEXT_PARTS.has(part.type)) {
      if (!textDone) out.push(...text());
    } else if (CALL_PARTS.has(part.type) && !provider.has(callId(part))) {
      continue; // the model's own calls: the chain's are played below
    } else if (part.type === "finish") {
      if (!textDone) out.push(...text());
      out.push(...changed.message.toolCalls.map((call) => callContent(call, read.content)));
      out.push({ ...part, finishReason: finishWith(part.finishReason, seen, changed) });
    } else out.push(part);
  }
  return out;
}

function callId(part: StreamPart): string {
  if (part.type === "tool-call") return part.toolCallId;
  return "id" in part && typeof part.id === "string" ? part.id : "";
}
