/**
 * What is wrong with a harness spec: `Problem` and `SpecError` (Python: `spec/errors.py`).
 *
 * Loading collects every problem of every file and item before it builds anything; if there is
 * one, `SpecError` lists them all, one per line. A problem found by the core (a band moved
 * outward, S8, R2, widened hooks, a bad duration…) keeps the core's `kind` and `rule`; the
 * others have the spec-level kinds of `RULES`.
 */

import { HarnessweaverError } from "../errors.js";

/** The spec-level problem kinds and the rule each enforces (docs/harness-spec.md). */
export const RULES = Object.freeze({
  unreadable_yaml: "yaml",
  too_large: "limits",
  too_deep: "limits",
  too_many_aliases: "limits",
  recursive_alias: "limits",
  not_a_spec: "spec",
  not_a_mapping: "spec",
  bad_item: "spec",
  unknown_key: "spec",
  unknown_task: "spec",
  unknown_env: "spec",
  unknown_use: "plugins",
  unknown_plugin: "plugins",
  duplicate_plugin: "plugins",
  plugin_import_error: "plugins",
  unknown_profile: "profiles",
  duplicate_id: "I2",
  invalid_settings: "settings",
  invalid_contracts: "contracts",
  invalid_identity: "I27",
  invalid_mode: "I25",
  invalid_state: "state",
  invalid_approvals: "approvals",
  invalid_policy: "I38",
} as const);

export type SpecKind = keyof typeof RULES;

/**
 * One thing wrong: where (`file`, `line`, `item`), what (`kind`, `rule`), why. `file` is shown
 * relative to the spec's folder; `item` is the item's place in its file, such as
 * `middleware[1] (acme.refund_cap)`, or empty for the file as a whole.
 */
export class Problem {
  constructor(
    readonly file: string,
    readonly item: string,
    readonly line: number | null,
    readonly kind: string,
    readonly rule: string,
    readonly message: string,
  ) {
    Object.freeze(this);
  }

  toString(): string {
    const where = this.line === null ? this.file : `${this.file}:${this.line}`;
    return this.item ? `${where}: ${this.item}: ${this.message}` : `${where}: ${this.message}`;
  }

  toJSON(): { file: string; item: string; line: number | null; kind: string; rule: string; message: string } {
    const { file, item, line, kind, rule, message } = this;
    return { file, item, line, kind, rule, message };
  }
}

/**
 * A harness spec that cannot be loaded; nothing was built. `problems` lists why; the message
 * is one problem per line. A `HarnessweaverError` of kind `invalid_spec`, rule `spec`, as
 * Python's `hw.SpecError`.
 */
export class SpecError extends HarnessweaverError {
  readonly problems: readonly Problem[];

  constructor(problems: Iterable<Problem>) {
    const list = Object.freeze([...problems]);
    super("invalid_spec", list.map(String).join("\n"));
    this.problems = list;
  }
}

/** The problems found so far, in the order found, each once. */
export class Problems {
  readonly #found = new Map<string, Problem>();

  get size(): number {
    return this.#found.size;
  }

  /** Whether a problem of `file` was found. */
  has(file: string): boolean {
    for (const problem of this.#found.values()) if (problem.file === file) return true;
    return false;
  }

  /** A spec-level problem; its rule comes from `RULES` and closes the message. */
  add(file: string, item: string, line: number | null, kind: SpecKind, message: string): void {
    const rule = RULES[kind];
    this.#add(new Problem(file, item, line, kind, rule, `${oneLine(message)} (${rule})`));
  }

  /** A problem the core found: its kind, rule and message (which names the rule). */
  core(file: string, item: string, line: number | null, error: HarnessweaverError): void {
    this.#add(new Problem(file, item, line, error.kind, error.rule, oneLine(error.message)));
  }

  #add(problem: Problem): void {
    const item = oneLine(problem.item);
    const one = item === problem.item ? problem : new Problem(problem.file, item, problem.line, problem.kind, problem.rule, problem.message);
    const key = `${one.file}\0${one.item}\0${one.line}\0${one.kind}\0${one.rule}\0${one.message}`;
    if (!this.#found.has(key)) this.#found.set(key, one);
  }

  error(): SpecError {
    return new SpecError(this.#found.values());
  }
}

const LONGEST = 2_000;

/** `message` with control characters escaped, its middle cut out when too long (its end names the rule). */
export function oneLine(message: string): string {
  // eslint-disable-next-line no-control-regex
  if (message.length <= LONGEST && !/[\x00-\x1f\x7f]/.test(message)) return message;
  // eslint-disable-next-line no-control-regex
  const escaped = message.replace(/[\x00-\x1f\x7f]/g, (ch) => {
    if (ch === "\n") return "\\n";
    if (ch === "\r") return "\\r";
    if (ch === "\t") return "\\t";
    return `\\x${ch.charCodeAt(0).toString(16).padStart(2, "0")}`;
  });
  if (escaped.length <= LONGEST) return escaped;
  return `${escaped.slice(0, LONGEST / 2)}…${escaped.slice(escaped.length - LONGEST / 2)}`;
}
