/**
 * Trace correlation (I21): which run, step and tool the records of an emit belong to, so that
 * an operator finds a blocked call without matching emit ordinals by hand. It is the same on
 * every record of the emit, and comes from the event the caller emitted, never from a
 * middleware's modification: a record says what was asked.
 */

import { HOOK_POINTS } from "./catalogue.js";
import type { Event } from "./events.js";

/** An emit's correlation, as its records carry it: `run` always, `step` and `tool` where they apply. */
export interface Correlation {
  readonly run: string;
  readonly step?: number;
  readonly tool?: string;
}

/** Per catalogue index: whether the hook point's event type has a `step` (all but task.start/end). */
const STEPPED: readonly boolean[] = HOOK_POINTS.map((hook) => hook !== "task.start" && hook !== "task.end");
/** Per catalogue index: whether the hook point's event type has a tool (tool.before, tool.after). */
const TOOLED: readonly boolean[] = HOOK_POINTS.map((hook) => hook === "tool.before" || hook === "tool.after");

/** Text a trace can hold: a surrogate code point (UTF-8 cannot carry one) becomes U+FFFD. */
function wellFormed(text: string): string {
  return text.isWellFormed() ? text : text.toWellFormed();
}

/**
 * Makes the correlation of each emit on one trace. It hands back the previous emit's frozen
 * object while run, step and tool stay the same, so a loop emitting one event allocates
 * nothing for it, and the trace keeps one correlation for a run of records that share it.
 */
export class Correlator {
  #last: Correlation | undefined = undefined;
  /** What `#last` was made from, as read (before surrogates were replaced). */
  #run = "";
  #step: number | undefined = undefined;
  #tool: string | undefined = undefined;

  /** The correlation of an emit of `event` at the hook point of catalogue index `hookIndex`. */
  of(run: string, hookIndex: number, event: Event): Correlation {
    let step: number | undefined;
    let tool: string | undefined;
    try {
      if (STEPPED[hookIndex] === true) {
        const value = (event as { readonly step?: unknown }).step;
        if (Number.isSafeInteger(value) && (value as number) >= 0) step = (value as number) + 0; // -0 is 0
      }
      if (TOOLED[hookIndex] === true) {
        const name = (event as { readonly tool: { readonly name?: unknown } }).tool.name;
        if (typeof name === "string") tool = name;
      }
    } catch {
      // The caller's event is checked with `instanceof` only (I7): a look-alike whose fields
      // throw when read correlates by what it gave before that.
    }
    const last = this.#last;
    if (last !== undefined && run === this.#run && step === this.#step && tool === this.#tool) return last;
    const made: { run: string; step?: number; tool?: string } = { run: wellFormed(run) };
    if (step !== undefined) made.step = step;
    if (tool !== undefined) made.tool = wellFormed(tool);
    this.#run = run;
    this.#step = step;
    this.#tool = tool;
    return (this.#last = Object.freeze(made));
  }
}
