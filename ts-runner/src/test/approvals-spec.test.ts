// `approvals:` in harness.yaml and `Harness.approvals` (Python's test_approvals_spec.py, the
// same cases): problems `invalid_approvals` naming the key and the variable, never a value,
// worded as Python words them (compared live with Python when one is found); the lazy book;
// the spec identity equal to Python's `spec_identity` for the same spec.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, it } from "node:test";
import { Approvals, HttpNotifier, parseApprovals, specIdentity } from "../approvals/index.js";
import { ApprovalsConfig, ApprovalsConfigError } from "../approvals/config.js";
import { HookBus } from "../bus.js";
import { Harness, load } from "../spec/loader.js";
import { SpecError, type Problem } from "../spec/errors.js";
import { MemoryStore } from "../state/index.js";
import { folder } from "./spec-support.js";

const run = promisify(execFile);
const REPO = fileURLToPath(new URL("../../../", import.meta.url));
const SECRET = "hw-notify-s3cret-91ab";
const BASE = `middleware:
  - use: harnessweaver.tool_allowlist
    allow: [refund]
tasks:
  refunds:
    guardrails:
      tool.before:
        - {use: harnessweaver.tool_allowlist, id: task_allow, allow: [refund, search]}
`;

const write = (extra = "", base = BASE) => join(folder({ "harness.yaml": base + extra }), "harness.yaml");

async function problemsOf(path: string): Promise<Problem[]> {
  try {
    await load(path);
  } catch (error) {
    assert.ok(error instanceof SpecError, String(error));
    return [...error.problems].filter((p) => p.kind === "invalid_approvals");
  }
  assert.fail("loaded");
}

const CASES: [string, string, string][] = [
  ["approvals: [1]\n", "approvals", "approvals is a mapping such as {expires_after: 3600}, got list (approvals)"],
  ["approvals: {expire_after: 5}\n", "approvals.expire_after", "unknown key: the keys are expires_after, notify (approvals)"],
  ["approvals: {expires_after: 0}\n", "approvals.expires_after", "expires_after is a number of seconds > 0 (approvals)"],
  ["approvals: {expires_after: -3}\n", "approvals.expires_after", "expires_after is a number of seconds > 0 (approvals)"],
  ["approvals: {expires_after: soon}\n", "approvals.expires_after", "expires_after is a number of seconds > 0 (approvals)"],
  ["approvals: {expires_after: true}\n", "approvals.expires_after", "expires_after is a number of seconds > 0 (approvals)"],
  ["approvals: {expires_after: .inf}\n", "approvals.expires_after", "expires_after is a number of seconds > 0 (approvals)"],
  ["approvals: {notify: yes}\n", "approvals.notify", "notify is a mapping {url, secret}, got bool (approvals)"],
  ["approvals: {notify: {url: 'https://x.invalid/'}}\n", "approvals.notify.secret", "notify needs secret (approvals)"],
  ["approvals: {notify: {secret: abc}}\n", "approvals.notify.url", "notify needs url (approvals)"],
  ["approvals: {notify: {url: 'https://x.invalid/', secret: s, retries: 3}}\n", "approvals.notify.retries", "unknown key: the keys are url, secret (approvals)"],
  ["approvals: {notify: {url: 'ftp://x.invalid/', secret: s}}\n", "approvals.notify.url", "notify.url is an http:// or https:// URL (approvals)"],
  ["approvals: {notify: {url: 'https://x.invalid/', secret: 5}}\n", "approvals.notify.secret", "notify.secret is text, got int (approvals)"],
];

/** A Python that loads specs from this checkout, or null. */
async function python(): Promise<string | null> {
  for (const candidate of [process.env["HARNESSWEAVER_TEST_PYTHON"], "python3"]) {
    if (!candidate) continue;
    try {
      await run(candidate, ["-c", "import anyio, yaml, pydantic, rfc8785; import harnessweaver as hw; hw.load; hw.SpecError; from harnessweaver.spec.loader import load; from harnessweaver.approvals import spec_identity"], { env: { ...process.env, PYTHONPATH: join(REPO, "python") } });
      return candidate;
    } catch {
      // not this one
    }
  }
  return null;
}

const PY_PROBLEMS = `
import json, sys
import harnessweaver as hw
out = []
for path in sys.argv[1:]:
    try:
        hw.load(path)
        out.append(None)
    except hw.SpecError as exc:
        out.append([[p.item, p.line, p.message] for p in exc.problems if p.kind == "invalid_approvals"])
print(json.dumps(out))
`;

const PY_SPECS = `
import json, sys
import harnessweaver as hw
from harnessweaver.approvals import spec_identity
cases = json.loads(sys.argv[1])
print(json.dumps([spec_identity(hw.load(path, task=task, env=env)) for path, task, env in cases]))
`;

describe("the spec's approvals: key", () => {
  it("no key: the defaults; one lazy book per harness on its store with the spec's identity", async () => {
    const harness = await load(write());
    assert.deepEqual(harness.approvalsConfig, new ApprovalsConfig());
    const book = harness.approvals;
    assert.ok(book instanceof Approvals);
    assert.equal(book.expiresAfter, 86400);
    assert.equal(book.store, harness.store);
    assert.equal(book.spec, specIdentity(harness));
    assert.equal(harness.approvals, book);
    assert.ok(Object.isFrozen(harness));
  });

  it("reads expires_after and notify with ${NAME} references; never shows the secret or the URL", async () => {
    process.env["APPROVALS_SECRET"] = SECRET;
    process.env["APPROVALS_HOST"] = "hooks.example.invalid";
    try {
      const harness = await load(write('approvals:\n  expires_after: 3600\n  notify: {url: "https://${APPROVALS_HOST}/approvals", secret: "${APPROVALS_SECRET}"}\n'));
      const config = harness.approvalsConfig;
      assert.deepEqual([config.expiresAfter, config.url, config.secret], [3600, "https://hooks.example.invalid/approvals", SECRET]);
      for (const shown of [String(config), JSON.stringify(config)]) assert.ok(!shown.includes(SECRET) && !shown.includes("hooks"), shown);
      assert.equal(harness.approvals.expiresAfter, 3600);
      // The notifier is an HttpNotifier (what a filing calls): checked by what it refuses to show.
      assert.ok(String((harness.approvals as unknown as { toString(): string }).toString()).startsWith("Approvals(backend=memory"));
    } finally {
      delete process.env["APPROVALS_SECRET"];
      delete process.env["APPROVALS_HOST"];
    }
  });

  for (const [extra, where, says] of CASES) {
    it(`${extra.trim()} → ${where}`, async () => {
      const found = await problemsOf(write(extra));
      assert.deepEqual(
        found.map((p) => [p.item, p.message]),
        [[where, says]],
      );
      assert.equal(found[0]?.rule, "approvals");
      assert.ok((found[0]?.line ?? 0) >= 9);
    });
  }

  it("a missing variable is named, no value shown, on its line", async () => {
    delete process.env["HW_NO_SUCH_SECRET"];
    process.env["HW_URL"] = "https://user:pw-77@x.invalid/";
    try {
      const path = write('approvals:\n  notify:\n    url: "${HW_URL}"\n    secret: "${HW_NO_SUCH_SECRET}"\n');
      const found = await problemsOf(path);
      assert.deepEqual(
        found.map((p) => [p.item, p.line, p.message]),
        [["approvals.notify.secret", 12, "the environment variable HW_NO_SUCH_SECRET referenced by notify.secret is not set (approvals)"]],
      );
      await assert.rejects(load(path), (error: unknown) => !String(error).includes("pw-77"));
    } finally {
      delete process.env["HW_URL"];
    }
  });

  it("parseApprovals lists every problem in Python's order", () => {
    assert.throws(
      () => parseApprovals({ expires_after: 0, notify: { url: 1 }, x: 1 }, { environ: {} }),
      (error: unknown) => error instanceof ApprovalsConfigError && error.problems.map(([key]) => key).join() === "x,expires_after,notify.secret,notify.url",
    );
    assert.deepEqual(parseApprovals(null), new ApprovalsConfig());
    const config = parseApprovals({ notify: { url: "https://h.invalid/x", secret: "k" } });
    assert.ok(new HttpNotifier(config.url as string, config.secret as string));
  });

  it("the same problems as Python's loader, word for word (when a Python is found)", async (t) => {
    const py = await python();
    if (py === null) return t.skip("no Python with harnessweaver's dependencies (set HARNESSWEAVER_TEST_PYTHON)");
    process.env["HW_URL"] = "https://user:pw-77@x.invalid/";
    try {
      const paths = [...CASES.map(([extra]) => write(extra)), write('approvals:\n  notify:\n    url: "${HW_URL}"\n    secret: "${HW_NO_SUCH_SECRET}"\n')];
      const { stdout } = await run(py, ["-c", PY_PROBLEMS, ...paths], { env: { ...process.env, PYTHONPATH: join(REPO, "python") } });
      const theirs = JSON.parse(stdout) as unknown[];
      const ours = await Promise.all(paths.map(async (path) => (await problemsOf(path)).map((p) => [p.item, p.line, p.message])));
      assert.deepEqual(ours, theirs);
    } finally {
      delete process.env["HW_URL"];
    }
  });
});

describe("specIdentity", () => {
  const SPEC = join(REPO, "ts-runner/src/test/approvals-spec/harness.yaml");
  const EXAMPLE = join(REPO, "examples/agent_hooks/harness.yaml");
  // Computed by Python's spec_identity (python/harnessweaver/approvals/record.py) for these specs.
  const PYTHON: [string, string | null, string | null, string][] = [
    [SPEC, null, null, "sha256:3de32e038437df0ae1ae1ebd3fb6e1107c3f3b9e3311fa313d6f774c397594cb"],
    [SPEC, "refund", "staging", "sha256:697bbd6389927bc287a61cc77636432906201b387a53f2036784138dceaa6bbf"],
    [SPEC, "refund", null, "sha256:921596be60b1def1ea92dbabf2301b2fb035c28b45a41aab544e65add41a9929"],
    [EXAMPLE, null, null, "sha256:257381dba1ca1a484d9fa501e485da623c2e0473ca0833609a876f7044620824"],
  ];

  it("equals Python's spec_identity for the same spec, task and env (checked-in values)", async () => {
    for (const [path, task, env, expected] of PYTHON) {
      const harness = await load(path, { task, env });
      assert.equal(specIdentity(harness), expected, `${path} ${task} ${env}`);
      assert.equal(harness.approvals.spec, expected);
    }
  });

  it("equals what Python computes now (when a Python is found)", async (t) => {
    const py = await python();
    if (py === null) return t.skip("no Python with harnessweaver's dependencies (set HARNESSWEAVER_TEST_PYTHON)");
    const cases = PYTHON.map(([path, task, env]) => [path, task, env]);
    const { stdout } = await run(py, ["-c", PY_SPECS, JSON.stringify(cases)], { env: { ...process.env, PYTHONPATH: join(REPO, "python") } });
    const theirs = JSON.parse(stdout) as string[];
    const ours = await Promise.all(PYTHON.map(async ([path, task, env]) => specIdentity(await load(path, { task, env }))));
    assert.deepEqual(ours, theirs);
  });

  it("is the spec version: the task and the entries count, the approvals key does not", async () => {
    const first = specIdentity(await load(write()));
    assert.equal(specIdentity(await load(write())), first);
    assert.notEqual(specIdentity(await load(write(), { task: "refunds" })), first);
    assert.notEqual(specIdentity(await load(write("", BASE.replace("allow: [refund]", "allow: [refund, transfer]")))), first);
    assert.equal(specIdentity(await load(write("approvals: {expires_after: 60}\n"))), first);
  });

  it("a harness built in code is 'code'", () => {
    const harness = new Harness(new HookBus(), [], null, null, null, null, null, new MemoryStore());
    assert.equal(specIdentity(harness), "code");
    assert.equal(harness.approvals.spec, "code");
  });
});
