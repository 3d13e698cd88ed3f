/**
 * The OpenAI Agents SDK adapter inside the real SDK (`@openai/agents`), offline: the SDK's own
 * test model (`ScriptedModel` from `@openai/agents/testing`) answers from a script, tracing is
 * off, and the agent, its tools, guardrails, approvals and resumes are the SDK's own.
 */

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, it } from "node:test";
import { Agent, Runner, setTracingDisabled, tool, webSearchTool, type AgentInputItem } from "@openai/agents";
import { assistantMessage, functionCall, ScriptedModel, type RecordedModelCall } from "@openai/agents/testing";
import { z } from "zod";
import {
  Block,
  Continue,
  Escalate,
  HookBus,
  Message,
  middleware,
  Retry,
  Suspend,
  type HookPoint,
  type JsonValue,
  type Middleware,
  type ModelRequestEvent,
  type TraceRecord,
} from "harnessweaver";
import { denial, HarnessStopped, OpenAIAgentsAdapter, type GuardedRun } from "harnessweaver/openai-agents";

setTracingDisabled(true); // nothing is exported anywhere

/** A refund tool that records what it paid. */
function refundTool(paid: number[]) {
  return tool({
    name: "refund",
    description: "Refund an amount in dollars to the customer's card.",
    parameters: z.object({ amount: z.number() }),
    execute: async ({ amount }) => {
      paid.push(amount);
      return `refunded $${amount}`;
    },
  });
}

/** One model turn calling refund(amount), then one saying it is done. */
function script(amount: number): ScriptedModel {
  return new ScriptedModel([[functionCall("refund", { amount }, { callId: "call_1" })], [assistantMessage("All done.")]]);
}

interface Setup {
  readonly adapter: OpenAIAgentsAdapter;
  readonly agent: Agent;
  readonly model: ScriptedModel;
  readonly paid: number[];
  readonly run: GuardedRun;
}

function setup(amount: number, ...registered: Middleware[]): Setup {
  const bus = new HookBus();
  for (const mw of registered) bus.register(mw);
  const adapter = new OpenAIAgentsAdapter(bus);
  const paid: number[] = [];
  const model = script(amount);
  const agent = adapter.guard(new Agent({ name: "support", instructions: "Help.", model, tools: [refundTool(paid)] }));
  return { adapter, agent, model, paid, run: adapter.newRun({ runId: `run-${amount}` }) };
}

/** What the model read as the result of call `callId` in its call `call`. */
function toolOutput(call: RecordedModelCall | undefined, callId = "call_1"): string {
  const input = call?.request.input;
  assert.ok(Array.isArray(input), "the model was asked with input items");
  const result = (input as AgentInputItem[]).find((item) => item.type === "function_call_result" && item.callId === callId);
  assert.ok(result !== undefined && result.type === "function_call_result", `the model read a result for ${callId}`);
  const output = result.output;
  if (typeof output === "string") return output;
  assert.ok(!Array.isArray(output) && output.type === "text", "a text output");
  return output.text;
}

function hookRecords(run: GuardedRun): TraceRecord[] {
  return run.trace.records().filter((record) => record.kind === "hook");
}

function hooks(run: GuardedRun): HookPoint[] {
  return hookRecords(run).map((record) => record.hook);
}

/** Records every `task.end` exit reason the bus saw. */
function exitReasons(): { readonly mw: Middleware; readonly seen: string[] } {
  const seen: string[] = [];
  const mw = middleware({ name: "exit_reasons", hooks: ["task.end"], failMode: "open" }, async (event) => {
    seen.push(event.exitReason);
    return undefined;
  });
  return { mw, seen };
}

/** Over $100 is refused; over $50 waits for a manager; refunds are paid in whole tens. */
const refundPolicy = middleware({ name: "refund_policy", hooks: ["tool.before"], failMode: "closed" }, async (event) => {
  const amount = event.call.arguments["amount"];
  if (typeof amount !== "number") return Block("no amount", { code: "refund_amount" });
  if (amount > 100) return Block(`$${amount} is over the $100 limit`, { code: "refund_limit" });
  if (amount > 50) return Suspend(`$${amount} needs a manager`, { approverRole: "manager" });
  if (amount % 10 !== 0) return Continue(event.with({ call: event.call.with({ arguments: { amount: amount - (amount % 10) } }) }));
  return undefined;
});

const card = (text: string): string => text.replaceAll("4242 4242", "[card]");

/** task.start: the card number redacted from the task's input (a text, or the text of its items). */
const redactInput = middleware({ name: "redact_input", hooks: ["task.start"], failMode: "closed" }, async (event) =>
  Continue(event.with({ input: JSON.parse(card(JSON.stringify(event.input))) as JsonValue })),
);

/**
 * model.before: the card number redacted from every message, the instructions extended, a tool
 * result rewritten, and a note to the model appended (what the built-in guards do).
 */
const redactRequest = middleware({ name: "redact_request", hooks: ["model.before"], failMode: "closed" }, async (event) => {
  const messages = event.request.messages.map((m) => {
    if (m.role === "system") return m.with({ content: `${m.content} Be brief.` });
    if (m.role === "tool") return m.with({ content: m.content.replace("$30", "[amount]") });
    return m.with({ content: card(m.content) });
  });
  const note = event.request.messages.some((m) => m.role === "tool") ? [] : [new Message({ role: "user", content: "[note] mind the card number" })];
  return Continue(event.with({ request: event.request.with({ messages: [...messages, ...note] }) }));
});

const ONE_TOOL_RUN: HookPoint[] = [
  "task.start",
  "step.start",
  "model.before",
  "model.after",
  "tool.before",
  "tool.after",
  "step.end",
  "step.start",
  "model.before",
  "model.after",
  "step.end",
  "task.end",
];

describe("OpenAI Agents SDK adapter", () => {
  it("runs an admitted call as the SDK would, every hook point traced with run, step and tool", async () => {
    const { agent, model, paid, run } = setup(30, refundPolicy);
    const result = await run.run(agent, "Refund $30, please.");
    assert.equal(result.finalOutput, "All done.");
    assert.deepEqual(paid, [30]);
    assert.equal(toolOutput(model.lastCall), "refunded $30");
    assert.deepEqual(hooks(run), ONE_TOOL_RUN);
    const records = hookRecords(run);
    assert.ok(records.every((record) => record.run === "run-30" && record.outcome === "continue"));
    assert.deepEqual(
      records.map((record) => record.step ?? null),
      [null, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, null],
    );
    assert.deepEqual(
      records.filter((record) => record.tool !== undefined).map((record) => [record.hook, record.tool]),
      [
        ["tool.before", "refund"],
        ["tool.after", "refund"],
      ],
    );
    // The middleware's own record is in the run's trace too.
    assert.ok(run.trace.records().some((record) => record.kind !== "hook" && record.middleware === "refund_policy"));
    assert.equal(run.ctx.trace, run.trace);
  });

  it("runs the arguments a middleware rewrote (Continue(modified))", async () => {
    const { agent, model, paid, run } = setup(13, refundPolicy);
    const result = await run.run(agent, "Refund $13, please.");
    assert.deepEqual(paid, [10]);
    assert.equal(toolOutput(model.lastCall), "refunded $10");
    assert.equal(result.finalOutput, "All done.");
    const before = hookRecords(run).find((record) => record.hook === "tool.before");
    assert.equal(before?.modified, true);
  });

  it("gives the model the result a middleware rewrote at tool.after", async () => {
    const redact = middleware({ name: "redact", hooks: ["tool.after"], failMode: "closed" }, async (event) =>
      Continue(event.with({ result: event.result.with({ output: "refunded [redacted]" }) })),
    );
    const { agent, model, paid, run } = setup(30, redact);
    await run.run(agent, "Refund $30, please.");
    assert.deepEqual(paid, [30]);
    assert.equal(toolOutput(model.lastCall), "refunded [redacted]");
  });

  it("does not run a blocked call; the model reads the refusal and the run goes on", async () => {
    const { agent, model, paid, run } = setup(500, refundPolicy);
    const result = await run.run(agent, "Refund $500, please.");
    assert.deepEqual(paid, []);
    assert.equal(toolOutput(model.lastCall), "The harness refused this tool call: $500 is over the $100 limit");
    assert.equal(result.finalOutput, "All done.");
    const before = hookRecords(run).find((record) => record.hook === "tool.before");
    assert.deepEqual([before?.outcome, before?.code], ["block", "refund_limit"]);
    assert.ok(!hooks(run).includes("tool.after"), "a call that did not run has no tool.after");
  });

  it("withholds a result blocked at tool.after", async () => {
    const withhold = middleware({ name: "withhold", hooks: ["tool.after"], failMode: "closed" }, async () => Block("secret"));
    const { agent, model, paid, run } = setup(30, withhold);
    await run.run(agent, "Refund $30, please.");
    assert.deepEqual(paid, [30]);
    assert.equal(toolOutput(model.lastCall), "The harness withheld this tool's result: secret");
  });

  it("gives the model the request rewritten at task.start and model.before, and the run goes on", async () => {
    const { agent, model, paid, run } = setup(30, redactInput, redactRequest);
    const result = await run.run(agent, "Refund $30 to card 4242 4242, please.");
    assert.deepEqual(paid, [30]);
    assert.equal(result.finalOutput, "All done.");
    assert.equal(result.input, "Refund $30 to card [card], please.", "the run's own input is task.start's");
    const first = model.firstCall?.request;
    assert.equal(first?.systemInstructions, "Help. Be brief.");
    assert.ok(Array.isArray(first?.input));
    const items = first.input as AgentInputItem[];
    assert.deepEqual(items.at(0), { type: "message", role: "user", content: "Refund $30 to card [card], please." });
    assert.deepEqual(items.at(-1), { role: "user", content: "[note] mind the card number" });
    // The next call: the tool result as rewritten, the call's own item the SDK's.
    assert.equal(toolOutput(model.lastCall), "refunded [amount]");
    const call = (model.lastCall?.request.input as AgentInputItem[]).find((item) => item.type === "function_call");
    assert.equal(call?.type === "function_call" ? call.arguments : null, JSON.stringify({ amount: 30 }));
    assert.deepEqual(hooks(run), ONE_TOOL_RUN);
    const rewrites = hookRecords(run).filter((record) => record.modified);
    assert.deepEqual(rewrites.map((record) => record.hook), ["task.start", "model.before", "model.before"]);
  });

  it("gives a streamed model the rewritten request too, and input items rewritten at task.start", async () => {
    const { agent, model, paid, run } = setup(30, redactInput, redactRequest);
    const stream = await run.runStreamed(agent, [{ role: "user", content: "Refund $30 to card 4242 4242, please." }]);
    for await (const event of stream) assert.ok(typeof event.type === "string");
    assert.equal((await stream.completed).finalOutput, "All done.");
    assert.deepEqual(paid, [30]);
    assert.ok(model.calls.every((call) => call.streamed));
    const items = model.firstCall?.request.input as AgentInputItem[];
    assert.deepEqual(items.at(0), { role: "user", content: "Refund $30 to card [card], please." });
    assert.equal(toolOutput(model.lastCall), "refunded [amount]");
  });

  it("writes a rewrite back into the item it came from: an image kept beside the changed text; step.start's messages are what the model gets", async () => {
    const image = { type: "input_image" as const, image: "https://example.com/receipt.png" };
    const onStep = middleware({ name: "on_step", hooks: ["step.start"], failMode: "closed" }, async (event) =>
      Continue(event.with({ messages: event.messages.map((m) => (m.role === "user" ? m.with({ content: card(m.content) }) : m)) })),
    );
    const { agent, model, paid, run } = setup(30, onStep);
    const input: AgentInputItem[] = [
      { role: "user", content: [{ type: "input_text", text: "Refund $30 to card " }, image, { type: "input_text", text: "4242 4242." }] },
    ];
    const result = await run.run(agent, input);
    assert.equal(result.finalOutput, "All done.");
    assert.deepEqual(paid, [30]);
    const sent = (model.firstCall?.request.input as AgentInputItem[])[0];
    assert.ok(sent !== undefined && "role" in sent && sent.role === "user");
    assert.deepEqual(sent.content, [{ type: "input_text", text: "Refund $30 to card [card]." }, image]);
    const steps = hookRecords(run).filter((record) => record.hook === "step.start");
    assert.deepEqual(steps.map((record) => record.modified), [true, true]);
  });

  it("asks model.before and the model again on a Retry at model.after, as the run loop does; past the bound the run ends", async () => {
    const cite = middleware({ name: "cite", hooks: ["model.after"], failMode: "closed" }, async (event) =>
      event.response.message.content.includes("[1]") ? undefined : Retry("the answer cites no source", { code: "missing_citation" }),
    );
    const runWith = (answers: string[], maxRetries: number) => {
      const bus = new HookBus();
      const reasons = exitReasons();
      bus.register(cite);
      bus.register(reasons.mw);
      const adapter = new OpenAIAgentsAdapter(bus);
      const model = new ScriptedModel(answers.map((text) => [assistantMessage(text)]));
      const agent = adapter.guard(new Agent({ name: "support", instructions: "Help.", model }));
      return { agent, model, reasons, run: adapter.newRun({ maxRetries }) };
    };
    const asked = runWith(["Trust me.", "See [1]."], 2);
    const result = await asked.run.run(asked.agent, "What is it?");
    assert.equal(result.finalOutput, "See [1].");
    assert.equal(asked.model.calls.length, 2);
    assert.deepEqual(hooks(asked.run), ["task.start", "step.start", "model.before", "model.after", "model.before", "model.after", "step.end", "task.end"]);
    assert.deepEqual(asked.reasons.seen, ["completed"]);

    const bounded = runWith(["No.", "Still no.", "Never."], 1);
    await assert.rejects(bounded.run.run(bounded.agent, "What is it?"), (error: unknown) => {
      assert.ok(error instanceof HarnessStopped);
      assert.deepEqual([error.hook, error.outcome, error.code], ["model.after", "retry", "missing_citation"]);
      return true;
    });
    assert.equal(bounded.model.calls.length, 2, "asked once more, then the run ends");
    assert.deepEqual(bounded.reasons.seen, ["retry_exhausted"]);
  });

  it("ends the run on a request rewrite the SDK cannot carry (a message removed, the model changed)", async () => {
    const rewrites = [
      (event: ModelRequestEvent) => event.with({ request: event.request.with({ messages: event.request.messages.slice(1) }) }),
      (event: ModelRequestEvent) => event.with({ request: event.request.with({ model: "another-model" }) }),
      (event: ModelRequestEvent) =>
        event.with({ request: event.request.with({ messages: event.request.messages.map((m) => (m.role === "user" ? m.with({ name: "someone" }) : m)) }) }),
    ];
    for (const rewrite of rewrites) {
      const reasons = exitReasons();
      const mw = middleware({ name: "reshape", hooks: ["model.before"], failMode: "closed" }, async (event) => Continue(rewrite(event)));
      const { agent, model, paid, run } = setup(30, mw, reasons.mw);
      await assert.rejects(run.run(agent, "Refund $30, please."), (error: unknown) => {
        assert.ok(error instanceof HarnessStopped);
        assert.deepEqual([error.hook, error.outcome, error.code], ["model.before", "modified", "not_expressible"]);
        return true;
      });
      assert.equal(model.calls.length, 0, "the model is never sent the request unchanged");
      assert.deepEqual(paid, []);
      assert.deepEqual(reasons.seen, ["blocked"]);
    }
  });

  it("never calls the model when model.before blocks: the run ends with HarnessStopped", async () => {
    const reasons = exitReasons();
    const noModel = middleware({ name: "no_model", hooks: ["model.before"], failMode: "closed" }, async () =>
      Block("model calls are off", { code: "no_model" }),
    );
    const { agent, model, paid, run } = setup(30, noModel, reasons.mw);
    await assert.rejects(run.run(agent, "Refund $30, please."), (error: unknown) => {
      assert.ok(error instanceof HarnessStopped);
      assert.deepEqual([error.hook, error.outcome, error.reason, error.code], ["model.before", "block", "model calls are off", "no_model"]);
      return true;
    });
    assert.equal(model.calls.length, 0);
    assert.deepEqual(paid, []);
    assert.deepEqual(hooks(run), ["task.start", "step.start", "model.before", "task.end"]);
    assert.deepEqual(reasons.seen, ["blocked"]);
  });

  it("ends the run when a middleware rewrites the model's response, which the SDK cannot take", async () => {
    const rewrite = middleware({ name: "rewrite", hooks: ["model.after"], failMode: "closed" }, async (event) =>
      Continue(event.with({ response: event.response.with({ stopReason: "end_turn", message: event.response.message.with({ content: "x" }) }) })),
    );
    const { agent, paid, run } = setup(30, rewrite);
    await assert.rejects(run.run(agent, "Refund $30, please."), (error: unknown) => {
      assert.ok(error instanceof HarnessStopped);
      assert.deepEqual([error.hook, error.outcome, error.code], ["model.after", "modified", "not_expressible"]);
      return true;
    });
    assert.deepEqual(paid, [], "the response that asked for the call never reached the run");
  });

  it("suspends a call into the SDK's approval interruption, and runs it once approved", async () => {
    const reasons = exitReasons();
    const { agent, model, paid, run } = setup(70, refundPolicy, reasons.mw);
    const first = await run.run(agent, "Refund $70, please.");
    assert.equal(first.interruptions.length, 1);
    const pending = first.interruptions[0];
    assert.ok(pending !== undefined);
    assert.equal(pending.name, "refund");
    assert.deepEqual(paid, [], "nothing is paid before the approval");
    assert.equal(first.finalOutput, undefined);
    first.state.approve(pending);
    const second = await run.run(agent, first.state);
    assert.deepEqual(paid, [70]);
    assert.equal(toolOutput(model.lastCall), "refunded $70");
    assert.equal(second.finalOutput, "All done.");
    assert.deepEqual(reasons.seen, ["suspended", "completed"]);
    // One run: one task.start, the suspended step goes on, the call asked once.
    assert.deepEqual(hooks(run), ONE_TOOL_RUN.slice(0, 5).concat(["task.end"], ONE_TOOL_RUN.slice(5)));
    const before = hookRecords(run).find((record) => record.hook === "tool.before");
    assert.equal(before?.outcome, "suspend");
    assert.ok(hookRecords(run).every((record) => record.run === "run-70"));
  });

  it("never runs a suspended call the approver rejected; the model reads the denial", async () => {
    const { agent, model, paid, run } = setup(90, refundPolicy);
    const first = await run.run(agent, "Refund $90, please.");
    const pending = first.interruptions[0];
    assert.ok(pending !== undefined);
    first.state.reject(pending, { message: denial("not without a receipt") });
    const second = await run.run(agent, first.state);
    assert.deepEqual(paid, []);
    assert.equal(toolOutput(model.lastCall), "The approver denied this tool call: not without a receipt");
    assert.equal(second.finalOutput, "All done.");
    assert.ok(!hooks(run).includes("tool.after"));
  });

  it("resumes a RunState restored from its string form in a fresh GuardedRun", async () => {
    const { adapter, agent, paid, run } = setup(70, refundPolicy);
    const first = await run.run(agent, "Refund $70, please.");
    const text = first.state.toString();
    const { RunState } = await import("@openai/agents");
    const restored = await RunState.fromString(agent, text);
    const item = restored.getInterruptions()[0];
    assert.ok(item !== undefined);
    restored.approve(item);
    const again = adapter.newRun({ runId: "run-70", trace: run.trace });
    const second = await again.run(agent, restored);
    assert.deepEqual(paid, [70]);
    assert.equal(second.finalOutput, "All done.");
    assert.equal(hooks(again).filter((hook) => hook === "task.start").length, 1, "no second task.start");
  });

  it("fails closed: a middleware that throws blocks the call, and the trace names the failure", async () => {
    const broken = middleware({ name: "broken", hooks: ["tool.before"], failMode: "closed" }, async () => {
      throw new RangeError("secret detail");
    });
    const { agent, model, paid, run } = setup(30, broken);
    const result = await run.run(agent, "Refund $30, please.");
    assert.deepEqual(paid, []);
    assert.equal(toolOutput(model.lastCall), "The harness refused this tool call: middleware broken failed: exception");
    assert.equal(result.finalOutput, "All done.");
    const failed = run.trace.records().find((record) => record.kind !== "hook" && record.middleware === "broken");
    assert.deepEqual([failed?.failure, failed?.error, failed?.outcome], ["exception", "RangeError", "block"]);
    assert.ok(!run.trace.toJSONL().includes("secret detail"), "no exception message in the trace (R9)");
  });

  it("fails closed at model.before too: a throwing middleware ends the run before the model is called", async () => {
    const broken = middleware({ name: "broken", hooks: ["model.before"], failMode: "closed" }, async () => {
      throw new Error("boom");
    });
    const { agent, model, run } = setup(30, broken);
    await assert.rejects(run.run(agent, "Refund $30, please."), HarnessStopped);
    assert.equal(model.calls.length, 0);
  });

  it("ends the run on an Escalate at tool.before (unwrapped from the SDK's ToolCallError)", async () => {
    const reasons = exitReasons();
    const escalate = middleware({ name: "escalate", hooks: ["tool.before"], failMode: "closed" }, async () =>
      Escalate("fraud team", { to: "fraud", code: "fraud" }),
    );
    const { agent, paid, run } = setup(30, escalate, reasons.mw);
    await assert.rejects(run.run(agent, "Refund $30, please."), (error: unknown) => {
      assert.ok(error instanceof HarnessStopped);
      assert.deepEqual([error.hook, error.outcome, error.code], ["tool.before", "escalate", "fraud"]);
      return true;
    });
    assert.deepEqual(paid, []);
    assert.deepEqual(reasons.seen, ["escalated"]);
  });

  it("asks the chain again on a Retry at tool.before, and refuses the call past the bound", async () => {
    let asked = 0;
    const retry = middleware({ name: "retry", hooks: ["tool.before"], failMode: "closed" }, async () => {
      asked += 1;
      return Retry("busy");
    });
    const { agent, model, paid, run } = setup(30, retry);
    await run.run(agent, "Refund $30, please.");
    assert.equal(asked, 3, "asked once and retried twice (maxRetries 2)");
    assert.deepEqual(paid, []);
    assert.equal(toolOutput(model.lastCall), "The harness refused this tool call: busy");
  });

  it("ends the run on a Suspend away from a tool call (exit reason blocked), and past a model Retry's bound", async () => {
    const reasons = exitReasons();
    const hold = middleware({ name: "hold", hooks: ["step.start"], failMode: "closed" }, async () => Suspend("wait", { approverRole: "ops" }));
    const held = setup(30, hold, reasons.mw);
    await assert.rejects(held.run.run(held.agent, "Refund $30."), (error: unknown) => {
      assert.ok(error instanceof HarnessStopped);
      assert.deepEqual([error.hook, error.outcome], ["step.start", "suspend"]);
      return true;
    });
    assert.equal(held.model.calls.length, 0);
    let asked = 0;
    const busy = middleware({ name: "busy", hooks: ["model.before"], failMode: "closed" }, async () => {
      asked += 1;
      return Retry("rate limited", { maxAttempts: 2 });
    });
    const retried = setup(30, busy, reasons.mw);
    await assert.rejects(retried.run.run(retried.agent, "Refund $30."), (error: unknown) => {
      assert.ok(error instanceof HarnessStopped);
      assert.deepEqual([error.hook, error.outcome], ["model.before", "retry"]);
      return true;
    });
    assert.equal(asked, 2, "maxAttempts 2: asked once, retried once");
    assert.equal(retried.model.calls.length, 0);
    assert.deepEqual(reasons.seen, ["blocked", "retry_exhausted"]);
    assert.throws(() => retried.adapter.newRun({ maxRetries: -1 }), /maxRetries -1: the retries of one operation are a whole number from 0/);
  });

  it("replaces the final output with task.end's rewrite, and withholds it on a Block", async () => {
    const rewrite = middleware({ name: "rewrite_end", hooks: ["task.end"], failMode: "closed" }, async (event) =>
      Continue(event.with({ output: "[redacted]" })),
    );
    const rewritten = setup(30, rewrite);
    assert.equal((await rewritten.run.run(rewritten.agent, "Refund $30.")).finalOutput, "[redacted]");
    const block = middleware({ name: "block_end", hooks: ["task.end"], failMode: "closed" }, async () => Block("no"));
    const blocked = setup(30, block);
    assert.equal((await blocked.run.run(blocked.agent, "Refund $30.")).finalOutput, undefined);
  });

  it("emits task.end when the last step.end stops a completed run, then rejects with HarnessStopped", async () => {
    const reasons = exitReasons();
    const lastStep = middleware({ name: "last_step", hooks: ["step.end"], failMode: "closed" }, async (event) =>
      event.step === 2 ? Block("no final answer", { code: "last_step" }) : undefined,
    );
    const { agent, paid, run } = setup(30, lastStep, reasons.mw);
    await assert.rejects(run.run(agent, "Refund $30."), (error: unknown) => {
      assert.ok(error instanceof HarnessStopped);
      assert.deepEqual([error.hook, error.outcome, error.code], ["step.end", "block", "last_step"]);
      return true;
    });
    assert.deepEqual(paid, [30]);
    assert.deepEqual(hooks(run), ONE_TOOL_RUN);
    assert.deepEqual(reasons.seen, ["blocked"]);
  });

  it("streams a run (Runner.run with stream: true) with the same records as run()", async () => {
    const { agent, model, paid, run } = setup(13, refundPolicy);
    const stream = await run.runStreamed(agent, "Refund $13, please.");
    let events = 0;
    for await (const event of stream) {
      assert.ok(typeof event.type === "string");
      events += 1;
    }
    const result = await stream.completed;
    assert.ok(events > 0);
    assert.ok(model.calls.every((call) => call.streamed));
    assert.deepEqual(paid, [10], "the rewritten arguments ran");
    assert.equal(result.finalOutput, "All done.");
    assert.deepEqual(hooks(run), ONE_TOOL_RUN);
  });

  it("streams a suspended call into an interruption, resumed streamed once approved", async () => {
    const reasons = exitReasons();
    const { agent, paid, run } = setup(70, refundPolicy, reasons.mw);
    const first = await run.runStreamed(agent, "Refund $70, please.");
    const suspended = await first.completed; // task.end emitted without reading the stream
    assert.equal(suspended.interruptions.length, 1);
    assert.deepEqual(paid, []);
    const item = suspended.interruptions[0];
    assert.ok(item !== undefined);
    suspended.state.approve(item);
    const second = await run.runStreamed(agent, suspended.state);
    assert.equal((await second.completed).finalOutput, "All done.");
    assert.deepEqual(paid, [70]);
    assert.deepEqual(reasons.seen, ["suspended", "completed"]);
  });

  it("ends a streamed run the bus stops: completed rejects with HarnessStopped", async () => {
    const reasons = exitReasons();
    const stop = middleware({ name: "stop", hooks: ["model.after"], failMode: "closed" }, async () => Block("stop here"));
    const { agent, paid, run } = setup(30, stop, reasons.mw);
    const stream = await run.runStreamed(agent, "Refund $30, please.");
    await assert.rejects(stream.completed, (error: unknown) => {
      assert.ok(error instanceof HarnessStopped);
      assert.deepEqual([error.hook, error.outcome, error.reason], ["model.after", "block", "stop here"]);
      return true;
    });
    assert.deepEqual(paid, []);
    assert.deepEqual(reasons.seen, ["blocked"]);
  });

  it("never runs a call whose arguments are not a JSON object, even once an approver said yes", async () => {
    const bus = new HookBus();
    bus.register(refundPolicy);
    const adapter = new OpenAIAgentsAdapter(bus);
    const paid: number[] = [];
    const model = new ScriptedModel([[functionCall("refund", "[70]", { callId: "call_1" })], [assistantMessage("All done.")]]);
    const agent = adapter.guard(new Agent({ name: "support", model, tools: [refundTool(paid)] }));
    const run = adapter.newRun();
    const first = await run.run(agent, "Refund $70.");
    const item = first.interruptions[0]; // the SDK asks an approver without asking the policy
    assert.ok(item !== undefined);
    first.state.approve(item);
    await run.run(agent, first.state);
    assert.deepEqual(paid, []);
    assert.equal(toolOutput(model.lastCall), "The harness refused this tool call: its arguments are not a JSON object");
  });

  it("refuses a later suspended call an always-approval would let through unasked", async () => {
    const bus = new HookBus();
    bus.register(refundPolicy);
    const adapter = new OpenAIAgentsAdapter(bus);
    const paid: number[] = [];
    const model = new ScriptedModel([
      [functionCall("refund", { amount: 70 }, { callId: "call_1" })],
      [functionCall("refund", { amount: 80 }, { callId: "call_2" })],
      [assistantMessage("All done.")],
    ]);
    const agent = adapter.guard(new Agent({ name: "support", model, tools: [refundTool(paid)] }));
    const run = adapter.newRun();
    const first = await run.run(agent, "Refund $70 and $80.");
    const item = first.interruptions[0];
    assert.ok(item !== undefined);
    first.state.approve(item, { alwaysApprove: true });
    const second = await run.run(agent, first.state);
    assert.equal(second.interruptions.length, 0);
    assert.deepEqual(paid, [70]);
    assert.equal(
      toolOutput(model.lastCall, "call_2"),
      "The harness refused this tool call: approval needed ($80 needs a manager), which the SDK could not ask for this call",
    );
  });

  it("guards the tools of an agent reached by a handoff", async () => {
    const bus = new HookBus();
    bus.register(refundPolicy);
    const adapter = new OpenAIAgentsAdapter(bus);
    const paid: number[] = [];
    const billingModel = script(500);
    const billing = new Agent({ name: "billing", model: billingModel, tools: [refundTool(paid)] });
    const triageModel = new ScriptedModel([[functionCall("transfer_to_billing", {}, { callId: "h1" })]]);
    const triage = adapter.guard(new Agent({ name: "triage", model: triageModel, handoffs: [billing] }));
    const run = adapter.newRun();
    const result = await run.run(triage, "Refund $500.");
    assert.equal(result.finalOutput, "All done.");
    assert.deepEqual(paid, []);
    assert.equal(toolOutput(billingModel.lastCall), "The harness refused this tool call: $500 is over the $100 limit");
    const steps = hookRecords(run).filter((record) => record.hook === "step.start").map((record) => record.step);
    assert.deepEqual(steps, [1, 2, 3], "the next agent's turns are the next steps of the same run");
  });

  it("guards an agent used as a tool (agent.asTool()) like any function tool", async () => {
    const seen: string[] = [];
    const noExperts = middleware({ name: "no_experts", hooks: ["tool.before"], failMode: "closed" }, async (event) => {
      seen.push(event.tool.name);
      return event.tool.name === "ask_expert" ? Block("experts are busy") : undefined;
    });
    const bus = new HookBus();
    bus.register(noExperts);
    const adapter = new OpenAIAgentsAdapter(bus);
    const expertModel = new ScriptedModel([[assistantMessage("42")]]);
    const expert = new Agent({ name: "expert", model: expertModel });
    const model = new ScriptedModel([
      [functionCall("ask_expert", { input: "What is six times seven?" }, { callId: "call_1" })],
      [assistantMessage("All done.")],
    ]);
    const asTool = expert.asTool({ toolName: "ask_expert", toolDescription: "Ask the expert." });
    const agent = adapter.guard(new Agent({ name: "support", model, tools: [asTool] }));
    const result = await adapter.newRun().run(agent, "Ask the expert.");
    assert.equal(result.finalOutput, "All done.");
    assert.deepEqual(seen, ["ask_expert"]);
    assert.equal(expertModel.calls.length, 0, "the agent behind the tool never ran");
    assert.equal(toolOutput(model.lastCall), "The harness refused this tool call: experts are busy");
  });

  it("guards a model named by the agent, through the run's model provider", async () => {
    const seen: string[] = [];
    const watch = middleware({ name: "watch", hooks: ["model.before"], failMode: "open" }, async (event) => {
      seen.push(event.request.model);
      return undefined;
    });
    const bus = new HookBus();
    bus.register(watch);
    const adapter = new OpenAIAgentsAdapter({ bus });
    const model = new ScriptedModel([[assistantMessage("Hi.")]]);
    const agent = adapter.guard(new Agent({ name: "named", instructions: "Help.", model: "scripted-model" }));
    const run = adapter.newRun({ runConfig: { modelProvider: { getModel: () => model } } });
    const result = await run.run(agent, "Hello");
    assert.equal(result.finalOutput, "Hi.");
    assert.deepEqual(seen, ["scripted-model"]);
    assert.equal(model.calls.length, 1);
  });

  it("guards the agents handed off to, and a guarded agent never runs outside a GuardedRun", async () => {
    const paid: number[] = [];
    const adapter = new OpenAIAgentsAdapter(new HookBus());
    const billing = new Agent({ name: "billing", model: script(30), tools: [refundTool(paid)] });
    const triage = adapter.guard(new Agent({ name: "triage", model: new ScriptedModel([]), handoffs: [billing] }));
    const guardedBilling = triage.handoffs[0];
    assert.ok(guardedBilling instanceof Agent && guardedBilling !== billing);
    const model = script(30);
    const alone = adapter.guard(new Agent({ name: "alone", model, tools: [refundTool(paid)] }));
    await assert.rejects(new Runner().run(alone, "Refund $30."), /guarded by harnessweaver/);
    assert.equal(model.calls.length, 0);
    assert.deepEqual(paid, []);
  });

  it("refuses to guard a tool it cannot guard (a hosted tool) rather than let it run unasked", () => {
    const adapter = new OpenAIAgentsAdapter(new HookBus());
    const agent = new Agent({ name: "web", tools: [webSearchTool()] });
    assert.throws(() => adapter.guard(agent), /tool 'web_search' is a hosted_tool tool, which the harnessweaver adapter cannot guard/);
    assert.throws(() => new OpenAIAgentsAdapter({} as HookBus), /takes a harness \(with \.bus\) or a HookBus, got Object/);
  });

  it("runs the example (examples/openai-agents.mjs) offline, with what it prints", async () => {
    const example = fileURLToPath(new URL("../../examples/openai-agents.mjs", import.meta.url));
    const { stdout } = await promisify(execFile)(process.execPath, [example], { cwd: fileURLToPath(new URL("../..", import.meta.url)) });
    const lines = stdout.split("\n");
    for (const expected of [
      'admitted: refund(30) ran; the model read "refunded $30"; final output "All done."',
      'suspended: refund(70) waits for approval (refund, {"amount":70}); paid so far [30]',
      'approved: refund(70) ran; the model read "refunded $70"; final output "All done."',
      "  tool.before   suspend   run=refund-70 step=1 tool=refund",
      'rejected: refund(90) never ran; the model read "The approver denied this tool call: not without a receipt"',
      'blocked: refund(500) never ran; the model read "The harness refused this tool call: $500 is over the $100 limit"',
      "rewritten: the model asked refund(13), refund(10) ran",
      "paid in all: [30,70,10]",
    ]) {
      assert.ok(lines.includes(expected), `the example prints: ${expected}`);
    }
  });
});
