/**
 * `harnessweaver bench SPEC [--task NAME] [--env NAME] [--org-profiles DIR]... [--events FILE]
 * [--hook HOOK]... [--rounds N] [--per N] [--format text|json]`: what the user's own harness
 * costs at every hook point it has middleware for, against its floor (docs/bench.md). The
 * same flags and JSON document as Python's command (`harnessweaver/benchcmd/command.py`).
 */

import { statSync } from "node:fs";
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";
import { HOOK_POINTS, isHookPoint, type HookPoint } from "../catalogue.js";
import type { Event } from "../events.js";
import { shown } from "../shown.js";
import { load, type Harness } from "../spec/loader.js";
import { BenchError } from "./errors.js";
import { readEvents } from "./events.js";
import { measure, targetOf, WARMUP, type Target } from "./measure.js";
import { figuresOf, jsonReport, textReport, type Figures, type Run } from "./report.js";
import { sampleEvent } from "./samples.js";

export const COMMAND = "harnessweaver bench";
export const USAGE = `usage: ${COMMAND} [-h] [--task NAME] [--env NAME] [--org-profiles DIR]
                           [--events FILE] [--hook HOOK] [--rounds N] [--per N]
                           [--format {text,json}]
                           SPEC
`;
export const HELP = `${USAGE}
time a harness of your own at every hook point it has middleware for: the emit
on the bus against its floor (the same middleware awaited in a plain loop)

positional arguments:
  SPEC                  the harness spec (harness.yaml)

options:
  -h, --help            show this help message and exit
  --task NAME           the task whose guardrails to include
  --env NAME            the environment overlay to include
  --org-profiles DIR    a directory org:// profiles are looked up in;
                        repeatable (default: the HARNESSWEAVER_ORG_PROFILES
                        environment variable)
  --events FILE         time these events (JSON Lines: {"hook": ..., "event":
                        {...}}) instead of one sample event per hook point;
                        Python's command writes such a file from a run journal
                        (--dump-events)
  --hook HOOK           time only this hook point; repeatable
  --rounds N            rounds, the first ${WARMUP} of them warm-up (default: 21)
  --per N               operations of each kind per round (default: 200)
  --format {text,json}  text (default): a table and what to act on; json for
                        tools
`;

const OPTIONS = {
  help: { type: "boolean", short: "h" },
  task: { type: "string" },
  env: { type: "string" },
  "org-profiles": { type: "string", multiple: true },
  events: { type: "string" },
  hook: { type: "string", multiple: true },
  rounds: { type: "string" },
  per: { type: "string" },
  format: { type: "string" },
} as const;

const FORMATS = ["text", "json"] as const;

/** Where the command writes; `progress`: stderr is a terminal, so a progress bar goes there. */
export interface BenchIO {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly progress?: boolean;
}

/** A command line argparse would refuse: printed after the usage, exit 2. */
class BenchUsage extends Error {}

interface Parsed {
  readonly spec: string;
  readonly task: string | null;
  readonly env: string | null;
  readonly orgProfiles: readonly string[] | undefined;
  readonly events: string | null;
  readonly hooks: readonly HookPoint[] | null;
  readonly rounds: number;
  readonly per: number;
  readonly format: (typeof FORMATS)[number];
}

/** `--ro` for `--rounds`, as argparse takes an unambiguous prefix of a long option. */
function expandPrefixes(args: readonly string[]): string[] {
  const names = Object.keys(OPTIONS);
  return args.map((arg, i) => {
    if (!arg.startsWith("--") || arg === "--" || args.slice(0, i).includes("--")) return arg;
    const [given = "", ...value] = arg.slice(2).split("=");
    if (names.includes(given)) return arg;
    const matches = names.filter((name) => name.startsWith(given));
    if (matches.length > 1) throw new BenchUsage(`ambiguous option: --${given} could match ${matches.map((m) => `--${m}`).join(", ")}`);
    return matches.length === 1 ? [`--${matches[0]}`, ...value].join("=") : arg;
  });
}

function count(option: string, given: string | undefined, fallback: number, least: number): number {
  if (given === undefined) return fallback;
  if (!/^\s*[+-]?\d+\s*$/.test(given)) throw new BenchUsage(`argument --${option}: not a whole number: ${shown(given)}`);
  const value = Number.parseInt(given, 10);
  if (value < least) throw new BenchUsage(`argument --${option}: must be at least ${least}: ${shown(given)}`);
  return value;
}

function parse(args: readonly string[]): Parsed | "help" {
  let parsed;
  try {
    parsed = parseArgs({ args: expandPrefixes(args), options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    if (error instanceof BenchUsage) throw error;
    const message = error instanceof Error ? error.message : String(error);
    const option = /'(-[-\w]+)/.exec(message)?.[1] ?? "";
    const code = (error as { code?: unknown }).code;
    if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") throw new BenchUsage(`unrecognized arguments: ${option}`);
    if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") throw new BenchUsage(`argument ${option}: expected one argument`);
    throw new BenchUsage(message);
  }
  const { values, positionals } = parsed;
  if (values.help) return "help";
  const format = values.format ?? "text";
  if (!(FORMATS as readonly string[]).includes(format)) {
    throw new BenchUsage(`argument --format: invalid choice: '${format}' (choose from ${FORMATS.map((f) => `'${f}'`).join(", ")})`);
  }
  for (const hook of values.hook ?? []) {
    if (!isHookPoint(hook)) throw new BenchUsage(`argument --hook: invalid choice: '${hook}' (choose from ${HOOK_POINTS.map((h) => `'${h}'`).join(", ")})`);
  }
  const [spec, ...extra] = positionals;
  if (spec === undefined) throw new BenchUsage("the following arguments are required: SPEC");
  if (extra.length > 0) throw new BenchUsage(`unrecognized arguments: ${extra.join(" ")}`);
  return {
    spec,
    task: values.task ?? null,
    env: values.env ?? null,
    orgProfiles: values["org-profiles"],
    events: values.events ?? null,
    hooks: values.hook === undefined ? null : HOOK_POINTS.filter((hook) => values.hook?.includes(hook)),
    rounds: count("rounds", values.rounds, 21, WARMUP + 1),
    per: count("per", values.per, 200, 1),
    format: format as Parsed["format"],
  };
}

const ORG_PROFILES_ENV = "HARNESSWEAVER_ORG_PROFILES";
/** How the problem of an `org://` profile with no directory to look in begins (spec/resolve.ts). */
const NO_ORG_DIRS = "no org-profile directories are set";

/**
 * The spec's own `org/` folder, for a spec whose `org://` profiles found no directory to look
 * in because none was given (`--org-profiles`, HARNESSWEAVER_ORG_PROFILES), or null. The bench
 * times a harness and enforces nothing, so it takes the org profiles that sit beside the spec,
 * as the examples keep them, and says so (Python's `_org_beside`); `hooks` and every
 * enforcement point still need the directories named.
 */
function orgBeside(parsed: Parsed, error: unknown): string | null {
  if (parsed.orgProfiles !== undefined || process.env[ORG_PROFILES_ENV]) return null;
  const problems = (error as { kind?: unknown; problems?: unknown }).problems;
  if ((error as { kind?: unknown }).kind !== "invalid_spec" || !Array.isArray(problems)) return null;
  if (!problems.some((problem) => String((problem as { message?: unknown }).message).includes(NO_ORG_DIRS))) return null;
  const beside = join(dirname(parsed.spec), "org");
  return statSync(beside, { throwIfNoEntry: false })?.isDirectory() === true ? beside : null;
}

/** What the events are, as the refusals say it. */
function source(parsed: Parsed): string {
  return parsed.events === null ? "the sample events" : `the events of ${parsed.events}`;
}

/**
 * The hook points to time, in catalogue order, and notes on the hook points with middleware
 * an events file has no event of. A hook point is timed when some event's chain (matchers
 * applied) is not empty; one asked for with `--hook` that cannot be timed is refused, naming
 * it and why.
 */
function targetsOf(harness: Harness, parsed: Parsed): [Target[], string[]] {
  const given = parsed.events === null ? null : readEvents(parsed.events);
  const order: readonly HookPoint[] = given === null ? HOOK_POINTS : HOOK_POINTS.filter((hook) => given.has(hook));
  const events = (hook: HookPoint): Event[] => (given === null ? [sampleEvent(hook)] : (given.get(hook) ?? []));
  const candidates = parsed.hooks ?? [...order, ...HOOK_POINTS.filter((hook) => !order.includes(hook) && harness.bus.chain(hook).length > 0)];
  const chosen = new Map<HookPoint, Target>();
  const notes: string[] = [];
  for (const hook of candidates) {
    const own = events(hook);
    if (own.length === 0) {
      if (parsed.hooks !== null) throw new BenchError(`--hook ${hook}: no event of ${hook} in ${parsed.events ?? ""}`);
      notes.push(`${hook}: not timed: no event of this hook point in ${parsed.events ?? ""}`);
      continue;
    }
    const target = targetOf(harness.bus, hook, own);
    if (target.names.length > 0) chosen.set(hook, target);
    else if (parsed.hooks !== null) throw new BenchError(`--hook ${hook}: no middleware runs there for ${source(parsed)} (see \`harnessweaver hooks\`)`);
  }
  if (chosen.size === 0) throw new BenchError(`no hook point of ${parsed.spec} has middleware for ${source(parsed)}`);
  return [order.flatMap((hook) => chosen.get(hook) ?? []), notes];
}

/** A progress bar on stderr, redrawn in place (only when stderr is a terminal). */
function progressBar(io: BenchIO, total: number): { tick: (hook: string) => void; done: () => void } {
  let done = 0;
  if (io.progress !== true) return { tick: () => {}, done: () => {} };
  return {
    tick: (hook) => {
      done += 1;
      const filled = Math.round((done / total) * 30);
      io.stderr(`\rbench [${"#".repeat(filled)}${".".repeat(30 - filled)}] ${done}/${total} rounds  ${hook}\x1b[K`);
    },
    done: () => io.stderr("\r\x1b[K"),
  };
}

/**
 * Runs `harnessweaver bench` with `args` (after `bench`). `loadFailed` writes a spec's load
 * error (the same loader and problems as `harnessweaver hooks`).
 */
export async function benchMain(args: readonly string[], io: BenchIO, loadFailed: (spec: string, error: unknown) => void): Promise<number> {
  let parsed: Parsed | "help";
  try {
    parsed = parse(args);
  } catch (error) {
    if (!(error instanceof BenchUsage)) throw error;
    io.stderr(`${USAGE}${COMMAND}: error: ${error.message}\n`);
    return 2;
  }
  if (parsed === "help") {
    io.stdout(HELP);
    return 0;
  }
  let harness: Harness;
  const options = { task: parsed.task, env: parsed.env };
  try {
    try {
      harness = await load(parsed.spec, { ...options, ...(parsed.orgProfiles === undefined ? {} : { orgProfiles: parsed.orgProfiles }) });
    } catch (error) {
      const beside = orgBeside(parsed, error);
      if (beside === null) throw error;
      io.stderr(`${COMMAND}: org:// profiles from ${beside}, the spec's own org/ folder (no --org-profiles or ${ORG_PROFILES_ENV} was given)\n`);
      harness = await load(parsed.spec, { ...options, orgProfiles: [beside] });
    }
  } catch (error) {
    loadFailed(parsed.spec, error);
    return 2;
  }
  try {
    const [targets, notes] = targetsOf(harness, parsed);
    const uses = new Map(harness.entries.map((entry) => [entry.name, entry.use]));
    const bar = progressBar(io, targets.length * parsed.rounds);
    const figures: Figures[] = [];
    for (const target of targets) {
      const measured = await measure(harness.bus, target, parsed.rounds, parsed.per, () => bar.tick(target.hook));
      if (measured.ratio === null) throw new BenchError(`${target.hook}: the clock saw no floor time: raise --per`);
      figures.push(figuresOf(measured, measured.ratio, (name) => uses.get(name) ?? null));
    }
    bar.done();
    const run: Run = { spec: parsed.spec, task: parsed.task, env: parsed.env, events: parsed.events ?? "samples", rounds: parsed.rounds, per: parsed.per };
    io.stdout(parsed.format === "json" ? jsonReport(run, figures) : textReport(run, figures, notes));
    return 0;
  } catch (error) {
    if (!(error instanceof BenchError)) throw error;
    io.stderr(`${COMMAND}: error: ${error.message}\n`);
    return 2;
  } finally {
    await harness.close();
  }
}
