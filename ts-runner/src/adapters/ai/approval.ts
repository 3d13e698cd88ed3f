/**
 * Whether the messages a tool's `execute` is given approve its call: the SDK passes a resumed
 * call the conversation whose last message holds the approval responses, each naming the
 * approval request (in an assistant message) that names the call.
 */

import type { ModelMessage } from "ai";

export function approvedIn(messages: readonly ModelMessage[], toolCallId: string): boolean {
  const last = messages.at(-1);
  if (last?.role !== "tool") return false;
  const requests = new Map<string, string>(); // approval id → tool call id
  for (const message of messages) {
    if (message.role !== "assistant" || typeof message.content === "string") continue;
    for (const part of message.content) {
      if (part.type === "tool-approval-request") requests.set(part.approvalId, part.toolCallId);
    }
  }
  // Only the first response for a call counts, as the SDK counts it.
  const response = last.content.find(
    (part) => part.type === "tool-approval-response" && requests.get(part.approvalId) === toolCallId,
  );
  return response?.type === "tool-approval-response" && response.approved;
}

/** The reason of the approval request the messages hold for call `toolCallId` (the first one), or null. */
export function requestReason(messages: readonly ModelMessage[], toolCallId: string): string | null {
  for (const message of messages) {
    if (message.role !== "assistant" || typeof message.content === "string") continue;
    for (const part of message.content) {
      if (part.type === "tool-approval-request" && part.toolCallId === toolCallId) return part.reason ?? null;
    }
  }
  return null;
}
