/** Helpers for the harness-spec tests: a temporary folder with files, and plugin modules. */

import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { load, SpecError, type LoadOptions, type Problem } from "../index.js";

/** The package's entry, as a plugin module written by a test imports it. */
export const PACKAGE = JSON.stringify(new URL("../index.js", import.meta.url).href);

/** A fresh folder with `files` (relative `/`-separated paths → text) written into it. */
export function folder(files: Readonly<Record<string, string>>): string {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "hwspec-")));
  for (const [name, text] of Object.entries(files)) {
    const path = join(root, ...name.split("/"));
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text, "utf8");
  }
  return root;
}

/** A plugin module: namespace `namespace`, middleware `guard` (tool.before) and `cap` (settings `max_usd`). */
export function pluginModule(namespace: string, extra = ""): string {
  return `import { Plugin, middleware, configurable, Block } from ${PACKAGE};
const guard = middleware({ name: "guard", hooks: ["tool.before"], failMode: "closed", timeout: "2s" }, async () => Block("guarded", { code: "guarded" }));
const cap = configurable(
  { name: "cap", hooks: ["tool.before", "tool.after"], failMode: "closed",
    settings: { type: "object", properties: { max_usd: { type: "number", minimum: 0 }, currency: { type: "string", default: "usd" } }, required: ["max_usd"] } },
  (settings) => { globalThis.__capSettings = settings; return async () => undefined; });
${extra}
export const plugin = new Plugin({ namespace: ${JSON.stringify(namespace)}, version: "1.0.0", middleware: [guard, cap] });
`;
}

/** The problems loading `path` reports (it must fail). */
export async function problems(path: string, options: LoadOptions = {}): Promise<Problem[]> {
  try {
    await load(path, options);
  } catch (error) {
    assert.ok(error instanceof SpecError, String(error));
    assert.equal(error.kind, "invalid_spec");
    assert.equal(error.rule, "spec");
    assert.equal(error.message, error.problems.map(String).join("\n"));
    return [...error.problems];
  }
  assert.fail(`${path} loaded`);
}

export async function onlyProblem(path: string, options: LoadOptions = {}): Promise<Problem> {
  const found = await problems(path, options);
  assert.equal(found.length, 1, found.map(String).join("\n"));
  return found[0] as Problem;
}

export { fileURLToPath };
