// The approval rules (ts-runner/src/approvals/rules.ts; Python's approvals/rules.py): the
// record's status at a time, a decision and a claim, each refusal in the brief's order.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { actionOf, ApprovalRefused, claim, decide, specIdentity, statusAt, type ApprovalRecord } from "../approvals/index.js";
import { bindingOf, identityOf, recordId } from "../approvals/record.js";
import { howToDecide } from "../approvals/book.js";
import { ToolCallEvent } from "../events.js";

const SPEC = "sha256:" + "a".repeat(64);
const OTHER = "sha256:" + "b".repeat(64);

function record(changes: Partial<ApprovalRecord> = {}): ApprovalRecord {
  const action = actionOf("tool.before", { step: 1, tool: { name: "refund" }, call: { id: "c1", name: "refund", arguments: { amount: 900 } } });
  const identity = identityOf(action, "the action");
  const binding = bindingOf(identity, SPEC, "run:r1");
  return {
    v: 1,
    id: recordId(binding, 1),
    binding,
    identity,
    action,
    spec: SPEC,
    subject: "run:r1",
    hook: "tool.before",
    tool: "refund",
    reason: "big refund",
    code: "refund_cap",
    approver_role: "finance",
    filed_by: "run loop",
    filed_at: 1000,
    expires_at: 2000,
    status: "pending",
    decision: null,
    used: null,
    ...changes,
  };
}

function refused(code: string): (error: unknown) => boolean {
  return (error: unknown) => {
    assert.ok(error instanceof ApprovalRefused, String(error));
    assert.equal(error.code, code, error.message);
    return true;
  };
}

describe("actionOf", () => {
  it("binds a tool call's name and arguments, never its id", () => {
    const a = actionOf("tool.before", { tool: { name: "refund" }, call: { id: "c1", name: "refund", arguments: { amount: 1 } } });
    const b = actionOf("tool.before", { tool: { name: "refund" }, call: { id: "c2", name: "refund", arguments: { amount: 1 } } });
    assert.deepEqual(a, { hook: "tool.before", tool: "refund", arguments: { amount: 1 } });
    assert.equal(identityOf(a, "a"), identityOf(b, "b"));
    const c = actionOf("tool.before", { tool: { name: "refund" }, call: { id: "c1", name: "refund", arguments: { amount: 2 } } });
    assert.notEqual(identityOf(a, "a"), identityOf(c, "c"));
  });

  it("takes an event object the same as its JSON form", () => {
    const event = new ToolCallEvent({ tool: { name: "refund" }, call: { id: "x", name: "refund", arguments: { amount: 5 } } });
    assert.deepEqual(actionOf("tool.before", event), actionOf("tool.before", event.toJSON() as never));
  });

  it("adds the result at tool.after, and binds the whole event elsewhere", () => {
    const after = actionOf("tool.after", { tool: { name: "t" }, call: { name: "t", arguments: {} }, result: { output: 1, is_error: false, truncated: false } });
    assert.deepEqual(after["result"], { output: 1, is_error: false, truncated: false });
    assert.deepEqual(actionOf("task.start", { task: "x", input: 1 }), { hook: "task.start", event: { task: "x", input: 1 } });
  });

  it("refuses a tool event without a named call", () => {
    assert.throws(() => actionOf("tool.before", { tool: { name: "t" } }), /holds its call: an object with a name/);
  });
});

describe("statusAt", () => {
  it("is expired for pending and approved records at or past expiry, the status otherwise", () => {
    assert.equal(statusAt(record(), 1999.9), "pending");
    assert.equal(statusAt(record(), 2000), "expired");
    assert.equal(statusAt(record({ status: "approved" }), 2500), "expired");
    for (const status of ["denied", "used", "closed"] as const) assert.equal(statusAt(record({ status }), 2500), status);
  });
});

describe("decide", () => {
  const ok = { approved: true, role: "finance", by: "ana", reason: "fine" };

  it("approves: status approved, the decision filled with at = now", () => {
    const done = decide(record(), ok, 1500);
    assert.equal(done.status, "approved");
    assert.deepEqual(done.decision, { approved: true, role: "finance", by: "ana", reason: "fine", at: 1500, edited: null });
    assert.equal(decide(record(), { ...ok, approved: false }, 1500).status, "denied");
  });

  it("refuses in order: replayed, decided, expired, spec changed, wrong role, invalid edit", () => {
    // Each record breaks every later rule too: the earliest one must win.
    const bad = { approved: false, role: "intern", edited: [] as never };
    assert.throws(() => decide(record({ status: "used", expires_at: 0 }), bad, 1500, OTHER), refused("approval_replayed"));
    for (const status of ["approved", "denied", "closed"] as const) {
      assert.throws(() => decide(record({ status, expires_at: 0 }), bad, 1500, OTHER), refused("approval_decided"));
    }
    assert.throws(() => decide(record(), bad, 2000, OTHER), refused("approval_expired"));
    assert.throws(() => decide(record(), bad, 1500, OTHER), refused("approval_spec_changed"));
    assert.throws(() => decide(record(), bad, 1500, SPEC), refused("approval_wrong_role"));
    assert.throws(() => decide(record(), { ...bad, role: "finance" }, 1500, SPEC), refused("approval_invalid_edit"));
  });

  it("a missing role is the wrong role when the record names one; none needed when it names none", () => {
    assert.throws(() => decide(record(), { approved: true }, 1500), (error: unknown) => {
      assert.ok(error instanceof ApprovalRefused);
      assert.equal(error.code, "approval_wrong_role");
      assert.equal(error.message, `approval ${record().id} is decided by role 'finance', not no role`);
      assert.equal(error.approval, record().id);
      return true;
    });
    assert.equal(decide(record({ approver_role: null }), { approved: true }, 1500).status, "approved");
  });

  it("an edit is a JSON object that comes with an approval", () => {
    const edited = decide(record(), { ...ok, edited: { amount: 100 } }, 1500);
    assert.deepEqual(edited.decision?.edited, { amount: 100 });
    assert.throws(() => decide(record(), { ...ok, approved: false, edited: { amount: 1 } }, 1500), /an edit is an approval/);
    assert.throws(() => decide(record(), { ...ok, edited: "x" as never }, 1500), /an edit is a JSON object, not a str/);
  });
});

describe("claim", () => {
  const identity = record().identity;

  it("pending: unchanged; approved: used once; denied: closed", () => {
    const [kind, same] = claim(record(), identity, SPEC, "run r1 step 2", 1500);
    assert.equal(kind, "pending");
    assert.deepEqual(same, record());
    const [approved, used] = claim(record({ status: "approved" }), identity, SPEC, "run r1 step 2", 1500);
    assert.equal(approved, "approved");
    assert.equal(used.status, "used");
    assert.deepEqual(used.used, { at: 1500, by: "run r1 step 2" });
    const [denied, closed] = claim(record({ status: "denied" }), identity, SPEC, "w", 1500);
    assert.equal(denied, "denied");
    assert.equal(closed.status, "closed");
  });

  it("is single use, strictly: a second claim is replayed, whoever asks", () => {
    const [, used] = claim(record({ status: "approved" }), identity, SPEC, "a", 1500);
    assert.throws(() => claim(used, identity, SPEC, "a", 1501), refused("approval_replayed"));
    assert.throws(() => claim(used, identity, SPEC, "b", 1501), /was used by a already: it is single use/);
  });

  it("refuses in order: spec changed, mismatch, replayed, expired", () => {
    const other = "sha256:" + "c".repeat(64);
    assert.throws(() => claim(record({ status: "used", expires_at: 0 }), other, OTHER, "x", 1500), refused("approval_spec_changed"));
    assert.throws(() => claim(record({ status: "used", expires_at: 0 }), other, SPEC, "x", 1500), refused("approval_mismatch"));
    assert.throws(() => claim(record({ status: "closed", expires_at: 0 }), identity, SPEC, "x", 1500), refused("approval_replayed"));
    assert.throws(() => claim(record({ status: "approved" }), identity, SPEC, "x", 2000), refused("approval_expired"));
  });

  it("names identities in a mismatch, never the arguments", () => {
    const other = identityOf(actionOf("tool.before", { tool: { name: "refund" }, call: { name: "refund", arguments: { amount: 901 } } }), "a");
    assert.throws(() => claim(record({ status: "approved" }), other, SPEC, "x", 1500), (error: unknown) => {
      assert.ok(error instanceof ApprovalRefused);
      assert.ok(error.message.includes(other) && error.message.includes(identity));
      assert.ok(!error.message.includes("amount"));
      return true;
    });
  });
});

describe("howToDecide and specIdentity", () => {
  it("says which approval, the role, the expiry and the commands", () => {
    const r = record({ expires_at: Date.UTC(2026, 11, 7, 16, 0, 0) / 1000 + 0.75 });
    assert.equal(
      howToDecide(r),
      `approval ${r.id} is pending (role finance, expires 2026-12-07T16:00:00Z): decide it with ` +
        `\`harnessweaver approvals approve ${r.id}\` or \`harnessweaver approvals deny ${r.id}\``,
    );
    assert.ok(howToDecide(record({ approver_role: null })).includes("(expires "));
  });

  it("a harness built in code is 'code'; a spec's depends on its task, env and entries", () => {
    assert.equal(specIdentity({ spec: null, task: null, env: null, entries: [] }), "code");
    const base = { spec: "h.yaml", task: null, env: null, entries: [{ name: "a", use: "x.y", settings: { n: 1 } }] };
    const id = specIdentity(base);
    assert.match(id, /^sha256:[0-9a-f]{64}$/);
    assert.notEqual(specIdentity({ ...base, task: "t" }), id);
    assert.notEqual(specIdentity({ ...base, entries: [{ name: "a", use: "x.y", settings: { n: 2 } }] }), id);
    assert.equal(specIdentity({ ...base, spec: "elsewhere.yaml" }), id); // the content, not the path
  });

  it("ids are ap_<16 hex of the binding>_<serial>", () => {
    assert.match(record().id, /^ap_[0-9a-f]{16}_1$/);
    assert.equal(record().id.slice(3, 19), record().binding.slice(7, 23));
  });
});
