// The approvals book on the memory store (the same tests run on Redis and PostgreSQL in
// approvals-servers.test.ts), and a record that is not one: refused, never trusted.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { recordKey } from "../approvals/book.js";
import { MemoryStore, StateUnavailable } from "../state/index.js";
import { book, bookTests, call } from "./approvals-book-contract.js";

describe("Approvals on a MemoryStore", () => {
  bookTests(() => new MemoryStore());

  it("a malformed stored record is StateUnavailable (fail closed)", async () => {
    const store = new MemoryStore();
    const { approvals } = book(store);
    const record = await approvals.file({ hook: "tool.before", event: call(5), reason: "r", filedBy: "t" });
    const found = await store.read(recordKey(record.id));
    assert.ok(await store.swap(recordKey(record.id), found.version, { v: 2, id: record.id }));
    await assert.rejects(approvals.get(record.id), (error: unknown) => error instanceof StateUnavailable && /invalid approval record/.test(error.message));
  });

  it("checks its options", () => {
    assert.throws(() => book(new MemoryStore(), { expiresAfter: 0 }), /expires_after is a number of seconds > 0/);
  });
});
