/**
 * The task of an `AIRun`: what `task.start` is given and what its answer changes, what ends a
 * task (an exit reason for each way it stops) and what `task.end` changes in the SDK's result.
 */

import type { ModelMessage } from "ai";
import { jsonEqual } from "../../json.js";
import type { JsonValue } from "../../json.js";
import { jsonValue } from "./request.js";
import { HarnessStopped } from "./stopped.js";

/**
 * task.end's exit reason when the harness ended the run, as the run loop names them (a Suspend
 * or a change the SDK cannot carry out, where nothing can wait for a decision, ends it as a Block).
 */
const EXIT_REASONS: Readonly<Record<string, string>> = { block: "blocked", escalate: "escalated", retry: "retry_exhausted" };

export function exitReasonOf(stop: HarnessStopped): string {
  return EXIT_REASONS[stop.outcome] ?? "blocked";
}

/** The `HarnessStopped` an SDK error carries (the SDK may wrap what the middleware threw). */
export function stopIn(error: unknown): HarnessStopped | null {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && typeof current === "object" && current !== null; depth++) {
    if (current instanceof HarnessStopped) return current;
    const inner = current as { readonly cause?: unknown; readonly lastError?: unknown; readonly error?: unknown };
    current = inner.cause ?? inner.lastError ?? inner.error;
  }
  return null;
}

/** The input options of `generateText`/`streamText` (the SDK takes `prompt` or `messages`). */
export interface InputOptions {
  readonly prompt?: unknown;
  readonly messages?: unknown;
}

/** The task's input as `task.start` sees it: the prompt (text or messages), else the messages. */
export function inputOf(options: InputOptions): JsonValue {
  return jsonValue(options.prompt !== undefined ? options.prompt : options.messages);
}

/**
 * `options` with the input as `task.start` left it. A changed input takes the place of the one
 * it was given as (`prompt` or `messages`) and must have its shape: text for a text prompt, a
 * list of messages for messages; anything else stops the task (the SDK would not run it).
 */
export function withInput<O extends InputOptions>(options: O, seen: JsonValue, changed: JsonValue): O {
  if (jsonEqual(seen, changed)) return options;
  const key = options.prompt !== undefined ? "prompt" : "messages";
  const given = options[key];
  if (typeof given === "string" && typeof changed === "string") return { ...options, [key]: changed };
  if (Array.isArray(given) && Array.isArray(changed)) return { ...options, [key]: changed as unknown as ModelMessage[] };
  throw new HarnessStopped(
    "task.start",
    "modified",
    `a middleware changed the task's ${key} to ${Array.isArray(changed) ? "a list" : typeof changed}, where the SDK takes ${Array.isArray(given) ? "a list of messages" : "text"}`,
  );
}

/** Whether the SDK's last step ended waiting for approvals (tool calls it asked a human about). */
export function awaitsApproval(content: readonly { readonly type: string }[]): boolean {
  return content.some((part) => part.type === "tool-approval-request");
}

/** `task.end`'s output as text: a text is itself, anything else its JSON. */
export function textOf(output: JsonValue): string {
  return typeof output === "string" ? output : JSON.stringify(output);
}
