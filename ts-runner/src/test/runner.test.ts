import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { runCase } from "../conformance/case.js";
import { corpusDirectory, loadSamples } from "../conformance/corpus.js";
import { CATALOGUE } from "../testing/support.js";

const RUNNER = fileURLToPath(new URL("../runner.js", import.meta.url));
const FEATURES = new Set(["timeouts", "concurrency"]);

/** Talks to a runner process: each request line gets the next reply line. */
async function session(requests: object[], args: string[] = []): Promise<Record<string, unknown>[]> {
  const child = spawn(process.execPath, [RUNNER, ...args], { stdio: ["pipe", "pipe", "inherit"] });
  const lines = createInterface({ input: child.stdout });
  const replies: Record<string, unknown>[] = [];
  const done = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  for (const request of requests) child.stdin.write(`${JSON.stringify(request)}\n`);
  child.stdin.end(`${JSON.stringify({ cmd: "stop" })}\n`);
  for await (const line of lines) replies.push(JSON.parse(line) as Record<string, unknown>);
  await done;
  return replies;
}

const guard = (does: object, extra: object = {}) => ({ name: "guard", hooks: ["tool.before"], fail_mode: "closed", does, ...extra });

describe("the runner protocol (INTERPRETING.md §9)", () => {
  it("answers hello exactly, then runs cases, then stops", async () => {
    const replies = await session([
      { cmd: "hello", protocol: 1 },
      { cmd: "run", seq: 7, case: { id: "x", given: { middleware: [guard({ return: "block", reason: "no" })] }, when: [{ emit: "tool.before" }] } },
    ]);
    assert.deepEqual(replies[0], {
      protocol: 1,
      implementation: { name: "harnessweaver", language: "typescript", version: "0.1.0", core: "typescript" },
      // cedar: the engine (a devDependency) is installed wherever the tests run.
      features: ["timeouts", "concurrency", "throw-values", "harness-spec", "approvals", "cedar"],
    });
    assert.equal(replies[1]?.["seq"], 7);
    const actual = replies[1]?.["actual"] as { emits: { outcome: unknown; ran: unknown }[]; error: unknown };
    assert.equal(actual.error, null);
    assert.deepEqual(actual.emits[0]?.outcome, { kind: "block", reason: "no", code: null });
  });

  it("reads the catalogue from the corpus, keeping no copy", () => {
    assert.deepEqual(loadSamples(corpusDirectory({})), CATALOGUE.samples);
    assert.equal(corpusDirectory({ HARNESSWEAVER_CORPUS: "/somewhere" }), "/somewhere");
  });
});

describe("running cases (§2, §4, §6)", () => {
  const samples = CATALOGUE.samples;

  it("observes errors, chains for every hook point, emits and untimed traces", async () => {
    const reply = await runCase(
      {
        given: { middleware: [guard({ return: "continue", modify: { append: { "call.arguments.trail": "seen" } } })] },
        when: [{ emit: "tool.before" }, { emit: "tool.before", event_as: "tool.after" }, { emit: "tool.before" }],
      },
      samples,
      FEATURES,
    );
    assert.ok("actual" in reply);
    const actual = reply.actual as Record<string, Record<string, unknown>>;
    assert.deepEqual(actual["error"], {
      kind: "event_type_mismatch",
      rule: "I7",
      message: "hook point 'tool.before' takes a ToolCallEvent, got ToolResultEvent (I7)",
    });
    assert.deepEqual(Object.keys(actual["chains"] ?? {}), CATALOGUE.hooks.map((h) => h.name));
    assert.equal((actual["emits"] as unknown as unknown[]).length, 1);
    // The catalogue sample of tool.before, in the context named main: its run id is its name (I21).
    const correlation = { run: "main", step: 1, tool: "refund_payment" };
    assert.deepEqual(actual["traces"], {
      main: [
        { emit: 1, hook: "tool.before", ...correlation, kind: "outcome", middleware: "guard", band: "app", outcome: "continue", modified: true },
        { emit: 1, hook: "tool.before", ...correlation, kind: "hook", outcome: "continue", modified: true },
      ],
    });
  });

  it("reports a declaration error before any step", async () => {
    const reply = await runCase({ given: { middleware: [{ name: "guard", hooks: ["tool.before"] }] }, when: [{ emit: "tool.before" }] }, samples, FEATURES);
    assert.ok("actual" in reply);
    assert.equal((reply.actual["error"] as { kind: string }).kind, "missing_fail_mode");
    assert.deepEqual(reply.actual["emits"], []);
    assert.deepEqual(reply.actual["traces"], {});
  });

  it("runs concurrent emits with separate ran lists", async () => {
    const reply = await runCase(
      {
        given: { middleware: [guard({ sleep: 0, then: { return: "none" } })] },
        when: [{ concurrent: [{ emit: "tool.before", context: "a" }, { emit: "tool.before", context: "b" }] }],
      },
      samples,
      FEATURES,
    );
    assert.ok("actual" in reply);
    assert.deepEqual((reply.actual["emits"] as { ran: unknown }[]).map((e) => e.ran), [["guard"], ["guard"]]);
    assert.deepEqual(Object.keys(reply.actual["traces"] as object), ["a", "b"]);
  });

  it("reports what it cannot run as errored", async () => {
    const unknown = await runCase({ given: { middleware: [guard({ dance: true })] }, when: [{ emit: "tool.before" }] }, samples, FEATURES);
    assert.ok("errored" in unknown && unknown.message.includes("unknown behaviour"));
    const failedRegister = await runCase(
      { given: { middleware: [guard({ register: { name: "x", hooks: ["tool.before"] }, then: { return: "none" } })] }, when: [{ emit: "tool.before" }] },
      samples,
      FEATURES,
    );
    assert.ok("errored" in failedRegister && failedRegister.message.includes("declares no fail_mode"));
  });

  it("declares items in a layer (§2, I13): the layer sets the band; enabled false checks without registering", async () => {
    const item = (name: string, layer: unknown, register?: object) => guard({ return: "none" }, { name, band: "baseline", in: layer, ...(register && { register }) });
    const reply = await runCase(
      { given: { middleware: [item("t", "task"), item("off", "app", { enabled: false }), item("p", "plugin_profile", { enabled: true })] }, when: [] },
      samples,
      FEATURES,
    );
    assert.ok("actual" in reply);
    assert.equal(reply.actual["error"], null);
    assert.deepEqual((reply.actual["chains"] as Record<string, unknown>)["tool.before"], ["p", "t"]);
    const checked = await runCase({ given: { middleware: [item("off", "app", { enabled: false, band: "baseline" })] } }, samples, FEATURES);
    assert.ok("actual" in checked);
    assert.equal((checked.actual["error"] as { kind: string }).kind, "baseline_outside_profile");
    const unknown = await runCase({ given: { middleware: [item("g", "apps", { band: "core" })] } }, samples, FEATURES);
    assert.ok("actual" in unknown);
    assert.deepEqual(unknown.actual["error"], {
      kind: "unknown_layer",
      rule: "I13",
      message: "invalid layer 'apps': a layer is one of org_profile, plugin_profile, profile_file, builtin_profile, framework, app, env or task (I13)",
    });
  });

  it("reports enabled outside a spec item, or not a boolean, as errored", async () => {
    for (const extra of [{ register: { enabled: false } }, { in: "app", register: { enabled: "no" } }]) {
      const reply = await runCase({ given: { middleware: [guard({ return: "none" }, extra)] } }, samples, FEATURES);
      assert.ok("errored" in reply && reply.message.includes("enabled"), JSON.stringify(reply));
    }
  });

  it("runs the proposed throw-values cases: non-Errors thrown, sync or rejected", async () => {
    const features = new Set([...FEATURES, "throw-values"]);
    for (const does of [{ throw: "boom" }, { throw: null }, { throw: { code: 1 } }, { throw: 42, sync: true }]) {
      for (const failMode of ["closed", "open"]) {
        const reply = await runCase({ given: { middleware: [guard(does, { fail_mode: failMode })] }, when: [{ emit: "tool.before" }] }, samples, features);
        assert.ok("actual" in reply, JSON.stringify(reply));
        const [record] = (reply.actual["traces"] as { main: Record<string, unknown>[] }).main;
        assert.deepEqual(
          { failure: record?.["failure"], error: record?.["error"], outcome: record?.["outcome"] },
          { failure: "exception", error: "NonErrorThrown", outcome: failMode === "closed" ? "block" : "continue" },
        );
      }
    }
    const without = await runCase({ given: { middleware: [guard({ throw: "boom" })] }, when: [{ emit: "tool.before" }] }, samples, FEATURES);
    assert.ok("errored" in without);
  });
});
