// The built-in plugin in TypeScript: the same names, hook points, fail modes and settings as
// Python's (python/harnessweaver/builtins/), the built-in profiles loading against it, and the
// four built-ins that are not guards (tool_allowlist, max_messages, redact_secrets is in
// builtins-redaction, require_citations).

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { Ajv2020 } from "ajv/dist/2020.js";
import { parse } from "yaml";
import {
  Block,
  builtinPlugin,
  BUILTIN_PROFILES,
  Continue,
  Envelope,
  HookBus,
  isConfigurable,
  Message,
  ModelRequest,
  ModelRequestEvent,
  ModelResponse,
  ModelResponseEvent,
  Retry,
  RunContext,
  ToolCall,
  ToolCallEvent,
  ToolSpec,
  type Configurable,
} from "../index.js";
import { harnessSchema } from "../builtins/assets.js";
import { maxMessages, requireCitations, toolAllowlist } from "../builtins/index.js";

const run = () => new RunContext({ envelope: new Envelope({ runId: "run-1" }) });
const call = (name: string) => new ToolCallEvent({ tool: new ToolSpec({ name }), call: new ToolCall({ id: "c1", name }) });
const user = (content: string) => new Message({ role: "user", content });

/** Python's declarations: `hw.builtins.plugin`'s middleware, their hooks and fail modes. */
const PYTHON: Record<string, [string[], "open" | "closed"]> = {
  tool_allowlist: [["tool.before"], "closed"],
  max_messages: [["model.before"], "closed"],
  redact_secrets: [["tool.before", "model.before"], "open"],
  require_citations: [["model.after"], "open"],
  loop_guard: [["tool.before", "model.before", "task.end"], "closed"],
  budget_guard: [["model.before", "model.after", "task.end"], "closed"],
  tool_failure_guard: [["tool.before", "tool.after", "task.end"], "closed"],
  redact_pii: [["task.start", "model.before", "tool.before", "tool.after"], "closed"],
  rate_limit: [["tool.before", "model.before"], "closed"],
  tool_denylist: [["tool.before"], "closed"],
  shell_guard: [["tool.before"], "closed"],
  cedar: [["model.before", "tool.before", "tool.after"], "closed"],
  authzen: [["model.before", "tool.before", "tool.after"], "closed"],
};

function validator(configurable: Configurable) {
  const ajv = new Ajv2020({ useDefaults: true, strict: false, allErrors: true });
  return ajv.compile(configurable.settings);
}

/** The settings as the loader gives them: validated by the schema, defaults applied. */
function validated(configurable: Configurable, settings: Record<string, unknown>): Record<string, unknown> {
  const copy = structuredClone(settings);
  const check = validator(configurable);
  assert.ok(check(copy), `${configurable.declaration.name} ${JSON.stringify(settings)}: ${JSON.stringify(check.errors)}`);
  return copy;
}

const byName = (name: string) => builtinPlugin.get(name) as Configurable;

describe("builtins: the plugin", () => {
  it("has Python's middleware, in Python's order, with Python's hook points and fail modes", () => {
    assert.equal(builtinPlugin.namespace, "harnessweaver");
    assert.deepEqual(builtinPlugin.names(), Object.keys(PYTHON).map((name) => `harnessweaver.${name}`));
    for (const [name, [hooks, failMode]] of Object.entries(PYTHON)) {
      const item = byName(name);
      assert.ok(isConfigurable(item), name);
      assert.deepEqual([...item.declaration.hooks].sort(), [...hooks].sort(), name);
      assert.equal(item.declaration.failMode, failMode, name);
      assert.equal(item.declaration.band, "app", name);
      assert.equal(item.declaration.timeout, null, name);
    }
  });

  it("takes each settings schema from harness.schema.json's $defs", () => {
    const defs = harnessSchema().$defs ?? {};
    for (const name of Object.keys(PYTHON)) assert.deepEqual(byName(name).settings, defs[`settings.harnessweaver.${name}`], name);
  });

  it("refuses, by the schema, what pydantic refuses", () => {
    const refused: [string, Record<string, unknown>][] = [
      ["loop_guard", { block_after: 1 }],
      ["loop_guard", { warn_after: "often" }],
      ["loop_guard", { windows: 3 }],
      ["loop_guard", { window: 10_001 }],
      ["budget_guard", { max_tokens: 0 }],
      ["budget_guard", { max_cost_usd: -1 }],
      ["budget_guard", { max_tokens: 9, warn_at: 1 }],
      ["budget_guard", { max_tokens: 9, warn_at: "soon" }],
      ["budget_guard", { max_tokens: 9, max_usd: 1 }],
      ["tool_failure_guard", { max_consecutive: 0 }],
      ["tool_failure_guard", { max_total: 1.5 }],
      ["tool_failure_guard", { threshold: 3 }],
      ["redact_pii", { detect: ["ssn"] }],
      ["redact_pii", { patterns: ["x"] }],
      ["redact_pii", { replace: "x" }],
      ["tool_allowlist", {}],
      ["tool_allowlist", { allow: [] }],
      ["max_messages", { limit: 0 }],
      ["redact_secrets", { patterns: [] }],
      ["require_citations", { required: "yes" }],
      ["rate_limit", { per: "1m" }],
      ["rate_limit", { limit: 0, per: "1m" }],
      ["rate_limit", { limit: 1, per: "1m", scope: "planet" }],
      ["rate_limit", { limit: 1, per: "1m", on_exceed: "wait" }],
      ["budget_guard", { max_tokens: 9, scope: "planet" }],
      ["tool_denylist", {}],
      ["tool_denylist", { deny: [] }],
      ["shell_guard", { rules: ["rm_rf"] }],
      ["shell_guard", { rules: ["mkfs", "mkfs"] }],
      ["shell_guard", { tools: [] }],
      ["shell_guard", { patterns: [{ name: "Bad", pattern: "x" }] }],
      ["shell_guard", { patterns: [{ name: "x" }] }],
    ];
    for (const [name, settings] of refused) assert.equal(validator(byName(name))(structuredClone(settings)), false, `${name} ${JSON.stringify(settings)}`);
  });

  it("applies Python's defaults through the schema", () => {
    const state = { scope: "run", lifetime: "30d" };
    // No schema default for warn_after: it follows block_after (loopSettings, issue 32).
    assert.deepEqual(validated(byName("loop_guard"), {}), { ...state, block_after: 5, window: 20 });
    assert.deepEqual(validated(byName("tool_failure_guard"), {}), { ...state, max_consecutive: 3, max_total: null });
    assert.deepEqual(validated(byName("budget_guard"), { max_tokens: 5 }), {
      ...state,
      max_tokens: 5,
      max_cost_usd: null,
      warn_at: 0.7,
      per: null,
      reserve_tokens: null,
      reserve_cost_usd: null,
    });
    assert.deepEqual(validated(byName("rate_limit"), { limit: 2, per: "1m" }), { limit: 2, per: "1m", scope: "run", on_exceed: "block" });
    const shell = validated(byName("shell_guard"), {});
    assert.deepEqual(Object.keys(shell).sort(), ["arguments", "patterns", "protected_branches", "rules", "tools"]);
    assert.deepEqual([shell["arguments"], shell["patterns"], shell["protected_branches"]], [["command", "cmd"], [], ["main", "master"]]);
    assert.ok((shell["tools"] as string[]).includes("Bash") && (shell["tools"] as string[]).includes("run_shell_command"));
  });

  it("builds every item of every built-in profile", () => {
    assert.deepEqual(Object.keys(BUILTIN_PROFILES).sort(), ["agent-guards", "rag", "safe-tools"]);
    const reserved = new Set(["use", "id", "hooks", "band", "fail_mode", "timeout", "match", "mode", "when", "tasks", "env", "enabled"]);
    for (const [name, path] of Object.entries(BUILTIN_PROFILES)) {
      const doc = parse(readFileSync(path, "utf8")) as { profile: string; middleware: Record<string, unknown>[] };
      assert.equal(doc.profile, name);
      for (const item of doc.middleware) {
        const configurable = byName(String(item["use"]));
        const settings = Object.fromEntries(Object.entries(item).filter(([key]) => !reserved.has(key)));
        assert.doesNotThrow(() => configurable.build(validated(configurable, settings)), `${name}: ${String(item["id"])}`);
      }
    }
  });

  it("builds a fresh state for each build: two items of one built-in count apart", async () => {
    const bus = new HookBus();
    const one = toolAllowlist.build({ allow: ["a"] });
    bus.register(one);
    assert.notEqual(one, toolAllowlist.build({ allow: ["a"] }));
  });
});

describe("builtins: tool_allowlist, max_messages, require_citations", () => {
  it("tool_allowlist blocks a tool not on the list, quoting it as Python", async () => {
    const bus = new HookBus();
    bus.register(toolAllowlist.build({ allow: ["search", "calculator"] }));
    assert.deepEqual((await bus.emit("tool.before", call("search"), run())).outcome, Continue());
    assert.deepEqual((await bus.emit("tool.before", call("shell"), run())).outcome, Block("tool 'shell' is not allowed", { code: "tool_not_allowed" }));
  });

  it("max_messages blocks a request with more than limit messages", async () => {
    const bus = new HookBus();
    bus.register(maxMessages.build({ limit: 2 }));
    const ask = (n: number) => new ModelRequestEvent({ request: new ModelRequest({ model: "m", messages: Array.from({ length: n }, () => user("x")) }) });
    assert.deepEqual((await bus.emit("model.before", ask(2), run())).outcome, Continue());
    assert.deepEqual((await bus.emit("model.before", ask(3), run())).outcome, Block("the request has 3 messages, more than 2", { code: "too_many_messages" }));
  });

  it("require_citations retries a text answer that cites nothing", async () => {
    const bus = new HookBus();
    bus.register(requireCitations.build({ required: true }));
    const answer = (content: string, toolCalls: ToolCall[] = []) =>
      new ModelResponseEvent({ response: new ModelResponse({ message: new Message({ role: "assistant", content, toolCalls }) }) });
    const kinds = async (event: ModelResponseEvent) => (await bus.emit("model.after", event, run())).outcome;
    assert.deepEqual(await kinds(answer("Paris [1].")), Continue());
    assert.deepEqual(await kinds(answer("Paris [١].")), Continue()); // Python's \d is any decimal digit
    assert.deepEqual(await kinds(answer("Paris.")), Retry("the answer cites no source", { code: "missing_citation" }));
    assert.deepEqual(await kinds(answer(" \u2028\x1c ")), Continue()); // no text, as str.strip() sees it
    assert.deepEqual(await kinds(answer("calling", [new ToolCall({ name: "search" })])), Continue());
    const off = new HookBus();
    off.register(requireCitations.build({ required: false }));
    assert.deepEqual((await off.emit("model.after", answer("Paris."), run())).outcome, Continue());
  });
});
