#!/usr/bin/env node
/**
 * The corpus testee (INTERPRETING.md §9): JSON Lines on stdin, one reply per line on stdout.
 *
 *   node dist/runner.js
 *
 * It declares every feature tag of the corpus, `throw-values` included (JavaScript can throw
 * values that are not `Error`s). Diagnostics go to stderr.
 */

import { createInterface } from "node:readline";
import { CEDAR, THROW_VALUES } from "./conformance/behaviours.js";
import { runCase } from "./conformance/case.js";
import { loadSamples } from "./conformance/corpus.js";
import { VERSION } from "./index.js";
import { cedarWasm } from "./policies/cedar.js";

const PROTOCOL = 1;
// `cedar` when the optional engine package is installed (I38).
const FEATURES = ["timeouts", "concurrency", THROW_VALUES, "harness-spec", "approvals", ...(cedarWasm() === null ? [] : [CEDAR])];

function hello(features: readonly string[]): object {
  return {
    protocol: PROTOCOL,
    implementation: { name: "harnessweaver", language: "typescript", version: VERSION, core: "typescript" },
    features,
  };
}

async function answer(message: Record<string, unknown>, features: ReadonlySet<string>, samples: () => Record<string, unknown>) {
  switch (message["cmd"]) {
    case "hello":
      return hello([...features]);
    case "run":
      return { seq: message["seq"], ...(await runCase(message["case"], samples(), features)) };
    default:
      return { errored: true, message: `unknown command ${JSON.stringify(message["cmd"])}` };
  }
}

async function main(): Promise<void> {
  const features = new Set(FEATURES);
  let samples: Record<string, unknown> | undefined;
  const lazySamples = () => (samples ??= { ...loadSamples() }); // hello works without a corpus
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    if (line.trim() === "") continue;
    const message: unknown = JSON.parse(line);
    if (typeof message !== "object" || message === null) throw new Error(`not a JSON object: ${line}`);
    const record = message as Record<string, unknown>;
    if (record["cmd"] === "stop") break;
    process.stdout.write(`${JSON.stringify(await answer(record, features, lazySamples))}\n`);
  }
}

main().then(
  () => process.exit(0), // abandoned middleware (timed out) must not keep the runner alive
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
