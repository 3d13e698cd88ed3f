import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DeclarationError, parseDuration } from "../index.js";
import { parseDurationNs } from "../duration.js";

describe("durations (ruling 15)", () => {
  it("parses text with a unit exactly", () => {
    assert.equal(parseDurationNs("250ms"), 250_000_000n);
    assert.equal(parseDurationNs("2s"), 2_000_000_000n);
    assert.equal(parseDurationNs("1.5s"), 1_500_000_000n);
    assert.equal(parseDurationNs("1m"), 60_000_000_000n);
    assert.equal(parseDurationNs(".5s"), 500_000_000n);
    assert.equal(parseDurationNs("0.1s"), 100_000_000n); // exact, although 0.1 is not binary
  });

  it("takes numbers as seconds", () => {
    assert.equal(parseDuration(2), 2);
    assert.equal(parseDuration(0.5), 0.5);
    assert.equal(parseDurationNs(0.05), 50_000_000n);
    assert.equal(parseDuration("250ms"), 0.25);
  });

  it("rounds half up to the nanosecond", () => {
    assert.equal(parseDurationNs("1.0000000005s"), 1_000_000_001n);
    assert.equal(parseDurationNs("1.0000000004999s"), 1_000_000_000n);
    assert.equal(parseDurationNs("0.0000005ms"), 1n);
    assert.equal(parseDurationNs(1.5e-9), 2n);
  });

  const rejected: unknown[] = [
    0, -1, -0.5, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 1e-10, 1e300,
    true, false, null, [], {}, "", "abc", "2h", "1.5", "ms", "2 s", " 2s", "2s ", "2S", "2MS", "0s",
    "0.0s", "-1s", "+1s", "1e3s", "1.s", "0.0000000004s", "1,5s", "２s", "18446744073.709551616s",
  ];
  for (const value of rejected) {
    it(`rejects ${JSON.stringify(value) ?? String(value)}`, () => {
      assert.throws(
        () => parseDurationNs(value),
        (error: unknown) =>
          error instanceof DeclarationError && error.kind === "invalid_duration" && error.rule === "ruling-15",
      );
    });
  }

  it("names the value and the rule in the message", () => {
    assert.throws(() => parseDurationNs("2 s"), {
      message:
        "invalid timeout '2 s': a timeout is a positive number of seconds or a string with a unit such as 250ms, 2s, 1.5s or 1m (ruling 15)",
    });
    assert.throws(() => parseDurationNs(true), { message: /^invalid timeout True: .*\(ruling 15\)$/ });
    assert.throws(() => parseDurationNs(-1), { message: /^invalid timeout -1: / });
  });

  it("accepts the largest duration, 2^64-1 ns", () => {
    assert.equal(parseDurationNs("18446744073.709551615s"), 2n ** 64n - 1n);
  });
});
