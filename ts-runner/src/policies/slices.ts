/**
 * The slices of a compiled policy set (I38): the policies whose scope may match a request, as
 * one pre-parsed Cedar policy set.
 *
 * Compiled once: the policies are pre-parsed into cedar-wasm's cache (`preparsePolicySet`) and
 * each call names them (`statefulIsAuthorized`), so no call parses policy text. Cedar
 * evaluates every policy of the set it is given, so each request is decided by the policies
 * whose scope may match it only (a slice): a policy whose scope says `action == A`
 * (`resource == R`) is left out of a request for another action (resource). Such a policy
 * could neither determine the decision nor error (the scope comes before the conditions and
 * short-circuits), so the answer is the whole set's. A slice is pre-parsed under an id made
 * from its content, so equal slices share one entry of the engine's cache, which never frees
 * one: their number is bounded by the policies (a resource no policy names gives the same
 * slice as any other such resource), whatever names the model makes up.
 */

import { createHash } from "node:crypto";

import { CedarEvaluationError } from "./errors.js";
import type { Policy } from "./policy.js";
import type { CedarRequest, EntityUid } from "./request.js";
import type { CedarWasm } from "./wasm.js";

/** How many (action, resource) slices are kept; the oldest goes first when one more is made. */
export const CACHED_SLICES = 1024;

function key(uid: EntityUid): string {
  return `${uid.type}\0${uid.id}`;
}

function same(a: EntityUid, b: EntityUid): boolean {
  return a.type === b.type && a.id === b.id;
}

const prepared = new Set<string>();

/** The id under which `policies` (with Cedar's ids) are in the engine's cache: pre-parsed on first need. */
export function preparsed(cedar: CedarWasm, policies: readonly Policy[]): string {
  const set: Record<string, string> = {};
  for (const policy of policies) set[policy.cedarId] = policy.text;
  const id = `harnessweaver:${createHash("sha256").update(JSON.stringify(set)).digest("hex")}`;
  if (!prepared.has(id)) {
    const done = cedar.preparsePolicySet(id, { staticPolicies: set });
    if (done.type === "failure") throw new CedarEvaluationError(policies.map((policy) => policy.shown));
    prepared.add(id);
  }
  return id;
}

/** The slices of one policy set, by (action, resource): the most recent `CACHED_SLICES` of them. */
export class Slices {
  readonly #cedar: CedarWasm;
  readonly #policies: readonly Policy[];
  readonly #cache = new Map<string, string | null>();
  readonly #named: ReadonlySet<string>;

  constructor(cedar: CedarWasm, policies: readonly Policy[]) {
    this.#cedar = cedar;
    this.#policies = policies;
    this.#named = new Set(policies.flatMap((policy) => (policy.resource === null ? [] : [key(policy.resource)])));
  }

  /** The pre-parsed slice of the policies whose scope may match `request` (null: none may). */
  of(request: CedarRequest): string | null {
    const action = request.action;
    const resource = this.#named.has(key(request.resource)) ? request.resource : null;
    const cacheKey = `${key(action)}\0${resource === null ? "" : key(resource)}`;
    const cached = this.#cache.get(cacheKey);
    if (cached !== undefined) return cached;
    const chosen = this.#policies.filter(
      (policy) => (policy.action === null || same(policy.action, action)) && (policy.resource === null || (resource !== null && same(policy.resource, resource))),
    );
    const id = chosen.length === 0 ? null : preparsed(this.#cedar, chosen);
    if (this.#cache.size >= CACHED_SLICES) this.#cache.delete(this.#cache.keys().next().value as string);
    this.#cache.set(cacheKey, id);
    return id;
  }
}
