// The policies people write first, in TypeScript: tool_denylist and shell_guard
// (src/builtins/tools.ts, shell.ts, shellwords.ts). The corpus (builtins-guards.json) pins
// their answers from a spec; here: settings through the loader's own validation, the length
// cap counted in code points as Python counts, long hostile commands, and a differential test
// that Python's guard gives the very same answers on random commands.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, it } from "node:test";
import fc from "fast-check";
import { Block, Envelope, ToolCall, ToolCallEvent, ToolSpec, type Configurable } from "../index.js";
import { harnessSchema } from "../builtins/assets.js";
import { MAX_COMMAND, SHELL_RULES, shellGuard, toolDenylist } from "../builtins/index.js";
import { validateSettings } from "../spec/settings.js";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));

function middleware(configurable: Configurable, settings: Record<string, unknown>) {
  const validated = validateSettings(configurable, settings) as Record<string, unknown>;
  return configurable.build(validated);
}

async function answer(configurable: Configurable, settings: Record<string, unknown>, tool: string, args: Record<string, unknown>) {
  const event = new ToolCallEvent({ tool: new ToolSpec({ name: tool }), call: new ToolCall({ id: "c1", name: tool, arguments: args as never }) });
  return middleware(configurable, settings).call(event as never, new Envelope({ runId: "run-1" }), new AbortController().signal);
}

const rule = (name: string, tool = "Bash") => `tool '${tool}': command matches rule '${name}'`;

async function verdict(command: unknown, settings: Record<string, unknown> = {}): Promise<string | null> {
  const outcome = await answer(shellGuard, settings, "Bash", { command });
  if (outcome === null) return null;
  assert.equal((outcome as { code?: string }).code, "shell_command_denied");
  return (outcome as { reason: string }).reason;
}

describe("builtins: tool_denylist", () => {
  it("blocks the tools on its list, exactly named, with Python's repr", async () => {
    const settings = { deny: ["delete_repository", "it's"] };
    assert.equal(await answer(toolDenylist, settings, "search", {}), null);
    assert.equal(await answer(toolDenylist, settings, "Delete_repository", {}), null);
    assert.deepEqual(await answer(toolDenylist, settings, "delete_repository", {}), Block("tool 'delete_repository' is denied", { code: "tool_denied" }));
    assert.deepEqual(await answer(toolDenylist, settings, "it's", {}), Block(`tool "it's" is denied`, { code: "tool_denied" }));
  });

  it("refuses settings without a name", () => {
    assert.throws(() => validateSettings(toolDenylist, {}), /deny: Field required/);
    assert.throws(() => validateSettings(toolDenylist, { deny: [] }), /deny/);
  });
});

describe("builtins: shell_guard", () => {
  it("has Python's rules, in Python's order, as the schema names them", () => {
    const schema = harnessSchema().$defs?.["settings.harnessweaver.shell_guard"] as { properties: { rules: { default: string[]; items: { enum: string[] } } } };
    assert.deepEqual([...SHELL_RULES.keys()], schema.properties.rules.items.enum);
    assert.deepEqual([...SHELL_RULES.keys()], schema.properties.rules.default);
  });

  it("refuses the settings Python's validators refuse (the schema cannot say them)", () => {
    const refused: [Record<string, unknown>, RegExp][] = [
      [{ rules: [] }, /no rules and no patterns/],
      [{ patterns: [{ name: "x", pattern: "a*" }] }, /matches the empty string/],
      [{ patterns: [{ name: "x", pattern: "(" }] }, /invalid regular expression '\('/],
      [{ patterns: [{ name: "mkfs", pattern: "m" }] }, /is a built-in rule's/],
      [{ patterns: [{ name: "x", pattern: "m", flags: "i" }] }, /a pattern is \{name, pattern\}/],
      [{ patterns: [{ name: "x", pattern: "a" }, { name: "x", pattern: "b" }] }, /a pattern name is given twice/],
    ];
    for (const [settings, message] of refused) assert.throws(() => middleware(shellGuard, settings), message, JSON.stringify(settings));
    assert.throws(() => validateSettings(shellGuard, { rules: ["rm_rf"] }), /rules/);
    assert.throws(() => validateSettings(shellGuard, { rules: ["mkfs", "mkfs"] }), /rules/);
  });

  it("reads user patterns in Python's dialect, after the built-in rules", async () => {
    const settings = { patterns: [{ name: "drop", pattern: String.raw`(?i:\bdrop\s+table\b)` }] };
    assert.equal(await verdict("psql -c 'DROP  TABLE users'", settings), rule("drop"));
    assert.equal(await verdict("echo droptable", settings), null);
    assert.equal(await verdict("rm -rf / ; drop table x", settings), rule("rm_recursive_force"));
  });

  it("refuses a command that is not text without showing it, and ignores other tools", async () => {
    for (const value of [42, null, true, { a: "rm -rf /" }, ["rm", 1], [["rm"]]]) {
      assert.equal(await verdict(value), "tool 'Bash': argument 'command' is not a string or a list of strings", JSON.stringify(value));
    }
    assert.equal(await answer(shellGuard, {}, "search", { command: "rm -rf /" }), null);
    assert.equal(await verdict(["bash", "-lc", "rm -rf ~"]), rule("rm_recursive_force"));
  });

  it("refuses a command longer than MAX_COMMAND characters, counted in code points as Python counts", async () => {
    const reason = `tool 'Bash': command is longer than ${MAX_COMMAND} characters`;
    const tooLong = "ls " + "a".repeat(MAX_COMMAND - 2);
    assert.equal(await verdict(tooLong), reason);
    assert.equal(await verdict(tooLong.slice(0, -1)), null);
    // MAX_COMMAND astral characters are 2 × MAX_COMMAND UTF-16 units, and MAX_COMMAND characters
    assert.equal(await verdict("\u{1F600}".repeat(MAX_COMMAND)), null);
    assert.equal(await verdict("\u{1F600}".repeat(MAX_COMMAND + 1)), reason);
  });

  const HOSTILE: [string, string | null][] = [
    ["rm ".repeat(Math.floor(MAX_COMMAND / 3) - 3) + "-rf /", "rm_recursive_force"],
    ["(".repeat(MAX_COMMAND - 8) + "rm -rf /", "rm_recursive_force"],
    [`'a' "b" `.repeat(Math.floor(MAX_COMMAND / 8) - 2) + "rm -rf /", "rm_recursive_force"],
    [`'"`.repeat(Math.floor(MAX_COMMAND / 2) - 8) + "rm -rf /", null],
    ["rm -rf " + "rm ".repeat(Math.floor(MAX_COMMAND / 3) - 8) + "/", null],
    ["dd ".repeat(Math.floor(MAX_COMMAND / 3) - 8) + "of=/dev/sda", "dd_to_device"],
    ["chmod ".repeat(Math.floor(MAX_COMMAND / 6) - 8) + "-R 777 x", "chmod_recursive_777"],
    ["git push ".repeat(Math.floor(MAX_COMMAND / 9) - 8) + "-f", "git_force_push"],
    ["a(){".repeat(Math.floor(MAX_COMMAND / 4) - 4) + ":(){ :|:& };:", "fork_bomb"],
    ["curl x " + "| a ".repeat(Math.floor(MAX_COMMAND / 4) - 8) + "| sh", "curl_pipe_shell"],
    ["rm -rf " + "/".repeat(MAX_COMMAND - 7), "rm_recursive_force"],
    ["\\".repeat(MAX_COMMAND), null],
    ["(){".repeat(Math.floor(MAX_COMMAND / 3)), null],
    [";".repeat(MAX_COMMAND), null],
  ];

  it("answers long hostile commands (each word read once: no rule is quadratic, no regex backtracks)", async () => {
    for (const [command, expected] of HOSTILE) {
      assert.ok(command.length <= MAX_COMMAND);
      assert.equal(await verdict(command), expected === null ? null : rule(expected), command.slice(0, 40));
    }
  });
});

// --- Python and TypeScript give the same answers ------------------------------------------

const PY_VERDICTS = `
import asyncio, json, sys
import harnessweaver as hw
from harnessweaver.builtins.shell import ShellGuard, ShellGuardSettings
guard = ShellGuard(ShellGuardSettings(patterns=[{"name": "user", "pattern": r"(?i:\\bdrop\\b)"}]))
async def main():
    out = []
    for command in json.load(sys.stdin):
        event = hw.ToolCallEvent(tool=hw.ToolSpec(name="Bash"), call=hw.ToolCall(id="c", name="Bash", arguments={"command": command}))
        block = await guard(event, hw.Envelope())
        out.append(None if block is None else block.reason)
    print(json.dumps(out))
asyncio.run(main())
`;

function pythonVerdicts(commands: readonly string[]): (string | null)[] | null {
  for (const candidate of [process.env["HARNESSWEAVER_TEST_PYTHON"], "python3"]) {
    if (!candidate) continue;
    const done = spawnSync(candidate, ["-c", PY_VERDICTS], {
      input: JSON.stringify(commands),
      env: { ...process.env, PYTHONPATH: join(REPO, "python") },
      maxBuffer: 64 * 1024 * 1024,
    });
    if (done.status === 0) return JSON.parse(done.stdout.toString("utf8")) as (string | null)[];
  }
  return null;
}

const WORDS = [
  "rm", "-rf", "-r", "-f", "-R", "--force", "--recursive", "--", "/", "~", "*", ".", "..", "/etc", "$HOME", "build",
  "curl", "wget", "sh", "bash", "python3", "sudo", "env", "X=1", "git", "push", "-C", "origin", "main", "+main",
  "HEAD:main", "--force-with-lease", "--mirror", "chmod", "777", "a+w", "o=rwx", "mkfs", "mkfs.ext4", "dd",
  "of=/dev/sda", "of=/dev/null", ":", "(){", "{", "}", "|", "&", ";", "&&", "||", "|&", "'", '"', "\\", "#",
  "\n", "(", ")", "`", "$(", " ", "\t", "2>&1", "&>", "DROP", "é", "\u{1F600}", "\u0000", "\u2028", "x",
];

describe("builtins: shell_guard in Python and TypeScript", () => {
  it("gives the same answer to every random command", async (t) => {
    const commands = fc.sample(
      // mostly words apart, as commands are written; sometimes glued, as hostile ones are
      fc.array(fc.tuple(fc.constantFrom(...WORDS), fc.constantFrom(" ", " ", " ", "")), { maxLength: 14 }).map((parts) => parts.flat().join("")),
      { numRuns: 6000, seed: 32 },
    );
    commands.push(...fc.sample(fc.string({ unit: "binary", maxLength: 40 }), { numRuns: 500, seed: 36 }));
    const python = pythonVerdicts(commands);
    if (python === null) return t.skip("no Python with harnessweaver's dependencies (set HARNESSWEAVER_TEST_PYTHON)");
    const settings = { patterns: [{ name: "user", pattern: String.raw`(?i:\bdrop\b)` }] };
    const mine = await Promise.all(commands.map((command) => verdict(command, settings)));
    const differ = commands.filter((_, i) => mine[i] !== python[i]);
    assert.deepEqual(differ, []);
    assert.ok(mine.some((reason) => reason !== null) && mine.some((reason) => reason === null), "both answers were seen");
  });
});
