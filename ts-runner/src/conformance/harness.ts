/**
 * Spec-level cases (`given.harness`, INTERPRETING.md §2): a harness spec loaded by the loader.
 *
 * The case's files are written under a fresh directory (the root); its scripted plugins are
 * made reachable the way the loader finds plugins: a module file at the dotted name under the
 * spec's folder for `local` (`a/b.mjs`), an npm package `root/node_modules/<name>/` for
 * `installed`. Each generated module takes the `Plugin` the runner made from a registry on
 * `globalThis` (the one module instance of `Plugin` is shared). Every scripted middleware is a
 * `Configurable` (one build per item, so that each says the name its item is registered under
 * in `ran`); one without `settings` allows none. Nothing stays behind: the files and the
 * registry entries of a case go with it.
 */

import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

import type { Envelope } from "../envelope.js";
import type { Event } from "../events.js";
import { isPlainObject } from "../json.js";
import type { MiddlewareFn, MiddlewareOptions } from "../middleware.js";
import { configurable, Plugin, type SettingsSchema } from "../plugin.js";
import type { Problem, SpecError } from "../spec/errors.js";
import { load, type Harness } from "../spec/loader.js";
import { renderJson } from "../spec/render.js";
import { parseYaml, plain } from "../spec/yaml.js";
import { BehaviourError, type Behaviours } from "./behaviours.js";
import { ScriptedStore } from "./state.js";

type Json = Readonly<Record<string, unknown>>;

const REGISTRY = Symbol.for("harnessweaver.conformance.plugins");
const registry = ((globalThis as Record<symbol, unknown>)[REGISTRY] ??= new Map<string, Plugin>()) as Map<string, Plugin>;
let counter = 0;

const NO_SETTINGS: SettingsSchema = Object.freeze({ type: "object", maxProperties: 0 });
const KEYS: Readonly<Record<string, string>> = { hooks: "hooks", fail_mode: "failMode", band: "band", timeout: "timeout", match: "match", mode: "mode" };

function moduleText(token: string): string {
  return `export const plugin = globalThis[Symbol.for("harnessweaver.conformance.plugins")].get(${JSON.stringify(token)});\n`;
}

/** The problems in the order of §6.1: file, line (none first), item, kind, rule. */
export function problemsJson(error: SpecError): Json[] {
  const key = (p: Problem) => [p.file, p.line === null ? 0 : 1, p.line ?? 0, p.item, p.kind, p.rule] as const;
  const compare = (a: Problem, b: Problem): number => {
    const [x, y] = [key(a), key(b)];
    for (let i = 0; i < x.length; i++) {
      const [u, v] = [x[i] as string | number, y[i] as string | number];
      if (u < v) return -1;
      if (u > v) return 1;
    }
    return 0;
  };
  return [...error.problems].sort(compare).map((problem) => problem.toJSON());
}

/** One `given.harness`: `open()`, `load()`, `document()`, then `close()`. */
export class HarnessCase {
  readonly root: string;
  readonly #tokens: string[] = [];
  /** Each built middleware's function → the name its item is registered under (after loading). */
  readonly #slots = new Map<MiddlewareFn, { name: string }>();

  constructor(
    readonly given: Json,
    readonly behaviours: Behaviours,
    readonly ran: () => string[] | undefined,
    /** How many emits the case has begun (the scripted store's `down` counts them). */
    readonly emitted: () => number = () => 0,
  ) {
    this.root = realpathSync(mkdtempSync(join(tmpdir(), "hwcase-")));
  }

  get spec(): string {
    return String(this.given["spec"] ?? "harness.yaml");
  }

  open(): this {
    const files = this.given["files"] ?? {};
    if (!isPlainObject(files)) throw new BehaviourError("harness.files must be an object");
    for (const [name, text] of Object.entries(files)) this.#write(name, String(text));
    const plugins = this.given["plugins"] ?? [];
    if (!Array.isArray(plugins)) throw new BehaviourError("harness.plugins must be a list");
    for (const plugin of plugins) this.#plugin(plugin as Json);
    return this;
  }

  close(): void {
    for (const token of this.#tokens) registry.delete(token);
    rmSync(this.root, { recursive: true, force: true });
  }

  /** The loader's harness of the case's spec, on the case's scripted store when it gives one (`state`, I33). */
  async load(): Promise<Harness> {
    const folders = (this.given["org_profiles"] ?? []) as unknown[];
    let scripted: ScriptedStore | undefined;
    if ("state" in this.given) {
      const state = this.given["state"];
      if (!isPlainObject(state)) throw new BehaviourError("harness.state must be an object");
      scripted = new ScriptedStore(state["down"] ?? [], this.emitted);
      await scripted.seed(state["seed"] ?? {});
    }
    const harness = await load(join(this.root, this.spec), {
      task: (this.given["task"] ?? null) as string | null,
      env: (this.given["env"] ?? null) as string | null,
      orgProfiles: folders.map((folder) => join(this.root, String(folder))),
      openState: scripted === undefined ? undefined : () => scripted,
    });
    for (const entry of harness.entries) {
      const slot = entry.middleware === null ? undefined : this.#slots.get(entry.middleware.call as MiddlewareFn);
      if (slot !== undefined) slot.name = entry.name;
    }
    return harness;
  }

  /** What `harnessweaver hooks --format json` prints for it, the spec as written. */
  document(harness: Harness): Json {
    const shown = JSON.parse(renderJson(harness)) as Record<string, unknown>;
    shown["spec"] = this.spec;
    return shown;
  }

  #write(name: string, text: string): void {
    const path = join(this.root, ...name.split("/"));
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text, "utf8");
  }

  #plugin(given: Json): void {
    const token = `hwcase_${process.pid}_${counter++}`;
    const namespace = String(given["namespace"]);
    const middleware = ((given["middleware"] ?? []) as Json[]).map((decl) => this.#middleware(namespace, decl));
    const profiles: Record<string, never> = {};
    for (const [name, text] of Object.entries((given["profiles"] ?? {}) as Json)) {
      profiles[name] = plain(parseYaml(String(text))) as never;
    }
    registry.set(token, new Plugin({ namespace, version: String(given["version"]), middleware, profiles }));
    this.#tokens.push(token);
    if ("local" in given) {
      const parts = String(given["local"]).split(".");
      this.#write([...dirname(this.spec).split("/").filter((p) => p !== "."), ...parts].join("/") + ".mjs", moduleText(token));
    } else {
      const name = String(given["installed"]);
      const folder = `node_modules/${name}`;
      this.#write(`${folder}/package.json`, JSON.stringify({ name, version: "1.0.0", type: "module", exports: "./index.js" }));
      this.#write(`${folder}/index.js`, moduleText(token));
    }
  }

  #middleware(namespace: string, decl: Json) {
    const use = `${namespace}.${String(decl["name"])}`;
    const does = decl["does"] ?? { return: "none" };
    if (!isPlainObject(does)) throw new BehaviourError(`does of ${use} must be an object`);
    const options: Record<string, unknown> = { name: decl["name"] };
    for (const [key, mapped] of Object.entries(KEYS)) if (key in decl) options[mapped] = decl[key];
    const settings = (decl["settings"] ?? NO_SETTINGS) as SettingsSchema;
    const { behaviours, ran } = this;
    const slots = this.#slots;
    return configurable({ ...(options as unknown as MiddlewareOptions), name: String(decl["name"]), settings }, () => {
      const slot = { name: use };
      const fn: MiddlewareFn = async function scripted(event: Event, envelope: Envelope, signal: AbortSignal) {
        ran()?.push(slot.name);
        return behaviours.perform(does, event, envelope, signal);
      };
      slots.set(fn, slot);
      return fn;
    });
  }
}
