/**
 * The trace: for every emit, one record per middleware that ran, then one hook record with the
 * combined outcome (rulings 19-20, I8). Records hold kinds, names and codes, never a reason or
 * a message (R9). Their JSON Lines form is the one the Rust and Python cores write: compact
 * JSON, keys in the order of `FIELDS`, absent keys left out.
 */

import { readFile, writeFile } from "node:fs/promises";
import { HOOK_POINTS, type HookPoint } from "./catalogue.js";
import { Correlator, type Correlation } from "./correlation.js";
import type { Event } from "./events.js";
import { nanoseconds } from "./invoke.js";
import { orderedRecord, type TraceRecord } from "./record.js";
import { parseRecord } from "./traceread.js";

const HOOKS = HOOK_POINTS.length;

/**
 * The largest emit ordinal (I19): 2^53 - 1, the largest integer a number (and every JSON
 * reader) holds exactly. An emit on a trace that reached it is numbered it again.
 */
export const MAX_EMIT = Number.MAX_SAFE_INTEGER;
/** How many records a trace keeps unless told otherwise (I20): the newest 2^20. */
export const DEFAULT_LIMIT = 2 ** 20;
/** How many records a sink is handed at once unless told otherwise. */
export const DEFAULT_BATCH = 4096;

/**
 * @internal What `Trace.add` is told for the records of an emit at a hook point: `emit` is
 * what `Trace.beginEmit` returned (the ordinal less the trace's base, see there), so the key
 * is exact for the first 2^50 emits a trace makes, whatever ordinal it started from.
 */
export function emitKey(emit: number, hookIndex: number): number {
  return emit * HOOKS + hookIndex;
}

/** Where a trace's records go as they come: called with batches of records, in order. */
export type TraceSink = ((records: TraceRecord[]) => void) & { close?: () => void };

export interface TraceOptions {
  /** Records kept at most (the newest); `null` for no bound (I20). Default `DEFAULT_LIMIT`. */
  readonly limit?: number | null;
  /** Handed every `batch` records as emits start, and the rest on `flush()`/`close()`. */
  readonly sink?: TraceSink;
  readonly batch?: number;
}

/** A sink writing each record as one line of JSON (what `toJSONL` writes) to a stream. */
export function jsonlSink(stream: { write(text: string): unknown }): TraceSink {
  return (records) => {
    stream.write(records.map((record) => `${JSON.stringify(record)}\n`).join(""));
  };
}

function positive(value: number, what: string): number {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new RangeError(`Trace ${what} must be a positive number of records, got ${String(value)} (I20)`);
  }
  return value;
}

const FIRST_SHIFT = 4;
const FIRST_CHUNK = 1 << FIRST_SHIFT;
const CHUNK = 4096;
/** How many chunks grow (16 ... CHUNK records), and how many records they hold in all. */
const GROWN_CHUNKS = Math.log2(CHUNK / FIRST_CHUNK) + 1;
const GROWN_AT = FIRST_CHUNK * (2 ** GROWN_CHUNKS - 1);
const EMPTY_SHAPES: never[] = [];
const EMPTY_NUMBERS = new Float64Array(0);
/** What the chunk being filled was last told of correlation before its first record. */
const UNSET: Correlation = Object.freeze({ run: "" });

/**
 * A record without its emit, hook, correlation and timings: what many records share (the bus
 * stores these).
 */
export type Shape = Omit<TraceRecord, "emit" | "hook" | "run" | "step" | "tool" | "t_ns" | "duration_ns">;

/** @internal A shape from its fields, those that are undefined left out (as in `orderedRecord`). */
export function shapeOf(
  fields: Pick<Shape, "kind" | "outcome" | "modified"> & { readonly [K in keyof Shape]?: Shape[K] | undefined },
): Shape {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as unknown as Shape;
}

/** The chunk holding the record at `position` (among every record ever added). Chunks hold
 * 16, 32, ... CHUNK records, then CHUNK each. */
function chunkOf(position: number): number {
  return position < GROWN_AT
    ? 31 - Math.clz32((position >> FIRST_SHIFT) + 1)
    : GROWN_CHUNKS + Math.floor((position - GROWN_AT) / CHUNK);
}

/** The position of the first record of chunk `chunk`. */
function chunkStart(chunk: number): number {
  return chunk < GROWN_CHUNKS ? FIRST_CHUNK * (2 ** chunk - 1) : GROWN_AT + (chunk - GROWN_CHUNKS) * CHUNK;
}

/** The correlation of the record at `at` in a chunk: that of the last mark at or before it. */
function markOf(markAt: readonly number[], marks: readonly Correlation[], at: number): Correlation {
  let low = 0; // markAt[0] is 0: every chunk's first record is marked
  let high = markAt.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if ((markAt[middle] as number) <= at) low = middle;
    else high = middle - 1;
  }
  return marks[low] as Correlation;
}

/**
 * Every record of the emits made with one run context: the newest `limit` of them (I20), the
 * older ones dropped and counted (`dropped`) with one warning. A service hands records on as
 * they come with a `sink`, or takes them out with `drain()`. Give concurrent runs separate
 * contexts: each trace then holds only its own records (ruling 21).
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
  //
  // An emit's correlation (I21) is one frozen object, shared by the emits after it while it is
  // the same (`Correlator`). It is kept once per run of records that share it: each chunk has
  // marks, the positions in the chunk where the correlation changes and what it changes to. A
  // loop of emits of one event costs one mark per chunk, a loop counting steps one mark per
  // emit; a record costs nothing more. Marks go with their chunk.
  #shapeChunks: (Shape | TraceRecord | undefined)[][] = [];
  #numberChunks: Float64Array[] = [];
  #markAtChunks: number[][] = [];
  #markChunks: (Correlation | undefined)[][] = [];
  /** The chunk being filled, where its next record goes and how many it holds. */
  #shapes: (Shape | TraceRecord | undefined)[] = EMPTY_SHAPES;
  #numbers: Float64Array = EMPTY_NUMBERS;
  #markAt: number[] = [];
  #marks: (Correlation | undefined)[] = [];
  /** The correlation of the last record of the chunk being filled (UNSET before its first). */
  #correlation: Correlation | undefined = UNSET;
  readonly #correlator = new Correlator();
  #at = 0;
  #length = 0;
  #built: (TraceRecord | undefined)[] = [];
  #emits = 0;
  /** Emit keys count from here: the highest ordinal read back (see `emitKey`). */
  #base = 0;
  /** Records taken out or dropped from the front; whole chunks of them are let go. */
  #removed = 0;
  #firstChunk = 0;
  readonly #limit: number;
  #dropped = 0;
  #warned = false;
  readonly #sink: TraceSink | undefined;
  readonly #batch: number;
  #serving = false;

  constructor(options: TraceOptions = {}) {
    const { limit = DEFAULT_LIMIT, sink, batch = DEFAULT_BATCH } = options;
    this.#limit = limit === null ? Infinity : positive(limit, "limit");
    this.#batch = positive(batch, "batch");
    if (sink !== undefined && typeof sink !== "function") throw new TypeError("Trace sink must be a function taking records");
    this.#sink = sink;
  }

  /**
   * @internal The bus numbers an emit when it starts: 1, 2, 3, ... (I8), at most MAX_EMIT
   * (I19). Returned less the trace's base (for `emitKey`). First hands the sink its full
   * batches.
   */
  beginEmit(): number {
    if (this.#sink !== undefined && this.#length >= this.#batch) this.#serve(false);
    if (this.#emits < MAX_EMIT) this.#emits += 1;
    return this.#emits - this.#base;
  }

  /** Records kept at most (I20); `null` for no bound. */
  get limit(): number | null {
    return this.#limit === Infinity ? null : this.#limit;
  }

  /** Records dropped because the limit was reached or the sink failed to take them. */
  get dropped(): number {
    return this.#dropped;
  }

  /** Takes out every record held: they are no longer held. Emit ordinals go on. */
  drain(): TraceRecord[] {
    return this.#take(this.#length);
  }

  /** Hands every record held to the sink now; returns how many (0 without a sink). */
  flush(): number {
    return this.#serve(true);
  }

  /** `flush()`, then the sink's own `close()` when it has one. */
  close(): void {
    this.flush();
    this.#sink?.close?.();
  }

  #take(most: number): TraceRecord[] {
    const count = Math.min(most, this.#length);
    const taken = Array.from({ length: count }, (_, i) => this.#record(i));
    this.#discard(count);
    return taken;
  }

  /** Hands the sink every full batch (all records with `all`). A failing sink's records are
   * counted as dropped and its error's name warned of; with `all` the error is thrown. */
  #serve(all: boolean): number {
    const sink = this.#sink;
    if (sink === undefined || this.#serving) return 0;
    this.#serving = true;
    let served = 0;
    try {
      while (this.#length > 0 && (all || this.#length >= this.#batch)) {
        const records = this.#take(this.#batch);
        try {
          sink(records);
        } catch (error) {
          this.#dropped += records.length;
          if (all) throw error;
          const name = error instanceof Error ? error.name : "NonErrorThrown";
          process.emitWarning(`harnessweaver trace sink failed (${name}); ${records.length} records dropped`);
        }
        served += records.length;
      }
    } finally {
      this.#serving = false;
    }
    return served;
  }

  /** Forgets the oldest `count` records, letting go of chunks that hold none still kept. */
  #discard(count: number): void {
    if (count <= 0) return;
    this.#removed += count;
    this.#length -= count;
    if (this.#built.length > 0) this.#built = [];
    // Chunks before the one holding the first record kept, except the one being filled.
    while (this.#shapeChunks.length > 1 && chunkStart(this.#firstChunk + 1) <= this.#removed) {
      this.#shapeChunks.shift();
      this.#numberChunks.shift();
      this.#markAtChunks.shift();
      this.#markChunks.shift();
      this.#firstChunk += 1;
    }
  }

  #overflow(): void {
    const over = this.#length - this.#limit;
    this.#discard(over);
    this.#dropped += over;
    if (!this.#warned) {
      this.#warned = true;
      process.emitWarning(
        `harnessweaver trace dropped its oldest records: it keeps the newest ${String(this.#limit)} (I20); give it a sink or drain() it`,
      );
    }
  }

  /**
   * @internal The correlation of an emit (I21) of the caller's `event` at the hook point of
   * catalogue index `hookIndex`, in a context of run id `run`: the previous emit's object
   * when it is the same.
   */
  correlate(run: string, hookIndex: number, event: Event): Correlation {
    return this.#correlator.of(run, hookIndex, event);
  }

  /** @internal Appends a whole record. */
  push(record: TraceRecord): void {
    this.#add(record, Number.NaN, undefined, Number.NaN, Number.NaN);
  }

  /**
   * @internal Appends the record `{emit, hook, ...correlation, ...shape, t_ns, duration_ns}`
   * (keys in the order of FIELDS) without building it: `shape` is shared by every record it
   * stands for; `key` is `emitKey(emit, hook index)`; `correlation` is what `correlate`
   * returned for the emit; `start` and `end` are monotonic ms (`now()`), traced as
   * `t_ns = nanoseconds(start)` and `duration_ns = nanoseconds(end) - t_ns`.
   */
  add(shape: Shape, key: number, correlation: Correlation, start: number, end: number): void {
    this.#add(shape, key, correlation, start, end);
  }

  #add(shape: Shape | TraceRecord, key: number, correlation: Correlation | undefined, start: number, end: number): void {
    let at = this.#at;
    let shapes = this.#shapes;
    let numbers = this.#numbers;
    if (at === shapes.length) {
      const size = Math.min(CHUNK, shapes.length * 2 || FIRST_CHUNK);
      this.#shapes = shapes = new Array<Shape | TraceRecord | undefined>(size).fill(undefined);
      this.#numbers = numbers = new Float64Array(size * 3);
      this.#shapeChunks.push(shapes);
      this.#numberChunks.push(numbers);
      this.#markAtChunks.push((this.#markAt = []));
      this.#markChunks.push((this.#marks = []));
      this.#correlation = UNSET;
      at = 0;
    }
    if (correlation !== this.#correlation) {
      this.#markAt.push(at);
      this.#marks.push(correlation);
      this.#correlation = correlation;
    }
    shapes[at] = shape;
    const n = at * 3;
    numbers[n] = key;
    numbers[n + 1] = start;
    numbers[n + 2] = end;
    this.#at = at + 1;
    if ((this.#length += 1) > this.#limit) this.#overflow();
  }

  /** The record at `index` (in range), built on first read. */
  #record(index: number): TraceRecord {
    const built = this.#built[index];
    if (built !== undefined) return built;
    const position = this.#removed + index; // among every record ever added
    const chunk = chunkOf(position);
    const at = position - chunkStart(chunk);
    const held = chunk - this.#firstChunk;
    const shape = (this.#shapeChunks[held] as (Shape | TraceRecord)[])[at] as Shape | TraceRecord;
    const numbers = this.#numberChunks[held] as Float64Array;
    const key = numbers[at * 3] as number;
    const t_ns = nanoseconds(numbers[at * 3 + 1] as number);
    const record = Number.isNaN(key)
      ? (shape as TraceRecord)
      : orderedRecord({
          ...(shape as Shape),
          ...markOf(this.#markAtChunks[held] as number[], this.#markChunks[held] as Correlation[], at),
          emit: this.#base + Math.floor(key / HOOKS),
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

  /** The number of emits begun on this trace: the last ordinal handed out or read (I8, I19). */
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
  static fromJSONL(text: string, options: Pick<TraceOptions, "limit"> = {}): Trace {
    const trace = new Trace(options);
    let most = 0;
    text.split(/\r\n|\r|\n/).forEach((line, index) => {
      if (line.trim() !== "") {
        const record = parseRecord(line, index + 1);
        most = Math.max(most, record.emit);
        trace.push(record);
      }
    });
    trace.#emits = trace.#base = most;
    return trace;
  }

  /** Reads a JSON Lines trace from a file. */
  static async readJSONL(file: string | URL, options: Pick<TraceOptions, "limit"> = {}): Promise<Trace> {
    return Trace.fromJSONL(await readFile(file, "utf8"), options);
  }
}
