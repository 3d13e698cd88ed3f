#!/usr/bin/env node
/**
 * The `harnessweaver` command of the npm package: `harnessweaver hooks SPEC [--task NAME]
 * [--env NAME] [--org-profiles DIR]... [--tool NAME] [--model NAME] [--format text|json|mermaid]`.
 *
 * It is Python's `harnessweaver hooks` (`python/harnessweaver/cli.py`): the same arguments
 * (long options may be shortened to an unambiguous prefix, as argparse allows), the same output
 * byte for byte (`spec/render.ts`), the same exit statuses (0; 2 for a spec with problems,
 * printed one per line on stderr exactly as Python prints them, and for bad arguments) and,
 * for a failure that is a bug, one line naming the error's type, never a stack trace.
 * `harnessweaver approvals ...` is Python's too (`approvals/cli.ts`), and so is
 * `harnessweaver bench SPEC ...` (`benchcmd/command.ts`: the same flags and JSON document). The
 * other commands of the Python package (`conformance`, `fuzz`, `hook`) are not here.
 */

import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { approvalsMain } from "./approvals/cli.js";
import { benchMain } from "./benchcmd/command.js";
import { VERSION } from "./index.js";
import { load } from "./spec/loader.js";
import { FORMATS, isFormat, render, type ShownHarness } from "./spec/render.js";
import { pyPath } from "./spec/pytext.js";

export const EXIT_OK = 0;
export const EXIT_ERROR = 2;

/** What the loader is given: Python's `load(spec, task=, env=, org_profiles=)`. */
export interface LoadOptions {
  readonly task?: string;
  readonly env?: string;
  readonly orgProfiles?: readonly string[];
}

/** Where the command writes, and the loader it uses (tests give their own). */
export interface CliIO {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly load?: (path: string, options: LoadOptions) => ShownHarness | Promise<ShownHarness>;
  /** Whether stderr is a terminal: `bench` then draws its progress bar there. */
  readonly stderrIsTTY?: boolean;
}

const PROGRAM = "harnessweaver";
const COMMAND = `${PROGRAM} hooks`;
const TOP_USAGE = `usage: ${PROGRAM} [-h] [--version] COMMAND ...\n`;
const USAGE = `usage: ${COMMAND} [-h] [--task NAME] [--env NAME]
                           [--org-profiles DIR] [--tool NAME] [--model NAME]
                           [--format {text,json,mermaid}]
                           SPEC
`;
const TOP_HELP = `${TOP_USAGE}
harnessweaver: a hook bus for AI-agent harnesses (the TypeScript package).

positional arguments:
  COMMAND
    hooks     print every hook point's middleware, in run order, as a harness
              spec loads them
    approvals list, show and decide durable approvals (docs/approvals.md)
    bench     time a harness's own middleware at every hook point, against
              the floor (docs/bench.md)

options:
  -h, --help  show this help message and exit
  --version   print the package version, then exit
`;
const HELP = `${USAGE}
print every hook point's middleware, in run order, as a harness spec loads
them

positional arguments:
  SPEC                  the harness spec (harness.yaml)

options:
  -h, --help            show this help message and exit
  --task NAME           the task whose guardrails to include
  --env NAME            the environment overlay to include
  --org-profiles DIR    a directory org:// profiles are looked up in;
                        repeatable (default: the HARNESSWEAVER_ORG_PROFILES
                        environment variable)
  --tool NAME           show the chain a call of this tool runs on tool.before
                        and tool.after: without the middleware whose matcher
                        does not match it (I22)
  --model NAME          show the chain a request to this model runs on
                        model.before: without the middleware whose matcher
                        does not match it (I22)
  --format {text,json,mermaid}
                        text (default), json for tools, or a mermaid flowchart
`;

const OPTIONS = {
  help: { type: "boolean", short: "h" },
  task: { type: "string" },
  env: { type: "string" },
  tool: { type: "string" },
  model: { type: "string" },
  format: { type: "string" },
  "org-profiles": { type: "string", multiple: true },
} as const;

/** A command line argparse would refuse: its message, after the usage (status 2). */
class UsageError extends Error {
  constructor(
    message: string,
    readonly usage: string = USAGE,
    readonly program: string = COMMAND,
  ) {
    super(message);
  }
}

/** `--for` for `--format`, as argparse expands an unambiguous prefix of a long option. */
function expandPrefixes(args: readonly string[]): string[] {
  const names = Object.keys(OPTIONS);
  const out: string[] = [];
  let ended = false;
  for (const arg of args) {
    if (ended || !arg.startsWith("--") || arg === "--") {
      ended ||= arg === "--";
      out.push(arg);
      continue;
    }
    const [given = "", ...value] = arg.slice(2).split("=");
    const matches = names.filter((name) => name.startsWith(given));
    if (names.includes(given) || matches.length !== 1) {
      if (matches.length > 1 && !names.includes(given)) {
        const shown = matches.map((name) => `--${name}`).join(", ");
        throw new UsageError(`ambiguous option: --${given} could match ${shown}`);
      }
      out.push(arg);
    } else {
      out.push([`--${matches[0]}`, ...value].join("="));
    }
  }
  return out;
}

/** parseArgs' refusals in argparse's words. */
function usageError(error: unknown): UsageError {
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  const option = /'(-[-\w]+)/.exec(message)?.[1] ?? "";
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") return new UsageError(`unrecognized arguments: ${option}`, TOP_USAGE, PROGRAM);
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") return new UsageError(`argument ${option}: expected one argument`);
  return new UsageError(message);
}

interface Parsed {
  readonly spec: string;
  readonly format: (typeof FORMATS)[number];
  readonly options: LoadOptions;
  readonly only: { tool?: string; model?: string };
}

/** The `hooks` arguments, checked as argparse checks them. */
function parseHooks(args: readonly string[]): Parsed | "help" {
  let parsed;
  try {
    parsed = parseArgs({ args: expandPrefixes(args), options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw usageError(error);
  }
  const { values, positionals } = parsed;
  if (values.help) return "help";
  const format = values.format ?? "text";
  if (!isFormat(format)) {
    const choices = FORMATS.map((f) => `'${f}'`).join(", ");
    throw new UsageError(`argument --format: invalid choice: '${format}' (choose from ${choices})`);
  }
  const [spec, ...extra] = positionals;
  if (spec === undefined) throw new UsageError("the following arguments are required: SPEC");
  if (extra.length) throw new UsageError(`unrecognized arguments: ${extra.join(" ")}`, TOP_USAGE, PROGRAM);
  const orgProfiles = values["org-profiles"];
  return {
    spec,
    format,
    options: {
      ...(values.task === undefined ? {} : { task: values.task }),
      ...(values.env === undefined ? {} : { env: values.env }),
      ...(orgProfiles === undefined ? {} : { orgProfiles }),
    },
    only: {
      ...(values.tool === undefined ? {} : { tool: values.tool }),
      ...(values.model === undefined ? {} : { model: values.model }),
    },
  };
}

interface ProblemLike {
  readonly file: string;
  readonly item: string;
  readonly line: number | null;
  readonly message: string;
}

/** A `SpecError` (kind `invalid_spec`, with its problems), whichever module made it. */
function problemsOf(error: unknown): readonly ProblemLike[] | null {
  if (!(error instanceof Error)) return null;
  const { kind, problems } = error as { kind?: unknown; problems?: unknown };
  return kind === "invalid_spec" && Array.isArray(problems) ? (problems as ProblemLike[]) : null;
}

/** A problem as Python's `str(Problem)`: `file:line: item: message`. */
function problemText({ file, item, line, message }: ProblemLike): string {
  const where = line === null || line === undefined ? file : `${file}:${line}`;
  return item ? `${where}: ${item}: ${message}` : `${where}: ${message}`;
}

/** An error's type name for the one line a bug gets (never its message: it may quote the spec, R9). */
function typeName(error: unknown): string {
  const name = error instanceof Error ? error.constructor.name || error.name : typeof error;
  return /^[A-Za-z_$][\w$.]{0,127}$/.test(name) ? name : "Error";
}

async function runHooks(args: readonly string[], io: CliIO): Promise<number> {
  const parsed = parseHooks(args);
  if (parsed === "help") {
    io.stdout(HELP);
    return EXIT_OK;
  }
  let harness: ShownHarness;
  try {
    harness = await (io.load ?? load)(parsed.spec, parsed.options);
  } catch (error) {
    loadFailed(io, COMMAND, parsed.spec, error);
    return EXIT_ERROR;
  }
  io.stdout(render(harness, parsed.format, parsed.only));
  return EXIT_OK;
}

/** A spec that did not load: its problems one per line, as Python prints them, or the one line a bug gets. */
function loadFailed(io: CliIO, command: string, spec: string, error: unknown): void {
  const problems = problemsOf(error);
  if (problems !== null) {
    io.stderr(`${problems.map(problemText).join("\n")}\n`);
  } else {
    const shown = pyPath(spec);
    io.stderr(`${command}: error: loading ${shown} failed: ${typeName(error)} (a bug in harnessweaver: please report it)\n`);
  }
}

/** A spec `bench` could not load: its problems under one line saying so, as Python's `bench` says it. */
function benchLoadFailed(io: CliIO, spec: string, error: unknown): void {
  const problems = problemsOf(error);
  if (problems === null) return loadFailed(io, `${PROGRAM} bench`, spec, error);
  io.stderr(`${PROGRAM} bench: error: ${spec} does not load:\n${problems.map(problemText).join("\n")}\n`);
}

/** Runs the command line `argv` (without `node` and the script); resolves to the exit status. */
export async function main(argv: readonly string[], io: CliIO = PROCESS): Promise<number> {
  try {
    const [command, ...rest] = argv;
    if (command === "hooks") return await runHooks(rest, io);
    if (command === "approvals") return await approvalsMain(rest, io);
    if (command === "bench") {
      const bench = { stdout: io.stdout, stderr: io.stderr, progress: io.stderrIsTTY === true };
      return await benchMain(rest, bench, (spec, error) => benchLoadFailed(io, spec, error));
    }
    if (command === "-h" || command === "--help") {
      io.stdout(TOP_HELP);
      return EXIT_OK;
    }
    if (command === "--version") {
      io.stdout(`${PROGRAM} ${VERSION} (TypeScript, Node ${process.versions.node})\n`);
      return EXIT_OK;
    }
    if (command === undefined) throw new UsageError("the following arguments are required: COMMAND", TOP_USAGE, PROGRAM);
    const python = ["conformance", "fuzz", "hook"].includes(command) ? ": that command is in the Python package" : "";
    throw new UsageError(`argument COMMAND: invalid choice: '${command}' (choose from 'hooks', 'approvals', 'bench')${python}`, TOP_USAGE, PROGRAM);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.stderr(`${error.usage}${error.program}: error: ${error.message}\n`);
    return EXIT_ERROR;
  }
}

const PROCESS: CliIO = {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
  stderrIsTTY: process.stderr.isTTY === true,
};

/** Whether this module is the program node runs (directly, or through npm's bin link). */
function isEntry(): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return realpathSync(script) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isEntry()) {
  main(process.argv.slice(2)).then(
    (status) => {
      process.exitCode = status;
    },
    (error: unknown) => {
      process.stderr.write(`${PROGRAM}: error: ${typeName(error)} (a bug in harnessweaver: please report it)\n`);
      process.exitCode = EXIT_ERROR;
    },
  );
}
