/**
 * Chain deadlines in a harness spec (I26): `deadlines:` of the harness and of each task
 * (Python: `spec/deadlines.py`). The selected task's deadline for a hook point applies when it
 * is earlier than the harness's (a task tightens, never loosens). Every task's deadlines are
 * checked, selected or not, by the bus's own check, so a problem keeps the core's kind
 * (`invalid_deadline`, `unknown_hook`) and rule.
 */

import { HookBus } from "../bus.js";
import type { HookPoint } from "../catalogue.js";
import type { Duration } from "../duration.js";
import { HarnessweaverError } from "../errors.js";
import type { Problems } from "./errors.js";
import type { Document } from "./model.js";
import { lineOf, plain, YamlMap } from "./yaml.js";

type Checked = Map<string, [unknown, number]>;

function checked(node: unknown, where: string, file: string, line: number | null, problems: Problems): Checked {
  const out: Checked = new Map();
  if (node === null || node === undefined) return out;
  if (!(node instanceof YamlMap)) {
    const what = "deadlines map hook points to durations such as 2s or 250ms";
    problems.add(file, where, line, "not_a_mapping", `${what}, got ${pythonType(node)}`);
    return out;
  }
  for (const [hook, raw] of node) {
    const value = plain(raw);
    const at = lineOf(node, hook) ?? line;
    let seconds: number | undefined;
    try {
      const bus = new HookBus({ deadlines: { [String(hook)]: value } as Partial<Record<HookPoint, Duration>> });
      seconds = typeof hook === "string" ? bus.deadline(hook as HookPoint) : undefined;
    } catch (error) {
      if (!(error instanceof HarnessweaverError)) throw error;
      problems.core(file, `${where}.${String(hook)}`, at, error);
      continue;
    }
    if (seconds !== undefined) out.set(hook as string, [value, seconds]);
  }
  return out;
}

/** The name of the type Python would say a YAML value has. */
function pythonType(value: unknown): string {
  if (Array.isArray(value)) return "YamlList";
  if (typeof value === "string") return "str";
  if (typeof value === "boolean") return "bool";
  if (typeof value === "number") return Number.isInteger(value) ? "int" : "float";
  return "object";
}

/**
 * The chain deadlines of the harness with `task` (as `new HookBus({deadlines})` takes them);
 * problems of the harness's and every task's `deadlines:` go to `problems`.
 */
export function specDeadlines(spec: Document, task: string | null, problems: Problems): Record<string, unknown> {
  const line = spec.lines.get("deadlines") ?? null;
  const chosen = checked(spec.deadlines, "deadlines", spec.file, line, problems);
  for (const [name, node] of spec.taskDeadlines) {
    const own = checked(node, `tasks.${name}.deadlines`, spec.file, lineOf(node), problems);
    if (name !== task) continue;
    for (const [hook, [value, seconds]] of own) {
      const current = chosen.get(hook);
      if (current === undefined || seconds < current[1]) chosen.set(hook, [value, seconds]);
    }
  }
  return Object.fromEntries([...chosen].map(([hook, [value]]) => [hook, value]));
}
