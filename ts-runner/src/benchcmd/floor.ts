/**
 * The two things every bench measurement times, paired round by round: an emit of a hook
 * point on the bus, and its floor, the same middleware (`HookBus.handler`) awaited in a plain
 * loop on the same event, with no timeout, fail mode, trace or reduction around them.
 *
 * The mirror of Python's `harnessweaver/benchcmd/floor.py` (`chain_of`, `floor_pass`,
 * `emit_pass`, `paired_ratio`), so that the two `harnessweaver bench` commands' ratios mean
 * the same thing: the median of per-round ratios, each round timing the floor right before
 * the emits.
 */

import type { HookBus } from "../bus.js";
import type { HookPoint } from "../catalogue.js";
import type { RunContext } from "../context.js";
import type { Envelope } from "../envelope.js";
import type { Event, EventOf } from "../events.js";
import { CARRIED, keyValue } from "../matcher.js";
import type { HookResult } from "../outcomes.js";
import type { Call } from "../registry.js";

/** The middleware an emit of `hook` runs for one event (matchers applied, I22): names and handlers, in run order. */
export interface Chain {
  readonly hook: HookPoint;
  readonly names: readonly string[];
  readonly handlers: readonly Call[];
}

/**
 * The chain `bus` runs for `event` at `hook`: `chainFor` the event's matcher key (a tool's
 * name, a model's) on the hook points that carry one, else the whole chain.
 */
export function chainOf(bus: HookBus, hook: HookPoint, event: Event): Chain {
  const key = CARRIED[hook];
  const declarations = key === undefined ? bus.chain(hook) : bus.chainFor(hook, keyValue(key, event));
  const names = Object.freeze(declarations.map((declaration) => declaration.name));
  return Object.freeze({ hook, names, handlers: Object.freeze(names.map((name) => bus.handler(name))) });
}

/**
 * One signal for every floor call: a middleware that declared `signal` gets one that never
 * aborts (the walk makes one per call; that allocation is part of what the bus adds).
 */
const NEVER = new AbortController().signal;

/**
 * Every handler of `chain` called once on `event`, in order, awaited when it answers with a
 * promise. A throw or rejection is caught and the loop goes on (the bus would resolve it by
 * the fail mode; the floor counts the work), and every handler runs even after an answer,
 * so the floor is the whole chain's.
 */
export async function floorPass(chain: Chain, event: Event, envelope: Envelope): Promise<void> {
  for (const handler of chain.handlers) {
    try {
      const answer = handler(event, envelope, NEVER);
      if (isThenable(answer)) await answer;
    } catch {
      // a failing middleware's cost still counts
    }
  }
}

/** One emit of `event` at `hook` on `bus` in `context`. */
export function emitPass<H extends HookPoint>(bus: HookBus, hook: H, event: EventOf<H>, context: RunContext): Promise<HookResult<EventOf<H>>> {
  return bus.emit(hook, event, context);
}

/**
 * The median of `time / floor` over rounds timed in pairs (the floor of a round timed right
 * before its emits): what a shared machine's bursts of load, which move separately timed runs
 * apart, leave nearly untouched. A floor of 0 (a clock too coarse) is skipped.
 */
export function pairedRatio(times: readonly number[], floors: readonly number[]): number {
  if (times.length !== floors.length) throw new RangeError(`paired_ratio needs as many floors as times (${floors.length} and ${times.length})`);
  const ratios = times.flatMap((time, i) => ((floors[i] ?? 0) > 0 ? [time / (floors[i] as number)] : []));
  if (ratios.length === 0) throw new RangeError("no round with a floor above 0: time more emits per round");
  return median(ratios);
}

/** The median of `values` (the mean of the middle two for an even count, as Python's `statistics.median`). */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new RangeError("the median of no values");
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === "object" || typeof value === "function") && value !== null && typeof (value as { then?: unknown }).then === "function";
}
