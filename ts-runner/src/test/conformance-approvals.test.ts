// The corpus's approvals cases (conformance/cases/approvals/*.json, INTERPRETING.md I34) run in
// process through the TypeScript testee's runCase: each step's answer must hold what the case
// writes (the keys written, inside records, verdicts and refusals too; a refusal's message
// through its matcher). `harnessweaver conformance --require-identical` then pins the rest
// against Python.

import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { runCase } from "../conformance/case.js";
import { corpusDirectory, loadSamples } from "../conformance/corpus.js";

const FEATURES = new Set(["timeouts", "concurrency", "throw-values", "harness-spec", "approvals"]);
const PARTIAL = new Set(["record", "verdict", "refused"]);

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Where `actual` differs from what `want` writes (INTERPRETING.md §6.4), or null. */
function difference(want: unknown, actual: unknown, path: string, depth: number): string | null {
  if (isObject(want) && "$contains" in want) {
    return typeof actual === "string" && actual.includes(String(want["$contains"])) ? null : `${path}: ${JSON.stringify(actual)}`;
  }
  if (!isObject(want) || !isObject(actual)) {
    try {
      assert.deepStrictEqual(actual, want);
      return null;
    } catch {
      return `${path}: expected ${JSON.stringify(want)}, got ${JSON.stringify(actual)}`;
    }
  }
  for (const [key, value] of Object.entries(want)) {
    const here = `${path}/${key}`;
    const found =
      PARTIAL.has(key) && depth < 2 ? difference(value, actual[key], here, depth + 1) : difference(value, actual[key], here, 99);
    if (found !== null) return found;
  }
  return null;
}

const corpus = corpusDirectory();
const directory = join(corpus, "cases", "approvals");
const cases = readdirSync(directory)
  .filter((name) => name.endsWith(".json"))
  .flatMap((name) => (JSON.parse(readFileSync(join(directory, name), "utf8")) as { cases: Json[] }).cases);

describe("the corpus's approvals cases (I34)", () => {
  const samples = loadSamples(corpus);
  it("has the family", () => assert.ok(cases.length >= 40, `${cases.length} cases`));
  for (const testCase of cases) {
    it(String(testCase["id"]), async () => {
      const reply = await runCase(testCase, samples, FEATURES);
      assert.ok("actual" in reply, "errored" in reply ? reply.message : "no answer");
      const actual = reply.actual as Json;
      const want = (testCase["then"] as Json)["approvals"] as unknown[];
      const answers = actual["approvals"] as unknown[];
      assert.equal(answers.length, want.length);
      want.forEach((entry, i) => assert.equal(difference(entry, answers[i], `/approvals/${String(i)}`, 0), null));
      assert.deepEqual(actual["emits"], []);
      assert.equal(actual["error"], null);
    });
  }
});
