/**
 * `harnessweaver.rate_limit`: at most `limit` tool calls and model requests per `per`
 * (python/harnessweaver/builtins/rates.py; docs/builtins.md).
 *
 * Each call (`tool.before`) and each model request (`model.before`) takes one place in a
 * sliding window: the guard reserves 1 on the counter `calls` of its `scope` with the limit
 * `limit` and the hold id `{run}/{step}/{content identity}`, then commits it as a charge that
 * expires `per` after it was made. So at any moment the counter holds the calls of the last
 * `per`, however many workers share the store, and the same event emitted again (a Retry, a
 * redelivered job) takes no second place while its first is in the window. Over the limit the
 * call is refused, `Block`, or with `on_exceed: retry` answered with a `Retry` after `per`;
 * the code is `rate_limited` either way. The guard fails closed.
 */

import type { Envelope } from "../envelope.js";
import type { ModelRequestEvent, ToolCallEvent } from "../events.js";
import { Block, Retry } from "../outcomes.js";
import { configurable } from "../plugin.js";
import { stateful, StateSlot } from "../state/index.js";
import { finite, settingsSchema } from "./settings.js";
import { chargeId, durationSetting, unavailable, where, written } from "./state.js";

/** The counter's name: one live hold per call in the window. */
export const RATE_COUNTER = "calls";

/** The settings, with Python's defaults. */
export function rateSettings(settings: Readonly<Record<string, unknown>>): {
  readonly limit: number;
  readonly per: string | number;
  readonly scope: string;
  readonly onExceed: "block" | "retry";
} {
  finite(settings);
  const limit = settings["limit"] as number;
  const per = settings["per"] as string | number;
  durationSetting("per", per);
  const scope = (settings["scope"] ?? "run") as string;
  const onExceed = (settings["on_exceed"] ?? "block") as "block" | "retry";
  return { limit, per, scope, onExceed };
}

export const rateLimit = configurable(
  {
    name: "rate_limit",
    hooks: ["tool.before", "model.before"],
    failMode: "closed",
    settings: settingsSchema("rate_limit"),
  },
  (given) => {
    const settings = rateSettings(given);
    const { limit, scope } = settings;
    const per = durationSetting("per", settings.per);
    const perShown = written(settings.per);
    const retry = settings.onExceed === "retry";
    const slot = new StateSlot("rate_limit", "closed");

    const fn = async (event: ToolCallEvent | ModelRequestEvent, envelope: Envelope) => {
      const view = slot.view;
      try {
        const key = view.key(scope, envelope, RATE_COUNTER);
        const hold = chargeId(envelope, event);
        const held = await view.reserve(key, hold, 1, { limit, ttl: per, life: per });
        if (held.granted) {
          if (!held.repeated) await view.commit(key, hold, 1, { ttl: per, life: per });
          return null;
        }
      } catch (error) {
        return unavailable(view, error);
      }
      const calls = limit === 1 ? "1 call" : `${limit} calls`;
      const reason = `rate limit of ${calls} per ${perShown} ${where(scope)} reached`;
      if (retry) return Retry(reason, { delay: per, code: "rate_limited" });
      return Block(reason, { code: "rate_limited" });
    };
    return stateful(fn, slot);
  },
);
