/**
 * One compiled policy as a `CedarPolicySet` (`./compiled.ts`) keeps it: Cedar's id, the id
 * outcomes show, its annotations, the scope keys slices are chosen by (`./slices.ts`) and its
 * text. Each is read from its statement's head by `./statements.ts`, or from the engine's JSON
 * form when that reader cannot, or when the files split a policy between them.
 */

import { CedarLoadError } from "./errors.js";
import type { EntityUid } from "./request.js";
import { readHead, type Head } from "./statements.js";
import type { CedarWasm } from "./wasm.js";

/** One compiled policy: Cedar's id, the shown id, its annotations, its scope keys, its text. */
export interface Policy {
  readonly cedarId: string;
  readonly shown: string;
  readonly annotations: ReadonlyMap<string, string>;
  readonly action: EntityUid | null;
  readonly resource: EntityUid | null;
  readonly text: string;
}

function entityOf(constraint: { readonly op: string; readonly entity?: unknown } | undefined): EntityUid | null {
  if (constraint?.op !== "==" || typeof constraint.entity !== "object" || constraint.entity === null) return null;
  const raw = constraint.entity as { type?: unknown; id?: unknown; __entity?: { type?: unknown; id?: unknown } };
  const uid = raw.__entity ?? raw;
  return { type: String(uid.type), id: String(uid.id) };
}

/** The `k` of Cedar's id `policyk` (0 for any other id). */
export function policyIndex(cedarId: string): number {
  return cedarId.startsWith("policy") ? Number(cedarId.slice("policy".length)) : 0;
}

function policy(cedarId: string, head: Head, text: string): Policy {
  const shown = head.annotations.get("id") ?? cedarId;
  return { cedarId, shown, annotations: head.annotations, action: head.action, resource: head.resource, text };
}

/** Policy `index` read from its statement (the usual case: statement N is `policyN`). */
export function fromText(cedar: CedarWasm, index: number, text: string): Policy {
  return policy(`policy${index}`, readHead(text) ?? headOf(cedar, text), text);
}

/**
 * Every policy as the engine splits the set, when the files split a policy between them.
 * `policySetTextToParts` gives the texts in the order of their ids as strings (`policy10`
 * before `policy2`): the ids are sorted the same way to pair them.
 */
export function fromEngine(cedar: CedarWasm, joined: string): Policy[] {
  const parts = cedar.policySetTextToParts(joined);
  if (parts.type !== "success") throw new CedarLoadError("policies", "the policies do not parse", null, 1);
  const ids = parts.policies.map((_, i) => `policy${i}`).sort();
  const found = parts.policies.map((text, i) => policy(ids[i] ?? "", readHead(text) ?? headOf(cedar, text), text));
  return found.sort((a, b) => policyIndex(a.cedarId) - policyIndex(b.cedarId));
}

/** A head the text reader leaves to the engine (an escape in a string): from Cedar's JSON form. */
function headOf(cedar: CedarWasm, text: string): Head {
  const answer = cedar.policyToJson(text);
  const json = answer.json;
  if (answer.type !== "success" || json === undefined) throw new CedarLoadError("policies", "the policy does not parse");
  const annotations = new Map(Object.entries(json.annotations ?? {}).map(([name, value]) => [name, value ?? ""]));
  return { annotations, action: entityOf(json.action), resource: entityOf(json.resource) };
}
