/**
 * Finding the shared corpus: `$HARNESSWEAVER_CORPUS` (the driver sets it), else
 * `../conformance` relative to the package root. The runner keeps no copy of the catalogue,
 * its samples or the cases: they are read from the corpus every time.
 */

import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join } from "node:path";

export const CORPUS_ENV = "HARNESSWEAVER_CORPUS";

export function corpusDirectory(env: NodeJS.ProcessEnv = process.env): string {
  const configured = env[CORPUS_ENV];
  if (configured) return configured;
  // This file is dist/conformance/corpus.js: the package root is two levels up.
  return fileURLToPath(new URL("../../../conformance/", import.meta.url));
}

/** The catalogue's sample events, by hook point (JSON forms). */
export function loadSamples(directory: string = corpusDirectory()): Readonly<Record<string, unknown>> {
  const catalogue: unknown = JSON.parse(readFileSync(join(directory, "catalogue.json"), "utf8"));
  const samples = (catalogue as { samples?: unknown }).samples;
  if (typeof samples !== "object" || samples === null) throw new Error(`${directory}/catalogue.json has no samples`);
  return samples as Readonly<Record<string, unknown>>;
}
