/**
 * `harnessweaver.tool_allowlist` (only the tools on its list may run) and
 * `harnessweaver.tool_denylist` (the tools on its list may not): python/harnessweaver/builtins/tools.py.
 */

import { Block } from "../outcomes.js";
import { configurable } from "../plugin.js";
import { pythonRepr } from "./repr.js";
import { settingsSchema } from "./settings.js";

export const toolAllowlist = configurable(
  { name: "tool_allowlist", hooks: ["tool.before"], failMode: "closed", settings: settingsSchema("tool_allowlist") },
  (given) => {
    const allow = new Set(given["allow"] as readonly string[]);
    return async (event) =>
      allow.has(event.tool.name) ? null : Block(`tool ${pythonRepr(event.tool.name)} is not allowed`, { code: "tool_not_allowed" });
  },
);

export const toolDenylist = configurable(
  { name: "tool_denylist", hooks: ["tool.before"], failMode: "closed", settings: settingsSchema("tool_denylist") },
  (given) => {
    const deny = new Set(given["deny"] as readonly string[]);
    return async (event) =>
      deny.has(event.tool.name) ? Block(`tool ${pythonRepr(event.tool.name)} is denied`, { code: "tool_denied" }) : null;
  },
);
