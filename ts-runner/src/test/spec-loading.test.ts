import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { runCase } from "../conformance/case.js";
import { loadSamples } from "../conformance/corpus.js";
import { HarnessweaverError, load, RegistrationError, SpecError } from "../index.js";
import { folder, onlyProblem, pluginModule, problems } from "./spec-support.js";

const PLUGINS = "plugins: {local: [plug]}\n";

describe("load", () => {
  it("registers profiles, the app, the env overlay and the task in that order, each in its layer's band", async () => {
    const root = folder({
      "harness.yaml":
        PLUGINS +
        "profiles: [./base.yaml, profile://safe-tools]\nmiddleware:\n  - {use: acme.guard, id: app_guard}\n" +
        "envs:\n  prod:\n    middleware: [{use: acme.guard, id: env_guard}]\n" +
        "tasks:\n  refund:\n    guardrails:\n      tool.after: [{use: acme.cap, id: after_cap, max_usd: 1}]\n" +
        "    validation:\n      rules: [{use: acme.cap, id: rule_cap, max_usd: 2, band: task}]\n",
      "base.yaml": "middleware:\n  - {use: acme.guard, id: base_guard}\n",
      "plug.mjs": pluginModule("acme"),
    });
    const harness = await load(join(root, "harness.yaml"), { task: "refund", env: "prod" });
    const shown = (hook: "tool.before" | "tool.after") =>
      (harness.chains().get(hook) ?? []).map((e) => `${e.label}:${e.declaration.band}:${e.layer}`);
    assert.deepEqual(shown("tool.before"), [
      "base_guard:baseline:profile_file",
      "safe_tools.tool_allowlist:platform:builtin_profile",
      "safe_tools.redact_secrets:platform:builtin_profile",
      "app_guard:app:app",
      "env_guard:app:env",
      "validation.rules[rule_cap]:task:task",
    ]);
    // Outbound: the same band runs in reverse registration order (rule 2).
    assert.deepEqual(shown("tool.after"), ["validation.rules[rule_cap]:task:task", "guardrails.tool.after[after_cap]:task:task"]);
    assert.deepEqual([harness.spec, harness.task, harness.env], [join(root, "harness.yaml"), "refund", "prod"]);
    assert.deepEqual(harness.entry("after_cap").declaration.hooks, ["tool.after"]); // narrowed to its stage
  });

  it("a task's deadline tightens the harness's, never loosens it (I26); the mode of the task wins (I25)", async () => {
    const root = folder({
      "harness.yaml":
        PLUGINS +
        "mode: audit\ndeadlines: {tool.before: 2s, model.before: 1s}\nmiddleware: [{use: acme.guard}]\n" +
        "tasks:\n  t: {mode: enforce, deadlines: {tool.before: 500ms, model.before: 5s}}\n",
      "plug.mjs": pluginModule("acme"),
    });
    const plain = await load(join(root, "harness.yaml"));
    assert.deepEqual([plain.bus.deadline("tool.before"), plain.mode, plain.entries[0]?.declaration.mode], [2, "audit", "audit"]);
    const tight = await load(join(root, "harness.yaml"), { task: "t" });
    assert.deepEqual([tight.bus.deadline("tool.before"), tight.bus.deadline("model.before"), tight.mode], [0.5, 1, "enforce"]);
    assert.equal(tight.entries[0]?.declaration.mode, "enforce");
  });

  it("contracts: the argument wins over the spec's; a bad argument is refused before anything is read", async () => {
    const root = folder({ "harness.yaml": "contracts: warn\n" });
    assert.equal((await load(join(root, "harness.yaml"))).bus.contracts, "warn");
    assert.equal((await load(join(root, "harness.yaml"), { contracts: "strict" })).bus.contracts, "strict");
    await assert.rejects(load(join(root, "missing.yaml"), { contracts: "loud" as never }), RegistrationError);
  });

  it("chains({tool}) shows the chain a call of that tool runs (I22)", async () => {
    const root = folder({
      "harness.yaml": PLUGINS + "middleware:\n  - {use: acme.guard, match: {tool: refund_*}}\n  - {use: acme.cap, id: c, max_usd: 1}\n",
      "plug.mjs": pluginModule("acme"),
    });
    const harness = await load(join(root, "harness.yaml"));
    const names = (tool: string) => (harness.chains({ tool }).get("tool.before") ?? []).map((e) => e.name);
    assert.deepEqual([names("refund_payment"), names("search")], [["acme.guard", "c"], ["c"]]);
    assert.match(harness.render("text"), /match/);
  });

  it("all or nothing: every problem of every file, in the order found, and nothing built", async () => {
    const root = folder({
      "harness.yaml":
        PLUGINS + "profiles: [./p.yaml]\nmiddleware:\n  - {use: acme.guard, band: baseline}\n  - {use: acme.guard, timeout: 2 s, id: g2}\n" +
        "tasks:\n  t:\n    guardrails:\n      model.before: [{use: acme.guard, id: pii}]\n",
      "p.yaml": "middleware:\n  - {use: acme.cap, id: open_cap, max_usd: 1, fail_mode: open}\n",
      "plug.mjs": pluginModule("acme"),
    });
    const found = await problems(join(root, "harness.yaml"));
    assert.deepEqual(
      found.map((p) => [p.file, p.line, p.kind, p.rule]),
      [
        ["p.yaml", 2, "baseline_fail_open", "R2"],
        ["harness.yaml", 4, "baseline_outside_profile", "S8"],
        ["harness.yaml", 5, "invalid_duration", "ruling-15"],
        ["harness.yaml", 9, "hooks_widened", "ruling-18"],
      ],
    );
  });

  it("unknown task and env name what the spec has", async () => {
    const root = folder({ "harness.yaml": "envs: {staging: {}}\ntasks: {refund: {}}\n" });
    const found = await problems(join(root, "harness.yaml"), { task: "extract", env: "prod" });
    assert.deepEqual(found.map(String), [
      "harness.yaml:1: envs: unknown env 'prod': the spec's envs are staging (spec)",
      "harness.yaml:2: tasks: unknown task 'extract': the spec's tasks are refund (spec)",
    ]);
  });

  it("a disabled item is checked (settings too) but not registered", async () => {
    const root = folder({
      "harness.yaml": PLUGINS + "middleware:\n  - {use: acme.guard}\n  - {use: acme.cap, enabled: false, max_usd: 1}\n",
      "plug.mjs": pluginModule("acme"),
    });
    assert.deepEqual((await load(join(root, "harness.yaml"))).entries.map((e) => e.name), ["acme.guard"]);
    const bad = folder({ "harness.yaml": PLUGINS + "middleware:\n  - {use: acme.cap, enabled: false}\n", "plug.mjs": pluginModule("acme") });
    assert.equal((await onlyProblem(join(bad, "harness.yaml"))).kind, "invalid_settings");
  });
});

describe("the testee's spec-level cases (given.harness)", () => {
  const guard = { name: "guard", hooks: ["tool.before"], fail_mode: "closed", does: { return: "block", reason: "no", code: "no" } };
  const plugin = { namespace: "acme", version: "1.0.0", local: "app.plug", middleware: [guard], profiles: { base: "middleware:\n  - {use: acme.guard, id: first}\n" } };
  const beta = { namespace: "beta", version: "1.0.0", installed: "beta", middleware: [{ ...guard, does: { return: "none" } }] };
  const harnessCase = (spec: string) => ({
    id: "x",
    given: { harness: { files: { "harness.yaml": spec }, plugins: [plugin, beta] } },
    when: [{ emit: "tool.before" }],
  });

  it("loads, observes the hooks document and runs each item under its own name", async () => {
    const spec = "plugins: {local: [app.plug], installed: [beta]}\nprofiles: [profile://acme.base]\nmiddleware: [{use: beta.guard}, {use: acme.guard, id: second}]\n";
    const reply = await runCase(harnessCase(spec), loadSamples(), new Set());
    assert.ok("actual" in reply, JSON.stringify(reply));
    const actual = reply.actual as Record<string, any>;
    assert.equal(actual["error"], null);
    const chain = actual["harness"].hooks.find((h: { hook: string }) => h.hook === "tool.before").chain;
    assert.deepEqual(chain.map((e: any) => [e.name, e.layer, e.file, e.line]), [
      ["first", "plugin_profile", "profile://acme.base", null],
      ["beta.guard", "app", "harness.yaml", 3],
      ["second", "app", "harness.yaml", 3],
    ]);
    assert.equal(actual["harness"].spec, "harness.yaml");
    assert.deepEqual(actual["emits"][0].ran, ["first"]);
  });

  it("a spec that fails is observed with its problems sorted, and no step runs", async () => {
    const reply = await runCase(harnessCase("\n\nmiddleware: [{use: acme.nope}]\nfoo: 1\n"), loadSamples(), new Set());
    const actual = (reply as { actual: Record<string, any> }).actual;
    assert.deepEqual(actual["error"].problems.map((p: any) => [p.line, p.kind]), [[3, "unknown_use"], [4, "unknown_key"]]);
    assert.deepEqual([actual["error"].kind, actual["emits"], "harness" in actual], ["invalid_spec", [], false]);
  });

  it("nothing of a case stays behind: the next case cannot load its plugins", async () => {
    const first = await runCase(harnessCase("plugins: {installed: [beta]}\n"), loadSamples(), new Set());
    assert.equal((first as { actual: Record<string, any> }).actual["error"], null);
    const registry = (globalThis as Record<symbol, Map<string, unknown>>)[Symbol.for("harnessweaver.conformance.plugins")];
    assert.equal(registry?.size, 0);
    const next = { id: "y", given: { harness: { files: { "harness.yaml": "plugins: {installed: [beta]}\n" } } }, when: [] };
    const reply = (await runCase(next, loadSamples(), new Set())) as { actual: Record<string, any> };
    assert.deepEqual(reply.actual["error"].problems.map((p: any) => p.kind), ["unknown_plugin"]);
  });

  it("SpecError is what load rejects with", async () => {
    await assert.rejects(load(join(folder({ "harness.yaml": "- a\n" }), "harness.yaml")), SpecError);
  });

  it("SpecError is a HarnessweaverError of kind invalid_spec, rule spec, linking the spec docs (as Python's)", async () => {
    await assert.rejects(load(join(folder({ "harness.yaml": "- a\n" }), "harness.yaml")), (error: unknown) => {
      assert.ok(error instanceof HarnessweaverError);
      assert.deepEqual([error.name, error.kind, error.rule, error.link], ["SpecError", "invalid_spec", "spec", "docs/harness-spec.md#errors"]);
      return true;
    });
    assert.equal(existsSync(join(folder({}), "x")), false);
  });
});
