// harnessweaver.authzen when the decision point gives no usable answer (Python:
// test_authzen_failures.py): every such answer is an AuthZenError and the item's fail mode
// decides (closed: Block; open: the run goes on, the failure recorded), never a silent allow.
// The bearer token is never in an error, the trace, a log line or an inspection.

import assert from "node:assert/strict";
import { inspect } from "node:util";
import { describe, it } from "node:test";
import { Continue, HookBus } from "../index.js";
import { SettingsError } from "../builtins/settings.js";
import { AuthZen, authzen, MAX_BODY } from "../policies/authzen.js";
import { AuthZenError } from "../policies/errors.js";
import { call, closedPort, Misbehaving, run, startPdp, withoutGo, type Mode } from "./authzen-support.test.js";

const TOKEN = "tok-PLANTED-5f1c9e0b7a2d4e86";
const TOKEN_ENV = "HW_TEST_AUTHZEN_TOKEN";

const BAD_ANSWERS: Record<string, string> = {
  slow: "did not answer within",
  "500": "answered HTTP 500",
  redirect: "answered HTTP 302",
  garbage: "answered with no JSON",
  huge: `answered more than ${MAX_BODY} bytes`,
  string: "without a boolean decision",
  number: "without a boolean decision",
  null: "without a boolean decision",
  missing: "without a boolean decision",
};

// Short only where the point never answers: elsewhere a loaded machine must not turn an answer into a timeout.
const timeoutFor = (mode: string) => (mode === "slow" || mode === "all" ? "300ms" : "20s");
const guard = (url: string, mode = "", settings: Record<string, unknown> = {}) => new AuthZen({ url, timeout: timeoutFor(mode), ...settings });

async function rejection(promise: Promise<unknown>): Promise<AuthZenError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof AuthZenError, String(error));
    return error;
  }
  assert.fail("a decision was given");
}

describe("authzen: a bad answer is an AuthZenError", () => {
  for (const [mode, words] of Object.entries(BAD_ANSWERS)) {
    it(mode, async () => {
      const point = await new Misbehaving(mode as Mode).start();
      try {
        const error = await rejection(guard(point.url, mode).decide(call(), run({ user: "alice" }).envelope));
        assert.ok(error.message.includes(words), error.message);
        assert.ok(error.message.endsWith("(I38)"), error.message);
      } finally {
        await point.close();
      }
    });
  }

  it("unreachable", async () => {
    const error = await rejection(guard(`http://127.0.0.1:${await closedPort()}`).decide(call(), run().envelope));
    assert.match(error.message, /could not be reached \(I38\)$/);
  });

  it("a batch answer short of one decision per question", async () => {
    const point = await new Misbehaving("short", {}).start();
    try {
      (point.metadata as Record<string, string>)["access_evaluations_endpoint"] = `${point.url}/access/v1/evaluations`;
      const error = await rejection(guard(point.url).evaluateMany([{ a: 1 }, { b: 2 }]));
      assert.match(error.message, /one decision per request \(2 asked\)/);
    } finally {
      await point.close();
    }
  });

  it("metadata naming another origin: refused, nothing posted", async () => {
    const point = await new Misbehaving("allow", { access_evaluations_endpoint: "http://127.0.0.1:9/steal" }).start();
    try {
      const error = await rejection(guard(point.url).evaluateMany([{ a: 1 }]));
      assert.match(error.message, /off its own origin/);
      assert.ok(point.seen.every((seen) => !seen.line.startsWith("POST")));
    } finally {
      await point.close();
    }
  });

  it("metadata offering the batch: used", async () => {
    const point = await new Misbehaving("allow", {}).start();
    try {
      (point.metadata as Record<string, string>)["access_evaluations_endpoint"] = `${point.url}/access/v1/evaluations`;
      assert.deepEqual(await guard(point.url).evaluateMany([{ a: 1 }, { b: 2 }]), [true, true]);
      assert.deepEqual(
        point.seen.map((seen) => seen.line),
        ["GET /.well-known/authzen-configuration", "POST /access/v1/evaluations"],
      );
      assert.deepEqual(JSON.parse(point.seen[1]?.body ?? ""), { evaluations: [{ a: 1 }, { b: 2 }] });
    } finally {
      await point.close();
    }
  });
});

describe("authzen: fail closed blocks, fail open goes on", () => {
  for (const mode of ["slow", "500", "garbage", "string", "unreachable"]) {
    it(mode, async () => {
      const point = await new Misbehaving(mode === "unreachable" ? "allow" : (mode as Mode)).start();
      try {
        const url = mode === "unreachable" ? `http://127.0.0.1:${await closedPort()}` : point.url;
        for (const failMode of ["closed", "open"] as const) {
          const bus = new HookBus();
          bus.register(authzen.build({ url, timeout: timeoutFor(mode) }), { failMode });
          const ctx = run({ user: "alice" });
          const result = await bus.emit("tool.before", call(), ctx);
          const failures = ctx.trace.records().filter((record) => record["error"] === "AuthZenError");
          assert.equal(failures.length, 1, failMode);
          if (failMode === "closed") {
            assert.equal(result.outcome.kind, "block");
            assert.equal((result.outcome as { code: string | null }).code, "middleware_error");
          } else assert.deepEqual(result.outcome, Continue());
        }
      } finally {
        await point.close();
      }
    });
  }
});

describe("authzen: settings", () => {
  const bad: Record<string, unknown>[] = [
    { url: "ftp://127.0.0.1" },
    { url: "127.0.0.1:8080" },
    { url: "http://user:pw@127.0.0.1" },
    { url: "http://127.0.0.1/?key=1" },
    { url: "http://127.0.0.1/?" },
    { url: "http://127.0.0.1", timeout: "0s" },
    { url: "http://127.0.0.1", timeout: "soon" },
    { url: "http://127.0.0.1", token_env: "HW_TEST_AUTHZEN_UNSET" },
  ];
  for (const settings of bad) {
    it(`refuses ${JSON.stringify(settings)}`, () => {
      delete process.env["HW_TEST_AUTHZEN_UNSET"];
      assert.throws(() => authzen.build(settings), SettingsError);
    });
  }
});

describe("authzen: the token is never shown", { skip: withoutGo() }, () => {
  it("in errors, the trace, inspections or the console", async () => {
    process.env[TOKEN_ENV] = TOKEN;
    process.env["HW_TEST_PDP_TOKEN"] = "another-token-the-pep-lacks";
    const shown: string[] = [];
    const logged: string[] = [];
    const saved = { log: console.log, error: console.error, warn: console.warn };
    for (const key of ["log", "error", "warn"] as const) console[key] = (...args: unknown[]) => logged.push(args.map(String).join(" "));
    const pdp = await startPdp("permit (principal, action, resource);", null, ["-token-env", "HW_TEST_PDP_TOKEN"]);
    const points = await Promise.all((["500", "garbage", "slow", "string"] as const).map((mode) => new Misbehaving(mode).start()));
    try {
      const middleware = new AuthZen({ url: "http://127.0.0.1:9", token_env: TOKEN_ENV });
      shown.push(inspect(middleware, { showHidden: true, depth: 5 }), String(middleware), JSON.stringify(middleware));
      for (const url of [pdp.url, `http://127.0.0.1:${await closedPort()}`, ...points.map((point) => point.url)]) {
        for (const failMode of ["closed", "open"] as const) {
          const bus = new HookBus();
          bus.register(authzen.build({ url, token_env: TOKEN_ENV, timeout: "300ms" }), { failMode });
          const ctx = run({ user: "alice" });
          const result = await bus.emit("tool.before", call(), ctx);
          shown.push(inspect(result, { depth: 8 }), ctx.trace.toJSONL());
          assert.ok(ctx.trace.records().some((record) => record["error"] === "AuthZenError"), url);
        }
        const error = await rejection(guard(url, "all", { token_env: TOKEN_ENV }).decide(call(), run().envelope));
        shown.push(error.message, inspect(error, { showHidden: true, depth: 5 }), String(error.stack));
      }
      // The token was sent: the misbehaving points saw it (so its absence above is real).
      assert.ok(points[0]?.seen.some((seen) => seen.headers["authorization"] === `Bearer ${TOKEN}`));
    } finally {
      Object.assign(console, saved);
      for (const point of points) await point.close();
      await pdp.stop();
      delete process.env[TOKEN_ENV];
      delete process.env["HW_TEST_PDP_TOKEN"];
    }
    shown.push(...logged);
    assert.deepEqual(shown.filter((text) => text.includes(TOKEN)), []);
    assert.ok(shown.length > 20);
  });
});
