// `harnessweaver approvals` in the Node CLI: usage (exit 2), a spec that does not load (2),
// the store (the spec's state:, else --state-file, else the hook command's file), the
// decisions and refusals (0 / 1) on a real store: SQLite where Node has node:sqlite, else
// the path's refusal is checked; decisions across processes run on Redis in
// approvals-servers.test.ts.

import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { approvalsMain, defaultStateFile, safe } from "../approvals/cli.js";
import { main } from "../cli.js";
import { load } from "../spec/loader.js";
import { folder } from "./spec-support.js";

function io() {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { stdout: (s: string) => void out.push(s), stderr: (s: string) => void err.push(s) } };
}

const SPEC = "middleware:\n  - {use: harnessweaver.tool_allowlist, id: tools, allow: [refund]}\n";

async function hasSqlite(): Promise<boolean> {
  try {
    await import("node:sqlite" as string);
    return true;
  } catch {
    return false;
  }
}

describe("harnessweaver approvals: usage", () => {
  for (const [args, says] of [
    [[], "the following arguments are required: ACTION"],
    [["approve"], "harnessweaver approvals approve: error: the following arguments are required: ID, --spec"],
    [["list", "--role", "x", "--spec", "h.yaml"], "harnessweaver approvals list: error: unrecognized arguments: --role"],
    [["edit", "ap_0000000000000000_1", "--spec", "h.yaml"], "the following arguments are required: --arguments"],
    [["list", "--spec", "h.yaml", "--format", "xml"], "argument --format: invalid choice: 'xml' (choose from 'text', 'json')"],
    [["list", "--spec", "h.yaml", "--status", "odd"], "argument --status: invalid choice: 'odd'"],
    [["frobnicate"], "argument ACTION: invalid choice: 'frobnicate'"],
    [["show", "a", "b", "--spec", "h.yaml"], "unrecognized arguments: b"],
  ] as [string[], string][]) {
    it(`${args.join(" ") || "(nothing)"} → exit 2`, async () => {
      const { err, io: given } = io();
      assert.equal(await approvalsMain(args, given), 2);
      assert.ok(err.join("").includes(says), err.join(""));
    });
  }

  it("--help: exit 0; the top command dispatches approvals", async () => {
    const { out, io: given } = io();
    assert.equal(await main(["approvals", "--help"], given), 0);
    assert.match(out.join(""), /usage: harnessweaver approvals/);
  });

  it("a spec that does not load: exit 2 with its problems", async () => {
    const path = join(folder({ "harness.yaml": "approvals: {expires_after: 0}\n" }), "harness.yaml");
    const { err, io: given } = io();
    assert.equal(await approvalsMain(["list", "--spec", path], given), 2);
    assert.match(err.join(""), /does not load:\n.*approvals\.expires_after: expires_after is a number of seconds > 0/);
  });

  it("the default state file is the hook command's", () => {
    assert.equal(defaultStateFile({ HARNESSWEAVER_HOOK_STATE: "/x/s.db" }), "/x/s.db");
    assert.equal(defaultStateFile({ XDG_STATE_HOME: "/st" }), "/st/harnessweaver/hook-state.sqlite3");
  });

  it("output is terminal-safe: control and format characters are written as \\uXXXX", () => {
    assert.equal(safe("a\u001b[31mb\u202ec\nd"), "a\\u001b[31mb\\u202ec\nd");
  });
});

describe("harnessweaver approvals on an SQLite state file", () => {
  it("files elsewhere, then list, show, approve, and refusals: exit 0 and 1", async (t) => {
    const dir = folder({ "harness.yaml": SPEC });
    const spec = join(dir, "harness.yaml");
    const file = join(dir, "state.db");
    if (!(await hasSqlite())) {
      // Without node:sqlite the command says so and decides nothing.
      const { err, io: given } = io();
      assert.equal(await approvalsMain(["list", "--spec", spec, "--state-file", file], given), 2);
      assert.match(err.join(""), /needs node:sqlite/);
      return t.diagnostic("node:sqlite missing: the refusal was checked");
    }
    const { SqliteStore } = await import("../state/sqlite.js");
    const harness = await load(spec, { openState: () => SqliteStore.open(file) });
    const record = await harness.approvals.file({
      hook: "tool.before",
      event: { tool: { name: "refund" }, call: { name: "refund", arguments: { amount: 900, note: "\u001b]0;x\u0007" } } },
      reason: "big refund",
      approverRole: "finance",
      filedBy: "hook command (claude)",
    });
    await harness.close();
    const common = ["--spec", spec, "--state-file", file];
    const listed = io();
    assert.equal(await approvalsMain(["list", ...common, "--status", "pending"], listed.io), 0);
    assert.ok(listed.out.join("").startsWith(`${record.id}  pending  tool.before  refund  role=finance  expires=`));
    const shown = io();
    assert.equal(await approvalsMain(["show", record.id, ...common], shown.io), 0);
    assert.ok(shown.out.join("").includes('"amount": 900'));
    assert.ok(!shown.out.join("").includes("\u001b"));
    const wrong = io();
    assert.equal(await approvalsMain(["approve", record.id, ...common], wrong.io), 1);
    assert.match(wrong.err.join(""), /^harnessweaver approvals approve: refused: approval_wrong_role: /);
    const edited = io();
    assert.equal(await approvalsMain(["edit", record.id, ...common, "--role", "finance", "--arguments", '{"amount": 100}'], edited.io), 0);
    assert.equal(edited.out.join(""), `approval ${record.id} approved with an edit\n`);
    const again = io();
    assert.equal(await approvalsMain(["deny", record.id, ...common, "--role", "finance"], again.io), 1);
    assert.match(again.err.join(""), /refused: approval_decided: /);
  });
});
