/**
 * The seam between the loader and the built-ins: the built-in plugin (namespace
 * `harnessweaver`, always loaded), the built-in profiles (`profile://name`) and the JSON Schema
 * of harness.yaml (contract B).
 *
 * PLACEHOLDER until branch `builtins` is merged: an empty built-in plugin and the profiles and
 * schema read from the repository. After the merge this module only re-exports
 * `../builtins/index.js`.
 */

import { existsSync, readFileSync } from "node:fs";
import { Plugin } from "../plugin.js";

const REPOSITORY = new URL("../../../python/harnessweaver/", import.meta.url);

/** PLACEHOLDER: the built-in plugin without its middleware. */
export const builtinPlugin = new Plugin({ namespace: "harnessweaver", version: "0.1.0" });

/** Profile name → the file URL of its YAML document. */
export const BUILTIN_PROFILES: Readonly<Record<string, URL>> = Object.freeze(
  Object.fromEntries(
    ["agent-guards", "rag", "safe-tools"]
      .map((name) => [name, new URL(`profiles/${name}.yaml`, REPOSITORY)] as const)
      .filter(([, url]) => existsSync(url)),
  ),
);

let schema: { readonly $defs?: Record<string, unknown> } | undefined;

/** The JSON Schema of harness.yaml (contract B), read once. */
export function harnessSchema(): { readonly $defs?: Record<string, unknown> } {
  schema ??= JSON.parse(readFileSync(new URL("spec/harness.schema.json", REPOSITORY), "utf8")) as { $defs?: Record<string, unknown> };
  return schema;
}
