/**
 * The module-resolution hook of `selfref.ts`, run by Node's loader (`module.register`): an
 * import of `harnessweaver` (or `harnessweaver/…`) that Node cannot resolve from where it is
 * is resolved as this package's self-reference instead: the package that is loading the spec.
 */

/** A file inside this package: the parent of a self-reference (package.json `exports`). */
const INSIDE = import.meta.url;

interface Resolved {
  readonly url: string;
}

type Next = (specifier: string, context: Record<string, unknown>) => Promise<Resolved>;

export async function resolve(specifier: string, context: Record<string, unknown>, next: Next): Promise<Resolved> {
  try {
    return await next(specifier, context);
  } catch (error) {
    const missing = (error as { code?: unknown } | null)?.code === "ERR_MODULE_NOT_FOUND";
    if (missing && (specifier === "harnessweaver" || specifier.startsWith("harnessweaver/"))) {
      return await next(specifier, { ...context, parentURL: INSIDE });
    }
    throw error;
  }
}
