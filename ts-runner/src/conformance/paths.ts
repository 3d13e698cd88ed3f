/**
 * Dotted paths into an event's JSON form (INTERPRETING.md §3): `call.arguments.note`,
 * `request.messages.0.content`. Object keys are created along the way when absent.
 */

import { isPlainObject, type MutableJson } from "../json.js";

/** Marks a path that leads nowhere (distinct from a JSON null found there). */
export const ABSENT: unique symbol = Symbol("absent");

export function lookup(data: unknown, path: string): unknown {
  let here: unknown = data;
  for (const part of path.split(".")) {
    if (isPlainObject(here) && Object.hasOwn(here, part)) here = here[part];
    else if (Array.isArray(here) && /^[0-9]+$/.test(part) && Number(part) < here.length) here = here[Number(part)];
    else return ABSENT;
  }
  return here;
}

/** Puts `value` at `path`, creating absent object keys along the way. */
export function put(data: MutableJson, path: string, value: MutableJson): void {
  const parts = path.split(".");
  const last = parts.pop() ?? "";
  let here: MutableJson = data;
  for (const part of parts) {
    if (Array.isArray(here)) here = index(here, part, path);
    else if (isContainer(here)) here = Object.hasOwn(here, part) ? (here[part] ?? null) : (here[part] = {});
    else throw new TypeError(`cannot follow ${path}: ${part} is inside a value that is not an object`);
  }
  if (Array.isArray(here)) {
    index(here, last, path); // only existing items can be replaced
    here[Number(last)] = value;
  } else if (isContainer(here)) here[last] = value;
  else throw new TypeError(`cannot set ${path}: its parent is not an object`);
}

/** Appends `value` to the list at `path`; an absent value (or null) counts as an empty list. */
export function append(data: MutableJson, path: string, value: MutableJson): void {
  const current = lookup(data, path);
  if (current !== ABSENT && current !== null && !Array.isArray(current)) {
    throw new TypeError(`cannot append to ${path}: it is not a list`);
  }
  const items = Array.isArray(current) ? (current as MutableJson[]) : [];
  put(data, path, [...items, value]);
}

function isContainer(value: MutableJson): value is { [key: string]: MutableJson } {
  return isPlainObject(value);
}

function index(list: MutableJson[], part: string, path: string): MutableJson {
  if (!/^[0-9]+$/.test(part) || Number(part) >= list.length) throw new RangeError(`no item ${part} in ${path}`);
  return list[Number(part)] ?? null;
}
