/**
 * The errors harnessweaver throws. Every one carries a stable `kind`, the `rule` it enforces
 * (conformance/INTERPRETING.md §5) and `link`, the section of docs/spec/hook-bus.md that states
 * it, and a message that names the bad value and ends with the rule, worded exactly as the
 * Rust and Python cores word it.
 */

import { HOOK_POINTS } from "./catalogue.js";

/**
 * The stable error kinds of INTERPRETING.md §5, plus `invalid_trace` for reading traces and
 * `invalid_spec` for a harness spec that cannot be loaded (`SpecError`, docs/harness-spec.md).
 */
export type ErrorKind =
  | "invalid_name"
  | "invalid_hooks"
  | "unknown_hook"
  | "invalid_band"
  | "missing_fail_mode"
  | "invalid_fail_mode"
  | "invalid_duration"
  | "baseline_fail_open"
  | "hooks_widened"
  | "duplicate_name"
  | "unknown_middleware"
  | "event_type_mismatch"
  | "invalid_trace"
  | "unknown_layer"
  | "band_outward"
  | "baseline_outside_profile"
  | "invalid_contracts"
  | "invalid_match"
  | "unknown_match_key"
  | "match_key_not_carried"
  | "match_widened"
  | "invalid_mode"
  | "baseline_audit_not_org"
  | "invalid_deadline"
  | "invalid_identity"
  | "invalid_spec";

/** For each kind: the rule id compared by the corpus, and the rule as messages write it. */
const RULES = {
  invalid_name: ["I1", "I1"],
  invalid_hooks: ["I3", "I3"],
  unknown_hook: ["ruling-2", "ruling 2"],
  invalid_band: ["rule-1", "rule 1"],
  missing_fail_mode: ["ruling-14", "ruling 14"],
  invalid_fail_mode: ["ruling-14", "ruling 14"],
  invalid_duration: ["ruling-15", "ruling 15"],
  baseline_fail_open: ["R2", "R2"],
  hooks_widened: ["ruling-18", "ruling 18"],
  duplicate_name: ["I2", "I2"],
  unknown_middleware: ["I2", "I2"],
  event_type_mismatch: ["I7", "I7"],
  invalid_trace: ["I8", "I8"],
  unknown_layer: ["I13", "I13"],
  band_outward: ["ruling-16", "ruling 16"],
  baseline_outside_profile: ["S8", "S8"],
  invalid_contracts: ["I14", "I14"],
  invalid_match: ["I22", "I22"],
  unknown_match_key: ["I22", "I22"],
  match_key_not_carried: ["I22", "I22"],
  match_widened: ["I22", "I22"],
  invalid_mode: ["I25", "I25"],
  baseline_audit_not_org: ["I25", "I25"],
  invalid_deadline: ["I26", "I26"],
  invalid_identity: ["I27", "I27"],
  invalid_spec: ["spec", "spec"],
} as const satisfies Record<ErrorKind, readonly [string, string]>;

export type Rule = (typeof RULES)[ErrorKind][0];

/** The bus's normative specification, as a path in the repository: one anchor per rule id. */
export const SPEC = "docs/spec/hook-bus.md";

/** The library's own rules (not the bus's), and the section of the user docs that states each. */
const GUIDES: Readonly<Partial<Record<Rule, string>>> = { spec: "docs/harness-spec.md#errors" };

/**
 * Where `rule` is written: its section of the specification, `docs/spec/hook-bus.md#ruling-15`,
 * or, for one of the library's own rules, of the user docs (as Python's `GUIDES`).
 */
export function ruleLink(rule: Rule): string {
  return GUIDES[rule] ?? `${SPEC}#${rule.toLowerCase()}`;
}

/**
 * The documentation's entry point, docs/index.md online: package.json's `homepage` and
 * pyproject's `[project.urls] Documentation` say the same, and Python's errors make the same
 * URLs from it (python/tests/test_error_links.py checks all three).
 */
export const DOCUMENTATION = "https://github.com/harnessweaver/harnessweaver/blob/main/docs/index.md";

/** The repository's files online: a link's path, appended, is its URL. */
const ROOT_URL = DOCUMENTATION.slice(0, -"docs/index.md".length);

/** `ruleLink(rule)` online: it resolves for an npm user, with no clone (as Python's `rule_url`). */
export function ruleUrl(rule: Rule): string {
  return ROOT_URL + ruleLink(rule);
}

/**
 * The base class: `kind` and `rule` are stable identifiers, `link` the section of the
 * specification that states the rule (a path in the repository), `url` the same online;
 * `message` is for people (and never holds the link, so it reads as the Rust and Python cores
 * word it).
 */
export class HarnessweaverError extends Error {
  readonly kind: ErrorKind;
  readonly rule: Rule;
  readonly link: string;
  readonly url: string;

  constructor(kind: ErrorKind, message: string) {
    super(message);
    this.kind = kind;
    // Every error is made here, its rule taken from its kind: the link never parses the message.
    this.rule = RULES[kind][0];
    this.link = ruleLink(this.rule);
    this.url = ROOT_URL + this.link;
    this.name = new.target.name;
  }
}

/** A middleware declaration breaks a rule (name, hooks, band, fail mode, timeout, R2). */
export class DeclarationError extends HarnessweaverError {}

/** Registering or unregistering breaks a rule (overrides, layers, R2, duplicate or unknown names). */
export class RegistrationError extends HarnessweaverError {}

/** `emit` or `chain` was called with an unknown hook point or an event of the wrong type. */
export class EmitError extends HarnessweaverError {}

/** A JSON Lines trace could not be read back. */
export class TraceFormatError extends HarnessweaverError {}

/** Where an error happens decides its class. */
export type Phase = "declare" | "register" | "emit" | "trace";

const CLASSES = {
  declare: DeclarationError,
  register: RegistrationError,
  emit: EmitError,
  trace: TraceFormatError,
} as const satisfies Record<Phase, new (kind: ErrorKind, message: string) => HarnessweaverError>;

const EXPLAIN: Record<Exclude<ErrorKind, "invalid_trace" | "invalid_spec">, string> = {
  invalid_name:
    "a middleware name is one or more identifiers joined by dots, such as refund_cap or acme.refund_cap",
  invalid_hooks: "hooks is a non-empty list of hook point names",
  unknown_hook: `the hook points are ${HOOK_POINTS.join(", ")}`,
  invalid_band: "a band is one of baseline, platform, app or task",
  missing_fail_mode:
    "a fail mode is declared, never implied; declare fail_mode='closed' or fail_mode='open'",
  invalid_fail_mode: "fail_mode is 'closed' or 'open'",
  invalid_duration:
    "a timeout is a positive number of seconds or a string with a unit such as 250ms, 2s, 1.5s or 1m",
  baseline_fail_open:
    "baseline middleware always fails closed; declare fail_mode='closed' or use another band",
  hooks_widened: "a registration may narrow the declared hook points, never widen them",
  duplicate_name: "a bus holds one middleware of each name",
  unknown_middleware: "only a registered middleware can be unregistered",
  event_type_mismatch: "the event is not of the hook point's event type",
  unknown_layer:
    "a layer is one of org_profile, plugin_profile, profile_file, builtin_profile, framework, app, env or task",
  band_outward: "a spec item may restate its layer's band or move it inward, never outward",
  baseline_outside_profile:
    "only profiles (org profiles, plugin profiles, profile files) put middleware in baseline",
  invalid_contracts: "a contract mode is 'warn' or 'strict', or undefined to check no contracts",
  invalid_match: "a matcher maps tool or model to a pattern or a list of 1 to 32 patterns of 1 to 128 characters",
  unknown_match_key: "the match keys are tool and model",
  match_key_not_carried: "tool is carried by tool.before and tool.after, model by model.before",
  match_widened: "a registration may narrow a matcher, never widen it",
  invalid_mode: "mode is 'enforce' or 'audit'",
  baseline_audit_not_org: "only an org profile item that itself sets mode: audit may audit a baseline middleware",
  invalid_deadline:
    "a chain deadline is a positive number of seconds or a string with a unit such as 250ms, 2s, 1.5s or 1m; an emit's own deadline may also be 0",
  // "None", not "undefined": the corpus compares this message byte for byte with the cores'.
  invalid_identity: "the identity scheme is 'jcs-sha256', or None for no identities",
};

type ValueKind = Exclude<
  ErrorKind,
  "invalid_trace" | "invalid_spec" | "hooks_widened" | "event_type_mismatch" | "band_outward" | "baseline_outside_profile"
>;

/**
 * The error for a bad value of `field`; `what` is the value as messages show it (see
 * `shown`). For the kinds about a middleware rather than one value (missing fail mode, R2,
 * duplicate and unknown names) `what` names the middleware.
 */
export function valueError(phase: Phase, kind: ValueKind, field: string, what: string, detail?: string): HarnessweaverError {
  const tail = `${detail ?? EXPLAIN[kind]} (${RULES[kind][1]})`;
  let message: string;
  switch (kind) {
    case "unknown_hook":
      message = `unknown hook point ${what}: ${tail}`;
      break;
    case "missing_fail_mode":
      message = `middleware ${what} declares no ${field}: ${tail}`;
      break;
    case "baseline_fail_open":
      message = `middleware ${what} is in the baseline band with fail_mode 'open': ${tail}`;
      break;
    case "baseline_audit_not_org":
      message = `middleware ${what} is in the baseline band with mode 'audit': ${tail}`;
      break;
    case "duplicate_name":
      message = `a middleware named ${what} is already registered: ${tail}`;
      break;
    case "unknown_middleware":
      message = `no middleware named ${what} is registered: ${tail}`;
      break;
    default:
      message = `invalid ${field} ${what}: ${tail}`;
  }
  return new CLASSES[phase](kind, message);
}

/** Ruling 18: a registration named a hook point the declaration does not have. */
export function hooksWidened(hook: string, middleware: string, declared: readonly string[]): RegistrationError {
  return new RegistrationError(
    "hooks_widened",
    `registration of middleware '${middleware}' widens its hooks with '${hook}': it declares ` +
      `${declared.join(", ")}; ${EXPLAIN.hooks_widened} (ruling 18)`,
  );
}

/** Ruling 16: a spec item of `layer` asked for a band outside its layer's. */
export function bandOutward(middleware: string, layer: string, layerBand: string, band: string): RegistrationError {
  return new RegistrationError(
    "band_outward",
    `middleware '${middleware}' declared in the ${layer} layer (band ${layerBand}) cannot move out to ` +
      `band '${band}': ${EXPLAIN.band_outward} (ruling 16)`,
  );
}

/** S8 (ruling 17): a spec item outside a profile asked for the baseline band. */
export function baselineOutsideProfile(middleware: string, layer: string): RegistrationError {
  return new RegistrationError(
    "baseline_outside_profile",
    `middleware '${middleware}' declared in the ${layer} layer cannot be placed in band 'baseline': ` +
      `${EXPLAIN.baseline_outside_profile} (S8)`,
  );
}

/** I7: the event given to `emit` is not of the hook point's event type. */
export function eventTypeMismatch(hook: string, wanted: string, got: string): EmitError {
  return new EmitError("event_type_mismatch", `hook point '${hook}' takes a ${wanted}, got ${got} (I7)`);
}

/** I8: a trace line that cannot be read back. */
export function invalidTrace(line: number, problem: string): TraceFormatError {
  return new TraceFormatError("invalid_trace", `invalid trace line ${line}: ${problem} (I8)`);
}
