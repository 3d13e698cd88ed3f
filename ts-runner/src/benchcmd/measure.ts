/**
 * The measurement of one hook point, in rounds (docs/bench.md). Each round times, with
 * `process.hrtime.bigint()` around every single operation:
 *   1. the floor batch: `per` floor passes (`floorPass`: the chain's handlers in a plain loop);
 *   2. the emit batch: `per` emits on the bus, in a fresh RunContext (the trace must not grow
 *      over the run, and every round starts as a run does);
 *   3. each middleware alone: `per` calls of its handler.
 * Events cycle through the hook point's events, the same sequence for the floor and the emits.
 * The first `WARMUP` rounds are dropped: the JIT and the caches settle in them.
 */

import type { HookBus } from "../bus.js";
import type { HookPoint } from "../catalogue.js";
import { RunContext } from "../context.js";
import type { Event } from "../events.js";
import type { OutcomeKind } from "../outcomes.js";
import { BenchError } from "./errors.js";
import { chainOf, emitPass, floorPass, median, pairedRatio, type Chain } from "./floor.js";

/** The rounds dropped at the start. */
export const WARMUP = 2;

/** One hook point to time: its events and, for each, the chain an emit of it runs. */
export interface Target {
  readonly hook: HookPoint;
  readonly events: readonly Event[];
  readonly chains: readonly Chain[];
  /** Every middleware that runs for some event, in run order. */
  readonly names: readonly string[];
}

/** What `hook` is timed on for `events`: their chains, and the middleware that run for any of them. */
export function targetOf(bus: HookBus, hook: HookPoint, events: readonly Event[]): Target {
  const chains = events.map((event) => chainOf(bus, hook, event));
  const seen = new Set(chains.flatMap((chain) => chain.names));
  const names = bus.chain(hook).map((declaration) => declaration.name).filter((name) => seen.has(name));
  return { hook, events, chains, names };
}

/** What a non-continue emit of one event was answered by (from its trace). */
export interface Stopped {
  readonly kind: OutcomeKind;
  readonly middleware: string | null;
  readonly code: string | null;
  /** How many of the hook point's events it stopped. */
  readonly events: number;
}

export interface Measured {
  readonly target: Target;
  /** Every timed floor pass and emit (warm-up dropped), in ns. */
  readonly floors: readonly number[];
  readonly emits: readonly number[];
  /** The paired ratio of the timed rounds (emit batch / floor batch); null: the clock saw no floor time. */
  readonly ratio: number | null;
  readonly outcomes: Readonly<Record<string, number>>;
  /** Each middleware's timed calls (ns), in `target.names` order. */
  readonly each: readonly (readonly number[])[];
  readonly stopped: readonly Stopped[];
}

/** `process.hrtime.bigint()` between two points as a number of ns. */
function since(start: bigint): number {
  return Number(process.hrtime.bigint() - start);
}

/**
 * A `BenchError` for the first middleware the emit cut off at its timeout or the hook point's
 * deadline: the bus stops waiting there, but the floor and its own calls await it bare and
 * would wait without end (Python's `Unbounded`, with its words).
 */
function cutOff(hook: HookPoint, context: RunContext): void {
  for (const record of context.trace.records()) {
    if (record.kind === "failure" && (record.failure === "timeout" || record.failure === "deadline")) {
      throw new BenchError(
        `${hook}: \`${String(record.middleware)}\` did not answer in time on an emit of the event (${record.failure}): ` +
          "the bus cuts it off there, but the floor awaits it bare and would wait without end; time events it answers, " +
          `or leave ${hook} out (--hook)`,
      );
    }
  }
}

/** What `emit` answered for each event, once, outside the timed rounds: who stopped which. */
async function stoppedBy(bus: HookBus, target: Target): Promise<Stopped[]> {
  const found = new Map<string, Stopped>();
  for (const event of target.events) {
    const context = new RunContext();
    // `as never`: each event was made for this hook point (samples, events file), which the types cannot see.
    const result = await emitPass(bus, target.hook, event as never, context);
    cutOff(target.hook, context);
    const kind = result.outcome.kind;
    if (kind === "continue") continue;
    // The earliest middleware record with the combined outcome's kind: severity ties go to it.
    const record = context.trace.records().find((r) => r.kind !== "hook" && r.audit !== true && r.outcome === kind);
    const middleware = record?.middleware ?? null;
    const code = record?.code ?? ("code" in result.outcome ? result.outcome.code : null);
    const key = JSON.stringify([kind, middleware, code]);
    const before = found.get(key);
    found.set(key, { kind, middleware, code, events: (before?.events ?? 0) + 1 });
  }
  return [...found.values()];
}

/**
 * Times `target` in `rounds` rounds of `per` operations each; `tick` is called after each
 * round (the progress bar).
 */
export async function measure(bus: HookBus, target: Target, rounds: number, per: number, tick: () => void = () => {}): Promise<Measured> {
  const { hook, events, chains, names } = target;
  const stopped = await stoppedBy(bus, target);
  // Each middleware's handler and the events it runs for (a matcher may leave it out of some).
  // Timed as a chain of one, by the floor's own loop, so that the shares add up to the floor.
  const alone = names.map((name) => {
    const own = events.filter((_, i) => chains[i]?.names.includes(name));
    const handlers = [bus.handler(name)];
    const chain: Chain = { hook, names: [name], handlers };
    return { chain, own };
  });
  const floors: number[] = [];
  const emits: number[] = [];
  const floorBatches: number[] = [];
  const emitBatches: number[] = [];
  const each: number[][] = names.map(() => []);
  const outcomes: Record<string, number> = {};
  for (let round = 0; round < rounds; round++) {
    const timed = round >= WARMUP;
    const context = new RunContext();
    const envelope = context.envelope;
    let floorBatch = 0;
    for (let i = 0; i < per; i++) {
      const n = i % events.length;
      const start = process.hrtime.bigint();
      await floorPass(chains[n] as Chain, events[n] as Event, envelope);
      const took = since(start);
      floorBatch += took;
      if (timed) floors.push(took);
    }
    let emitBatch = 0;
    for (let i = 0; i < per; i++) {
      const event = events[i % events.length] as Event;
      const start = process.hrtime.bigint();
      const result = await emitPass(bus, hook, event as never, context);
      const took = since(start);
      emitBatch += took;
      if (timed) {
        emits.push(took);
        outcomes[result.outcome.kind] = (outcomes[result.outcome.kind] ?? 0) + 1;
      }
    }
    for (const [m, { chain, own }] of alone.entries()) {
      for (let i = 0; i < per; i++) {
        const start = process.hrtime.bigint();
        await floorPass(chain, own[i % own.length] as Event, envelope);
        const took = since(start);
        if (timed) each[m]?.push(took);
      }
    }
    if (timed) {
      floorBatches.push(floorBatch);
      emitBatches.push(emitBatch);
    }
    tick();
  }
  const ratio = floorBatches.some((batch) => batch > 0) ? pairedRatio(emitBatches, floorBatches) : null;
  return { target, floors, emits, ratio, outcomes, each, stopped };
}

/**
 * The nearest-rank percentile of `values` (`share` 0.99: a time one of the timed operations
 * really took, never one between two); 0.5 is the median. Python's `measure.percentile`.
 */
export function percentile(values: readonly number[], share: number): number {
  if (values.length === 0) throw new RangeError("the percentile of no values");
  if (share === 0.5) return median(values);
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(share * sorted.length)));
  return sorted[rank - 1] as number;
}
