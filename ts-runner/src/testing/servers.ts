/**
 * Real Redis and PostgreSQL servers for the state tests (python/tests/state/servers.py, the
 * same way): each on a random free port on 127.0.0.1, its data in a temporary directory,
 * stopped (and the directory removed) at the end. Nothing is mocked. A missing binary skips
 * the tests, except under CI (`CI` set and not false/0), where it fails: the state tests never
 * skip in CI. As root, PostgreSQL runs as the user `postgres` (`runuser`), since initdb
 * refuses root.
 */

import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { accessSync, chownSync, closeSync, constants, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createConnection, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export function inCi(): boolean {
  return !["", "0", "false", "no"].includes((process.env["CI"] ?? "").trim().toLowerCase());
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function which(name: string): string | null {
  for (const dir of (process.env["PATH"] ?? "").split(":")) {
    if (dir !== "" && executable(join(dir, name))) return join(dir, name);
  }
  return null;
}

export function redisBinary(): string | null {
  return which("redis-server") ?? (executable("/usr/bin/redis-server") ? "/usr/bin/redis-server" : null);
}

export function postgresBin(): string | null {
  const found = which("postgres");
  if (found !== null && which("initdb") !== null) return found.slice(0, found.lastIndexOf("/"));
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((v) => /^\d+$/.test(v) && executable(join(root, v, "bin", "postgres")))
    .sort((a, b) => Number(a) - Number(b));
  const newest = versions.at(-1);
  return newest === undefined ? null : join(root, newest, "bin");
}

/** Why the tests of `what` cannot run here (a skip), or null; under CI a missing binary throws. */
export function missing(what: string, found: string | null, install: string): string | null {
  if (found !== null) return null;
  const message = `${what} not found: install it (${install}); .ci/run does`;
  if (inCi()) throw new Error(`${message} (CI is set: the state tests may not skip)`);
  return message;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0));
    });
  });
}

async function waitPort(port: number, child: ChildProcess, seconds: number): Promise<void> {
  const deadline = Date.now() + seconds * 1000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    const up = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ host: "127.0.0.1", port });
      socket.once("connect", () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
    if (up) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`server did not listen on 127.0.0.1:${port}`);
}

function killGroup(child: ChildProcess | null, signal: NodeJS.Signals = "SIGKILL"): void {
  if (child?.pid === undefined || child.exitCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // gone already
  }
}

async function exited(child: ChildProcess | null, seconds: number): Promise<void> {
  if (child === null || child.exitCode !== null || child.signalCode !== null) return;
  await Promise.race([new Promise((resolve) => child.once("exit", resolve)), new Promise((resolve) => setTimeout(resolve, seconds * 1000))]);
}

/** redis-server with an append-only file fsynced on every write. */
export class RedisServer {
  readonly dir = mkdtempSync(join(tmpdir(), "hw-ts-redis-"));
  port = 0;
  #child: ChildProcess | null = null;

  constructor(readonly binary: string) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}/0`;
  }

  async start(): Promise<void> {
    if (this.port === 0) this.port = await freePort();
    const args = ["--bind", "127.0.0.1", "--port", String(this.port), "--dir", this.dir, "--save", "", "--appendonly", "yes"];
    args.push("--appendfsync", "always", "--logfile", join(this.dir, "redis.log"), "--daemonize", "no", "--protected-mode", "yes");
    this.#child = spawn(this.binary, args, { stdio: "ignore", detached: true });
    await waitPort(this.port, this.#child, 30);
  }

  async kill(): Promise<void> {
    const child = this.#child;
    killGroup(child);
    await exited(child, 10);
    this.#child = null;
  }

  async stop(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A PostgreSQL cluster of its own (initdb, trust authentication on loopback only). */
export class PostgresServer {
  readonly dir = mkdtempSync(join(tmpdir(), "hw-ts-postgres-"));
  readonly data = join(this.dir, "data");
  port = 0;
  readonly #asUser: string[] = [];
  #child: ChildProcess | null = null;

  constructor(readonly bindir: string) {
    if (process.getuid?.() === 0) {
      const runuser = which("runuser");
      if (runuser === null) throw new Error("running as root, and no runuser to run PostgreSQL as postgres");
      this.#asUser = [runuser, "-u", "postgres", "--"];
      const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim());
      const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim());
      chownSync(this.dir, uid, gid);
    }
    const [command, ...args] = [...this.#asUser, join(bindir, "initdb"), "-D", this.data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync"];
    execFileSync(command as string, args, { stdio: "ignore" });
  }

  get url(): string {
    return `postgresql://postgres@127.0.0.1:${this.port}/postgres`;
  }

  async start(): Promise<void> {
    if (this.port === 0) this.port = await freePort();
    // fsync off (the page cache keeps what is written: a SIGKILL loses nothing committed), but
    // synchronous_commit on: with it off, a commit's WAL may still be in shared memory when
    // the server is killed, and is lost.
    const [command, ...args] = [
      ...this.#asUser,
      join(this.bindir, "postgres"),
      "-D",
      this.data,
      "-p",
      String(this.port),
      "-k",
      this.dir,
      "-c",
      "listen_addresses=127.0.0.1",
      "-c",
      "fsync=off",
      "-c",
      "full_page_writes=off",
    ];
    // After a kill the old backends linger a moment on the shared memory: a new postmaster
    // refuses to start until they are gone, so it is tried again for a while.
    for (let attempt = 0; ; attempt++) {
      const log = openSync(join(this.dir, "postgres.log"), "a");
      this.#child = spawn(command as string, args, { stdio: ["ignore", log, log], detached: true });
      closeSync(log);
      try {
        await waitPort(this.port, this.#child, 60);
        if (await this.#ready(this.#child)) return;
        throw new Error("server exited");
      } catch (error) {
        if (this.#child.exitCode === null || attempt >= 50) {
          throw new Error(`${String(error)}: ${readFileSync(join(this.dir, "postgres.log"), "utf8").slice(-2000)}`);
        }
        rmSync(join(this.data, "postmaster.pid"), { force: true });
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  }

  /** Until a query answers (not "the database system is starting up"); false if the server exited. */
  async #ready(child: ChildProcess): Promise<boolean> {
    const name = "pg";
    const { Client } = (await import(name)) as { Client: new (config: object) => { connect(): Promise<void>; query(q: string): Promise<unknown>; end(): Promise<void>; on(e: string, f: () => void): void } };
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      if (child.exitCode !== null) return false;
      const client = new Client({ connectionString: this.url, connectionTimeoutMillis: 2000 });
      client.on("error", () => {});
      try {
        await client.connect();
        await client.query("SELECT 1");
        await client.end();
        return child.exitCode === null;
      } catch {
        await client.end().catch(() => {});
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    return false;
  }

  /** SIGKILL to the postmaster and its backends: no shutdown checkpoint (start() again on the same port and data). */
  async kill(): Promise<void> {
    const child = this.#child;
    killGroup(child);
    await exited(child, 10);
    this.#child = null;
    rmSync(join(this.data, "postmaster.pid"), { force: true });
  }

  async stop(): Promise<void> {
    killGroup(this.#child, "SIGINT"); // fast shutdown
    await exited(this.#child, 20);
    killGroup(this.#child);
    this.#child = null;
    rmSync(this.dir, { recursive: true, force: true });
  }
}
