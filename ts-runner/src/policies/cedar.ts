/**
 * `harnessweaver.cedar`: tool calls and model requests decided by Cedar policies (I38;
 * Python: `policies/cedar.py`), on `@cedar-policy/cedar-wasm` (its Node.js build), an optional
 * peer dependency loaded when the first item is built.
 *
 * The item names its policies (and optionally a schema and entities) by path; they are read
 * and compiled once, when the spec loads, into a `CedarPolicySet`. Each event becomes a Cedar
 * request (`./request.ts`) and Cedar's answer an outcome:
 *
 * - allow, no determining permit annotated `@requireApproval` or `@escalate` → `Continue()`;
 * - allow with some → `Suspend` naming them (`code: "cedar:<ids>"`, the approver role from
 *   the first one's annotation);
 * - deny by forbids → `Block(code: "cedar:<ids>")`; deny because no permit applies →
 *   `no_decision` (`block`: `Block(code: "cedar:no_permit")`, or `continue`);
 * - a policy that errors → `CedarEvaluationError` (`on_error: fail`) or Cedar's own semantics,
 *   the erroring policy ignored (`skip`).
 *
 * The parts, one module each: `./files.ts` reads the files the item names, `./compiled.ts`
 * compiles them into a `CedarPolicySet` (its policies: `./policy.ts`; on the engine of
 * `./wasm.ts`, the entities typed by the schema in `./entities.ts`), `./slices.ts` gives each
 * request only the policies whose scope may match it, `./outcome.ts` turns Cedar's answer into
 * the outcome above; this module is the middleware and its settings.
 */

import type { Envelope } from "../envelope.js";
import { ModelRequestEvent, ToolCallEvent, ToolResultEvent, type Event } from "../events.js";
import { configurable } from "../plugin.js";
import { settingsSchema } from "../builtins/settings.js";
import { folderOf, LoadProblem, readFiles } from "../spec/files.js";
import { setItemHooks } from "../spec/hooks.js";
import { CedarPolicySet } from "./compiled.js";
import { CedarLoadError } from "./errors.js";
import { readPolicyFile } from "./files.js";
import { POLICY_HOOKS, type PolicyHook } from "./request.js";
import { wasm } from "./wasm.js";

// What the parts export for the rest of the package, exported here too: this module stays
// the one that the runner, the conformance behaviours and the tests import.
export { CedarPolicySet, type CompileOptions, type DecisionSettings } from "./compiled.js";
export { jsonFault, readPolicyFile, type PolicySource } from "./files.js";
export { APPROVAL_ANNOTATIONS } from "./outcome.js";
export { CACHED_SLICES } from "./slices.js";
export { CEDAR_PACKAGE, cedarWasm } from "./wasm.js";

/** The settings of an item, as the loader validated them. */
interface CedarSettings {
  readonly policies: string | readonly string[];
  readonly schema?: string | null;
  readonly entities?: string | null;
  readonly namespace?: string | null;
  readonly no_decision: "block" | "continue";
  readonly on_error: "fail" | "skip";
}

/** The files of `settings`, as written: the policies, the schema, the entities. */
export function loadedFiles(settings: CedarSettings): string[] {
  const policies = typeof settings.policies === "string" ? [settings.policies] : [...settings.policies];
  return [...policies, ...[settings.schema, settings.entities].filter((file): file is string => typeof file === "string")];
}

/** Reads the files of `settings` (relative to `folder`) and compiles them. */
export function compileSettings(settings: CedarSettings, folder: string): CedarPolicySet {
  wasm(); // the engine first: without it, no file is worth reading
  const policyFiles = typeof settings.policies === "string" ? [settings.policies] : settings.policies;
  const sources = policyFiles.map((file) => readPolicyFile(folder, file, "policies"));
  const schema = settings.schema ? readPolicyFile(folder, settings.schema, "schema") : null;
  const entities = settings.entities ? readPolicyFile(folder, settings.entities, "entities") : null;
  return CedarPolicySet.compile(sources, {
    schema,
    schemaFormat: (settings.schema ?? "").endsWith(".json") ? "json" : "cedar",
    entities,
    namespace: settings.namespace ?? null,
    noDecision: settings.no_decision,
    onError: settings.on_error,
  });
}

/** The hook point of a policy middleware's event. */
export function hookOf(event: Event): PolicyHook {
  if (event instanceof ModelRequestEvent) return "model.before";
  if (event instanceof ToolResultEvent) return "tool.after";
  if (event instanceof ToolCallEvent) return "tool.before";
  throw new TypeError(`a Cedar policy decides on ${POLICY_HOOKS.join(", ")}`);
}

/**
 * `harnessweaver.cedar` (I38; docs/policies.md): its files are read and compiled when the
 * loader builds the item, relative to the folder of the file declaring it (built in code:
 * the working directory).
 */
export const cedar = configurable(
  { name: "cedar", hooks: [...POLICY_HOOKS], failMode: "closed", settings: settingsSchema("cedar") },
  (given) => {
    const settings = given as unknown as CedarSettings;
    const folder = folderOf();
    let policies: CedarPolicySet;
    try {
      policies = compileSettings(settings, folder ?? process.cwd());
    } catch (error) {
      if (!(error instanceof CedarLoadError) || folder === null) throw error;
      throw new LoadProblem("invalid_policy", error.key, error.problem, error.file, error.line);
    }
    readFiles(loadedFiles(settings));
    return async (event: Event, envelope: Envelope) => policies.decide(hookOf(event), event, envelope.attributes);
  },
);

// An item without `hooks:` decides tool.before only; naming another hook point is an I38 problem.
setItemHooks(cedar, { default: ["tool.before"], kind: "invalid_policy" });
