/**
 * `harnessweaver.tool_failure_guard`: a tool that keeps failing is taken out of the run
 * (python/harnessweaver/builtins/failures.py; docs/builtins.md).
 *
 * At `tool.after` the guard counts, per run and per tool, the results that are errors: how
 * many in a row (a success starts that count again) and how many in all. Once a tool has
 * failed `max_consecutive` times in a row, or `max_total` times in all, every further call of
 * it in the run is refused at `tool.before` (`Block`, `tool_failing`). The state
 * is a record on the guard's state view (`failures` in its `scope`), at most `MAX_TOOLS`
 * tools, the least recently failing forgotten first; a run's own record goes at a final `task.end`.
 */

import type { Envelope } from "../envelope.js";
import { TaskEndEvent, ToolCallEvent, ToolResultEvent } from "../events.js";
import { Block } from "../outcomes.js";
import { configurable } from "../plugin.js";
import { stateful, StateSlot, type StateView } from "../state/index.js";
import { pythonRepr } from "./repr.js";
import { finite, SettingsError, settingsSchema } from "./settings.js";
import { durationSetting, final, stateSettings, unavailable, update, where } from "./state.js";

/** How many tools' failures one record keeps at most (the least recently failing dropped). */
export const MAX_TOOLS = 256;
/** The record's name: `[[tool, consecutive, total], ...]`, least recently failing first. */
export const FAILURE_RECORD = "failures";

type Entry = [tool: string, consecutive: number, total: number];

/** The record's entries; a record that is not one starts again (empty). */
function failuresOf(value: unknown): Entry[] {
  if (!Array.isArray(value)) return [];
  return value
    .filter(
      (entry): entry is Entry =>
        Array.isArray(entry) && entry.length === 3 && typeof entry[0] === "string" && Number.isInteger(entry[1]) && Number.isInteger(entry[2]),
    )
    .map((entry) => [entry[0], entry[1], entry[2]] as Entry);
}

/** The settings, with Python's defaults and the rules between them. */
export function failureSettings(settings: Readonly<Record<string, unknown>>): {
  readonly maxConsecutive: number | null;
  readonly maxTotal: number | null;
  readonly scope: string;
  readonly lifetime: string | number;
} {
  finite(settings);
  const { scope, lifetime } = stateSettings(settings);
  const maxConsecutive = settings["max_consecutive"] === undefined ? 3 : (settings["max_consecutive"] as number | null);
  const maxTotal = (settings["max_total"] ?? null) as number | null;
  if (maxTotal !== null && maxConsecutive !== null && maxTotal < maxConsecutive) {
    throw new SettingsError(
      "max_total",
      `max_total (${maxTotal}) must be at least max_consecutive (${maxConsecutive}), or max_consecutive could never be reached`,
    );
  }
  if (maxConsecutive === null && maxTotal === null) {
    throw new SettingsError(null, "give max_consecutive, max_total or both: the guard needs a limit");
  }
  return { maxConsecutive, maxTotal, scope, lifetime };
}

export const toolFailureGuard = configurable(
  {
    name: "tool_failure_guard",
    hooks: ["tool.before", "tool.after", "task.end"],
    failMode: "closed",
    settings: settingsSchema("tool_failure_guard"),
  },
  (given) => {
    const { maxConsecutive, maxTotal, scope, lifetime } = failureSettings(given);
    const life = durationSetting("lifetime", lifetime);
    const slot = new StateSlot("tool_failure_guard", "closed");

    const count = async (view: StateView, event: ToolResultEvent, envelope: Envelope): Promise<void> => {
      const name = event.tool.name;
      const failed = event.result.isError;
      await update(
        view,
        view.key(scope, envelope, FAILURE_RECORD),
        (value) => {
          const tools = failuresOf(value);
          let found = tools.find((entry) => entry[0] === name);
          if (!failed) {
            // a success only ends a streak; it starts no state
            if (found === undefined || found[1] === 0) return [null, null] as const;
            found[1] = 0;
            return [tools, null] as const;
          }
          if (found === undefined) found = [name, 0, 0];
          else tools.splice(tools.indexOf(found), 1);
          found[1] += 1;
          found[2] += 1;
          tools.push(found); // the most recently failing last
          return [tools.slice(-MAX_TOOLS), null] as const;
        },
        life,
      );
    };

    const check = async (view: StateView, event: ToolCallEvent, envelope: Envelope) => {
      const name = event.tool.name;
      const record = await view.read(view.key(scope, envelope, FAILURE_RECORD));
      const found = failuresOf(record.value).find((entry) => entry[0] === name);
      if (found === undefined) return null;
      const [, consecutive, total] = found;
      let why: string;
      if (maxConsecutive !== null && consecutive >= maxConsecutive) why = `failed ${consecutive} times in a row`;
      else if (maxTotal !== null && total >= maxTotal) why = `failed ${total} times ${where(scope)}`;
      else return null;
      return Block(`tool ${pythonRepr(name)} ${why}; it is not called again ${where(scope)}`, { code: "tool_failing" });
    };

    const fn = async (event: ToolCallEvent | ToolResultEvent | TaskEndEvent, envelope: Envelope) => {
      const view = slot.view;
      try {
        if (event instanceof ToolResultEvent) {
          await count(view, event, envelope);
          return null;
        }
        if (event instanceof ToolCallEvent) return await check(view, event, envelope);
        if (scope === "run" && event instanceof TaskEndEvent && final(event)) await view.delete(view.key("run", envelope, FAILURE_RECORD));
        return null;
      } catch (error) {
        return unavailable(view, error);
      }
    };
    return stateful(fn, slot);
  },
);
