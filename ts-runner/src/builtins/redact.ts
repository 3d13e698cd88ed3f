/**
 * `harnessweaver.redact_secrets`: secrets never reach a tool or the model
 * (python/harnessweaver/builtins/redact.py). Replaces the matches of `patterns` (Python's
 * dialect, see `pyregex.ts`) by `[redacted]` in a tool call's arguments and in the messages of
 * a model request; a plain `Continue()` when nothing matched.
 */

import { ToolCallEvent, type ModelRequestEvent } from "../events.js";
import { Continue } from "../outcomes.js";
import { configurable } from "../plugin.js";
import { compilePython } from "./pyregex.js";
import { patternProblem } from "./patterns.js";
import { rewriteRequest, rewriteToolCall } from "./rewrite.js";
import { SettingsError, settingsSchema } from "./settings.js";

export const REDACTED = "[redacted]";

/** API-key-like tokens, replaced when no `patterns` are given. */
export const DEFAULT_PATTERNS = Object.freeze([
  String.raw`sk-[A-Za-z0-9_-]{8,}`, // API keys of the sk-… family
  String.raw`AKIA[0-9A-Z]{16}`, // AWS access key ids
  String.raw`gh[pousr]_[A-Za-z0-9]{20,}`, // GitHub tokens
  String.raw`xox[abprs]-[A-Za-z0-9-]{10,}`, // Slack tokens
]);

/** The patterns of the settings, checked (an empty list, or one matching "", would redact everywhere). */
export function secretPatterns(settings: Readonly<Record<string, unknown>>): readonly string[] {
  const patterns = (settings["patterns"] ?? DEFAULT_PATTERNS) as readonly string[];
  if (patterns.length === 0) throw new SettingsError("patterns", "List should have at least 1 item after validation, not 0");
  for (const pattern of patterns) {
    const problem = patternProblem(pattern);
    if (problem !== null) throw new SettingsError("patterns", problem);
  }
  return patterns;
}

export const redactSecrets = configurable(
  {
    name: "redact_secrets",
    hooks: ["tool.before", "model.before"],
    failMode: "open",
    settings: settingsSchema("redact_secrets"),
  },
  (given) => {
    const pattern = compilePython(secretPatterns(given).map((p) => `(?:${p})`).join("|"));
    const redact = (text: string) => text.replace(pattern, () => REDACTED);
    return async (event) => {
      const modified = event instanceof ToolCallEvent ? rewriteToolCall(event, redact) : rewriteRequest(event as ModelRequestEvent, redact);
      return modified === null ? null : Continue(modified);
    };
  },
);
