/**
 * Files an item's middleware reads when the spec loads (a built-in's policies, I38; Python:
 * `spec/files.py`).
 *
 * The loader builds each item inside `loadingIn(folder, build)`, `folder` being the folder of
 * the file that declares it: a middleware resolves its relative paths against `folderOf()`,
 * reads and compiles them once, there, and says which files it read with `readFiles(...)`
 * (shown by `harnessweaver hooks` under `loads`). What it finds wrong it throws as a
 * `LoadProblem`, which the loader reports as a problem of the item's key, its message starting
 * `<file>:<line>: `. Built in code (no loader), `folderOf()` is null.
 */

/**
 * What is wrong with a file an item loads (or with a setting that says how to load it).
 * `key` is the item's setting at fault (its line is the problem's line); `file` and `line`
 * start the message (the file as the spec writes it, the 1-based line in it); null for `file`
 * means the declaring file itself at `key`'s line. `kind` is the problem's kind, whose rule
 * closes the message.
 */
export class LoadProblem extends Error {
  override readonly name = "LoadProblem";

  constructor(
    readonly kind: "invalid_policy",
    readonly key: string,
    readonly problem: string,
    readonly file: string | null = null,
    readonly line: number = 1,
  ) {
    super(problem);
  }
}

interface Loading {
  readonly folder: string;
  readonly files: string[];
}

let current: Loading | null = null;

/** Runs `build` with `folder` as the declaring file's folder; its result and the files it read. */
export function loadingIn<T>(folder: string, build: () => T): [T, readonly string[]] {
  const outer = current;
  const loading: Loading = { folder, files: [] };
  current = loading;
  try {
    return [build(), Object.freeze([...loading.files])];
  } finally {
    current = outer;
  }
}

/** The declaring file's folder while the loader builds an item; null in code. */
export function folderOf(): string | null {
  return current === null ? null : current.folder;
}

/** Says which files (as the spec writes them) the item being built read. */
export function readFiles(files: readonly string[]): void {
  current?.files.push(...files);
}
