/**
 * harnessweaver.cedar decides the same in TypeScript and Python (I38): random policy sets and
 * events, decided by this package on cedar-wasm and by the Python built-in on cedarpy, must
 * give identical outcomes (kind, reason, code, approver role) or fail with the same error and
 * message (a CedarRequestError names the same path, a CedarEvaluationError the same policies).
 */

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, it } from "node:test";
import fc from "fast-check";
import { eventFromJSON, type Event, type JsonValue } from "../index.js";
import { CedarPolicySet, cedarWasm, jsonFault } from "../policies/cedar.js";
import type { PolicyHook } from "../policies/request.js";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));

type Verdict = (string | null)[];

const PY_DECIDE = String.raw`
import json, sys
from harnessweaver.events import ModelRequestEvent, ToolCallEvent, ToolResultEvent
from harnessweaver.policies.cedar import CedarPolicySet, PolicySource
TYPES = {"tool.before": ToolCallEvent, "tool.after": ToolResultEvent, "model.before": ModelRequestEvent}
out = []
for case in json.load(sys.stdin):
    try:
        policies = CedarPolicySet.compile([PolicySource("policies", case["policies"])], namespace=case["namespace"], no_decision=case["no_decision"], on_error=case["on_error"])
    except Exception as exc:
        out.append([["load", type(exc).__name__, str(exc)]])
        continue
    answers = []
    for emit in case["emits"]:
        event = TYPES[emit["hook"]].model_validate(emit["event"])
        try:
            o = policies.decide(emit["hook"], event, emit["attributes"])
            answers.append([o.kind, getattr(o, "reason", None), getattr(o, "code", None), getattr(o, "approver_role", None)])
        except Exception as exc:
            answers.append(["error", type(exc).__name__, str(exc), None])
    out.append(answers)
json.dump(out, sys.stdout)
`;

interface Emit {
  readonly hook: PolicyHook;
  readonly event: JsonValue;
  readonly attributes: Record<string, JsonValue>;
}
interface Case {
  readonly policies: string;
  readonly namespace: string | null;
  readonly no_decision: "block" | "continue";
  readonly on_error: "fail" | "skip";
  readonly emits: readonly Emit[];
}

function python(cases: readonly Case[]): Verdict[][] | null {
  for (const candidate of [process.env["HARNESSWEAVER_TEST_PYTHON"], "python3"]) {
    if (!candidate) continue;
    const done = spawnSync(candidate, ["-c", PY_DECIDE], {
      input: JSON.stringify(cases),
      env: { ...process.env, PYTHONPATH: join(REPO, "python") },
      maxBuffer: 64 * 1024 * 1024,
    });
    if (done.status === 0) return JSON.parse(done.stdout.toString("utf8")) as Verdict[][];
  }
  return null;
}

function typescript(testCase: Case): Verdict[] {
  let policies: CedarPolicySet;
  try {
    policies = CedarPolicySet.compile([{ file: "policies", text: testCase.policies }], { namespace: testCase.namespace, noDecision: testCase.no_decision, onError: testCase.on_error });
  } catch (error) {
    return [["load", (error as Error).name, (error as Error).message]];
  }
  return testCase.emits.map((emit) => {
    const event = eventFromJSON(emit.hook, emit.event) as Event;
    try {
      const o = policies.decide(emit.hook, event, emit.attributes) as { kind: string; reason?: string; code?: string | null; approverRole?: string | null };
      return [o.kind, o.reason ?? null, o.code ?? null, o.approverRole ?? null];
    } catch (error) {
      return ["error", (error as Error).name, (error as Error).message, null];
    }
  });
}

const TOOLS = ["search", "refund", "pay", "a b"];
const ARGS = fc.dictionary(
  fc.constantFrom("amount", "path", "to", "__entity", "n"),
  fc.oneof(fc.integer({ min: -5, max: 500 }), fc.constantFrom(1.5, 2 ** 53, "/etc/passwd", "/home/x", true, null), fc.constant([1, "x", null])),
  { maxKeys: 3 },
);
const POLICY = fc
  .tuple(
    fc.constantFrom("permit", "forbid"),
    fc.constantFrom("principal", 'principal == User::"ana"', "principal is Agent"),
    fc.constantFrom("action", 'action == Action::"tool.before"', 'action == Acme::Action::"tool.before"', 'action == Action::"model.before"', 'action in [Action::"tool.after", Action::"tool.before"]'),
    fc.constantFrom("resource", ...TOOLS.map((t) => `resource == Tool::${JSON.stringify(t)}`), 'resource == Model::"gpt"', 'resource == Acme::Tool::"pay"', "resource is Acme::Tool"),
    fc.constantFrom(
      "",
      " when { context.arguments has amount && context.arguments.amount > 100 }",
      " when { context.arguments.amount > 100 }",
      ' when { context.arguments has path && context.arguments.path like "/etc/*" }',
      " when { context.step >= 2 }",
      ' when { context.attributes has team && context.attributes.team == "ops" }',
      " when { context has tools && context.tools.contains(\"pay\") }",
      " when { context.arguments.amount + 9223372036854775807 > 0 }",
    ),
    fc.constantFrom("", "", '@id("x") ', '@id("y") ', "@requireApproval ", '@requireApproval("finance") ', '@escalate("ops") ', '@id("z") @escalate @requireApproval("lead") '),
  )
  .map(([effect, principal, action, resource, when, note]) => `${note}${effect}(${principal}, ${action}, ${resource})${when};`);

const EMIT: fc.Arbitrary<Emit> = fc.oneof(
  fc.tuple(fc.constantFrom("tool.before", "tool.after"), fc.constantFrom(...TOOLS), ARGS, fc.integer({ min: 0, max: 3 }), fc.boolean()).map(([hook, tool, args, step, isError]) => ({
    hook: hook as PolicyHook,
    event: {
      step,
      tool: { name: tool, description: "", parameters: {} },
      call: { id: "c1", name: tool, arguments: args },
      ...(hook === "tool.after" ? { result: { output: "x", is_error: isError, truncated: false } } : {}),
    } as JsonValue,
    attributes: {},
  })),
  fc.constantFrom("gpt", "small").map((model) => ({
    hook: "model.before" as PolicyHook,
    event: { step: 1, request: { model, messages: [], tools: [{ name: "pay", description: "", parameters: {} }] } },
    attributes: {},
  })),
);
const ATTRIBUTES = fc.constantFrom<Record<string, JsonValue>>({}, { user: "ana" }, { agent: "bot", team: "ops" }, { user: "bob", team: 1.5 });

describe("cedar: TypeScript and Python decide alike", { skip: cedarWasm() === null ? "@cedar-policy/cedar-wasm is not installed" : false }, () => {
  it("gives identical outcomes for random policy sets and events", (t) => {
    const cases = fc.sample(
      fc.record({
        policies: fc.array(POLICY, { minLength: 0, maxLength: 8 }).map((texts) => texts.join("\n")),
        namespace: fc.constantFrom(null, null, "Acme"),
        no_decision: fc.constantFrom("block", "continue"),
        on_error: fc.constantFrom("fail", "skip"),
        emits: fc.array(fc.tuple(EMIT, ATTRIBUTES).map(([emit, attributes]) => ({ ...emit, attributes })), { minLength: 1, maxLength: 6 }),
      }) as fc.Arbitrary<Case>,
      { numRuns: 300, seed: 38 },
    );
    const theirs = python(cases);
    if (theirs === null) return t.skip("no Python with harnessweaver.policies and cedarpy (set HARNESSWEAVER_TEST_PYTHON)");
    const mine = cases.map(typescript);
    const differ = cases.flatMap((testCase, i) => (JSON.stringify(mine[i]) === JSON.stringify(theirs[i]) ? [] : [{ testCase, mine: mine[i], theirs: theirs[i] }]));
    assert.deepEqual(differ.slice(0, 3), []);
    const kinds = new Set(mine.flat().map((verdict) => verdict[0]));
    for (const kind of ["continue", "block", "suspend", "error"]) assert.ok(kinds.has(kind), `some answer is ${kind}`);
  });
});

const PY_JSON_LINES = String.raw`
import json, sys
out = []
for text in json.load(sys.stdin):
    try:
        json.loads(text)
        out.append(None)
    except json.JSONDecodeError as exc:
        out.append(exc.lineno)
json.dump(out, sys.stdout)
`;

describe("cedar: a JSON file's fault is on the line Python names", () => {
  it("gives Python's line for random broken JSON", (t) => {
    const texts = fc.sample(
      fc
        .tuple(fc.json({ maxDepth: 3 }), fc.nat(), fc.constantFrom("", ",", "}", "]", "\n", '"', "tru", "1 2", "\t", "{", ":"), fc.boolean())
        .map(([json, at, insert, cut]) => {
          const text = JSON.stringify(JSON.parse(json), null, 1);
          const k = at % (text.length + 1);
          return cut ? text.slice(0, k) + text.slice(k + 1) : text.slice(0, k) + insert + text.slice(k);
        }),
      { numRuns: 2000, seed: 38 },
    );
    let theirs: (number | null)[] | null = null;
    for (const candidate of [process.env["HARNESSWEAVER_TEST_PYTHON"], "python3"]) {
      if (!candidate || theirs !== null) continue;
      const done = spawnSync(candidate, ["-c", PY_JSON_LINES], { input: JSON.stringify(texts), maxBuffer: 64 * 1024 * 1024 });
      if (done.status === 0) theirs = JSON.parse(done.stdout.toString("utf8")) as (number | null)[];
    }
    if (theirs === null) return t.skip("no Python (set HARNESSWEAVER_TEST_PYTHON)");
    const mine = texts.map((text) => {
      try {
        JSON.parse(text);
        return null;
      } catch {
        return text.slice(0, jsonFault(text)).split("\n").length;
      }
    });
    const differ = texts.filter((_, i) => mine[i] !== theirs[i]).slice(0, 5);
    assert.deepEqual(differ, []);
    assert.ok(mine.some((line) => line !== null && line > 1), "some fault is past the first line");
  });
});
