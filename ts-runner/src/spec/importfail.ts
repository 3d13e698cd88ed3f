/**
 * What a plugin whose import fails is reported as (Python: `spec/importfail.py`): the kind of
 * what it threw, never its message (R9). A plugin is code the spec names, and its import may
 * throw anything: an `Error` (reported by its `name`, as a failure record reads it, I5), a
 * string, an object whose `toString` throws, a Proxy whose traps throw (each `NonErrorThrown`).
 * Node's `code` of an `ERR_…` error is shown too (`ERR_MODULE_NOT_FOUND`: a dependency the
 * plugin imports is not installed). Nothing of the value runs but a `name` or `code` getter,
 * inside a `try`.
 *
 * What no loader can catch: a plugin that calls `process.exit()` (or `process.abort()`, or
 * kills its own process) while it is imported ends the process there (docs/harness-spec.md).
 */

import { types } from "node:util";

import { errorName } from "../failure.js";

const NODE_CODE = /^ERR_[A-Z0-9_]{1,64}$/;

/** The failure as a problem says it: `Halt`, `Error [ERR_MODULE_NOT_FOUND]`, `NonErrorThrown`. */
export function described(thrown: unknown): string {
  return `${errorName("exception", thrown)}${codeOf(thrown)} (its message is not shown)`;
}

function codeOf(thrown: unknown): string {
  if (typeof thrown !== "object" || thrown === null || types.isProxy(thrown) || !types.isNativeError(thrown)) return "";
  let code: unknown;
  try {
    code = (thrown as { code?: unknown }).code;
  } catch {
    return "";
  }
  return typeof code === "string" && NODE_CODE.test(code) ? ` [${code}]` : "";
}
