/**
 * The engine of `harnessweaver.cedar`: `@cedar-policy/cedar-wasm` (its Node.js build), an
 * optional peer dependency loaded when the first item is built, the part of it used here, and
 * its messages as a `CedarLoadError` shows them.
 */

import { createRequire } from "node:module";

import { CedarLoadError } from "./errors.js";
import type { CedarRequest } from "./request.js";

/** The engine package, an optional peer dependency, at the version every implementation pins. */
export const CEDAR_PACKAGE = "@cedar-policy/cedar-wasm";
const INSTALL = `npm install ${CEDAR_PACKAGE}@4.12.0`;

// The part of cedar-wasm used here, typed here: the package's own types stay out of this
// package's declarations, so a consumer without the optional peer still compiles.
export interface Detailed {
  readonly message: string;
}
type Checked = { readonly type: "success" } | { readonly type: "failure"; readonly errors: readonly Detailed[] };
export interface Answer {
  readonly type: "success" | "failure";
  readonly errors?: readonly Detailed[];
  readonly response?: {
    readonly decision: "allow" | "deny";
    readonly diagnostics: { readonly reason: readonly string[]; readonly errors: readonly { readonly policyId: string }[] };
  };
}
interface Json {
  readonly type: "success" | "failure";
  readonly json?: {
    readonly annotations?: Readonly<Record<string, string | null>>;
    readonly action: { readonly op: string; readonly entity?: unknown };
    readonly resource: { readonly op: string; readonly entity?: unknown };
  };
}
export interface CedarWasm {
  checkParsePolicySet(policies: { staticPolicies: string | Record<string, string> }): Checked;
  policySetTextToParts(
    text: string,
  ): { readonly type: "success"; readonly policies: readonly string[]; readonly policy_templates: readonly string[] } | { readonly type: "failure" };
  policyToJson(policy: string): Json;
  checkParseSchema(schema: unknown): Checked;
  checkParseEntities(call: { entities: unknown; schema?: unknown }): Checked;
  validate(call: { schema: unknown; policies: { staticPolicies: string }; validationSettings: { mode: "strict" } }): {
    readonly type: "success" | "failure";
    readonly errors?: readonly Detailed[];
    readonly validationErrors?: readonly { readonly policyId: string; readonly error: Detailed }[];
  };
  preparsePolicySet(id: string, policies: { staticPolicies: Record<string, string> }): Checked;
  schemaToText(schema: unknown): { readonly type: "success"; readonly text: string } | { readonly type: "failure" };
  schemaToJsonWithResolvedTypes(schema: string): { readonly type: "success"; readonly json: Readonly<Record<string, Namespace>> } | { readonly type: "failure" };
  statefulIsAuthorized(call: CedarRequest & { preparsedPolicySetId: string; entities: unknown }): Answer;
}

/** A namespace of a schema in Cedar's JSON form, its types resolved (`schemaToJsonWithResolvedTypes`). */
export interface Namespace {
  readonly commonTypes?: Readonly<Record<string, SchemaType>>;
  readonly entityTypes?: Readonly<Record<string, { readonly shape?: SchemaType }>>;
  readonly actions?: Readonly<Record<string, { readonly memberOf?: readonly { readonly id: string; readonly type?: string }[] }>>;
}
export interface SchemaType {
  readonly type: string;
  readonly name?: string;
  readonly element?: SchemaType;
  readonly attributes?: Readonly<Record<string, SchemaType>>;
}

let engine: CedarWasm | null | undefined;

/** cedar-wasm's Node.js build, or null when the package is not installed. */
export function cedarWasm(): CedarWasm | null {
  if (engine === undefined) {
    try {
      engine = createRequire(import.meta.url)(`${CEDAR_PACKAGE}/nodejs`) as CedarWasm;
    } catch {
      engine = null;
    }
  }
  return engine;
}

/** cedar-wasm, or a `CedarLoadError` saying how to install it. */
export function wasm(): CedarWasm {
  const found = cedarWasm();
  if (found === null) throw new CedarLoadError("policies", `harnessweaver.cedar needs the ${CEDAR_PACKAGE} package: ${INSTALL}`);
  return found;
}

/** Whitespace collapsed: an engine's message on one line. */
export function oneLine(text: string): string {
  return text.split(/\s+/).filter(Boolean).join(" ");
}

// cedar-wasm's own lead-ins, which cedarpy does not write: without them the engine's text is
// the same in both implementations more often.
const LEAD_INS = /^failed to parse (?:policies|policy|schema) from string: /;

/** The engine's `errors` on one line, without cedar-wasm's own lead-ins. */
export function messages(errors: readonly Detailed[] | undefined): string {
  return oneLine((errors ?? []).map((error) => error.message.replace(LEAD_INS, "")).join("; "));
}
