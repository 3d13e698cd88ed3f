import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, it } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import canonicalize from "canonicalize";
import {
  Block,
  Continue,
  contentIdentity,
  Envelope,
  HookBus,
  middleware,
  RegistrationError,
  RunContext,
  TaskStartEvent,
  Trace,
  TraceFormatError,
  type Answer,
  type Event,
  type HookBusOptions,
  type JsonValue,
  type TraceRecord,
} from "../index.js";
import { toolCall, untimed } from "../testing/support.js";

// Content identity (I27). The corpus (trace/identity.json) pins the identities shared with the
// cores; these pin the canonicalizer, the domain's edges, the records and the reader.

/** The identity of the catalogue's tool.before sample (`toolCall()`), as the corpus has it. */
const SAMPLE = "sha256:b3ae181688c175cb66845adf2e2383d6d5157dc295c7d0b8b52329289291d59a";
/** ... and of it with `call.arguments.note = "checked"`. */
const NOTED = "sha256:c36fbf1a8ece8ffa6c8543aa7a298d61d1896240a50073633cbcc8ccf957f60e";
const noted = () => Continue(toolCall({ order: 42, amount_usd: 120, note: "checked" }));

interface Spec {
  readonly answer?: (event: Event) => Answer | Promise<Answer>;
  readonly failMode?: "closed" | "open";
  readonly mode?: "enforce" | "audit";
  readonly timeout?: string;
}

/** Emits the tool.before sample once through middleware answering as `specs` say. */
async function emit(options: HookBusOptions, specs: Readonly<Record<string, Spec>>, event: Event = toolCall()) {
  const bus = new HookBus(options);
  for (const [name, spec] of Object.entries(specs)) {
    const { answer = () => undefined, failMode = "closed", mode = "enforce", timeout } = spec;
    bus.register(middleware({ name, hooks: ["tool.before", "task.start"], failMode, mode, timeout }, answer));
  }
  const context = new RunContext({ envelope: new Envelope({ runId: "r" }) });
  const hook = event instanceof TaskStartEvent ? "task.start" : "tool.before";
  const result = await bus.emit(hook, event as never, context);
  return { result, records: context.trace.records(), trace: context.trace };
}

const identities = (record: TraceRecord | undefined) => [record?.input_identity, record?.enforced_identity];

describe("content identity (I27)", () => {
  it("hashes the RFC 8785 form of canonicalize: the golden value of the cores", () => {
    const json = '{"b":[1.0,1e21,-0.0,0.000001,1e-7,3.14],"a":"\\u00e9\\u0007","\\ue000":1,"\\ud83d\\ude00":2}';
    const text = canonicalize(JSON.parse(json)) as string;
    assert.equal(text, '{"a":"é\\u0007","b":[1,1e+21,0,0.000001,1e-7,3.14],"😀":2,"\ue000":1}');
    const hex = createHash("sha256").update(text, "utf8").digest("hex");
    assert.equal(hex, "577eda756ff01d94c02915fb9c71837ed185759ad04b3adde8769534b97a923f");
    assert.equal(contentIdentity(JSON.parse(json) as JsonValue), null); // 1e21: outside the domain
    const inside = JSON.parse(json.replace("1e21,", "")) as JsonValue;
    assert.match(contentIdentity(inside) ?? "", /^sha256:[0-9a-f]{64}$/);
  });

  it("of an event is that of its JSON form, key order aside", () => {
    assert.equal(contentIdentity(toolCall()), SAMPLE);
    assert.equal(contentIdentity(toolCall().toJSON()), SAMPLE);
    assert.equal(contentIdentity({ b: [1, -0], a: "x" }), contentIdentity({ a: "x", b: [1.0, 0] }));
    assert.notEqual(contentIdentity({ a: 1 }), contentIdentity({ a: "1" }));
  });

  it("is null outside I-JSON, and only there", () => {
    const inside: JsonValue[] = [2 ** 53 - 1, -(2 ** 53 - 1), 2 ** 52 - 0.5, 3.5, 1e-7, -0, "é😀", { "😀": [null, true] }, []];
    for (const value of inside) assert.match(contentIdentity(value) ?? "", /^sha256:/, String(value));
    // Every number from 2^53 on is an integer: 1.5e300 is as far outside as 2^53.
    const outside: JsonValue[] = [2 ** 53, -(2 ** 53), 1e21, 1.5e300, [1, 2 ** 60], NaN, Infinity, -Infinity, "a\ud800b", "\udc00", { a: { "\udc00": 1 } }, { "x\ud83d": 1 }];
    for (const value of outside) assert.equal(contentIdentity(value), null, JSON.stringify(value));
  });

  it("is null for a value nested deeper than the stack, never a crash", () => {
    let deep: JsonValue = [];
    for (let i = 0; i < 200_000; i++) deep = [deep];
    assert.equal(contentIdentity(deep), null);
  });

  it("refuses what is neither an event nor a JSON value", () => {
    const cyclic: Record<string, unknown> = {};
    cyclic["self"] = cyclic;
    const sparse = [1, , 2]; // a hole is no JSON value
    for (const value of [undefined, 1n, new Date(0), () => 1, { a: undefined }, cyclic, sparse, [Symbol("s")]]) {
      assert.throws(() => contentIdentity(value as never), TypeError);
    }
  });
});

describe("a bus's identity scheme (I27)", () => {
  it("is jcs-sha256 or none", () => {
    assert.equal(new HookBus({ identity: "jcs-sha256" }).identity, "jcs-sha256");
    assert.equal(new HookBus().identity, undefined);
    assert.equal(new HookBus({ identity: undefined }).identity, undefined);
    assert.equal(new HookBus({ identity: null as never }).identity, undefined);
  });

  it("refuses any other value with invalid_identity naming it", () => {
    const shownAs: [unknown, string][] = [
      ["sha256", "'sha256'"],
      ["JCS-SHA256", "'JCS-SHA256'"],
      ["", "''"],
      [true, "True"],
      [1, "1"],
      [["jcs-sha256"], "['jcs-sha256']"],
    ];
    for (const [value, shown] of shownAs) {
      assert.throws(
        () => new HookBus({ identity: value as never }),
        (error: unknown) =>
          error instanceof RegistrationError &&
          error.kind === "invalid_identity" &&
          error.rule === "I27" &&
          error.message === `invalid identity scheme ${shown}: the identity scheme is 'jcs-sha256', or None for no identities (I27)`,
      );
    }
  });
});

describe("hook records with an identity scheme (I27)", () => {
  const scheme = { identity: "jcs-sha256" } as const;

  it("name the event given and the event left, last before the timings; middleware records never do", async () => {
    const { records } = await emit(scheme, { look: {} });
    assert.deepEqual(records.map(Object.keys), [
      ["emit", "hook", "run", "step", "tool", "kind", "middleware", "band", "outcome", "modified", "t_ns", "duration_ns"],
      ["emit", "hook", "run", "step", "tool", "kind", "outcome", "modified", "input_identity", "enforced_identity", "t_ns", "duration_ns"],
    ]);
    assert.deepEqual(identities(records[1]), [SAMPLE, SAMPLE]);
    assert.ok(Object.isFrozen(records[1]));
  });

  it("are on an emit without middleware too", async () => {
    const event = new TaskStartEvent({ task: "t" });
    const { records } = await emit(scheme, {}, event);
    const id = contentIdentity(event);
    assert.deepEqual(untimed(records), [{ emit: 1, hook: "task.start", run: "r", kind: "hook", outcome: "continue", modified: false, input_identity: id, enforced_identity: id }]);
  });

  it("follow the modification that took effect, whatever the outcome", async () => {
    const modified = await emit(scheme, { note: { answer: noted } });
    assert.deepEqual(identities(modified.records.at(-1)), [SAMPLE, NOTED]);
    assert.equal(contentIdentity(modified.result.event), NOTED);
    const blocked = await emit(scheme, { note: { answer: noted }, gate: { answer: () => Block("no", { code: "denied" }) } });
    assert.deepEqual(untimed([blocked.records.at(-1) as TraceRecord]), [
      { emit: 1, hook: "tool.before", run: "r", step: 1, tool: "refund_payment", kind: "hook", outcome: "block", modified: false, code: "denied", input_identity: SAMPLE, enforced_identity: NOTED },
    ]);
  });

  it("ignore a modification that did not take effect: audited, or discarded by an open failure", async () => {
    const audited = await emit(scheme, { note: { answer: noted, mode: "audit" } });
    assert.deepEqual(identities(audited.records.at(-1)), [SAMPLE, SAMPLE]);
    const late = async () => {
      await delay(50);
      return noted();
    };
    const discarded = await emit(scheme, { note: { answer: late, failMode: "open", timeout: "5ms" } });
    assert.equal(discarded.records[0]?.failure, "timeout");
    assert.deepEqual(identities(discarded.records.at(-1)), [SAMPLE, SAMPLE]);
  });

  it("are null for an event outside I-JSON, in either place", async () => {
    const big = toolCall({ order: 2 ** 53, amount_usd: 120 });
    const into = await emit(scheme, { fix: { answer: () => Continue(toolCall()) } }, big);
    assert.deepEqual(identities(into.records.at(-1)), [null, SAMPLE]);
    const out = await emit(scheme, { grow: { answer: () => Continue(big) } });
    assert.deepEqual(identities(out.records.at(-1)), [SAMPLE, null]);
    assert.match(out.trace.toJSONL(), /"input_identity":"sha256:[0-9a-f]{64}","enforced_identity":null,"t_ns":/);
  });

  it("are never written without a scheme", async () => {
    const { records } = await emit({}, { note: { answer: noted } });
    for (const record of records) assert.ok(!("input_identity" in record) && !("enforced_identity" in record));
  });

  it("are not written for an emit cancelled from outside (I12)", async () => {
    const bus = new HookBus(scheme);
    bus.register(middleware({ name: "stuck", hooks: ["tool.before"], failMode: "closed" }, () => new Promise<Answer>(() => {})));
    const context = new RunContext();
    const controller = new AbortController();
    const emitted = bus.emit("tool.before", toolCall(), context, { signal: controller.signal });
    setTimeout(() => controller.abort(new Error("stop")), 5);
    await assert.rejects(emitted, /stop/);
    assert.equal(context.trace.length, 0); // the stuck middleware never answered: no record at all
  });
});

describe("reading identities back (I27)", () => {
  const hook = '{"emit":1,"hook":"tool.before","kind":"hook","outcome":"continue","modified":false';
  const outcome = '{"emit":1,"hook":"tool.before","kind":"outcome","middleware":"m","band":"app","outcome":"continue","modified":false';
  const id = `"sha256:${"0a".repeat(32)}"`;

  it("keeps them, null ones included, and writes the same bytes", async () => {
    for (const line of [`${hook},"input_identity":${id},"enforced_identity":null,"t_ns":1,"duration_ns":2}`, `${hook},"input_identity":null,"enforced_identity":${id},"t_ns":1,"duration_ns":2}`]) {
      const trace = Trace.fromJSONL(`${line}\n`);
      assert.equal(trace.toJSONL(), `${line}\n`);
    }
    const { trace } = await emit({ identity: "jcs-sha256" }, { note: { answer: noted } });
    const text = trace.toJSONL();
    assert.equal(Trace.fromJSONL(text).toJSONL(), text);
    assert.deepEqual(Trace.fromJSONL(text).records(), trace.records());
  });

  it("refuses them anywhere but on a hook record, alone, or malformed", () => {
    const bad: [string, RegExp][] = [
      [`${hook},"input_identity":${id}}`, /input_identity without its pair: a hook record has both or neither \(I27\)/],
      [`${hook},"enforced_identity":null}`, /enforced_identity without its pair/],
      [`${outcome},"input_identity":${id},"enforced_identity":${id}}`, /only a hook record has input_identity and enforced_identity \(I27\)/],
      [`${hook},"input_identity":"sha256:${"0A".repeat(32)}","enforced_identity":null}`, /invalid input_identity 'sha256:0A.*': null or sha256: and 64 hex digits \(I27\)/],
      [`${hook},"input_identity":null,"enforced_identity":"sha256:${"0".repeat(63)}"}`, /invalid enforced_identity/],
      [`${hook},"input_identity":null,"enforced_identity":"sha1:${"0".repeat(64)}"}`, /invalid enforced_identity/],
      [`${hook},"input_identity":${id},"enforced_identity":7}`, /invalid enforced_identity 7:/],
      [`${hook},"input_identity":${id.slice(0, -1)}\\n","enforced_identity":null}`, /invalid input_identity/],
    ];
    for (const [line, message] of bad) {
      assert.throws(
        () => Trace.fromJSONL(line),
        (error: unknown) => error instanceof TraceFormatError && error.kind === "invalid_trace" && message.test(error.message),
        line,
      );
    }
  });
});
