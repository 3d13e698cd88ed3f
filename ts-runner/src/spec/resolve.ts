/**
 * Finding what a spec names: plugins (local modules, npm packages) and profiles (Python:
 * `spec/resolve.py`).
 *
 * Plugins listed anywhere (the spec or any profile) are available to every item; the built-in
 * plugin, namespace `harnessweaver`, always is. A `local` plugin is a module file: a dotted
 * name `a.b` is `<folder>/a/b.mjs`, `a/b.js`, `a/b/index.mjs` or `a/b/index.js` (the first
 * found; the folder is that of the file listing it), one starting with `./` or `../` a path.
 * An `installed` plugin `NAME` is the npm package `NAME`, resolved from that folder as an
 * `import` in a module there would resolve it (node_modules upwards, then its `exports`
 * (`import`, `node`, `default`), `main` or `index.js`); it must give namespace `NAME`.
 * Profiles are `org://path` (in the org-profile directories), `profile://namespace.name` (a
 * plugin's), `profile://name` (a built-in one) or a file path relative to the spec.
 */

import { importPlugin } from "./selfref.js";
import { closeSync, existsSync, openSync, readFileSync, readSync, statSync } from "node:fs";
import { delimiter, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { pathToFileURL } from "node:url";

import { isPlainObject } from "../json.js";
import type { Layer } from "../layer.js";
import type { Middleware } from "../middleware.js";
import { Plugin, type Configurable } from "../plugin.js";
import { BUILTIN_PROFILES, builtinPlugin } from "./builtins.js";
import { closeMatches } from "./close.js";
import { described } from "./importfail.js";
import type { Problems, SpecKind } from "./errors.js";
import { MAX_BYTES } from "./limits.js";
import { fromJson, PROFILE_KEYS, type Document, type Ref } from "./model.js";
import { notUtf8 } from "./utf8.js";
import { parseYaml, YamlProblem } from "./yaml.js";

export const BUILTIN_NAMESPACE = "harnessweaver";
export const ORG_PROFILES_ENV = "HARNESSWEAVER_ORG_PROFILES";
const ORG_PATH = /^[A-Za-z0-9_][A-Za-z0-9_.-]*(\/[A-Za-z0-9_][A-Za-z0-9_.-]*)*$/;
const PLUGIN_PROFILE = /^([A-Za-z_][A-Za-z0-9_]*)\.([A-Za-z_][A-Za-z0-9_-]*)$/;
const DOTTED = /^[A-Za-z_$][A-Za-z0-9_$-]*(\.[A-Za-z_$][A-Za-z0-9_$-]*)*$/;

const REASONS: Readonly<Record<string, string>> = {
  ENOENT: "No such file or directory",
  EACCES: "Permission denied",
  EISDIR: "Is a directory",
  ENOTDIR: "Not a directory",
  ELOOP: "Too many levels of symbolic links",
};

/** One load: the spec's folder, the org-profile directories, the problems found. */
export class Context {
  constructor(
    readonly root: string,
    readonly orgDirs: readonly string[],
    readonly problems: Problems,
  ) {}

  static of(spec: string, orgDirs: readonly string[] | undefined, problems: Problems): Context {
    let dirs = orgDirs;
    if (dirs === undefined) dirs = (process.env[ORG_PROFILES_ENV] ?? "").split(delimiter).filter((entry) => entry.trim());
    return new Context(dirname(resolve(spec)), dirs.map((entry) => resolve(entry)), problems);
  }

  /** `path` relative to the spec's folder when it is inside it, else absolute. */
  display(path: string): string {
    const full = resolve(path);
    const inside = relative(this.root, full);
    if (inside && !inside.startsWith("..") && !isAbsolute(inside)) return inside.split(sep).join("/");
    return full.split(sep).join("/");
  }

  /**
   * The YAML content of a file: `[true, value]`, or `[false, null]` and a problem. Nothing of
   * a file that is not known to be a spec is quoted; a file of more than `MAX_BYTES` is not parsed.
   */
  read(path: string, file: string, keys: readonly string[]): [boolean, unknown] {
    let data: Buffer;
    try {
      const fd = openSync(path, "r");
      try {
        if (statSync(path).isDirectory()) throw Object.assign(new Error("is a directory"), { code: "EISDIR" });
        const buffer = Buffer.alloc(MAX_BYTES + 1);
        let size = 0;
        for (;;) {
          const got = readSync(fd, buffer, size, buffer.length - size, null);
          if (got === 0) break;
          size += got;
          if (size === buffer.length) break;
        }
        data = buffer.subarray(0, size);
      } finally {
        closeSync(fd);
      }
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      const reason = typeof code === "string" ? (REASONS[code] ?? code) : error instanceof Error ? error.name : "error";
      this.problems.add(file, "", null, "unreadable_yaml", `cannot read the file: ${reason}`);
      return [false, null];
    }
    if (data.length > MAX_BYTES) {
      this.problems.add(file, "", null, "too_large", `the file is larger than ${MAX_BYTES.toLocaleString("en-US")} bytes`);
      return [false, null];
    }
    const bad = notUtf8(data);
    if (bad >= 0) {
      let line = 1;
      for (let i = 0; i < bad; i++) if (data[i] === 0x0a) line += 1;
      this.problems.add(file, "", line, "unreadable_yaml", "cannot read the file: not UTF-8 text");
      return [false, null];
    }
    try {
      return [true, parseYaml(new TextDecoder("utf-8").decode(data), keys)];
    } catch (error) {
      if (!(error instanceof YamlProblem)) throw error;
      const message = error.kind !== "unreadable_yaml" ? error.shown : `not YAML: ${error.shown}`;
      this.problems.add(file, "", error.line, error.kind, message);
      return [false, null];
    }
  }
}

/** The module file a `local` entry names, relative to `base`, or null. */
function localFile(name: string, base: string): string | null {
  if (name.startsWith("./") || name.startsWith("../")) {
    const path = resolve(base, name);
    return existsSync(path) && statSync(path).isFile() ? path : null;
  }
  if (!DOTTED.test(name)) return null;
  const stem = join(base, ...name.split("."));
  for (const candidate of [`${stem}.mjs`, `${stem}.js`, join(stem, "index.mjs"), join(stem, "index.js")]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return null;
}

/** The entry file of `exports` for an ESM import of the package root, or undefined. */
function exported(exports: unknown): string | undefined {
  if (typeof exports === "string") return exports;
  if (Array.isArray(exports)) {
    for (const option of exports) {
      const found = exported(option);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (!isPlainObject(exports)) return undefined;
  const keys = Object.keys(exports);
  if (keys.some((key) => key.startsWith("."))) return exported(exports["."]);
  for (const condition of ["import", "node", "default"]) {
    if (condition in exports) {
      const found = exported(exports[condition]);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

/** The folder of npm package `name` seen from `base` (node_modules upwards), or null. */
function packageFolder(name: string, base: string): string | null {
  let here = resolve(base);
  for (;;) {
    const candidate = join(here, "node_modules", name);
    if (existsSync(join(candidate, "package.json"))) return candidate;
    const up = dirname(here);
    if (up === here) return null;
    here = up;
  }
}

/** The file an ESM `import NAME` in a module of `base` loads; throws when the package has none. */
function packageEntry(folder: string): string {
  const manifest = JSON.parse(readFileSync(join(folder, "package.json"), "utf8")) as Record<string, unknown>;
  const entry = "exports" in manifest ? exported(manifest["exports"]) : (typeof manifest["main"] === "string" ? manifest["main"] : "index.js");
  if (entry === undefined) throw new Error(`package ${folder} exports nothing an import can load`);
  return resolve(folder, entry);
}

type Entry = readonly [Plugin, string];

/** The plugins loaded so far, by namespace. */
export class Plugins {
  readonly loaded = new Map<string, Entry>([[BUILTIN_NAMESPACE, [builtinPlugin, "built in"]]]);

  constructor(readonly problems: Problems) {}

  /** The plugins a document lists: its local modules, then its installed packages. */
  async load(doc: Document, base: string): Promise<void> {
    for (const ref of doc.local) await this.#local(ref, base);
    for (const ref of doc.installed) await this.#installed(ref, base);
  }

  #problem(ref: Ref, kind: SpecKind, message: string): void {
    this.problems.add(ref.file, ref.where, ref.line, kind, message);
  }

  #add(plugin: unknown, ref: Ref, origin: string): void {
    if (!(plugin instanceof Plugin)) {
      this.#problem(ref, "plugin_import_error", `${origin} gives ${describeValue(plugin)}, not a Plugin`);
      return;
    }
    const known = this.loaded.get(plugin.namespace);
    if (known === undefined) this.loaded.set(plugin.namespace, [plugin, origin]);
    else if (known[0] !== plugin) {
      this.#problem(ref, "duplicate_plugin", `${origin} gives plugin namespace '${plugin.namespace}', which ${known[1]} already gives`);
    }
  }

  async #local(ref: Ref, base: string): Promise<void> {
    const file = localFile(ref.value, base);
    if (file === null) {
      const message = `cannot import ${ref.value}: no module file for it under ${base.split(sep).join("/")} (a dotted name a.b is a/b.mjs, a/b.js, a/b/index.mjs or a/b/index.js; a path starts with ./ or ../)`;
      this.#problem(ref, "plugin_import_error", message);
      return;
    }
    let module: Record<string, unknown>;
    try {
      module = await importPlugin(file); // its `import … from "harnessweaver"` gets this package
    } catch (error) {
      this.#problem(ref, "plugin_import_error", `cannot import ${ref.value}: ${described(error)}`);
      return;
    }
    const origin = `module ${ref.value}`;
    if (module["plugin"] instanceof Plugin) this.#add(module["plugin"], ref, origin);
    else if (Array.isArray(module["plugins"])) for (const plugin of module["plugins"]) this.#add(plugin, ref, origin);
    else this.#problem(ref, "plugin_import_error", `module ${ref.value} exports no \`plugin\` (a Plugin) or \`plugins\` (an array)`);
  }

  async #installed(ref: Ref, base: string): Promise<void> {
    const folder = packageFolder(ref.value, base);
    if (folder === null) {
      this.#problem(
        ref,
        "unknown_plugin",
        `no installed plugin '${ref.value}': no npm package of that name in a node_modules folder from ${base.split(sep).join("/")} upwards`,
      );
      return;
    }
    const origin = `package ${ref.value}`;
    let module: Record<string, unknown>;
    try {
      module = (await import(pathToFileURL(packageEntry(folder)).href)) as Record<string, unknown>;
    } catch (error) {
      this.#problem(ref, "plugin_import_error", `${origin}: ${described(error)}`);
      return;
    }
    const offered = Array.isArray(module["plugins"]) ? (module["plugins"] as unknown[]) : [module["plugin"]];
    const plugin = offered.find((found) => found instanceof Plugin && found.namespace === ref.value) ?? offered[0];
    if (plugin instanceof Plugin && plugin.namespace !== ref.value) {
      this.#problem(ref, "plugin_import_error", `${origin} gives plugin namespace '${plugin.namespace}', not '${ref.value}'`);
      return;
    }
    this.#add(plugin, ref, origin);
  }

  /** The middleware `use` names, or null and why not. */
  find(use: string): [Middleware | Configurable | null, string] {
    const namespace = use.split(".")[0] ?? "";
    const loaded = this.loaded.get(namespace);
    if (loaded !== undefined && loaded[0].names().includes(use)) return [loaded[0].get(use), ""];
    const everything = [...this.loaded.values()].flatMap(([plugin]) => plugin.names());
    const close = closeMatches(use, everything, 2, 0.8);
    const hint = close.length > 0 ? `; did you mean ${close.join(" or ")}?` : "";
    const why =
      loaded === undefined
        ? `no plugin '${namespace}' is loaded (the plugins are ${[...this.loaded.keys()].sort().join(", ")})`
        : `plugin ${namespace} has ${loaded[0].names().join(", ")}`;
    return [null, `unknown middleware '${use}': ${why}${hint}`];
  }
}

function describeValue(value: unknown): string {
  if (value === undefined) return "undefined";
  if (value === null) return "null";
  if (typeof value === "object") return `an object (${(value as object).constructor?.name ?? "Object"})`;
  return `${typeof value} ${String(value)}`;
}

/** A profile found: the layer it declares in, its file as shown, its folder, its content. */
export interface Profile {
  readonly layer: Layer;
  readonly file: string;
  readonly base: string;
  readonly content: unknown;
}

/** The built-in profiles, by name, in name order. */
export function builtinProfiles(): ReadonlyMap<string, string> {
  return new Map(
    Object.entries(BUILTIN_PROFILES)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([name, path]) => [name, path]),
  );
}

/** The profile `ref` names, read; null (and a problem) when it cannot be. */
export function findProfile(ref: Ref, ctx: Context, plugins: Plugins): Profile | null {
  const text = ref.value;
  if (text.startsWith("org://")) return org(ref, text.slice("org://".length), ctx);
  if (text.startsWith("profile://")) {
    const name = text.slice("profile://".length);
    return name.includes(".") ? pluginProfile(ref, name, ctx, plugins) : builtin(ref, name, ctx);
  }
  if (text.includes("://")) return unknown(ref, ctx, "a profile is org://…, profile://… or a file path");
  const path = resolve(ctx.root, text);
  if (!(existsSync(path) && statSync(path).isFile())) {
    return unknown(ref, ctx, `no profile file '${text}' (looked for ${path.split(sep).join("/")})`);
  }
  return read("profile_file", path, ctx);
}

function unknown(ref: Ref, ctx: Context, why: string): null {
  ctx.problems.add(ref.file, ref.where, ref.line, "unknown_profile", `${ref.value}: ${why}`);
  return null;
}

function read(layer: Layer, path: string, ctx: Context): Profile | null {
  const file = ctx.display(path);
  const [ok, content] = ctx.read(path, file, PROFILE_KEYS);
  return ok ? { layer, file, base: dirname(resolve(path)), content } : null;
}

function org(ref: Ref, path: string, ctx: Context): Profile | null {
  if (!ORG_PATH.test(path) || path.split("/").includes("..")) {
    return unknown(ref, ctx, "an org profile is org://<dir>/<name>, such as org://acme/base");
  }
  if (ctx.orgDirs.length === 0) {
    return unknown(
      ref,
      ctx,
      "no org-profile directories are set: pass orgProfiles: [...] to load, " +
        `--org-profiles to harnessweaver hooks, or set ${ORG_PROFILES_ENV}`,
    );
  }
  for (const folder of ctx.orgDirs) {
    const candidate = join(folder, `${path}.yaml`);
    if (existsSync(candidate) && statSync(candidate).isFile()) return read("org_profile", candidate, ctx);
  }
  const looked = ctx.orgDirs.map((folder) => folder.split(sep).join("/")).join(", ");
  return unknown(ref, ctx, `no ${path}.yaml in the org-profile directories (${looked})`);
}

function pluginProfile(ref: Ref, name: string, ctx: Context, plugins: Plugins): Profile | null {
  const parts = PLUGIN_PROFILE.exec(name);
  if (parts === null) return unknown(ref, ctx, "a plugin profile is profile://<namespace>.<profile>");
  const [, namespace = "", profile = ""] = parts;
  const loaded = plugins.loaded.get(namespace);
  if (loaded === undefined) return unknown(ref, ctx, `no plugin '${namespace}' is loaded (list it under plugins:)`);
  const profiles = loaded[0].profiles;
  const source = Object.prototype.hasOwnProperty.call(profiles, profile) ? profiles[profile] : undefined;
  if (source === undefined) {
    const names = Object.keys(profiles).join(", ") || "none";
    return unknown(ref, ctx, `plugin ${namespace} has no profile '${profile}' (it has ${names})`);
  }
  if (typeof source !== "string") return { layer: "plugin_profile", file: ref.value, base: ctx.root, content: fromJson(source) };
  return read("plugin_profile", source, ctx);
}

function builtin(ref: Ref, name: string, ctx: Context): Profile | null {
  const found = builtinProfiles();
  const path = found.get(name);
  if (path === undefined) {
    const close = closeMatches(name, [...found.keys()], 1);
    const hint = close.length > 0 ? `; did you mean profile://${close[0]}?` : "";
    const names = [...found.keys()].map((known) => `profile://${known}`).join(", ");
    return unknown(ref, ctx, `no built-in profile '${name}' (there are ${names})${hint}`);
  }
  const file = `harnessweaver/profiles/${name}.yaml`;
  const [ok, content] = ctx.read(path, file, PROFILE_KEYS);
  return ok ? { layer: "builtin_profile", file, base: ctx.root, content } : null;
}
