import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  BANDS,
  declareIn,
  HookBus,
  isLayer,
  LAYERS,
  middleware,
  RegistrationError,
  type Band,
  type Declaration,
  type FailMode,
  type HookPoint,
  type Layer,
  type RegisterOptions,
} from "../index.js";

const ALL = Object.keys(LAYERS) as Layer[];
const PROFILES: readonly Layer[] = ["org_profile", "plugin_profile", "profile_file"];
const OUTSIDE: readonly Layer[] = ["builtin_profile", "framework", "app", "env", "task"];

interface Spec {
  readonly name?: string;
  readonly band?: Band;
  readonly failMode?: FailMode;
  readonly hooks?: readonly HookPoint[];
}

/** A declared middleware; by default "guard" on tool.before and tool.after, app, closed. */
function declared({ name = "guard", band = "app", failMode = "closed", hooks = ["tool.before", "tool.after"] }: Spec = {}) {
  return middleware({ name, band, failMode, hooks }, async () => undefined);
}

/** The band a middleware ends up in when registered as a spec item. */
function bandIn(layer: Layer, options: RegisterOptions = {}, spec: Spec = {}): Band {
  return new HookBus().register(declared(spec), { ...options, layer }).band;
}

/** Runs `fn` and checks that it throws a `RegistrationError` of `kind`/`rule` naming `parts`. */
function rejects(fn: () => unknown, kind: string, rule: string, ...parts: string[]): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof RegistrationError, String(error));
    assert.equal(error.kind, kind);
    assert.equal(error.rule, rule);
    for (const part of parts) assert.ok(error.message.includes(part), `${part} not in: ${error.message}`);
    assert.ok(error.message.endsWith(`(${rule.replace("-", " ")})`), error.message);
    return true;
  });
}

/** Passes values as a JavaScript caller (or a spec file) might, bypassing the types. */
const loose = (value: unknown) => value as never;

describe("the layers and their bands (I13)", () => {
  it("names eight layers, outermost first, each with the band of the spec table", () => {
    assert.deepEqual(Object.entries(LAYERS), [
      ["org_profile", "baseline"],
      ["plugin_profile", "baseline"],
      ["profile_file", "baseline"],
      ["builtin_profile", "platform"],
      ["framework", "platform"],
      ["app", "app"],
      ["env", "app"],
      ["task", "task"],
    ]);
    assert.ok(Object.isFrozen(LAYERS));
    for (const layer of ALL) assert.ok(isLayer(layer));
    for (const other of ["apps", "App", "", "toString", "baseline", 5, null, undefined]) assert.equal(isLayer(other), false);
  });
  for (const layer of ALL) {
    it(`${layer}: its middleware run in the ${LAYERS[layer]} band`, () => {
      assert.equal(bandIn(layer), LAYERS[layer]);
    });
  }
  it("orders a chain by the layers' bands, then registration order; outbound reversed", () => {
    const bus = new HookBus();
    for (const layer of [...ALL].reverse()) bus.register(declared({ name: `${layer}_mw` }), { layer });
    const names = (hook: HookPoint) => bus.chain(hook).map((d) => d.name);
    const inbound = ["profile_file", "plugin_profile", "org_profile", "framework", "builtin_profile", "env", "app", "task"];
    assert.deepEqual(names("tool.before"), inbound.map((layer) => `${layer}_mw`));
    assert.deepEqual(names("tool.after"), inbound.map((layer) => `${layer}_mw`).reverse());
  });
  it("ignores the declared band: baseline declared in the app layer runs in app", () => {
    assert.equal(bandIn("app", {}, { band: "baseline" }), "app");
    assert.equal(bandIn("framework", {}, { band: "baseline" }), "platform");
  });
  it("ignores the declared band: task declared in an org profile runs in baseline", () => {
    assert.equal(bandIn("org_profile", {}, { band: "task" }), "baseline");
  });
  it("leaves direct registration alone: without a layer the declared band applies (I10)", () => {
    assert.equal(new HookBus().register(declared({ band: "task" })).band, "task");
    assert.equal(new HookBus().register(declared(), { band: "baseline" }).band, "baseline");
    assert.equal(new HookBus().register(declared(), { layer: loose(null), band: "baseline" }).band, "baseline");
  });
});

describe("an item's band: restate or move inward, never outward (ruling 16, S8)", () => {
  for (const layer of ALL) {
    const own = BANDS.indexOf(LAYERS[layer]);
    it(`${layer}: restates ${LAYERS[layer]} and moves inward to every later band`, () => {
      for (const band of BANDS.slice(own)) assert.equal(bandIn(layer, { band }), band);
    });
    for (const band of BANDS.slice(1, own)) {
      it(`${layer}: asking for ${band} is band_outward`, () => {
        rejects(
          () => bandIn(layer, { band }),
          "band_outward",
          "ruling-16",
          `middleware 'guard' declared in the ${layer} layer (band ${LAYERS[layer]}) cannot move out to band '${band}': ` +
            "a spec item may restate its layer's band or move it inward, never outward (ruling 16)",
        );
      });
    }
  }
  for (const layer of OUTSIDE) {
    it(`${layer}: asking for baseline is baseline_outside_profile (S8)`, () => {
      rejects(
        () => bandIn(layer, { band: "baseline" }),
        "baseline_outside_profile",
        "S8",
        `middleware 'guard' declared in the ${layer} layer cannot be placed in band 'baseline': ` +
          "only profiles (org profiles, plugin profiles, profile files) put middleware in baseline (S8)",
      );
    });
  }
  for (const layer of PROFILES) {
    it(`${layer}: may restate baseline`, () => assert.equal(bandIn(layer, { band: "baseline" }), "baseline"));
  }
  it("names the middleware by its new name", () => {
    rejects(() => bandIn("task", { name: "renamed", band: "app" }), "band_outward", "ruling-16", "'renamed'", "'app'");
    rejects(() => bandIn("env", { name: "renamed", band: "baseline" }), "baseline_outside_profile", "S8", "'renamed'");
  });
});

describe("R2 on the result, whichever layer put it in baseline", () => {
  it("an open middleware declared in a profile fails", () => {
    for (const layer of PROFILES) {
      rejects(() => bandIn(layer, {}, { failMode: "open" }), "baseline_fail_open", "R2", "'guard'");
    }
  });
  it("an item that closes it makes it valid in baseline", () => {
    const decl = new HookBus().register(declared({ failMode: "open" }), { layer: "org_profile", failMode: "closed" });
    assert.deepEqual([decl.band, decl.failMode], ["baseline", "closed"]);
  });
  it("an item that opens a closed one fails", () => {
    rejects(() => bandIn("profile_file", { failMode: "open" }), "baseline_fail_open", "R2", "'guard'");
    rejects(() => bandIn("plugin_profile", { failMode: "open", band: "baseline" }), "baseline_fail_open", "R2");
  });
  it("an open one moved inward from a profile is valid", () => {
    assert.equal(bandIn("profile_file", { band: "platform" }, { failMode: "open" }), "platform");
    assert.equal(bandIn("org_profile", { band: "task" }, { failMode: "open" }), "task");
  });
  it("names the middleware by its new name", () => {
    rejects(() => bandIn("org_profile", { name: "renamed" }, { failMode: "open" }), "baseline_fail_open", "R2", "'renamed'");
  });
  it("open is fine outside baseline, even when the decorator said baseline", () => {
    const bus = new HookBus();
    assert.throws(() => middleware({ hooks: ["tool.before"], band: "baseline", failMode: "open" }, async () => undefined));
    assert.equal(bus.register(declared({ failMode: "open" }), { layer: "framework" }).failMode, "open");
  });
});

describe("an item's hooks narrow, never widen (ruling 18)", () => {
  it("narrows: the middleware leaves the dropped hook point", () => {
    const bus = new HookBus();
    bus.register(declared(), { layer: "app", hooks: ["tool.after"] });
    assert.deepEqual(bus.chain("tool.before"), []);
    assert.deepEqual(bus.chain("tool.after").map((d) => d.name), ["guard"]);
  });
  it("widening is hooks_widened", () => {
    rejects(() => bandIn("task", { hooks: ["model.before"] }), "hooks_widened", "ruling-18", "'model.before'", "'guard'");
  });
  it("hooks of the wrong type or unknown are the usual errors", () => {
    rejects(() => bandIn("env", { hooks: loose("tool.before") }), "invalid_hooks", "I3");
    rejects(() => bandIn("env", { hooks: [] }), "invalid_hooks", "I3");
    rejects(() => bandIn("env", { hooks: loose(["tool.around"]) }), "unknown_hook", "ruling-2", "'tool.around'");
  });
});

describe("unknown layers (I13)", () => {
  const message = "a layer is one of org_profile, plugin_profile, profile_file, builtin_profile, framework, app, env or task (I13)";
  it("names the layer", () => {
    rejects(() => bandIn(loose("apps")), "unknown_layer", "I13", `invalid layer 'apps': ${message}`);
    rejects(() => bandIn(loose("App")), "unknown_layer", "I13", "'App'");
    rejects(() => bandIn(loose("toString")), "unknown_layer", "I13", "'toString'");
    rejects(() => bandIn(loose(5)), "unknown_layer", "I13", "invalid layer 5:");
    rejects(() => bandIn(loose(["app"])), "unknown_layer", "I13", "invalid layer ['app']:");
  });
  it("declareIn needs a layer: none is unknown_layer", () => {
    rejects(() => declareIn(declared().declaration, loose(undefined)), "unknown_layer", "I13", "invalid layer None:");
    rejects(() => declareIn(declared().declaration, loose(null)), "unknown_layer", "I13", "invalid layer None:");
  });
});

describe("check order in a layer (I4)", () => {
  const order = (options: Record<string, unknown>, layer: unknown = "task") => () => bandIn(loose(layer), loose(options));
  it("the layer first", () => rejects(order({ band: "core", name: "1x" }, "nowhere"), "unknown_layer", "I13", "'nowhere'"));
  it("then name", () => rejects(order({ name: "1x", hooks: ["model.before"], band: "app" }), "invalid_name", "I1", "'1x'"));
  it("then hooks", () => rejects(order({ hooks: ["tool.around"], band: "baseline" }, "app"), "unknown_hook", "ruling-2"));
  it("then widened hooks", () => rejects(order({ hooks: ["task.end"], band: "baseline" }, "app"), "hooks_widened", "ruling-18"));
  it("then an invalid band", () => rejects(order({ band: "core", failMode: "sometimes" }), "invalid_band", "rule-1", "'core'"));
  it("then the layer's band rule", () => {
    rejects(order({ band: "app", failMode: "sometimes", timeout: "2 s" }), "band_outward", "ruling-16", "'app'");
    rejects(order({ band: "baseline", failMode: "open" }, "env"), "baseline_outside_profile", "S8");
  });
  it("then fail_mode", () => rejects(order({ failMode: "sometimes", timeout: "2 s" }), "invalid_fail_mode", "ruling-14"));
  it("then timeout", () => rejects(order({ timeout: "2 s", failMode: "open" }, "org_profile"), "invalid_duration", "ruling-15"));
  it("then R2, then the name must be new (I2)", () => {
    const bus = new HookBus();
    bus.register(declared(), { layer: "app" });
    rejects(() => bus.register(declared(), { layer: "org_profile", failMode: "open" }), "baseline_fail_open", "R2");
    rejects(() => bus.register(declared(), { layer: "task" }), "duplicate_name", "I2", "'guard'");
  });
});

describe("declareIn: a spec item checked, not registered", () => {
  it("returns the declaration as the layer makes it, and leaves the original alone", () => {
    const mw = declared({ band: "task", failMode: "open" });
    const got: Declaration = declareIn(mw.declaration, "profile_file", { band: "platform", hooks: ["tool.after"], timeout: "250ms" });
    assert.deepEqual(got.toJSON(), { name: "guard", hooks: ["tool.after"], band: "platform", fail_mode: "open", timeout: 0.25 });
    assert.equal(declareIn(mw.declaration, "env").band, "app");
    assert.equal(mw.declaration.band, "task");
  });
  it("checks like register, the same errors", () => {
    const decl = declared().declaration;
    rejects(() => declareIn(decl, "app", { band: "baseline" }), "baseline_outside_profile", "S8");
    rejects(() => declareIn(decl, "task", { band: "platform" }), "band_outward", "ruling-16");
    rejects(() => declareIn(decl, "org_profile", { failMode: "open" }), "baseline_fail_open", "R2");
  });
  it("registers nothing: the name stays free", () => {
    const bus = new HookBus();
    const mw = declared();
    declareIn(mw.declaration, "app");
    assert.deepEqual(bus.chain("tool.before"), []);
    assert.equal(bus.register(mw, { layer: "app" }).name, "guard");
  });
  it("needs a Declaration", () => {
    assert.throws(() => declareIn(declared() as never, "app"), TypeError);
  });
});
