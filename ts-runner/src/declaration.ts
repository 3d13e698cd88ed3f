/**
 * Declarations: what `middleware()` declares and what `register()` may override (I10).
 *
 * Every value is checked at run time, whatever its static type, because JavaScript callers
 * (and the conformance runner) can pass anything. Checks run in the fixed order of I4 and the
 * first failing one is thrown: name, hooks, band, fail mode, timeout, then R2.
 */

import { catalogueIndex, isHookPoint, type HookPoint } from "./catalogue.js";
import { parseDurationNs, type Duration } from "./duration.js";
import { hooksWidened, valueError, type Phase } from "./errors.js";
import { narrowMatcher, parseMatcher, type Matcher, type MatchOptions } from "./matcher.js";
import { shown } from "./shown.js";

/** The four priority bands, outermost first (rule 1). */
export const BANDS = ["baseline", "platform", "app", "task"] as const;
export type Band = (typeof BANDS)[number];

/** Closed: a failure blocks. Open: a failure is recorded and the chain goes on (rule 4). */
export const FAIL_MODES = ["closed", "open"] as const;
export type FailMode = (typeof FAIL_MODES)[number];

/** Enforce: answers act. Audit: answers are traced as what they would do and count as a plain Continue (I25). */
export const MODES = ["enforce", "audit"] as const;
export type Mode = (typeof MODES)[number];

const NAME = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;

/** Only this module makes declarations: they are always validated. */
const SEALED: unique symbol = Symbol("Declaration");

/** A validated declaration (made by `declare()`, `middleware()` and `register()`). Immutable. */
export class Declaration {
  readonly name: string;
  /** The hook points, without repeats, in catalogue order. */
  readonly hooks: readonly HookPoint[];
  readonly band: Band;
  readonly failMode: FailMode;
  /** The timeout in seconds, or null for none. */
  readonly timeout: number | null;
  /** The timeout in whole nanoseconds (exact, ruling 15), or null for none. */
  readonly timeoutNs: bigint | null;
  /** Which events of its hook points it applies to (I22), or null for every event. */
  readonly match: Matcher | null;
  /** Whether its answers act or are only traced (I25). */
  readonly mode: Mode;

  /** Use `declare()` or `middleware()`: they validate. */
  constructor(
    sealed: typeof SEALED,
    name: string,
    hooks: readonly HookPoint[],
    band: Band,
    failMode: FailMode,
    timeoutNs: bigint | null,
    match: Matcher | null = null,
    mode: Mode = "enforce",
  ) {
    if (sealed !== SEALED) throw new TypeError("declarations are made by declare() or middleware()");
    this.name = name;
    this.hooks = Object.freeze([...hooks]);
    this.band = band;
    this.failMode = failMode;
    this.timeoutNs = timeoutNs;
    this.timeout = timeoutNs === null ? null : Number(timeoutNs) / 1e9;
    this.match = match;
    this.mode = mode;
    Object.freeze(this);
  }

  /** The declaration in the corpus's spelling (bigint has no JSON form, so no `timeoutNs`). */
  toJSON(): { name: string; hooks: HookPoint[]; band: Band; fail_mode: FailMode; timeout: number | null } {
    const { name, band, failMode, timeout } = this;
    return { name, hooks: [...this.hooks], band, fail_mode: failMode, timeout };
  }
}

/** What a declaration says. `failMode` is required (ruling 14); `band` defaults to "app". */
export interface DeclarationOptions<H extends HookPoint = HookPoint> {
  readonly name: string;
  readonly hooks: readonly H[];
  readonly failMode: FailMode;
  readonly band?: Band | undefined;
  readonly timeout?: Duration | null | undefined;
  /** Which events it applies to (I22): `{ tool: "refund_*" }`, `{ model: ["gpt-*"] }`. */
  readonly match?: MatchOptions | null | undefined;
  /** `"enforce"` (the default) or `"audit"` (I25). */
  readonly mode?: Mode | null | undefined;
}

/** What `register()` may change (I10); an absent (or null) key keeps the declared value. */
export interface Overrides<H extends HookPoint = HookPoint> {
  readonly name?: string | undefined;
  /** May narrow the declared hook points, never widen them (ruling 18). */
  readonly hooks?: readonly H[] | undefined;
  readonly band?: Band | undefined;
  readonly failMode?: FailMode | undefined;
  readonly timeout?: Duration | undefined;
  /** May narrow the declared matcher, never widen it (I22). */
  readonly match?: MatchOptions | undefined;
  /** Either mode (I25). */
  readonly mode?: Mode | undefined;
}

function checkName(name: unknown, phase: Phase): string {
  if (typeof name !== "string" || !NAME.test(name)) throw valueError(phase, "invalid_name", "name", shown(name));
  return name;
}

function checkHooks(hooks: unknown, phase: Phase): HookPoint[] {
  const list: unknown = hooks instanceof Set ? [...hooks] : hooks;
  if (!Array.isArray(list)) throw valueError(phase, "invalid_hooks", "hooks", shown(hooks));
  if (list.length === 0) throw valueError(phase, "invalid_hooks", "hooks", "[]");
  if (!list.every((hook) => typeof hook === "string")) throw valueError(phase, "invalid_hooks", "hooks", shown(hooks));
  for (const hook of list) {
    if (!isHookPoint(hook)) throw valueError(phase, "unknown_hook", "hook", shown(hook));
  }
  // Repeats collapse (I3); catalogue order makes equal declarations compare equal.
  return [...new Set(list as HookPoint[])].sort((a, b) => catalogueIndex(a) - catalogueIndex(b));
}

function checkBand(band: unknown, phase: Phase): Band {
  if (!(BANDS as readonly unknown[]).includes(band)) throw valueError(phase, "invalid_band", "band", shown(band));
  return band as Band;
}

function checkFailMode(failMode: unknown, name: string, phase: Phase): FailMode {
  if (failMode === undefined || failMode === null) {
    throw valueError(phase, "missing_fail_mode", "fail_mode", shown(name));
  }
  if (!(FAIL_MODES as readonly unknown[]).includes(failMode)) {
    throw valueError(phase, "invalid_fail_mode", "fail_mode", shown(failMode));
  }
  return failMode as FailMode;
}

function checkMode(mode: unknown, phase: Phase): Mode {
  if (!(MODES as readonly unknown[]).includes(mode)) throw valueError(phase, "invalid_mode", "mode", shown(mode));
  return mode as Mode;
}

/** I25: only an org profile item that itself sets `mode: audit` audits a baseline middleware. */
function checkBaselineAudit(decl: Declaration, phase: Phase, orgSaysAudit: boolean): Declaration {
  if (decl.band === "baseline" && decl.mode === "audit" && !orgSaysAudit) {
    throw valueError(phase, "baseline_audit_not_org", "middleware", shown(decl.name));
  }
  return decl;
}

function checkR2(decl: Declaration, phase: Phase): Declaration {
  if (decl.band === "baseline" && decl.failMode === "open") {
    throw valueError(phase, "baseline_fail_open", "middleware", shown(decl.name));
  }
  return decl;
}

const absent = (value: unknown): value is null | undefined => value === undefined || value === null;

/** Validates a declaration in the order of I4; throws a `DeclarationError` on the first fault. */
export function declare<H extends HookPoint>(options: DeclarationOptions<H>): Declaration {
  const raw = options as unknown as Readonly<Record<string, unknown>>; // callers may bypass the types
  const phase = "declare";
  const name = checkName(raw["name"], phase);
  const hooks = checkHooks(raw["hooks"], phase);
  const band = checkBand(absent(raw["band"]) ? "app" : raw["band"], phase);
  const failMode = checkFailMode(raw["failMode"], name, phase);
  const timeout = absent(raw["timeout"]) ? null : parseDurationNs(raw["timeout"], phase);
  const match = parseMatcher(raw["match"], hooks, phase);
  const mode = absent(raw["mode"]) ? "enforce" : checkMode(raw["mode"], phase);
  const decl = checkR2(new Declaration(SEALED, name, hooks, band, failMode, timeout, match, mode), phase);
  return checkBaselineAudit(decl, phase, false);
}

/** The declaration as registered (I10), checked in the order of I4; then R2 on the result. */
export function applyOverrides(decl: Declaration, overrides: Overrides = {}): Declaration {
  return overrideFrom(decl, decl.band, overrides);
}

/** Judges an explicit band for the middleware `name`; throws when it is not allowed. */
export type BandRule = (name: string, band: Band) => void;

/**
 * The overrides applied in the order of I4, starting from `startBand` (the declared band, or
 * a layer's): hooks narrow against the declaration, `allowBand` judges an explicit band (a
 * layer's rule, I13), and R2 is checked on the result, then I25's baseline rule (`orgLayer`:
 * the overrides are an org profile item's, which may audit a baseline middleware).
 * @internal
 */
export function overrideFrom(
  decl: Declaration,
  startBand: Band,
  overrides: Overrides,
  allowBand?: BandRule,
  orgLayer = false,
): Declaration {
  const raw = overrides as unknown as Readonly<Record<string, unknown>>; // callers may bypass the types
  const phase = "register";
  const name = absent(raw["name"]) ? decl.name : checkName(raw["name"], phase);
  const hooks = absent(raw["hooks"]) ? decl.hooks : narrow(decl, raw["hooks"]);
  let band = startBand;
  if (!absent(raw["band"])) {
    band = checkBand(raw["band"], phase);
    allowBand?.(name, band);
  }
  const failMode = absent(raw["failMode"]) ? decl.failMode : checkFailMode(raw["failMode"], name, phase);
  const timeout = absent(raw["timeout"]) ? decl.timeoutNs : parseDurationNs(raw["timeout"], phase);
  const match = narrowMatcher(decl.match, raw["match"], hooks, name, phase);
  const given = !absent(raw["mode"]);
  const mode = given ? checkMode(raw["mode"], phase) : decl.mode;
  const result = checkR2(new Declaration(SEALED, name, hooks, band, failMode, timeout, match, mode), phase);
  return checkBaselineAudit(result, phase, orgLayer && given && mode === "audit");
}

function narrow(decl: Declaration, hooks: unknown): HookPoint[] {
  const narrowed = checkHooks(hooks, "register");
  const wider = narrowed.find((hook) => !decl.hooks.includes(hook));
  if (wider !== undefined) throw hooksWidened(wider, decl.name, decl.hooks);
  return narrowed;
}

/** A class's default middleware name (I1): `RefundCap` → `refund_cap`, `HTTPGuard` → `http_guard`. */
export function snakeCase(className: string): string {
  return className
    .replace(/(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])/g, "_")
    .toLowerCase();
}
