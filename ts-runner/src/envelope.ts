/**
 * The envelope every middleware receives beside the event: an injectable clock, the run's
 * id and read-only attributes the harness chooses to share.
 */

import { randomUUID } from "node:crypto";
import { describe } from "./json.js";

/** A wall clock. Inject one to make time-dependent middleware testable. */
export interface Clock {
  /** The current instant. */
  now(): Date;
  /** Whether `now()` falls on a Saturday or Sunday, in the clock's own time zone. */
  isWeekend(): boolean;
}

const WEEKDAY = (timeZone: string) => new Intl.DateTimeFormat("en-US", { timeZone, weekday: "short" });

/** The real clock; weekends are judged in `timeZone` (an IANA name, default UTC). */
export class SystemClock implements Clock {
  readonly timeZone: string;
  readonly #weekday: Intl.DateTimeFormat;

  constructor(options: { readonly timeZone?: string } = {}) {
    this.timeZone = options.timeZone ?? "UTC";
    this.#weekday = WEEKDAY(this.timeZone); // throws a RangeError for an unknown zone
  }

  now(): Date {
    return new Date();
  }

  isWeekend(): boolean {
    const day = this.#weekday.format(this.now());
    return day === "Sat" || day === "Sun";
  }
}

const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i;

/**
 * A clock stopped at one instant (tests, examples, conformance cases). Text must carry its
 * offset (`2026-11-28T10:00:00+00:00`), and the weekend is judged at that offset, as the
 * instant was written. A `Date` is judged in UTC unless `offsetMinutes` is given.
 */
export class FixedClock implements Clock {
  readonly #at: Date;
  /** Minutes east of UTC at which the instant was written. */
  readonly offsetMinutes: number;

  constructor(at: Date | string, options: { readonly offsetMinutes?: number } = {}) {
    if (typeof at === "string") {
      const match = ISO_WITH_OFFSET.exec(at);
      if (match === null || Number.isNaN(Date.parse(at))) {
        throw new RangeError(`FixedClock needs an ISO 8601 instant with an offset, got '${at}'`);
      }
      this.#at = new Date(at);
      this.offsetMinutes = options.offsetMinutes ?? parseOffset(match[1] ?? "Z");
    } else {
      if (!(at instanceof Date) || Number.isNaN(at.getTime())) throw new RangeError("FixedClock needs a valid Date");
      this.#at = new Date(at.getTime());
      this.offsetMinutes = options.offsetMinutes ?? 0;
    }
  }

  now(): Date {
    return new Date(this.#at.getTime()); // a copy: Date is mutable
  }

  isWeekend(): boolean {
    const local = new Date(this.#at.getTime() + this.offsetMinutes * 60_000);
    const day = local.getUTCDay();
    return day === 0 || day === 6;
  }
}

function parseOffset(offset: string): number {
  if (offset.toUpperCase() === "Z") return 0;
  const digits = offset.replace(":", "");
  const minutes = Number(digits.slice(1, 3)) * 60 + Number(digits.slice(3, 5));
  return offset.startsWith("-") ? -minutes : minutes;
}

export interface EnvelopeOptions {
  readonly clock?: Clock;
  readonly runId?: string;
  readonly attributes?: Readonly<Record<string, unknown>>;
}

/** What a middleware may know about the run besides the event. Immutable. */
export class Envelope {
  readonly clock: Clock;
  readonly runId: string;
  readonly attributes: Readonly<Record<string, unknown>>;

  constructor(options: EnvelopeOptions = {}) {
    const clock = options.clock ?? new SystemClock();
    if (typeof clock.now !== "function" || typeof clock.isWeekend !== "function") {
      throw new TypeError("Envelope clock must have now() and isWeekend()");
    }
    this.clock = clock;
    const runId: unknown = options.runId === undefined ? randomUUID().replaceAll("-", "") : options.runId;
    // Every trace record of an emit names it (I21): text, nothing else.
    if (typeof runId !== "string") throw new TypeError(`Envelope runId must be a string, got ${describe(runId)} (I21)`);
    this.runId = runId;
    this.attributes = Object.freeze({ ...options.attributes });
    Object.freeze(this);
  }

  /** The clock's current instant. */
  now(): Date {
    return this.clock.now();
  }

  /** Whether the clock's current instant falls on a weekend. */
  isWeekend(): boolean {
    return this.clock.isWeekend();
  }
}
