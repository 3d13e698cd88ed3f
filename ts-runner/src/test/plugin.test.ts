import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import { Block, DeclarationError, middleware } from "../index.js";
import { configurable, isConfigurable, Plugin, PluginError, type PluginOptions } from "../plugin.js";

const plain = middleware({ name: "tracer", hooks: ["tool.before"], failMode: "open" }, async () => undefined);

const cap = configurable(
  {
    name: "refund_cap",
    hooks: ["tool.before", "tool.after"],
    failMode: "closed",
    settings: { type: "object", properties: { limit: { type: "integer", default: 100 } } },
  },
  (settings) => async () => (Number(settings["limit"]) < 10 ? Block("over", { code: "cap" }) : undefined),
);

describe("configurable", () => {
  it("declares now and builds a middleware per settings", async () => {
    assert.ok(isConfigurable(cap));
    assert.equal(cap.declaration.name, "refund_cap");
    assert.deepEqual(cap.declaration.hooks, ["tool.before", "tool.after"]);
    assert.equal(cap.settings.type, "object");
    const built = cap.build({ limit: 5 });
    assert.equal(built.declaration.name, "refund_cap");
    assert.equal(built.declaration.failMode, "closed");
    const answer = await built.call(undefined as never, undefined as never, undefined as never);
    assert.equal((answer as { kind: string }).kind, "block");
    assert.equal(await cap.build({ limit: 50 }).call(undefined as never, undefined as never, undefined as never), undefined);
  });

  it("validates the declaration as middleware() does (ruling 14)", () => {
    assert.throws(
      () => configurable({ name: "x", hooks: ["tool.before"], settings: { type: "object" } } as never, () => async () => undefined),
      (error: unknown) => error instanceof DeclarationError && error.kind === "missing_fail_mode",
    );
  });

  it("refuses settings that are not an object schema", () => {
    assert.throws(
      () => configurable({ name: "x", hooks: ["tool.before"], failMode: "open", settings: { type: "array" } as never }, () => async () => undefined),
      /settings must be the JSON Schema of an object/,
    );
  });

  it("a plain middleware is not configurable", () => {
    assert.equal(isConfigurable(plain), false);
  });
});

describe("Plugin", () => {
  const make = (options: Partial<PluginOptions>) =>
    new Plugin({ namespace: "acme", version: "1.0.0", ...options } as PluginOptions);

  it("names its middleware namespace.name and finds them either way", () => {
    const plugin = make({ middleware: [plain, cap] });
    assert.deepEqual(plugin.names(), ["acme.tracer", "acme.refund_cap"]);
    assert.equal(plugin.get("acme.refund_cap"), cap);
    assert.equal(plugin.get("tracer"), plain);
    assert.throws(() => plugin.get("acme.nope"), /has no middleware 'acme.nope'; it has acme.tracer, acme.refund_cap/);
  });

  it("refuses a namespace that is not one identifier (I1)", () => {
    for (const namespace of ["", "a.b", "1a", "a-b", 7]) {
      assert.throws(
        () => make({ namespace } as never),
        (error: unknown) => error instanceof DeclarationError && error.kind === "invalid_name" && error.rule === "I1",
      );
    }
  });

  it("needs a version", () => {
    assert.throws(() => make({ version: " " }), (error: unknown) => error instanceof PluginError && error.kind === "invalid_version");
  });

  it("refuses two middleware of one name (I2) and anything not middleware", () => {
    assert.throws(() => make({ middleware: [plain, plain] }), (error: unknown) => error instanceof DeclarationError && error.kind === "duplicate_name");
    assert.throws(() => make({ middleware: [(() => undefined) as never] }), TypeError);
  });

  it("takes profiles as file URLs, absolute paths or objects", () => {
    const file = pathToFileURL("/srv/acme/baseline.yaml");
    const plugin = make({ profiles: { baseline: file, strict: "/srv/acme/strict.yaml", inline: { middleware: [] } } });
    assert.equal(plugin.profile("baseline"), "/srv/acme/baseline.yaml");
    assert.equal(plugin.profile("strict"), "/srv/acme/strict.yaml");
    assert.deepEqual(plugin.profile("inline"), { middleware: [] });
    assert.ok(Object.isFrozen(plugin.profile("inline")));
    assert.throws(() => plugin.profile("nope"), /has no profile 'nope'; it has baseline, strict, inline/);
  });

  it("refuses a relative profile path and a bad profile name", () => {
    assert.throws(() => make({ profiles: { baseline: "baseline.yaml" } }), (error: unknown) => error instanceof PluginError && /import\.meta\.url/.test(error.message));
    assert.throws(() => make({ profiles: { "bad name": {} } }), (error: unknown) => error instanceof DeclarationError && error.kind === "invalid_name");
  });
});
