/**
 * Patterns given in settings (`redact_pii`'s `patterns`, `redact_secrets`'s): Python's dialect,
 * checked as python's `_rewrite.check_pattern` checks them, and compiled by `pyregex.ts`.
 */

import { pythonRepr } from "./repr.js";
import { compilePython, translate } from "./pyregex.js";

/**
 * Why `pattern` is unfit for redaction, or null: it must compile, and must not match the
 * empty string (that would put a replacement between every two characters of every text).
 */
export function patternProblem(pattern: string): string | null {
  let whole: RegExp;
  try {
    const { source, flags } = translate(pattern);
    whole = new RegExp(`^(?:${source})$`, flags);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return `invalid regular expression ${pythonRepr(pattern)}: ${why}`;
  }
  return whole.test("") ? `the regular expression ${pythonRepr(pattern)} matches the empty string` : null;
}

/** A global RegExp of a checked pattern. */
export function compiled(pattern: string): RegExp {
  return compilePython(pattern);
}
