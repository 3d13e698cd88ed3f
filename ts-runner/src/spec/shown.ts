/**
 * A value of a spec as a message (or an item label) shows it: Python's `reprlib` with the
 * loader's limits (strings past 60 characters cut in the middle, lists and mappings past 4
 * items, 3 levels), in the notation of `../shown.ts` (Python's `repr`). Item labels quote a
 * long `use` this way and are compared across implementations, so the cut is Python's exactly.
 */

import { shown } from "../shown.js";

const MAX_STRING = 60;
const MAX_ITEMS = 4;
const MAX_LEVEL = 3;
const FILL = "...";

/** Python's `repr` of a string. */
export function pyRepr(text: string): string {
  return shown([text]).slice(1, -1);
}

function cut(text: string): string {
  const i = Math.max(0, Math.floor((MAX_STRING - 3) / 2));
  const j = Math.max(0, MAX_STRING - 3 - i);
  return text.slice(0, i) + FILL + text.slice(text.length - j);
}

function reprString(value: string): string {
  const points = [...value];
  const s = pyRepr(points.slice(0, MAX_STRING).join(""));
  if ([...s].length <= MAX_STRING) return s;
  const i = Math.max(0, Math.floor((MAX_STRING - 3) / 2));
  const j = Math.max(0, MAX_STRING - 3 - i);
  const whole = [...pyRepr(points.slice(0, i).concat(points.slice(points.length - j)).join(""))];
  return whole.slice(0, i).join("") + FILL + whole.slice(whole.length - j).join("");
}

function iterable(items: readonly unknown[], level: number, open: string, close: string): string {
  if (items.length === 0) return open + close;
  if (level <= 0) return `${open}${FILL}${close}`;
  const pieces = items.slice(0, MAX_ITEMS).map((item) => repr(item, level - 1));
  if (items.length > MAX_ITEMS) pieces.push(FILL);
  return open + pieces.join(", ") + close;
}

function sortedKeys(keys: unknown[]): unknown[] {
  const texts = keys.every((key) => typeof key === "string");
  const numbers = keys.every((key) => typeof key === "number");
  if (texts) return [...keys].sort((a, b) => ((a as string) < (b as string) ? -1 : (a as string) > (b as string) ? 1 : 0));
  if (numbers) return [...keys].sort((a, b) => (a as number) - (b as number));
  return keys;
}

function repr(value: unknown, level: number): string {
  if (typeof value === "string") return reprString(value);
  if (Array.isArray(value)) return iterable(value, level, "[", "]");
  if (value instanceof Set) {
    if (value.size === 0) return "set()";
    return iterable(sortedKeys([...value]), level, "{", "}");
  }
  if (value instanceof Map || (typeof value === "object" && value !== null && Object.getPrototypeOf(value) === Object.prototype)) {
    const entries = value instanceof Map ? new Map(value) : new Map(Object.entries(value as object));
    if (entries.size === 0) return "{}";
    if (level <= 0) return `{${FILL}}`;
    const keys = sortedKeys([...entries.keys()]);
    const pieces = keys.slice(0, MAX_ITEMS).map((key) => `${repr(key, level - 1)}: ${repr(entries.get(key), level - 1)}`);
    if (keys.length > MAX_ITEMS) pieces.push(FILL);
    return `{${pieces.join(", ")}}`;
  }
  const text = typeof value === "object" && value !== null && "text" in value ? `'${String((value as { text: unknown }).text)}'` : shown(value);
  return text.length > MAX_STRING ? cut(text) : text;
}

/** A value as a message shows it: its `repr`, cut short when it is long or deep. */
export function shownValue(value: unknown): string {
  return repr(value, MAX_LEVEL);
}
