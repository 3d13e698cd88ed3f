/**
 * `load`: a harness spec in, a `Harness` out, its bus's chains all resolved (Python:
 * `spec/loader.py`; docs/harness-spec.md).
 *
 * Loading reads the spec and its profiles, loads the plugins they list, and checks every item
 * of every layer, every env overlay and every task (selected or not) before building anything:
 * the layer rules through the core (`declareIn`), settings against each middleware's settings
 * schema, ids for uniqueness. One problem anywhere and nothing is built (`SpecError` lists them
 * all). Then the selected items are registered, in this order: profiles as listed, the app's
 * middleware, the env overlay, the task's guardrails (stages as written), its validation rules.
 *
 * `load` is async: plugins are ES modules, and `import()` is.
 */

import { dirname } from "node:path";
import { Approvals } from "../approvals/book.js";
import { ApprovalsConfig, ApprovalsConfigError, parseApprovals } from "../approvals/config.js";
import { HttpNotifier } from "../approvals/notify.js";
import { specIdentity as approvalsSpec } from "../approvals/record.js";
import { HookBus, type HookBusOptions } from "../bus.js";
import { HOOK_POINTS, type HookPoint } from "../catalogue.js";
import { contractMode, type ContractMode } from "../contracts.js";
import type { Declaration } from "../declaration.js";
import { HarnessweaverError } from "../errors.js";
import type { IdentityScheme } from "../identity.js";
import { CARRIED } from "../matcher.js";
import type { Middleware } from "../middleware.js";
import { stateSlot } from "../state/attach.js";
import { openStore, parseConfig, StateConfig, StateConfigError } from "../state/config.js";
import { MemoryStore } from "../state/memory.js";
import type { Store } from "../state/store.js";
import { StateView } from "../state/view.js";
import { checkIds, checkItem, overridesOf, type Checked } from "./check.js";
import { specDeadlines } from "./deadlines.js";
import { Problems, SpecError } from "./errors.js";
import { parseProfile, parseSpec, SPEC_KEYS, type Document, type Item, type Provenance } from "./model.js";
import { render, type Format, type Only } from "./render.js";
import { Context, findProfile, Plugins } from "./resolve.js";
import { shownValue as shown } from "./shown.js";
import { structureProblem } from "./schema.js";
import { lineOf, plain } from "./yaml.js";

const MODES = ["enforce", "audit"] as const;
/** The layers whose items a harness-wide mode never reaches (I25: baseline is the org's). */
const PROFILE_LAYERS: readonly string[] = ["org_profile", "plugin_profile", "profile_file"];

/**
 * One middleware of a loaded harness: its registered name, how it is shown (`label`), the
 * `use` it came from, its declaration as registered and where it was declared. `use` and
 * `source` are null for middleware registered on the bus by code.
 */
export class HarnessEntry {
  constructor(
    readonly name: string,
    readonly label: string,
    readonly use: string | null,
    readonly declaration: Declaration,
    readonly source: Provenance | null,
    readonly settings: Readonly<Record<string, unknown>> = {},
    /** The middleware registered for it (null for middleware registered by code). */
    readonly middleware: Middleware | null = null,
    /** The files its middleware read when the spec loaded, as written (I38). */
    readonly loads: readonly string[] = [],
  ) {
    Object.freeze(this);
  }

  get layer(): string | null {
    return this.source === null ? null : this.source.layer;
  }

  get file(): string | null {
    return this.source === null ? null : this.source.file;
  }

  get line(): number | null {
    return this.source === null ? null : this.source.line;
  }
}

/**
 * A harness: `bus` has every selected item registered; `entries` says where each came from.
 * `spec` is the path given to `load` (null for a harness built in code); `mode` the
 * harness-wide mode (I25), `contracts` the hook-contract mode the bus was built with.
 */
export class Harness {
  constructor(
    readonly bus: HookBus,
    readonly entries: readonly HarnessEntry[] = [],
    readonly spec: string | null = null,
    readonly task: string | null = null,
    readonly env: string | null = null,
    readonly contracts: ContractMode | null = null,
    readonly mode: string | null = null,
    /**
     * The state store of this harness's stateful middleware (the spec's `state:`; a
     * `MemoryStore` of its own when it names none: two harnesses never share counts by
     * accident). Close it with `close()`.
     */
    readonly store: Store = new MemoryStore(),
    /** The spec's checked `approvals:` (the defaults when it has none). */
    readonly approvalsConfig: ApprovalsConfig = new ApprovalsConfig(),
  ) {
    Object.freeze(this);
  }

  // A private field, not a property: the harness stays frozen, the book is made on first use.
  #approvals: Approvals | null = null;

  /**
   * The durable approvals of this harness (docs/approvals.md): an `Approvals` on `store` bound
   * to this spec's identity (`specIdentity`; "code" for a harness built in code), made on first
   * use, one per harness.
   */
  get approvals(): Approvals {
    if (this.#approvals === null) {
      const config = this.approvalsConfig;
      const notify = config.url !== null && config.secret !== null ? new HttpNotifier(config.url, config.secret) : null;
      this.#approvals = new Approvals(this.store, { spec: approvalsSpec(this), expiresAfter: config.expiresAfter, notify });
    }
    return this.#approvals;
  }

  /** Closes the state store (its connections, its file): the harness is done. */
  async close(): Promise<void> {
    await this.store.close();
  }

  /** The entry registered as `name`; a RangeError when there is none. */
  entry(name: string): HarnessEntry {
    const found = this.entries.find((entry) => entry.name === name);
    if (found === undefined) throw new RangeError(`no middleware '${name}' in this harness`);
    return found;
  }

  /**
   * Every hook point of the catalogue, in catalogue order, with its middleware in run order
   * (an empty array when none is attached). With `tool` (`model`), the hook points carrying it
   * show the chain a call of that tool (a request to that model) runs (I22).
   */
  chains(only: Only = {}): Map<HookPoint, readonly HarnessEntry[]> {
    const known = new Map(this.entries.map((entry) => [entry.name, entry]));
    const out = new Map<HookPoint, readonly HarnessEntry[]>();
    for (const hook of HOOK_POINTS) {
      const key = CARRIED[hook];
      const value = key === undefined ? null : (only[key] ?? null);
      const decls = value === null ? this.bus.chain(hook) : this.bus.chainFor(hook, value);
      out.set(hook, decls.map((decl) => known.get(decl.name) ?? new HarnessEntry(decl.name, decl.name, null, decl, null)));
    }
    return out;
  }

  /** The chains as `harnessweaver hooks` prints them: "text", "json" or "mermaid". */
  render(format: Format = "text", only: Only = {}): string {
    return render(this, format, only);
  }
}

export interface LoadOptions {
  /** The task whose guardrails and validation rules are added. */
  readonly task?: string | null | undefined;
  /** The environment overlay added. */
  readonly env?: string | null | undefined;
  /** The org-profile directories (default: `HARNESSWEAVER_ORG_PROFILES`, path-delimiter separated). */
  readonly orgProfiles?: readonly string[] | undefined;
  /** The hook-contract mode; wins over the spec's `contracts:`. */
  readonly contracts?: ContractMode | undefined;
  /**
   * Makes the harness's state store from the spec's checked `state:` (null when it has none)
   * instead of `openStore`: a host (a conformance runner, a worker pool) chooses the store or
   * wraps it; it is `harness.store`. Called once nothing else is wrong (Python's `open_state`).
   */
  readonly openState?: ((config: StateConfig | null) => Store | Promise<Store>) | undefined;
}

function choose(spec: Document, key: "envs" | "tasks", name: string | null, ctx: Context): readonly Item[] {
  const options = key === "envs" ? spec.envs : spec.tasks;
  if (name === null) return [];
  const found = options.get(name);
  if (found === undefined) {
    const what = key === "envs" ? "env" : "task";
    const have = options.size > 0 ? `the spec's ${key} are ${[...options.keys()].join(", ")}` : `the spec has no ${key}`;
    ctx.problems.add(spec.file, key, spec.lines.get(key) ?? null, what === "env" ? "unknown_env" : "unknown_task", `unknown ${what} ${shown(name)}: ${have}`);
    return [];
  }
  return found;
}

function specContracts(spec: Document, problems: Problems): ContractMode | null {
  const mode = spec.contracts;
  if (mode === null || mode === "warn" || mode === "strict") return mode;
  problems.add(spec.file, "contracts", spec.lines.get("contracts") ?? null, "invalid_contracts", `invalid contracts mode ${shown(mode)}: a contract mode is 'warn' or 'strict'`);
  return null;
}

function specIdentity(spec: Document, problems: Problems): IdentityScheme | undefined {
  try {
    return new HookBus({ identity: (spec.identity ?? undefined) as IdentityScheme | undefined }).identity;
  } catch (error) {
    if (!(error instanceof HarnessweaverError)) throw error;
    problems.core(spec.file, "identity", spec.lines.get("identity") ?? null, error);
    return undefined;
  }
}

/** I25: the selected task's `mode:`, else the selected env overlay's, else the spec's; every one written is checked. */
function harnessMode(spec: Document, env: string | null, task: string | null, problems: Problems): string | null {
  const written: [string, unknown, number | null][] = [["mode", spec.mode, spec.lines.get("mode") ?? null]];
  for (const [name, mode] of spec.envModes) written.push([`envs.${name}.mode`, mode, spec.envLines.get(name) ?? null]);
  for (const [name, mode] of spec.taskModes) written.push([`tasks.${name}.mode`, mode, spec.taskLines.get(name) ?? null]);
  for (const [where, mode, line] of written) {
    if (mode !== null && !(MODES as readonly unknown[]).includes(mode)) {
      problems.add(spec.file, where, line, "invalid_mode", `invalid mode ${shown(mode)}: mode is 'enforce' or 'audit'`);
    }
  }
  let chosen = env !== null && spec.envModes.has(env) ? spec.envModes.get(env) : spec.mode;
  if (task !== null && spec.taskModes.has(task)) chosen = spec.taskModes.get(task);
  return (MODES as readonly unknown[]).includes(chosen) ? (chosen as string) : null;
}

/** An item's keys, with the harness-wide `mode` where it gives none and is not a profile's (I25). */
function itemKeys(item: Item, mode: string | null): Readonly<Record<string, unknown>> {
  if (mode === null || "mode" in item.keys || PROFILE_LAYERS.includes(item.source.layer)) return item.keys;
  return { ...item.keys, mode };
}

/** The harness's store, the store calls' timeout and the task: what each stateful item's view is made of. */
type StateOf = readonly [store: Store, timeout: number, task: string | null];

/**
 * The bus with every chosen item registered; each stateful one is given its view of the
 * harness's store under the layer and the name it is registered with and its fail mode as
 * registered.
 */
function register(
  chosen: readonly (readonly [Checked, Middleware])[],
  options: HookBusOptions,
  mode: string | null,
  state: StateOf | null,
): [HookBus, HarnessEntry[]] {
  const bus = new HookBus(options);
  const entries: HarnessEntry[] = [];
  for (const [checked, middleware] of chosen) {
    const item = checked.item;
    const overrides = overridesOf(itemKeys(item, mode), String(item.id));
    const decl = bus.register(middleware, { ...overrides, layer: item.source.layer });
    const slot = stateSlot(middleware);
    if (slot !== null && state !== null) {
      const [store, timeout, task] = state;
      slot.attachState(new StateView(store, { layer: item.source.layer, item: decl.name, failMode: decl.failMode, timeout, task }));
    }
    entries.push(
      new HarnessEntry(decl.name, item.label, item.use, decl, item.source, plain(item.settings) as Record<string, unknown>, middleware, checked.loads),
    );
  }
  return [bus, entries];
}

/** Contract B: a document the parser found nothing wrong with must fit harness.schema.json too. */
function checkStructure(content: unknown, file: string, what: "spec" | "profile", problems: Problems): void {
  if (problems.has(file)) return;
  const problem = structureProblem(plain(content), what);
  if (problem !== null) problems.add(file, "", null, "bad_item", problem);
}

type Read = [content: unknown, file: string, what: "spec" | "profile"];

/** The spec's `state:` checked; a problem names the key and the variable, never a value (a URL may hold a password). */
function specState(spec: Document, base: string, problems: Problems): StateConfig | null {
  const node = spec.state;
  try {
    return parseConfig(plain(node), { base });
  } catch (error) {
    if (!(error instanceof StateConfigError)) throw error;
    for (const [key, message] of error.problems) {
      const line = (key ? lineOf(node, key) : null) ?? spec.lines.get("state") ?? null;
      problems.add(spec.file, key ? `state.${key}` : "state", line, "invalid_state", message);
    }
    return null;
  }
}

/** The spec's `approvals:` checked; a problem names the key and the variable, never a value (a URL may hold a token; the secret is one). */
function specApprovals(spec: Document, problems: Problems): ApprovalsConfig | null {
  const node = spec.approvals;
  try {
    return parseApprovals(plain(node));
  } catch (error) {
    if (!(error instanceof ApprovalsConfigError)) throw error;
    for (const [key, message] of error.problems) {
      const dot = key.indexOf(".");
      const [head, rest] = dot < 0 ? [key, ""] : [key.slice(0, dot), key.slice(dot + 1)];
      let line = head ? lineOf(node, head) : null;
      if (rest && head) {
        const inner = node instanceof Map ? (node as Map<unknown, unknown>).get(head) : undefined;
        if (inner instanceof Map) line = lineOf(inner, rest);
      }
      problems.add(spec.file, key ? `approvals.${key}` : "approvals", line ?? spec.lines.get("approvals") ?? null, "invalid_approvals", message);
    }
    return null;
  }
}

async function openState(config: StateConfig | null, spec: Document, problems: Problems, open: LoadOptions["openState"]): Promise<Store | null> {
  try {
    return await (open ?? openStore)(config);
  } catch (error) {
    // A driver not installed (ioredis, pg) or no node:sqlite: the message names the package.
    if (!(error instanceof Error) || open !== undefined) throw error;
    problems.add(spec.file, "state.backend", spec.lines.get("state") ?? null, "invalid_state", error.message);
    return null;
  }
}

async function readProfiles(spec: Document, ctx: Context, plugins: Plugins, documents: Read[], folders: Map<string, string>): Promise<Document[]> {
  const docs: Document[] = [];
  for (const ref of spec.profiles) {
    const found = findProfile(ref, ctx, plugins);
    if (found === null) continue;
    const doc = parseProfile(found.content, found.file, found.layer, ctx.problems);
    documents.push([found.content, found.file, "profile"]);
    folders.set(found.file, found.base);
    await plugins.load(doc, found.base);
    docs.push(doc);
  }
  return docs;
}

/**
 * Loads a harness spec (`harness.yaml`) with one task and one env overlay, or none. Rejects
 * with a `SpecError` listing every problem when anything is wrong; nothing is built then.
 */
export async function load(path: string, options: LoadOptions = {}): Promise<Harness> {
  const given = contractMode(options.contracts); // refused before anything is read
  const task = options.task ?? null;
  const env = options.env ?? null;
  const problems = new Problems();
  const ctx = Context.of(path, options.orgProfiles, problems);
  const file = ctx.display(path);
  const [ok, content] = ctx.read(path, file, SPEC_KEYS);
  if (!ok) throw problems.error();
  const spec = parseSpec(content, file, problems);
  const ownContracts = specContracts(spec, problems); // checked even when the argument wins
  const contracts = given ?? ownContracts;
  const deadlines = specDeadlines(spec, task, problems); // I26: the harness's and the task's
  const mode = harnessMode(spec, env, task, problems);
  const identity = specIdentity(spec, problems);
  const state = specState(spec, dirname(path), problems);
  const approvals = specApprovals(spec, problems);
  const plugins = new Plugins(problems);
  await plugins.load(spec, ctx.root);
  const documents: Read[] = [[content, file, "spec"]];
  // The folder of each file declaring items: an item's file paths are relative to it (I38).
  const folders = new Map<string, string>([[file, ctx.root]]);
  const profiles = await readProfiles(spec, ctx, plugins, documents, folders);
  const selectedEnv = choose(spec, "envs", env, ctx);
  const selectedTask = choose(spec, "tasks", task, ctx);
  const base = [...profiles.flatMap((doc) => doc.middleware), ...spec.middleware];
  const everything = [...base, ...[...spec.envs.values()].flat(), ...[...spec.tasks.values()].flat()];
  const checked = new Map(everything.map((item) => [item, checkItem(item, plugins, problems, folders.get(item.source.file) ?? ctx.root)]));
  checkIds(base, spec.envs, spec.tasks, problems);
  for (const [found, shown, what] of documents) checkStructure(found, shown, what, problems);
  if (problems.size > 0 || approvals === null) throw problems.error();
  const chosen: [Checked, Middleware][] = [];
  for (const item of [...base, ...selectedEnv, ...selectedTask]) {
    const found = checked.get(item);
    if (found === null || found === undefined || !item.enabled) continue;
    chosen.push([found, found.built]);
  }
  const store = state === null ? null : await openState(spec.state === null ? null : state, spec, problems, options.openState); // once nothing else is wrong
  if (problems.size > 0 || store === null || state === null) throw problems.error();
  let bus: HookBus;
  let entries: HarnessEntry[];
  try {
    const busOptions: HookBusOptions = {
      contracts: contracts ?? undefined,
      deadlines: deadlines as HookBusOptions["deadlines"],
      identity,
    };
    [bus, entries] = register(chosen, busOptions, mode, [store, state.timeout, task]);
  } catch (error) {
    // Every check ran already: this would be a bug of the core or the loader.
    if (!(error instanceof HarnessweaverError)) throw error;
    problems.core(spec.file, "", null, error);
    throw problems.error();
  }
  return new Harness(bus, entries, path, task, env, contracts ?? null, mode, store, approvals);
}

export { SpecError };
