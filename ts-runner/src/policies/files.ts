/**
 * The files of a `harnessweaver.cedar` item: a policy, schema or entity file read as UTF-8 text
 * within the spec's size limit, and a JSON file parsed, each problem a `CedarLoadError` at the
 * line Python's implementation names.
 */

import { closeSync, openSync, readSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";

import { MAX_BYTES } from "../spec/limits.js";
import { notUtf8 } from "../spec/utf8.js";
import { CedarLoadError } from "./errors.js";

/** One policy file's text and the path the spec writes for it. */
export interface PolicySource {
  readonly file: string;
  readonly text: string;
}

/** The 1-based line of offset `at` in `text`. */
function lineAt(text: string, at: number): number {
  let line = 1;
  for (let i = 0; i < at && i < text.length; i++) if (text.charCodeAt(i) === 10) line += 1;
  return line;
}

/** `text` parsed as JSON; a `CedarLoadError` at the line of the fault, as Python's `json` finds it. */
export function jsonOf(text: string, file: string, key: string, what: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new CedarLoadError(key, `the ${what} is not JSON`, file, lineAt(text, jsonFault(text)));
  }
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?/y;

/**
 * Where Python's `json.loads` stops on `text` (its `JSONDecodeError.pos`), so that both
 * implementations name the same line: V8's messages do not always give a position, and give
 * another one for a bad literal (its second character, where Python names the value's start).
 */
export function jsonFault(text: string): number {
  let i = 0;
  const blank = () => {
    while (i < text.length && " \t\n\r".includes(text[i] ?? "")) i += 1;
  };
  const stop = (at: number): never => {
    throw new RangeError(String(at));
  };
  const string = () => {
    const start = i;
    i += 1;
    for (;;) {
      if (i >= text.length) stop(start);
      const ch = text.charCodeAt(i);
      if (ch === 0x22) break;
      if (ch < 0x20) stop(i);
      if (ch === 0x5c) {
        const next = text[i + 1] ?? "";
        if (next === "u" ? !/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6)) : !'"\\/bfnrt'.includes(next) || next === "") stop(i);
        i += next === "u" ? 6 : 2;
        continue;
      }
      i += 1;
    }
    i += 1;
  };
  const value = (depth: number): void => {
    const ch = text[i];
    if (depth > 10_000) stop(i);
    if (ch === '"') return string();
    if (ch === "{" || ch === "[") {
      const close = ch === "{" ? "}" : "]";
      i += 1;
      blank();
      if (text[i] === close) {
        i += 1;
        return;
      }
      for (;;) {
        if (ch === "{") {
          if (text[i] !== '"') stop(i);
          string();
          blank();
          if (text[i] !== ":") stop(i);
          i += 1;
          blank();
        }
        value(depth + 1);
        blank();
        if (text[i] === close) {
          i += 1;
          return;
        }
        if (text[i] !== ",") stop(i);
        i += 1;
        blank();
      }
    }
    for (const word of ["null", "true", "false", "NaN", "Infinity", "-Infinity"]) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return;
      }
    }
    NUMBER.lastIndex = i;
    if (!NUMBER.test(text)) stop(i);
    i = NUMBER.lastIndex;
  };
  try {
    blank();
    value(0);
    blank();
    return i < text.length ? i : text.length;
  } catch (error) {
    if (error instanceof RangeError && /^\d+$/.test(error.message)) return Number(error.message);
    throw error;
  }
}

/** The file `written` (relative to `folder` unless absolute), read as UTF-8 text. */
export function readPolicyFile(folder: string, written: string, key: string): PolicySource {
  const path = isAbsolute(written) ? written : resolve(folder, written);
  let data: Buffer;
  try {
    const fd = openSync(path, "r");
    try {
      const buffer = Buffer.alloc(MAX_BYTES + 1);
      let size = 0;
      for (;;) {
        const got = readSync(fd, buffer, size, buffer.length - size, null);
        if (got === 0 || (size += got) === buffer.length) break;
      }
      data = buffer.subarray(0, size);
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new CedarLoadError(key, code === "ENOENT" ? "the file does not exist" : "the file cannot be read", written, 1);
  }
  if (data.length > MAX_BYTES) throw new CedarLoadError(key, `the file is larger than ${MAX_BYTES.toLocaleString("en-US")} bytes`, written, 1);
  try {
    return { file: written, text: new TextDecoder("utf-8", { fatal: true }).decode(data) };
  } catch {
    throw new CedarLoadError(key, "the file is not UTF-8 text", written, lineAt(data.toString("latin1"), notUtf8(data)));
  }
}
