/**
 * `--events FILE`: the events a user times instead of the samples, as JSON Lines, one
 * `{"hook": "tool.before", "event": {...}}` per line (the event's JSON form, Python's
 * `model_dump(mode="json")`). Blank lines are ignored; any other bad line is a `BenchError`
 * `FILE:LINE: <what>`, so the user can go straight to it.
 *
 * A run journal (harnessweaver's agent journal, lines with `"kind"`) is refused with a line
 * saying what to do: Python's `harnessweaver bench` reads journals and its `--dump-events OUT`
 * writes the events file this command reads. Node has no journal reader to mirror.
 */

import { readFileSync } from "node:fs";
import { HOOK_POINTS, isHookPoint, type HookPoint } from "../catalogue.js";
import { eventFromJSON, type Event } from "../events.js";
import { isPlainObject } from "../json.js";
import { shown } from "../shown.js";
import { BenchError } from "./errors.js";

/** Python's `strerror` of the usual reasons a file cannot be read, so the two commands say the same. */
const REASONS: Readonly<Record<string, string>> = { ENOENT: "No such file or directory", EACCES: "Permission denied", EISDIR: "Is a directory" };

/** The events of `file` by hook point (each hook point's in the order read). */
export function readEvents(file: string): Map<HookPoint, Event[]> {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    const code = String((error as { code?: unknown }).code ?? "unreadable");
    throw new BenchError(`${file}: cannot read it (${REASONS[code] ?? code})`);
  }
  const found = new Map<HookPoint, Event[]>();
  text.split("\n").forEach((line, index) => {
    if (line.trim() === "") return;
    const [hook, event] = parseLine(line, `${file}:${index + 1}`);
    const events = found.get(hook);
    if (events === undefined) found.set(hook, [event]);
    else events.push(event);
  });
  if (found.size === 0) throw new BenchError(`${file}: no events (the file is empty)`);
  return found;
}

/** How deep a line may nest arrays and objects (Python's `MAX_DEPTH`, benchcmd/events.py): what
 * reads an event afterwards recurses, and a deeper line is refused as its own error. */
export const MAX_DEPTH = 128;

/** Whether `value` (as `JSON.parse` made it) nests arrays and objects more than `limit` deep: a
 * walk a level at a time, never a recursion (Python's `jsondepth.nests_deeper`). */
function nestsDeeper(value: unknown, limit: number): boolean {
  let level: object[] = typeof value === "object" && value !== null ? [value] : [];
  for (let depth = 1; level.length > 0; depth += 1) {
    if (depth > limit) return true;
    const next: object[] = [];
    for (const item of level) {
      for (const child of Object.values(item)) if (typeof child === "object" && child !== null) next.push(child as object);
    }
    level = next;
  }
  return false;
}

/** A JSON value's type as Python names it (the two commands' messages read the same). */
function pyType(value: unknown): string {
  if (value === null) return "NoneType";
  if (Array.isArray(value)) return "list";
  if (typeof value === "string") return "str";
  if (typeof value === "boolean") return "bool";
  if (typeof value === "number") return Number.isInteger(value) ? "int" : "float";
  return "dict";
}

/** One non-blank line: its hook point and its event, or a `BenchError` at `where`. */
function parseLine(line: string, where: string): [HookPoint, Event] {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    throw new BenchError(`${where}: not JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  if (isPlainObject(value) && Object.hasOwn(value, "kind") && !Object.hasOwn(value, "hook")) {
    throw new BenchError(
      `${where}: a run journal's line (it has "kind"): this command reads events files; the Python ` +
        "command reads journals (`harnessweaver bench SPEC --events JOURNAL`), and its `--dump-events OUT` " +
        "writes the events file of a journal, for this command to read",
    );
  }
  const keys = isPlainObject(value) ? Object.keys(value).sort() : null;
  if (keys === null || keys.length !== 2 || keys[0] !== "event" || keys[1] !== "hook") {
    throw new BenchError(`${where}: a line is {"hook": HOOK, "event": {...}}, got ${keys === null ? pyType(value) : shown(keys)}`);
  }
  if (nestsDeeper(value, MAX_DEPTH)) throw new BenchError(`${where}: nests arrays and objects more than ${MAX_DEPTH} deep`);
  const hook = (value as Record<string, unknown>)["hook"];
  if (!isHookPoint(hook)) throw new BenchError(`${where}: unknown hook ${shown(hook)} (hook points: ${HOOK_POINTS.join(", ")})`);
  try {
    return [hook, eventFromJSON(hook, (value as Record<string, unknown>)["event"])];
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new BenchError(`${where}: not a valid ${hook} event: ${why}`);
  }
}
