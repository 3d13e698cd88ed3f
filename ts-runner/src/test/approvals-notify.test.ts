// The signed notifier against a real HTTP server on 127.0.0.1 (node:http): the body, the
// headers, a signature the receiver verifies; failures named by kind, never the URL or secret.

import assert from "node:assert/strict";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { after, before, describe, it } from "node:test";
import { Approvals, HttpNotifier, sign, verifySignature } from "../approvals/index.js";
import { NotifyFailed, SIGNATURE_HEADER, TIMESTAMP_HEADER } from "../approvals/notify.js";
import { MemoryStore } from "../state/index.js";

const SECRET = "s3cret-value";

describe("HttpNotifier", () => {
  let server: Server;
  let url = "";
  let status = 204;
  const got: { headers: IncomingHttpHeaders; body: string; method: string }[] = [];
  before(async () => {
    server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => {
        got.push({ headers: request.headers, body: Buffer.concat(chunks).toString("utf8"), method: request.method ?? "" });
        response.statusCode = status;
        response.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address() as { port: number };
    url = `http://127.0.0.1:${address.port}/hook?token=tok123`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("POSTs the new record as compact JSON, signed; the receiver verifies it", async () => {
    got.length = 0;
    status = 204;
    const book = new Approvals(new MemoryStore(), { spec: "code", notify: new HttpNotifier(url, SECRET) });
    const record = await book.file({ hook: "tool.before", event: { tool: { name: "t" }, call: { name: "t", arguments: { a: "é" } } }, reason: "r", filedBy: "test" });
    assert.equal(got.length, 1);
    const [{ headers, body, method }] = got as [(typeof got)[0]];
    assert.equal(method, "POST");
    assert.equal(headers["content-type"], "application/json");
    assert.deepEqual(JSON.parse(body), { type: "approval.pending", approval: record });
    assert.equal(body, JSON.stringify({ type: "approval.pending", approval: record }));
    const stamp = headers[TIMESTAMP_HEADER.toLowerCase()] as string;
    const header = headers[SIGNATURE_HEADER.toLowerCase()] as string;
    assert.match(stamp, /^\d+$/);
    assert.match(header, /^sha256=[0-9a-f]{64}$/);
    const now = Number(stamp);
    assert.equal(verifySignature(SECRET, stamp, body, header, now), true);
    assert.equal(verifySignature("other", stamp, body, header, now), false);
    assert.equal(verifySignature(SECRET, stamp, `${body} `, header, now), false);
    assert.equal(verifySignature(SECRET, stamp, body, header, now + 301), false); // too old
    assert.equal(verifySignature(SECRET, stamp, body, header, now + 300), true);
    assert.equal(verifySignature(SECRET, "12x", body, header, now), false);
    // Filing the same action again notifies nobody: it is the same record.
    await book.file({ hook: "tool.before", event: { tool: { name: "t" }, call: { name: "t", arguments: { a: "é" } } }, reason: "r", filedBy: "test" });
    assert.equal(got.length, 1);
  });

  it("signs HMAC-SHA256 of '<timestamp>.<body>' (a value Python's sign() gives too)", () => {
    // python -c 'from harnessweaver.approvals import sign; print(sign("key", 1800000000, "{\"a\":1}"))'
    assert.equal(sign("key", 1800000000, '{"a":1}'), "sha256=7330c9cf7d886970cbebbbb5494c04d2aeff06a990adb7d7a75abfeb0159d291");
  });

  it("an HTTP error or an unreachable receiver fails by kind only; the filing goes on", async () => {
    status = 500;
    const notifier = new HttpNotifier(url, SECRET);
    const record = { id: "ap_0000000000000000_1" } as never;
    await assert.rejects(notifier.notify(record), (error: unknown) => error instanceof NotifyFailed && error.message === "approval notification refused: HTTP 500");
    const down = new HttpNotifier("http://127.0.0.1:9/hook?token=tok123", SECRET, { timeout: 2 });
    await assert.rejects(down.notify(record), (error: unknown) => {
      assert.ok(error instanceof NotifyFailed);
      assert.ok(!error.message.includes("tok123") && !error.message.includes("127.0.0.1"), error.message);
      return true;
    });
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.message);
    process.on("warning", onWarning);
    try {
      const book = new Approvals(new MemoryStore(), { spec: "code", notify: down });
      const filed = await book.file({ hook: "task.start", event: { task: "x", input: null }, reason: "r", filedBy: "test" });
      assert.equal((await book.get(filed.id)).status, "pending");
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(warnings, [`approval ${filed.id}: the notifier failed: NotifyFailed`]);
    } finally {
      process.off("warning", onWarning);
    }
  });

  it("never shows its URL or secret; checks what it is given", () => {
    const notifier = new HttpNotifier(url, SECRET);
    for (const shown of [String(notifier), JSON.stringify(notifier)]) {
      assert.ok(!shown.includes("tok123") && !shown.includes(SECRET), shown);
    }
    assert.throws(() => new HttpNotifier("ftp://x/y", SECRET), /http:\/\/ or https:\/\/ URL/);
    assert.throws(() => new HttpNotifier(url, ""), /non-empty text/);
    assert.throws(() => new HttpNotifier(url, SECRET, { timeout: 0 }), /seconds > 0/);
  });
});
