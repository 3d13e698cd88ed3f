import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Declaration, declare, DeclarationError, middleware, snakeCase, type DeclarationOptions } from "../index.js";
import { applyOverrides } from "../declaration.js";

/** Declares values as a JavaScript caller might pass them, bypassing the types. */
const raw = (options: Record<string, unknown>) =>
  declare({ name: "guard", hooks: ["tool.before"], failMode: "closed", ...options } as unknown as DeclarationOptions);

function rejects(options: Record<string, unknown>, kind: string, rule: string, shown?: string): void {
  assert.throws(
    () => raw(options),
    (error: unknown) => {
      assert.ok(error instanceof DeclarationError, String(error));
      assert.equal(error.kind, kind);
      assert.equal(error.rule, rule);
      if (shown !== undefined) assert.ok(error.message.includes(shown), error.message);
      assert.match(error.message, /\((I\d|rule \d|ruling \d+|R2)\)$/);
      return true;
    },
  );
}

describe("names (I1)", () => {
  it("accepts identifiers joined by dots", () => {
    for (const name of ["a", "_tracer", "acme.refund_cap", "Acme.Refund_Cap2", "a1.b_2.C"]) {
      assert.equal(raw({ name }).name, name);
    }
  });
  for (const name of ["", "1abc", "a..b", "a b", "a-b", "acme.", ".a", "é"]) {
    it(`rejects ${JSON.stringify(name)}`, () => rejects({ name }, "invalid_name", "I1", `'${name}'`));
  }
  it("rejects a name that is not a string", () => rejects({ name: 42 }, "invalid_name", "I1", "invalid name 42:"));
  it("shows a lone surrogate as an escape (I17)", () => {
    rejects({ name: "g\udcff" }, "invalid_name", "I1", "invalid name 'g\\udcff':");
    rejects({ hooks: ["\udcff", 5] }, "invalid_hooks", "I3", "invalid hooks ['\\udcff', 5]:");
    rejects({ hooks: ["nope", 5] }, "invalid_hooks", "I3"); // every item a string before any lookup
    rejects({ timeout: "307445735m" }, "invalid_duration", "ruling-15", "it is longer than the longest timeout");
  });
  it("snake-cases class names", () => {
    assert.equal(snakeCase("RefundCap"), "refund_cap");
    assert.equal(snakeCase("HTTPGuard"), "http_guard");
    assert.equal(snakeCase("Guard2Factor"), "guard2_factor");
  });
  it("defaults to the function's name, or the class name in snake case", () => {
    async function noWeekendRefunds() {}
    class RefundCap {
      async call() {}
    }
    const options = { hooks: ["tool.before"], failMode: "closed" } as const;
    assert.equal(middleware(options, noWeekendRefunds).declaration.name, "noWeekendRefunds");
    assert.equal(middleware(options, new RefundCap()).declaration.name, "refund_cap");
    assert.equal(middleware({ ...options, name: "explicit" }, noWeekendRefunds).declaration.name, "explicit");
  });
  it("rejects a target that is not callable", () => {
    assert.throws(() => middleware({ hooks: ["tool.before"], failMode: "closed" }, {} as never), TypeError);
  });
});

describe("hooks (I3, ruling 2)", () => {
  it("collapses repeats and keeps catalogue order", () => {
    assert.deepEqual(raw({ hooks: ["tool.after", "tool.before", "tool.after"] }).hooks, ["tool.before", "tool.after"]);
    assert.deepEqual(raw({ hooks: new Set(["task.end", "task.start"]) }).hooks, ["task.start", "task.end"]);
  });
  it("rejects an empty list", () => rejects({ hooks: [] }, "invalid_hooks", "I3", "invalid hooks []"));
  it("rejects a string", () => rejects({ hooks: "tool.before" }, "invalid_hooks", "I3", "'tool.before'"));
  it("rejects a non-string item", () => rejects({ hooks: ["tool.before", 7] }, "invalid_hooks", "I3", "['tool.before', 7]"));
  it("rejects an unknown hook point", () => rejects({ hooks: ["tool.befor"] }, "unknown_hook", "ruling-2", "'tool.befor'"));
});

describe("bands, fail modes and R2", () => {
  it("defaults the band to app", () => assert.equal(raw({}).band, "app"));
  it("rejects unknown and mis-cased bands", () => {
    rejects({ band: "core" }, "invalid_band", "rule-1", "'core'");
    rejects({ band: "Baseline" }, "invalid_band", "rule-1", "'Baseline'");
    rejects({ band: 1 }, "invalid_band", "rule-1", "invalid band 1:");
  });
  it("requires a fail mode, also when the types are bypassed (ruling 14)", () => {
    rejects({ failMode: undefined }, "missing_fail_mode", "ruling-14", "middleware 'guard' declares no fail_mode");
    rejects({ failMode: null }, "missing_fail_mode", "ruling-14");
    rejects({ failMode: undefined, band: "baseline" }, "missing_fail_mode", "ruling-14");
  });
  it("rejects other fail modes", () => {
    rejects({ failMode: "closd" }, "invalid_fail_mode", "ruling-14", "'closd'");
    rejects({ failMode: "Closed" }, "invalid_fail_mode", "ruling-14", "'Closed'");
  });
  it("refuses open baseline middleware (R2)", () => {
    rejects({ band: "baseline", failMode: "open" }, "baseline_fail_open", "R2", "'guard'");
    assert.equal(raw({ band: "baseline", failMode: "closed" }).band, "baseline");
  });
  it("are made only by declare()", () => {
    assert.throws(() => new Declaration(Symbol("fake") as never, "x", ["tool.before"], "app", "closed", null), TypeError);
  });
  it("keeps a timeout in seconds and exact nanoseconds", () => {
    const decl = raw({ timeout: "1.5s" });
    assert.equal(decl.timeout, 1.5);
    assert.equal(decl.timeoutNs, 1_500_000_000n);
    assert.equal(raw({ timeout: null }).timeout, null);
    assert.ok(Object.isFrozen(decl) && Object.isFrozen(decl.hooks));
  });
});

describe("declaration check order (I4)", () => {
  it("name before band", () => rejects({ name: "a-b", band: "core" }, "invalid_name", "I1"));
  it("hooks before band", () => rejects({ hooks: [], band: "core" }, "invalid_hooks", "I3"));
  it("unknown hook before band", () => rejects({ hooks: ["tool.befor"], band: "core" }, "unknown_hook", "ruling-2"));
  it("band before fail mode", () => rejects({ band: "core", failMode: undefined }, "invalid_band", "rule-1"));
  it("fail mode before timeout", () => rejects({ failMode: "closd", timeout: "2h" }, "invalid_fail_mode", "ruling-14"));
  it("timeout before R2", () => rejects({ band: "baseline", failMode: "open", timeout: "2 s" }, "invalid_duration", "ruling-15"));
});

describe("registration overrides (I10) and their check order (I4)", () => {
  const decl = raw({ hooks: ["tool.before", "tool.after"] });
  const override = (overrides: Record<string, unknown>) => applyOverrides(decl, overrides as never);
  const fails = (overrides: Record<string, unknown>, kind: string) =>
    assert.throws(() => override(overrides), (error: unknown) => (error as { kind?: string }).kind === kind && error?.constructor.name === "RegistrationError");

  it("sets name, band, fail mode and timeout, and narrows hooks", () => {
    const final = override({ name: "guard_v2", band: "task", failMode: "open", timeout: 2, hooks: ["tool.after"] });
    assert.deepEqual(final.toJSON(), { name: "guard_v2", hooks: ["tool.after"], band: "task", fail_mode: "open", timeout: 2 });
  });
  it("keeps the declaration where an override is absent or null", () => {
    assert.deepEqual(override({ band: null, name: undefined }).toJSON(), decl.toJSON());
  });
  it("never widens hooks (ruling 18)", () => {
    const narrow = raw({});
    assert.throws(() => applyOverrides(narrow, { hooks: ["tool.before", "tool.after"] }), {
      message:
        "registration of middleware 'guard' widens its hooks with 'tool.after': it declares tool.before; a registration may narrow the declared hook points, never widen them (ruling 18)",
    });
  });
  it("checks R2 on the result", () => {
    fails({ band: "baseline", failMode: "open" }, "baseline_fail_open");
    const baseline = raw({ band: "baseline" });
    assert.equal(applyOverrides(baseline, { band: "app", failMode: "open" }).failMode, "open");
  });
  it("name before band", () => fails({ name: "a-b", band: "core" }, "invalid_name"));
  it("hooks type before band", () => fails({ hooks: "tool.before", band: "core" }, "invalid_hooks"));
  it("unknown hook before widened", () => fails({ hooks: ["tool.befor"] }, "unknown_hook"));
  it("widened before band", () => fails({ hooks: ["task.end"], band: "core" }, "hooks_widened"));
  it("band before fail mode", () => fails({ band: "core", failMode: "closd" }, "invalid_band"));
  it("fail mode before timeout", () => fails({ failMode: "closd", timeout: "2h" }, "invalid_fail_mode"));
  it("timeout before R2", () => fails({ band: "baseline", failMode: "open", timeout: "0s" }, "invalid_duration"));
  it("rejects an empty hooks override", () => fails({ hooks: [] }, "invalid_hooks"));
});
