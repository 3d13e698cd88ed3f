import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Envelope, FixedClock, RunContext, SystemClock, Trace } from "../index.js";

describe("envelope and clocks", () => {
  it("judges the weekend at the offset the instant was written in", () => {
    assert.equal(new FixedClock("2026-11-28T10:00:00+00:00").isWeekend(), true); // Saturday
    assert.equal(new FixedClock("2026-11-29T18:30:00+00:00").isWeekend(), true); // Sunday
    assert.equal(new FixedClock("2026-11-30T12:00:00+00:00").isWeekend(), false); // Monday
    assert.equal(new FixedClock("2026-11-27T23:30:00-02:00").isWeekend(), false); // Friday there, Saturday in UTC
    assert.equal(new FixedClock("2026-11-30T00:30:00+01:00").isWeekend(), false); // Monday there, Sunday in UTC
    assert.equal(new FixedClock("2026-11-28T10:00:00Z").now().toISOString(), "2026-11-28T10:00:00.000Z");
  });

  it("needs an offset, and copies dates", () => {
    assert.throws(() => new FixedClock("2026-11-28T10:00:00"), RangeError);
    assert.throws(() => new FixedClock("not a date"), RangeError);
    const date = new Date("2026-11-28T05:00:00Z");
    const clock = new FixedClock(date, { offsetMinutes: -600 });
    date.setUTCFullYear(2000);
    assert.equal(clock.now().getUTCFullYear(), 2026);
    assert.equal(clock.isWeekend(), false); // 05:00 Saturday UTC is 19:00 Friday at -10:00
  });

  it("has a real clock in UTC or a given zone", () => {
    const clock = new SystemClock({ timeZone: "Asia/Tokyo" });
    assert.equal(typeof clock.isWeekend(), "boolean");
    assert.ok(Math.abs(clock.now().getTime() - Date.now()) < 1_000);
    assert.throws(() => new SystemClock({ timeZone: "Mars/Olympus" }), RangeError);
  });

  it("is immutable and injectable", () => {
    const envelope = new Envelope({ clock: new FixedClock("2026-11-28T10:00:00+00:00"), runId: "r1", attributes: { tenant: "acme" } });
    assert.equal(envelope.isWeekend(), true);
    assert.equal(envelope.now().toISOString(), "2026-11-28T10:00:00.000Z");
    assert.ok(Object.isFrozen(envelope) && Object.isFrozen(envelope.attributes));
    assert.match(new Envelope().runId, /^[0-9a-f]{32}$/);
    assert.throws(() => new Envelope({ clock: {} as never }), TypeError);
  });

  it("gives each run context its own trace unless one is given", () => {
    const trace = new Trace();
    assert.notEqual(new RunContext().trace, new RunContext().trace);
    assert.equal(new RunContext({ trace }).trace, trace);
    assert.throws(() => new RunContext({ trace: [] as never }), TypeError);
  });
});
