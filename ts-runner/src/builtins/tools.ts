/** `harnessweaver.tool_allowlist`: only the tools on the list may run (python/harnessweaver/builtins/tools.py). */

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
