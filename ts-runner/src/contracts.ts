/**
 * Hook contracts (I14): what a middleware may change in an event at each hook point (the Rust
 * core's `contract.rs`, the Python core's `_pycore/contracts.py`).
 *
 * A contract is checked only when a middleware answers `Continue(modified)` on a bus with a
 * contract mode: the event it received is compared with the modified one over a small view of
 * their JSON forms (message roles and fingerprints, a few fields as fingerprints). Rules are
 * checked in table order; the first one broken is the verdict. Warn: the modification stands
 * and its record names the rule. Strict: a `contract_violation` failure, handled by the
 * middleware's fail mode. `docs/contracts.md` says why each rule exists.
 */

import type { HookPoint } from "./catalogue.js";
import { valueError } from "./errors.js";
import type { Event } from "./events.js";
import { closedCode, closedReason, errorName, type FailureKind } from "./failure.js";
import { Block, Continue, type Outcome } from "./outcomes.js";
import type { Entry } from "./registry.js";
import { shown } from "./shown.js";

/** How a bus treats a broken contract; a bus without a mode checks nothing. */
export type ContractMode = "warn" | "strict";

type Message = readonly [role: string, fingerprint: string];
interface View {
  readonly messages: readonly Message[];
  readonly fields: readonly string[];
}
type Check = ((old: readonly Message[], now: readonly Message[]) => boolean) | readonly string[];

/** Per hook point: the JSON path of its message list (or none) and the paths of its fields. */
const VIEWS: Readonly<Record<HookPoint, readonly [string | undefined, readonly string[]]>> = {
  "task.start": [undefined, ["task"]],
  "step.start": ["messages", []],
  "model.before": ["request.messages", []],
  "model.after": [undefined, ["response.message.role", "response.usage"]],
  "tool.before": [undefined, ["tool.name", "call.name", "call.id"]],
  "tool.after": [undefined, ["tool.name", "call"]],
  "step.end": [undefined, ["usage"]],
  "task.end": [undefined, ["usage"]],
};

const notEmpty = (old: readonly Message[], now: readonly Message[]): boolean => old.length > 0 && now.length === 0;

function systemMoved(old: readonly Message[], now: readonly Message[]): boolean {
  const systems = (list: readonly Message[]) =>
    JSON.stringify(list.flatMap(([role, text], index) => (role === "system" ? [[index, text]] : [])));
  return systems(old) !== systems(now);
}

function historyRewritten(old: readonly Message[], now: readonly Message[]): boolean {
  const trailingUser = old.at(-1)?.[0] === "user";
  const kept = old.length - (trailingUser ? 1 : 0);
  if (now.length < old.length) return true;
  for (let i = 0; i < kept; i += 1) {
    if (old[i]?.[0] !== now[i]?.[0] || old[i]?.[1] !== now[i]?.[1]) return true;
  }
  return trailingUser && now[kept]?.[0] !== "user";
}

function tooManyAdded(old: readonly Message[], now: readonly Message[]): boolean {
  const grown = now.length - old.length;
  return grown > 1 || (grown === 1 && now.at(-1)?.[0] !== "user");
}

/** Every rule in the core's table order: the message check, or the fields that must not change. */
const RULES: readonly (readonly [string, Check])[] = [
  ["task.start/task_unchanged", ["task"]],
  ["step.start/messages_not_empty", notEmpty],
  ["step.start/system_first", systemMoved],
  ["model.before/messages_not_empty", notEmpty],
  ["model.before/system_first", systemMoved],
  ["model.before/history_unchanged", historyRewritten],
  ["model.before/at_most_one_user_message_added", tooManyAdded],
  ["model.after/role_unchanged", ["response.message.role"]],
  ["model.after/usage_unchanged", ["response.usage"]],
  ["tool.before/tool_unchanged", ["tool.name", "call.name"]],
  ["tool.before/call_id_unchanged", ["call.id"]],
  ["tool.after/call_unchanged", ["tool.name", "call"]],
  ["step.end/usage_unchanged", ["usage"]],
  ["task.end/usage_unchanged", ["usage"]],
];

/** Every contract rule id, in checking order. */
export const CONTRACT_RULES: readonly string[] = Object.freeze(RULES.map(([rule]) => rule));

/** A bus's contract mode: undefined, "warn" or "strict"; anything else is `invalid_contracts` (I14). */
export function contractMode(value: unknown): ContractMode | undefined {
  if (value === undefined || value === null) return undefined;
  if (value === "warn" || value === "strict") return value;
  throw valueError("register", "invalid_contracts", "contracts mode", shown(value));
}

function at(data: unknown, path: string): unknown {
  return path.split(".").reduce<unknown>((value, key) => (value as Record<string, unknown> | undefined)?.[key], data);
}

/** Canonical JSON (sorted keys): equal values, equal text. */
function fingerprint(value: unknown): string {
  if (typeof value === "string") return value;
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner !== null && typeof inner === "object" && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : inner,
  );
}

function view(hook: HookPoint, event: Event): View {
  const data = event.toJSON();
  const [messagesPath, fields] = VIEWS[hook];
  const list = messagesPath === undefined ? [] : (at(data, messagesPath) as readonly Record<string, unknown>[]);
  return {
    messages: list.map((message) => [String(message["role"]), fingerprint(message)] as const),
    fields: fields.map((path) => fingerprint(at(data, path))),
  };
}

/** The first rule of `hook` that changing `before` into `after` breaks, if any. */
export function violation(hook: HookPoint, before: Event, after: Event): string | undefined {
  const fields = VIEWS[hook][1];
  const old = view(hook, before);
  const now = view(hook, after);
  for (const [rule, check] of RULES) {
    if (!rule.startsWith(`${hook}/`)) continue;
    const broken =
      typeof check === "function"
        ? check(old.messages, now.messages)
        : check.some((path) => old.fields[fields.indexOf(path)] !== now.fields[fields.indexOf(path)]);
    if (broken) return rule;
  }
  return undefined;
}

/** What one middleware's answer came to, as the walk traces it. */
export interface Verdict {
  readonly outcome: Outcome;
  readonly failure?: { readonly kind: FailureKind; readonly error: string };
  /** The contract rule its modification broke (I14). */
  readonly contract?: string;
}

/**
 * The walk's hook-in: a verdict with the contract checked. Only a `Continue(modified)` on a
 * bus with a mode is looked at; everything else is returned as it came.
 */
export function enforceContract(
  mode: ContractMode | undefined,
  hook: HookPoint,
  event: Event,
  entry: Entry,
  verdict: Verdict,
): Verdict {
  const { outcome } = verdict;
  if (mode === undefined || outcome.kind !== "continue" || outcome.modified === undefined) return verdict;
  const rule = violation(hook, event, outcome.modified);
  if (rule === undefined) return verdict;
  if (mode === "warn") return { ...verdict, contract: rule };
  const { name, failMode } = entry.declaration;
  const kind = "contract_violation";
  const failed = failMode === "closed" ? Block(closedReason(name, kind), { code: closedCode(kind) }) : Continue();
  return { outcome: failed, failure: { kind, error: errorName(kind) }, contract: rule };
}

/**
 * The id of the first contract rule of `hook` that changing `before` into `after` breaks, or
 * undefined (I14): what a bus in warn or strict mode would record for that modification.
 */
export function checkContract(hook: HookPoint, before: Event, after: Event): string | undefined {
  return violation(hook, before, after);
}
