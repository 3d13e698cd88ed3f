// The state layer in one process: MemoryStore's contract and bounds, state keys (the same
// text as Python's), the view (timeouts, failures, the fail mode's Block), `state:` config.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Envelope } from "../index.js";
import {
  attach,
  LookupError,
  MemoryStore,
  parseConfig,
  quote,
  stateful,
  StateConfigError,
  StateSlot,
  stateKey,
  StateUnavailable,
  StateView,
  type Store,
} from "../state/index.js";
import { middleware } from "../middleware.js";
import { contractTests, manyMarksTests, modelTests } from "../testing/state-contract.js";

describe("MemoryStore: the contract", () => {
  contractTests(() => new MemoryStore());
  modelTests(() => new MemoryStore(), { runs: 300 });
  manyMarksTests(() => new MemoryStore());
});

describe("MemoryStore: bounds and clock", () => {
  it("keeps at most maxKeys keys, the least recently used dropped first", async () => {
    const store = new MemoryStore({ maxKeys: 2 });
    await store.commit("a", "h", 1);
    await store.commit("b", "h", 1);
    await store.total("a");
    await store.commit("c", "h", 1);
    assert.equal(await store.total("a"), 1);
    assert.equal(await store.total("b"), 0);
    assert.equal(store.size, 2);
  });

  it("keeps at most maxHolds holds and marks a counter, the ones expiring first dropped first", async () => {
    const store = new MemoryStore({ maxHolds: 2 });
    await store.reserve("k", "a", 1, { limit: null, ttl: 10 });
    await store.reserve("k", "b", 1, { limit: null, ttl: 20 });
    await store.reserve("k", "c", 1, { limit: null, ttl: 30 });
    assert.equal(await store.total("k"), 2);
  });

  it("uses the clock given; a closed store is unavailable", async () => {
    let now = 100;
    const store = new MemoryStore({ clock: () => now });
    await store.reserve("k", "a", 1, { limit: null, ttl: 5 });
    now = 104.9;
    assert.equal(await store.total("k"), 1);
    now = 105;
    assert.equal(await store.total("k"), 0);
    await store.close();
    await assert.rejects(store.total("k"), (error: unknown) => error instanceof StateUnavailable && error.message === "state store memory: total failed: closed");
  });

  it("keeps a copy of a record", async () => {
    const store = new MemoryStore();
    const value = { list: [1] };
    await store.swap("k", 0, value);
    value.list.push(2);
    assert.deepEqual((await store.read("k")).value, { list: [1] });
  });
});

describe("state keys", () => {
  it("percent-encode each part as Python's urllib.parse.quote(p, safe='')", () => {
    // Python: urllib.parse.quote(p, safe="") for each of these.
    assert.equal(quote("abc-XYZ_0.9~"), "abc-XYZ_0.9~");
    assert.equal(quote("a/b c"), "a%2Fb%20c");
    assert.equal(quote("!*'()"), "%21%2A%27%28%29");
    assert.equal(quote("ü€😀"), "%C3%BC%E2%82%AC%F0%9F%98%80");
    assert.equal(quote("%{}:"), "%25%7B%7D%3A");
    assert.equal(quote(""), "");
    assert.throws(() => quote("\ud800"), TypeError);
  });

  it("name layer, item, scope, subject and name", () => {
    assert.equal(stateKey("app", "budget", "org", "-", "tokens"), "hw1/app/budget/org/-/tokens");
    assert.equal(stateKey("task", "harnessweaver.budget_guard", "user", "ann@x.org/1", "cost_usd"), "hw1/task/harnessweaver.budget_guard/user/ann%40x.org%2F1/cost_usd");
  });

  it("take each scope's subject from the envelope, the task or nothing", () => {
    const view = new StateView(new MemoryStore(), { layer: "app", item: "g", failMode: "closed", task: "triage" });
    const envelope = new Envelope({ runId: "r1", attributes: { user: "ann", session: "s", app: "shop" } });
    assert.equal(view.key("run", envelope, "n"), "hw1/app/g/run/r1/n");
    assert.equal(view.key("user", envelope, "n"), "hw1/app/g/user/ann/n");
    assert.equal(view.key("session", envelope, "n"), "hw1/app/g/session/s/n");
    assert.equal(view.key("app", envelope, "n"), "hw1/app/g/app/shop/n");
    assert.equal(view.key("task", envelope, "n"), "hw1/app/g/task/triage/n");
    assert.equal(view.key("org", envelope, "n"), "hw1/app/g/org/-/n");
    const noTask = new StateView(new MemoryStore(), { layer: "app", item: "g", failMode: "closed" });
    assert.equal(noTask.key("task", envelope, "n"), "hw1/app/g/task/-/n");
    assert.throws(() => view.key("user", new Envelope({ runId: "r" }), "n"), (error: unknown) => error instanceof LookupError && /attribute 'user'/.test(error.message));
    assert.throws(() => view.key("user", new Envelope({ runId: "r", attributes: { user: 7 } }), "n"), LookupError);
    assert.throws(() => view.key("planet", envelope, "n"), RangeError);
  });
});

/** A store whose calls never answer, or fail with an error holding a URL. */
function brokenStore(how: "hang" | "fail"): Store {
  const act = () => (how === "hang" ? new Promise<never>(() => {}) : Promise.reject(new Error("connect ECONNREFUSED redis://:secret@10.0.0.1")));
  return {
    backend: "redis",
    reserve: act,
    commit: act,
    release: act,
    total: act,
    read: act,
    swap: act,
    delete: act,
    close: async () => {},
  };
}

describe("StateView", () => {
  it("bounds each call by its timeout and names no URL in a failure", async () => {
    const slow = new StateView(brokenStore("hang"), { layer: "app", item: "g", failMode: "closed", timeout: 0.05 });
    await assert.rejects(slow.total("k"), (error: unknown) => error instanceof StateUnavailable && error.message === "state store redis: total failed: timed out");
    const failing = new StateView(brokenStore("fail"), { layer: "app", item: "g", failMode: "open" });
    await assert.rejects(failing.commit("k", "h", 1), (error: unknown) => {
      assert.ok(error instanceof StateUnavailable);
      assert.equal(error.message, "state store redis: commit failed: Error");
      assert.doesNotMatch(String(error.stack), /secret/);
      return true;
    });
  });

  it("answers a closed failure with its Block", () => {
    const view = new StateView(new MemoryStore(), { layer: "app", item: "budget", failMode: "closed" });
    assert.deepEqual(view.unavailable(new StateUnavailable("redis", "reserve")), {
      kind: "block",
      reason: "middleware budget: state store unavailable (redis)",
      code: "state_unavailable",
    } as unknown);
  });

  it("refuses bad arguments before calling the store", async () => {
    const view = new StateView(brokenStore("hang"), { layer: "app", item: "g", failMode: "closed" });
    await assert.rejects(view.total(""), RangeError);
    assert.throws(() => new StateView(new MemoryStore(), { layer: "", item: "g", failMode: "closed" }), RangeError);
    assert.throws(() => new StateView(new MemoryStore(), { layer: "app", item: "g", failMode: "closed", timeout: 0 }), RangeError);
  });

  it("is attached to a stateful middleware, which otherwise makes a private one", () => {
    const slot = new StateSlot("counter", "closed");
    const fn = stateful(async () => null, slot);
    const declared = middleware({ name: "counter", hooks: ["tool.before"], failMode: "closed" }, fn);
    const privateView = slot.view;
    assert.equal(privateView.backend, "memory");
    assert.equal(privateView.layer, "app");
    const store = new MemoryStore();
    const view = attach(declared, store, { layer: "org_profile", name: "cap", task: "t" });
    assert.equal(slot.view, view);
    assert.equal(view.item, "cap");
    assert.equal(view.failMode, "closed");
    const plain = middleware({ name: "plain", hooks: ["tool.before"], failMode: "closed" }, async () => null);
    assert.throws(() => attach(plain, store), TypeError);
  });
});

describe("state: config", () => {
  const environ = { REDIS_URL: "redis://:pw@127.0.0.1:6379/0", EMPTY: "" };

  it("defaults to memory and expands ${NAME} references", () => {
    assert.equal(parseConfig(null).backend, "memory");
    const config = parseConfig({ backend: "redis", url: "${REDIS_URL}", timeout: "100ms" }, { environ });
    assert.equal(config.url, environ.REDIS_URL);
    assert.equal(config.timeout, 0.1);
    assert.equal(String(config), "StateConfig(backend=redis, timeout=0.1)");
    assert.equal(parseConfig({ backend: "sqlite", path: "state.db" }, { base: "/srv/app" }).path, "/srv/app/state.db");
  });

  it("names the key and the variable of every problem, never a value", () => {
    const problems = (raw: unknown) => {
      try {
        parseConfig(raw, { environ });
      } catch (error) {
        assert.ok(error instanceof StateConfigError);
        assert.doesNotMatch(error.message, /pw@/);
        return error.problems;
      }
      assert.fail("no error");
    };
    assert.deepEqual(problems({ backend: "redis", url: "${NOPE}" }), [["url", "the environment variable NOPE referenced by url is not set"]]);
    assert.deepEqual(problems({ backend: "etcd" }), [["backend", "unknown backend: the backends are memory, sqlite, redis, postgres"]]);
    assert.deepEqual(problems({ backend: "redis" }), [["url", "backend redis needs url"]]);
    assert.deepEqual(problems({ backend: "memory", url: "${REDIS_URL}", colour: 1 }), [
      ["colour", "unknown key: the keys are backend, url, path, timeout"],
      ["url", "backend memory takes no url"],
    ]);
    assert.deepEqual(problems({ backend: "postgres", url: "${EMPTY}" }), [["url", "url is empty once its references are expanded"]]);
    assert.deepEqual(problems({ backend: "redis", url: "${REDIS_URL}", timeout: "soon" }), [["timeout", "timeout is a duration such as 250ms or 1s"]]);
    assert.deepEqual(problems(["redis"]), [["", "state is a mapping such as {backend: sqlite, path: state.db}, got list"]]);
  });
});
