/**
 * The trace: for every emit, one record per middleware that ran, then one hook record with the
 * combined outcome (rulings 19-20, I8). Records hold kinds, names and codes, never a reason or
 * a message (R9). Their JSON Lines form is the one the Rust and Python cores write: compact
 * JSON, keys in the order of `FIELDS`, absent keys left out.
 */

import { readFile, writeFile } from "node:fs/promises";
import { HOOK_POINTS, type HookPoint } from "./catalogue.js";
import { nanoseconds } from "./invoke.js";
import { orderedRecord, type TraceRecord } from "./record.js";
import { parseRecord } from "./traceread.js";

const HOOKS = HOOK_POINTS.length;

/** @internal What `Trace.add` is told for the records of emit number `emit` at a hook point. */
export function emitKey(emit: number, hookIndex: number): number {
  return emit * HOOKS + hookIndex;
}

const FIRST_SHIFT = 4;
const FIRST_CHUNK = 1 << FIRST_SHIFT;
const CHUNK = 4096;
/** How many chunks grow (16 ... CHUNK records), and how many records they hold in all. */
const GROWN_CHUNKS = Math.log2(CHUNK / FIRST_CHUNK) + 1;
const GROWN_AT = FIRST_CHUNK * (2 ** GROWN_CHUNKS - 1);
const EMPTY_SHAPES: never[] = [];
const EMPTY_NUMBERS = new Float64Array(0);

/** A record without its emit, hook and timings: what many records share (the bus stores these). */
export type Shape = Omit<TraceRecord, "emit" | "hook" | "t_ns" | "duration_ns">;

/** @internal A shape from its fields, those that are undefined left out (as in `orderedRecord`). */
export function shapeOf(
  fields: Pick<Shape, "kind" | "outcome" | "modified"> & { readonly [K in keyof Shape]?: Shape[K] | undefined },
): Shape {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as unknown as Shape;
}

/**
 * Every record of the emits made with one run context. Give concurrent runs separate
 * contexts: each trace then holds only its own records (ruling 21). Nothing is dropped.
 */
export class Trace implements Iterable<TraceRecord> {
  // Storage: a record is kept as a shape (its fields but emit, hook and timings: usually a
  // shared frozen object, so nothing is allocated per record) and three numbers (the emit and
  // the hook's catalogue index as one number, `emit * HOOKS + hook`, then the record's start
  // and end as the walk read them, monotonic ms: rounding them to t_ns and duration_ns waits
  // until the record is read). A record read from JSON Lines is pushed whole: its own shape,
  // with NaN numbers. Records are built, frozen and cached only when read.
  //
  // Both go into chunks that are never copied: 16 records, then twice as many per chunk up to
  // CHUNK (one growing array of pointers cost ~25 ns per record in copies and collections).
  #shapeChunks: (Shape | TraceRecord | undefined)[][] = [];
  #numberChunks: Float64Array[] = [];
  /** The chunk being filled, where its next record goes and how many it holds. */
  #shapes: (Shape | TraceRecord | undefined)[] = EMPTY_SHAPES;
  #numbers: Float64Array = EMPTY_NUMBERS;
  #at = 0;
  #length = 0;
  #built: (TraceRecord | undefined)[] = [];
  #emits = 0;

  /** @internal The bus numbers an emit when it starts. */
  beginEmit(): number {
    return (this.#emits += 1);
  }

  /** @internal Appends a whole record. */
  push(record: TraceRecord): void {
    this.#add(record, Number.NaN, Number.NaN, Number.NaN);
  }

  /**
   * @internal Appends the record `{emit, hook, ...shape, t_ns, duration_ns}` (keys in the order
   * of FIELDS) without building it: `shape` is shared by every record it stands for; `key` is
   * `emitKey(emit, hook index)`; `start` and `end` are monotonic ms (`now()`), traced as
   * `t_ns = nanoseconds(start)` and `duration_ns = nanoseconds(end) - t_ns`.
   */
  add(shape: Shape, key: number, start: number, end: number): void {
    this.#add(shape, key, start, end);
  }

  #add(shape: Shape | TraceRecord, key: number, start: number, end: number): void {
    let at = this.#at;
    let shapes = this.#shapes;
    let numbers = this.#numbers;
    if (at === shapes.length) {
      const size = Math.min(CHUNK, shapes.length * 2 || FIRST_CHUNK);
      this.#shapes = shapes = new Array<Shape | TraceRecord | undefined>(size).fill(undefined);
      this.#numbers = numbers = new Float64Array(size * 3);
      this.#shapeChunks.push(shapes);
      this.#numberChunks.push(numbers);
      at = 0;
    }
    shapes[at] = shape;
    const n = at * 3;
    numbers[n] = key;
    numbers[n + 1] = start;
    numbers[n + 2] = end;
    this.#at = at + 1;
    this.#length += 1;
  }

  /** The record at `index` (in range), built on first read. */
  #record(index: number): TraceRecord {
    const built = this.#built[index];
    if (built !== undefined) return built;
    // Chunks hold 16, 32, ... CHUNK records, then CHUNK each.
    let chunk: number;
    let start: number;
    if (index < GROWN_AT) {
      chunk = 31 - Math.clz32((index >> FIRST_SHIFT) + 1);
      start = FIRST_CHUNK * (2 ** chunk - 1);
    } else {
      chunk = GROWN_CHUNKS + Math.floor((index - GROWN_AT) / CHUNK);
      start = GROWN_AT + (chunk - GROWN_CHUNKS) * CHUNK;
    }
    const at = index - start;
    const shape = (this.#shapeChunks[chunk] as (Shape | TraceRecord)[])[at] as Shape | TraceRecord;
    const numbers = this.#numberChunks[chunk] as Float64Array;
    const key = numbers[at * 3] as number;
    const t_ns = nanoseconds(numbers[at * 3 + 1] as number);
    const record = Number.isNaN(key)
      ? (shape as TraceRecord)
      : orderedRecord({
          ...(shape as Shape),
          emit: Math.floor(key / HOOKS),
          hook: HOOK_POINTS[key % HOOKS] as HookPoint,
          t_ns,
          duration_ns: nanoseconds(numbers[at * 3 + 2] as number) - t_ns,
        });
    this.#built[index] = record;
    return record;
  }

  get length(): number {
    return this.#length;
  }

  /** The number of emits traced so far. */
  get emits(): number {
    return this.#emits;
  }

  at(index: number): TraceRecord | undefined {
    const whole = Math.trunc(index) || 0; // as Array.prototype.at: NaN is 0
    const i = whole < 0 ? whole + this.length : whole;
    return i >= 0 && i < this.length ? this.#record(i) : undefined;
  }

  *[Symbol.iterator](): Iterator<TraceRecord> {
    for (let i = 0; i < this.length; i++) yield this.#record(i);
  }

  /** Every record (frozen objects) in the order they were recorded. */
  records(): TraceRecord[] {
    return Array.from({ length: this.length }, (_, i) => this.#record(i));
  }

  /** The records as JSON Lines: one compact object per line, each line ending in "\n". */
  toJSONL(): string {
    return this.records().map((record) => `${JSON.stringify(record)}\n`).join("");
  }

  /** Writes the JSON Lines form to a file. */
  async writeJSONL(file: string | URL): Promise<void> {
    await writeFile(file, this.toJSONL(), "utf8");
  }

  /**
   * Reads JSON Lines written by any implementation, strictly: unknown or duplicate keys,
   * wrong types, unknown names and inconsistent records are a `TraceFormatError` naming the
   * line. Blank lines are skipped. Emit numbering goes on after the highest emit read.
   */
  static fromJSONL(text: string): Trace {
    const trace = new Trace();
    text.split(/\r\n|\r|\n/).forEach((line, index) => {
      if (line.trim() !== "") trace.push(parseRecord(line, index + 1));
    });
    trace.#emits = trace.records().reduce((most, record) => Math.max(most, record.emit), 0);
    return trace;
  }

  /** Reads a JSON Lines trace from a file. */
  static async readJSONL(file: string | URL): Promise<Trace> {
    return Trace.fromJSONL(await readFile(file, "utf8"));
  }
}
