/**
 * The built-in profiles (`profile://agent-guards`, `profile://rag`, `profile://safe-tools`):
 * the YAML files of python/harnessweaver/profiles/, copied into `dist/profiles/` at build
 * time, so both languages load the very same documents.
 */

import { fileURLToPath } from "node:url";
import { assetURL } from "./assets.js";

/** The built-in profiles' names, as a spec writes them after `profile://`. */
export const BUILTIN_PROFILE_NAMES = Object.freeze(["agent-guards", "rag", "safe-tools"] as const);

/** Profile name → the absolute path of its YAML file (the loader parses it with positions). */
export const BUILTIN_PROFILES: Readonly<Record<string, string>> = Object.freeze(
  Object.fromEntries(
    BUILTIN_PROFILE_NAMES.map((name) => [name, fileURLToPath(assetURL(`profiles/${name}.yaml`, `profiles/${name}.yaml`))]),
  ),
);
