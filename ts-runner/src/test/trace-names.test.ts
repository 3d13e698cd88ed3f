import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { Trace, TraceFormatError } from "../index.js";

interface Read {
  readonly id: string;
  readonly jsonl: string;
  readonly then: { readonly records?: number; readonly error?: string };
}

/** The shared reads of conformance/cases/trace/reads/names.json (the Python cores run them too). */
const NAMES = fileURLToPath(new URL("../../../conformance/cases/trace/reads/names.json", import.meta.url));

describe("type names and codes read back (I28)", () => {
  it("carry out the shared reads", () => {
    const reads = (JSON.parse(readFileSync(NAMES, "utf8")) as { reads: Read[] }).reads;
    assert.equal(reads.length, 16);
    for (const read of reads) {
      if (read.then.error !== undefined) {
        assert.throws(
          () => Trace.fromJSONL(read.jsonl),
          (e: unknown) => e instanceof TraceFormatError && e.kind === read.then.error && e.message.includes("(I28)"),
          read.id,
        );
        continue;
      }
      const records = Trace.fromJSONL(read.jsonl).records();
      assert.equal(records.length, read.then.records, read.id);
      const { t_ns: _t, duration_ns: _d, ...record } = records[0] ?? { t_ns: 0, duration_ns: 0 };
      assert.deepEqual(record, JSON.parse(read.jsonl), read.id);
    }
  });
});
