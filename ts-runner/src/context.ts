/** The run context an emit is made in: the envelope middleware see, and the trace it writes. */

import { Envelope } from "./envelope.js";
import { Trace } from "./trace.js";

export interface RunContextOptions {
  readonly envelope?: Envelope;
  /** Absent: a new, empty trace. */
  readonly trace?: Trace;
}

/**
 * One run's context. Give concurrent runs separate contexts: each trace then holds only its
 * own records (ruling 21).
 */
export class RunContext {
  readonly envelope: Envelope;
  readonly trace: Trace;

  constructor(options: RunContextOptions = {}) {
    const { envelope = new Envelope(), trace = new Trace() } = options;
    if (!(envelope instanceof Envelope)) throw new TypeError("RunContext envelope must be an Envelope");
    if (!(trace instanceof Trace)) throw new TypeError("RunContext trace must be a Trace");
    this.envelope = envelope;
    this.trace = trace;
    Object.freeze(this);
  }
}
