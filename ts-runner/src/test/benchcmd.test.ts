/**
 * `harnessweaver bench` in the Node CLI (`benchcmd/`): the command's output in text and JSON on
 * the refunds example, its refusals (exit 2, naming what is wrong), the events file, and
 * `HookBus.handler`. Runs are tiny (`--rounds 3 --per 10`): nothing here asserts a time, only
 * structure, counts, finite positive numbers, and which middleware dominates when one does far
 * more work than the others (hashing 100 KB per call against nothing).
 *
 * The refunds example's Node plugin imports the package by name: the tests run on a copy of
 * it in a temporary folder whose node_modules links this package (as a user's project has it).
 * With HARNESSWEAVER_TEST_PYTHON (`nox -s ts` gives it), Python's command must give a document
 * with the same keys, hook points and middleware.
 */

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { after, before, describe, it } from "node:test";
import { main } from "../cli.js";
import { HookBus, middleware } from "../index.js";
import { chainOf, floorPass, pairedRatio } from "../benchcmd/floor.js";
import { sampleEvent } from "../benchcmd/samples.js";
import { RunContext } from "../context.js";
import type { ToolCallEvent } from "../events.js";

const run = promisify(execFile);
const REPO = fileURLToPath(new URL("../../../", import.meta.url));
const QUICK = ["--rounds", "3", "--per", "10"];
const KEYS = ["harnessweaver_bench", "implementation", "spec", "task", "env", "events", "rounds", "per", "hooks"];
const HOOK_KEYS = ["hook", "middleware", "events", "emit", "floor", "ratio", "outcomes", "dominant", "each"];

interface Ran {
  readonly status: number;
  readonly out: string;
  readonly err: string;
}

async function bench(...args: string[]): Promise<Ran> {
  let out = "";
  let err = "";
  const status = await main(["bench", ...args], { stdout: (t) => void (out += t), stderr: (t) => void (err += t) });
  return { status, out, err };
}

interface HookDoc {
  readonly hook: string;
  readonly middleware: string[];
  readonly events: number;
  readonly emit: { p50_ns: number; p99_ns: number };
  readonly floor: { p50_ns: number; p99_ns: number };
  readonly ratio: number;
  readonly outcomes: Record<string, number>;
  readonly dominant: { name: string; use: string | null; share: number };
  readonly each: { name: string; use: string | null; p50_ns: number; share: number }[];
}

function positive(value: unknown, what: string): void {
  assert.ok(typeof value === "number" && Number.isFinite(value) && value > 0, `${what} is a finite number > 0, got ${String(value)}`);
}

/** The document's structure: every key in order, every number finite and positive, counts adding up. */
function checkDocument(doc: Record<string, unknown>, per: number, rounds: number): HookDoc[] {
  assert.deepEqual(Object.keys(doc), KEYS);
  assert.equal(doc["harnessweaver_bench"], 1);
  assert.equal(doc["implementation"], "ts");
  const hooks = doc["hooks"] as HookDoc[];
  assert.ok(hooks.length > 0);
  for (const h of hooks) {
    assert.deepEqual(Object.keys(h), HOOK_KEYS);
    assert.deepEqual(Object.keys(h.emit), ["p50_ns", "p99_ns"]);
    assert.deepEqual(Object.keys(h.floor), ["p50_ns", "p99_ns"]);
    assert.deepEqual(Object.keys(h.dominant), ["name", "use", "share"]);
    for (const value of [h.emit.p50_ns, h.emit.p99_ns, h.floor.p50_ns, h.floor.p99_ns, h.ratio, h.dominant.share]) positive(value, h.hook);
    assert.equal(Object.values(h.outcomes).reduce((a, b) => a + b, 0), per * (rounds - 2), `${h.hook}: one outcome per timed emit`);
    assert.deepEqual(h.each.map((e) => e.name), h.middleware);
    for (const e of h.each) {
      assert.deepEqual(Object.keys(e), ["name", "use", "p50_ns", "share"]);
      positive(e.p50_ns, `${h.hook} ${e.name}`);
      positive(e.share, `${h.hook} ${e.name} share`);
    }
    assert.ok(Math.abs(h.each.reduce((a, e) => a + e.share, 0) - 1) < 1e-9, "the shares add up to 1");
    assert.equal(h.dominant.share, Math.max(...h.each.map((e) => e.share)));
  }
  return hooks;
}

const HEAVY_PLUGIN = `
import { createHash } from "node:crypto";
import { Plugin, middleware } from "harnessweaver";
const BLOCK = Buffer.alloc(100 * 1024, 7);
const light = middleware({ name: "light", hooks: ["tool.before"], failMode: "open" }, () => undefined);
const hashing = middleware({ name: "hashing", hooks: ["tool.before"], failMode: "open" }, () => {
  createHash("sha256").update(BLOCK).digest();
  return undefined;
});
// Never answers: the bus cuts it off at 50 ms; awaited bare, it would wait for ever.
const stuck = middleware({ name: "stuck", hooks: ["tool.before"], failMode: "open", timeout: "50ms" }, () => new Promise(() => {}));
export const plugin = new Plugin({ namespace: "heavy", version: "1.0.0", middleware: [light, hashing, stuck] });
`;

const STUCK_SPEC = `plugins:
  local: ["app.heavy_plugin"]
middleware:
  - {use: heavy.light, id: first}
  - {use: heavy.stuck, id: stuck}
`;

const HEAVY_SPEC = `plugins:
  local: ["app.heavy_plugin"]
middleware:
  - {use: heavy.light, id: first}
  - {use: heavy.hashing, id: hash}
  - {use: heavy.light, id: last}
`;

const BLOCKING_SPEC = `middleware:
  - {use: harnessweaver.tool_allowlist, id: lookups_only, allow: [lookup_order]}
`;

const TOOL_EVENT = { step: 1, tool: { name: "refund_payment" }, call: { id: "c1", name: "refund_payment", arguments: { amount_usd: 20 } } };
const LOOKUP_EVENT = { step: 2, tool: { name: "lookup_order" }, call: { id: "c2", name: "lookup_order", arguments: { order_id: "1" } } };

describe("harnessweaver bench (Node)", () => {
  let dir = "";
  let refunds = "";
  let orgs = "";
  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  const orgVariable = process.env["HARNESSWEAVER_ORG_PROFILES"];
  before(() => {
    delete process.env["HARNESSWEAVER_ORG_PROFILES"]; // the org/ folder beside the spec is taken only without it
    dir = mkdtempSync(join(tmpdir(), "hw-bench-"));
    mkdirSync(join(dir, "node_modules"));
    symlinkSync(join(REPO, "ts-runner"), join(dir, "node_modules", "harnessweaver"), "dir");
    cpSync(join(REPO, "examples", "refunds"), join(dir, "refunds"), { recursive: true, filter: (src) => !src.includes("__pycache__") });
    refunds = join(dir, "refunds", "harness.yaml");
    orgs = join(dir, "refunds", "org");
    mkdirSync(join(dir, "heavy", "app"), { recursive: true });
    file("heavy/app/heavy_plugin.mjs", HEAVY_PLUGIN);
    file("heavy/harness.yaml", HEAVY_SPEC);
    file("heavy/stuck.yaml", STUCK_SPEC);
    file("blocking.yaml", BLOCKING_SPEC);
  });
  after(() => {
    rmSync(dir, { recursive: true, force: true });
    if (orgVariable !== undefined) process.env["HARNESSWEAVER_ORG_PROFILES"] = orgVariable;
  });

  it("json on the refunds example: every key in order, the refunds chains, finite numbers > 0", async () => {
    const ran = await bench(refunds, "--org-profiles", orgs, ...QUICK, "--format", "json");
    assert.equal(ran.err, "");
    assert.equal(ran.status, 0);
    assert.match(ran.out, /^\{"harnessweaver_bench": 1, "implementation": "ts", [^\n]*\}\n$/, "one line, as Python's json.dumps writes it");
    assert.match(ran.out, /"p50_ns": \d+\.\d+/, "floats written as floats");
    const doc = JSON.parse(ran.out) as Record<string, unknown>;
    const hooks = checkDocument(doc, 10, 3);
    assert.deepEqual([doc["spec"], doc["task"], doc["env"], doc["events"], doc["rounds"], doc["per"]], [refunds, null, null, "samples", 3, 10]);
    const chains = Object.fromEntries(hooks.map((h) => [h.hook, h.middleware]));
    assert.deepEqual(Object.keys(chains), ["task.start", "step.start", "model.before", "model.after", "tool.before", "tool.after", "step.end", "task.end"]);
    assert.deepEqual(chains["tool.before"], ["audit", "hard_cap", "rag.redact_secrets", "acme.no_weekend_refunds", "cap"]);
    const tool = hooks.find((h) => h.hook === "tool.before");
    assert.equal(tool?.each.find((e) => e.name === "cap")?.use, "acme.refund_cap");
    assert.equal(tool?.events, 1);
  });

  it("text on the refunds example: the table, the lines to act on, the footer", async () => {
    const ran = await bench(refunds, "--org-profiles", orgs, ...QUICK);
    assert.equal(ran.status, 0, ran.err);
    const lines = ran.out.split("\n");
    assert.equal(lines[0], `harnessweaver bench ${refunds} on ts: 3 rounds (first 2 dropped) of 10 per batch, events: samples`);
    assert.match(lines[1] ?? "", /^hook +middleware +emit p50 +emit p99 +floor p50 +ratio +dominant \(share\) +outcomes$/);
    assert.match(ran.out, /^tool\.before +audit, hard_cap, rag\.redact_secrets, acme\.no_weekend_refunds, cap +\d[\d.]* +\d[\d.]* +\d[\d.]* +\d[\d.]*x +[\w.]+ \(\d+%\) +(continue|suspend) 10$/m);
    assert.match(ran.out, /^tool\.before: `[\w.]+`( \([\w.]+\))? is \d+% of the chain's own time$/m);
    assert.match(lines.at(-2) ?? "", /^floor = the same middleware awaited in a plain loop in the same rounds .* Times are per emit, in µs\.$/);
  });

  it("without --org-profiles, the org:// profiles come from the spec's own org/ folder, said on stderr", async () => {
    const ran = await bench(refunds, "--hook", "task.start", ...QUICK, "--format", "json");
    assert.equal(ran.status, 0, ran.err);
    const note = `harnessweaver bench: org:// profiles from ${orgs}, the spec's own org/ folder (no --org-profiles or HARNESSWEAVER_ORG_PROFILES was given)\n`;
    assert.equal(ran.err, note);
    assert.deepEqual((JSON.parse(ran.out) as { hooks: HookDoc[] }).hooks.map((h) => h.middleware), [["audit"]]);
  });

  it("--task refund --env staging: their middleware are timed, and the document says which", async () => {
    const ran = await bench(refunds, "--org-profiles", orgs, "--task", "refund", "--env", "staging", "--hook", "tool.before", ...QUICK, "--format", "json");
    assert.equal(ran.status, 0, ran.err);
    const doc = JSON.parse(ran.out) as Record<string, unknown>;
    const [tool] = checkDocument(doc, 10, 3);
    assert.deepEqual([doc["task"], doc["env"]], ["refund", "staging"]);
    assert.deepEqual(tool?.middleware, ["audit", "hard_cap", "rag.redact_secrets", "acme.no_weekend_refunds", "cap", "staging_tools", "pii", "small_cap"]);
  });

  it("--hook narrows to the hook points asked for, in catalogue order", async () => {
    const ran = await bench(refunds, "--org-profiles", orgs, "--hook", "task.end", "--hook", "model.before", ...QUICK, "--format", "json");
    assert.equal(ran.status, 0, ran.err);
    const hooks = (JSON.parse(ran.out) as { hooks: HookDoc[] }).hooks;
    assert.deepEqual(hooks.map((h) => h.hook), ["model.before", "task.end"]);
  });

  it("an unknown --hook, or one with no middleware, is exit 2 naming it", async () => {
    const unknown = await bench(refunds, "--org-profiles", orgs, "--hook", "tool.during", ...QUICK);
    assert.equal(unknown.status, 2);
    assert.equal(unknown.out, "");
    assert.match(unknown.err, /harnessweaver bench: error: argument --hook: invalid choice: 'tool\.during' \(choose from 'task\.start', /);
    const empty = await bench(join(dir, "heavy", "harness.yaml"), "--hook", "tool.after", ...QUICK);
    assert.equal(empty.status, 2);
    assert.equal(empty.err, "harnessweaver bench: error: --hook tool.after: no middleware runs there for the sample events (see `harnessweaver hooks`)\n");
  });

  it("bad arguments and a spec that does not load are exit 2", async () => {
    const rounds = await bench(refunds, "--rounds", "2");
    assert.equal(rounds.status, 2);
    assert.match(rounds.err, /harnessweaver bench: error: argument --rounds: must be at least 3: '2'\n$/);
    const per = await bench(refunds, "--per", "ten");
    assert.match(per.err, /argument --per: not a whole number: 'ten'/);
    const format = await bench(refunds, "--format", "yaml");
    assert.match(format.err, /argument --format: invalid choice: 'yaml' \(choose from 'text', 'json'\)/);
    const missing = await bench(join(dir, "nope.yaml"), ...QUICK);
    assert.equal(missing.status, 2);
    assert.match(missing.err, /nope\.yaml/);
    const lone = file("lone.yaml", "profiles: [org://acme/baseline]\n");
    const orgless = await bench(lone, ...QUICK);
    assert.equal(orgless.status, 2);
    assert.ok(orgless.err.startsWith(`harnessweaver bench: error: ${lone} does not load:\n`), orgless.err);
    assert.match(orgless.err, /org:\/\/acme\/baseline: no org-profile directories are set/);
    assert.doesNotMatch(orgless.err, /org\/ folder/);
  });

  it("a middleware that never answers is refused (exit 2), not waited for", async () => {
    const ran = await bench(join(dir, "heavy", "stuck.yaml"), ...QUICK);
    assert.equal(ran.status, 2);
    assert.equal(ran.out, "");
    assert.match(ran.err, /tool\.before: `stuck` did not answer in time on an emit of the event \(timeout\): .*--hook/);
  });

  it("a heavy middleware (hashing 100 KB per call) is the dominant one", async () => {
    const ran = await bench(join(dir, "heavy", "harness.yaml"), ...QUICK, "--format", "json");
    assert.equal(ran.status, 0, ran.err);
    const [tool] = checkDocument(JSON.parse(ran.out) as Record<string, unknown>, 10, 3);
    assert.deepEqual(tool?.middleware, ["first", "hash", "last"]);
    assert.deepEqual(tool?.dominant.name, "hash");
    assert.equal(tool?.dominant.use, "heavy.hashing");
    assert.ok((tool?.dominant.share ?? 0) > 0.5);
    const text = await bench(join(dir, "heavy", "harness.yaml"), ...QUICK);
    assert.match(text.out, /^tool\.before: `hash` \(heavy\.hashing\) is \d+% of the chain's own time$/m);
  });

  it("a sample event that is blocked gives the 'blocked by' line and the outcomes count it", async () => {
    const ran = await bench(join(dir, "blocking.yaml"), ...QUICK);
    assert.equal(ran.status, 0, ran.err);
    assert.match(
      ran.out,
      /^tool\.before: the sample event was blocked by `lookups_only` \(code tool_not_allowed\): later middleware did not run in the emit; time your own events with --events FILE$/m,
    );
    const json = await bench(join(dir, "blocking.yaml"), ...QUICK, "--format", "json");
    const hooks = checkDocument(JSON.parse(json.out) as Record<string, unknown>, 10, 3);
    assert.deepEqual(hooks.find((h) => h.hook === "tool.before")?.outcomes, { block: 10 });
  });

  it("--events FILE: its events are timed, cycling; blank lines are ignored", async () => {
    const lines = [{ hook: "tool.before", event: TOOL_EVENT }, {}, { hook: "tool.before", event: LOOKUP_EVENT }];
    const events = file("events.jsonl", lines.map((line) => (Object.keys(line).length ? JSON.stringify(line) : "  ")).join("\n"));
    const ran = await bench(join(dir, "blocking.yaml"), "--events", events, ...QUICK, "--format", "json");
    assert.equal(ran.status, 0, ran.err);
    const doc = JSON.parse(ran.out) as Record<string, unknown>;
    const [tool] = checkDocument(doc, 10, 3);
    assert.equal(doc["events"], events);
    assert.equal(tool?.events, 2);
    assert.deepEqual(tool?.outcomes, { continue: 5, block: 5 });
    const text = await bench(join(dir, "blocking.yaml"), "--events", events, ...QUICK);
    assert.match(
      text.out,
      /^tool\.before: 1 of 2 events of .*events\.jsonl was blocked by `lookups_only` \(code tool_not_allowed\): later middleware did not run in their emits; that is what those events cost$/m,
    );
  });

  it("--events FILE: each bad line is exit 2 at FILE:LINE", async () => {
    const good = JSON.stringify({ hook: "tool.before", event: TOOL_EVENT });
    const cases: [string, RegExp][] = [
      ["{not json", /:2: not JSON/],
      ["[1, 2]", /:2: a line is \{"hook": HOOK, "event": \{\.\.\.\}\}, got list\n$/],
      [JSON.stringify({ hook: "tool.during", event: TOOL_EVENT }), /:2: unknown hook 'tool\.during' \(hook points: task\.start, /],
      [JSON.stringify({ hook: "tool.before", event: { step: 1 } }), /:2: not a valid tool\.before event: /],
      [JSON.stringify({ hook: "tool.before", event: { ...TOOL_EVENT, extra: 1 } }), /:2: not a valid tool\.before event: .*extra/],
      [JSON.stringify({ hook: "tool.before" }), /:2: a line is .*, got \['hook'\]\n$/],
      [JSON.stringify({ hook: "tool.before", event: TOOL_EVENT, when: 1 }), /:2: a line is .*, got \['event', 'hook', 'when'\]\n$/],
      // Hostile nesting: refused before anything recurses into it, as Python refuses it.
      [`{"hook": "task.start", "event": {"task": "t", "input": ${'{"a": '.repeat(200)}1${"}".repeat(200)}}}`, /:2: nests arrays and objects more than 128 deep\n$/],
      [`{"hook": "task.start", "event": {"task": "t", "input": ${"[".repeat(5000)}${"]".repeat(5000)}}}`, /:2: nests arrays and objects more than 128 deep\n$/],
    ];
    for (const [line, expected] of cases) {
      const events = file("bad.jsonl", `${good}\n${line}\n`);
      const ran = await bench(join(dir, "blocking.yaml"), "--events", events, ...QUICK);
      assert.equal(ran.status, 2, line);
      assert.equal(ran.out, "");
      assert.ok(ran.err.startsWith(`harnessweaver bench: error: ${events}:2: `), ran.err);
      assert.match(ran.err, expected);
    }
    const absent = await bench(join(dir, "blocking.yaml"), "--events", join(dir, "absent.jsonl"), ...QUICK);
    assert.equal(absent.status, 2);
    assert.match(absent.err, /absent\.jsonl: cannot read it \(No such file or directory\)\n$/);
    const empty = await bench(join(dir, "blocking.yaml"), "--events", file("empty.jsonl", "\n\n"), ...QUICK);
    assert.equal(empty.status, 2);
    assert.match(empty.err, /empty\.jsonl: no events \(the file is empty\)\n$/);
  });

  it("--events FILE: a run journal line says the Python command reads journals and writes events files", async () => {
    const journal = file("journal.jsonl", `${JSON.stringify({ kind: "task.start", run: "r1", event: {} })}\n`);
    const ran = await bench(join(dir, "blocking.yaml"), "--events", journal, ...QUICK);
    assert.equal(ran.status, 2);
    assert.match(ran.err, /journal\.jsonl:1: a run journal's line \(it has "kind"\): this command reads events files; the Python command reads journals .*--dump-events OUT/);
  });

  it("--events FILE without events of a --hook asked for is exit 2 naming it", async () => {
    const events = file("tools.jsonl", `${JSON.stringify({ hook: "tool.before", event: TOOL_EVENT })}\n`);
    const ran = await bench(join(dir, "blocking.yaml"), "--events", events, "--hook", "task.start", ...QUICK);
    assert.equal(ran.status, 2);
    assert.match(ran.err, /--hook task\.start: no event of task\.start in .*tools\.jsonl\n$/);
    const notes = await bench(refunds, "--org-profiles", orgs, "--events", events, ...QUICK);
    assert.equal(notes.status, 0, notes.err);
    assert.match(notes.out, /^tool\.before +audit, hard_cap/m);
    assert.doesNotMatch(notes.out, /^task\.start +audit/m);
    assert.match(notes.out, /^task\.start: not timed: no event of this hook point in .*tools\.jsonl$/m);
  });

  it("a progress bar on stderr only when stderr is a terminal, wiped at the end", async () => {
    let err = "";
    let out = "";
    const io = { stdout: (t: string) => void (out += t), stderr: (t: string) => void (err += t), stderrIsTTY: true };
    assert.equal(await main(["bench", join(dir, "blocking.yaml"), ...QUICK, "--format", "json"], io), 0);
    assert.match(err, /^\rbench \[#+\.*\] 1\/3 rounds {2}tool\.before/);
    assert.ok(err.endsWith("3/3 rounds  tool.before\x1b[K\r\x1b[K"), JSON.stringify(err));
    assert.doesNotMatch(out, /bench \[/);
    const quiet = await bench(join(dir, "blocking.yaml"), ...QUICK); // the tests' IO: not a terminal
    assert.equal(quiet.err, "");
  });

  it("--help shows the flags; the top help lists bench", async () => {
    const help = await bench("--help");
    assert.equal(help.status, 0);
    for (const flag of ["--task", "--env", "--org-profiles", "--events", "--hook", "--rounds", "--per", "--format"]) assert.ok(help.out.includes(flag), flag);
    let top = "";
    await main(["--help"], { stdout: (t) => void (top += t), stderr: () => {} });
    assert.match(top, /^ {4}bench +time a harness/m);
  });

  it("Python's command gives the same keys, hook points and middleware (HARNESSWEAVER_TEST_PYTHON)", async (t) => {
    const py = await python();
    if (py === null) return t.skip("no Python with harnessweaver's bench command (set HARNESSWEAVER_TEST_PYTHON)");
    // As the issue runs it: no --org-profiles (both commands then take the spec's own org/ folder).
    const args = ["-m", "harnessweaver", "bench", "examples/refunds/harness.yaml", "--rounds", "3", "--per", "5", "--format", "json"];
    const { stdout } = await run(py, args, { cwd: REPO, env: { ...process.env, PYTHONPATH: join(REPO, "python") } });
    const theirs = JSON.parse(stdout) as Record<string, unknown>;
    const ran = await bench(refunds, "--rounds", "3", "--per", "5", "--format", "json");
    assert.equal(ran.status, 0, ran.err);
    const ours = JSON.parse(ran.out) as Record<string, unknown>;
    assert.deepEqual(Object.keys(theirs), Object.keys(ours));
    const shape = (doc: Record<string, unknown>) =>
      (doc["hooks"] as HookDoc[]).map((h) => ({
        keys: Object.keys(h),
        hook: h.hook,
        middleware: h.middleware,
        inner: [Object.keys(h.emit), Object.keys(h.floor), Object.keys(h.dominant), ...h.each.map((e) => Object.keys(e))],
        uses: h.each.map((e) => [e.name, e.use]),
        outcomes: Object.keys(h.outcomes).sort(),
      }));
    assert.deepEqual(shape(theirs), shape(ours));
    assert.deepEqual([theirs["task"], theirs["env"], theirs["events"], theirs["rounds"], theirs["per"]], [null, null, "samples", 3, 5]);
    assert.match(String(theirs["implementation"]), /^python-(rust|pure)$/);
  });
});

/**
 * A Python with this checkout's harnessweaver and its bench command, or null. The one
 * HARNESSWEAVER_TEST_PYTHON names must have it (`nox -s ts` gives it): the comparison may not skip there.
 */
async function python(): Promise<string | null> {
  const given = process.env["HARNESSWEAVER_TEST_PYTHON"];
  for (const candidate of [given, "python3"]) {
    if (!candidate) continue;
    try {
      await run(candidate, ["-c", "import harnessweaver.benchcmd.command, harnessweaver.benchcmd.measure, harnessweaver.spec.loader"], { env: { ...process.env, PYTHONPATH: join(REPO, "python") } });
      return candidate;
    } catch (error) {
      if (candidate === given) throw new Error(`HARNESSWEAVER_TEST_PYTHON=${given} cannot import harnessweaver's bench command`, { cause: error });
    }
  }
  return null;
}

describe("the bench primitives", () => {
  it("HookBus.handler: what the chain calls, in step with register and unregister; an unknown name is named", async () => {
    const bus = new HookBus();
    const seen: string[] = [];
    bus.register(middleware({ name: "one", hooks: ["tool.before"], failMode: "open" }, () => void seen.push("one")));
    bus.register(middleware({ name: "two", hooks: ["tool.before"], failMode: "open" }, () => void seen.push("two")), { name: "renamed" });
    const chain = chainOf(bus, "tool.before", sampleEvent("tool.before"));
    assert.deepEqual(chain.names, ["one", "renamed"]);
    await floorPass(chain, sampleEvent("tool.before"), new RunContext().envelope);
    assert.deepEqual(seen, ["one", "two"]);
    assert.throws(() => bus.handler("two"), { name: "RangeError", message: "no middleware 'two' on this bus (registered: one, renamed)" });
    bus.unregister("one");
    assert.throws(() => bus.handler("one"), { name: "RangeError", message: "no middleware 'one' on this bus (registered: renamed)" });
    bus.unregister("renamed");
    assert.throws(() => bus.handler("renamed"), { message: "no middleware 'renamed' on this bus (registered: none)" });
  });

  it("floorPass runs every handler even after one throws; pairedRatio is the median of the per-round ratios", async () => {
    const bus = new HookBus();
    const seen: string[] = [];
    bus.register(middleware({ name: "boom", hooks: ["task.start"], failMode: "open" }, () => { throw new Error("x"); }));
    bus.register(middleware({ name: "after", hooks: ["task.start"], failMode: "open" }, async () => void seen.push("after")));
    await floorPass(chainOf(bus, "task.start", sampleEvent("task.start")), sampleEvent("task.start"), new RunContext().envelope);
    assert.deepEqual(seen, ["after"]);
    assert.equal(pairedRatio([4, 9, 30], [2, 3, 10]), 3);
    assert.equal(pairedRatio([4, 9], [0, 3]), 3);
    assert.throws(() => pairedRatio([1], [0]), /no round with a floor above 0/);
  });

  it("chainOf applies the matchers of the event's tool (I22)", () => {
    const bus = new HookBus();
    bus.register(middleware({ name: "refunds_only", hooks: ["tool.before"], failMode: "open", match: { tool: "refund_*" } }, () => undefined));
    bus.register(middleware({ name: "everyone", hooks: ["tool.before"], failMode: "open" }, () => undefined));
    assert.deepEqual(chainOf(bus, "tool.before", sampleEvent("tool.before")).names, ["refunds_only", "everyone"]);
    const refund = sampleEvent("tool.before") as ToolCallEvent;
    const other = refund.with({ tool: refund.tool.with({ name: "lookup_order" }) });
    assert.deepEqual(chainOf(bus, "tool.before", other).names, ["everyone"]);
  });
});
