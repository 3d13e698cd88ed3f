/**
 * The one contract every state store keeps (python/tests/state/contract.py says the same for
 * Python's): run by the memory, SQLite, Redis and PostgreSQL tests. `make` gives a fresh store;
 * each test uses keys of its own.
 */

import assert from "node:assert/strict";
import { it } from "node:test";
import { randomUUID } from "node:crypto";
import type { Store } from "../state/index.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function contractTests(make: () => Store | Promise<Store>, options: { readonly skip?: string | false } = {}): void {
  const skip = options.skip ?? false;
  const key = (name: string) => `hw1/app/test/run/${randomUUID()}/${name}`;
  const test = (name: string, body: (store: Store) => Promise<void>) =>
    it(name, { skip }, async () => {
      const store = await make();
      await body(store);
    });

  test("a missing counter is 0, a missing record is (null, 0)", async (store) => {
    assert.equal(await store.total(key("t")), 0);
    assert.deepEqual(await store.read(key("r")), { value: null, version: 0 });
    assert.equal(await store.release(key("t"), "h"), 0);
  });

  test("reserve holds within the limit, refuses beyond it, repeats nothing", async (store) => {
    const k = key("tokens");
    assert.deepEqual(await store.reserve(k, "a", 6, { limit: 10, ttl: 60 }), { granted: true, total: 6, repeated: false });
    assert.deepEqual(await store.reserve(k, "b", 5, { limit: 10, ttl: 60 }), { granted: false, total: 6, repeated: false });
    assert.deepEqual(await store.reserve(k, "a", 6, { limit: 10, ttl: 60 }), { granted: true, total: 6, repeated: true });
    assert.deepEqual(await store.reserve(k, "c", 4, { limit: 10, ttl: 60 }), { granted: true, total: 10, repeated: false });
    assert.deepEqual(await store.reserve(k, "d", 1, { limit: null, ttl: 60 }), { granted: true, total: 11, repeated: false });
    assert.equal(await store.total(k), 11);
  });

  test("commit charges once, replacing the hold; a committed hold stays charged", async (store) => {
    const k = key("cost");
    await store.reserve(k, "a", 5, { limit: 100, ttl: 60 });
    assert.equal(await store.commit(k, "a", 3.5), 3.5);
    assert.equal(await store.commit(k, "a", 3.5), 3.5);
    assert.deepEqual(await store.reserve(k, "a", 5, { limit: 100, ttl: 60 }), { granted: true, total: 3.5, repeated: true });
    assert.equal(await store.release(k, "a"), 3.5);
    assert.equal(await store.commit(k, "b", 0.25), 3.75); // without a reservation
    assert.equal(await store.total(k), 3.75);
  });

  test("release drops a live hold", async (store) => {
    const k = key("x");
    await store.reserve(k, "a", 2, { limit: null, ttl: 60 });
    await store.reserve(k, "b", 3, { limit: null, ttl: 60 });
    assert.equal(await store.release(k, "a"), 3);
    assert.equal(await store.release(k, "a"), 3);
    assert.equal(await store.total(k), 3);
  });

  test("holds and expiring charges expire; an expired reservation's commit still charges", async (store) => {
    const k = key("w");
    await store.reserve(k, "a", 1, { limit: 1, ttl: 0.15 });
    await store.commit(k, "b", 1, { ttl: 0.15 });
    await store.reserve(k, "c", 1, { limit: null, ttl: 0.15 });
    assert.equal(await store.total(k), 3);
    await sleep(300);
    assert.equal(await store.total(k), 0);
    assert.equal(await store.commit(k, "c", 1), 1);
    assert.deepEqual(await store.reserve(k, "d", 1, { limit: 1, ttl: 60 }), { granted: false, total: 1, repeated: false });
  });

  test("records: compare-and-set by version", async (store) => {
    const k = key("rec");
    assert.equal(await store.swap(k, 0, { calls: ["a"], n: 1.5 }), true);
    assert.deepEqual(await store.read(k), { value: { calls: ["a"], n: 1.5 }, version: 1 });
    assert.equal(await store.swap(k, 0, { calls: [] }), false);
    assert.equal(await store.swap(k, 2, { calls: [] }), false);
    assert.equal(await store.swap(k, 1, "text ü"), true);
    assert.deepEqual(await store.read(k), { value: "text ü", version: 2 });
  });

  test("life: a key is dropped that long after its last write", async (store) => {
    const [c, r] = [key("c"), key("r")];
    await store.commit(c, "a", 5, { life: 0.15 });
    await store.swap(r, 0, [1], { life: 0.15 });
    assert.equal(await store.total(c), 5);
    await sleep(300);
    assert.equal(await store.total(c), 0);
    assert.deepEqual(await store.read(r), { value: null, version: 0 });
    assert.equal(await store.swap(r, 0, [2]), true);
  });

  test("delete drops counters and records", async (store) => {
    const [a, b] = [key("a"), key("b")];
    await store.commit(a, "h", 2);
    await store.swap(a, 0, true);
    await store.reserve(b, "h", 1, { limit: null, ttl: 60 });
    await store.delete(a, b);
    assert.equal(await store.total(a), 0);
    assert.equal(await store.total(b), 0);
    assert.deepEqual(await store.read(a), { value: null, version: 0 });
    assert.equal(await store.commit(a, "h", 1), 1); // the mark went too
  });

  test("concurrent reserves never overspend", async (store) => {
    const k = key("race");
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => store.reserve(k, `h${i}`, 1, { limit: 10, ttl: 60 })));
    assert.equal(results.filter((r) => r.granted).length, 10);
    assert.equal(await store.total(k), 10);
  });

  test("bad arguments are the caller's bug (RangeError), not an outage", async (store) => {
    await assert.rejects(store.total(""), RangeError);
    await assert.rejects(store.reserve(key("k"), "h", Number.NaN, { limit: null, ttl: 1 }), RangeError);
    await assert.rejects(store.reserve(key("k"), "h", 1, { limit: null, ttl: 0 }), RangeError);
    await assert.rejects(store.swap(key("k"), -1, 1), RangeError);
  });
}

type Op =
  | { readonly op: "reserve"; readonly hold: string; readonly amount: number; readonly limit: number | null }
  | { readonly op: "commit"; readonly hold: string; readonly amount: number }
  | { readonly op: "release"; readonly hold: string }
  | { readonly op: "total" };

/** The plain model of one counter (nothing expires within a sequence: ttl 1 hour). */
class Model {
  base = 0;
  readonly live = new Map<string, number>();
  readonly done = new Set<string>();

  get total(): number {
    let sum = this.base;
    for (const amount of this.live.values()) sum += amount;
    return sum;
  }

  apply(op: Op): unknown {
    switch (op.op) {
      case "reserve": {
        const total = this.total;
        if (this.live.has(op.hold) || this.done.has(op.hold)) return { granted: true, total, repeated: true };
        if (op.limit !== null && total + op.amount > op.limit) return { granted: false, total, repeated: false };
        this.live.set(op.hold, op.amount);
        return { granted: true, total: total + op.amount, repeated: false };
      }
      case "commit":
        if (!this.done.has(op.hold)) {
          this.live.delete(op.hold);
          this.base += op.amount;
          this.done.add(op.hold);
        }
        return this.total;
      case "release":
        this.live.delete(op.hold);
        return this.total;
      case "total":
        return this.total;
    }
  }
}

/** Random reserve / commit / release / total sequences on one counter give the model's answers (whole amounts: no rounding). */
export function modelTests(make: () => Store | Promise<Store>, options: { readonly skip?: string | false; readonly runs?: number } = {}): void {
  it("random sequences on one counter answer as the plain model", { skip: options.skip ?? false }, async () => {
    const fc = (await import("fast-check")).default;
    const hold = fc.constantFrom("a", "b", "c", "d");
    const amount = fc.integer({ min: 0, max: 5 });
    const op: import("fast-check").Arbitrary<Op> = fc.oneof(
      fc.record({ op: fc.constant("reserve" as const), hold, amount, limit: fc.option(fc.integer({ min: 0, max: 12 }), { nil: null }) }),
      fc.record({ op: fc.constant("commit" as const), hold, amount }),
      fc.record({ op: fc.constant("release" as const), hold }),
      fc.record({ op: fc.constant("total" as const) }),
    );
    const store = await make();
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 25 }), async (ops) => {
        const key = `hw1/app/model/run/${randomUUID()}/n`;
        const model = new Model();
        for (const one of ops) {
          let got: unknown;
          if (one.op === "reserve") got = await store.reserve(key, one.hold, one.amount, { limit: one.limit, ttl: 3600 });
          else if (one.op === "commit") got = await store.commit(key, one.hold, one.amount);
          else if (one.op === "release") got = await store.release(key, one.hold);
          else got = await store.total(key);
          assert.deepEqual(got, model.apply(one), JSON.stringify(one));
        }
      }),
      { numRuns: options.runs ?? 100 },
    );
  });
}

/**
 * A counter key with thousands of committed marks and expired holds still gives exact totals
 * (python/tests/state/many.py): every store keeps a call's cost independent of how many holds
 * and marks a key has (Redis: the running sum `{K}:held`; SQL: the indexes).
 */
export function manyMarksTests(make: () => Store | Promise<Store>, options: { readonly skip?: string | false; readonly n?: number } = {}): void {
  const n = options.n ?? 5000;
  it(`a key with ${n} committed marks and expired holds gives exact totals`, { skip: options.skip ?? false, timeout: 120_000 }, async () => {
    const store = await make();
    const k = `hw1/app/test/run/${randomUUID()}/many`;
    for (let i = 0; i < n; i++) assert.equal(await store.commit(k, `m${i}`, 1), i + 1);
    for (let i = 0; i < n / 10; i++) await store.reserve(k, `x${i}`, 2, { limit: null, ttl: 0.05 });
    const live = await store.reserve(k, "live", 5, { limit: null, ttl: 600 });
    assert.ok(live.granted && !live.repeated); // its total: some of the 0.05 s holds may be gone
    await sleep(200);
    assert.equal(await store.total(k), n + 5); // the expired holds are gone, exactly
    assert.deepEqual(await store.reserve(k, "m7", 1, { limit: null, ttl: 600 }), { granted: true, total: n + 5, repeated: true });
    assert.equal(await store.commit(k, "m8", 1), n + 5);
    assert.equal(await store.release(k, "live"), n);
    assert.deepEqual(await store.reserve(k, "over", 1, { limit: n, ttl: 600 }), { granted: false, total: n, repeated: false });
    assert.equal(await store.commit(k, "late", 0.5, { ttl: 600 }), n + 0.5);
    assert.equal(await store.release(k, "late"), n);
    await store.delete(k);
    assert.equal(await store.total(k), 0);
  });
}
