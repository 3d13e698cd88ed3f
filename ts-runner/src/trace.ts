/**
 * The trace: for every emit, one record per middleware that ran, then one hook record with the
 * combined outcome (rulings 19-20, I8). Records hold kinds, names and codes, never a reason or
 * a message (R9). Their JSON Lines form is the one the Rust and Python cores write: compact
 * JSON, keys in the order of `FIELDS`, absent keys left out.
 */

import { readFile, writeFile } from "node:fs/promises";
import { HOOK_POINTS, type HookPoint } from "./catalogue.js";
import { orderedRecord, type TraceRecord } from "./record.js";
import { parseRecord } from "./traceread.js";

/** A record without its emit, hook and timings: what many records share (the bus stores these). */
export type Shape = Omit<TraceRecord, "emit" | "hook" | "t_ns" | "duration_ns">;

/**
 * Every record of the emits made with one run context. Give concurrent runs separate
 * contexts: each trace then holds only its own records (ruling 21). Nothing is dropped.
 */
export class Trace implements Iterable<TraceRecord> {
  // Storage: a record is kept as a shape (its fields but emit, hook and timings: usually a
  // shared frozen object, so nothing is allocated per record) and four numbers (emit, hook
  // index, t_ns, duration_ns) in a growing Float64Array. A record pushed whole (read from JSON
  // Lines, or with a code, a failure or a modification) is its own shape, with NaN numbers.
  // Records are built, frozen and cached only when read.
  #shapes: (Shape | TraceRecord)[] = [];
  #numbers = new Float64Array(4 * 64);
  #built: (TraceRecord | undefined)[] = [];
  #emits = 0;

  /** @internal The bus numbers an emit when it starts. */
  beginEmit(): number {
    this.#emits += 1;
    return this.#emits;
  }

  /** @internal Appends a whole record. */
  push(record: TraceRecord): void {
    this.#add(record, Number.NaN, Number.NaN, Number.NaN, Number.NaN);
  }

  /**
   * @internal Appends the record `{emit, hook, ...shape, t_ns, duration_ns}` (keys in the order
   * of FIELDS) without building it: `shape` is shared by every record it stands for.
   */
  add(shape: Shape, emit: number, hook: number, t_ns: number, duration_ns: number): void {
    this.#add(shape, emit, hook, t_ns, duration_ns);
  }

  #add(shape: Shape | TraceRecord, emit: number, hook: number, t_ns: number, duration_ns: number): void {
    const at = this.#shapes.length * 4;
    let numbers = this.#numbers;
    if (at + 4 > numbers.length) {
      const grown = new Float64Array(numbers.length * 2);
      grown.set(numbers);
      this.#numbers = numbers = grown;
    }
    numbers[at] = emit;
    numbers[at + 1] = hook;
    numbers[at + 2] = t_ns;
    numbers[at + 3] = duration_ns;
    this.#shapes.push(shape);
  }

  /** The record at `index` (in range), built on first read. */
  #record(index: number): TraceRecord {
    const built = this.#built[index];
    if (built !== undefined) return built;
    const shape = this.#shapes[index] as Shape | TraceRecord;
    const at = index * 4;
    const emit = this.#numbers[at] as number;
    const record = Number.isNaN(emit)
      ? (shape as TraceRecord)
      : orderedRecord({
          ...(shape as Shape),
          emit,
          hook: HOOK_POINTS[this.#numbers[at + 1] as number] as HookPoint,
          t_ns: this.#numbers[at + 2] as number,
          duration_ns: this.#numbers[at + 3] as number,
        });
    this.#built[index] = record;
    return record;
  }

  get length(): number {
    return this.#shapes.length;
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
