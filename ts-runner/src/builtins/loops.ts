/**
 * `harnessweaver.loop_guard`: an agent that calls the same tool with the same arguments again
 * and again is warned, then refused (python/harnessweaver/builtins/loops.py; docs/builtins.md).
 *
 * At `tool.before` the guard counts how many of the run's last `window` tool calls (this one
 * included) had this call's fingerprint: from `block_after` on the call is refused (`Block`,
 * `loop_detected`); from `warn_after` on it runs, and the model is warned once at its next
 * request (`model.before`, a note). Refused calls count too. The window is a record on the
 * guard's state view (`calls` in its `scope`, read → compute → swap): with a shared scope,
 * the calls of every worker on the store count together. At a final `task.end` a run's own
 * record is dropped.
 */

import type { Envelope } from "../envelope.js";
import { ModelRequestEvent, TaskEndEvent, ToolCallEvent } from "../events.js";
import { Block, Continue } from "../outcomes.js";
import { configurable } from "../plugin.js";
import { stateful, StateSlot, type StateView } from "../state/index.js";
import { fingerprint } from "./fingerprint.js";
import { withNote } from "./notes.js";
import { finite, SettingsError, settingsSchema } from "./settings.js";
import { durationSetting, final, stateSettings, unavailable, update, where } from "./state.js";

/** The record's name: `{"recent": [fingerprint, ...], "pending": [[fingerprint, tool, count, runId], ...]}`. */
export const LOOP_RECORD = "calls";

type Pending = [key: string, tool: string, count: number, run: string];

/** The record's window of fingerprints and its pending warnings; a record that is not one starts again (empty). */
function callsOf(value: unknown, window: number): [string[], Pending[]] {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return [[], []];
  const { recent, pending } = value as { recent?: unknown; pending?: unknown };
  if (!Array.isArray(recent) || !recent.every((key) => typeof key === "string")) return [[], []];
  const kept: Pending[] = [];
  for (const entry of Array.isArray(pending) ? pending : []) {
    if (
      Array.isArray(entry) &&
      entry.length === 4 &&
      typeof entry[0] === "string" &&
      typeof entry[1] === "string" &&
      Number.isInteger(entry[2]) &&
      typeof entry[3] === "string"
    ) {
      kept.push([entry[0], entry[1], entry[2] as number, entry[3]]);
    }
  }
  return [(recent as string[]).slice(-window), kept];
}

interface LoopSettings {
  readonly warnAfter: number | null;
  readonly blockAfter: number;
  readonly window: number;
  readonly scope: string;
  readonly lifetime: string | number;
}

/** `warn_after` when neither it nor a `block_after` of 4 or less is given. */
const WARN_AFTER = 3;

/**
 * `warn_after` not given (Python: `LoopGuardSettings._warning_follows`): 3, or one call before
 * the refusal when `block_after` is 3 or less (none when it is 2), so a lone `block_after: 3`
 * is not refused for breaking a rule with a default the user never wrote.
 */
function defaultWarnAfter(blockAfter: number): number | null {
  if (!Number.isInteger(blockAfter) || blockAfter > WARN_AFTER) return WARN_AFTER;
  return blockAfter - 1 >= 2 ? blockAfter - 1 : null;
}

/** The settings, with Python's defaults and the rules between them (pydantic's validators). */
export function loopSettings(settings: Readonly<Record<string, unknown>>): LoopSettings {
  finite(settings);
  const { scope, lifetime } = stateSettings(settings);
  const blockAfter = settings["block_after"] === undefined ? 5 : (settings["block_after"] as number);
  const warnAfter = settings["warn_after"] === undefined ? defaultWarnAfter(blockAfter) : (settings["warn_after"] as number | null);
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
  return { warnAfter, blockAfter, window, scope, lifetime };
}

export const loopGuard = configurable(
  {
    name: "loop_guard",
    hooks: ["tool.before", "model.before", "task.end"],
    failMode: "closed",
    settings: settingsSchema("loop_guard"),
  },
  (given) => {
    const { warnAfter, blockAfter, window, scope, lifetime } = loopSettings(given);
    const life = durationSetting("lifetime", lifetime);
    const whereWords = scope === "run" ? "" : ` ${where(scope)}`;
    const slot = new StateSlot("loop_guard", "closed");

    const call = async (view: StateView, event: ToolCallEvent, envelope: Envelope) => {
      const key = fingerprint(event.tool.name, event.call.arguments);
      const run = envelope.runId;
      const tool = event.tool.name;
      const add = (value: unknown) => {
        const [before, found] = callsOf(value, window);
        const recent = [...before, key].slice(-window);
        const counts = new Map<string, number>();
        for (const one of recent) counts.set(one, (counts.get(one) ?? 0) + 1);
        const count = counts.get(key) ?? 0;
        const pending = found.filter((p) => counts.has(p[0])); // gone from the window
        const mine = pending.find((p) => p[0] === key && p[3] === run);
        if (count >= blockAfter) {
          if (mine !== undefined) pending.splice(pending.indexOf(mine), 1); // the refusal says it all
        } else if (warnAfter !== null && count >= warnAfter) {
          if (mine === undefined) pending.push([key, tool, count, run]);
          else {
            mine[1] = tool;
            mine[2] = count;
          }
        }
        return [{ recent, pending }, count] as const;
      };
      const count = await update(view, view.key(scope, envelope, LOOP_RECORD), add, life);
      if (count >= blockAfter) {
        return Block(
          `${tool} was called with the same arguments ${count} times ` +
            `within the last ${window} tool calls${whereWords}; try something else`,
          { code: "loop_detected" },
        );
      }
      return null;
    };

    const warn = async (view: StateView, event: ModelRequestEvent, envelope: Envelope) => {
      const run = envelope.runId;
      const key = view.key(scope, envelope, LOOP_RECORD);
      const record = await view.read(key);
      if (!callsOf(record.value, window)[1].some((p) => p[3] === run)) return null; // nothing to tell this run: no write
      const take = (value: unknown) => {
        const [recent, pending] = callsOf(value, window);
        const mine = pending.filter((p) => p[3] === run);
        if (mine.length === 0) return [null, mine] as const;
        return [{ recent, pending: pending.filter((p) => p[3] !== run) }, mine] as const;
      };
      const mine = await update(view, key, take, life, record);
      if (mine.length === 0) return null;
      const notes = mine.map(
        ([, tool, count]) =>
          `you have called ${tool} with the same arguments ${count} times in your last ` +
          `${window} tool calls${whereWords}; from ${blockAfter} such calls on it will be refused, so try something else.`,
      );
      return Continue(withNote(event, notes.join(" ")));
    };

    const fn = async (event: ToolCallEvent | ModelRequestEvent | TaskEndEvent, envelope: Envelope) => {
      const view = slot.view;
      try {
        if (event instanceof ToolCallEvent) return await call(view, event, envelope);
        if (event instanceof ModelRequestEvent) return await warn(view, event, envelope);
        if (scope === "run" && event instanceof TaskEndEvent && final(event)) await view.delete(view.key("run", envelope, LOOP_RECORD));
        return null;
      } catch (error) {
        return unavailable(view, error);
      }
    };
    return stateful(fn, slot);
  },
);
