/**
 * `harnessweaver.budget_guard`: a run (or a session, user, task, app, the org) spends at most
 * so many tokens, or so many dollars (python/harnessweaver/builtins/budget.py; docs/builtins.md).
 *
 * At `model.after` the guard charges the response's usage (input plus output tokens, and
 * `cost_usd`) to the counters `tokens` and `cost_usd` of its `scope` on its state view; at the
 * next `model.before`, at or past 100% of a limit the request is refused (`Block`,
 * `budget_exceeded`), and at or past `warn_at` of a limit the model is warned (a note), once
 * per limit and run (the run-scope record `warned`). In a shared scope each response is
 * charged once (hold id `{run}/{step}/{content identity}`); with `per` (`1d`) the counters are
 * those of the window `floor(now / per)` by the envelope's clock; with `reserve_tokens` /
 * `reserve_cost_usd` each `model.before` holds that much (hold `{run}/{step}/model`, 10
 * minutes), released at `model.after` once the actual usage is charged, so concurrent workers
 * cannot all go past the budget at once. Run-scope state goes at a final `task.end`.
 */

import type { Envelope } from "../envelope.js";
import { ModelRequestEvent, ModelResponseEvent, TaskEndEvent } from "../events.js";
import { Block, Continue } from "../outcomes.js";
import { configurable } from "../plugin.js";
import { stateful, StateSlot, type StateView } from "../state/index.js";
import { withNote } from "./notes.js";
import { finite, SettingsError, settingsSchema } from "./settings.js";
import { chargeId, durationSetting, final, RESERVE_TTL, stateSettings, unavailable, update, written } from "./state.js";

/** The run-scope record of the limits a run has been warned about: a sorted list of counter names. */
export const WARNED = "warned";

/** One limit of the budget: its counter's name, the limit, how its amounts are written, what a request holds of it. */
interface Limit {
  readonly name: "tokens" | "cost_usd";
  readonly limit: number;
  readonly unit: (amount: number) => string;
  readonly reserve: number | null;
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

function shown(limit: Limit, spent: number): string {
  return `${limit.unit(spent)} of its ${limit.unit(limit.limit)} budget`;
}

export interface BudgetSettings {
  readonly maxTokens: number | null;
  readonly maxCostUsd: number | null;
  readonly warnAt: number | null;
  readonly scope: string;
  readonly lifetime: string | number;
  readonly per: string | number | null;
  readonly reserveTokens: number | null;
  readonly reserveCostUsd: number | null;
}

/** The settings, with Python's defaults and its rules (a budget needs a limit; a reservation its limit). */
export function budgetSettings(settings: Readonly<Record<string, unknown>>): BudgetSettings {
  finite(settings);
  const { scope, lifetime } = stateSettings(settings);
  const maxTokens = (settings["max_tokens"] ?? null) as number | null;
  const maxCostUsd = (settings["max_cost_usd"] ?? null) as number | null;
  const warnAt = settings["warn_at"] === undefined ? 0.7 : (settings["warn_at"] as number | null);
  const per = (settings["per"] ?? null) as string | number | null;
  if (per !== null) durationSetting("per", per);
  const reserveTokens = (settings["reserve_tokens"] ?? null) as number | null;
  const reserveCostUsd = (settings["reserve_cost_usd"] ?? null) as number | null;
  if (maxTokens === null && maxCostUsd === null) {
    throw new SettingsError(null, "give max_tokens, max_cost_usd or both: a budget needs a limit");
  }
  if (reserveTokens !== null && maxTokens === null) {
    throw new SettingsError(null, "reserve_tokens needs max_tokens: a reservation is held against it");
  }
  if (reserveCostUsd !== null && maxCostUsd === null) {
    throw new SettingsError(null, "reserve_cost_usd needs max_cost_usd: a reservation is held against it");
  }
  return { maxTokens, maxCostUsd, warnAt, scope, lifetime, per, reserveTokens, reserveCostUsd };
}

/** How many runs' open reservations one guard remembers (Python's `MAX_RUNS`). */
const MAX_PENDING = 4096;

/** The hold id of a request's reservation: `{run}/{step}/model`. */
function heldId(envelope: Envelope, step: number): string {
  return `${envelope.runId}/${step}/model`;
}

export const budgetGuard = configurable(
  {
    name: "budget_guard",
    hooks: ["model.before", "model.after", "task.end"],
    failMode: "closed",
    settings: settingsSchema("budget_guard"),
  },
  (given) => {
    const config = budgetSettings(given);
    const { warnAt, scope } = config;
    const per = config.per === null ? null : durationSetting("per", config.per);
    const perWords = config.per === null ? "" : ` per ${written(config.per)}`;
    const lifetime = durationSetting("lifetime", config.lifetime);
    const life = per === null ? lifetime : Math.max(lifetime, per);
    const limits: Limit[] = [];
    if (config.maxTokens !== null) limits.push({ name: "tokens", limit: config.maxTokens, unit: tokens, reserve: config.reserveTokens });
    if (config.maxCostUsd !== null) limits.push({ name: "cost_usd", limit: config.maxCostUsd, unit: dollars, reserve: config.reserveCostUsd });
    const slot = new StateSlot("budget_guard", "closed");
    // run id -> [hold, keys] of the reservation awaiting its response (bounded: MAX_PENDING)
    const pending = new Map<string, readonly [string, string[]]>();

    /** At `task.end`, whatever the exit reason, release the run's reservation whose response
     * never came (a run ended between request and response); kept in this process only. */
    const letGo = async (view: StateView, runId: string): Promise<void> => {
      const open = pending.get(runId);
      if (open === undefined) return;
      pending.delete(runId);
      const [hold, keys] = open;
      for (const key of keys) await view.release(key, hold);
    };

    /** A limit's counter: `tokens` or `cost_usd`, with the window's number `floor(now / per)` under `per`. */
    const nameOf = (limit: Limit, envelope: Envelope): string =>
      per === null ? limit.name : `${limit.name}.${Math.floor(envelope.now().getTime() / 1000 / per)}`;

    const exceeded = (limit: Limit, spent: number): Block =>
      Block(`the ${scope} has spent ${shown(limit, spent)}${perWords}`, { code: "budget_exceeded" });

    const spend = async (view: StateView, event: ModelResponseEvent, envelope: Envelope): Promise<void> => {
      const usage = event.response.usage;
      const spent = { tokens: usage.inputTokens + usage.outputTokens, cost_usd: usage.costUsd };
      // In a shared scope each response is charged once (its hold id); a run's own budget
      // charges every response it is shown (I33).
      const hold = chargeId(envelope, event, scope !== "run");
      const held = heldId(envelope, event.step);
      if (pending.get(envelope.runId)?.[0] === held) pending.delete(envelope.runId);
      for (const limit of limits) {
        const key = view.key(scope, envelope, nameOf(limit, envelope));
        await view.commit(key, hold, spent[limit.name], { life });
        if (limit.reserve !== null) await view.release(key, held);
      }
    };

    const warn = async (view: StateView, event: ModelRequestEvent, envelope: Envelope, spent: Map<string, number>) => {
      if (warnAt === null) return null;
      const due = new Map<string, readonly [Limit, number]>();
      for (const limit of limits) {
        const name = nameOf(limit, envelope);
        const amount = spent.get(name) as number;
        if (amount / limit.limit >= warnAt) due.set(name, [limit, amount]);
      }
      if (due.size === 0) return null;
      const fresh = await update(
        view,
        view.key("run", envelope, WARNED),
        (value) => {
          const warned = new Set(Array.isArray(value) ? value.filter((n): n is string => typeof n === "string") : []);
          const added = [...due.keys()].filter((name) => !warned.has(name));
          return [added.length > 0 ? sortedPy([...warned, ...added]) : null, added] as const;
        },
        life,
      );
      const notes = fresh.map((name) => {
        const [limit, amount] = due.get(name) as readonly [Limit, number];
        return (
          `this ${scope} has spent ${shown(limit, amount)}${perWords} (${Math.trunc((amount / limit.limit) * 100)}%); ` +
          "model requests stop at 100%, so finish the task soon."
        );
      });
      return notes.length > 0 ? Continue(withNote(event, notes.join(" "))) : null;
    };

    const before = async (view: StateView, event: ModelRequestEvent, envelope: Envelope) => {
      const hold = heldId(envelope, event.step);
      const made: string[] = [];
      const spent = new Map<string, number>();
      for (const limit of limits) {
        const name = nameOf(limit, envelope);
        const key = view.key(scope, envelope, name);
        let refusal: Block;
        if (limit.reserve === null) {
          const total = await view.total(key);
          if (total / limit.limit < 1) {
            spent.set(name, total);
            continue;
          }
          refusal = exceeded(limit, total);
        } else {
          const held = await view.reserve(key, hold, limit.reserve, { limit: limit.limit, ttl: RESERVE_TTL, life });
          if (held.granted) {
            made.push(key);
            spent.set(name, held.total - limit.reserve);
            continue;
          }
          refusal = exceeded(limit, held.total);
          if (held.total / limit.limit < 1) {
            refusal = Block(
              `the ${scope} has spent or holds ${shown(limit, held.total)}${perWords}; a request holds ${limit.unit(limit.reserve)}`,
              { code: "budget_exceeded" },
            );
          }
        }
        for (const key of made) await view.release(key, hold); // the request does not go out: what it held is let go
        return refusal;
      }
      if (made.length > 0) {
        pending.delete(envelope.runId);
        pending.set(envelope.runId, [hold, made]);
        if (pending.size > MAX_PENDING) pending.delete(pending.keys().next().value as string);
      }
      return warn(view, event, envelope, spent);
    };

    const fn = async (event: ModelRequestEvent | ModelResponseEvent | TaskEndEvent, envelope: Envelope) => {
      const view = slot.view;
      try {
        if (event instanceof ModelResponseEvent) {
          await spend(view, event, envelope);
          return null;
        }
        if (event instanceof ModelRequestEvent) return await before(view, event, envelope);
        if (event instanceof TaskEndEvent) await letGo(view, envelope.runId);
        if (event instanceof TaskEndEvent && final(event)) {
          const keys = [view.key("run", envelope, WARNED)];
          if (scope === "run") for (const limit of limits) keys.push(view.key("run", envelope, nameOf(limit, envelope)));
          await view.delete(...keys);
        }
        return null;
      } catch (error) {
        return unavailable(view, error);
      }
    };
    return stateful(fn, slot);
  },
);

/** Python's `sorted` of texts: by code point (JavaScript's default sort is by UTF-16 unit). */
export function sortedPy(names: readonly string[]): string[] {
  return [...names].sort((a, b) => {
    const [x, y] = [[...a].map((c) => c.codePointAt(0) as number), [...b].map((c) => c.codePointAt(0) as number)];
    for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return (x[i] as number) - (y[i] as number);
    return x.length - y.length;
  });
}
