/**
 * The trace: for every emit, one record per middleware that ran, then one hook record with the
 * combined outcome (rulings 19-20, I8). Records hold kinds, names and codes, never a reason or
 * a message (R9). Their JSON Lines form is the one the Rust and Python cores write: compact
 * JSON, keys in the order of `FIELDS`, absent keys left out.
 */

import { readFile, writeFile } from "node:fs/promises";
import type { TraceRecord } from "./record.js";
import { parseRecord } from "./traceread.js";

/**
 * Every record of the emits made with one run context. Give concurrent runs separate
 * contexts: each trace then holds only its own records (ruling 21). Nothing is dropped.
 */
export class Trace implements Iterable<TraceRecord> {
  readonly #records: TraceRecord[] = [];
  #emits = 0;

  /** @internal The bus numbers an emit when it starts. */
  beginEmit(): number {
    this.#emits += 1;
    return this.#emits;
  }

  /** @internal The bus appends records as middleware answer. */
  push(record: TraceRecord): void {
    this.#records.push(record);
  }

  get length(): number {
    return this.#records.length;
  }

  /** The number of emits traced so far. */
  get emits(): number {
    return this.#emits;
  }

  at(index: number): TraceRecord | undefined {
    return this.#records.at(index);
  }

  [Symbol.iterator](): Iterator<TraceRecord> {
    return this.#records[Symbol.iterator]();
  }

  /** Every record (frozen objects) in the order they were recorded. */
  records(): TraceRecord[] {
    return [...this.#records];
  }

  /** The records as JSON Lines: one compact object per line, each line ending in "\n". */
  toJSONL(): string {
    return this.#records.map((record) => `${JSON.stringify(record)}\n`).join("");
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
    trace.#emits = trace.#records.reduce((most, record) => Math.max(most, record.emit), 0);
    return trace;
  }

  /** Reads a JSON Lines trace from a file. */
  static async readJSONL(file: string | URL): Promise<Trace> {
    return Trace.fromJSONL(await readFile(file, "utf8"));
  }
}
