// The spec's `state:` key and the built-ins on the harness's store: problems naming the key
// and the variable (never a value), one store per harness, each stateful item's view under
// its layer, registered name and fail mode, and workers sharing one org budget and one rate
// limit through a real Redis and a real PostgreSQL (the keys Python's layout names).

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import {
  Envelope,
  load,
  MemoryStore,
  Message,
  ModelRequest,
  ModelRequestEvent,
  ModelResponse,
  ModelResponseEvent,
  RunContext,
  stateKey,
  ToolCall,
  ToolCallEvent,
  ToolSpec,
  Usage,
  type Harness,
} from "../index.js";
import { missing, postgresBin, PostgresServer, redisBinary, RedisServer } from "../testing/servers.js";
import { folder, onlyProblem, problems } from "./spec-support.js";

const request = (step = 1) => new ModelRequestEvent({ step, request: new ModelRequest({ messages: [new Message({ role: "user", content: "hi" })] }) });
const response = (tokens: number, step = 1) =>
  new ModelResponseEvent({ step, response: new ModelResponse({ message: new Message({ role: "assistant", content: "ok" }), usage: new Usage({ inputTokens: tokens, outputTokens: 0, costUsd: 0 }) }) });
const toolCall = (step: number) => new ToolCallEvent({ step, tool: new ToolSpec({ name: "search" }), call: new ToolCall({ id: `c${step}`, name: "search", arguments: { q: step } }) });
const context = (runId: string, attributes: Record<string, unknown> = {}) => new RunContext({ envelope: new Envelope({ runId, attributes }) });

describe("the spec's state: key", () => {
  it("names the key and the variable of a problem, never the value", async () => {
    delete process.env["HW_TS_STATE_UNSET"];
    const root = folder({ "harness.yaml": 'state: {backend: redis, url: "redis://:pw@${HW_TS_STATE_UNSET}/0"}\n' });
    const problem = await onlyProblem(join(root, "harness.yaml"));
    assert.equal(problem.kind, "invalid_state");
    assert.equal(problem.rule, "state");
    assert.equal(problem.item, "state.url");
    assert.equal(problem.line, 1);
    assert.equal(problem.message, "the environment variable HW_TS_STATE_UNSET referenced by url is not set (state)");
    assert.doesNotMatch(String(problem), /pw@/);
    const many = await problems(join(folder({ "harness.yaml": "state:\n  backend: etcd\n  colour: blue\n" }), "harness.yaml"));
    assert.deepEqual(
      many.map((p) => [p.item, p.line, p.message]),
      [
        ["state.colour", 3, "unknown key: the keys are backend, url, path, timeout (state)"],
        ["state.backend", 2, "unknown backend: the backends are memory, sqlite, redis, postgres (state)"],
      ],
    );
  });

  it("gives each harness its own memory store when it names none", async () => {
    const root = folder({ "harness.yaml": "middleware:\n  - {use: harnessweaver.budget_guard, id: budget, max_tokens: 100}\n" });
    const [one, two] = [await load(join(root, "harness.yaml")), await load(join(root, "harness.yaml"))];
    assert.equal(one.store.backend, "memory");
    assert.notEqual(one.store, two.store);
    const ctx = context("r1");
    await one.bus.emit("model.after", response(100), ctx);
    assert.equal((await one.bus.emit("model.before", request(2), ctx)).outcome.kind, "block");
    assert.equal((await two.bus.emit("model.before", request(2), context("r1"))).outcome.kind, "continue");
    await one.close();
    await two.close();
  });

  it("attaches each stateful item's view: its layer, registered name, fail mode, the task", async () => {
    const root = folder({
      "harness.yaml":
        "middleware:\n  - {use: harnessweaver.budget_guard, id: spend, scope: task, max_tokens: 50, fail_mode: open}\n" +
        "tasks:\n  triage:\n    guardrails:\n      tool.before:\n        - {use: harnessweaver.rate_limit, limit: 1, per: 1m, scope: org}\n",
    });
    const store = new MemoryStore();
    const harness = await load(join(root, "harness.yaml"), { task: "triage", openState: () => store });
    assert.equal(harness.store, store);
    const ctx = context("r1");
    await harness.bus.emit("model.after", response(20), ctx);
    assert.equal(await store.total(stateKey("app", "spend", "task", "triage", "tokens")), 20);
    assert.equal((await harness.bus.emit("tool.before", toolCall(1), ctx)).outcome.kind, "continue");
    const refused = (await harness.bus.emit("tool.before", toolCall(2), ctx)).outcome;
    assert.deepEqual([refused.kind, refused.kind === "block" ? refused.code : null], ["block", "rate_limited"]);
    assert.equal(await store.total(stateKey("task", "harnessweaver.rate_limit", "org", "-", "calls")), 1);
  });
});

/** Loads `spec` (text) as a worker would: a fresh harness on the spec's own store. */
async function worker(spec: string, env: Record<string, string>): Promise<Harness> {
  Object.assign(process.env, env);
  return load(join(folder({ "harness.yaml": spec }), "harness.yaml"));
}

const SHARED =
  'state: {backend: BACKEND, url: "${HW_TS_STATE_URL}", timeout: 2s}\n' +
  "middleware:\n" +
  "  - {use: harnessweaver.budget_guard, id: budget, scope: org, max_tokens: 100, warn_at: null}\n" +
  "  - {use: harnessweaver.rate_limit, id: rate, scope: user, limit: 3, per: 1m}\n";

/**
 * The Python package's reading of one counter (its own store class on the same server), or
 * null when no Python with the `state` extra runs here (`HW_TS_PYTHON` names one).
 */
function pythonTotal(backend: "redis" | "postgres", url: string, key: string): number | null {
  const python = process.env["HW_TS_PYTHON"] ?? "python3";
  const root = fileURLToPath(new URL("../../../python/", import.meta.url));
  const module = backend === "redis" ? "redis" : "postgres";
  const store = backend === "redis" ? "RedisStore" : "PostgresStore";
  const code =
    "import asyncio, sys\n" +
    `from harnessweaver.state.${module} import ${store}\n` +
    `async def main():\n    s = ${store}(sys.argv[1])\n    print(await s.total(sys.argv[2]))\n    await s.close()\n` +
    "asyncio.run(main())\n";
  const done = spawnSync(python, ["-c", code, url, key], { env: { ...process.env, PYTHONPATH: root }, encoding: "utf8", timeout: 30_000 });
  // No Python with the state extra here: the layout tests still hold. Named by HW_TS_PYTHON, it must work.
  if (done.status !== 0 && process.env["HW_TS_PYTHON"] !== undefined) assert.fail(`${python}: ${done.stderr}`);
  if (done.status !== 0) return null;
  return Number(done.stdout.trim());
}

for (const backend of ["redis", "postgres"] as const) {
  const skip =
    (backend === "redis"
      ? missing("redis-server", redisBinary(), "apt-get install redis-server")
      : missing("PostgreSQL (initdb, postgres)", postgresBin(), "apt-get install postgresql")) ?? false;

  describe(`workers sharing one org budget and one user rate limit on ${backend}`, () => {
    let server: RedisServer | PostgresServer;
    const harnesses: Harness[] = [];
    before(async () => {
      if (skip !== false) return;
      server = backend === "redis" ? new RedisServer(redisBinary() as string) : new PostgresServer(postgresBin() as string);
      await server.start();
    });
    after(async () => {
      for (const harness of harnesses) await harness.close();
      await server?.stop();
    });

    it("never overspends; Python reads the same counter", { skip }, async () => {
      const spec = SHARED.replace("BACKEND", backend);
      const env = { HW_TS_STATE_URL: server.url };
      const workers = await Promise.all([worker(spec, env), worker(spec, env), worker(spec, env)]);
      harnesses.push(...workers);
      assert.ok(workers.every((w) => w.store.backend === backend));
      // PostgreSQL may still be starting: the first call waits for it.
      for (let i = 0; ; i++) {
        const first = await workers[0]?.bus.emit("model.before", request(), context("warm", { user: "warm" }));
        if (first?.outcome.kind === "continue") break;
        assert.ok(i < 200, "the store never answered");
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      // Each worker's run spends 40 tokens: after the third response the org has spent 120.
      await Promise.all(workers.map((w, i) => w.bus.emit("model.after", response(40), context(`run${i}`, { user: "ann" }))));
      const key = stateKey("app", "budget", "org", "-", "tokens");
      assert.equal(await workers[0]?.store.total(key), 120);
      for (const [i, w] of workers.entries()) {
        const outcome = (await w.bus.emit("model.before", request(2), context(`run${i}`, { user: `u${i}` }))).outcome;
        assert.equal(outcome.kind, "block");
        assert.equal(outcome.kind === "block" ? outcome.reason : "", "the org has spent 120 tokens of its 100 tokens budget");
      }
      // The same response delivered again (a redelivered job) is not charged twice.
      await workers[1]?.bus.emit("model.after", response(40), context("run0", { user: "ann" }));
      assert.equal(await workers[2]?.store.total(key), 120);
      const fromPython = pythonTotal(backend, server.url, key);
      if (fromPython !== null) assert.equal(fromPython, 120);
      // ann's calls, wherever they run, share one window of 3 per minute.
      const calls = await Promise.all(
        Array.from({ length: 6 }, (_, i) => workers[i % 3]?.bus.emit("tool.before", toolCall(10 + i), context(`call${i}`, { user: "ann" }))),
      );
      assert.equal(calls.filter((call) => call?.outcome.kind === "continue").length, 3);
      const bob = await workers[0]?.bus.emit("tool.before", toolCall(99), context("bob", { user: "bob" }));
      assert.equal(bob?.outcome.kind, "continue");
    });
  });
}
