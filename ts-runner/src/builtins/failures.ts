/**
 * `harnessweaver.tool_failure_guard`: a tool that keeps failing is taken out of the run
 * (python/harnessweaver/builtins/failures.py; docs/builtins.md).
 *
 * At `tool.after` the guard counts, per run and per tool, the results that are errors: how
 * many in a row (a success starts that count again) and how many in all. Once a tool has
 * failed `max_consecutive` times in a row, or `max_total` times in all, every further call of
 * it in the run is refused at `tool.before` (`Block`, `tool_failing`). State per run
 * (`runs.ts`), at most `MAX_TOOLS` tools a run, the least recently failing forgotten first.
 */

import { TaskEndEvent, ToolCallEvent, ToolResultEvent } from "../events.js";
import { Block } from "../outcomes.js";
import { configurable } from "../plugin.js";
import { pythonRepr } from "./repr.js";
import { RunStates } from "./runs.js";
import { finite, SettingsError, settingsSchema } from "./settings.js";

/** How many tools' failures one run's state keeps at most. */
export const MAX_TOOLS = 256;

/** One tool's failures in one run. */
class Failures {
  consecutive = 0;
  total = 0;
}

/** The settings, with Python's defaults and the rules between them. */
export function failureSettings(settings: Readonly<Record<string, unknown>>): {
  readonly maxConsecutive: number | null;
  readonly maxTotal: number | null;
} {
  finite(settings);
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
  return { maxConsecutive, maxTotal };
}

export const toolFailureGuard = configurable(
  {
    name: "tool_failure_guard",
    hooks: ["tool.before", "tool.after", "task.end"],
    failMode: "closed",
    settings: settingsSchema("tool_failure_guard"),
  },
  (given) => {
    const { maxConsecutive, maxTotal } = failureSettings(given);
    const runs = new RunStates(() => new RunStates(() => new Failures(), MAX_TOOLS));

    const count = (event: ToolResultEvent, runId: string): void => {
      const name = event.tool.name;
      if (event.result.isError) {
        const failures = runs.get(runId).get(name);
        failures.consecutive += 1;
        failures.total += 1;
        return;
      }
      const found = runs.peek(runId)?.peek(name); // a success only ends a streak; it starts no state
      if (found !== undefined) found.consecutive = 0;
    };

    const check = (event: ToolCallEvent, runId: string) => {
      const failures = runs.peek(runId)?.peek(event.tool.name);
      if (failures === undefined) return null;
      let why: string;
      if (maxConsecutive !== null && failures.consecutive >= maxConsecutive) why = `failed ${failures.consecutive} times in a row`;
      else if (maxTotal !== null && failures.total >= maxTotal) why = `failed ${failures.total} times in this run`;
      else return null;
      return Block(`tool ${pythonRepr(event.tool.name)} ${why}; it is not called again in this run`, { code: "tool_failing" });
    };

    return async (event, envelope) => {
      if (event instanceof ToolResultEvent) {
        count(event, envelope.runId);
        return null;
      }
      if (event instanceof ToolCallEvent) return check(event, envelope.runId);
      if (event instanceof TaskEndEvent) runs.end(envelope.runId, event);
      return null;
    };
  },
);
