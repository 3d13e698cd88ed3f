/**
 * Every built-in profile through every TypeScript adapter, inside the real frameworks, offline:
 * a harness.yaml that names the profile is loaded as a user would, and each profile's
 * characteristic decisions are checked where the framework runs them (personal data redacted and
 * the run goes on, a looping call warned about then refused, a failing tool taken out, a secret
 * never reaching the model or a tool, an answer without citations refused, a disallowed tool
 * refused). A built-in that cannot run through an adapter is found here.
 *
 * The OpenAI Agents SDK runs on its own scripted test model (`ScriptedModel`), the AI SDK on its
 * own mock (`MockLanguageModelV4`); the tools are the frameworks' own.
 */

import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { Agent, setTracingDisabled, tool as agentsTool, type AgentInputItem } from "@openai/agents";
import { assistantMessage, functionCall, ScriptedModel, type RecordedModelCall } from "@openai/agents/testing";
import { isStepCount, jsonSchema, tool as aiTool, type ModelMessage } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { z } from "zod";
import { load, type Harness, type TraceRecord } from "harnessweaver";
import { AIRun, HarnessStopped as AIStopped } from "harnessweaver/ai";
import { HarnessStopped, OpenAIAgentsAdapter, tool as watchedTool, type GuardedRun } from "harnessweaver/openai-agents";
import { callTurn, textTurn, type Generated } from "./adapter-ai-support.js";

setTracingDisabled(true);

/** A harness.yaml as a user writes it, loaded from a folder of its own. */
async function harness(yaml: string): Promise<Harness> {
  const root = mkdtempSync(join(tmpdir(), "hw-profiles-"));
  writeFileSync(join(root, "harness.yaml"), yaml);
  return load(join(root, "harness.yaml"));
}

const profile = (name: string): Promise<Harness> => harness(`profiles: [profile://${name}]\n`);

const EMAIL = "jane.doe@example.com";
const SECRET = "sk-live0123456789abcdef";

function decisions(records: readonly TraceRecord[], code: string): TraceRecord[] {
  return records.filter((record) => record.kind === "hook" && record.code === code);
}

// --- OpenAI Agents SDK -------------------------------------------------------------------------

/** One scripted model turn: the items the model answers with. */
type Turn = ReturnType<typeof functionCall | typeof assistantMessage>[];

/** An agent with `tools` on a scripted model, guarded by `h`, and its run. */
function agentsRun(h: Harness, turns: Turn[], tools: ReturnType<typeof agentsTool>[]) {
  const adapter = new OpenAIAgentsAdapter(h);
  const model = new ScriptedModel(turns);
  const agent = adapter.guard(new Agent({ name: "assistant", instructions: "Help.", model, tools }));
  return { agent, model, run: adapter.newRun() };
}

/**
 * A tool that records its arguments and answers `answer` (or throws it, when it is an Error),
 * made with the adapter's `tool()` (its failures seen by the bus) or the SDK's.
 */
function agentsEcho(name: string, seen: unknown[], answer: string | Error, make: typeof agentsTool = watchedTool) {
  return make({
    name,
    description: `The ${name} tool.`,
    parameters: z.object({ q: z.string() }),
    execute: async (input) => {
      seen.push(input);
      if (answer instanceof Error) throw answer;
      return answer;
    },
  });
}

/** Every text of a model call's request (instructions and input items), as one string. */
function agentsSent(call: RecordedModelCall | undefined): string {
  return JSON.stringify([call?.request.systemInstructions, call?.request.input]);
}

/** What the model read as the result of `callId`. */
function agentsResult(call: RecordedModelCall | undefined, callId: string): string {
  const items = (call?.request.input ?? []) as AgentInputItem[];
  const found = items.find((item) => item.type === "function_call_result" && item.callId === callId);
  assert.ok(found !== undefined && found.type === "function_call_result", `the model read a result for ${callId}`);
  const output = found.output;
  if (typeof output === "string") return output;
  assert.ok(!Array.isArray(output) && output.type === "text", "a text output");
  return output.text;
}

function agentsHooks(run: GuardedRun): TraceRecord[] {
  return run.trace.records();
}

// --- AI SDK -------------------------------------------------------------------------------------


function aiEcho(seen: unknown[], answer: string | Error) {
  return aiTool({
    description: "An echo tool",
    inputSchema: jsonSchema<{ q: string }>({ type: "object", properties: { q: { type: "string" } }, required: ["q"] }),
    execute: async (input: { q: string }) => {
      seen.push(input);
      if (answer instanceof Error) throw answer;
      return answer;
    },
  });
}

/** Every text of the model's call `index` (its prompt), as one string. */
function aiSent(model: MockLanguageModelV4, index: number): string {
  return JSON.stringify(model.doGenerateCalls[index]?.prompt ?? null);
}

/** What the model read as the result of `callId` in its last call. */
function aiResult(model: MockLanguageModelV4, callId: string): string {
  const prompt = model.doGenerateCalls.at(-1)?.prompt ?? [];
  for (const message of prompt) {
    if (message.role !== "tool") continue;
    for (const part of message.content) {
      if (part.type === "tool-result" && part.toolCallId === callId) return JSON.stringify(part.output);
    }
  }
  assert.fail(`the model read no result for ${callId}`);
}

function aiModel(turns: Generated[]): MockLanguageModelV4 {
  return new MockLanguageModelV4({ modelId: "mock-1", doGenerate: turns });
}

// --- profile://agent-guards --------------------------------------------------------------------

/** Five calls of `search` with the same arguments, then an answer. */
const LOOP = 5;

describe("profile://agent-guards", () => {
  it("OpenAI Agents: personal data is redacted from the input, the request and a tool's result; the run goes on", async () => {
    const seen: unknown[] = [];
    const { agent, model, run } = agentsRun(await profile("agent-guards"), [
      [functionCall("lookup", { q: "customer" }, { callId: "c1" })],
      [assistantMessage("Done.")],
    ], [agentsEcho("lookup", seen, `the customer is ${EMAIL}`)]);
    const result = await run.run(agent, `Write to ${EMAIL} about order 7.`);
    assert.equal(result.finalOutput, "Done.");
    assert.equal(result.input, "Write to [redacted:email] about order 7.");
    assert.ok(!agentsSent(model.firstCall).includes(EMAIL) && agentsSent(model.firstCall).includes("[redacted:email]"));
    assert.equal(agentsResult(model.lastCall, "c1"), "the customer is [redacted:email]");
    assert.ok(!agentsSent(model.lastCall).includes(EMAIL));
  });

  it("OpenAI Agents: a looping call is warned about (a note to the model), then refused; the run goes on", async () => {
    const seen: unknown[] = [];
    const turns: Turn[] = Array.from({ length: LOOP }, (_, i) => [functionCall("search", { q: "same" }, { callId: `c${i + 1}` })]);
    const { agent, model, run } = agentsRun(await profile("agent-guards"), [...turns, [assistantMessage("Giving up.")]], [agentsEcho("search", seen, "nothing")]);
    const result = await run.run(agent, "Find it.");
    assert.equal(result.finalOutput, "Giving up.");
    assert.equal(seen.length, LOOP - 1, "the fifth identical call is refused");
    assert.ok(agentsSent(model.calls[3]).includes("[harness notice] you have called search with the same arguments 3 times"));
    assert.ok(!agentsSent(model.calls[2]).includes("[harness notice]"));
    assert.match(agentsResult(model.lastCall, `c${LOOP}`), /^The harness refused this tool call: search was called with the same arguments 5 times/);
    assert.equal(decisions(agentsHooks(run), "loop_detected").length, 1);
  });

  it("OpenAI Agents: a tool that keeps failing is taken out of the run", async () => {
    const seen: unknown[] = [];
    const turns: Turn[] = Array.from({ length: 4 }, (_, i) => [functionCall("flaky", { q: `try ${i}` }, { callId: `c${i + 1}` })]);
    const { agent, model, run } = agentsRun(await profile("agent-guards"), [...turns, [assistantMessage("Down.")]], [agentsEcho("flaky", seen, new Error("backend down"))]);
    const result = await run.run(agent, "Try the flaky tool.");
    assert.equal(result.finalOutput, "Down.");
    assert.equal(seen.length, 3, "the fourth call is refused");
    assert.match(agentsResult(model.lastCall, "c4"), /^The harness refused this tool call: /);
    assert.equal(decisions(agentsHooks(run), "tool_failing").length, 1);
    const after = agentsHooks(run).filter((record) => record.kind === "hook" && record.hook === "tool.after");
    assert.equal(after.length, 3);
  });

  it("OpenAI Agents: the SDK's own tool() hides its failures (the SDK answers them inside the tool): nothing is refused", async () => {
    // What the docs say: only a tool made with the adapter's tool() has its failures counted.
    const seen: unknown[] = [];
    const turns: Turn[] = Array.from({ length: 4 }, (_, i) => [functionCall("flaky", { q: `try ${i}` }, { callId: `c${i + 1}` })]);
    const { agent, run } = agentsRun(await profile("agent-guards"), [...turns, [assistantMessage("Down.")]], [agentsEcho("flaky", seen, new Error("backend down"), agentsTool)]);
    await run.run(agent, "Try the flaky tool.");
    assert.equal(seen.length, 4);
    assert.equal(decisions(agentsHooks(run), "tool_failing").length, 0);
  });

  it("AI SDK: personal data is redacted from the input, the request and a tool's result; the run goes on", async () => {
    const seen: unknown[] = [];
    const model = aiModel([callTurn("c1", "lookup", { q: "customer" }), textTurn("Done.")]);
    const run = new AIRun(await profile("agent-guards"));
    const result = await run.generateText({
      model,
      tools: { lookup: aiEcho(seen, `the customer is ${EMAIL}`) },
      stopWhen: isStepCount(5),
      prompt: `Write to ${EMAIL} about order 7.`,
    });
    assert.equal(result.text, "Done.");
    assert.ok(!aiSent(model, 0).includes(EMAIL) && aiSent(model, 0).includes("[redacted:email]"));
    assert.match(aiResult(model, "c1"), /the customer is \[redacted:email\]/);
    assert.ok(!aiSent(model, 1).includes(EMAIL));
  });

  it("AI SDK: a looping call is warned about (a note to the model), then refused; the run goes on", async () => {
    const seen: unknown[] = [];
    const turns = Array.from({ length: LOOP }, (_, i) => callTurn(`c${i + 1}`, "search", { q: "same" }));
    const model = aiModel([...turns, textTurn("Giving up.")]);
    const run = new AIRun(await profile("agent-guards"));
    const result = await run.generateText({ model, tools: { search: aiEcho(seen, "nothing") }, stopWhen: isStepCount(10), prompt: "Find it." });
    assert.equal(result.text, "Giving up.");
    assert.equal(seen.length, LOOP - 1);
    assert.ok(aiSent(model, 3).includes("[harness notice] you have called search with the same arguments 3 times"));
    assert.ok(!aiSent(model, 2).includes("[harness notice]"));
    assert.match(aiResult(model, `c${LOOP}`), /The harness refused this tool call: search was called with the same arguments 5 times/);
    assert.equal(decisions(run.trace.records(), "loop_detected").length, 1);
  });

  it("AI SDK: a tool that keeps failing is taken out of the run", async () => {
    const seen: unknown[] = [];
    const turns = Array.from({ length: 4 }, (_, i) => callTurn(`c${i + 1}`, "flaky", { q: `try ${i}` }));
    const model = aiModel([...turns, textTurn("Down.")]);
    const run = new AIRun(await profile("agent-guards"));
    const result = await run.generateText({ model, tools: { flaky: aiEcho(seen, new Error("backend down")) }, stopWhen: isStepCount(10), prompt: "Try it." });
    assert.equal(result.text, "Down.");
    assert.equal(seen.length, 3);
    assert.match(aiResult(model, "c4"), /The harness refused this tool call: /);
    assert.equal(decisions(run.trace.records(), "tool_failing").length, 1);
  });
});

// --- profile://rag -----------------------------------------------------------------------------

describe("profile://rag", () => {
  it("OpenAI Agents: a secret never reaches the model; a cited answer completes the run", async () => {
    const { agent, model, run } = agentsRun(await profile("rag"), [[assistantMessage("Rotate it [1].")]], []);
    const result = await run.run(agent, `Is ${SECRET} still valid?`);
    assert.equal(result.finalOutput, "Rotate it [1].");
    assert.ok(!agentsSent(model.firstCall).includes(SECRET) && agentsSent(model.firstCall).includes("[redacted]"));
  });

  it("OpenAI Agents: an answer without citations is asked again (as the run loop does); past the bound the run ends", async () => {
    const asked = agentsRun(await profile("rag"), [[assistantMessage("Trust me.")], [assistantMessage("It is X [1].")]], []);
    const result = await asked.run.run(asked.agent, "What is it?");
    assert.equal(result.finalOutput, "It is X [1].");
    assert.equal(asked.model.calls.length, 2);
    assert.equal(decisions(agentsHooks(asked.run), "missing_citation").length, 1);

    const uncited = Array.from({ length: 3 }, (): Turn => [assistantMessage("Trust me.")]);
    const { agent, model, run } = agentsRun(await profile("rag"), uncited, []);
    await assert.rejects(run.run(agent, "What is it?"), (error: unknown) => {
      assert.ok(error instanceof HarnessStopped);
      assert.deepEqual([error.hook, error.outcome, error.code], ["model.after", "retry", "missing_citation"]);
      return true;
    });
    assert.equal(model.calls.length, 3, "asked again up to the run's bound (2 retries)");
  });

  it("OpenAI Agents: a conversation over 50 messages is refused before the model is called", async () => {
    const { agent, model, run } = agentsRun(await profile("rag"), [[assistantMessage("never")]], []);
    const items: AgentInputItem[] = Array.from({ length: 51 }, (_, i) => ({ role: "user", content: `message ${i}` }));
    await assert.rejects(run.run(agent, items), (error: unknown) => {
      assert.ok(error instanceof HarnessStopped);
      assert.deepEqual([error.hook, error.outcome, error.code], ["model.before", "block", "too_many_messages"]);
      return true;
    });
    assert.equal(model.calls.length, 0);
  });

  it("AI SDK: a secret never reaches the model; a cited answer completes the run", async () => {
    const model = aiModel([textTurn("Rotate it [1].")]);
    const run = new AIRun(await profile("rag"));
    const result = await run.generateText({ model, prompt: `Is ${SECRET} still valid?` });
    assert.equal(result.text, "Rotate it [1].");
    assert.ok(!aiSent(model, 0).includes(SECRET) && aiSent(model, 0).includes("[redacted]"));
  });

  it("AI SDK: an answer without citations is asked again (as the run loop does); past the bound the call stops", async () => {
    const asked = aiModel([textTurn("Trust me."), textTurn("It is X [1].")]);
    const cited = new AIRun(await profile("rag"));
    const result = await cited.generateText({ model: asked, prompt: "What is it?" });
    assert.equal(result.text, "It is X [1].");
    assert.equal(asked.doGenerateCalls.length, 2);
    assert.equal(decisions(cited.trace.records(), "missing_citation").length, 1);

    const never = aiModel([textTurn("Trust me."), textTurn("Trust me."), textTurn("Trust me.")]);
    const run = new AIRun(await profile("rag"));
    await assert.rejects(run.generateText({ model: never, prompt: "What is it?" }), (error: unknown) => {
      assert.ok(error instanceof AIStopped);
      assert.deepEqual([error.hook, error.outcome, error.code], ["model.after", "retry", "missing_citation"]);
      return true;
    });
    assert.equal(never.doGenerateCalls.length, 3, "asked again up to the run's bound (2 retries)");
  });

  it("AI SDK: a conversation over 50 messages is refused before the model is called", async () => {
    const model = aiModel([textTurn("never")]);
    const messages: ModelMessage[] = Array.from({ length: 51 }, (_, i) => ({ role: "user", content: `message ${i}` }));
    const run = new AIRun(await profile("rag"));
    await assert.rejects(run.generateText({ model, messages }), (error: unknown) => {
      assert.ok(error instanceof AIStopped);
      assert.deepEqual([error.hook, error.outcome, error.code], ["model.before", "block", "too_many_messages"]);
      return true;
    });
    assert.equal(model.doGenerateCalls.length, 0);
  });
});

// --- profile://safe-tools ----------------------------------------------------------------------

describe("profile://safe-tools", () => {
  it("OpenAI Agents: a tool not on the list is refused, a listed one runs without the secret; the run goes on", async () => {
    const searched: unknown[] = [];
    const refunded: unknown[] = [];
    const { agent, model, run } = agentsRun(await profile("safe-tools"), [
      [functionCall("refund", { q: "order 7" }, { callId: "c1" }), functionCall("search", { q: `key ${SECRET}` }, { callId: "c2" })],
      [assistantMessage("Done.")],
    ], [agentsEcho("refund", refunded, "refunded"), agentsEcho("search", searched, "found")]);
    const result = await run.run(agent, "Refund order 7 and search.");
    assert.equal(result.finalOutput, "Done.");
    assert.deepEqual(refunded, []);
    assert.deepEqual(searched, [{ q: "key [redacted]" }]);
    assert.match(agentsResult(model.lastCall, "c1"), /^The harness refused this tool call: /);
    assert.equal(agentsResult(model.lastCall, "c2"), "found");
  });

  it("AI SDK: a tool not on the list is refused, a listed one runs without the secret; the run goes on", async () => {
    const searched: unknown[] = [];
    const refunded: unknown[] = [];
    const twoCalls: Generated = {
      ...callTurn("c1", "refund", { q: "order 7" }),
      content: [
        { type: "tool-call", toolCallId: "c1", toolName: "refund", input: JSON.stringify({ q: "order 7" }) },
        { type: "tool-call", toolCallId: "c2", toolName: "search", input: JSON.stringify({ q: `key ${SECRET}` }) },
      ],
    };
    const model = aiModel([twoCalls, textTurn("Done.")]);
    const run = new AIRun(await profile("safe-tools"));
    const result = await run.generateText({
      model,
      tools: { refund: aiEcho(refunded, "refunded"), search: aiEcho(searched, "found") },
      stopWhen: isStepCount(5),
      prompt: "Refund order 7 and search.",
    });
    assert.equal(result.text, "Done.");
    assert.deepEqual(refunded, []);
    assert.deepEqual(searched, [{ q: "key [redacted]" }]);
    assert.match(aiResult(model, "c1"), /The harness refused this tool call: /);
    assert.match(aiResult(model, "c2"), /found/);
  });
});

// --- harnessweaver.tool_denylist and harnessweaver.shell_guard ---------------------------------

const GUARDS = "middleware:\n  - {use: harnessweaver.tool_denylist, deny: [delete_repo]}\n  - {use: harnessweaver.shell_guard}\n";

describe("harnessweaver.tool_denylist and harnessweaver.shell_guard", () => {
  it("OpenAI Agents: a denied tool and a destructive command are refused, a harmless command runs; the run goes on", async () => {
    const commands: string[] = [];
    const deleted: unknown[] = [];
    const bash = watchedTool({
      name: "bash",
      description: "Run a shell command.",
      parameters: z.object({ command: z.string() }),
      execute: async ({ command }) => {
        commands.push(command);
        return "ok";
      },
    });
    const { agent, model, run } = agentsRun(await harness(GUARDS), [
      [
        functionCall("bash", { command: "rm -rf /" }, { callId: "c1" }),
        functionCall("bash", { command: "ls -la" }, { callId: "c2" }),
        functionCall("delete_repo", { q: "main" }, { callId: "c3" }),
      ],
      [assistantMessage("Done.")],
    ], [bash, agentsEcho("delete_repo", deleted, "deleted")]);
    const result = await run.run(agent, "Clean up.");
    assert.equal(result.finalOutput, "Done.");
    assert.deepEqual(commands, ["ls -la"]);
    assert.deepEqual(deleted, []);
    assert.equal(agentsResult(model.lastCall, "c1"), "The harness refused this tool call: tool 'bash': command matches rule 'rm_recursive_force'");
    assert.equal(agentsResult(model.lastCall, "c2"), "ok");
    assert.equal(agentsResult(model.lastCall, "c3"), "The harness refused this tool call: tool 'delete_repo' is denied");
    assert.deepEqual([decisions(agentsHooks(run), "shell_command_denied").length, decisions(agentsHooks(run), "tool_denied").length], [1, 1]);
  });

  it("AI SDK: a denied tool and a destructive command are refused, a harmless command runs; the run goes on", async () => {
    const commands: string[] = [];
    const deleted: unknown[] = [];
    const bash = aiTool({
      description: "Run a shell command.",
      inputSchema: jsonSchema<{ command: string }>({ type: "object", properties: { command: { type: "string" } }, required: ["command"] }),
      execute: async ({ command }: { command: string }) => {
        commands.push(command);
        return "ok";
      },
    });
    const calls: Generated = {
      ...callTurn("c1", "bash", {}),
      content: [
        { type: "tool-call", toolCallId: "c1", toolName: "bash", input: JSON.stringify({ command: "rm -rf /" }) },
        { type: "tool-call", toolCallId: "c2", toolName: "bash", input: JSON.stringify({ command: "ls -la" }) },
        { type: "tool-call", toolCallId: "c3", toolName: "delete_repo", input: JSON.stringify({ q: "main" }) },
      ],
    };
    const model = aiModel([calls, textTurn("Done.")]);
    const run = new AIRun(await harness(GUARDS));
    const result = await run.generateText({ model, tools: { bash, delete_repo: aiEcho(deleted, "deleted") }, stopWhen: isStepCount(5), prompt: "Clean up." });
    assert.equal(result.text, "Done.");
    assert.deepEqual(commands, ["ls -la"]);
    assert.deepEqual(deleted, []);
    assert.match(aiResult(model, "c1"), /The harness refused this tool call: tool 'bash': command matches rule 'rm_recursive_force'/);
    assert.match(aiResult(model, "c2"), /ok/);
    assert.match(aiResult(model, "c3"), /The harness refused this tool call: tool 'delete_repo' is denied/);
    assert.deepEqual([decisions(run.trace.records(), "shell_command_denied").length, decisions(run.trace.records(), "tool_denied").length], [1, 1]);
  });
});
