/**
 * The hook-point catalogue (conformance/catalogue.json): the eight hook points in catalogue
 * order and their directions (ruling 2: `*.before`/`*.start` inbound, `*.after`/`*.end`
 * outbound). The event type of each hook point is in `events.ts`.
 */

export const HOOK_POINTS = [
  "task.start",
  "step.start",
  "model.before",
  "model.after",
  "tool.before",
  "tool.after",
  "step.end",
  "task.end",
] as const;

export type HookPoint = (typeof HOOK_POINTS)[number];

export type Direction = "inbound" | "outbound";

export const DIRECTIONS: Readonly<Record<HookPoint, Direction>> = Object.freeze({
  "task.start": "inbound",
  "step.start": "inbound",
  "model.before": "inbound",
  "model.after": "outbound",
  "tool.before": "inbound",
  "tool.after": "outbound",
  "step.end": "outbound",
  "task.end": "outbound",
});

const ORDER: ReadonlyMap<string, number> = new Map(HOOK_POINTS.map((hook, i) => [hook, i]));

/** Whether `value` names a hook point of the catalogue. */
export function isHookPoint(value: unknown): value is HookPoint {
  return typeof value === "string" && ORDER.has(value);
}

/** A hook point's position in the catalogue (declarations keep their hooks in this order). */
export function catalogueIndex(hook: HookPoint): number {
  return ORDER.get(hook) ?? -1;
}
