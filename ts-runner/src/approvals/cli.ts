/**
 * `harnessweaver approvals list | show | approve | deny | edit` in the Node CLI (Python's
 * `harnessweaver approvals`, the same flags and exit statuses): decide approvals from anywhere
 * that shares the store.
 *
 * The store is the spec's `state:`; else `--state-file F` (SQLite); else the hook command's
 * default state file (`$HARNESSWEAVER_HOOK_STATE`, else
 * `$XDG_STATE_HOME/harnessweaver/hook-state.sqlite3`), where a hook command without a `state:`
 * files. The spec's identity (`--spec`, `--task`, `--env`) goes with every decision, so one for
 * another spec version is refused. Exit 0 done, 1 refused (the message names the code), 2 usage.
 */

import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { isPlainObject, type JsonObject } from "../json.js";
import { load } from "../spec/loader.js";
import type { StateConfig } from "../state/config.js";
import { openStore } from "../state/config.js";
import { StateUnavailable, type Store } from "../state/store.js";
import { Approvals } from "./book.js";
import { ApprovalRefused, isoTime, specIdentity, STATUSES, type ApprovalRecord } from "./record.js";
import { statusAt } from "./rules.js";

export const EXIT_OK = 0;
export const EXIT_REFUSED = 1;
export const EXIT_USAGE = 2;

const PROGRAM = "harnessweaver approvals";
const ACTIONS = ["list", "show", "approve", "deny", "edit"] as const;
type Action = (typeof ACTIONS)[number];

export const USAGE = `usage: ${PROGRAM} [-h] {list,show,approve,deny,edit} ...
`;

const HELP = `${USAGE}
decide durable approvals from anywhere that shares the state store
(docs/approvals.md)

commands:
  list      the approvals (--status pending: those waiting)
  show      one approval: its complete, canonical action as pretty JSON
  approve   approve an approval
  deny      deny an approval
  edit      approve an approval with new arguments (--arguments JSON|@file)

options (every command):
  --spec S          the harness spec (harness.yaml) the approvals were filed under
  --task T          its task, as the agent loads it
  --env E           its env overlay, as the agent loads it
  --state-file F    the SQLite state file when the spec has no state:
                    (default: the hook command's state file)
  --format {text,json}   list: text (default) or json
  --status STATUS   list: only these (pending, approved, denied, used, closed, expired)
  --role R, --by NAME, --reason TEXT   approve, deny, edit: who decides and why

exit status: 0 done, 1 refused (the message names the code), 2 usage
`;

const OPTIONS = {
  help: { type: "boolean", short: "h" },
  spec: { type: "string" },
  task: { type: "string" },
  env: { type: "string" },
  "state-file": { type: "string" },
  status: { type: "string" },
  format: { type: "string" },
  role: { type: "string" },
  by: { type: "string" },
  reason: { type: "string" },
  arguments: { type: "string" },
} as const;

/** Which options each command takes (beyond --spec, --task, --env, --state-file). */
const TAKES: Readonly<Record<Action, readonly string[]>> = {
  list: ["status", "format"],
  show: [],
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

class Usage extends Error {}

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
  readonly values: { readonly [K in keyof typeof OPTIONS]?: (typeof OPTIONS)[K]["type"] extends "boolean" ? boolean : string };
}

function parse(args: readonly string[]): Command | "help" {
  const [action, ...rest] = args;
  if (action === "-h" || action === "--help") return "help";
  if (action === undefined) throw new Usage("the following arguments are required: command");
  if (!(ACTIONS as readonly string[]).includes(action)) {
    throw new Usage(`argument command: invalid choice: '${action}' (choose from ${ACTIONS.map((a) => `'${a}'`).join(", ")})`);
  }
  let parsed;
  try {
    parsed = parseArgs({ args: [...rest], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const option = /'(-[-\w]+)/.exec(message)?.[1] ?? "";
    throw new Usage(option ? `unrecognized arguments or missing value: ${option}` : "bad arguments");
  }
  const { values, positionals } = parsed;
  if (values.help) return "help";
  const act = action as Action;
  for (const [name, value] of Object.entries(values)) {
    if (value === undefined || ["help", "spec", "task", "env", "state-file"].includes(name)) continue;
    if (!TAKES[act].includes(name)) throw new Usage(`${act} takes no --${name}`);
  }
  if (values.spec === undefined) throw new Usage("the following arguments are required: --spec");
  const wantsId = act !== "list";
  if (wantsId && positionals.length === 0) throw new Usage("the following arguments are required: ID");
  if (positionals.length > (wantsId ? 1 : 0)) throw new Usage(`unrecognized arguments: ${positionals.slice(wantsId ? 1 : 0).join(" ")}`);
  if (act === "edit" && values.arguments === undefined) throw new Usage("the following arguments are required: --arguments");
  if (values.format !== undefined && !["text", "json"].includes(values.format)) {
    throw new Usage(`argument --format: invalid choice: '${values.format}' (choose from 'text', 'json')`);
  }
  const statuses = [...STATUSES, "expired"];
  if (values.status !== undefined && !statuses.includes(values.status)) {
    throw new Usage(`argument --status: invalid choice: '${values.status}' (choose from ${statuses.map((s) => `'${s}'`).join(", ")})`);
  }
  return { action: act, id: wantsId ? (positionals[0] as string) : null, values };
}

/** `--arguments JSON|@file`: a JSON object (the call's new arguments, or the new event JSON). */
function editedOf(given: string): JsonObject {
  let text = given;
  if (given.startsWith("@")) {
    try {
      text = readFileSync(given.slice(1), "utf8");
    } catch (error) {
      throw new Usage(`--arguments ${given}: cannot read the file (${(error as { code?: string }).code ?? "error"})`);
    }
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Usage("--arguments is a JSON object (or @file holding one): it is not JSON");
  }
  if (!isPlainObject(value)) throw new Usage("--arguments is a JSON object (or @file holding one)");
  return value as JsonObject;
}

function line(record: ApprovalRecord, now: number): string {
  const role = record.approver_role ?? "-";
  return `${record.id}  ${statusAt(record, now)}  ${record.hook}  ${record.tool ?? "-"}  role=${role}  expires=${isoTime(record.expires_at)}  ${record.reason}`;
}

function decided(record: ApprovalRecord): string {
  const by = record.decision?.by ? ` by ${record.decision.by}` : "";
  const edited = record.decision?.edited ? " (edited)" : "";
  return `approval ${record.id} ${record.status}${edited}${by}\n`;
}

async function run(command: Command, io: ApprovalsIO): Promise<number> {
  const values = command.values;
  let opened: Store | null = null;
  const openState = async (config: StateConfig | null): Promise<Store> => {
    if (config !== null) return openStore(config);
    const { SqliteStore } = await import("../state/sqlite.js");
    try {
      return await SqliteStore.open(values["state-file"] ?? defaultStateFile(io.environ));
    } catch (error) {
      // No node:sqlite (Node < 22.5: the message says so), or a file that cannot be opened.
      const why = error instanceof Error && error.message.startsWith("the sqlite state backend needs") ? error.message : "cannot open the state file";
      throw new NoStore(why);
    }
  };
  const harness = await load(values.spec as string, {
    task: values.task ?? null,
    env: values.env ?? null,
    openState: async (config) => (opened = await openState(config)),
  });
  try {
    const spec = specIdentity(harness);
    const book = new Approvals(harness.store, { spec });
    const decision = { role: values.role ?? null, by: values.by ?? null, reason: values.reason ?? "", spec };
    switch (command.action) {
      case "list": {
        const records = await book.list({ status: (values.status ?? null) as never });
        if ((values.format ?? "text") === "json") io.stdout(`${JSON.stringify(records, null, 2)}\n`);
        else {
          const now = Date.now() / 1000;
          io.stdout(records.map((record) => `${line(record, now)}\n`).join(""));
        }
        return EXIT_OK;
      }
      case "show":
        io.stdout(`${JSON.stringify(await book.get(command.id as string), null, 2)}\n`);
        return EXIT_OK;
      case "approve":
        io.stdout(decided(await book.approve(command.id as string, decision)));
        return EXIT_OK;
      case "deny":
        io.stdout(decided(await book.deny(command.id as string, decision)));
        return EXIT_OK;
      case "edit":
        io.stdout(decided(await book.edit(command.id as string, editedOf(values.arguments as string), decision)));
        return EXIT_OK;
    }
    return EXIT_USAGE;
  } finally {
    await (opened as Store | null)?.close();
  }
}

interface ProblemLike {
  readonly file: string;
  readonly item: string;
  readonly line: number | null;
  readonly message: string;
}

/** Runs `harnessweaver approvals ARGS`; resolves to the exit status. */
export async function approvalsMain(args: readonly string[], io: ApprovalsIO): Promise<number> {
  let command: Command | "help";
  try {
    command = parse(args);
  } catch (error) {
    if (!(error instanceof Usage)) throw error;
    io.stderr(`${USAGE}${PROGRAM}: error: ${error.message}\n`);
    return EXIT_USAGE;
  }
  if (command === "help") {
    io.stdout(HELP);
    return EXIT_OK;
  }
  try {
    return await run(command, io);
  } catch (error) {
    if (error instanceof Usage) {
      io.stderr(`${USAGE}${PROGRAM}: error: ${error.message}\n`);
      return EXIT_USAGE;
    }
    if (error instanceof ApprovalRefused) {
      io.stderr(`${PROGRAM}: refused: ${error.code}: ${error.message}\n`);
      return EXIT_REFUSED;
    }
    if (error instanceof NoStore) {
      io.stderr(`${PROGRAM}: refused: state_unavailable: ${error.message}\n`);
      return EXIT_REFUSED;
    }
    if (error instanceof StateUnavailable) {
      // Never "go on": the store is down, nothing was decided.
      io.stderr(`${PROGRAM}: refused: state_unavailable: ${error.message}\n`);
      return EXIT_REFUSED;
    }
    const { kind, problems } = error as { kind?: unknown; problems?: unknown };
    if (kind === "invalid_spec" && Array.isArray(problems)) {
      const text = (problems as ProblemLike[]).map(({ file, item, line, message }) => {
        const where = line === null ? file : `${file}:${line}`;
        return item ? `${where}: ${item}: ${message}` : `${where}: ${message}`;
      });
      io.stderr(`${text.join("\n")}\n`);
      return EXIT_USAGE;
    }
    throw error;
  }
}
