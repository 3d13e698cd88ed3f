// The Redis and PostgreSQL stores against real servers (redis-server, PostgreSQL started here
// on random loopback ports in temporary directories; nothing mocked): the contract, the
// layout Python reads (the same keys, rows and Lua scripts: a counter written here reads the
// same from Python's layout), an outage (the server killed: StateUnavailable, then recovery),
// and that no URL reaches an error. Without the binaries these skip, except under CI.

import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { MemoryStore, StateUnavailable, StateView } from "../state/index.js";
import { PostgresStore } from "../state/postgres.js";
import { counterKeys, luaScripts, RedisStore, recordKey } from "../state/redis.js";
import { contractTests, manyMarksTests, modelTests } from "../testing/state-contract.js";
import { missing, postgresBin, PostgresServer, redisBinary, RedisServer } from "../testing/servers.js";

const REPO = new URL("../../../", import.meta.url);

describe("the Lua scripts", () => {
  it("are byte-identical copies of python/harnessweaver/state/lua/", () => {
    const python = new URL("python/harnessweaver/state/lua/", REPO);
    const ours = new URL("ts-runner/src/state/lua/", REPO);
    const names = readdirSync(python).filter((name) => name.endsWith(".lua")).sort();
    assert.deepEqual(readdirSync(ours).filter((name) => name.endsWith(".lua")).sort(), names);
    for (const name of names) assert.ok(readFileSync(new URL(name, python)).equals(readFileSync(new URL(name, ours))), name);
    assert.equal(luaScripts().size, 7); // and the built package ships them (dist/state/lua)
  });
});

type Raw = { call(...args: string[]): Promise<unknown>; disconnect(): void };

async function rawRedis(url: string): Promise<Raw> {
  const name = "ioredis";
  const { Redis } = (await import(name)) as { Redis: new (url: string) => Raw };
  return new Redis(url);
}

const redisSkip = missing("redis-server", redisBinary(), "apt-get install redis-server") ?? false;

describe("RedisStore on a real redis-server", () => {
  let server: RedisServer;
  const stores: RedisStore[] = [];
  const make = () => {
    const store = new RedisStore(server.url);
    stores.push(store);
    return store;
  };
  before(async () => {
    if (redisSkip !== false) return;
    server = new RedisServer(redisBinary() as string);
    await server.start();
  });
  after(async () => {
    for (const store of stores) await store.close();
    await server?.stop();
  });

  contractTests(make, { skip: redisSkip });
  modelTests(make, { skip: redisSkip, runs: 50 });
  manyMarksTests(make, { skip: redisSkip });

  it("writes Python's layout: {K}:base, {K}:live, {K}:exp, {K}:done, {K}:held, {K}:rec", { skip: redisSkip }, async () => {
    const store = make();
    const key = "hw1/app/budget/org/-/tokens";
    await store.commit(key, "run1/1/abc", 120);
    await store.reserve(key, "run2/1/model", 30, { limit: 1000, ttl: 600 });
    await store.swap(key, 0, { n: 1 });
    const raw = await rawRedis(server.url);
    try {
      const [base, live, exp, done, held] = counterKeys(key);
      assert.equal(base, "{hw1/app/budget/org/-/tokens}:base");
      assert.equal(Number(await raw.call("GET", base)), 120);
      assert.deepEqual(await raw.call("HGETALL", live), ["run2/1/model", "30"]);
      assert.deepEqual(await raw.call("ZRANGE", exp, "0", "-1"), ["run2/1/model"]);
      assert.deepEqual(await raw.call("ZRANGE", done, "0", "-1"), ["run1/1/abc"]);
      assert.equal(Number(await raw.call("GET", held)), 30); // the live holds' running sum
      assert.deepEqual(await raw.call("HMGET", recordKey(key), "v", "d"), ["1", '{"n":1}']);
      // What a Python worker wrote (repr floats) reads the same here.
      await raw.call("SET", base, "0.10000000000000001");
      await raw.call("HSET", live, "py/1/x", "2.5");
      await raw.call("SET", held, "32.5");
      await raw.call("ZADD", exp, String(Date.now() + 60_000), "py/1/x");
      assert.equal(await store.total(key), 0.1 + 30 + 2.5);
    } finally {
      raw.disconnect();
    }
  });

  it("is unavailable while the server is down, and recovers when it is back", { skip: redisSkip }, async () => {
    const store = make();
    const view = new StateView(store, { layer: "app", item: "budget", failMode: "closed", timeout: 0.5 });
    const key = "hw1/app/budget/org/-/outage";
    await view.commit(key, "a", 1);
    await server.kill();
    await assert.rejects(view.commit(key, "b", 1), (error: unknown) => {
      assert.ok(error instanceof StateUnavailable, String(error));
      assert.equal(error.backend, "redis");
      assert.doesNotMatch(error.message, /127\.0\.0\.1|redis:\/\//);
      return true;
    });
    await server.start(); // the same port and append-only file
    let total: number | null = null;
    for (let i = 0; i < 50 && total === null; i++) {
      total = await view.commit(key, "b", 1).catch(() => null);
      if (total === null) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(total, 2);
  });

  it("says nothing of its URL", () => {
    const store = new RedisStore("redis://:hunter2@127.0.0.1:1/0");
    assert.equal(String(store), "RedisStore(redis)");
    assert.equal(JSON.stringify(store), '{"backend":"redis"}');
  });
});

const postgresSkip = missing("PostgreSQL (initdb, postgres)", postgresBin(), "apt-get install postgresql") ?? false;

describe("PostgresStore on a real PostgreSQL", () => {
  let server: PostgresServer;
  const stores: PostgresStore[] = [];
  const make = () => {
    const store = new PostgresStore(server.url);
    stores.push(store);
    return store;
  };
  before(async () => {
    if (postgresSkip !== false) return;
    server = new PostgresServer(postgresBin() as string);
    await server.start();
    const probe = make();
    for (let i = 0; ; i++) {
      // until "the database system is starting up" is over
      if ((await probe.total("hw1/probe").catch(() => null)) !== null) break;
      if (i > 300) throw new Error("PostgreSQL refused connections");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });
  after(async () => {
    for (const store of stores) await store.close();
    await server?.stop();
  });

  contractTests(make, { skip: postgresSkip });
  modelTests(make, { skip: postgresSkip, runs: 25 });
  manyMarksTests(make, { skip: postgresSkip });

  it("writes Python's rows: hw_state_counter, hw_state_hold, hw_state_record", { skip: postgresSkip }, async () => {
    const store = make();
    const key = "hw1/app/budget/org/-/pg-tokens";
    await store.commit(key, "run1/1/abc", 120);
    await store.reserve(key, "run2/1/model", 30, { limit: 1000, ttl: 600 });
    await store.swap(key, 0, { n: 1 });
    const name = "pg";
    const { Client } = (await import(name)) as {
      Client: new (url: string) => { connect(): Promise<void>; query(q: string, v?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>; end(): Promise<void> };
    };
    const client = new Client(server.url);
    await client.connect();
    try {
      const counter = await client.query("SELECT base, expires_at FROM hw_state_counter WHERE key = $1", [key]);
      assert.deepEqual(counter.rows, [{ base: 120, expires_at: null }]);
      const holds = await client.query("SELECT hold, amount, done FROM hw_state_hold WHERE key = $1 ORDER BY hold", [key]);
      assert.deepEqual(holds.rows, [
        { hold: "run1/1/abc", amount: 120, done: true },
        { hold: "run2/1/model", amount: 30, done: false },
      ]);
      const record = await client.query("SELECT version, value FROM hw_state_record WHERE key = $1", [key]);
      assert.deepEqual(record.rows, [{ version: "1", value: '{"n":1}' }]);
      // A row a Python worker wrote reads the same here.
      await client.query("INSERT INTO hw_state_hold VALUES ($1, 'py/1/x', 2.5, extract(epoch FROM clock_timestamp()) + 60, false)", [key]);
      assert.equal(await store.total(key), 152.5);
    } finally {
      await client.end();
    }
  });

  it("is unavailable while the server is down, and recovers when it is back", { skip: postgresSkip }, async () => {
    const store = make();
    const view = new StateView(store, { layer: "app", item: "budget", failMode: "closed", timeout: 1 });
    const key = "hw1/app/budget/org/-/pg-outage";
    await view.commit(key, "a", 1);
    await server.kill();
    await assert.rejects(view.commit(key, "b", 1), (error: unknown) => {
      assert.ok(error instanceof StateUnavailable, String(error));
      assert.equal(error.backend, "postgres");
      assert.doesNotMatch(error.message, /127\.0\.0\.1|postgresql:\/\//);
      return true;
    });
    await server.start(); // the same port and data directory
    let total: number | null = null;
    for (let i = 0; i < 200 && total === null; i++) {
      total = await view.commit(key, "b", 1).catch(() => null);
      if (total === null) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(total, 2); // the charge before the outage kept, the one after counted once
    assert.equal(await view.commit(key, "b", 1), 2);
  });

  it("says nothing of its URL", () => {
    const store = new PostgresStore("postgresql://u:hunter2@127.0.0.1:1/db");
    assert.equal(String(store), "PostgresStore(postgres)");
    assert.equal(JSON.stringify(store), '{"backend":"postgres"}');
  });

  it("is unavailable when nothing listens", async () => {
    const store = new PostgresStore("postgresql://u:hunter2@127.0.0.1:1/db", { connectTimeout: 500 });
    await assert.rejects(store.total("k"), (error: unknown) => error instanceof StateUnavailable && !/hunter2|127/.test(error.message));
    await store.close();
  });
});

describe("SqliteStore", () => {
  it("needs node:sqlite: on an older Node it says so", async () => {
    const { SqliteStore } = await import("../state/sqlite.js");
    const major = Number(process.versions.node.split(".")[0]);
    if (major >= 23) {
      const store = await SqliteStore.open(":memory:");
      assert.equal(await store.commit("k", "h", 2), 2);
      await store.close();
      return;
    }
    await SqliteStore.open(":memory:").then(
      async (store) => store.close(), // Node 22.5+: available
      (error: unknown) => assert.match(String(error), /needs node:sqlite, which Node .* does not have/),
    );
  });
});

void MemoryStore;
