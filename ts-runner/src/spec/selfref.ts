/**
 * A plugin module a spec loads imports `harnessweaver` by name. Where no `node_modules` above it
 * holds the package (a clone's `examples/`, a plugin folder next to a CLI installed elsewhere),
 * Node cannot resolve that name and the import fails. Such a module is imported again with that
 * name resolved to the package loading the spec, by Node's self-reference of a package through
 * its own name: never a second copy, whose `Plugin` class would not be this one's (`instanceof`
 * would refuse its plugin). A module whose imports Node resolves is imported as it always was.
 *
 * The resolution hook (`selfhook.ts`) is registered the first time it is needed, and only then
 * (`module.register`, Node 20.6 or later; before it, the import fails as it always did): with a
 * hook registered, Node resolves off-thread, and an error's `code` does not come back.
 */

import * as nodeModule from "node:module";
import { pathToFileURL } from "node:url";

let registered = false;

/** Whether `error` is Node's failure to find the package `harnessweaver` itself. */
function missesThisPackage(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return code === "ERR_MODULE_NOT_FOUND" && typeof message === "string" && message.includes("package 'harnessweaver'");
}

/** Register the hook (once); whether it is registered. */
function resolveSelf(): boolean {
  if (!registered) {
    const register = (nodeModule as { register?: (specifier: string, parentURL: string) => void }).register;
    if (typeof register !== "function") return false;
    register("./selfhook.js", import.meta.url);
    registered = true;
  }
  return true;
}

/** The module of a local plugin file; its `import … from "harnessweaver"` gets this package. */
export async function importPlugin(file: string): Promise<Record<string, unknown>> {
  const url = pathToFileURL(file).href;
  try {
    return (await import(url)) as Record<string, unknown>;
  } catch (error) {
    if (!missesThisPackage(error) || !resolveSelf()) throw error;
    // A URL of its own: the failed import of `url` stays failed in Node's module map.
    return (await import(`${url}?harnessweaver=self`)) as Record<string, unknown>;
  }
}
