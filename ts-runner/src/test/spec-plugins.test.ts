import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, it } from "node:test";
import { load } from "../index.js";
import { folder, onlyProblem, pluginModule, problems } from "./spec-support.js";

const names = (harness: Awaited<ReturnType<typeof load>>, hook: "tool.before" | "tool.after") =>
  (harness.chains().get(hook) ?? []).map((entry) => entry.name);

describe("local plugins", () => {
  it("a dotted name is a module file under the spec's folder: a/b.mjs, a/b.js, a/b/index.mjs, a/b/index.js", async () => {
    const root = folder({
      "harness.yaml": "plugins: {local: [app.one, app.two, app.three, ./lib/four.mjs]}\nmiddleware:\n  - {use: one.guard}\n  - {use: two.guard}\n  - {use: three.guard}\n  - {use: four.guard}\n",
      "app/one.mjs": pluginModule("one"),
      "app/two.js": pluginModule("two"), // .js under a folder without package.json "type": the ESM loader needs "type": "module"
      "app/package.json": '{"type": "module"}',
      "app/three/index.mjs": pluginModule("three"),
      "lib/four.mjs": pluginModule("four"),
    });
    const harness = await load(join(root, "harness.yaml"));
    assert.deepEqual(names(harness, "tool.before"), ["one.guard", "two.guard", "three.guard", "four.guard"]);
  });

  it("a module without a plugin, one that throws and one that is not there are plugin_import_error", async () => {
    const root = folder({
      "harness.yaml": "plugins:\n  local: [missing, empty, broken]\n",
      "empty.mjs": "export const x = 1;\n",
      "broken.mjs": "throw new RangeError('boom');\n",
    });
    const found = await problems(join(root, "harness.yaml"));
    assert.deepEqual(
      found.map((p) => [p.kind, p.rule, p.item, p.line]),
      [
        ["plugin_import_error", "plugins", "plugins.local[0]", 2],
        ["plugin_import_error", "plugins", "plugins.local[1]", 2],
        ["plugin_import_error", "plugins", "plugins.local[2]", 2],
      ],
    );
    assert.match(found[0]?.message ?? "", /cannot import missing: no module file/);
    assert.match(found[1]?.message ?? "", /exports no `plugin`/);
    assert.match(found[2]?.message ?? "", /cannot import broken: RangeError \(its message is not shown\) \(plugins\)$/);
    assert.doesNotMatch(found[2]?.message ?? "", /boom/); // R9: an import's message may hold anything
  });

  it("a plugin that throws anything is plugin_import_error naming its kind, never its message (issue 28)", async () => {
    const SECRET = "sk-ant-api03-plugin-secret-0123456789";
    const thrown: Record<string, [string, string]> = {
      error: [`class Halt extends Error { constructor(m) { super(m); this.name = "Halt"; } }\nthrow new Halt("${SECRET}");\n`, "Halt"],
      string: [`throw "${SECRET}";\n`, "NonErrorThrown"],
      number: ["throw 42;\n", "NonErrorThrown"],
      undefined: ["throw undefined;\n", "NonErrorThrown"],
      tostring: [`throw { toString() { throw new Error("${SECRET}"); } };\n`, "NonErrorThrown"],
      nullproto: ["throw Object.create(null);\n", "NonErrorThrown"],
      secretname: [`const e = new Error("m"); e.name = "${SECRET} x";\nthrow e;\n`, "UnnamedException"],
      namegetter: [`const e = new Error("m"); Object.defineProperty(e, "name", { get() { throw new Error("${SECRET}"); } });\nthrow e;\n`, "Error"],
      missing: ['import "hw-no-such-package-anywhere";\n', "Error [ERR_MODULE_NOT_FOUND]"],
    };
    const names = Object.keys(thrown);
    const root = folder({
      "harness.yaml": `plugins:\n  local: [${names.join(", ")}]\n`,
      ...Object.fromEntries(names.map((name) => [`${name}.mjs`, thrown[name]?.[0] ?? ""])),
    });
    const found = await problems(join(root, "harness.yaml"));
    assert.deepEqual(
      found.map((p) => [p.kind, p.item, p.message]),
      names.map((name, i) => ["plugin_import_error", `plugins.local[${String(i)}]`, `cannot import ${name}: ${thrown[name]?.[1] ?? ""} (its message is not shown) (plugins)`]),
    );
    for (const problem of found) assert.ok(!String(problem).includes(SECRET));
  });

  it("two plugins of one namespace are duplicate_plugin; the same plugin listed twice loads once", async () => {
    const root = folder({
      "harness.yaml": "plugins: {local: [a, a, b]}\nprofiles: [./p.yaml]\n",
      "p.yaml": "plugins: {local: [a]}\nmiddleware: [{use: acme.guard}]\n",
      "a.mjs": pluginModule("acme"),
      "b.mjs": pluginModule("acme"),
    });
    const problem = await onlyProblem(join(root, "harness.yaml"));
    assert.deepEqual([problem.kind, problem.item], ["duplicate_plugin", "plugins.local[2]"]);
  });

  it("a plugin's profiles: a file URL (its file shown by its path) and an object", async () => {
    const root = folder({
      "harness.yaml": "plugins: {local: [plug]}\nprofiles: [profile://acme.base, profile://acme.inline]\n",
      "prof/base.yaml": "middleware:\n  - {use: acme.guard, id: base_guard}\n",
    });
    const url = JSON.stringify(pathToFileURL(join(root, "prof/base.yaml")).href);
    const inline = '{ inline: { middleware: [{ use: "acme.cap", id: "inline_cap", max_usd: 3 }] } }';
    const module = pluginModule("acme").replace(
      'middleware: [guard, cap] }',
      `middleware: [guard, cap], profiles: { base: new URL(${url}), ...${inline} } }`,
    );
    const { writeFileSync } = await import("node:fs");
    writeFileSync(join(root, "plug.mjs"), module);
    const harness = await load(join(root, "harness.yaml"));
    const entries = harness.chains().get("tool.before") ?? [];
    assert.deepEqual(
      entries.map((e) => [e.name, e.layer, e.file, e.line, e.declaration.band]),
      [
        ["base_guard", "plugin_profile", "prof/base.yaml", 2, "baseline"],
        ["inline_cap", "plugin_profile", "profile://acme.inline", null, "baseline"],
      ],
    );
  });
});

describe("installed plugins: npm packages", () => {
  it("resolves the package from the spec's folder upwards, through exports, main or index.js", async () => {
    const root = folder({
      "project/conf/harness.yaml": "plugins: {installed: [alpha, beta, gamma]}\nmiddleware:\n  - {use: alpha.guard}\n  - {use: beta.guard}\n  - {use: gamma.guard}\n",
      "project/node_modules/alpha/package.json": '{"name": "alpha", "type": "module", "exports": {".": {"require": "./nope.cjs", "import": "./dist/main.js"}}}',
      "project/node_modules/alpha/dist/main.js": pluginModule("alpha"),
      "node_modules/beta/package.json": '{"name": "beta", "type": "module", "main": "lib.js"}',
      "node_modules/beta/lib.js": pluginModule("beta"),
      "project/node_modules/gamma/package.json": '{"name": "gamma", "type": "module"}',
      "project/node_modules/gamma/index.js": pluginModule("gamma"),
    });
    const harness = await load(join(root, "project/conf/harness.yaml"));
    assert.deepEqual(names(harness, "tool.before"), ["alpha.guard", "beta.guard", "gamma.guard"]);
  });

  it("a package that is not there is unknown_plugin; one of another namespace is plugin_import_error", async () => {
    const root = folder({
      "harness.yaml": "plugins:\n  installed: [nope, delta]\n",
      "node_modules/delta/package.json": '{"name": "delta", "type": "module", "exports": "./index.js"}',
      "node_modules/delta/index.js": pluginModule("epsilon"),
    });
    const found = await problems(join(root, "harness.yaml"));
    assert.deepEqual(found.map((p) => [p.kind, p.item]), [["unknown_plugin", "plugins.installed[0]"], ["plugin_import_error", "plugins.installed[1]"]]);
    assert.match(found[1]?.message ?? "", /gives plugin namespace 'epsilon', not 'delta'/);
  });
});

describe("settings", () => {
  it("are validated against the schema, defaults applied, and kept as written on the entry", async () => {
    const root = folder({ "harness.yaml": "plugins: {local: [plug]}\nmiddleware: [{use: acme.cap, id: c, max_usd: 5}]\n", "plug.mjs": pluginModule("acme") });
    const harness = await load(join(root, "harness.yaml"));
    assert.deepEqual((globalThis as Record<string, unknown>)["__capSettings"], { max_usd: 5, currency: "usd" });
    assert.deepEqual(harness.entry("c").settings, { max_usd: 5 });
  });

  it("a key the schema does not have, a missing one and a wrong type name the key's line", async () => {
    const root = folder({
      "harness.yaml": "plugins: {local: [plug]}\nmiddleware:\n  - use: acme.cap\n    max_usdd: 5\n  - {use: acme.cap, id: c2, max_usd: lots}\n  - {use: acme.guard, limit: 1}\n",
      "plug.mjs": pluginModule("acme"),
    });
    const found = await problems(join(root, "harness.yaml"));
    assert.deepEqual(found.map((p) => [p.kind, p.rule, p.line]), [["invalid_settings", "settings", 4], ["invalid_settings", "settings", 5], ["invalid_settings", "settings", 6]]);
    assert.match(found[0]?.message ?? "", /max_usdd: unknown setting \(did you mean max_usd\?\); max_usd: Field required/);
    assert.match(found[2]?.message ?? "", /guard is a function and takes no settings: limit/);
  });

  it("a schema that allows more keys (additionalProperties) takes unknown ones", async () => {
    const lax = 'const lax = configurable({ name: "lax", hooks: ["model.before"], failMode: "closed", settings: { type: "object", properties: { limit: { type: "integer", default: 3 } }, additionalProperties: true } }, (s) => { globalThis.__laxSettings = s; return async () => undefined; });';
    const module = pluginModule("acme", lax).replace("middleware: [guard, cap]", "middleware: [guard, cap, lax]");
    const root = folder({ "harness.yaml": "plugins: {local: [plug]}\nmiddleware: [{use: acme.lax, extra: x}]\n", "plug.mjs": module });
    await load(join(root, "harness.yaml"));
    assert.deepEqual((globalThis as Record<string, unknown>)["__laxSettings"], { extra: "x", limit: 3 });
  });

  it("a built-in's rule between settings is a problem even in a task not selected", async () => {
    const root = folder({
      "harness.yaml": "tasks:\n  other:\n    validation:\n      rules:\n        - {use: harnessweaver.loop_guard, warn_after: 5, block_after: 3}\n",
    });
    const problem = await onlyProblem(join(root, "harness.yaml"));
    assert.deepEqual([problem.kind, problem.item, problem.line], ["invalid_settings", "tasks.other.validation.rules[0] (harnessweaver.loop_guard)", 5]);
  });
});

describe("org profiles", () => {
  it("are found in the directories of HARNESSWEAVER_ORG_PROFILES when none are given", async () => {
    const root = folder({
      "harness.yaml": "profiles: [org://acme/base]\n",
      "orgs/one/acme/base.yaml": "middleware:\n  - {use: harnessweaver.tool_allowlist, id: allow, allow: [search]}\n",
    });
    const saved = process.env["HARNESSWEAVER_ORG_PROFILES"];
    process.env["HARNESSWEAVER_ORG_PROFILES"] = [join(root, "nowhere"), join(root, "orgs/one")].join(process.platform === "win32" ? ";" : ":");
    try {
      const harness = await load(join(root, "harness.yaml"));
      const entry = harness.entry("allow");
      assert.deepEqual([entry.layer, entry.file, entry.declaration.band], ["org_profile", "orgs/one/acme/base.yaml", "baseline"]);
    } finally {
      if (saved === undefined) delete process.env["HARNESSWEAVER_ORG_PROFILES"];
      else process.env["HARNESSWEAVER_ORG_PROFILES"] = saved;
    }
  });
});
