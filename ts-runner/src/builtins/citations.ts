/**
 * `harnessweaver.require_citations`: answers must cite their sources as `[1]`, `[2]`…
 * (python's citations.py). Only text answers are judged: a response that calls tools, or has
 * no text, passes.
 */

import { Retry } from "../outcomes.js";
import { configurable } from "../plugin.js";
import { compilePython } from "./pyregex.js";
import { settingsSchema } from "./settings.js";

/** A numbered citation such as `[1]` or `[12]` (Python's `\d`: any decimal digit). */
const CITATION = compilePython(String.raw`\[\d+\]`, "");
// str.strip() with no argument strips what str.isspace() calls white space.
const PY_SPACE = String.raw`[\u0009-\u000d\u001c-\u0020\u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]`;
const BLANK = new RegExp(`^${PY_SPACE}*$`, "u");

export const requireCitations = configurable(
  { name: "require_citations", hooks: ["model.after"], failMode: "open", settings: settingsSchema("require_citations") },
  (given) => {
    const required = given["required"] === undefined ? true : (given["required"] as boolean);
    return async (event) => {
      const message = event.response.message;
      if (!required || message.toolCalls.length > 0 || BLANK.test(message.content)) return null;
      if (CITATION.test(message.content)) return null;
      return Retry("the answer cites no source", { code: "missing_citation" });
    };
  },
);
