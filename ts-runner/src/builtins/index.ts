/**
 * The built-in middleware: the plugin of namespace `harnessweaver`, which a harness spec uses
 * as `harnessweaver.<name>` without listing it, and the built-in profiles made of them
 * (python/harnessweaver/builtins/__init__.py; docs/builtins.md).
 *
 * | middleware | hook points | fail mode | does |
 * |---|---|---|---|
 * | `tool_allowlist` | tool.before | closed | blocks a tool not in `allow` |
 * | `max_messages` | model.before | closed | blocks a request with more than `limit` messages |
 * | `redact_secrets` | tool.before, model.before | open | replaces `patterns` by `[redacted]` |
 * | `require_citations` | model.after | open | retries an answer without a `[n]` citation |
 * | `loop_guard` | tool.before, model.before, task.end | closed | warns, then blocks, repeats |
 * | `budget_guard` | model.before, model.after, task.end | closed | warns at 70%, blocks at 100% |
 * | `tool_failure_guard` | tool.before, tool.after, task.end | closed | blocks a failing tool |
 * | `redact_pii` | task.start, model.before, tool.before, tool.after | closed | replaces emails, phones, cards |
 * | `rate_limit` | tool.before, model.before | closed | blocks or retries past `limit` calls per `per` |
 * | `tool_denylist` | tool.before | closed | blocks a tool in `deny` |
 * | `shell_guard` | tool.before | closed | blocks a destructive shell command (`RULES` in `shell.ts`) |
 * | `cedar` | tool.before (or tool.after, model.before) | closed | decides with Cedar policies (I38, `../policies/cedar.ts`) |
 * | `authzen` | tool.before (or tool.after, model.before) | closed | asks an AuthZEN 1.0 decision point (I38, `../policies/authzen.ts`) |
 *
 * `loop_guard`, `budget_guard`, `tool_failure_guard` and `rate_limit` keep their state on a
 * state view (`../state`): the loader attaches the harness's store; never attached, each makes
 * a private in-memory one.
 *
 * Each is a `Configurable`: its `settings` schema is harness.schema.json's
 * `$defs["settings.harnessweaver.<name>"]`; `build(settings)` makes a fresh middleware with
 * its own per-run state, and throws a `SettingsError` for settings that break a rule between
 * them (which the schema cannot say).
 */

import { readFileSync } from "node:fs";
import { Plugin } from "../plugin.js";
import { budgetGuard } from "./budget.js";
import { requireCitations } from "./citations.js";
import { toolFailureGuard } from "./failures.js";
import { loopGuard } from "./loops.js";
import { maxMessages } from "./messages.js";
import { redactPii } from "./pii.js";
import { redactSecrets } from "./redact.js";
import { rateLimit } from "./rates.js";
import { authzen } from "../policies/authzen.js";
import { cedar } from "../policies/cedar.js";
import { shellGuard } from "./shell.js";
import { toolAllowlist, toolDenylist } from "./tools.js";

export {
  authzen,
  budgetGuard,
  cedar,
  loopGuard,
  maxMessages,
  rateLimit,
  redactPii,
  redactSecrets,
  requireCitations,
  shellGuard,
  toolAllowlist,
  toolDenylist,
  toolFailureGuard,
};
export { MAX_COMMAND, RULES as SHELL_RULES } from "./shell.js";
export { BUILTIN_PROFILE_NAMES, BUILTIN_PROFILES } from "./profiles.js";
export { fingerprint } from "./fingerprint.js";
export { luhnValid, redactCards } from "./pii.js";
export { PythonRegexError } from "./pyregex.js";
export { FINAL_EXIT_REASONS, MAX_RUNS, RunStates } from "./runs.js";
export { SettingsError } from "./settings.js";

// The package's version (package.json is two folders up, in the repository and in the tarball).
const VERSION = (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;

/** The built-in plugin: its middleware are `harnessweaver.tool_allowlist` and so on, in Python's order. */
export const builtinPlugin = new Plugin({
  namespace: "harnessweaver",
  version: VERSION,
  middleware: [
    toolAllowlist,
    maxMessages,
    redactSecrets,
    requireCitations,
    loopGuard,
    budgetGuard,
    toolFailureGuard,
    redactPii,
    rateLimit,
    toolDenylist,
    shellGuard,
    cedar,
    authzen,
  ],
});
