/**
 * `harnessweaver hooks` (`cli.ts`): Python's arguments, output, exit statuses and error lines.
 * The command's logic runs here with a loader the test gives; the last tests run the built
 * `dist/cli.js` as npm's bin link runs it, with the package's own loader.
 */

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, it } from "node:test";
import { EXIT_ERROR, EXIT_OK, main, type LoadOptions } from "../cli.js";
import { HookBus, middleware } from "../index.js";
import { render, type ShownHarness } from "../spec/render.js";

function harness(spec: string, options: LoadOptions): ShownHarness {
  const bus = new HookBus({ deadlines: { "tool.before": "500ms" } });
  const guard = middleware({ name: "guard", hooks: ["tool.before"], failMode: "closed", timeout: "2s", match: { tool: "refund_*" } }, async () => undefined);
  const declaration = bus.register(guard, { layer: "app", name: "cap" });
  const entry = { name: "cap", label: "cap", use: "acme.guard", declaration, layer: "app", file: "harness.yaml", line: 3 };
  return { bus, entries: [entry], spec, task: options.task ?? null, env: options.env ?? null };
}

interface Ran {
  readonly status: number;
  readonly out: string;
  readonly err: string;
  readonly calls: [string, LoadOptions][];
}

async function run(argv: string[], load: (path: string, options: LoadOptions) => ShownHarness | Promise<ShownHarness> = harness): Promise<Ran> {
  let out = "";
  let err = "";
  const calls: [string, LoadOptions][] = [];
  const status = await main(argv, {
    stdout: (text) => void (out += text),
    stderr: (text) => void (err += text),
    load: (path, options) => {
      calls.push([path, options]);
      return load(path, options);
    },
  });
  return { status, out, err, calls };
}

/** What a SpecError looks like to the command: kind invalid_spec and its problems. */
class FakeSpecError extends Error {
  readonly kind = "invalid_spec";
  readonly rule = "spec";
  constructor(readonly problems: { file: string; item: string; line: number | null; kind: string; rule: string; message: string }[]) {
    super("several problems");
  }
}

describe("harnessweaver hooks", () => {
  it("prints the chains as render() does, text by default, and exits 0", async () => {
    const ran = await run(["hooks", "harness.yaml"]);
    assert.deepEqual([ran.status, ran.err], [EXIT_OK, ""]);
    assert.equal(ran.out, render(harness("harness.yaml", {}), "text"));
    assert.match(ran.out, /^chains of harness\.yaml \(task: none, env: none\), each in run order\n/);
    assert.deepEqual(ran.calls, [["harness.yaml", {}]]);
  });

  it("gives the loader the task, env and every --org-profiles, and render the format, tool and model", async () => {
    const argv = ["hooks", "--task", "refund", "specs/h.yaml", "--env=staging", "--org-profiles", "org", "--org-profiles", "more", "--format", "json", "--tool", "refund_x", "--model", "m"];
    const ran = await run(argv);
    assert.equal(ran.status, EXIT_OK);
    assert.deepEqual(ran.calls, [["specs/h.yaml", { task: "refund", env: "staging", orgProfiles: ["org", "more"] }]]);
    const shown = harness("specs/h.yaml", { task: "refund", env: "staging" });
    assert.equal(ran.out, render(shown, "json", { tool: "refund_x", model: "m" }));
    const document = JSON.parse(ran.out) as { tool: string; model: string; task: string };
    assert.deepEqual([document.tool, document.model, document.task], ["refund_x", "m", "refund"]);
  });

  it("takes an unambiguous prefix of a long option, as argparse does", async () => {
    const ran = await run(["hooks", "h.yaml", "--for", "mermaid", "--ta=refund", "--org", "o"]);
    assert.equal(ran.status, EXIT_OK);
    assert.match(ran.out, /^flowchart LR\n/);
    assert.deepEqual(ran.calls, [["h.yaml", { task: "refund", orgProfiles: ["o"] }]]);
  });

  it("a spec with problems: each on its own line on stderr as Python prints them, nothing on stdout, status 2", async () => {
    const problems = [
      { file: "harness.yaml", item: "middleware[1] (acme.refund_cap)", line: 12, kind: "invalid_settings", rule: "settings", message: "invalid settings: max_usdd: unknown setting (settings)" },
      { file: "harness.yaml", item: "envs", line: null, kind: "unknown_env", rule: "spec", message: "unknown env 'prod': the spec has no envs (spec)" },
      { file: "org/a.yaml", item: "", line: 3, kind: "unreadable_yaml", rule: "yaml", message: "not YAML (yaml)" },
    ];
    const ran = await run(["hooks", "harness.yaml", "--env", "prod"], () => {
      throw new FakeSpecError(problems);
    });
    assert.deepEqual([ran.status, ran.out], [EXIT_ERROR, ""]);
    assert.equal(
      ran.err,
      "harness.yaml:12: middleware[1] (acme.refund_cap): invalid settings: max_usdd: unknown setting (settings)\n" +
        "harness.yaml: envs: unknown env 'prod': the spec has no envs (spec)\n" +
        "org/a.yaml:3: not YAML (yaml)\n",
    );
  });

  it("any other failure of loading is a bug: one line naming its type, never its message, status 2", async () => {
    const ran = await run(["hooks", "./x//harness.yaml"], async () => {
      throw new TypeError("secret: card 4111 1111 1111 1111");
    });
    assert.deepEqual([ran.status, ran.out], [EXIT_ERROR, ""]);
    assert.equal(ran.err, "harnessweaver hooks: error: loading x/harness.yaml failed: TypeError (a bug in harnessweaver: please report it)\n");
  });

  it("bad arguments: argparse's usage and error, status 2, and the loader is not called", async () => {
    const cases: [string[], string][] = [
      [["hooks"], "harnessweaver hooks: error: the following arguments are required: SPEC\n"],
      [["hooks", "h.yaml", "--format", "yaml"], "harnessweaver hooks: error: argument --format: invalid choice: 'yaml' (choose from 'text', 'json', 'mermaid')\n"],
      [["hooks", "h.yaml", "--task"], "harnessweaver hooks: error: argument --task: expected one argument\n"],
      [["hooks", "h.yaml", "--bogus"], "harnessweaver: error: unrecognized arguments: --bogus\n"],
      [["hooks", "a.yaml", "b.yaml"], "harnessweaver: error: unrecognized arguments: b.yaml\n"],
      [[], "harnessweaver: error: the following arguments are required: COMMAND\n"],
      [["conformance"], "harnessweaver: error: argument COMMAND: invalid choice: 'conformance' (choose from 'hooks', 'approvals', 'bench'): that command is in the Python package\n"],
    ];
    for (const [argv, last] of cases) {
      const ran = await run(argv);
      assert.equal(ran.status, EXIT_ERROR, argv.join(" "));
      assert.ok(ran.err.startsWith("usage: harnessweaver"), ran.err);
      assert.ok(ran.err.endsWith(last), `${argv.join(" ")}: ${ran.err}`);
      assert.deepEqual([ran.out, ran.calls], ["", []]);
    }
  });

  it("--help shows the options and exits 0", async () => {
    const ran = await run(["hooks", "--help"]);
    assert.equal(ran.status, EXIT_OK);
    for (const option of ["--task NAME", "--env NAME", "--tool NAME", "--model NAME", "--format {text,json,mermaid}", "--org-profiles DIR"]) {
      assert.ok(ran.out.includes(option), option);
    }
    assert.equal((await run(["--help"])).status, EXIT_OK);
    assert.match((await run(["--version"])).out, /^harnessweaver \d+\.\d+\.\d+/);
  });
});

describe("dist/cli.js, the package's bin", () => {
  const cli = fileURLToPath(new URL("../cli.js", import.meta.url));
  let dir = "";
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("run through a link, as npm installs a bin: loads the spec with the package's loader", () => {
    dir = mkdtempSync(join(tmpdir(), "hw-cli-"));
    writeFileSync(join(dir, "harness.yaml"), "deadlines:\n  tool.before: 2s\n");
    symlinkSync(cli, join(dir, "harnessweaver"));
    const done = spawnSync(process.execPath, [join(dir, "harnessweaver"), "hooks", "harness.yaml", "--format", "json"], { cwd: dir, encoding: "utf8" });
    assert.equal(done.stderr, "");
    assert.equal(done.status, EXIT_OK);
    const document = JSON.parse(done.stdout) as { spec: string; hooks: { hook: string; deadline?: number; chain: unknown[] }[] };
    assert.equal(document.spec, "harness.yaml");
    assert.deepEqual(document.hooks.map((h) => [h.hook, h.deadline ?? null, h.chain.length])[4], ["tool.before", 2, 0]);
    assert.ok(done.stdout.includes('"deadline": 2.0,'), "a float as Python writes it");
  });

  it("a spec that does not load: its problem on stderr, status 2", () => {
    dir = mkdtempSync(join(tmpdir(), "hw-cli-"));
    writeFileSync(join(dir, "harness.yaml"), "middlewares: []\n");
    const done = spawnSync(process.execPath, [cli, "hooks", "harness.yaml"], { cwd: dir, encoding: "utf8" });
    assert.deepEqual([done.status, done.stdout], [EXIT_ERROR, ""]);
    assert.match(done.stderr, /^harness\.yaml:1: not a harness spec: .*did you mean 'middleware'\? \(spec\)\n$/);
  });
});
