/** Helpers for the AI SDK adapter's tests: the scripted turns a `MockLanguageModelV4` answers with. */

import type { MockLanguageModelV4 } from "ai/test";

export type Generated = Awaited<ReturnType<MockLanguageModelV4["doGenerate"]>>;

export const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

/** A turn that calls the tool `name` with `input`, under the call id `id`. */
export function callTurn(id: string, name: string, input: object): Generated {
  return {
    content: [{ type: "tool-call", toolCallId: id, toolName: name, input: JSON.stringify(input) }],
    finishReason: { unified: "tool-calls", raw: "tool_calls" },
    usage,
    warnings: [],
  };
}

/** A turn that answers `text` and stops. */
export function textTurn(text: string): Generated {
  return { content: [{ type: "text", text }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] };
}
