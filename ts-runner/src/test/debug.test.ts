/**
 * NODE_DEBUG=harnessweaver: what a middleware throws, message and stack, on standard error when
 * asked for (docs/logging.md, as Python's `harnessweaver.debug`); never in the trace (R9);
 * nothing when off. Each case is a real child process: the switch is Node's environment.
 */

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { describe, it } from "node:test";

const SECRET = "sk-live-4242424242424242";
const INDEX = new URL("../index.js", import.meta.url).href;

/** A child that registers a throwing (closed) and a rejecting (open) middleware, emits once,
 * and prints the result and the trace's JSON Lines on stdout. */
const CHILD = `
import { Envelope, HookBus, middleware, RunContext, ToolCallEvent } from ${JSON.stringify(INDEX)};
const bus = new HookBus();
bus.register(middleware({ name: "leaky", hooks: ["tool.before"], failMode: "open" }, async () => {
  await new Promise((resolve) => setTimeout(resolve, 1));
  throw new TypeError("card declined for token ${SECRET}");
}));
bus.register(middleware({ name: "buggy", hooks: ["tool.before"], failMode: "closed" }, () => {
  const customer = {}["customer"];
  return customer.id;
}));
const context = new RunContext({ envelope: new Envelope({ runId: "debugging" }) });
const event = new ToolCallEvent({ step: 1, tool: { name: "t" }, call: { name: "t", arguments: {} } });
const result = await bus.emit("tool.before", event, context);
console.log(JSON.stringify({ kind: result.outcome.kind, reason: result.outcome.reason }));
process.stdout.write(context.trace.toJSONL());
`;

function run(env: Record<string, string | undefined>): { stdout: string; stderr: string } {
  const childEnv = { ...process.env, ...env };
  if (env["NODE_DEBUG"] === undefined) delete childEnv["NODE_DEBUG"];
  const done = spawnSync(process.execPath, ["--input-type=module", "-e", CHILD], { encoding: "utf8", env: childEnv });
  assert.equal(done.status, 0, done.stderr);
  return { stdout: done.stdout, stderr: done.stderr };
}

describe("NODE_DEBUG=harnessweaver", () => {
  it("writes each thrown value's message and stack to stderr, never to the trace", () => {
    const { stdout, stderr } = run({ NODE_DEBUG: "harnessweaver" });
    const [result, ...trace] = stdout.trim().split("\n");
    assert.deepEqual(JSON.parse(result!), { kind: "block", reason: "middleware buggy failed: exception" });
    assert.match(stderr, /HARNESSWEAVER \d+: middleware leaky raised TypeError \(the trace records its type only\)\nTypeError: card declined for token sk-live-4242424242424242\n\s+at /);
    assert.match(stderr, /middleware buggy raised TypeError \(the trace records its type only\)\nTypeError: Cannot read properties of undefined \(reading 'id'\)/);
    // R9: the trace has the type name only.
    assert.ok(!stdout.includes(SECRET));
    const failures = trace.map((line) => JSON.parse(line) as Record<string, unknown>).filter((record) => record["kind"] === "failure");
    assert.deepEqual(
      failures.map((record) => [record["middleware"], record["error"]]),
      [
        ["leaky", "TypeError"],
        ["buggy", "TypeError"],
      ],
    );
  });

  it("writes nothing and changes nothing when off", () => {
    const on = run({ NODE_DEBUG: "harnessweaver" });
    const off = run({ NODE_DEBUG: undefined });
    assert.equal(off.stderr, "");
    const shape = (stdout: string) => stdout.trim().split("\n").map((line) => {
      const { t_ns: _t, duration_ns: _d, ...rest } = JSON.parse(line) as Record<string, unknown>;
      return rest;
    });
    assert.deepEqual(shape(off.stdout), shape(on.stdout));
  });

  it("is Node's own switch: another section does not turn it on", () => {
    assert.equal(run({ NODE_DEBUG: "http" }).stderr.includes("harnessweaver"), false);
  });
});
