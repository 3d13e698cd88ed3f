/**
 * A local plugin module that imports the package by name from a folder with no node_modules above
 * it (a clone's examples/refunds/app/harness_plugin.mjs): imported again with the name resolved
 * to this package (spec/selfref.ts). In a file of its own: once the resolution hook is registered,
 * Node resolves off-thread and an import error's `code` no longer comes back, which
 * spec-plugins.test.ts's messages pin for a process that never needed the hook.
 */

import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { load } from "../index.js";
import { folder, problems } from "./spec-support.js";

describe("local plugins importing the package by name", () => {
  it("a plugin module that imports the package by name, with no node_modules above it, gets this package", async () => {
    // As a clone's examples/refunds/app/harness_plugin.mjs does: the name resolves to the package
    // loading the spec (its self-reference), so its Plugin is this package's Plugin class.
    const root = folder({
      "harness.yaml": "plugins: {local: [app.byname]}\nmiddleware:\n  - {use: byname.guard}\n",
      "app/byname.mjs": `import { Plugin, middleware, Block } from "harnessweaver";
const guard = middleware({ name: "guard", hooks: ["tool.before"], failMode: "closed" }, () => Block("guarded"));
export const plugin = new Plugin({ namespace: "byname", version: "1.0.0", middleware: [guard] });
`,
      "app/subpath.mjs": 'import "harnessweaver/no-such-export";\nexport const plugin = null;\n',
    });
    const harness = await load(join(root, "harness.yaml"));
    assert.deepEqual(harness.bus.chain("tool.before").map((d) => d.name), ["byname.guard"]);
    // A subpath the package does not export still fails as an import error.
    const spec = join(root, "subpath.yaml");
    writeFileSync(spec, "plugins: {local: [app.subpath]}\n");
    const found = await problems(spec);
    assert.deepEqual(found.map((p) => p.kind), ["plugin_import_error"]);
  });

});
