/**
 * A trace record: the keys of I8 in their shared snake_case spelling and fixed order.
 */

import type { HookPoint } from "./catalogue.js";
import type { Band, FailMode } from "./declaration.js";
import type { FailureKind } from "./failure.js";
import type { OutcomeKind } from "./outcomes.js";

/** What a record is about: one middleware's answer, its failure, or the whole hook point. */
export type RecordKind = "outcome" | "failure" | "hook";

/** One trace record, with the keys of I8 in their shared snake_case spelling. */
export interface TraceRecord {
  /** The emit's ordinal within this trace, from 1, in the order emits start. */
  readonly emit: number;
  readonly hook: HookPoint;
  /**
   * The emit's correlation (I21), the same on every record of the emit: the run id of its
   * context. Absent only in a record read from a trace written before I21.
   */
  readonly run?: string;
  /** The `step` of the event the caller emitted, when it has one from 0 to 2^53 - 1 (I21). */
  readonly step?: number;
  /** tool.before and tool.after: the `tool.name` of the event the caller emitted (I21). */
  readonly tool?: string;
  readonly kind: RecordKind;
  /** Middleware records only: the registered name. */
  readonly middleware?: string;
  /** Middleware records only. */
  readonly band?: Band;
  readonly outcome: OutcomeKind;
  /** True for a Continue(modified). */
  readonly modified: boolean;
  /** Only when the outcome has a code. */
  readonly code?: string;
  /** Failure records only: the failure kind (I5). */
  readonly failure?: FailureKind;
  /** Failure records only: the thrown value's type name, never its message (R9). */
  readonly error?: string;
  /** Failure records only. */
  readonly fail_mode?: FailMode;
  /** The hook-contract rule a modification broke (I14): on its middleware's record only. */
  readonly contract?: string;
  /** A middleware's outcome record only, when its answer carried some: the bounded texts (I24). */
  readonly warnings?: readonly string[];
  /** `true` on the records of a middleware in audit mode (I25); absent everywhere else. */
  readonly audit?: true;
  /**
   * Hook records of a bus with an identity scheme only, both or neither (I27): the content
   * identity of the event the emit was given; null when it has none (outside I-JSON).
   */
  readonly input_identity?: string | null;
  /** With `input_identity` (I27): the identity of `HookResult.event`, the event as the chain left it. */
  readonly enforced_identity?: string | null;
  /** Start, in monotonic nanoseconds; never compared by conformance. */
  readonly t_ns: number;
  /** Never compared by conformance. */
  readonly duration_ns: number;
}

/** The record keys in their fixed order (I8). */
export const FIELDS = [
  "emit",
  "hook",
  "run",
  "step",
  "tool",
  "kind",
  "middleware",
  "band",
  "outcome",
  "modified",
  "code",
  "failure",
  "error",
  "fail_mode",
  "contract",
  "warnings",
  "audit",
  "input_identity",
  "enforced_identity",
  "t_ns",
  "duration_ns",
] as const satisfies readonly (keyof TraceRecord)[];

/**
 * A record with its keys in the order of `FIELDS` and absent (undefined) keys left out, frozen;
 * a null identity (I27) is kept.
 */
export function orderedRecord(fields: { readonly [K in keyof TraceRecord]?: TraceRecord[K] | undefined }): TraceRecord {
  const out: Record<string, unknown> = {};
  for (const key of FIELDS) if (fields[key] !== undefined) out[key] = fields[key];
  return Object.freeze(out) as unknown as TraceRecord;
}
