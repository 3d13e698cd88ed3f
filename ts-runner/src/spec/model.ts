/**
 * The parsed form of a harness spec and of a profile: documents, references and items
 * (Python: `spec/model.py`). Parsing checks shapes only (a mapping where one is needed, known
 * keys, `use` present, `enabled` a boolean) and records every problem; what the names refer to,
 * the layer rules and the settings are checked later, once plugins and profiles are loaded.
 */

import type { Layer } from "../layer.js";
import { closeMatches } from "./close.js";
import type { Problems, SpecKind } from "./errors.js";
import { shownValue as shown } from "./shown.js";
import { lineOf, plain, YamlList, YamlMap, YamlTimestamp } from "./yaml.js";

export const SPEC_KEYS = ["plugins", "profiles", "middleware", "envs", "tasks", "contracts", "deadlines", "mode", "identity", "state", "approvals"] as const;
export const PROFILE_KEYS = ["profile", "plugins", "middleware"] as const;
/** The keys of an item that are not settings. */
export const RESERVED = ["id", "use", "band", "hooks", "fail_mode", "timeout", "match", "mode", "enabled"] as const;
export const LAYER_KEYS = ["band", "hooks", "fail_mode", "timeout", "match", "mode"] as const;
/** A `use` longer than this is cut short where it names its item. */
const LONG = 80;

/** Where an item was declared: its layer (I13), its file and line. */
export class Provenance {
  constructor(
    readonly layer: Layer,
    readonly file: string,
    readonly line: number | null,
  ) {
    Object.freeze(this);
  }

  toString(): string {
    return this.line === null ? this.file : `${this.file}:${this.line}`;
  }
}

/** A string in a list of the spec: a plugin module or namespace, or a profile. */
export interface Ref {
  readonly value: string;
  readonly where: string;
  readonly file: string;
  readonly line: number | null;
}

/** One middleware item: `use`, `id` and the layer keys as written, and its settings. */
export class Item {
  constructor(
    readonly where: string,
    readonly use: string,
    readonly id: unknown,
    readonly label: string,
    readonly enabled: boolean,
    readonly keys: Readonly<Record<string, unknown>>,
    readonly settings: Readonly<Record<string, unknown>>,
    readonly source: Provenance,
    readonly keyLines: ReadonlyMap<unknown, number>,
  ) {}

  /** The line of `key` in the item, or of the item. */
  line(key?: string | null): number | null {
    if (key) return this.keyLines.get(key) ?? this.source.line;
    return this.source.line;
  }
}

/** A harness spec or a profile, parsed: what it loads and what it declares. */
export interface Document {
  readonly file: string;
  readonly local: readonly Ref[];
  readonly installed: readonly Ref[];
  readonly profiles: readonly Ref[];
  readonly middleware: readonly Item[];
  readonly envs: ReadonlyMap<string, readonly Item[]>;
  readonly tasks: ReadonlyMap<string, readonly Item[]>;
  /** The line of each top-level key. */
  readonly lines: ReadonlyMap<unknown, number>;
  readonly contracts: unknown;
  readonly identity: unknown;
  /** The spec's `deadlines:` as read, with lines. */
  readonly deadlines: unknown;
  /** Each task's `deadlines:` as read. */
  readonly taskDeadlines: ReadonlyMap<string, unknown>;
  readonly mode: unknown;
  /** The spec's `state:` (the state store, docs/state.md) as read, with lines; checked by the loader. */
  readonly state: unknown;
  /** The spec's `approvals:` (durable approvals, docs/approvals.md) as read, with lines; checked by the loader. */
  readonly approvals: unknown;
  readonly envModes: ReadonlyMap<string, unknown>;
  readonly envLines: ReadonlyMap<string, number | null>;
  readonly taskModes: ReadonlyMap<string, unknown>;
  readonly taskLines: ReadonlyMap<string, number | null>;
}

type Label = (ident: string) => string;

/** What a file's top level holds, as a problem says it (never the value itself). */
function kindOf(value: unknown): string {
  if (value instanceof YamlList || Array.isArray(value)) return "a list";
  if (typeof value === "string") return "text";
  if (typeof value === "boolean") return "true or false";
  if (typeof value === "number") return "a number";
  if (value instanceof Uint8Array) return "binary data";
  if (value instanceof YamlTimestamp) return "a date";
  if (value instanceof Set) return "a set";
  return "something else";
}

const isMap = (value: unknown): value is YamlMap => value instanceof YamlMap;
const EMPTY = new YamlMap();

class Parser {
  constructor(
    readonly file: string,
    readonly problems: Problems,
  ) {}

  problem(where: string, line: number | null, kind: SpecKind, message: string): void {
    this.problems.add(this.file, where, line, kind, message);
  }

  mapping(value: unknown, where: string, line: number | null, what: string): YamlMap {
    if (value === null || value === undefined) return EMPTY;
    if (!isMap(value)) {
      this.problem(where, lineOf(value) ?? line, "not_a_mapping", `${what}, got ${shown(value)}`);
      return EMPTY;
    }
    for (const key of value.keys()) {
      if (typeof key !== "string") this.problem(where, lineOf(value, key), "bad_item", `a key must be text: ${shown(key)}`);
    }
    return value;
  }

  root(doc: unknown, keys: readonly string[], what: string): YamlMap {
    if (doc === null || doc === undefined) return EMPTY;
    if (!isMap(doc)) {
      this.problem("", lineOf(doc), "not_a_mapping", `${what} is a mapping, got ${kindOf(doc)}`);
      return EMPTY;
    }
    if (doc.size > 0 && ![...doc.keys()].some((key) => typeof key === "string" && keys.includes(key))) {
      const texts = [...doc.keys()].filter((key): key is string => typeof key === "string");
      const close = texts.flatMap((key) => closeMatches(key, keys, 1));
      const hint = close.length > 0 ? `; did you mean ${shown(close[0])}?` : "";
      this.problem("", lineOf(doc), "not_a_spec", `not ${what}: none of its keys is ${keys.join(", ")}${hint}`);
      return EMPTY;
    }
    this.mapping(doc, "", lineOf(doc), `${what} is a mapping`);
    this.known(doc, keys, "");
    return doc;
  }

  known(value: YamlMap, keys: readonly string[], where: string): void {
    for (const key of value.keys()) {
      if (typeof key === "string" && !keys.includes(key)) {
        const close = closeMatches(key, keys, 1);
        const hint = close.length > 0 ? `; did you mean ${shown(close[0])}?` : "";
        this.problem(where, lineOf(value, key), "unknown_key", `unknown key ${shown(key)}: the keys are ${keys.join(", ")}${hint}`);
      }
    }
  }

  sequence(value: unknown, where: string, line: number | null, what: string): readonly unknown[] {
    if (value === null || value === undefined) return [];
    if (!(value instanceof YamlList)) {
      this.problem(where, lineOf(value) ?? line, "bad_item", `${what}, got ${shown(value)}`);
      return [];
    }
    return value;
  }

  refs(value: unknown, where: string, line: number | null, what: string): Ref[] {
    const found: Ref[] = [];
    this.sequence(value, where, line, `${what} is a list`).forEach((entry, i) => {
      const at = lineOf(value, i) ?? line;
      if (typeof entry === "string" && entry.trim()) found.push({ value: entry, where: `${where}[${i}]`, file: this.file, line: at });
      else this.problem(`${where}[${i}]`, at, "bad_item", `${what}: ${shown(entry)}`);
    });
    return found;
  }

  plugins(doc: YamlMap): [Ref[], Ref[]] {
    const line = lineOf(doc, "plugins");
    const node = this.mapping(doc.get("plugins"), "plugins", line, "plugins is a mapping");
    this.known(node, ["local", "installed"], "plugins");
    const local = this.refs(node.get("local"), "plugins.local", line, "a module name");
    const installed = this.refs(node.get("installed"), "plugins.installed", line, "a namespace");
    return [local, installed];
  }

  items(value: unknown, where: string, line: number | null, layer: Layer, label: Label): Item[] {
    const found: Item[] = [];
    this.sequence(value, where, line, "a list of items").forEach((node, i) => {
      const item = this.item(node, `${where}[${i}]`, lineOf(value, i) ?? line, layer, label, null);
      if (item !== null) found.push(item);
    });
    return found;
  }

  item(node: unknown, where: string, line: number | null, layer: Layer, label: Label, stage: string | null): Item | null {
    const what = "an item is a mapping such as {use: acme.refund_cap, max_usd: 500}";
    if (!isMap(node)) {
      this.problem(where, lineOf(node) ?? line, "not_a_mapping", `${what}, got ${shown(node)}`);
      return null;
    }
    this.mapping(node, where, line, what);
    const use = node.get("use");
    const enabled = node.has("enabled") ? node.get("enabled") : true;
    const at = lineOf(node) ?? line;
    if (typeof use === "string") where = `${where} (${[...use].length <= LONG ? use : shown(use)})`;
    let ok = typeof use === "string" && typeof enabled === "boolean";
    ok &&= [...node.keys()].every((key) => typeof key === "string"); // else a bad_item already
    if (typeof use !== "string") this.problem(where, at, "bad_item", `an item needs \`use: namespace.name\`, got ${shown(use)}`);
    if (typeof enabled !== "boolean") this.problem(where, lineOf(node, "enabled"), "bad_item", `enabled is true or false, got ${shown(enabled)}`);
    const keys: Record<string, unknown> = {};
    for (const key of LAYER_KEYS) {
      const value = node.get(key);
      if (value !== null && value !== undefined) keys[key] = plain(value);
    }
    if (stage !== null) {
      const hooks = keys["hooks"];
      if (hooks !== undefined && !(Array.isArray(hooks) && hooks.length === 1 && hooks[0] === stage)) {
        this.problem(where, lineOf(node, "hooks"), "bad_item", `a guardrail of stage ${stage} runs on ${stage} only`);
        ok = false;
      }
      keys["hooks"] = [stage];
    }
    if (!ok) return null;
    const given: unknown = node.get("id");
    const ident = given === undefined || given === null ? use : given; // `id: null` is no id
    const settings: Record<string, unknown> = {};
    for (const [key, value] of node) {
      if (!(RESERVED as readonly unknown[]).includes(key)) settings[key as string] = plain(value);
    }
    return new Item(
      where,
      String(use),
      plain(ident),
      label(typeof ident === "string" ? ident : String(use)),
      Boolean(enabled),
      keys,
      settings,
      new Provenance(layer, this.file, at),
      new Map(node.keyLines),
    );
  }

  named(doc: YamlMap, key: string): Map<string, unknown> {
    const node = this.mapping(doc.get(key), key, lineOf(doc, key), `${key} maps a name to its definition`);
    return new Map([...node].filter((entry): entry is [string, unknown] => typeof entry[0] === "string"));
  }

  task(name: string, node: unknown, line: number | null): Item[] {
    const where = `tasks.${name}`;
    const task = this.mapping(node, where, line, "a task is a mapping of guardrails and validation");
    this.known(task, ["guardrails", "validation", "deadlines", "mode"], where);
    let at = lineOf(task, "guardrails") ?? line;
    const stages = this.mapping(task.get("guardrails"), `${where}.guardrails`, at, "guardrails map");
    const items: Item[] = [];
    for (const [stage, guards] of stages) {
      if (typeof stage !== "string") continue;
      const place = `${where}.guardrails.${stage}`;
      const label: Label = (ident) => `guardrails.${stage}[${ident}]`;
      this.sequence(guards, place, at, "a list of items").forEach((guard, i) => {
        const found = this.item(guard, `${place}[${i}]`, lineOf(guards, i) ?? at, "task", label, stage);
        if (found !== null) items.push(found);
      });
    }
    at = lineOf(task, "validation") ?? line;
    const rules = this.mapping(task.get("validation"), `${where}.validation`, at, "validation map");
    this.known(rules, ["rules"], `${where}.validation`);
    items.push(...this.items(rules.get("rules"), `${where}.validation.rules`, at, "task", (ident) => `validation.rules[${ident}]`));
    return items;
  }
}

const same: Label = (ident) => ident;

/** A harness.yaml's content, parsed; shape problems are added to `problems`. */
export function parseSpec(doc: unknown, file: string, problems: Problems): Document {
  const parser = new Parser(file, problems);
  const root = parser.root(doc, SPEC_KEYS, "a harness spec");
  const [local, installed] = parser.plugins(root);
  const line = lineOf(root, "profiles");
  const envs = new Map<string, readonly Item[]>();
  const envModes = new Map<string, unknown>();
  const envLines = new Map<string, number | null>();
  for (const [name, node] of parser.named(root, "envs")) {
    const env = parser.mapping(node, `envs.${name}`, lineOf(root, "envs"), "an env is a mapping");
    parser.known(env, ["middleware", "mode"], `envs.${name}`);
    const mode = env.get("mode");
    if (mode !== null && mode !== undefined) {
      envModes.set(name, plain(mode));
      envLines.set(name, lineOf(env, "mode"));
    }
    envs.set(name, parser.items(env.get("middleware"), `envs.${name}.middleware`, lineOf(env, "middleware"), "env", same));
  }
  const taskNodes = parser.named(root, "tasks");
  const tasks = new Map<string, readonly Item[]>();
  for (const [name, node] of taskNodes) tasks.set(name, parser.task(name, node, lineOf(root, "tasks")));
  const taskModes = new Map<string, unknown>();
  const taskLines = new Map<string, number | null>();
  const taskDeadlines = new Map<string, unknown>();
  for (const [name, node] of parser.named(root, "tasks")) {
    if (!isMap(node)) continue;
    const mode = node.get("mode");
    if (mode !== null && mode !== undefined) {
      taskModes.set(name, plain(mode));
      taskLines.set(name, lineOf(node, "mode"));
    }
    const deadlines = node.get("deadlines");
    if (deadlines !== null && deadlines !== undefined) taskDeadlines.set(name, deadlines);
  }
  return {
    file,
    local,
    installed,
    profiles: parser.refs(root.get("profiles"), "profiles", line, "a profile reference"),
    middleware: parser.items(root.get("middleware"), "middleware", lineOf(root, "middleware"), "app", same),
    envs,
    tasks,
    lines: new Map(root.keyLines),
    contracts: plain(root.get("contracts") ?? null),
    identity: plain(root.get("identity") ?? null),
    deadlines: root.get("deadlines") ?? null,
    taskDeadlines,
    mode: plain(root.get("mode") ?? null),
    state: root.get("state") ?? null,
    approvals: root.get("approvals") ?? null,
    envModes,
    envLines,
    taskModes,
    taskLines,
  };
}

/** A profile's content (`profile`, `plugins`, `middleware`), declared in `layer`. */
export function parseProfile(doc: unknown, file: string, layer: Layer, problems: Problems): Document {
  const parser = new Parser(file, problems);
  const root = parser.root(doc, PROFILE_KEYS, "a profile");
  const name = root.get("profile");
  if (name !== null && name !== undefined && typeof name !== "string") {
    parser.problem("profile", lineOf(root, "profile"), "bad_item", `a name, got ${shown(name)}`);
  }
  const [local, installed] = parser.plugins(root);
  const middleware = parser.items(root.get("middleware"), "middleware", lineOf(root, "middleware"), layer, same);
  return {
    file,
    local,
    installed,
    profiles: [],
    middleware,
    envs: new Map(),
    tasks: new Map(),
    lines: new Map(),
    contracts: null,
    identity: null,
    deadlines: null,
    taskDeadlines: new Map(),
    mode: null,
    state: null,
    approvals: null,
    envModes: new Map(),
    envLines: new Map(),
    taskModes: new Map(),
    taskLines: new Map(),
  };
}

/** A JSON value (a plugin's inline profile) as the parser reads YAML: maps and lists, no lines. */
export function fromJson(value: unknown): unknown {
  if (Array.isArray(value)) {
    const list = new YamlList();
    for (const item of value) list.push(fromJson(item));
    return list;
  }
  if (typeof value === "object" && value !== null && !(value instanceof Map)) {
    const map = new YamlMap();
    for (const [key, item] of Object.entries(value)) map.set(key, fromJson(item));
    return map;
  }
  return value;
}
