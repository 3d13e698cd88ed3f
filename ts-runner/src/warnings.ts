/**
 * Warnings on answers (I24), as the Rust core's `warning.rs` and `_pycore/warnings.py` bound
 * them: an outcome holds its `warnings` as given; the walk judges them when it takes the answer.
 * An array whose every item is a string with no lone surrogate, else the answer is an invalid
 * return. Empty texts are dropped, the first `MAX_WARNINGS` kept, each cut to
 * `MAX_WARNING_CHARS` characters: Unicode code points, never UTF-16 units, so a character
 * outside the Basic Multilingual Plane counts one and a cut never splits a surrogate pair.
 */

import { types } from "node:util";

export const MAX_WARNINGS = 8;
export const MAX_WARNING_CHARS = 256;
export const CUT_MARK = "\u2026";

/** One warning on a `HookResult`: the middleware that gave it and its bounded text. */
export interface HookWarning {
  readonly middleware: string;
  readonly text: string;
}

/** What `judgeWarnings` answers for warnings that make the answer an invalid return. */
export const INVALID: unique symbol = Symbol("invalid warnings");

/** The number of code points in `text`, counting only up to `most + 1`. */
function codePoints(text: string, most: number): number {
  if (text.length <= most) return text.length; // no more code points than UTF-16 units
  let count = 0;
  for (const _ of text) if (++count > most) break;
  return count;
}

function bounded(text: string): string {
  if (codePoints(text, MAX_WARNING_CHARS) <= MAX_WARNING_CHARS) return text;
  let kept = "";
  let count = 0;
  for (const char of text) {
    if (count === MAX_WARNING_CHARS - 1) break;
    kept += char;
    count += 1;
  }
  return kept + CUT_MARK;
}

/**
 * The texts an array holds, read once by index (never through an iterator a subclass
 * overrides), each checked to be a well-formed string; `INVALID` for anything else, and when
 * reading throws (an index with a getter) or the array is a Proxy, whose traps may throw or
 * claim any length (I29). A long text is checked once however often it is given, so the work
 * is bounded by what the middleware built (10,000 references to one 1 MB text: one check).
 */
function textsOf(value: unknown[]): string[] | typeof INVALID {
  if (types.isProxy(value)) return INVALID;
  const texts: string[] = [];
  let checked: Set<string> | undefined;
  try {
    const length = value.length;
    for (let index = 0; index < length; index += 1) {
      const item = value[index];
      if (typeof item !== "string") return INVALID;
      if (item.length > MAX_WARNING_CHARS) {
        checked ??= new Set();
        if (!checked.has(item)) {
          if (!item.isWellFormed()) return INVALID;
          checked.add(item);
        }
      } else if (!item.isWellFormed()) return INVALID;
      texts.push(item);
    }
  } catch {
    return INVALID; // what the getter threw is never looked at (R9)
  }
  return texts;
}

/** The warnings kept of `value` (undefined when none is), or `INVALID` (I24, I29). */
export function judgeWarnings(value: unknown): readonly string[] | undefined | typeof INVALID {
  if (!Array.isArray(value)) return INVALID;
  const items = textsOf(value as unknown[]); // what the array holds now, read once
  if (items === INVALID) return INVALID;
  const kept: string[] = [];
  for (const item of items) {
    if (item !== "" && kept.length < MAX_WARNINGS) kept.push(bounded(item));
  }
  return kept.length === 0 ? undefined : Object.freeze(kept);
}

/** A trace line's `warnings`: 1 to 8 texts of 1 to 256 characters; else the problem, as text. */
export function warningsProblem(value: unknown): string | undefined {
  if (!Array.isArray(value) || value.length < 1 || value.length > MAX_WARNINGS) {
    return `invalid warnings: 1 to ${String(MAX_WARNINGS)} texts (I24)`;
  }
  for (const text of value as unknown[]) {
    if (typeof text !== "string" || text === "" || codePoints(text, MAX_WARNING_CHARS) > MAX_WARNING_CHARS) {
      return `invalid warning: a text of 1 to ${String(MAX_WARNING_CHARS)} characters (I24)`;
    }
    if (!text.isWellFormed()) return "invalid warning: it holds a lone surrogate (I24)";
  }
  return undefined;
}
