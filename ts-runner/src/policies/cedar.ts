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
import { closeSync, openSync, readSync } from "node:fs";
import { createRequire } from "node:module";
import { isAbsolute, resolve } from "node:path";

import type { Envelope } from "../envelope.js";
import { ModelRequestEvent, ToolCallEvent, ToolResultEvent, type Event } from "../events.js";
import { Block, Continue, Suspend } from "../outcomes.js";
import { configurable } from "../plugin.js";
import { settingsSchema } from "../builtins/settings.js";
import { folderOf, LoadProblem, readFiles } from "../spec/files.js";
import { setItemHooks } from "../spec/hooks.js";
import { MAX_BYTES } from "../spec/limits.js";
import { notUtf8 } from "../spec/utf8.js";
import { CedarEvaluationError, CedarLoadError, CedarRequestError } from "./errors.js";
import { asciiJson, cedarRequest, POLICY_HOOKS, type CedarRequest, type EntityUid, type PolicyHook } from "./request.js";
import { readHead, statements, type Head, type Statement } from "./statements.js";

/** The annotations that turn a permit into a Suspend, in the order the approver role is taken. */
export const APPROVAL_ANNOTATIONS = ["requireApproval", "escalate"] as const;
/** How many (action, resource) slices are kept; the oldest goes first when one more is made. */
export const CACHED_SLICES = 1024;
const CODE_LIMIT = 128;
const REASON_LIMIT = 4096;
/** The engine package, an optional peer dependency, at the version every implementation pins. */
export const CEDAR_PACKAGE = "@cedar-policy/cedar-wasm";
const INSTALL = `npm install ${CEDAR_PACKAGE}@4.12.0`;
const NAME = /^[_a-zA-Z][_a-zA-Z0-9]*$/;
const RESERVED: ReadonlySet<string> = new Set(["true", "false", "if", "then", "else", "in", "is", "like", "has", "__cedar"]);

// The part of cedar-wasm used here, typed here: the package's own types stay out of this
// package's declarations, so a consumer without the optional peer still compiles.
interface Detailed {
  readonly message: string;
}
type Checked = { readonly type: "success" } | { readonly type: "failure"; readonly errors: readonly Detailed[] };
interface Answer {
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
interface CedarWasm {
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
interface Namespace {
  readonly commonTypes?: Readonly<Record<string, SchemaType>>;
  readonly entityTypes?: Readonly<Record<string, { readonly shape?: SchemaType }>>;
  readonly actions?: Readonly<Record<string, { readonly memberOf?: readonly { readonly id: string; readonly type?: string }[] }>>;
}
interface SchemaType {
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

function wasm(): CedarWasm {
  const found = cedarWasm();
  if (found === null) throw new CedarLoadError("policies", `harnessweaver.cedar needs the ${CEDAR_PACKAGE} package: ${INSTALL}`);
  return found;
}

/** One policy file's text and the path the spec writes for it. */
export interface PolicySource {
  readonly file: string;
  readonly text: string;
}

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

/** One compiled policy: Cedar's id, the shown id, its annotations, its scope keys, its text. */
interface Policy {
  readonly cedarId: string;
  readonly shown: string;
  readonly annotations: ReadonlyMap<string, string>;
  readonly action: EntityUid | null;
  readonly resource: EntityUid | null;
  readonly text: string;
}

/** Whitespace collapsed: an engine's message on one line. */
function oneLine(text: string): string {
  return text.split(/\s+/).filter(Boolean).join(" ");
}

// cedar-wasm's own lead-ins, which cedarpy does not write: without them the engine's text is
// the same in both implementations more often.
const LEAD_INS = /^failed to parse (?:policies|policy|schema) from string: /;

function messages(errors: readonly Detailed[] | undefined): string {
  return oneLine((errors ?? []).map((error) => error.message.replace(LEAD_INS, "")).join("; "));
}

function checkNamespace(namespace: string | null): void {
  if (namespace === null) return;
  if (namespace.split("::").every((part) => NAME.test(part) && !RESERVED.has(part))) return;
  throw new CedarLoadError("namespace", `the namespace ${asciiJson(namespace)} is not a Cedar name (Name or A::B)`);
}

/** The 1-based line of offset `at` in `text`. */
function lineAt(text: string, at: number): number {
  let line = 1;
  for (let i = 0; i < at && i < text.length; i++) if (text.charCodeAt(i) === 10) line += 1;
  return line;
}

/** `text` parsed as JSON; a `CedarLoadError` at the line of the fault, as Python's `json` finds it. */
function jsonOf(text: string, file: string, key: string, what: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new CedarLoadError(key, `the ${what} is not JSON`, file, lineAt(text, jsonFault(text)));
  }
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?/y;

/**
 * Where Python's `json.loads` stops on `text` (its `JSONDecodeError.pos`), so that both
 * implementations name the same line: V8's messages do not always give a position, and give
 * another one for a bad literal (its second character, where Python names the value's start).
 */
export function jsonFault(text: string): number {
  let i = 0;
  const blank = () => {
    while (i < text.length && " \t\n\r".includes(text[i] ?? "")) i += 1;
  };
  const stop = (at: number): never => {
    throw new RangeError(String(at));
  };
  const string = () => {
    const start = i;
    i += 1;
    for (;;) {
      if (i >= text.length) stop(start);
      const ch = text.charCodeAt(i);
      if (ch === 0x22) break;
      if (ch < 0x20) stop(i);
      if (ch === 0x5c) {
        const next = text[i + 1] ?? "";
        if (next === "u" ? !/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6)) : !'"\\/bfnrt'.includes(next) || next === "") stop(i);
        i += next === "u" ? 6 : 2;
        continue;
      }
      i += 1;
    }
    i += 1;
  };
  const value = (depth: number): void => {
    const ch = text[i];
    if (depth > 10_000) stop(i);
    if (ch === '"') return string();
    if (ch === "{" || ch === "[") {
      const close = ch === "{" ? "}" : "]";
      i += 1;
      blank();
      if (text[i] === close) {
        i += 1;
        return;
      }
      for (;;) {
        if (ch === "{") {
          if (text[i] !== '"') stop(i);
          string();
          blank();
          if (text[i] !== ":") stop(i);
          i += 1;
          blank();
        }
        value(depth + 1);
        blank();
        if (text[i] === close) {
          i += 1;
          return;
        }
        if (text[i] !== ",") stop(i);
        i += 1;
        blank();
      }
    }
    for (const word of ["null", "true", "false", "NaN", "Infinity", "-Infinity"]) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return;
      }
    }
    NUMBER.lastIndex = i;
    if (!NUMBER.test(text)) stop(i);
    i = NUMBER.lastIndex;
  };
  try {
    blank();
    value(0);
    blank();
    return i < text.length ? i : text.length;
  } catch (error) {
    if (error instanceof RangeError && /^\d+$/.test(error.message)) return Number(error.message);
    throw error;
  }
}

function entityOf(constraint: { readonly op: string; readonly entity?: unknown } | undefined): EntityUid | null {
  if (constraint?.op !== "==" || typeof constraint.entity !== "object" || constraint.entity === null) return null;
  const raw = constraint.entity as { type?: unknown; id?: unknown; __entity?: { type?: unknown; id?: unknown } };
  const uid = raw.__entity ?? raw;
  return { type: String(uid.type), id: String(uid.id) };
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
  readonly #cache = new Map<string, string | null>();
  readonly #named: ReadonlySet<string>;
  /** The namespace every type of a request is in, or null. */
  readonly namespace: string | null;
  readonly noDecision: "block" | "continue";
  readonly onError: "fail" | "skip";

  private constructor(cedar: CedarWasm, policies: readonly Policy[], entities: unknown, namespace: string | null, settings: DecisionSettings) {
    this.#cedar = cedar;
    this.#policies = policies;
    this.#byId = new Map(policies.map((policy) => [policy.cedarId, policy]));
    this.#named = new Set(policies.flatMap((policy) => (policy.resource === null ? [] : [key(policy.resource)])));
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
    const policies = places.byText() ? CedarPolicySet.#policiesOf(cedar, places) : CedarPolicySet.#fromEngine(cedar, joined);
    checkIds(policies, places);
    const schema = CedarPolicySet.#schema(cedar, options.schema ?? null, options.schemaFormat ?? "cedar");
    if (schema !== null) CedarPolicySet.#validate(cedar, joined, schema, policies, places);
    const entities = CedarPolicySet.#entitiesOf(cedar, options.entities ?? null, schema);
    return new CedarPolicySet(cedar, policies, entities, namespace, options);
  }

  /** Each policy read from its statement (the usual case: statement N is `policyN`). */
  static #policiesOf(cedar: CedarWasm, places: Places): Policy[] {
    return places.statements().map(([, found], index) => policy(`policy${index}`, readHead(found.text) ?? CedarPolicySet.#headOf(cedar, found.text), found.text));
  }

  /**
   * Every policy as the engine splits the set, when the files split a policy between them.
   * `policySetTextToParts` gives the texts in the order of their ids as strings (`policy10`
   * before `policy2`): the ids are sorted the same way to pair them.
   */
  static #fromEngine(cedar: CedarWasm, joined: string): Policy[] {
    const parts = cedar.policySetTextToParts(joined);
    if (parts.type !== "success") throw new CedarLoadError("policies", "the policies do not parse", null, 1);
    const ids = parts.policies.map((_, i) => `policy${i}`).sort();
    const found = parts.policies.map((text, i) => policy(ids[i] ?? "", readHead(text) ?? CedarPolicySet.#headOf(cedar, text), text));
    return found.sort((a, b) => indexOf(a.cedarId) - indexOf(b.cedarId));
  }

  /** A head the text reader leaves to the engine (an escape in a string): from Cedar's JSON form. */
  static #headOf(cedar: CedarWasm, text: string): Head {
    const answer = cedar.policyToJson(text);
    const json = answer.json;
    if (answer.type !== "success" || json === undefined) throw new CedarLoadError("policies", "the policy does not parse");
    const annotations = new Map(Object.entries(json.annotations ?? {}).map(([name, value]) => [name, value ?? ""]));
    return { annotations, action: entityOf(json.action), resource: entityOf(json.resource) };
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
      (a, b) => indexOf(a.policyId) - indexOf(b.policyId) || byCodePoint(a.error.message, b.error.message),
    );
    const worst = errors[0];
    if (worst === undefined || policies.length === 0) return;
    const shown = policies.find((policy) => policy.cedarId === worst.policyId)?.shown ?? worst.policyId;
    const [file, line] = places.of(indexOf(worst.policyId));
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

  /** The pre-parsed slice of the policies whose scope may match `request` (null: none may). */
  #slice(request: CedarRequest): string | null {
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

  /** Cedar's answer to `request`, from its slice, or from the whole set (`sliced: false`). */
  answer(request: CedarRequest, sliced = true): Answer {
    const id = sliced ? this.#slice(request) : preparsed(this.#cedar, this.#policies);
    if (id === null) return { type: "success", response: { decision: "deny", diagnostics: { reason: [], errors: [] } } };
    return this.#cedar.statefulIsAuthorized({ ...request, preparsedPolicySetId: id, entities: this.#entities });
  }

  /** The outcome of `event` at `hook`; throws `CedarRequestError` or `CedarEvaluationError` (the fail mode then decides). */
  decide(hook: PolicyHook, event: Event, attributes: Readonly<Record<string, unknown>> | null) {
    return this.outcome(this.answer(cedarRequest(hook, event, attributes, this.namespace)));
  }

  #shown(cedarIds: Iterable<string>): string[] {
    return [...new Set([...cedarIds].map((id) => this.#byId.get(id)?.shown ?? id))].sort(byCodePoint);
  }

  /** The outcome of Cedar's `answer` (I38). */
  outcome(answer: Answer) {
    const response = answer.response;
    if (answer.type !== "success" || response === undefined) throw new CedarRequestError("request", "Cedar could not read the request");
    const { reason, errors } = response.diagnostics;
    if (errors.length > 0 && this.onError === "fail") throw new CedarEvaluationError(this.#shown(errors.map((error) => error.policyId)));
    if (response.decision === "allow") return this.#allow(reason);
    if (reason.length > 0) {
      const ids = this.#shown(reason);
      return Block(cut(`forbidden by Cedar policy ${ids.join(", ")}`, REASON_LIMIT), { code: cut(`cedar:${ids.join(",")}`, CODE_LIMIT) });
    }
    if (this.noDecision === "continue") return Continue();
    return Block("no Cedar policy permits this request", { code: "cedar:no_permit" });
  }

  #allow(reasons: readonly string[]) {
    const asking = reasons
      .map((id) => this.#byId.get(id))
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
}

function policy(cedarId: string, head: Head, text: string): Policy {
  const shown = head.annotations.get("id") ?? cedarId;
  return { cedarId, shown, annotations: head.annotations, action: head.action, resource: head.resource, text };
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
    const [file, line] = places.of(indexOf(found.cedarId));
    const [at, atLine] = places.of(indexOf(earlier));
    throw new CedarLoadError("policies", `the policy id ${asciiJson(found.shown)} is already used by the policy at ${at}:${atLine}`, file, line);
  }
}

function key(uid: EntityUid): string {
  return `${uid.type}\0${uid.id}`;
}

function same(a: EntityUid, b: EntityUid): boolean {
  return a.type === b.type && a.id === b.id;
}

function indexOf(cedarId: string): number {
  return cedarId.startsWith("policy") ? Number(cedarId.slice("policy".length)) : 0;
}

/** Code point order (Python's sort of strings). */
function byCodePoint(a: string, b: string): number {
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

/** The extension types and the constructor that reads each from its text (`ipaddr` is made by `ip`). */
const EXTENSIONS: ReadonlyMap<string, string> = new Map([
  ["decimal", "decimal"],
  ["ipaddr", "ip"],
  ["datetime", "datetime"],
  ["duration", "duration"],
]);

/**
 * The schema's actions as entities, each with the action groups it is in (`memberOf`): what
 * Cedar adds to entities read with a schema, so `action in Action::"group"` holds.
 */
function actionEntities(namespaces: Readonly<Record<string, Namespace>>, given: readonly unknown[]): unknown[] {
  const seen = new Set(
    given.map((entity) => {
      const uid = (entity as { uid?: { type?: unknown; id?: unknown; __entity?: { type?: unknown; id?: unknown } } } | null)?.uid;
      const found = uid?.__entity ?? uid;
      return `${String(found?.type)}\0${String(found?.id)}`;
    }),
  );
  const out: unknown[] = [];
  for (const [space, namespace] of Object.entries(namespaces)) {
    const type = space === "" ? "Action" : `${space}::Action`;
    for (const [id, action] of Object.entries(namespace.actions ?? {})) {
      if (seen.has(`${type}\0${id}`)) continue;
      const parents = (action.memberOf ?? []).map((parent) => ({ type: parent.type ?? type, id: parent.id }));
      out.push({ uid: { type, id }, attrs: {}, parents });
    }
  }
  return out;
}

/**
 * `entities` with the values the schema types written out as Cedar's JSON escapes (an
 * extension's text as `{"__extn": ...}`, an entity's `{type, id}` as `{"__entity": ...}`).
 * Python's engine reads the entities with the schema once, at load; cedar-wasm reads them at
 * each call and would need the schema then, which also types the context by the action and
 * refuses an action the schema does not declare: so the reading the schema implies is done
 * here, once, and the calls get entities that need no schema.
 */
function typedEntities(cedar: CedarWasm, schema: unknown, entities: unknown): unknown {
  const text = typeof schema === "string" ? schema : cedar.schemaToText(schema);
  const source = typeof text === "string" ? text : text.type === "success" ? text.text : null;
  const resolved = source === null ? null : cedar.schemaToJsonWithResolvedTypes(source);
  if (resolved === null || resolved.type !== "success" || !Array.isArray(entities)) return entities;
  const namespaces = resolved.json;
  const split = (name: string): [string, string] => {
    const at = name.lastIndexOf("::");
    return at < 0 ? ["", name] : [name.slice(0, at), name.slice(at + 2)];
  };
  const common = (name: string, here: string): SchemaType | undefined => {
    const [space, local] = name.includes("::") ? split(name) : [here, name];
    return namespaces[space]?.commonTypes?.[local] ?? (name.includes("::") ? undefined : namespaces[""]?.commonTypes?.[name]);
  };
  const typed = (value: unknown, type: SchemaType | undefined, here: string, depth: number): unknown => {
    if (type === undefined || depth > 64 || value === null || typeof value !== "object" && typeof value !== "string") return value;
    const kind = type.type.startsWith("__cedar::") ? type.type.slice("__cedar::".length) : type.type;
    if (kind === "Extension" || EXTENSIONS.has(kind)) {
      const name = kind === "Extension" ? (type.name ?? "") : kind;
      const fn = EXTENSIONS.get(name.startsWith("__cedar::") ? name.slice("__cedar::".length) : name) ?? name;
      return typeof value === "string" ? { __extn: { fn, arg: value } } : value;
    }
    if (kind === "Entity" || kind === "EntityOrCommon") {
      if (typeof value !== "object" || Array.isArray(value) || "__entity" in value || "__extn" in value) return value;
      return { __entity: value };
    }
    if (kind === "Set") return Array.isArray(value) ? value.map((item: unknown) => typed(item, type.element, here, depth + 1)) : value;
    if (kind === "Record") {
      if (typeof value !== "object" || Array.isArray(value)) return value;
      const out: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(value)) {
        Object.defineProperty(out, key, { value: typed(item, type.attributes?.[key], here, depth + 1), enumerable: true, writable: true, configurable: true });
      }
      return out;
    }
    if (["String", "Long", "Boolean", "Bool"].includes(kind)) return value;
    return typed(value, common(kind, here), here, depth + 1);
  };
  const typedList = entities.map((entity: unknown) => {
    if (typeof entity !== "object" || entity === null) return entity;
    const record = entity as { uid?: { type?: unknown; __entity?: { type?: unknown } }; attrs?: unknown };
    const uidType = record.uid?.__entity?.type ?? record.uid?.type;
    if (typeof uidType !== "string") return entity;
    const [space, local] = split(uidType);
    const shape = namespaces[space]?.entityTypes?.[local]?.shape;
    return shape === undefined ? entity : { ...record, attrs: typed(record.attrs ?? {}, shape, space, 0) };
  });
  return [...typedList, ...actionEntities(namespaces, entities)];
}

const prepared = new Set<string>();

/** The id under which `policies` (with Cedar's ids) are in the engine's cache: pre-parsed on first need. */
function preparsed(cedar: CedarWasm, policies: readonly Policy[]): string {
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

/** The file `written` (relative to `folder` unless absolute), read as UTF-8 text. */
export function readPolicyFile(folder: string, written: string, key: string): PolicySource {
  const path = isAbsolute(written) ? written : resolve(folder, written);
  let data: Buffer;
  try {
    const fd = openSync(path, "r");
    try {
      const buffer = Buffer.alloc(MAX_BYTES + 1);
      let size = 0;
      for (;;) {
        const got = readSync(fd, buffer, size, buffer.length - size, null);
        if (got === 0 || (size += got) === buffer.length) break;
      }
      data = buffer.subarray(0, size);
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new CedarLoadError(key, code === "ENOENT" ? "the file does not exist" : "the file cannot be read", written, 1);
  }
  if (data.length > MAX_BYTES) throw new CedarLoadError(key, `the file is larger than ${MAX_BYTES.toLocaleString("en-US")} bytes`, written, 1);
  try {
    return { file: written, text: new TextDecoder("utf-8", { fatal: true }).decode(data) };
  } catch {
    throw new CedarLoadError(key, "the file is not UTF-8 text", written, lineAt(data.toString("latin1"), notUtf8(data)));
  }
}

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
