/**
 * `harnessweaver.budget_guard`: a run spends at most so many tokens, or so many dollars
 * (python/harnessweaver/builtins/budget.py; docs/builtins.md).
 *
 * At `model.after` the guard adds the response's usage to the run's total (input plus output
 * tokens, and `cost_usd`); at the next `model.before`, at or past 100% of a limit the request
 * is refused (`Block`, `budget_exceeded`), and at or past `warn_at` of a limit the model is
 * warned (a note), once per limit and run. State per run (`runs.ts`).
 */

import { ModelRequestEvent, ModelResponseEvent, TaskEndEvent } from "../events.js";
import { Block, Continue } from "../outcomes.js";
import { configurable } from "../plugin.js";
import { withNote } from "./notes.js";
import { RunStates } from "./runs.js";
import { finite, SettingsError, settingsSchema } from "./settings.js";

/** One run's usage so far, and the limits it has been warned about. */
class Spent {
  tokens = 0;
  costUsd = 0;
  readonly warned = new Set<string>();
}

interface Limit {
  readonly name: "tokens" | "cost";
  readonly spent: number;
  readonly limit: number;
  readonly unit: (amount: number) => string;
}

// Python's f"{n:,}" and f"${x:,.4f}": thousands separated by commas, whatever the locale.
const GROUPED = new Intl.NumberFormat("en-US", { useGrouping: true, maximumFractionDigits: 0 });

function tokens(count: number): string {
  return `${GROUPED.format(Math.trunc(count))} tokens`;
}

/**
 * `$1,234.5000`, as Python's `f"${x:,.4f}"`: the exact binary value rounded to 4 places, a
 * tie to even. `toFixed` rounds a tie up, and a double is a tie exactly when 32·x is an odd
 * integer (x = j/32 is j·312.5 ten-thousandths), so that one case is settled here.
 */
export function dollars(amount: number): string {
  const sign = amount < 0 ? "-" : "";
  const x = Math.abs(amount);
  let fixed = x.toFixed(4);
  const j = x * 32; // exact: a power of two
  if (Number.isSafeInteger(j) && j % 2 === 1) {
    const down = BigInt(Math.floor(x * 10000)); // j·312.5 − 0.5: exact for a safe j
    const units = down % 2n === 0n ? down : down + 1n;
    fixed = `${units / 10000n}.${String(units % 10000n).padStart(4, "0")}`;
  }
  const [whole = "0", fraction = ""] = fixed.split(".");
  return `$${sign}${GROUPED.format(BigInt(whole))}.${fraction}`;
}

function shown(limit: Limit): string {
  return `${limit.unit(limit.spent)} of its ${limit.unit(limit.limit)} budget`;
}

/** The settings, with Python's defaults and its rule that a budget needs a limit. */
export function budgetSettings(settings: Readonly<Record<string, unknown>>): {
  readonly maxTokens: number | null;
  readonly maxCostUsd: number | null;
  readonly warnAt: number | null;
} {
  finite(settings);
  const maxTokens = (settings["max_tokens"] ?? null) as number | null;
  const maxCostUsd = (settings["max_cost_usd"] ?? null) as number | null;
  const warnAt = settings["warn_at"] === undefined ? 0.7 : (settings["warn_at"] as number | null);
  if (maxTokens === null && maxCostUsd === null) {
    throw new SettingsError(null, "give max_tokens, max_cost_usd or both: a budget needs a limit");
  }
  return { maxTokens, maxCostUsd, warnAt };
}

export const budgetGuard = configurable(
  {
    name: "budget_guard",
    hooks: ["model.before", "model.after", "task.end"],
    failMode: "closed",
    settings: settingsSchema("budget_guard"),
  },
  (given) => {
    const { maxTokens, maxCostUsd, warnAt } = budgetSettings(given);
    const runs = new RunStates(() => new Spent());

    const limits = (spent: Spent): Limit[] => {
      const out: Limit[] = [];
      if (maxTokens !== null) out.push({ name: "tokens", spent: spent.tokens, limit: maxTokens, unit: tokens });
      if (maxCostUsd !== null) out.push({ name: "cost", spent: spent.costUsd, limit: maxCostUsd, unit: dollars });
      return out;
    };

    const before = (event: ModelRequestEvent, runId: string) => {
      const spent = runs.peek(runId);
      if (spent === undefined) return null;
      const all = limits(spent);
      for (const limit of all) {
        if (limit.spent / limit.limit >= 1) return Block(`the run has spent ${shown(limit)}`, { code: "budget_exceeded" });
      }
      if (warnAt === null) return null;
      const notes: string[] = [];
      for (const limit of all) {
        const fraction = limit.spent / limit.limit;
        if (fraction >= warnAt && !spent.warned.has(limit.name)) {
          spent.warned.add(limit.name);
          notes.push(
            `this run has spent ${shown(limit)} (${Math.trunc(fraction * 100)}%); ` +
              "model requests stop at 100%, so finish the task soon.",
          );
        }
      }
      return notes.length > 0 ? Continue(withNote(event, notes.join(" "))) : null;
    };

    return async (event, envelope) => {
      if (event instanceof ModelResponseEvent) {
        const usage = event.response.usage;
        const spent = runs.get(envelope.runId);
        spent.tokens += usage.inputTokens + usage.outputTokens;
        spent.costUsd += usage.costUsd;
        return null;
      }
      if (event instanceof ModelRequestEvent) return before(event, envelope.runId);
      if (event instanceof TaskEndEvent) runs.end(envelope.runId, event);
      return null;
    };
  },
);
