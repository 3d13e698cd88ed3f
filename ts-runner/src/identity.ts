/**
 * Content identity (I27): the SHA-256 of an event's RFC 8785 (JCS) form, and a bus's scheme
 * (the Python core's `_pycore/identity.py`, the Rust core's `identity.rs`).
 *
 * The canonical form is the `canonicalize` package's: JavaScript's own number and string
 * serialization is what RFC 8785 prescribes, and it sorts keys by UTF-16 code units. The
 * domain check is ours: RFC 8785 libraries disagree at its edges (`canonicalize` writes 2^53
 * as any other number; Python's `rfc8785` refuses that integer but writes the float 1e21), and
 * an identity must be the same in every implementation, so a value outside I-JSON has none
 * (null), never an error.
 */

import { createHash } from "node:crypto";
import canonicalize from "canonicalize";
import { valueError } from "./errors.js";
import { isEvent, type Event } from "./events.js";
import { describe, isPlainObject, type JsonValue } from "./json.js";
import { shown } from "./shown.js";

/** The one identity scheme: SHA-256 over the RFC 8785 bytes of the event's JSON form. */
export type IdentityScheme = "jcs-sha256";

/** A bus's identity scheme: undefined or "jcs-sha256"; anything else is `invalid_identity` (I27). */
export function identityScheme(value: unknown): IdentityScheme | undefined {
  if (value === undefined || value === null) return undefined;
  if (value === "jcs-sha256") return value;
  throw valueError("register", "invalid_identity", "identity scheme", shown(value));
}

/**
 * `sha256:` and the 64 lowercase hex digits of the SHA-256 of the RFC 8785 form of `value`:
 * an event (its JSON form, `toJSON()`) or a JSON value. Null when that JSON form is outside
 * I-JSON (a lone surrogate in a string or a key, a number beyond 2^53 - 1 in magnitude whose
 * value is an integer, or one that is not finite). Anything but an event or a JSON value is a
 * TypeError.
 */
export function contentIdentity(value: Event | JsonValue): string | null {
  try {
    const data: unknown = isEvent(value) ? value.toJSON() : value;
    if (!inDomain(data, new Set())) return null;
    const text = canonicalize(data) as string;
    return `sha256:${createHash("sha256").update(text, "utf8").digest("hex")}`;
  } catch (error) {
    // Nested deeper than the stack goes: no identity rather than a crash, as in the Python core.
    if (error instanceof RangeError) return null;
    throw error;
  }
}

/** Whether `value` is in I-JSON; a TypeError when it is no JSON value at all. */
function inDomain(value: unknown, seen: Set<object>): boolean {
  if (value === null || typeof value === "boolean") return true;
  if (typeof value === "string") return value.isWellFormed();
  if (typeof value === "number") {
    // 1e21 is an integer beyond 2^53 - 1 too: JSON does not tell it from 1000000000000000000000.
    return Number.isFinite(value) && !(Number.isInteger(value) && !Number.isSafeInteger(value));
  }
  if (typeof value !== "object" || !(Array.isArray(value) || isPlainObject(value))) {
    throw new TypeError(`content identity of ${describe(value)}: an event or a JSON value (I27)`);
  }
  if (seen.has(value)) throw new TypeError("content identity: a JSON value cannot contain itself (I27)");
  seen.add(value);
  // The first value outside ends the look, as in the Python core. An array is read by index:
  // a hole is undefined, no JSON value (`every` would skip it).
  let inside = true;
  if (Array.isArray(value)) {
    for (let i = 0; inside && i < value.length; i++) inside = inDomain((value as unknown[])[i], seen);
  } else {
    for (const [key, item] of Object.entries(value)) {
      inside = key.isWellFormed() && inDomain(item, seen);
      if (!inside) break;
    }
  }
  seen.delete(value);
  return inside;
}
