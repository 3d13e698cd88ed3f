/**
 * `render.ts`: the chains of a harness as text, JSON and mermaid, byte for byte what Python's
 * `render.py` prints. The reference outputs are `fixtures/render-python.json`, written by
 * Python from the same harness (`python/tests/test_hooks_identical.py`, which fails when the
 * fixture is not what Python prints); the Python notations behind them are pinned below.
 */

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { HookBus, middleware, type HookPoint, type Layer, type MatchOptions, type Mode } from "../index.js";
import { chainsOf, render, timeoutText, type ShownEntry, type ShownHarness } from "../spec/render.js";
import { pyFloatRepr, pyG, pyJson, pyJsonString, pyPath, pyPathName, pyRound, PyFloat } from "../spec/pytext.js";

const FIXTURE = new URL("../../src/test/fixtures/render-python.json", import.meta.url);
const { notations: NOTATIONS, ...PYTHON } = JSON.parse(readFileSync(FIXTURE, "utf8")) as Record<string, string> & {
  notations: [string, string, string, string][];
};
const ALL: HookPoint[] = ["task.start", "step.start", "model.before", "model.after", "tool.before", "tool.after", "step.end", "task.end"];

interface Item {
  readonly timeout?: string | number;
  readonly failMode?: "open" | "closed";
  readonly match?: MatchOptions;
}

function declared(name: string, hooks: HookPoint[], { timeout, failMode = "closed", match }: Item = {}) {
  return middleware({ name, hooks, failMode, ...(timeout === undefined ? {} : { timeout }), ...(match ? { match } : {}) }, async () => undefined);
}

/** The harness `scenario()` of test_hooks_identical.py builds, built the same way. */
function scenario(): ShownHarness {
  const bus = new HookBus({ deadlines: { "tool.before": "1.1ms", "model.before": 30, "task.end": "0.25s" } });
  const entries: ShownEntry[] = [];
  const add = (mw: ReturnType<typeof declared>, layer: Layer, name: string, label: string, use: string, file: string, line: number | null, mode?: Mode) => {
    const declaration = bus.register(mw, { layer, name, ...(mode ? { mode } : {}) });
    entries.push({ name: declaration.name, label, use, declaration, layer, file, line });
  };
  add(declared("tracer", ALL, { timeout: "250ms" }), "org_profile", "audit", "audit", "acme.audit_tracer", "org/acme/baseline.yaml", 5);
  const cap = declared("cap", ["tool.before"], { timeout: 1.5, match: { tool: ["refund_*", "issue_credit"] } });
  add(cap, "plugin_profile", "hard_cap", "hard_cap", "acme.refund_cap", "profils/sécurité — 😀.yaml", null);
  const redact = declared("redact", ["model.before", "tool.before"], { failMode: "open", timeout: "0.0015s" });
  add(redact, "builtin_profile", "rag.redact", "rag.redact", "harnessweaver.redact_secrets", "harnessweaver/profiles/rag.yaml", 5);
  const big = declared("big", ["model.before"], { timeout: 90, match: { model: "gpt-5*" } });
  add(big, "app", "big_models", 'big "models"', "acme.audit_tracer", "harness.yaml", 12, "audit");
  add(declared("weekend", ["tool.before"], { timeout: "2s" }), "task", "pii", "guardrails.tool.before[pii]", "acme.no_weekend_refunds", "harness.yaml", 23);
  bus.register(declared("by_code", ["tool.after", "step.end"], { timeout: 3600 }));
  return { bus, entries, spec: "./examples//refunds/harness.yaml", task: "refund", env: null, mode: "audit" };
}

const EMPTY: ShownHarness = { bus: new HookBus(), entries: [], spec: null, task: null, env: null };

describe("render: Python's output for the same harness", () => {
  const harness = scenario();
  for (const format of ["text", "json", "mermaid"] as const) {
    it(`${format}`, () => assert.equal(render(harness, format), PYTHON[format]));
    it(`${format} for one tool`, () => assert.equal(render(harness, format, { tool: "search" }), PYTHON[`${format}-tool`]));
    it(`${format} for a tool and a model`, () =>
      assert.equal(render(harness, format, { tool: "refund_payment", model: "gpt-4o" }), PYTHON[`${format}-both`]));
    it(`${format} of an empty harness built in code`, () => assert.equal(render(EMPTY, format), PYTHON[`${format}-empty`]));
  }

  it("the fixture holds every case the tests compare", () => {
    assert.deepEqual(Object.keys(PYTHON).sort(), ["json", "text", "mermaid"].flatMap((f) => [f, `${f}-both`, `${f}-empty`, `${f}-tool`]).sort());
  });

  it("refuses an unknown format, naming it and the formats", () => {
    assert.throws(() => render(harness, "yaml" as "text"), { name: "RangeError", message: "unknown format 'yaml': one of text, json, mermaid" });
  });

  it("chainsOf: every hook point in catalogue order, matchers applied per tool (I22)", () => {
    const chains = chainsOf(harness, { tool: "search" });
    assert.deepEqual([...chains.keys()], ALL);
    assert.deepEqual(chains.get("tool.before")?.map((e) => e.name), ["audit", "rag.redact", "pii"]);
    assert.deepEqual(chainsOf(harness).get("tool.after")?.map((e) => [e.name, e.use, e.layer]), [["by_code", null, null], ["audit", "acme.audit_tracer", "org_profile"]]);
  });
});

describe("Python's notations", () => {
  it("repr, format(x, 'g'), repr(round(x, 6)) and the timeout text of Python's fixture numbers", () => {
    assert.ok(NOTATIONS.length > 400);
    for (const [repr, g, rounded, timeout] of NOTATIONS) {
      const x = Number(repr); // repr reads back exactly
      assert.deepEqual([pyFloatRepr(x), pyG(x), pyFloatRepr(pyRound(x, 6)), timeoutText(x)], [repr, g, rounded, timeout], repr);
    }
  });

  it("a float as repr writes it: the shortest digits, .0 on whole numbers, exponents past 1e16 and under 1e-4", () => {
    const cases: [number, string][] = [
      [2, "2.0"], [0.25, "0.25"], [1e-5, "1e-05"], [0.0001, "0.0001"], [1e16, "1e+16"], [1e15, "1000000000000000.0"],
      [1.5e300, "1.5e+300"], [0.1 + 0.2, "0.30000000000000004"], [5e-324, "5e-324"], [-0, "-0.0"], [123456.789, "123456.789"],
    ];
    for (const [x, text] of cases) assert.equal(pyFloatRepr(x), text, String(x));
  });

  it("round(x, n) and format(x, 'g') round the exact value, ties to even", () => {
    assert.equal(pyRound(0.0011 * 1000, 6), 1.1);
    assert.equal(pyRound(2.675, 2), 2.67); // 2.675 is 2.67499999… in binary
    assert.equal(pyG(1000.125), "1000.12"); // an exact tie: to even (toPrecision gives 1000.13)
    assert.equal(pyG(1000.375), "1000.38");
    assert.equal(pyG(999999.5), "1e+06");
    assert.equal(pyG(1234567), "1.23457e+06");
    assert.equal(pyG(0.0001), "0.0001");
    assert.equal(pyG(0.00001), "1e-05");
    assert.equal(pyG(250), "250");
    assert.equal(pyG(0), "0");
  });

  it("a timeout as it would be written", () => {
    const cases: [number | null, string][] = [[null, "-"], [2, "2s"], [0.25, "250ms"], [1.5, "1.5s"], [3600, "3600s"], [0.0005, "0.5ms"], [1e-9, "1e-06ms"], [1234567, "1.23457e+06s"]];
    for (const [x, text] of cases) assert.equal(timeoutText(x), text, String(x));
  });

  it("JSON strings are ASCII: \\u escapes (lowercase), surrogate pairs, the short escapes", () => {
    assert.equal(pyJsonString('a"b\\c'), '"a\\"b\\\\c"');
    assert.equal(pyJsonString("é — 😀"), '"\\u00e9 \\u2014 \\ud83d\\ude00"');
    assert.equal(pyJsonString("\n\t\b\f\r\u0001\u007f"), '"\\n\\t\\b\\f\\r\\u0001\\u007f"');
    assert.equal(pyJsonString("/"), '"/"');
  });

  it("json.dumps(indent=2): nesting, empty containers, key order, floats marked", () => {
    const text = pyJson({ b: [1, new PyFloat(2), []], a: {}, c: null, d: true });
    assert.equal(text, '{\n  "b": [\n    1,\n    2.0,\n    []\n  ],\n  "a": {},\n  "c": null,\n  "d": true\n}');
  });

  it("paths as pathlib shows them", () => {
    assert.equal(pyPath("./examples//refunds/harness.yaml"), "examples/refunds/harness.yaml");
    assert.equal(pyPath("/srv/./x/"), "/srv/x");
    assert.equal(pyPath("//srv"), "//srv");
    assert.equal(pyPath("///srv"), "/srv");
    assert.equal(pyPath("../a/.."), "../a/..");
    assert.equal(pyPath(""), ".");
    assert.equal(pyPathName("examples/harness.yaml/"), "harness.yaml");
    assert.equal(pyPathName("/"), "");
  });
});
