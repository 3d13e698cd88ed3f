/**
 * `harnessweaver.redact_pii`: personal data is replaced before the model or a tool sees it
 * (python/harnessweaver/builtins/pii.py; docs/builtins.md).
 *
 * The guard rewrites events with `Continue(modified)`: the task's input (`task.start`), the
 * messages of a model request and the tool-call arguments they carry (`model.before`), a
 * call's arguments (`tool.before`) and a result's output (`tool.after`); a plain `Continue()`
 * when nothing was found. What it finds, each replaced by `[redacted:<kind>]`: your
 * `patterns` first, then emails, card numbers (13 to 19 digits in groups joined by one space
 * or hyphen, Luhn-valid, longest from each group start), then phone numbers. The patterns are
 * Python's, run through `pyregex.ts`, so the two languages redact exactly the same spans.
 */

import { ModelRequestEvent, TaskStartEvent, ToolCallEvent, type ToolResultEvent } from "../events.js";
import { Continue } from "../outcomes.js";
import { configurable } from "../plugin.js";
import { compilePython } from "./pyregex.js";
import { compiled, patternProblem } from "./patterns.js";
import { pythonRepr } from "./repr.js";
import { rewriteRequest, rewriteTaskInput, rewriteToolCall, rewriteToolResult } from "./rewrite.js";
import { SettingsError, settingsSchema } from "./settings.js";

/** The built-in detectors: all of them run by default (emails, then cards, then phones). */
export const DETECTORS = Object.freeze(["email", "phone", "credit_card"] as const);
export type Detector = (typeof DETECTORS)[number];

// Python's source text, verbatim (see pii.py for why each look-around is there).
const EMAIL_SOURCE = String.raw`(?<![A-Za-z0-9._%+\]-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}`;
const NOT_AFTER = String.raw`(?<![\w+.)\]-])`;
const NOT_BEFORE = String.raw`(?![\w+(\[]|[.-][0-9])`;
const PHONE_SOURCE =
  String.raw`${NOT_AFTER}\+[0-9](?:[ .-]?(?:[0-9]|\([0-9]{1,4}\)))+${NOT_BEFORE}` +
  String.raw`|${NOT_AFTER}(?:\([0-9]{3}\)[ .-]?|[0-9]{3}[ .-])[0-9]{3}[ .-][0-9]{4}${NOT_BEFORE}`;

export const EMAIL = compilePython(EMAIL_SOURCE);
export const PHONE = compilePython(PHONE_SOURCE);
const DIGIT_RUN = /[0-9]+/g;
/** Groups of digits joined by single spaces or hyphens: where card numbers can be. */
const CHAIN = /[0-9]+(?:[ -][0-9]+)*/g;
/** Each digit as the Luhn check counts it when it is doubled. */
const DOUBLED = Object.freeze([0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map((d) => (d > 4 ? d * 2 - 9 : d * 2)));
const NAME = /^[a-z][a-z0-9_]*$/;

/** Whether a string of ASCII digits passes the Luhn check. */
export function luhnValid(digits: string): boolean {
  let total = 0;
  for (let i = 0; i < digits.length; i++) {
    const value = digits.charCodeAt(digits.length - 1 - i) - 48;
    total += i % 2 ? (DOUBLED[value] as number) : value;
  }
  return total % 10 === 0;
}

/**
 * The last group of the longest card number starting at group `first`, or null. The Luhn sum
 * is kept for both parities as digits are added, so each group start costs one pass.
 */
function longestCard(text: string, groups: readonly (readonly [number, number])[], first: number): number | null {
  let count = 0;
  const sums = [0, 0];
  let card: number | null = null;
  for (let last = first; last < groups.length; last++) {
    const [start, end] = groups[last] as readonly [number, number];
    if (count + end - start > 19) break;
    for (let i = start; i < end; i++) {
      const digit = text.charCodeAt(i) - 48;
      sums[count % 2] = (sums[count % 2] as number) + (DOUBLED[digit] as number);
      sums[1 - (count % 2)] = (sums[1 - (count % 2)] as number) + digit;
      count += 1;
    }
    // the last digit is never doubled: the doubled ones have the other parity
    if (count >= 13 && (sums[count % 2] as number) % 10 === 0) card = last;
  }
  return card;
}

/** `text` with every card number replaced (see the module's comment). */
export function redactCards(text: string, replacement: string): string {
  const out: string[] = [];
  let done = 0;
  for (const chain of text.matchAll(CHAIN)) {
    const found = chain[0];
    if (found.length - found.split(" ").length - found.split("-").length + 2 < 13) continue;
    const at = chain.index;
    const groups = [...found.matchAll(DIGIT_RUN)].map((m) => [at + m.index, at + m.index + m[0].length] as const);
    let first = 0;
    while (first < groups.length) {
      const card = longestCard(text, groups, first);
      if (card === null) {
        first += 1;
        continue;
      }
      out.push(text.slice(done, (groups[first] as readonly [number, number])[0]), replacement);
      done = (groups[card] as readonly [number, number])[1];
      first = card + 1;
    }
  }
  if (out.length === 0) return text;
  out.push(text.slice(done));
  return out.join("");
}

function phone(found: string): string {
  if (found.startsWith("+")) {
    const digits = [...found].filter((c) => c >= "0" && c <= "9").length;
    if (digits < 8 || digits > 15) return found; // too short or too long for an international number (E.164)
  }
  return "[redacted:phone]";
}

/** The settings, with Python's defaults and its checks of `patterns`. */
export function piiSettings(settings: Readonly<Record<string, unknown>>): {
  readonly detect: readonly Detector[];
  readonly patterns: Readonly<Record<string, string>>;
} {
  const detect = (settings["detect"] ?? DETECTORS) as readonly Detector[];
  const patterns = (settings["patterns"] ?? {}) as Readonly<Record<string, string>>;
  for (const [name, pattern] of Object.entries(patterns)) {
    if (!NAME.test(name)) {
      throw new SettingsError(
        "patterns",
        `pattern name ${pythonRepr(name)} must be lower-case letters, digits and _ (it names the replacement, [redacted:<name>])`,
      );
    }
    const problem = patternProblem(pattern);
    if (problem !== null) throw new SettingsError("patterns", problem);
  }
  if (detect.length === 0 && Object.keys(patterns).length === 0) {
    throw new SettingsError(null, "detect is empty and there are no patterns: nothing would be found");
  }
  return { detect, patterns };
}

/** The redaction of the settings `given`: `text` with every piece of personal data replaced. */
export function piiRedactor(given: Readonly<Record<string, unknown>>): (text: string) => string {
  const { detect, patterns } = piiSettings(given);
  const steps: (readonly [RegExp, string])[] = Object.entries(patterns).map(([name, p]) => [compiled(p), `[redacted:${name}]`]);
  if (detect.includes("email")) steps.push([EMAIL, "[redacted:email]"]);
  const cards = detect.includes("credit_card");
  const phones = detect.includes("phone");
  return (text) => {
    for (const [pattern, replacement] of steps) text = text.replace(pattern, () => replacement);
    if (cards) text = redactCards(text, "[redacted:credit_card]");
    if (phones) text = text.replace(PHONE, phone);
    return text;
  };
}

export const redactPii = configurable(
  {
    name: "redact_pii",
    hooks: ["task.start", "model.before", "tool.before", "tool.after"],
    failMode: "closed",
    settings: settingsSchema("redact_pii"),
  },
  (given) => {
    const redact = piiRedactor(given);
    return async (event) => {
      let modified;
      if (event instanceof TaskStartEvent) modified = rewriteTaskInput(event, redact);
      else if (event instanceof ModelRequestEvent) modified = rewriteRequest(event, redact);
      else if (event instanceof ToolCallEvent) modified = rewriteToolCall(event, redact);
      else modified = rewriteToolResult(event as ToolResultEvent, redact);
      return modified === null ? null : Continue(modified);
    };
  },
);
