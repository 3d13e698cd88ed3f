/**
 * YAML that remembers where things are: every mapping and list knows its line (Python:
 * `spec/yaml.py` and `spec/limits.py`).
 *
 * The `yaml` package parses (with a `LineCounter` for positions) using its failsafe schema, so
 * every scalar stays text; this module then gives plain scalars their YAML 1.1 types exactly as
 * PyYAML's safe loader resolves them (`yes` is true, `0777` octal, `1_000` an int, `~` null…),
 * so a spec means the same in Python and Node. Walking the document it checks the limits
 * (depth, aliases counted as what they stand for, recursive aliases), refuses a key written
 * twice in one mapping, a duplicate anchor and an undefined alias, and applies merge keys.
 */

import { isAlias, isMap, isPair, isScalar, isSeq, Lexer, LineCounter, parseDocument, type Node as YamlNode, type Scalar } from "yaml";

import { MAX_ALIASED_NODES, MAX_DEPTH } from "./limits.js";
import { shownValue } from "./shown.js";

/** A mapping read from YAML: `line` is where it starts, `keyLines` where each key is. */
export class YamlMap extends Map<unknown, unknown> {
  line = 0;
  readonly keyLines = new Map<unknown, number>();
}

/** A list read from YAML: `line` is where it starts, `itemLines` where each item is. */
export class YamlList extends Array<unknown> {
  line = 0;
  itemLines: number[] = [];
  static override get [Symbol.species](): ArrayConstructor {
    return Array;
  }
}

/** A `!!timestamp` (or an implicit date): kept as written, since JS dates lose Python's form. */
export class YamlTimestamp {
  constructor(readonly text: string) {}
}

/**
 * Text that is not YAML, or past a limit: `line` where (when known), `kind` which problem
 * (`unreadable_yaml` or a limit's kind). `shown` leaves out what the message quotes from the
 * text unless `trusted` (the top level is a mapping with one of the keys it was parsed for).
 */
export class YamlProblem extends Error {
  constructor(
    message: string,
    readonly line: number | null,
    readonly kind: "unreadable_yaml" | "too_deep" | "too_many_aliases" | "recursive_alias" = "unreadable_yaml",
    readonly trusted = false,
  ) {
    super(message);
  }

  get shown(): string {
    return this.trusted ? this.message : this.message.replace(QUOTED, withheld);
  }
}

const QUOTED = /'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"/g;
const KEPT = /^(?:'<[a-z ]+>'|'\\?.'|'\\x[0-9a-f]{2}'|'\\u[0-9a-f]{4}')$/;

function withheld(text: string): string {
  return KEPT.test(text) ? text : "'…'";
}

// PyYAML's implicit resolvers (resolver.py), in the order it tries them.
const BOOL = /^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$/;
const FLOAT =
  /^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$/;
const INT = /^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$/;
const NULL = /^(?:~|null|Null|NULL|)$/;
const TIMESTAMP =
  /^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$/;

const TAG = "tag:yaml.org,2002:";

/** Thrown inside the walk: a value its tag cannot read, a key that is not a plain value… */
class Refused extends Error {
  constructor(
    message: string,
    readonly offset: number,
    readonly kind: YamlProblem["kind"] = "unreadable_yaml",
  ) {
    super(message);
  }
}

function implicitTag(text: string): string {
  if (BOOL.test(text)) return "bool";
  if (FLOAT.test(text)) return "float";
  if (INT.test(text)) return "int";
  if (text === "<<") return "merge";
  if (NULL.test(text)) return "null";
  if (TIMESTAMP.test(text)) return "timestamp";
  return "str";
}

function sexagesimal(text: string): number {
  let value = 0;
  for (const part of text.split(":")) value = value * 60 + Number(part);
  return value;
}

function constructInt(raw: string): number {
  let text = raw.replaceAll("_", "");
  let sign = 1;
  if (text.startsWith("-")) sign = -1;
  if (text.startsWith("-") || text.startsWith("+")) text = text.slice(1);
  if (text === "0") return 0;
  if (text.startsWith("0b")) return sign * parseInt(text.slice(2), 2);
  if (text.startsWith("0x")) return sign * parseInt(text.slice(2), 16);
  if (text.startsWith("0")) return sign * parseInt(text, 8);
  if (text.includes(":")) return sign * sexagesimal(text);
  return sign * Number(text);
}

function constructFloat(raw: string): number {
  let text = raw.replaceAll("_", "").toLowerCase();
  let sign = 1;
  if (text.startsWith("-")) sign = -1;
  if (text.startsWith("-") || text.startsWith("+")) text = text.slice(1);
  if (text === ".inf") return sign * Infinity;
  if (text === ".nan") return NaN;
  if (text.includes(":")) return sign * sexagesimal(text);
  return sign * Number(text);
}

function scalarValue(tag: string, text: string, offset: number): unknown {
  const bad = () => new Refused("a value cannot be read as its tag says", offset);
  switch (tag) {
    case "str":
      return text;
    case "null":
      return null;
    case "bool": {
      if (!BOOL.test(text)) throw bad();
      return ["yes", "true", "on"].includes(text.toLowerCase());
    }
    case "int": {
      if (!INT.test(text)) {
        // PyYAML's constructor reads any text int() reads, e.g. "12" quoted; refuse the rest.
        if (!/^[-+]?[0-9_]+$/.test(text)) throw bad();
      }
      const value = constructInt(text);
      if (!Number.isFinite(value)) throw bad();
      return value;
    }
    case "float": {
      const value = constructFloat(text);
      if (Number.isNaN(value) && !/nan/i.test(text)) throw bad();
      return value;
    }
    case "timestamp":
      if (!TIMESTAMP.test(text)) throw bad();
      return new YamlTimestamp(text);
    case "binary":
      return Buffer.from(text.replace(/\s+/g, ""), "base64");
    default:
      throw new Refused(`could not determine a constructor for the tag '${tag}'`, offset);
  }
}

interface Walked {
  readonly value: unknown;
  readonly weight: number;
}

/** One document's walk: limits, anchors, positions. */
class Walk {
  depth = 0;
  aliased = 0;
  trusted = false;
  readonly anchors = new Map<string, Walked>();
  readonly open = new Set<string>();

  constructor(
    readonly lines: LineCounter,
    readonly keys: readonly string[],
  ) {}

  line(offset: number): number {
    return this.lines.linePos(offset).line;
  }

  node(node: unknown, fallback: number, key = false): Walked {
    if (node === null || node === undefined) return { value: null, weight: 1 }; // an empty value
    const at = (node as YamlNode).range?.[0] ?? fallback;
    if (isAlias(node)) return this.alias(node.source, at);
    const anchor = (node as { anchor?: string | undefined }).anchor;
    if (anchor !== undefined && this.anchors.has(anchor)) {
      throw new Refused(`found duplicate anchor '${anchor}'`, at);
    }
    let walked: Walked;
    if (isScalar(node)) {
      walked = { value: this.scalar(node, at), weight: 1 };
      if (key && this.depth === 1) this.trusted ||= typeof walked.value === "string" && this.keys.includes(walked.value);
    } else if (isMap(node) || isSeq(node)) {
      if (this.depth === MAX_DEPTH) throw new Refused(`mappings and lists nest more than ${MAX_DEPTH} deep`, at, "too_deep");
      this.depth += 1;
      if (anchor !== undefined) this.open.add(anchor);
      walked = isMap(node) ? this.map(node.items, at, node.tag) : this.seq(node.items, at, node.tag);
      if (anchor !== undefined) this.open.delete(anchor);
      this.depth -= 1;
    } else {
      throw new Refused("not YAML", at);
    }
    if (anchor !== undefined) this.anchors.set(anchor, walked);
    return walked;
  }

  alias(name: string, at: number): Walked {
    if (this.open.has(name)) throw new Refused("an alias stands for a mapping or list that contains it", at, "recursive_alias");
    const found = this.anchors.get(name);
    if (found === undefined) throw new Refused(`found undefined alias '${name}'`, at);
    this.aliased += found.weight;
    if (this.aliased > MAX_ALIASED_NODES) {
      throw new Refused(`the aliases stand for more than ${MAX_ALIASED_NODES.toLocaleString("en-US")} nodes in all`, at, "too_many_aliases");
    }
    return found;
  }

  scalar(node: Scalar, at: number): unknown {
    const text = typeof node.value === "string" ? node.value : node.value === null || node.value === undefined ? "" : String(node.value);
    const tag = node.tag;
    if (tag === undefined || tag === "!") return node.type === "PLAIN" && tag === undefined ? this.implicit(text, at) : text;
    if (!tag.startsWith(TAG)) throw new Refused(`could not determine a constructor for the tag '${tag}'`, at);
    return scalarValue(tag.slice(TAG.length), text, at);
  }

  implicit(text: string, at: number): unknown {
    const tag = implicitTag(text);
    return tag === "merge" ? MERGE : scalarValue(tag, text, at);
  }

  map(pairs: readonly unknown[], at: number, tag: string | undefined): Walked {
    if (tag !== undefined && tag !== `${TAG}map` && tag !== "!") {
      if (tag === `${TAG}set`) return this.set(pairs, at);
      throw new Refused(`could not determine a constructor for the tag '${tag}'`, at);
    }
    const result = new YamlMap();
    result.line = this.line(at);
    let weight = 1;
    const own: [unknown, unknown, number][] = [];
    const merged: [unknown, unknown, number][] = [];
    const seen = new Set<string>();
    for (const pair of pairs) {
      if (!isPair(pair)) continue;
      const keyAt = (pair.key as YamlNode | null)?.range?.[0] ?? at;
      const key = this.node(pair.key, keyAt, true);
      const value = this.node(pair.value, keyAt);
      weight += key.weight + value.weight;
      if (key.value === MERGE) {
        merged.push(...this.mergeOf(value.value, keyAt));
        continue;
      }
      if (isScalar(pair.key)) {
        // PyYAML compares the keys as written (before their types are resolved).
        const written = String(pair.key.value ?? "");
        if (seen.has(written)) throw new Refused(`the key '${written}' is written twice`, keyAt, "unreadable_yaml");
        seen.add(written);
      }
      if (key.value !== null && typeof key.value === "object" && !(key.value instanceof YamlTimestamp)) {
        throw new Refused("a key must be a plain value", keyAt);
      }
      own.push([key.value, value.value, this.line(keyAt)]);
    }
    // Merged keys first, then the mapping's own (which win); a key keeps its first line (PyYAML).
    for (const [key, value, line] of [...merged, ...own]) {
      result.set(key, value);
      if (!result.keyLines.has(key)) result.keyLines.set(key, line);
    }
    return { value: result, weight };
  }

  mergeOf(value: unknown, at: number): [unknown, unknown, number][] {
    const one = (map: unknown): [unknown, unknown, number][] => {
      if (!(map instanceof YamlMap)) throw new Refused("expected a mapping or list of mappings for merging", at);
      return [...map].map(([k, v]) => [k, v, map.keyLines.get(k) ?? map.line]);
    };
    // As PyYAML reads `<<: [*a, *b]`: the mappings in the list's order, so a later one's key wins.
    if (value instanceof YamlList) return [...value].flatMap(one);
    return one(value);
  }

  set(pairs: readonly unknown[], at: number): Walked {
    const result = new Set<unknown>();
    let weight = 1;
    for (const pair of pairs) {
      if (!isPair(pair)) continue;
      const key = this.node(pair.key, at, true);
      const value = this.node(pair.value, at);
      weight += key.weight + value.weight;
      result.add(key.value);
    }
    return { value: result, weight };
  }

  seq(items: readonly unknown[], at: number, tag: string | undefined): Walked {
    if (tag !== undefined && tag !== `${TAG}seq` && tag !== "!" && tag !== `${TAG}omap` && tag !== `${TAG}pairs`) {
      throw new Refused(`could not determine a constructor for the tag '${tag}'`, at);
    }
    const result = new YamlList();
    result.line = this.line(at);
    let weight = 1;
    for (const item of items) {
      const itemAt = isPair(item) ? ((item.key as YamlNode | null)?.range?.[0] ?? at) : ((item as YamlNode | null)?.range?.[0] ?? at);
      let walked: Walked;
      if (isPair(item)) {
        // `[a: 1]`: a single-pair mapping inside a flow sequence.
        walked = this.map([item], itemAt, undefined);
      } else {
        walked = this.node(item, itemAt);
      }
      weight += walked.weight;
      result.push(walked.value);
      result.itemLines.push(this.line(itemAt));
    }
    return { value: result, weight };
  }
}

const MERGE: unique symbol = Symbol("merge");

/**
 * The value of a YAML document; a `YamlProblem` when it is not YAML or is past a limit. `keys`
 * are the top-level keys of what the document should be (a spec's): a problem found once the
 * top level is known to be a mapping with one of them is `trusted`.
 */
export function parseYaml(text: string, keys: readonly string[] = []): unknown {
  const lines = new LineCounter();
  const walk = new Walk(lines, keys);
  // A character YAML does not allow (PyYAML's reader refuses it before parsing).
  const bad = /[^\x09\x0A\x0D\x20-\x7E\x85\xA0-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u.exec(text);
  if (bad !== null) {
    const code = bad[0].codePointAt(0) ?? 0;
    const line = text.slice(0, bad.index).split("\n").length;
    throw new YamlProblem(`unacceptable character #x${code.toString(16).padStart(4, "0")}: special characters are not allowed`, line);
  }
  // The `yaml` package parses nesting in time that grows with its square: a document nested
  // deeper than the limit is cut right after the collection that breaks it, so only that much
  // is parsed (PyYAML stops there too), and the walk below finds the very collection.
  const cut = tooDeepAt(text);
  if (cut !== -1) text = text.slice(0, cut);
  const doc = parseDocument(text, { schema: "failsafe", lineCounter: lines, prettyErrors: false, uniqueKeys: false, strict: false });
  // The first problem in the text's order wins, as PyYAML meets them while reading.
  const parseError = doc.errors[0];
  let walked: Walked | undefined;
  let refused: Refused | undefined;
  try {
    walked = walk.node(doc.contents, 0);
  } catch (error) {
    if (!(error instanceof Refused)) {
      if (error instanceof RangeError) throw new YamlProblem(`mappings and lists nest more than ${MAX_DEPTH} deep`, null, "too_deep");
      throw error;
    }
    refused = error;
  }
  if (parseError !== undefined && (refused === undefined || parseError.pos[0] <= refused.offset || refused.kind === "unreadable_yaml")) {
    const code = parseError.code === "RESOURCE_EXHAUSTION" ? "too_deep" : "unreadable_yaml";
    const message = code === "too_deep" ? `mappings and lists nest more than ${MAX_DEPTH} deep` : parseError.message;
    throw new YamlProblem(message, lines.linePos(parseError.pos[0]).line, code, walk.trusted);
  }
  if (refused !== undefined) throw new YamlProblem(refused.message, lines.linePos(refused.offset).line, refused.kind, walk.trusted);
  return walked?.value ?? null;
}

/**
 * The offset just past the token where the nesting surely passes `MAX_DEPTH`, or -1: a lower
 * bound of the depth from the lexer's tokens alone (flow brackets open, and the `-` and `?`
 * indicators of compact block collections on one line), linear in the text.
 */
function tooDeepAt(text: string): number {
  let flow = 0;
  let compact = 0;
  let offset = 0;
  for (const token of new Lexer().lex(text)) {
    if (token !== "\x02" && token !== "\x18" && token !== "\x1f") offset += token.length; // markers, not text
    if (token === "[" || token === "{") flow += 1;
    else if (token === "]" || token === "}") flow = Math.max(0, flow - 1);
    else if (token === "-" || token === "?") compact += 1;
    else if (token.includes("\n")) compact = 0;
    if (flow + compact > MAX_DEPTH) return offset;
  }
  return -1;
}

/** The line of `key` in a `YamlMap`, or of item `key` of a `YamlList`, else of the value itself. */
export function lineOf(value: unknown, key?: unknown): number | null {
  if (key !== undefined && key !== null && value instanceof YamlMap && value.keyLines.has(key)) return value.keyLines.get(key) ?? null;
  if (typeof key === "number" && value instanceof YamlList && key >= 0 && key < value.itemLines.length) return value.itemLines[key] ?? null;
  if (value instanceof YamlMap || value instanceof YamlList) return value.line || null;
  return null;
}

/** `value` with every `YamlMap` made a plain object and every `YamlList` a plain array. */
export function plain(value: unknown): unknown {
  if (value instanceof Map) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of value) out[String(key)] = plain(item);
    return out;
  }
  if (Array.isArray(value)) return Array.from(value, plain);
  return value;
}

export { shownValue };
