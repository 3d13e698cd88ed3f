/**
 * Plugins: a namespace and a version around a set of middleware (`namespace.name`, I1), and the
 * profiles the plugin ships (`profile://namespace.name` in a harness spec). The same thing as
 * Python's `hw.Plugin` (python/harnessweaver/plugin.py).
 *
 * A middleware that takes settings from a harness spec is a `Configurable`: its declaration, the
 * JSON Schema of its settings, and `build(settings)`, which the loader calls with the settings
 * validated against that schema (defaults applied). A plain `Middleware` takes no settings (as
 * a Python function does).
 */

import { isAbsolute } from "node:path";
import { fileURLToPath } from "node:url";

import type { HookPoint } from "./catalogue.js";
import { declare, type Declaration, type DeclarationOptions } from "./declaration.js";
import { DeclarationError } from "./errors.js";
import type { EventOf } from "./events.js";
import { frozenJson, isPlainObject, type JsonObject } from "./json.js";
import {
  isMiddleware,
  middleware,
  type Middleware,
  type MiddlewareFn,
  type MiddlewareObject,
  type MiddlewareOptions,
} from "./middleware.js";
import { shown } from "./shown.js";

/** The JSON Schema (2020-12) of a middleware's settings: always an object. */
export interface SettingsSchema {
  readonly type: "object";
  readonly [key: string]: unknown;
}

/** A middleware that a harness spec configures: built once per spec item from its settings. */
export interface Configurable<H extends HookPoint = HookPoint> {
  /** As declared; a spec item may override it the way a registration may (I10, I13). */
  readonly declaration: Declaration;
  /** The JSON Schema of its settings; unknown keys are refused unless it allows them. */
  readonly settings: SettingsSchema;
  /** The middleware for these settings (already validated, defaults applied). */
  build(settings: Readonly<Record<string, unknown>>): Middleware<H>;
}

const configurables = new WeakSet<object>();

/** Whether `value` was made by `configurable()`. */
export function isConfigurable(value: unknown): value is Configurable {
  return typeof value === "object" && value !== null && configurables.has(value);
}

/**
 * Declares a middleware that takes settings: `options` as for `middleware()` (the name is
 * required, since there is no function to take it from) plus `settings`, the JSON Schema of
 * its settings; `make(settings)` returns the function (or object) that handles events.
 * The declaration is validated now (I4 order), as `middleware()` validates it.
 */
export function configurable<const H extends HookPoint>(
  options: MiddlewareOptions<H> & { readonly name: string; readonly settings: SettingsSchema },
  make: (settings: Readonly<Record<string, unknown>>) => MiddlewareFn<EventOf<H>> | MiddlewareObject<EventOf<H>>,
): Configurable<H> {
  if (typeof make !== "function") throw new TypeError("configurable() needs a function that makes the middleware from its settings");
  const { settings, ...declared } = options;
  const schema = settingsSchema(settings, options.name);
  const declaration = declare(declared as unknown as DeclarationOptions<H>);
  const made: Configurable<H> = Object.freeze({
    declaration,
    settings: schema,
    build(values: Readonly<Record<string, unknown>>): Middleware<H> {
      return middleware(declared, make(Object.freeze({ ...values })));
    },
  });
  configurables.add(made);
  return made;
}

function settingsSchema(schema: unknown, name: string): SettingsSchema {
  if (!isPlainObject(schema) || schema["type"] !== "object") {
    throw new TypeError(`configurable ${shown(name)}: settings must be the JSON Schema of an object ({type: "object", ...}), got ${shown(schema)}`);
  }
  return Object.freeze(structuredClone(schema)) as SettingsSchema;
}

/** A plugin profile: the absolute path of its YAML file, or the profile itself. */
export type ProfileSource = string | JsonObject;

/** The errors a plugin definition can raise beyond the declaration rules (Python: `DeclarationError`). */
export class PluginError extends Error {
  readonly kind: "invalid_version" | "invalid_profile";
  readonly rule: "I1" | "plugins";

  constructor(kind: "invalid_version" | "invalid_profile", rule: "I1" | "plugins", message: string) {
    super(message);
    this.kind = kind;
    this.rule = rule;
    this.name = "PluginError";
  }
}

export interface PluginOptions {
  /** One identifier, such as `acme`: the middleware are `acme.<name>` (I1). */
  readonly namespace: string;
  readonly version: string;
  readonly middleware?: readonly (Middleware | Configurable)[];
  /** A profile name → a file URL (`new URL("./baseline.yaml", import.meta.url)`), an absolute path, or the profile itself. */
  readonly profiles?: Readonly<Record<string, URL | string | JsonObject>>;
}

const NAMESPACE = /^[A-Za-z_][A-Za-z0-9_]*$/;
const PROFILE_NAME = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/**
 * `new Plugin({namespace: "acme", version: "1.0.0", middleware: [...], profiles: {...}})`.
 * Names are unique within a plugin (I2). A plugin module (a local file or an npm package)
 * exports `plugin` (a `Plugin`) or `plugins` (an array of them).
 */
export class Plugin {
  readonly namespace: string;
  readonly version: string;
  readonly middleware: readonly (Middleware | Configurable)[];
  readonly profiles: Readonly<Record<string, ProfileSource>>;
  readonly #byName = new Map<string, Middleware | Configurable>();

  constructor(options: PluginOptions) {
    const raw = (isPlainObject(options) ? options : {}) as Readonly<Record<string, unknown>>;
    const namespace = raw["namespace"];
    if (typeof namespace !== "string" || !NAMESPACE.test(namespace)) {
      throw new DeclarationError(
        "invalid_name",
        `invalid plugin namespace ${shown(namespace)}: a namespace is one identifier, such as acme (I1)`,
      );
    }
    const version = raw["version"];
    if (typeof version !== "string" || version.trim() === "") {
      throw new PluginError("invalid_version", "I1", `plugin ${namespace} needs a version string, got ${shown(version)}`);
    }
    const items: unknown = raw["middleware"] ?? [];
    if (!Array.isArray(items)) throw new TypeError(`plugin ${namespace}: middleware must be an array, got ${shown(items)}`);
    for (const item of items as unknown[]) {
      if (!isMiddleware(item) && !isConfigurable(item)) {
        throw new TypeError(`plugin ${namespace}: ${shown(item)} is not middleware (use middleware() or configurable())`);
      }
      const name = item.declaration.name;
      if (this.#byName.has(name)) {
        throw new DeclarationError("duplicate_name", `plugin ${namespace} has two middleware named '${name}' (I2)`);
      }
      this.#byName.set(name, item);
    }
    this.namespace = namespace;
    this.version = version;
    this.middleware = Object.freeze([...(items as (Middleware | Configurable)[])]);
    this.profiles = profilesOf(namespace, raw["profiles"] ?? {});
    Object.freeze(this);
  }

  /** The full names, `namespace.name`, in declaration order. */
  names(): readonly string[] {
    return [...this.#byName.keys()].map((name) => `${this.namespace}.${name}`);
  }

  /** The middleware called `name` or `namespace.name`; throws a `RangeError` naming the known ones. */
  get(name: string): Middleware | Configurable {
    const prefix = `${this.namespace}.`;
    const found = this.#byName.get(name.startsWith(prefix) ? name.slice(prefix.length) : name);
    if (found === undefined) {
      throw new RangeError(`plugin ${this.namespace} has no middleware ${shown(name)}; it has ${this.names().join(", ")}`);
    }
    return found;
  }

  /** The profile called `name`: its file's absolute path, or the profile itself. */
  profile(name: string): ProfileSource {
    const found = Object.prototype.hasOwnProperty.call(this.profiles, name) ? this.profiles[name] : undefined;
    if (found === undefined) {
      const known = Object.keys(this.profiles).join(", ") || "none";
      throw new RangeError(`plugin ${this.namespace} has no profile ${shown(name)}; it has ${known}`);
    }
    return found;
  }
}

function profilesOf(namespace: string, given: unknown): Readonly<Record<string, ProfileSource>> {
  if (!isPlainObject(given)) {
    throw new PluginError(
      "invalid_profile",
      "plugins",
      `plugin ${namespace}: profiles must map a profile name to a file or an object, got ${shown(given)}`,
    );
  }
  const resolved: Record<string, ProfileSource> = {};
  for (const [name, source] of Object.entries(given)) {
    if (!PROFILE_NAME.test(name)) {
      throw new DeclarationError(
        "invalid_name",
        `plugin ${namespace}: invalid profile name ${shown(name)}: a profile name is an identifier, ` +
          "hyphens allowed, such as baseline or safe-tools (I1)",
      );
    }
    resolved[name] = profileSource(namespace, name, source);
  }
  return Object.freeze(resolved);
}

function profileSource(namespace: string, name: string, source: unknown): ProfileSource {
  if (source instanceof URL) {
    if (source.protocol !== "file:") {
      throw new PluginError("invalid_profile", "plugins", `plugin ${namespace}: profile ${shown(name)} must be a file URL, got ${shown(source.href)}`);
    }
    return fileURLToPath(source);
  }
  if (isPlainObject(source)) return frozenJson(source, `plugin ${namespace}: profile ${name}`) as JsonObject;
  if (typeof source !== "string") {
    throw new PluginError("invalid_profile", "plugins", `plugin ${namespace}: profile ${shown(name)} must be a path or an object, got ${shown(source)}`);
  }
  if (source.startsWith("file:")) return fileURLToPath(source);
  // A module has no reliable "file of the caller" in JavaScript: a relative path is refused
  // rather than guessed against the working directory.
  if (!isAbsolute(source)) {
    throw new PluginError(
      "invalid_profile",
      "plugins",
      `plugin ${namespace}: profile ${shown(name)} has the relative path ${shown(source)}; give ` +
        'new URL("./file.yaml", import.meta.url) or an absolute path',
    );
  }
  return source;
}
