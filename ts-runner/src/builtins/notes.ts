/**
 * Telling the model something: how the built-in guards give a warning (python's `_notes.py`).
 *
 * The bus has no "warning" outcome, so a guard warns the party that can act on it, the model,
 * by adding a note to the next model request at `model.before`: `Continue(modified)`. A note
 * never adds more than one message to a request, however many guards warn at once: the first
 * appends a user message, and a later one, finding a user message last, extends it (the
 * `model.before` contract: at most one more user message, only the last message changes).
 */

import { Message, type ModelRequestEvent } from "../events.js";

/** How every note starts, so a reader (or the model) can tell it from the user's words. */
export const NOTE_PREFIX = "[harness notice]";

/** `event` with `note` told to the model: added to the last message when that is a user message, else appended. */
export function withNote(event: ModelRequestEvent, note: string): ModelRequestEvent {
  const text = `${NOTE_PREFIX} ${note}`;
  const messages = event.request.messages;
  const last = messages[messages.length - 1];
  let updated: readonly Message[];
  if (last !== undefined && last.role === "user") {
    const joined = last.content ? `${last.content}\n\n${text}` : text;
    updated = [...messages.slice(0, -1), last.with({ content: joined })];
  } else {
    updated = [...messages, new Message({ role: "user", content: text })];
  }
  return event.with({ request: event.request.with({ messages: updated }) });
}
