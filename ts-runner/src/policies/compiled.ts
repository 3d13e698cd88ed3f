/**
 * A compiled Cedar policy set (I38), `CedarPolicySet`: the policies, the schema that checks
 * them and the entities, parsed once, when the spec loads, then asked once per event: each
 * request by the slice of the policies whose scope may match it (`./slices.ts`), Cedar's answer
 * mapped to an outcome (`./outcome.ts`). Compiling stops at the first problem, in I38's order,
 * as a `CedarLoadError` at the file and line it is on.
 */

import type { Event } from "../events.js";
import { typedEntities } from "./entities.js";
import { CedarLoadError } from "./errors.js";
import { jsonOf, type PolicySource } from "./files.js";
import { byCodePoint, outcomeOf } from "./outcome.js";
import { fromEngine, fromText, policyIndex, type Policy } from "./policy.js";
import { asciiJson, cedarRequest, type CedarRequest, type PolicyHook } from "./request.js";
import { preparsed, Slices } from "./slices.js";
import { statements, type Statement } from "./statements.js";
import { messages, oneLine, wasm, type Answer, type CedarWasm, type Detailed } from "./wasm.js";

const NAME = /^[_a-zA-Z][_a-zA-Z0-9]*$/;
const RESERVED: ReadonlySet<string> = new Set(["true", "false", "if", "then", "else", "in", "is", "like", "has", "__cedar"]);

/** How an item decides what Cedar leaves open. */
export interface DecisionSettings {
  readonly noDecision?: "block" | "continue";
  readonly onError?: "fail" | "skip";
}

/** What `CedarPolicySet.compile` takes besides the policies. */
export interface CompileOptions extends DecisionSettings {
  readonly schema?: PolicySource | null;
  readonly schemaFormat?: "cedar" | "json";
  readonly entities?: PolicySource | null;
  readonly namespace?: string | null;
}

function checkNamespace(namespace: string | null): void {
  if (namespace === null) return;
  if (namespace.split("::").every((part) => NAME.test(part) && !RESERVED.has(part))) return;
  throw new CedarLoadError("namespace", `the namespace ${asciiJson(namespace)} is not a Cedar name (Name or A::B)`);
}

/** Where each policy of the joined files is: split once, when the set parsed or a problem needs a line. */
class Places {
  #found: [string, Statement][] | null = null;

  constructor(readonly sources: readonly PolicySource[]) {}

  statements(): readonly [string, Statement][] {
    this.#found ??= this.sources.flatMap((source) => statements(source.text).map((found): [string, Statement] => [source.file, found]));
    return this.#found;
  }

  of(index: number): [string, number] {
    const found = this.statements()[index];
    return found === undefined ? [this.sources[0]?.file ?? "", 1] : [found[0], found[1].line];
  }

  /**
   * The problem of a set that did not parse whole: its first statement that does not parse
   * alone (a template parses: Python's engine reads templates); else, when the set parses
   * with templates, its first template (`policyN`, N its index in the set); else the set's.
   */
  firstBad(cedar: CedarWasm, joined: string, whole: readonly Detailed[] | undefined): CedarLoadError {
    for (const [file, found] of this.statements()) {
      if (cedar.policySetTextToParts(found.text).type === "failure") {
        const alone = cedar.checkParsePolicySet({ staticPolicies: found.text });
        const why = alone.type === "failure" ? messages(alone.errors) : "";
        return new CedarLoadError("policies", `the policy does not parse: ${why}`, file, found.line);
      }
    }
    const parts = cedar.policySetTextToParts(joined);
    if (parts.type === "success" && parts.policy_templates.length > 0) {
      for (const [index, [file, found]] of this.statements().entries()) {
        const alone = cedar.policySetTextToParts(found.text);
        if (alone.type === "success" && alone.policy_templates.length > 0) {
          const why = `policy policy${index} is a template (?principal or ?resource): only static policies are allowed`;
          return new CedarLoadError("policies", why, file, found.line);
        }
      }
    }
    return new CedarLoadError("policies", `the policies do not parse: ${messages(whole)}`, this.sources[0]?.file ?? "", 1);
  }

  /** Whether each statement is one policy: no file but the last ends in a statement without its `;` (which the next file would finish). */
  byText(): boolean {
    const files = this.sources.slice(0, -1).map((source) => source.file);
    const last = new Map<string, Statement>();
    for (const [file, found] of this.statements()) last.set(file, found);
    return files.every((file) => last.get(file)?.text.trimEnd().endsWith(";") ?? true);
  }
}

/**
 * A compiled Cedar policy set with its entities (and the schema that checked both), and how
 * it maps answers to outcomes. Build with `compile`; decide with `decide`.
 */
export class CedarPolicySet {
  readonly #cedar: CedarWasm;
  readonly #policies: readonly Policy[];
  readonly #byId: ReadonlyMap<string, Policy>;
  readonly #entities: unknown;
  readonly #slices: Slices;
  /** The namespace every type of a request is in, or null. */
  readonly namespace: string | null;
  readonly noDecision: "block" | "continue";
  readonly onError: "fail" | "skip";

  private constructor(cedar: CedarWasm, policies: readonly Policy[], entities: unknown, namespace: string | null, settings: DecisionSettings) {
    this.#cedar = cedar;
    this.#policies = policies;
    this.#byId = new Map(policies.map((policy) => [policy.cedarId, policy]));
    this.#slices = new Slices(cedar, policies);
    this.#entities = entities;
    this.namespace = namespace;
    this.noDecision = settings.noDecision ?? "block";
    this.onError = settings.onError ?? "fail";
    Object.freeze(this);
  }

  /** The shown id of each policy, in the order the files give them. */
  get ids(): readonly string[] {
    return this.#policies.map((policy) => policy.shown);
  }

  get size(): number {
    return this.#policies.length;
  }

  /**
   * Parses the policies of `sources` (joined with "\n", in order), the schema and the
   * entities, checks the policies and entities against the schema; a `CedarLoadError` at the
   * first problem (I38's order).
   */
  static compile(sources: readonly PolicySource[], options: CompileOptions = {}): CedarPolicySet {
    const cedar = wasm();
    const namespace = options.namespace ?? null;
    checkNamespace(namespace);
    if (sources.length === 0) throw new CedarLoadError("policies", "no policy file is given");
    const places = new Places(sources);
    const joined = sources.map((source) => source.text).join("\n");
    const whole = cedar.checkParsePolicySet({ staticPolicies: joined });
    if (whole.type === "failure") throw places.firstBad(cedar, joined, whole.errors);
    const policies = places.byText() ? places.statements().map(([, found], index) => fromText(cedar, index, found.text)) : fromEngine(cedar, joined);
    checkIds(policies, places);
    const schema = CedarPolicySet.#schema(cedar, options.schema ?? null, options.schemaFormat ?? "cedar");
    if (schema !== null) CedarPolicySet.#validate(cedar, joined, schema, policies, places);
    const entities = CedarPolicySet.#entitiesOf(cedar, options.entities ?? null, schema);
    return new CedarPolicySet(cedar, policies, entities, namespace, options);
  }

  static #schema(cedar: CedarWasm, schema: PolicySource | null, format: "cedar" | "json"): unknown {
    if (schema === null) return null;
    const parsed = format === "json" ? jsonOf(schema.text, schema.file, "schema", "schema") : schema.text;
    const checked = cedar.checkParseSchema(parsed);
    if (checked.type === "failure") throw new CedarLoadError("schema", `the schema does not parse: ${messages(checked.errors)}`, schema.file, 1);
    return parsed;
  }

  static #validate(cedar: CedarWasm, joined: string, schema: unknown, policies: readonly Policy[], places: Places): void {
    const result = cedar.validate({ schema, policies: { staticPolicies: joined }, validationSettings: { mode: "strict" } });
    if (result.type === "failure") {
      throw new CedarLoadError("schema", `the schema does not parse: ${messages(result.errors)}`, places.sources[0]?.file ?? "", 1);
    }
    // Cedar gives a policy's errors in no fixed order: the first by index, then by text.
    const errors = [...(result.validationErrors ?? [])].sort(
      (a, b) => policyIndex(a.policyId) - policyIndex(b.policyId) || byCodePoint(a.error.message, b.error.message),
    );
    const worst = errors[0];
    if (worst === undefined || policies.length === 0) return;
    const shown = policies.find((policy) => policy.cedarId === worst.policyId)?.shown ?? worst.policyId;
    const [file, line] = places.of(policyIndex(worst.policyId));
    throw new CedarLoadError("policies", `the schema rejects policy ${shown}: ${oneLine(worst.error.message)}`, file, line);
  }

  static #entitiesOf(cedar: CedarWasm, entities: PolicySource | null, schema: unknown): unknown {
    if (entities === null) return schema === null ? [] : typedEntities(cedar, schema, []);
    const parsed = jsonOf(entities.text, entities.file, "entities", "entity file");
    const alone = cedar.checkParseEntities({ entities: parsed });
    if (alone.type === "failure") throw new CedarLoadError("entities", `the entities do not parse: ${messages(alone.errors)}`, entities.file, 1);
    if (schema !== null) {
      const checked = cedar.checkParseEntities({ entities: parsed, schema });
      if (checked.type === "failure") {
        throw new CedarLoadError("entities", `the schema rejects the entities: ${messages(checked.errors)}`, entities.file, 1);
      }
    }
    return schema === null ? parsed : typedEntities(cedar, schema, parsed);
  }

  /** Cedar's answer to `request`, from its slice, or from the whole set (`sliced: false`). */
  answer(request: CedarRequest, sliced = true): Answer {
    const id = sliced ? this.#slices.of(request) : preparsed(this.#cedar, this.#policies);
    if (id === null) return { type: "success", response: { decision: "deny", diagnostics: { reason: [], errors: [] } } };
    return this.#cedar.statefulIsAuthorized({ ...request, preparsedPolicySetId: id, entities: this.#entities });
  }

  /** The outcome of `event` at `hook`; throws `CedarRequestError` or `CedarEvaluationError` (the fail mode then decides). */
  decide(hook: PolicyHook, event: Event, attributes: Readonly<Record<string, unknown>> | null) {
    return this.outcome(this.answer(cedarRequest(hook, event, attributes, this.namespace)));
  }

  /** The outcome of Cedar's `answer` (I38). */
  outcome(answer: Answer) {
    return outcomeOf(answer, this.#byId, this.noDecision, this.onError);
  }
}

/** Two policies with one shown id: a problem at the second. */
function checkIds(policies: readonly Policy[], places: Places): void {
  const first = new Map<string, string>();
  for (const found of policies) {
    const earlier = first.get(found.shown);
    if (earlier === undefined) {
      first.set(found.shown, found.cedarId);
      continue;
    }
    const [file, line] = places.of(policyIndex(found.cedarId));
    const [at, atLine] = places.of(policyIndex(earlier));
    throw new CedarLoadError("policies", `the policy id ${asciiJson(found.shown)} is already used by the policy at ${at}:${atLine}`, file, line);
  }
}
