/**
 * Where the files the built-ins read live: `dist/harness.schema.json` and `dist/profiles/`,
 * copied there by `scripts/copy-assets.mjs` at build time from the one copy in the repository
 * (`python/harnessweaver/spec/harness.schema.json`, `python/harnessweaver/profiles/*.yaml`).
 *
 * A development build made with a bare `tsc` has no copies: then the repository's own files
 * are read (this module is `ts-runner/dist/builtins/assets.js`, three folders below the
 * repository's root), so the two can never differ.
 */

import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const PACKAGED = new URL("../", import.meta.url); // ts-runner/dist/
const REPOSITORY = new URL("../../../python/harnessweaver/", import.meta.url);

/** The URL of an asset: the packaged copy if there is one, else the repository's file. */
export function assetURL(packaged: string, repository: string): URL {
  const copy = new URL(packaged, PACKAGED);
  if (existsSync(copy)) return copy;
  const source = new URL(repository, REPOSITORY);
  if (existsSync(source)) return source;
  throw new Error(`harnessweaver: ${fileURLToPath(copy)} is missing; build the package with npm run build`);
}

let schema: { readonly $defs?: Record<string, unknown> } | undefined;

/** The JSON Schema of harness.yaml (contract B), read once. */
export function harnessSchema(): { readonly $defs?: Record<string, unknown> } {
  schema ??= JSON.parse(readFileSync(assetURL("harness.schema.json", "spec/harness.schema.json"), "utf8")) as {
    $defs?: Record<string, unknown>;
  };
  return schema;
}
