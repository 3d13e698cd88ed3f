/**
 * An item with several mistakes reports every one of them, a misspelt reserved key is offered
 * the key it spells, and pydantic's "Value error, " prefix stays out of a message: the same
 * lines as Python's loader (python/tests/spec/test_spec_mistakes.py; the corpus's
 * harness.spec.mistakes.* cases pin them for every implementation). Issue 32.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { loopSettings } from "../builtins/loops.js";
import { closest } from "../spec/close.js";
import { HookBus, load, RunContext, ToolCallEvent } from "../index.js";
import { folder, pluginModule, problems } from "./spec-support.js";

const ITEM = "harness.yaml:{}: middleware[0] (harnessweaver.loop_guard): ";
const at = (line: number) => ITEM.replace("{}", String(line));

describe("an item's mistakes", () => {
  it("four mistakes of one item are three lines: each key the core refuses, then every fault of its settings", async () => {
    const root = folder({
      "harness.yaml":
        "middleware:\n  - use: harnessweaver.loop_guard\n    band: nowhere\n    fail-mode: closed\n    timeout: 5 parsecs\n    warn_after: 5\n    block_after: 3\n",
    });
    assert.deepEqual((await problems(join(root, "harness.yaml"))).map(String), [
      at(3) + "invalid band 'nowhere': a band is one of baseline, platform, app or task (rule 1)",
      at(5) + "invalid timeout '5 parsecs': a timeout is a positive number of seconds or a string with a unit such as 250ms, 2s, 1.5s or 1m (ruling 15)",
      at(4) +
        "invalid settings: fail-mode: unknown setting (did you mean fail_mode?); block_after: block_after (3) must be greater than warn_after (5) (settings)",
    ]);
  });

  it("every key the core refuses is reported at its line", async () => {
    const root = folder({
      "harness.yaml":
        "plugins: {local: [plug]}\nmiddleware:\n  - use: acme.guard\n    id: 1bad\n    hooks: [tool.befor]\n    fail_mode: ajar\n    timeout: -1\n    mode: loud\n",
      "plug.mjs": pluginModule("acme"),
    });
    const found = await problems(join(root, "harness.yaml"));
    assert.deepEqual(
      found.map((p) => [p.kind, p.rule, p.line]),
      [
        ["invalid_name", "I1", 4],
        ["unknown_hook", "ruling-2", 5],
        ["invalid_fail_mode", "ruling-14", 6],
        ["invalid_duration", "ruling-15", 7],
        ["invalid_mode", "I25", 8],
      ],
    );
  });

  it("a problem that follows only from a refused key is not reported; one that does not is", async () => {
    const root = folder({
      "harness.yaml": "profiles: [./base.yaml]\n",
      "base.yaml":
        "middleware:\n  - {use: harnessweaver.redact_secrets, id: a, band: nowhere}\n" +
        "  - {use: harnessweaver.loop_guard, id: b, hooks: [tool.befor], match: {tool: [refund_*]}}\n" +
        "  - {use: harnessweaver.redact_secrets, id: c, timeout: soon}\n",
    });
    const found = await problems(join(root, "harness.yaml"));
    assert.deepEqual(
      found.map((p) => [p.kind, p.line]),
      [
        ["invalid_band", 2],
        ["unknown_hook", 3],
        ["invalid_duration", 4],
        ["baseline_fail_open", 4],
      ],
    );
  });
});

describe("did you mean", () => {
  it("a key spelt with '-' for '_' or in other capitals is the key it spells; otherwise difflib's closest", () => {
    assert.equal(closest("fail-mode", ["scope", "window"], ["id", "fail_mode", "mode"]), "fail_mode");
    assert.equal(closest("Fail_Mode", ["fail_mode"]), "fail_mode");
    assert.equal(closest("block-afer", ["block_after", "warn_after"]), "block_after");
    assert.equal(closest("enable", ["scope"], ["enabled"]), "enabled");
    assert.equal(closest("zzz", ["scope"], ["enabled"]), null);
  });

  it("an unknown setting that is a reserved key misspelt is offered it, in Python's words", async () => {
    const root = folder({
      "harness.yaml":
        "plugins: {local: [plug]}\nmiddleware:\n  - {use: harnessweaver.loop_guard, fail-mode: closed}\n  - {use: acme.guard, fail-mode: open, x: 1}\n",
      "plug.mjs": pluginModule("acme"),
    });
    const found = await problems(join(root, "harness.yaml"));
    assert.deepEqual(
      found.map((p) => p.message),
      [
        "invalid settings: fail-mode: unknown setting (did you mean fail_mode?) (settings)",
        "guard is a function and takes no settings: fail-mode (did you mean fail_mode?), x (settings)",
      ],
    );
  });
});

describe("rules between settings", () => {
  it("no 'Value error, ' prefix; '(settings)' for the settings as a whole; beside an unknown setting in one problem", async () => {
    const root = folder({
      "harness.yaml":
        "middleware:\n  - {use: harnessweaver.loop_guard, id: a, window: 4}\n  - {use: harnessweaver.budget_guard, id: b}\n" +
        "  - {use: harnessweaver.loop_guard, id: c, warn_after: 5, block_after: 3, windoww: 9}\n",
    });
    const found = await problems(join(root, "harness.yaml"));
    assert.deepEqual(
      found.map((p) => p.message),
      [
        "invalid settings: window: window (4) must be at least block_after (5): a window shorter than the limit never reaches it (settings)",
        "invalid settings: (settings): give max_tokens, max_cost_usd or both: a budget needs a limit (settings)",
        "invalid settings: windoww: unknown setting (did you mean window?); block_after: block_after (3) must be greater than warn_after (5) (settings)",
      ],
    );
  });

  it("a rule broken by a setting written on its own line is reported at that line", async () => {
    const root = folder({ "harness.yaml": "middleware:\n  - use: harnessweaver.loop_guard\n    warn_after: 5\n    block_after: 3\n" });
    const [problem] = await problems(join(root, "harness.yaml"));
    assert.equal(problem?.line, 4);
  });
});

describe("settings in pydantic's words", () => {
  it("a wrong type, a bound, a value not allowed, an optional setting refused as its type alone", async () => {
    const root = folder({
      "harness.yaml":
        "middleware:\n  - {use: harnessweaver.loop_guard, id: a, warn_after: many, window: 20000, scope: galaxy}\n" +
        "  - {use: harnessweaver.budget_guard, id: b, max_tokens: 0}\n",
    });
    assert.deepEqual(
      (await problems(join(root, "harness.yaml"))).map((p) => p.message),
      [
        "invalid settings: scope: Input should be 'run', 'session', 'user', 'task', 'app' or 'org'; warn_after: Input should be a valid integer; window: Input should be less than or equal to 10000 (settings)",
        "invalid settings: max_tokens: Input should be greater than 0 (settings)",
      ],
    );
  });
});

describe("the loop guard's lone block_after", () => {
  for (const [blockAfter, expected] of [
    [3, ["continue", "continue", "block"]],
    [2, ["continue", "block", "block"]],
    [4, ["continue", "continue", "continue", "block"]],
  ] as const) {
    it(`block_after: ${blockAfter} alone loads and refuses identical call number ${blockAfter}`, async () => {
      const root = folder({ "harness.yaml": `middleware:\n  - {use: harnessweaver.loop_guard, block_after: ${blockAfter}}\n` });
      const harness = await load(join(root, "harness.yaml"));
      const bus: HookBus = harness.bus;
      const call = new ToolCallEvent({ tool: { name: "search" }, call: { name: "search", arguments: { q: "same" } } });
      const ctx = new RunContext();
      const kinds: string[] = [];
      for (const _ of expected) kinds.push((await bus.emit("tool.before", call, ctx)).outcome.kind);
      assert.deepEqual(kinds, [...expected]);
    });
  }

  it("warn_after, not given, is 3, or one call before a block_after below 4 (none for 2)", () => {
    const warn = (settings: Record<string, unknown>) => loopSettings(settings).warnAfter;
    assert.deepEqual([warn({}), warn({ block_after: 2 }), warn({ block_after: 3 }), warn({ block_after: 4 }), warn({ block_after: 9 })], [3, null, 2, 3, 3]);
    assert.equal(warn({ block_after: 3, warn_after: null }), null);
  });

  it("an explicit warn_after at the limit still breaks the rule", async () => {
    const root = folder({ "harness.yaml": "middleware:\n  - {use: harnessweaver.loop_guard, warn_after: 3, block_after: 3}\n" });
    const [problem] = await problems(join(root, "harness.yaml"));
    assert.match(problem?.message ?? "", /block_after \(3\) must be greater than warn_after \(3\)/);
  });
});
