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
import { BenchError } from "./errors.js";

const KEYS = ["hook", "event"];

/** The events of `file` by hook point, in file order (hook points with none are absent). */
export function readEvents(file: string): Map<HookPoint, Event[]> {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new BenchError(`cannot read the events file ${file}: ${typeof code === "string" ? code : "unreadable"}`);
  }
  const found = new Map<HookPoint, Event[]>();
  text.split(/\r?\n/).forEach((line, index) => {
    if (line.trim() === "") return;
    const [hook, event] = parseLine(line, `${file}:${index + 1}`);
    const events = found.get(hook);
    if (events === undefined) found.set(hook, [event]);
    else events.push(event);
  });
  return found;
}

/** One non-blank line: its hook point and its event, or a `BenchError` at `where`. */
function parseLine(line: string, where: string): [HookPoint, Event] {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    throw new BenchError(`${where}: not JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  if (!isPlainObject(value)) throw new BenchError(`${where}: a line is a JSON object {"hook": ..., "event": {...}}`);
  if (Object.hasOwn(value, "kind")) {
    throw new BenchError(
      `${where}: this is a run journal (its lines have "kind"), not an events file: the Python command ` +
        "reads journals (`harnessweaver bench SPEC --events JOURNAL`), and its `--dump-events OUT` writes " +
        "the events file this command reads",
    );
  }
  const extra = Object.keys(value).filter((key) => !KEYS.includes(key));
  if (extra.length > 0) throw new BenchError(`${where}: unknown key ${JSON.stringify(extra[0])}: a line has "hook" and "event"`);
  const hook = value["hook"];
  if (!isHookPoint(hook)) {
    throw new BenchError(`${where}: unknown hook ${JSON.stringify(hook ?? null)}: one of ${HOOK_POINTS.join(", ")}`);
  }
  if (!Object.hasOwn(value, "event")) throw new BenchError(`${where}: no "event": a line has "hook" and "event"`);
  try {
    return [hook, eventFromJSON(hook, value["event"])];
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new BenchError(`${where}: not a valid event of ${hook}: ${why}`);
  }
}
