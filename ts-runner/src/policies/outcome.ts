/**
 * Cedar's answer → an outcome (I38): allow → `Continue()`, or `Suspend` when a determining
 * permit is annotated `@requireApproval` or `@escalate`; deny by forbids → `Block` naming
 * them; deny because no permit applies → the item's `no_decision`; a policy that errors →
 * `CedarEvaluationError` (`on_error: fail`) or Cedar's own semantics (`skip`). Codes and
 * reasons are cut to I28's bounds.
 */

import { Block, Continue, Suspend } from "../outcomes.js";
import { CedarEvaluationError, CedarRequestError } from "./errors.js";
import type { Policy } from "./policy.js";
import type { Answer } from "./wasm.js";

/** The annotations that turn a permit into a Suspend, in the order the approver role is taken. */
export const APPROVAL_ANNOTATIONS = ["requireApproval", "escalate"] as const;
/** I28's bounds of an outcome's code and reason, in code points. */
const CODE_LIMIT = 128;
const REASON_LIMIT = 4096;

/** Code point order (Python's sort of strings). */
export function byCodePoint(a: string, b: string): number {
  const x = Array.from(a);
  const y = Array.from(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = (x[i]?.codePointAt(0) ?? 0) - (y[i]?.codePointAt(0) ?? 0);
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

/** `text` cut to its first `limit` code points (I28). */
function cut(text: string, limit: number): string {
  if (text.length <= limit) return text;
  const points = Array.from(text);
  return points.length <= limit ? text : points.slice(0, limit).join("");
}

function shown(byId: ReadonlyMap<string, Policy>, cedarIds: Iterable<string>): string[] {
  return [...new Set([...cedarIds].map((id) => byId.get(id)?.shown ?? id))].sort(byCodePoint);
}

/** The outcome of Cedar's `answer` (I38), the policies of the set by Cedar id in `byId`. */
export function outcomeOf(answer: Answer, byId: ReadonlyMap<string, Policy>, noDecision: "block" | "continue", onError: "fail" | "skip") {
  const response = answer.response;
  if (answer.type !== "success" || response === undefined) throw new CedarRequestError("request", "Cedar could not read the request");
  const { reason, errors } = response.diagnostics;
  if (errors.length > 0 && onError === "fail") throw new CedarEvaluationError(shown(byId, errors.map((error) => error.policyId)));
  if (response.decision === "allow") return allow(byId, reason);
  if (reason.length > 0) {
    const ids = shown(byId, reason);
    return Block(cut(`forbidden by Cedar policy ${ids.join(", ")}`, REASON_LIMIT), { code: cut(`cedar:${ids.join(",")}`, CODE_LIMIT) });
  }
  if (noDecision === "continue") return Continue();
  return Block("no Cedar policy permits this request", { code: "cedar:no_permit" });
}

function allow(byId: ReadonlyMap<string, Policy>, reasons: readonly string[]) {
  const asking = reasons
    .map((id) => byId.get(id))
    .filter((policy): policy is Policy => policy !== undefined && APPROVAL_ANNOTATIONS.some((name) => policy.annotations.has(name)));
  if (asking.length === 0) return Continue();
  const ids = [...new Set(asking.map((policy) => policy.shown))].sort(byCodePoint);
  const first = asking.find((policy) => policy.shown === ids[0]) as Policy;
  const role = APPROVAL_ANNOTATIONS.map((name) => first.annotations.get(name)).find((value) => value !== undefined) ?? "";
  return Suspend(cut(`approval required by Cedar policy ${ids.join(", ")}`, REASON_LIMIT), {
    approverRole: role === "" ? null : role,
    code: cut(`cedar:${ids.join(",")}`, CODE_LIMIT),
  });
}
