/**
 * harnessweaver.cedar (I38): the request mapping, every outcome, errors under the fail mode,
 * hostile input, the scope index against the whole set, and load problems at file:line.
 */

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  Envelope,
  HookBus,
  load,
  Message,
  ModelRequest,
  ModelRequestEvent,
  RunContext,
  ToolCall,
  ToolCallEvent,
  ToolResult,
  ToolResultEvent,
  ToolSpec,
  type JsonValue,
} from "../index.js";
import { cedar, CedarPolicySet, cedarWasm } from "../policies/cedar.js";
import { CedarEvaluationError, CedarLoadError, CedarRequestError } from "../policies/errors.js";
import { cedarRequest, MAX_DEPTH, toCedarValue } from "../policies/request.js";
import { statements } from "../policies/statements.js";
import { folder, onlyProblem, problems } from "./spec-support.js";

const HAVE = cedarWasm() !== null;
const skip = HAVE ? false : "@cedar-policy/cedar-wasm is not installed";

const call = (name: string, args: Record<string, JsonValue> = {}, step = 1) =>
  new ToolCallEvent({ step, tool: new ToolSpec({ name }), call: new ToolCall({ id: "c1", name, arguments: args }) });
const after = (name: string, isError: boolean) =>
  new ToolResultEvent({ tool: new ToolSpec({ name: "fallback" }), call: new ToolCall({ id: "c1", name }), result: new ToolResult({ output: "x", isError }) });
const modelRequest = (model: string) =>
  new ModelRequestEvent({
    step: 2,
    request: new ModelRequest({ model, messages: [new Message({ role: "user", content: "hi" })], tools: [new ToolSpec({ name: "search" }), new ToolSpec({ name: "pay" })] }),
  });

function compiled(policies: string, options: Parameters<typeof CedarPolicySet.compile>[1] = {}): CedarPolicySet {
  return CedarPolicySet.compile([{ file: "policies", text: policies }], options);
}

function thrown(action: () => unknown): Error {
  try {
    action();
  } catch (error) {
    assert.ok(error instanceof Error);
    return error;
  }
  assert.fail("nothing was thrown");
}

describe("cedar: the request mapping", () => {
  it("maps a tool call: principal, action, resource, context", () => {
    const request = cedarRequest("tool.before", call("refund", { amount: 12.0, note: null, tags: ["a", null] }, 3), { user: "ana", agent: "bot" }, null);
    assert.deepEqual(request, {
      principal: { type: "User", id: "ana" },
      action: { type: "Action", id: "tool.before" },
      resource: { type: "Tool", id: "refund" },
      context: { hook: "tool.before", step: 3, attributes: { user: "ana", agent: "bot" }, tool: "refund", arguments: { amount: 12, tags: ["a"] } },
    });
  });

  it("takes the agent, else the anonymous agent; types under a namespace", () => {
    assert.deepEqual(cedarRequest("tool.before", call("x"), { agent: "bot", user: 7 }, "Acme").principal, { type: "Acme::Agent", id: "bot" });
    assert.deepEqual(cedarRequest("tool.before", call("x"), null, "Acme::Sub").principal, { type: "Acme::Sub::Agent", id: "anonymous" });
    assert.deepEqual(cedarRequest("tool.before", call("x"), null, "Acme").action, { type: "Acme::Action", id: "tool.before" });
  });

  it("maps tool.after (is_error; the tool's name when the call has none) and model.before", () => {
    const unnamed = new ToolResultEvent({ tool: new ToolSpec({ name: "fallback" }), call: new ToolCall({ id: "c1", name: "" }), result: new ToolResult({ isError: true }) });
    const a = cedarRequest("tool.after", unnamed, {}, null);
    assert.deepEqual(a.resource, { type: "Tool", id: "fallback" });
    assert.equal(a.context["is_error"], true);
    const m = cedarRequest("model.before", modelRequest("gpt"), {}, null);
    assert.deepEqual(m.resource, { type: "Model", id: "gpt" });
    assert.deepEqual(m.context, { hook: "model.before", step: 2, attributes: {}, model: "gpt", tools: ["search", "pay"], messages: 1 });
  });

  it("keeps any string as an entity id (never Cedar text)", () => {
    const odd = 'a"::b\\ \u{1F600}';
    assert.deepEqual(cedarRequest("tool.before", call(odd), { user: odd }, null).principal, { type: "User", id: odd });
  });
});

describe("cedar: hostile input cannot become a request", () => {
  const cases: [string, JsonValue | string, string][] = [
    ["a fraction", { amount: 1.5 }, "context.arguments.amount"],
    ["past 2^53-1", { n: 2 ** 53 }, "context.arguments.n"],
    ["an __entity key", { x: { __entity: { type: "User", id: "root" } } }, "context.arguments.x.__entity"],
    ["an __extn key", { __extn: 1 }, "context.arguments.__extn"],
    ["an __expr key in a set", { s: [{ __expr: "x" }] }, "context.arguments.s[0].__expr"],
    ["a lone surrogate", { t: "ok\uD800" }, "context.arguments.t"],
    ["a lone surrogate in a key", { "k\uDC00": 1 }, 'context.arguments["k\\udc00"]'],
  ];
  for (const [what, args, path] of cases) {
    it(`refuses ${what}, naming ${path} and never the value`, () => {
      const error = thrown(() => cedarRequest("tool.before", call("t", args as Record<string, JsonValue>), {}, null));
      assert.ok(error instanceof CedarRequestError);
      assert.equal(error.name, "CedarRequestError");
      assert.equal(error.path, path);
      assert.ok(!error.message.includes("1.5") && !error.message.includes("root"), error.message);
    });
  }

  it("allows 32 levels of nesting, not 33", () => {
    const nest = (levels: number): JsonValue => (levels === 1 ? {} : { a: nest(levels - 1) });
    assert.ok(toCedarValue(nest(MAX_DEPTH), "x") !== null);
    const error = thrown(() => toCedarValue(nest(MAX_DEPTH + 1), "x"));
    assert.ok(error instanceof CedarRequestError && error.message.includes("nested deeper than 32"));
  });

  it("reads a huge string and a long odd key's path cut short", () => {
    const huge = "x".repeat(5_000_000);
    assert.equal((toCedarValue({ huge }, "p") as Record<string, string>)["huge"]?.length, huge.length);
    const error = thrown(() => toCedarValue({ ["é".repeat(100)]: 0.5 }, "p"));
    assert.ok(error instanceof CedarRequestError);
    assert.equal(error.path, `p["${"\\u00e9".repeat(64)}\\u2026"]`);
    const long = thrown(() => toCedarValue({ ["k".repeat(65)]: 0.5 }, "p"));
    assert.ok(long instanceof CedarRequestError);
    assert.equal(long.path, `p["${"k".repeat(64)}\\u2026"]`);
    assert.equal(long.message, `cannot build the Cedar request: a number that is not a whole number within ±(2^53-1) at ${long.path} (I38)`);
  });
});

describe("cedar: decisions → outcomes", { skip }, () => {
  const POLICIES = `
@id("search") permit(principal, action == Action::"tool.before", resource == Tool::"search");
@id("big-refund") forbid(principal, action, resource == Tool::"refund") when { context.arguments.amount > 100 };
@id("refund") @requireApproval("finance") permit(principal, action, resource == Tool::"refund");
@escalate permit(principal, action, resource == Tool::"pay");
permit(principal == User::"admin", action, resource);
@id("broken") permit(principal, action, resource == Tool::"odd") when { context.arguments.missing == 1 };
`;
  const set = compiled(POLICIES);

  it("permit → Continue; forbid → Block naming the policy; no permit → Block no_permit", () => {
    assert.deepEqual(set.decide("tool.before", call("search"), {}), { kind: "continue" });
    assert.deepEqual(set.decide("tool.before", call("refund", { amount: 500, secret: "hunter2" }), {}), {
      kind: "block",
      reason: "forbidden by Cedar policy big-refund",
      code: "cedar:big-refund",
    });
    assert.deepEqual(set.decide("tool.before", call("other"), {}), { kind: "block", reason: "no Cedar policy permits this request", code: "cedar:no_permit" });
    assert.deepEqual(compiled(POLICIES, { noDecision: "continue" }).decide("tool.before", call("other"), {}), { kind: "continue" });
  });

  it("an annotated permit → Suspend with the approver role (absent without a value)", () => {
    assert.deepEqual(set.decide("tool.before", call("refund", { amount: 5 }), {}), {
      kind: "suspend",
      reason: "approval required by Cedar policy refund",
      approverRole: "finance",
      code: "cedar:refund",
    });
    assert.deepEqual(set.decide("tool.before", call("pay"), {}), {
      kind: "suspend",
      reason: "approval required by Cedar policy policy3",
      approverRole: null,
      code: "cedar:policy3",
    });
    // The admin's own permit determines too, but is not annotated: still a Suspend for the annotated one.
    assert.equal(set.decide("tool.before", call("pay"), { user: "admin" }).kind, "suspend");
  });

  it("an erroring policy: CedarEvaluationError (fail) or Cedar's own semantics (skip)", () => {
    const error = thrown(() => set.decide("tool.before", call("odd"), {}));
    assert.ok(error instanceof CedarEvaluationError);
    assert.equal(error.name, "CedarEvaluationError");
    assert.deepEqual(error.policies, ["broken"]);
    assert.equal(compiled(POLICIES, { onError: "skip" }).decide("tool.before", call("odd"), {}).kind, "block");
  });

  it("under the bus, an error is a failure under the fail mode: closed blocks", async () => {
    const dir = folder({ "p.cedar": POLICIES });
    const bus = new HookBus();
    const cwd = process.cwd();
    process.chdir(dir); // built in code: paths are relative to the working directory
    try {
      bus.register(cedar.build({ policies: "p.cedar", no_decision: "block", on_error: "fail" }));
    } finally {
      process.chdir(cwd);
    }
    const ctx = new RunContext({ envelope: new Envelope({ attributes: {} }) });
    const failed = await bus.emit("tool.before", call("odd"), ctx);
    assert.equal(failed.outcome.kind, "block");
    const hostile = await bus.emit("tool.before", call("search", { n: 0.5 }), ctx);
    assert.equal(hostile.outcome.kind, "block");
    const errors = ctx.trace.records().map((record) => record["error"]);
    assert.deepEqual(errors.filter(Boolean), ["CedarEvaluationError", "CedarRequestError"]);
    assert.equal((await bus.emit("tool.before", call("search"), ctx)).outcome.kind, "continue");
  });

  it("tool.after and model.before are decided too", () => {
    const s = compiled(`forbid(principal, action == Action::"tool.after", resource) when { context.is_error };
permit(principal, action, resource);
forbid(principal, action, resource == Model::"big") when { context.tools.contains("pay") };`);
    assert.equal(s.decide("tool.after", after("x", true), {}).kind, "block");
    assert.equal(s.decide("tool.after", after("x", false), {}).kind, "continue");
    assert.equal(s.decide("model.before", modelRequest("big"), {}).kind, "block");
    assert.equal(s.decide("model.before", modelRequest("small"), {}).kind, "continue");
  });

  it("cuts a code to 128 code points", () => {
    const id = "\u{1F600}".repeat(200);
    const outcome = compiled(`@id("${id}") forbid(principal, action, resource);`).decide("tool.before", call("x"), {});
    assert.equal(outcome.kind, "block");
    assert.equal(Array.from((outcome as { code: string }).code).length, 128);
  });
});

describe("cedar: the scope index decides as the whole set does", { skip }, () => {
  it("gives the same answer sliced and whole for random policies and requests", () => {
    const tools = ["a", "b", "c", 'q"x'];
    const scope = (variable: string, values: string[], type: string) =>
      fc.constantFrom(variable, ...values.map((v) => `${variable} == ${type}::${JSON.stringify(v)}`), `${variable} in ${type}::"a"`);
    const policy = fc
      .tuple(
        fc.constantFrom("permit", "forbid"),
        scope("action", ["tool.before", "tool.after", "model.before"], "Action"),
        scope("resource", tools, "Tool"),
        fc.constantFrom("", " when { context.step > 1 }", " when { context.arguments.n == 1 }", " unless { context.hook == \"tool.before\" }"),
        fc.constantFrom("", "@requireApproval ", '@escalate("ops") '),
      )
      .map(([effect, action, resource, when, note]) => `${note}${effect}(principal, ${action}, ${resource})${when};`);
    fc.assert(
      fc.property(fc.array(policy, { minLength: 1, maxLength: 12 }), fc.constantFrom(...tools, "zzz"), fc.integer({ min: 0, max: 3 }), fc.boolean(), (texts, tool, step, hasN) => {
        const set = compiled(texts.join("\n"));
        for (const onError of ["fail", "skip"] as const) {
          const request = cedarRequest("tool.before", call(tool, hasN ? { n: step } : {}, step), {}, null);
          const whole = set.answer(request, false);
          const sliced = set.answer(request, true);
          assert.equal(sliced.response?.decision, whole.response?.decision, onError);
          assert.deepEqual([...(sliced.response?.diagnostics.reason ?? [])].sort(), [...(whole.response?.diagnostics.reason ?? [])].sort());
          assert.deepEqual(
            sliced.response?.diagnostics.errors.map((e) => e.policyId).sort(),
            whole.response?.diagnostics.errors.map((e) => e.policyId).sort(),
          );
        }
      }),
      { numRuns: 150, seed: 38 },
    );
  });

  it("loads 1,000 policies (and names the ids as written)", () => {
    const text = Array.from({ length: 1000 }, (_, i) => `@id("p${i}") permit(principal, action == Action::"tool.before", resource == Tool::"t${i}");`).join("\n");
    const set = compiled(text);
    assert.equal(set.size, 1000);
    assert.equal(set.ids[999], "p999");
    assert.deepEqual(set.decide("tool.before", call("t7"), {}), { kind: "continue" });
  });
});

describe("cedar: statements", () => {
  it("splits at ; outside strings and comments, at the line of the first token", () => {
    const found = statements('// a; comment\npermit(principal, action, resource) when { context.x == "a;b" };\n\n  forbid(principal, action, resource)\n// tail;');
    assert.deepEqual(
      found.map((s) => s.line),
      [2, 4],
    );
  });
});

describe("cedar: load problems at file:line (I38)", { skip }, () => {
  const spec = (item: string) => `middleware:\n  - use: harnessweaver.cedar\n    id: tool_policy\n${item}`;

  it("names the bad statement's file and line, joined across files", async () => {
    const dir = folder({
      "harness.yaml": spec("    policies: [a.cedar, sub/b.cedar]\n"),
      "a.cedar": "permit(principal, action, resource);\n",
      "sub/b.cedar": "// lead\n\n  forbid(principal, action, resource) when { context.x ;\n",
    });
    const problem = await onlyProblem(join(dir, "harness.yaml"));
    assert.equal(problem.kind, "invalid_policy");
    assert.equal(problem.rule, "I38");
    assert.equal(problem.line, 4);
    assert.match(problem.message, /^sub\/b\.cedar:3: the policy does not parse: .+ \(I38\)$/);
  });

  it("reports templates, equal shown ids, missing files, schemas, entities", async () => {
    const expect = async (files: Record<string, string>, item: string, message: RegExp) => {
      const dir = folder({ "harness.yaml": spec(item), ...files });
      const problem = await onlyProblem(join(dir, "harness.yaml"));
      assert.match(problem.message, message, String(problem));
    };
    await expect({ "p.cedar": "permit(principal, action, resource);\npermit(principal == ?principal, action, resource);" }, "    policies: p.cedar\n", /^p\.cedar:2: policy policy1 is a template/);
    await expect({ "a.cedar": '@id("x")\npermit(principal, action, resource);', "b.cedar": '\n\n@id("x") forbid(principal, action, resource);' }, "    policies: [a.cedar, b.cedar]\n", /^b\.cedar:3: the policy id "x" is already used by the policy at a\.cedar:1 \(I38\)$/);
    await expect({}, "    policies: nothere.cedar\n", /^nothere\.cedar:1: the file does not exist \(I38\)$/);
    await expect({ "p.cedar": "permit(principal, action, resource);", "s.json": '{\n  "": {\n  ,\n}' }, "    policies: p.cedar\n    schema: s.json\n", /^s\.json:3: the schema is not JSON \(I38\)$/);
    await expect(
      { "p.cedar": "permit(principal, action, resource);\n@id(\"bad\") permit(principal, action, resource) when { context.nope };", "s.cedarschema": 'entity Agent; entity Tool; action "tool.before" appliesTo { principal: Agent, resource: Tool, context: {} };' },
      "    policies: p.cedar\n    schema: s.cedarschema\n",
      /^p\.cedar:2: the schema rejects policy bad: /,
    );
    await expect({ "p.cedar": "permit(principal, action, resource);", "e.json": "[\n{\"uid\": 1}\n]" }, "    policies: p.cedar\n    entities: e.json\n", /^e\.json:1: the entities do not parse: /);
    await expect({ "p.cedar": "permit(principal, action, resource);" }, '    policies: p.cedar\n    namespace: "Acme::in"\n', /^harness\.yaml:5: the namespace "Acme::in" is not a Cedar name \(Name or A::B\) \(I38\)$/);
  });

  it("refuses a hook point outside the three, defaults to tool.before, and shows the files it loads", async () => {
    const bad = folder({ "harness.yaml": spec("    hooks: [model.after]\n    policies: p.cedar\n"), "p.cedar": "permit(principal, action, resource);" });
    const found = await problems(join(bad, "harness.yaml"));
    assert.deepEqual(
      found.map(String),
      ["harness.yaml:4: middleware[0] (harnessweaver.cedar): harness.yaml:4: harnessweaver.cedar runs on model.before, tool.before, tool.after, not 'model.after' (I38)"],
    );
    const good = folder({ "harness.yaml": spec("    policies: p.cedar\n    entities: e.json\n"), "p.cedar": "permit(principal, action, resource);", "e.json": "[]" });
    const harness = await load(join(good, "harness.yaml"));
    assert.deepEqual(harness.entry("tool_policy").declaration.hooks, ["tool.before"]);
    assert.deepEqual(harness.entry("tool_policy").loads, ["p.cedar", "e.json"]);
    assert.match(harness.render("text"), /\n {5}loads: p\.cedar, e\.json\n/);
    const json = JSON.parse(harness.render("json")) as { hooks: { hook: string; chain: Record<string, unknown>[] }[] };
    const entry = json.hooks.find((hook) => hook.hook === "tool.before")?.chain[0] ?? {};
    assert.deepEqual(entry["loads"], ["p.cedar", "e.json"]);
    assert.equal(Object.keys(entry).at(-1), "loads");
  });
});

describe("cedar: files that split a policy, and problem order", { skip }, () => {
  it("keeps Cedar's ids when a policy runs from one file into the next", () => {
    const texts = Array.from({ length: 11 }, (_, i) => `@id("n${i}") permit(principal, action, resource == Tool::"t${i}");`).join("\n");
    const set = CedarPolicySet.compile([
      { file: "a", text: `${texts}\nforbid(principal, action,` },
      { file: "b", text: 'resource == Tool::"t2");\n@id("last") forbid(principal, action, resource == Tool::"t10");' },
    ]);
    assert.equal(set.size, 13);
    assert.equal(set.ids[11], "policy11");
    assert.deepEqual(set.decide("tool.before", call("t2"), {}), { kind: "block", reason: "forbidden by Cedar policy policy11", code: "cedar:policy11" });
    assert.deepEqual(set.decide("tool.before", call("t10"), {}), { kind: "block", reason: "forbidden by Cedar policy last", code: "cedar:last" });
    assert.deepEqual(set.decide("tool.before", call("t3"), {}), { kind: "continue" });
  });

  it("reports a statement that does not parse before an earlier template", () => {
    const error = thrown(() => compiled("permit(principal == ?principal, action, resource);\n\npermit(principal, action, resource) when {;"));
    assert.ok(error instanceof CedarLoadError);
    assert.equal(error.line, 3);
    assert.match(error.message, /the policy does not parse/);
    const template = thrown(() => compiled("permit(principal, action, resource);\npermit(principal, action, resource == ?resource);"));
    assert.match(template.message, /^policies:2: policy policy1 is a template/);
  });

  it("writes ids and namespaces in messages as Python's json.dumps does", () => {
    assert.match(thrown(() => compiled('@id("é") permit(principal, action, resource);\n@id("é") permit(principal, action, resource);')).message, /the policy id "\\u00e9" is already used/);
    assert.match(thrown(() => compiled("permit(principal, action, resource);", { namespace: "Ä" })).message, /^the namespace "\\u00c4" is not a Cedar name/);
  });
});

describe("cedar: a load error in code", { skip }, () => {
  it("is a CedarLoadError naming the place and the rule", () => {
    const error = thrown(() => compiled("permit(principal, action, resource);\nforbid(principal, action, resource) when {"));
    assert.ok(error instanceof CedarLoadError);
    assert.equal(error.line, 2);
    assert.match(error.message, /^policies:2: the policy does not parse: .* \(I38\)$/);
  });
});

describe("cedar: the conformance testee", { skip }, () => {
  it("declares the feature cedar and decides a cedar behaviour", () => {
    const runner = fileURLToPath(new URL("../runner.js", import.meta.url));
    const middleware = [
      { name: "policy", hooks: ["tool.before"], fail_mode: "closed", band: "app", does: { cedar: { policies: 'forbid(principal, action, resource == Tool::"rm");\npermit(principal, action, resource);' } } },
    ];
    const event = (name: string) => ({ step: 1, tool: { name, description: "", parameters: {} }, call: { id: "c1", name, arguments: {} } });
    const testCase = { id: "t", given: { middleware }, when: [{ emit: "tool.before", event: event("rm") }, { emit: "tool.before", event: event("ls") }], then: {} };
    const input = [{ cmd: "hello" }, { cmd: "run", seq: 1, case: testCase }, { cmd: "stop" }].map((line) => JSON.stringify(line)).join("\n");
    const done = spawnSync(process.execPath, [runner], { input, encoding: "utf8" });
    assert.equal(done.status, 0, done.stderr);
    const [hello, reply] = done.stdout.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    assert.ok((hello?.["features"] as string[]).includes("cedar"));
    const emits = ((reply?.["actual"] as Record<string, unknown> | undefined)?.["emits"] ?? []) as { outcome: { kind: string; code?: string } }[];
    assert.deepEqual(
      emits.map((emit) => [emit.outcome.kind, emit.outcome.code ?? null]),
      [
        ["block", "cedar:policy0"],
        ["continue", null],
      ],
    );
  });
});
