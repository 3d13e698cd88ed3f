/**
 * `harnessweaver.loop_guard`: an agent that calls the same tool with the same arguments again
 * and again is warned, then refused (python/harnessweaver/builtins/loops.py; docs/builtins.md).
 *
 * At `tool.before` the guard counts how many of the run's last `window` tool calls (this one
 * included) had this call's fingerprint: from `block_after` on the call is refused (`Block`,
 * `loop_detected`); from `warn_after` on it runs, and the model is warned once at its next
 * request (`model.before`, a note). Refused calls count too. At `task.end` a run that is over
 * for good is forgotten (`runs.ts`).
 */

import { Block, Continue } from "../outcomes.js";
import { configurable } from "../plugin.js";
import { ModelRequestEvent, TaskEndEvent, ToolCallEvent } from "../events.js";
import { fingerprint } from "./fingerprint.js";
import { withNote } from "./notes.js";
import { RunStates } from "./runs.js";
import { finite, SettingsError, settingsSchema } from "./settings.js";

/** One run's last calls: their fingerprints in order, how often each occurs, the warnings not yet given. */
class Calls {
  readonly recent: string[] = [];
  readonly counts = new Map<string, number>();
  /** fingerprint → [tool name, count]; a Map keeps the order warnings were first due, as Python's dict. */
  readonly pending = new Map<string, readonly [string, number]>();

  constructor(readonly window: number) {}

  /** Records a call; how many of the window's calls, this one included, share its key. */
  add(key: string): number {
    if (this.recent.length === this.window) {
      const oldest = this.recent.shift() as string;
      const left = (this.counts.get(oldest) ?? 1) - 1;
      if (left === 0) {
        this.counts.delete(oldest);
        this.pending.delete(oldest);
      } else {
        this.counts.set(oldest, left);
      }
    }
    this.recent.push(key);
    const count = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, count);
    return count;
  }
}

interface LoopSettings {
  readonly warnAfter: number | null;
  readonly blockAfter: number;
  readonly window: number;
}

/** The settings, with Python's defaults and the rules between them (pydantic's validators). */
export function loopSettings(settings: Readonly<Record<string, unknown>>): LoopSettings {
  finite(settings);
  const warnAfter = settings["warn_after"] === undefined ? 3 : (settings["warn_after"] as number | null);
  const blockAfter = settings["block_after"] === undefined ? 5 : (settings["block_after"] as number);
  const window = settings["window"] === undefined ? 20 : (settings["window"] as number);
  if (warnAfter !== null && blockAfter <= warnAfter) {
    throw new SettingsError("block_after", `block_after (${blockAfter}) must be greater than warn_after (${warnAfter})`);
  }
  if (window < blockAfter) {
    throw new SettingsError(
      "window",
      `window (${window}) must be at least block_after (${blockAfter}): a window shorter than the limit never reaches it`,
    );
  }
  return { warnAfter, blockAfter, window };
}

export const loopGuard = configurable(
  {
    name: "loop_guard",
    hooks: ["tool.before", "model.before", "task.end"],
    failMode: "closed",
    settings: settingsSchema("loop_guard"),
  },
  (given) => {
    const { warnAfter, blockAfter, window } = loopSettings(given);
    const runs = new RunStates(() => new Calls(window));

    const call = (event: ToolCallEvent, runId: string) => {
      const calls = runs.get(runId);
      const key = fingerprint(event.tool.name, event.call.arguments);
      const count = calls.add(key);
      if (count >= blockAfter) {
        calls.pending.delete(key); // the refusal says it all
        return Block(
          `${event.tool.name} was called with the same arguments ${count} times ` +
            `within the last ${window} tool calls; try something else`,
          { code: "loop_detected" },
        );
      }
      if (warnAfter !== null && count >= warnAfter) calls.pending.set(key, [event.tool.name, count]);
      return null;
    };

    const warn = (event: ModelRequestEvent, runId: string) => {
      const calls = runs.peek(runId);
      if (calls === undefined || calls.pending.size === 0) return null;
      const notes = [...calls.pending.values()].map(
        ([tool, count]) =>
          `you have called ${tool} with the same arguments ${count} times in your last ` +
          `${window} tool calls; from ${blockAfter} such calls on it will be refused, so try something else.`,
      );
      calls.pending.clear();
      return Continue(withNote(event, notes.join(" ")));
    };

    return async (event, envelope) => {
      if (event instanceof ToolCallEvent) return call(event, envelope.runId);
      if (event instanceof ModelRequestEvent) return warn(event, envelope.runId);
      if (event instanceof TaskEndEvent) runs.end(envelope.runId, event);
      return null;
    };
  },
);
