/**
 * `harnessweaver approvals list | show | approve | deny | edit` in the Node CLI (Python's
 * `harnessweaver approvals`, the same flags and exit statuses): decide approvals from anywhere
 * that shares the store.
 *
 * The store is the spec's `state:`; else `--state-file F` (SQLite); else the hook command's
 * default state file (`$HARNESSWEAVER_HOOK_STATE`, else
 * `$XDG_STATE_HOME/harnessweaver/hook-state.sqlite3`), where a hook command without a `state:`
 * files. The spec's identity (`--spec`, `--task`, `--env`) goes with every decision, so one for
 * another spec version is refused. Exit 0 done, 1 refused (the code and the message on stderr),
 * 2 a usage error, a spec that does not load, a store down. Output is terminal-safe: a filed
 * action is anyone's text, its control characters are written as `\uXXXX`.
 */

import { mkdirSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";
import { isPlainObject, type JsonObject, type JsonValue } from "../json.js";
import { SpecError } from "../spec/errors.js";
import { load, type Harness } from "../spec/loader.js";
import type { StateConfig } from "../state/config.js";
import { openStore } from "../state/config.js";
import { StateUnavailable, type Store } from "../state/store.js";
import { ApprovalRefused, isoTime, specIdentity, STATUSES, type ApprovalRecord, type Status } from "./record.js";
import { statusAt } from "./rules.js";

export const EXIT_OK = 0;
export const EXIT_REFUSED = 1;
export const EXIT_USAGE = 2;

const PROGRAM = "harnessweaver approvals";
const ACTIONS = ["list", "show", "approve", "deny", "edit"] as const;
type Action = (typeof ACTIONS)[number];

export const USAGE = `usage: ${PROGRAM} [-h] ACTION ...
`;

const HELP = `${USAGE}
list, show and decide the approvals of a harness spec (docs/approvals.md)

positional arguments:
  ACTION
    list      the approvals of the spec's store
    show      one approval, its complete action as JSON
    approve   approve an approval, as filed
    deny      deny an approval
    edit      approve an approval with other arguments (the whole event at
              non-tool hooks)

options (each action):
  --spec S            the harness spec (harness.yaml); required
  --task T            the spec's task (part of the spec version decided for)
  --env E             the spec's environment overlay (part of the version)
  --org-profiles DIR  org profile folder; repeatable
  --state-file F      the SQLite state file, for a spec without a state: store
                      (default: the hook command's state file)
  list:     --status {pending,approved,denied,used,closed,expired}
            --format {text,json}
  show:     ID --format {text,json}
  approve, deny, edit: ID --role R --by NAME --reason TEXT
  edit:     --arguments JSON|@FILE (required)

exit status: 0 done, 1 refused (the code and the message on stderr), 2 a usage
error, a spec that does not load, a store down
`;

const OPTIONS = {
  help: { type: "boolean", short: "h" },
  spec: { type: "string" },
  task: { type: "string" },
  env: { type: "string" },
  "org-profiles": { type: "string", multiple: true },
  "state-file": { type: "string" },
  status: { type: "string" },
  format: { type: "string" },
  role: { type: "string" },
  by: { type: "string" },
  reason: { type: "string" },
  arguments: { type: "string" },
} as const;

const COMMON = ["help", "spec", "task", "env", "org-profiles", "state-file"];
/** Which options each action takes beyond the common ones (Python's subparsers). */
const TAKES: Readonly<Record<Action, readonly string[]>> = {
  list: ["status", "format"],
  show: ["format"],
  approve: ["role", "by", "reason"],
  deny: ["role", "by", "reason"],
  edit: ["role", "by", "reason", "arguments"],
};

export interface ApprovalsIO {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  /** The environment (default `process.env`): where the default state file is. */
  readonly environ?: Readonly<Record<string, string | undefined>>;
}

class Usage extends Error {
  constructor(
    message: string,
    /** The action whose usage it is (its name goes in the message), or null. */
    readonly action: string | null = null,
  ) {
    super(message);
  }
}

/** The store could not be opened: nothing was read or decided (exit 1). */
class NoStore extends Error {}

/** The hook command's default state file (Python's `harnessweaver.hookcmd.store.default_path()`). */
export function defaultStateFile(environ: Readonly<Record<string, string | undefined>> = process.env): string {
  const given = environ["HARNESSWEAVER_HOOK_STATE"];
  if (given) return given;
  const base = environ["XDG_STATE_HOME"] || join(homedir(), ".local", "state");
  return join(base, "harnessweaver", "hook-state.sqlite3");
}

interface Command {
  readonly action: Action;
  readonly id: string | null;
  readonly values: {
    readonly help?: boolean;
    readonly "org-profiles"?: readonly string[];
    readonly [name: string]: string | boolean | readonly string[] | undefined;
  };
}

function parse(args: readonly string[]): Command | "help" {
  const [action, ...rest] = args;
  if (action === "-h" || action === "--help") return "help";
  if (action === undefined) throw new Usage("the following arguments are required: ACTION");
  if (!(ACTIONS as readonly string[]).includes(action)) {
    throw new Usage(`argument ACTION: invalid choice: '${action}' (choose from ${ACTIONS.map((a) => `'${a}'`).join(", ")})`);
  }
  let parsed;
  try {
    parsed = parseArgs({ args: [...rest], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const option = /'(-[-\w]+)/.exec(message)?.[1] ?? "";
    throw new Usage(option ? `unrecognized arguments or missing value: ${option}` : "bad arguments", action);
  }
  const { values, positionals } = parsed;
  if (values.help) return "help";
  const act = action as Action;
  for (const [name, value] of Object.entries(values)) {
    if (value === undefined || COMMON.includes(name)) continue;
    if (!TAKES[act].includes(name)) throw new Usage(`unrecognized arguments: --${name}`, act);
  }
  const wantsId = act !== "list";
  const required = [...(wantsId && positionals.length === 0 ? ["ID"] : []), ...(values.spec === undefined ? ["--spec"] : [])];
  if (act === "edit" && values.arguments === undefined) required.push("--arguments");
  if (required.length > 0) throw new Usage(`the following arguments are required: ${required.join(", ")}`, act);
  if (positionals.length > (wantsId ? 1 : 0)) throw new Usage(`unrecognized arguments: ${positionals.slice(wantsId ? 1 : 0).join(" ")}`, act);
  if (values.format !== undefined && !["text", "json"].includes(values.format)) {
    throw new Usage(`argument --format: invalid choice: '${values.format}' (choose from 'text', 'json')`, act);
  }
  const statuses = [...STATUSES, "expired"];
  if (values.status !== undefined && !statuses.includes(values.status)) {
    throw new Usage(`argument --status: invalid choice: '${values.status}' (choose from ${statuses.map((s) => `'${s}'`).join(", ")})`, act);
  }
  return { action: act, id: wantsId ? (positionals[0] as string) : null, values };
}

/** `--arguments JSON|@FILE`: any JSON (the book refuses what is no object: approval_invalid_edit). */
function editedOf(given: string): JsonValue {
  let text = given;
  let source = "--arguments";
  if (given.startsWith("@")) {
    source = given.slice(1);
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(readFileSync(source));
    } catch (error) {
      const kind = error instanceof TypeError ? "UnicodeDecodeError" : ((error as { code?: string }).code ?? "OSError");
      throw new Usage(`--arguments: cannot read ${source}: ${kind}`, "edit");
    }
  }
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    const [line, column] = jsonErrorAt(text);
    throw new Usage(`--arguments: ${source} is not JSON (line ${line}, column ${column})`, "edit");
  }
}

/** Where JSON.parse stopped, as Python's line and column (1-based), best effort. */
function jsonErrorAt(text: string): [number, number] {
  let end = 0;
  for (let i = text.length; i >= 0; i--) {
    try {
      JSON.parse(text.slice(0, i));
      end = i;
      break;
    } catch {
      // shorter
    }
  }
  const before = text.slice(0, end);
  const line = before.split("\n").length;
  return [line, end - before.lastIndexOf("\n")];
}

/** `text` with control and format characters (escape sequences, bidi overrides) written as `\uXXXX`: a filed action is anyone's text and must not drive the terminal. */
export function safe(text: string): string {
  return text.replace(/[\p{Cc}\p{Cf}]/gu, (char) => (char === "\n" ? char : `\\u${(char.codePointAt(0) as number).toString(16).padStart(4, "0")}`));
}

function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (isPlainObject(value)) return Object.fromEntries(Object.keys(value).sort().map((key) => [key, sorted(value[key])]));
  return value;
}

/** Pretty JSON, keys sorted, terminal-safe (Python's `_json`). */
function prettyJson(value: unknown): string {
  return safe(JSON.stringify(sorted(value), null, 2));
}

function line(record: ApprovalRecord, now: number): string {
  const fields = [
    record.id,
    statusAt(record, now),
    record.hook,
    record.tool || "-",
    `role=${record.approver_role || "-"}`,
    `expires=${isoTime(record.expires_at)}`,
    record.reason,
  ];
  return safe(fields.join("  ").replaceAll("\n", " "));
}

function details(record: ApprovalRecord, now: number): string {
  const rows: [string, string][] = [
    ["id", record.id],
    ["status", statusAt(record, now)],
    ["hook", record.hook],
    ["tool", record.tool || "-"],
    ["reason", record.reason],
    ["code", record.code || "-"],
    ["approver role", record.approver_role || "-"],
    ["subject", record.subject || "-"],
    ["filed by", record.filed_by],
    ["filed at", isoTime(record.filed_at)],
    ["expires at", isoTime(record.expires_at)],
    ["spec", record.spec],
    ["identity", record.identity],
  ];
  const made = record.decision;
  if (made !== null) {
    const verb = made.approved ? "approved" : "denied";
    const who = made.by ? ` by ${made.by}` : "";
    const role = made.role ? ` as ${made.role}` : "";
    const why = made.reason ? `: ${made.reason}` : "";
    rows.push(["decision", `${verb}${who}${role} at ${isoTime(made.at)}${why}`]);
  }
  if (record.used !== null) rows.push(["used", `by ${record.used.by} at ${isoTime(record.used.at)}`]);
  let text = rows.map(([name, value]) => safe(`${name}: ${value}`.replaceAll("\n", " "))).join("\n");
  text += `\naction:\n${prettyJson(record.action)}`;
  if (made !== null && made.edited !== null) text += `\nedited:\n${prettyJson(made.edited)}`;
  return text;
}

async function run(command: Command, io: ApprovalsIO): Promise<number> {
  const values = command.values;
  const text = (name: string): string | undefined => values[name] as string | undefined;
  // The spec's state:; else (none, or memory, which no other process could share) the SQLite
  // file: --state-file, else the hook command's.
  const openState = async (config: StateConfig | null): Promise<Store> => {
    if (config !== null && config.backend !== "memory") return openStore(config);
    const { SqliteStore } = await import("../state/sqlite.js");
    const path = text("state-file") ?? defaultStateFile(io.environ);
    try {
      if (text("state-file") === undefined) mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      return await SqliteStore.open(path);
    } catch (error) {
      // No node:sqlite (Node < 22.5: the message says so), or a file that cannot be opened.
      const why = error instanceof Error && error.message.startsWith("the sqlite state backend needs") ? error.message : "cannot open the state file";
      throw new NoStore(why);
    }
  };
  let harness: Harness;
  try {
    harness = await load(text("spec") as string, {
      task: text("task") ?? null,
      env: text("env") ?? null,
      ...(values["org-profiles"] === undefined ? {} : { orgProfiles: values["org-profiles"] }),
      openState,
    });
  } catch (error) {
    if (error instanceof SpecError) io.stderr(`${PROGRAM}: error: ${text("spec")} does not load:\n${error.message}\n`);
    else if (error instanceof NoStore) io.stderr(`${PROGRAM}: error: loading ${text("spec")}: ${error.message}\n`);
    else throw error;
    return EXIT_USAGE;
  }
  try {
    return await act(command, harness, io);
  } catch (error) {
    if (error instanceof ApprovalRefused) {
      io.stderr(`${PROGRAM} ${command.action}: refused: ${error.code}: ${safe(error.message)}\n`);
      return EXIT_REFUSED;
    }
    if (error instanceof StateUnavailable) {
      // Never "go on": the store is down, nothing was decided.
      io.stderr(`${PROGRAM} ${command.action}: error: ${error.message}\n`);
      return EXIT_USAGE;
    }
    throw error;
  } finally {
    await harness.close();
  }
}

async function act(command: Command, harness: Harness, io: ApprovalsIO): Promise<number> {
  const values = command.values;
  const text = (name: string): string | undefined => values[name] as string | undefined;
  const book = harness.approvals;
  const spec = specIdentity(harness);
  const now = Date.now() / 1000;
  const id = command.id as string;
  switch (command.action) {
    case "list": {
      const records = await book.list({ status: (text("status") ?? null) as Status | "expired" | null });
      if (text("format") === "json") io.stdout(`${prettyJson(records)}\n`);
      else io.stdout(records.map((record) => `${line(record, now)}\n`).join(""));
      return EXIT_OK;
    }
    case "show": {
      const record = await book.get(id);
      io.stdout(`${text("format") === "json" ? prettyJson(record) : details(record, now)}\n`);
      return EXIT_OK;
    }
    default: {
      const given = { role: text("role") ?? null, by: text("by") ?? null, reason: text("reason") ?? "", spec };
      let record: ApprovalRecord;
      if (command.action === "edit") record = await book.edit(id, editedOf(text("arguments") as string) as JsonObject, given);
      else if (command.action === "approve") record = await book.approve(id, given);
      else record = await book.deny(id, given);
      const verb = record.status === "approved" ? "approved" : "denied";
      const edit = record.decision?.edited ? " with an edit" : "";
      io.stdout(`approval ${record.id} ${verb}${edit}\n`);
      return EXIT_OK;
    }
  }
}

/** Runs `harnessweaver approvals ARGS`; resolves to the exit status. */
export async function approvalsMain(args: readonly string[], io: ApprovalsIO): Promise<number> {
  let command: Command | "help";
  try {
    command = parse(args);
  } catch (error) {
    if (!(error instanceof Usage)) throw error;
    const program = error.action === null ? PROGRAM : `${PROGRAM} ${error.action}`;
    io.stderr(`${error.action === null ? USAGE : ""}${program}: error: ${error.message}\n`);
    return EXIT_USAGE;
  }
  if (command === "help") {
    io.stdout(HELP);
    return EXIT_OK;
  }
  try {
    return await run(command, io);
  } catch (error) {
    if (!(error instanceof Usage)) throw error;
    const program = error.action === null ? PROGRAM : `${PROGRAM} ${error.action}`;
    io.stderr(`${program}: error: ${error.message}\n`);
    return EXIT_USAGE;
  }
}
