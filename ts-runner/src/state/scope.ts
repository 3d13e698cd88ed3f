/**
 * Scopes and state keys (python/harnessweaver/state/scope.py): the key of a stateful
 * middleware's counter or record is
 * `"hw1/" + [layer, item, scope, subject, name].map(quote).join("/")`, `quote` being Python's
 * `urllib.parse.quote(p, safe="")`, so Python and TypeScript workers name one key alike.
 */

import type { Envelope } from "../envelope.js";

export const SCOPES = ["run", "session", "user", "task", "app", "org"] as const;
export type Scope = (typeof SCOPES)[number];

export function isScope(value: unknown): value is Scope {
  return typeof value === "string" && (SCOPES as readonly string[]).includes(value);
}

/** The scope's subject could not be found in the envelope (Python's `LookupError`). */
export class LookupError extends Error {
  override readonly name = "LookupError";
}

const HEX = "0123456789ABCDEF";
// Python's "always safe" characters: letters, digits and _.-~ (RFC 3986's unreserved).
const SAFE = /^[A-Za-z0-9_.~-]$/;

/**
 * Python's `urllib.parse.quote(text, safe="")`: every UTF-8 byte but those of ASCII letters,
 * digits and `_.-~` as `%XX` (upper-case hex). A lone surrogate cannot be encoded, as in
 * Python (a `TypeError` here, Python's `UnicodeEncodeError`).
 */
export function quote(text: string): string {
  if (!text.isWellFormed()) throw new TypeError("a state key part must be well-formed Unicode text (no lone surrogate)");
  let out = "";
  for (const char of text) {
    if (SAFE.test(char)) {
      out += char;
      continue;
    }
    for (const byte of Buffer.from(char, "utf8")) out += `%${HEX[byte >> 4]}${HEX[byte & 15]}`;
  }
  return out;
}

/** The full key of one counter or record: `hw1/<layer>/<item>/<scope>/<subject>/<name>`, each part quoted. */
export function stateKey(layer: string, item: string, scope: string, subject: string, name: string): string {
  return `hw1/${[layer, item, scope, subject, name].map(quote).join("/")}`;
}

/**
 * The subject of `scope` for one emit: run → the run id; session, user, app → the envelope's
 * attribute of that name (a `LookupError` naming it and the scope when it is missing or not
 * text); task → the harness's task (`-` without one); org → `-`.
 */
export function subjectOf(scope: Scope, envelope: Envelope, task: string | null): string {
  if (!isScope(scope)) throw new RangeError(`unknown scope '${String(scope)}': the scopes are ${SCOPES.join(", ")}`);
  switch (scope) {
    case "run":
      return envelope.runId;
    case "task":
      return task ? task : "-";
    case "org":
      return "-";
    default: {
      const value = envelope.attributes[scope];
      if (typeof value !== "string") {
        const found = value === null || value === undefined ? "missing" : `not text (${typeof value})`;
        throw new LookupError(`scope ${scope} needs the envelope attribute '${scope}' as text; it is ${found}`);
      }
      return value;
    }
  }
}
