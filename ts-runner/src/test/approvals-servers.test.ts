// The approvals book on real Redis and PostgreSQL servers (started here on 127.0.0.1, as the
// state tests do; nothing mocked), and across languages: a record filed by a Python worker is
// approved and claimed by this one, and one filed here is decided by Python's CLI, over one
// shared store. The Python side runs when a Python with harnessweaver's dependencies is found
// (HARNESSWEAVER_TEST_PYTHON, else python3, with PYTHONPATH=python); the servers never skip in CI.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { after, before, describe, it } from "node:test";
import { ApprovalRefused, specIdentity } from "../approvals/index.js";
import { approvalsMain } from "../approvals/cli.js";
import { load } from "../spec/loader.js";
import { PostgresStore } from "../state/postgres.js";
import { RedisStore } from "../state/redis.js";
import type { Store } from "../state/store.js";
import { missing, postgresBin, PostgresServer, redisBinary, RedisServer } from "../testing/servers.js";
import { bookTests } from "./approvals-book-contract.js";

const run = promisify(execFile);
const REPO = fileURLToPath(new URL("../../../", import.meta.url));
const SPEC = join(REPO, "ts-runner/src/test/approvals-spec/harness.yaml");

const redisSkip = missing("redis-server", redisBinary(), "apt-get install redis-server") ?? false;
const postgresSkip = missing("PostgreSQL", postgresBin(), "apt-get install postgresql") ?? false;

function closing(stores: Store[], open: () => Store): () => Store {
  return () => {
    const store = open();
    stores.push(store);
    return store;
  };
}

describe("Approvals on a real redis-server", () => {
  let server: RedisServer;
  const stores: Store[] = [];
  before(async () => {
    if (redisSkip !== false) return;
    server = new RedisServer(redisBinary() as string);
    await server.start();
  });
  after(async () => {
    for (const store of stores) await store.close();
    await server?.stop();
  });
  bookTests(
    closing(stores, () => new RedisStore(server.url)),
    { skip: redisSkip },
  );
});

describe("Approvals on a real PostgreSQL", () => {
  let server: PostgresServer;
  const stores: Store[] = [];
  before(async () => {
    if (postgresSkip !== false) return;
    server = new PostgresServer(postgresBin() as string);
    await server.start();
  });
  after(async () => {
    for (const store of stores) await store.close();
    await server?.stop();
  });
  bookTests(
    closing(stores, () => new PostgresStore(server.url)),
    { skip: postgresSkip },
  );
});

/** A Python that imports harnessweaver.approvals and redis from this checkout, or null. */
async function python(): Promise<string | null> {
  for (const candidate of [process.env["HARNESSWEAVER_TEST_PYTHON"], "python3"]) {
    if (!candidate) continue;
    try {
      await run(candidate, ["-c", "import harnessweaver.approvals.book, harnessweaver.state.redis, redis"], { env: pyEnv() });
      return candidate;
    } catch {
      // not this one
    }
  }
  return null;
}

function pyEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...process.env, PYTHONPATH: join(REPO, "python"), ...extra };
}

// The Python worker: loads the spec on the shared Redis store and files, claims or reads.
const WORKER = `
import asyncio, json, sys
from harnessweaver.spec.loader import load
from harnessweaver.state.redis import RedisStore
from harnessweaver.approvals import ApprovalRefused, spec_identity
spec, url, action, arg = sys.argv[1:5]
event = {"step": 1, "tool": {"name": "refund"}, "call": {"id": "py-1", "name": "refund", "arguments": {"amount": 900}}}
async def main():
    harness = load(spec, task="refund", env="staging", open_state=lambda config: RedisStore(url))
    book = harness.approvals
    try:
        if action == "file":
            record = await book.file(hook="tool.before", event=event, reason="big refund", approver_role="finance", subject="run:py", filed_by="run loop")
            out = record.to_json()
        elif action == "claim":
            verdict = await book.claim(arg, hook="tool.before", event=event, consumer="python worker")
            out = {"kind": verdict.kind, "event": verdict.event, "status": verdict.record.status}
        else:
            out = {"spec": spec_identity(harness)}
    except ApprovalRefused as exc:
        out = {"refused": exc.code}
    finally:
        await harness.aclose()
    print(json.dumps(out))
asyncio.run(main())
`;

describe("across languages: Python files, Node decides and claims (one Redis)", () => {
  let server: RedisServer;
  let py: string | null = null;
  let dir: string;
  before(async () => {
    if (redisSkip !== false) return;
    py = await python();
    server = new RedisServer(redisBinary() as string);
    await server.start();
    dir = mkdtempSync(join(tmpdir(), "hw-ts-approvals-"));
    writeFileSync(join(dir, "worker.py"), WORKER);
  });
  after(async () => {
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  const skip = () => (redisSkip !== false ? redisSkip : py === null ? "no Python with harnessweaver's dependencies (set HARNESSWEAVER_TEST_PYTHON)" : false);

  async function worker(action: string, arg = "-"): Promise<Record<string, unknown>> {
    const { stdout } = await run(py as string, [join(dir, "worker.py"), SPEC, server.url, action, arg], { env: pyEnv() });
    return JSON.parse(stdout) as Record<string, unknown>;
  }

  const loadTs = () => load(SPEC, { task: "refund", env: "staging", openState: () => new RedisStore(server.url) });
  const event = { step: 1, tool: { name: "refund" }, call: { id: "node-7", name: "refund", arguments: { amount: 900 } } };

  it("the spec identity is the same in both", async (t) => {
    if (skip() !== false) return t.skip(String(skip()));
    const harness = await loadTs();
    try {
      assert.equal((await worker("spec"))["spec"], specIdentity(harness));
    } finally {
      await harness.close();
    }
  });

  it("a record filed by Python is approved and claimed here, once; Python's second claim is replayed", async (t) => {
    if (skip() !== false) return t.skip(String(skip()));
    const filed = await worker("file");
    const id = filed["id"] as string;
    assert.match(id, /^ap_[0-9a-f]{16}_1$/);
    const harness = await loadTs();
    try {
      const book = harness.approvals;
      const record = await book.get(id);
      assert.equal(record.filed_by, "run loop");
      assert.equal(record.status, "pending");
      // Filing the same action here finds Python's record: one binding, both languages.
      assert.equal((await book.file({ hook: "tool.before", event, reason: "x", approverRole: "finance", subject: "run:py", filedBy: "openai-agents-js" })).id, id);
      await assert.rejects(book.approve(id, { role: "intern" }), (e: unknown) => e instanceof ApprovalRefused && e.code === "approval_wrong_role");
      await book.edit(id, { amount: 500 }, { role: "finance", by: "ana" });
      const verdict = await book.claim(id, { hook: "tool.before", event, consumer: "node worker" });
      assert.equal(verdict.kind, "approved");
      assert.deepEqual(verdict.event.call.arguments, { amount: 500 });
    } finally {
      await harness.close();
    }
    assert.deepEqual(await worker("claim", id), { refused: "approval_replayed" });
  });

  it("a record filed here is approved by Python's CLI and claimed by Python; Node's claim is then replayed", async (t) => {
    if (skip() !== false) return t.skip(String(skip()));
    const spec = join(dir, "harness.yaml");
    writeFileSync(spec, `${readFileSync(SPEC, "utf8")}state: {backend: redis, url: "\${HW_TEST_REDIS}"}\n`);
    process.env["HW_TEST_REDIS"] = server.url; // the spec's state: reads it, in both languages
    t.after(() => delete process.env["HW_TEST_REDIS"]);
    const harness = await load(spec, { task: "refund", env: "staging", openState: () => new RedisStore(server.url) });
    let id: string;
    try {
      const record = await harness.approvals.file({ hook: "tool.before", event, reason: "big refund", approverRole: "finance", subject: "run:py", filedBy: "vercel-ai" });
      id = record.id;
    } finally {
      await harness.close();
    }
    const cli = ["-m", "harnessweaver.cli", "approvals"];
    const env = pyEnv({ HW_TEST_REDIS: server.url });
    const shown = await run(py as string, [...cli, "show", id, "--spec", spec, "--task", "refund", "--env", "staging", "--format", "json"], { env });
    assert.equal(JSON.parse(shown.stdout).filed_by, "vercel-ai");
    const approved = await run(py as string, [...cli, "approve", id, "--spec", spec, "--task", "refund", "--env", "staging", "--role", "finance"], { env });
    assert.equal(approved.stdout.trim(), `approval ${id} approved`);
    assert.deepEqual(await worker("claim", id), { kind: "approved", event: { ...event, call: { ...event.call, id: "py-1" } }, status: "used" });
    // And Node's CLI sees it used, on the same store, through the spec's state:.
    const out: string[] = [];
    const err: string[] = [];
    const io = { stdout: (s: string) => void out.push(s), stderr: (s: string) => void err.push(s), environ: { HW_TEST_REDIS: server.url } };
    assert.equal(await approvalsMain(["list", "--spec", spec, "--task", "refund", "--env", "staging", "--status", "used"], io), 0);
    assert.ok(out.join("").includes(`${id}  used  tool.before  refund  role=finance`), out.join(""));
    assert.equal(await approvalsMain(["deny", id, "--spec", spec, "--task", "refund", "--env", "staging", "--role", "finance"], io), 1);
    assert.match(err.join(""), /^harnessweaver approvals deny: refused: approval_replayed: /);
  });
});
