// What the harnessweaver.authzen tests share (no tests of its own): the local AuthZEN decision
// point (e2e/authzen-pdp, Go on cedar-go) built once for its sources and started on the
// loopback, and a small misbehaving one (node:http) for the answers no real point should give.
// Python: python/tests/policies/test_authzen_support.py.

import { execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { Envelope, FixedClock, RunContext, ToolCall, ToolCallEvent, ToolSpec, type JsonValue } from "../index.js";

export const REPO = fileURLToPath(new URL("../../../", import.meta.url));
const CLOCK = new FixedClock("2026-11-30T12:00:00+00:00");

/** A run whose envelope carries `attributes` (`user`, `agent`, ...). */
export const run = (attributes: Record<string, JsonValue> = {}) => new RunContext({ envelope: new Envelope({ clock: CLOCK, runId: "run-1", attributes }) });

export const call = (name = "search", args: Record<string, JsonValue> = {}, step = 0) =>
  new ToolCallEvent({ step, tool: new ToolSpec({ name }), call: new ToolCall({ id: "c1", name, arguments: args }) });

function go(): string | null {
  for (const dir of (process.env["PATH"] ?? "").split(":")) if (dir && existsSync(join(dir, "go"))) return join(dir, "go");
  return existsSync("/usr/local/go/bin/go") ? "/usr/local/go/bin/go" : null;
}

let built: string | null = null;

/** A key of the decision point's sources: a changed source is a new build. */
function sourceKey(folder: string): string {
  const hash = createHash("sha256");
  for (const name of readdirSync(folder).sort()) {
    if (name.endsWith(".go") || name === "go.mod" || name === "go.sum") hash.update(name).update(readFileSync(join(folder, name)));
  }
  return hash.digest("hex").slice(0, 16);
}

const pause = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/**
 * e2e/authzen-pdp built once for its sources (the user's own Go caches), into a folder of the
 * system's temporary one that every test file (each its own process, run side by side) shares:
 * the first to take the lock builds, the others wait for the binary. Null without Go.
 */
export function pdpBinary(): string | null {
  if (built !== null) return built;
  const compiler = go();
  if (compiler === null) return null;
  const source = join(REPO, "e2e", "authzen-pdp");
  const folder = join(tmpdir(), `harnessweaver-authzen-pdp-${sourceKey(source)}`);
  const binary = join(folder, "authzen-pdp");
  const lock = `${folder}.lock`;
  for (const deadline = Date.now() + 900_000; !existsSync(binary); pause(200)) {
    if (Date.now() > deadline) throw new Error(`no decision point built at ${binary} (is ${lock} stale?)`);
    try {
      mkdirSync(lock);
    } catch {
      continue; // another test file is building it
    }
    try {
      mkdirSync(folder, { recursive: true });
      const partial = `${binary}.${process.pid}`;
      execFileSync(compiler, ["build", "-o", partial, "."], {
        cwd: source,
        env: { ...process.env, GOFLAGS: "-mod=mod", CGO_ENABLED: "0" },
        stdio: ["ignore", "ignore", "inherit"],
        timeout: 900_000,
      });
      renameSync(partial, binary);
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  }
  return (built = binary);
}

/** The skip reason of a test that needs the local decision point, or false when it can run. */
export const withoutGo = (): string | false => {
  if (go() !== null) return false;
  const missing = "the local AuthZEN decision point needs Go (go on PATH) to be built";
  // nox sets it: there, a skip would hide a missing Go.
  if (process.env["HARNESSWEAVER_REQUIRE_GO"] === "1") throw new Error(missing);
  return missing;
};

export interface Pdp {
  readonly url: string;
  stop(): Promise<void>;
}

/** The local decision point on `policies` (Cedar text, or files) and `entities` (a JSON-able list, or a file). */
export async function startPdp(
  policies: string | readonly string[],
  entities: JsonValue | string | null = null,
  extra: readonly string[] = [],
  env: Record<string, string> = {},
): Promise<Pdp> {
  const binary = pdpBinary();
  if (binary === null) throw new Error("no Go to build the local decision point");
  const folder = mkdtempSync(join(tmpdir(), "authzen-data-"));
  const args: string[] = [];
  if (typeof policies === "string") {
    writeFileSync(join(folder, "policies.cedar"), policies);
    args.push("-policies", join(folder, "policies.cedar"));
  } else for (const file of policies) args.push("-policies", file);
  if (typeof entities === "string") args.push("-entities", entities);
  else if (entities !== null) {
    writeFileSync(join(folder, "entities.json"), JSON.stringify(entities));
    args.push("-entities", join(folder, "entities.json"));
  }
  args.push(...extra);
  const child = spawn(binary, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  const lines = createInterface({ input: child.stdout });
  const first = await new Promise<string>((resolve, reject) => {
    lines.once("line", resolve);
    child.once("exit", (code) => reject(new Error(`the decision point did not start (exit ${code})`)));
  });
  if (!/^\d+$/.test(first)) throw new Error(`the decision point printed ${first}`);
  return {
    url: `http://127.0.0.1:${first}`,
    async stop() {
      lines.close();
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

export type Mode = "slow" | "500" | "garbage" | "huge" | "redirect" | "short" | "string" | "number" | "null" | "missing" | "allow";

/** A request a misbehaving point was sent. */
export interface Seen {
  readonly line: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/**
 * A decision point that answers as `mode` says (as Python's `Misbehaving`): `slow` never before
 * it is closed, `500`, `garbage` (not JSON), `string`/`number`/`null`/`missing` (no boolean
 * decision), `huge` (past the size cap), `redirect`, `short` (a batch short of a decision),
 * `allow`. Its metadata is a 404 unless `metadata` is given. It keeps what it was sent.
 */
export class Misbehaving {
  readonly seen: Seen[] = [];
  url = "";
  readonly #server: Server;
  readonly #waiting = new Set<() => void>();

  constructor(
    readonly mode: Mode,
    readonly metadata: Record<string, JsonValue> | null = null,
  ) {
    this.#server = createServer((request, response) => {
      const parts: Buffer[] = [];
      request.on("data", (chunk: Buffer) => parts.push(chunk));
      request.on("end", () => {
        const body = Buffer.concat(parts).toString("utf8");
        this.seen.push({ line: `${request.method} ${request.url}`, headers: request.headers, body });
        const send = (status: number, text: string | Buffer, headers: Record<string, string> = { "Content-Type": "application/json" }) => {
          response.writeHead(status, headers);
          response.end(text);
        };
        if (request.method === "GET") return this.metadata === null ? send(404, "{}") : send(200, JSON.stringify(this.metadata));
        switch (this.mode) {
          case "slow":
            this.#waiting.add(() => send(200, '{"decision": true}'));
            return;
          case "500":
            return send(500, '{"decision": true}');
          case "garbage":
            return send(200, "<html>decision: true</html>");
          case "huge":
            return send(200, Buffer.concat([Buffer.alloc(2 << 20, 0x20), Buffer.from('{"decision": true}')]));
          case "redirect":
            return send(302, "", { Location: "http://127.0.0.1:9/" });
          case "short":
            return send(200, '{"evaluations": [{"decision": true}]}');
          case "allow": {
            if (request.url?.endsWith("/evaluations")) {
              const items = (JSON.parse(body) as { evaluations: unknown[] }).evaluations;
              return send(200, JSON.stringify({ evaluations: items.map(() => ({ decision: true })) }));
            }
            return send(200, '{"decision": true}');
          }
          default: {
            const decision = { string: '"true"', number: "1", null: "null" }[this.mode as string];
            return send(200, decision === undefined ? "{}" : `{"decision": ${decision}}`);
          }
        }
      });
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.#server.listen(0, "127.0.0.1", resolve));
    const address = this.#server.address();
    if (address === null || typeof address === "string") throw new Error("no port");
    this.url = `http://127.0.0.1:${address.port}`;
    return this;
  }

  async close(): Promise<void> {
    for (const release of this.#waiting) release();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

/** A loopback port nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}
