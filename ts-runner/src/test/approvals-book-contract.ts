// The approvals book's behaviour on any store (run by approvals-book.test.ts on memory and by
// approvals-servers.test.ts on Redis and PostgreSQL). Each test makes its own book with a clock
// it moves, and a spec identity of its own, so tests never see each other's bindings.

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { it } from "node:test";
import { ApprovalRefused, Approvals, MAX_OPEN, type ApprovalRecord } from "../approvals/index.js";
import { INDEX_KEY, bindingKey, recordKey } from "../approvals/book.js";
import { ToolCallEvent } from "../events.js";
import type { Store } from "../state/store.js";

export const T0 = 1_800_000_000;

export function call(amount: number, id = "c1"): { tool: { name: string }; call: { id: string; name: string; arguments: { amount: number } } } {
  return { tool: { name: "refund" }, call: { id, name: "refund", arguments: { amount } } };
}

export function book(store: Store, options: { expiresAfter?: number; notify?: (r: ApprovalRecord) => void } = {}) {
  const clock = { now: T0 };
  const spec = `spec-${randomUUID()}`;
  const approvals = new Approvals(store, { spec, clock: () => clock.now, ...options });
  return { approvals, clock, spec };
}

function refused(code: string) {
  return (error: unknown) => {
    assert.ok(error instanceof ApprovalRefused, String(error));
    assert.equal(error.code, code, error.message);
    return true;
  };
}

const FILE = { hook: "tool.before", reason: "big refund", approverRole: "finance", subject: "run:r1", filedBy: "openai-agents-js" } as const;

export function bookTests(make: () => Store | Promise<Store>, options: { readonly skip?: string | false; readonly full?: boolean } = {}): void {
  const skip = options.skip ?? false;
  const test = (name: string, body: (store: Store) => Promise<void>) => it(name, { skip }, async () => body(await make()));

  test("files a record: the schema, its keys, pending", async (store) => {
    const { approvals, spec } = book(store, { expiresAfter: 3600 });
    const record = await approvals.file({ ...FILE, event: call(900), code: "refund_cap" });
    assert.match(record.id, /^ap_[0-9a-f]{16}_1$/);
    assert.equal(record.status, "pending");
    assert.equal(record.spec, spec);
    assert.equal(record.tool, "refund");
    assert.deepEqual(record.action, { hook: "tool.before", tool: "refund", arguments: { amount: 900 } });
    assert.equal(record.expires_at, T0 + 3600);
    assert.deepEqual(await approvals.get(record.id), record);
    assert.deepEqual((await store.read(bindingKey(record.binding))).value, { id: record.id, serial: 1 });
    const index = (await store.read(INDEX_KEY)).value as { ids: [string, number][] };
    assert.ok(index.ids.some(([id]) => id === record.id));
    assert.equal((await store.read(recordKey(record.id))).version, 1);
  });

  test("filing is idempotent per binding; another call id is the same action, another amount is not", async (store) => {
    const { approvals } = book(store);
    const first = await approvals.file({ ...FILE, event: call(900) });
    assert.deepEqual(await approvals.file({ ...FILE, event: call(900, "c2") }), first);
    assert.notEqual((await approvals.file({ ...FILE, event: call(901) })).id, first.id);
    assert.notEqual((await approvals.file({ ...FILE, event: call(900), subject: "run:r2" })).id, first.id);
  });

  test("approve then claim: approved once, the second claim replayed", async (store) => {
    const { approvals, clock } = book(store);
    const record = await approvals.file({ ...FILE, event: call(900) });
    assert.equal((await approvals.claim(record.id, { hook: "tool.before", event: call(900), consumer: "a" })).kind, "pending");
    clock.now += 10;
    const approved = await approvals.approve(record.id, { role: "finance", by: "ana", reason: "ok" });
    assert.equal(approved.status, "approved");
    assert.equal(approved.decision?.at, T0 + 10);
    const verdict = await approvals.claim(record.id, { hook: "tool.before", event: call(900, "c9"), consumer: "run r1 step 3" });
    assert.equal(verdict.kind, "approved");
    assert.equal(verdict.record.status, "used");
    assert.deepEqual(verdict.record.used, { at: T0 + 10, by: "run r1 step 3" });
    await assert.rejects(approvals.claim(record.id, { hook: "tool.before", event: call(900), consumer: "run r1 step 3" }), refused("approval_replayed"));
    await assert.rejects(approvals.approve(record.id, { role: "finance" }), refused("approval_replayed"));
  });

  test("concurrent claims of one approval: exactly one wins", async (store) => {
    const { approvals } = book(store);
    const record = await approvals.file({ ...FILE, event: call(900) });
    await approvals.approve(record.id, { role: "finance" });
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) => approvals.claim(record.id, { hook: "tool.before", event: call(900), consumer: `w${i}` })),
    );
    const won = results.filter((r) => r.status === "fulfilled" && r.value.kind === "approved");
    const replayed = results.filter((r) => r.status === "rejected" && r.reason instanceof ApprovalRefused && r.reason.code === "approval_replayed");
    assert.equal(won.length, 1);
    assert.equal(replayed.length, 7);
  });

  test("deny: the claim says denied and closes it", async (store) => {
    const { approvals } = book(store);
    const record = await approvals.file({ ...FILE, event: call(900) });
    await approvals.deny(record.id, { role: "finance", reason: "no" });
    const verdict = await approvals.claim(record.id, { hook: "tool.before", event: call(900), consumer: "w" });
    assert.equal(verdict.kind, "denied");
    assert.equal((await approvals.get(record.id)).status, "closed");
  });

  test("edit: the verdict's event carries the new arguments, in the form it was given", async (store) => {
    const { approvals } = book(store);
    const event = new ToolCallEvent(call(900));
    const record = await approvals.file({ ...FILE, event });
    await approvals.edit(record.id, { amount: 100 }, { role: "finance" });
    const verdict = await approvals.claim(record.id, { hook: "tool.before", event, consumer: "w" });
    assert.equal(verdict.kind, "approved");
    assert.ok(verdict.event instanceof ToolCallEvent);
    assert.deepEqual(verdict.event.call.arguments, { amount: 100 });
    assert.equal(verdict.event.call.id, "c1");
  });

  test("refusals through the book: unknown, wrong role, spec changed, mismatch, expired", async (store) => {
    const { approvals, clock, spec } = book(store, { expiresAfter: 60 });
    await assert.rejects(approvals.get("ap_0123456789abcdef_1"), refused("approval_unknown"));
    await assert.rejects(approvals.get("nope"), refused("approval_unknown"));
    const record = await approvals.file({ ...FILE, event: call(900) });
    await assert.rejects(approvals.approve(record.id), refused("approval_wrong_role"));
    await assert.rejects(approvals.approve(record.id, { role: "finance", spec: `${spec}-v2` }), refused("approval_spec_changed"));
    await approvals.approve(record.id, { role: "finance", spec });
    await assert.rejects(approvals.claim(record.id, { hook: "tool.before", event: call(901), consumer: "w" }), refused("approval_mismatch"));
    const other = new Approvals(store, { spec: `${spec}-v2`, clock: () => clock.now });
    await assert.rejects(other.claim(record.id, { hook: "tool.before", event: call(900), consumer: "w" }), refused("approval_spec_changed"));
    clock.now += 60;
    await assert.rejects(approvals.claim(record.id, { hook: "tool.before", event: call(900), consumer: "w" }), refused("approval_expired"));
    assert.equal((await approvals.get(record.id)).status, "approved"); // a refused claim wrote nothing
  });

  test("list: filing order, by status as statusAt says", async (store) => {
    const { approvals, clock } = book(store, { expiresAfter: 100 });
    const a = await approvals.file({ ...FILE, event: call(1) });
    clock.now += 1;
    const b = await approvals.file({ ...FILE, event: call(2) });
    await approvals.approve(b.id, { role: "finance" });
    const mine = (records: ApprovalRecord[]) => records.filter((r) => r.spec === approvals.spec).map((r) => r.id);
    assert.deepEqual(mine(await approvals.list()), [a.id, b.id]);
    assert.deepEqual(mine(await approvals.list({ status: "pending" })), [a.id]);
    assert.deepEqual(mine(await approvals.list({ status: "approved" })), [b.id]);
    clock.now += 100;
    assert.deepEqual(mine(await approvals.list({ status: "expired" })), [a.id, b.id]);
    await assert.rejects(approvals.list({ status: "odd" as never }), /a status is one of/);
  });

  test("consult: files, stays pending, claims once decided, files anew after use", async (store) => {
    const { approvals } = book(store);
    const ask = (id: string) => approvals.consult({ ...FILE, event: call(900, id), consumer: `call ${id}` });
    const first = await ask("c1");
    assert.equal(first.kind, "pending");
    const again = await ask("c2");
    assert.equal(again.kind, "pending");
    assert.equal(again.record.id, first.record.id);
    await approvals.approve(first.record.id, { role: "finance" });
    const approved = await ask("c3");
    assert.equal(approved.kind, "approved");
    assert.equal(approved.record.id, first.record.id);
    const next = await ask("c4"); // the approval was used: a new one is asked for
    assert.equal(next.kind, "pending");
    assert.match(next.record.id, /_2$/);
    await approvals.deny(next.record.id, { role: "finance" });
    assert.equal((await ask("c5")).kind, "denied");
  });

  test("an expired record is filed anew (serial + 1)", async (store) => {
    const { approvals, clock } = book(store, { expiresAfter: 10 });
    const first = await approvals.file({ ...FILE, event: call(900) });
    clock.now += 10;
    const second = await approvals.file({ ...FILE, event: call(900) });
    assert.notEqual(second.id, first.id);
    assert.match(second.id, /_2$/);
  });

  test("notifies new records only; a failing notifier never stops the filing", async (store) => {
    const told: string[] = [];
    const { approvals } = book(store, { notify: (r) => void told.push(r.id) });
    const record = await approvals.file({ ...FILE, event: call(900) });
    await approvals.file({ ...FILE, event: call(900) });
    assert.deepEqual(told, [record.id]);
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.message);
    process.on("warning", onWarning);
    try {
      const failing = book(store, {
        notify: () => {
          throw new TypeError("https://user:pw@hooks.invalid/x failed");
        },
      }).approvals;
      const filed = await failing.file({ ...FILE, event: call(7) });
      assert.equal(filed.status, "pending");
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(warnings, [`approval ${filed.id}: the notifier failed: TypeError`]);
    } finally {
      process.off("warning", onWarning);
    }
  });

  if (options.full !== false) {
    test("the index is bounded: a full index refuses approvals_full, expired entries are pruned", async (store) => {
      const { approvals, clock } = book(store);
      const saved = await store.read(INDEX_KEY);
      const ids = Array.from({ length: MAX_OPEN }, (_, i) => [`ap_${"0".repeat(16)}_${i + 1}`, T0 + 5]);
      assert.ok(await store.swap(INDEX_KEY, saved.version, { ids }));
      try {
        await assert.rejects(approvals.file({ ...FILE, event: call(900) }), refused("approvals_full"));
        clock.now = T0 + 6; // every entry is past its drop time now
        const record = await approvals.file({ ...FILE, event: call(900) });
        assert.equal(((await store.read(INDEX_KEY)).value as { ids: unknown[] }).ids.length, 1);
        assert.equal(record.status, "pending");
      } finally {
        const now = await store.read(INDEX_KEY);
        await store.swap(INDEX_KEY, now.version, saved.value ?? { ids: [] });
      }
    });
  }

  test("a store that is down: StateUnavailable, never a verdict", async (store) => {
    const { approvals } = book(store);
    const record = await approvals.file({ ...FILE, event: call(900) });
    await store.close();
    const { StateUnavailable } = await import("../state/store.js");
    await assert.rejects(approvals.claim(record.id, { hook: "tool.before", event: call(900), consumer: "w" }), StateUnavailable);
    await assert.rejects(approvals.consult({ ...FILE, event: call(900), consumer: "w" }), StateUnavailable);
  });
}
