/**
 * harnessweaver/ai inside the real AI SDK: `generateText`/`streamText` driven by the SDK's own
 * mock model (`MockLanguageModelV4`, scripted answers with tool calls) and real tools, offline.
 */

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { test } from "node:test";
import { APICallError, generateText, isStepCount, jsonSchema, streamText, tool, wrapLanguageModel, type ModelMessage } from "ai";
import { convertArrayToReadableStream, MockLanguageModelV4 } from "ai/test";
import { AIRun, HarnessStopped } from "../adapters/ai.js";
import { HookBus } from "../bus.js";
import { middleware } from "../middleware.js";
import { Block, Continue, Escalate, Retry, Suspend, type Outcome } from "../outcomes.js";
import { Message, type ModelRequestEvent, type ModelResponseEvent, type ToolCallEvent, type ToolResultEvent } from "../events.js";
import { ModelRequestEvent as ModelRequestEventClass, StepEndEvent, TaskEndEvent, TaskStartEvent, ToolCallEvent as ToolCallEventClass } from "../events.js";
import type { JsonValue } from "../json.js";
import { callTurn, textTurn, usage, type Generated } from "./adapter-ai-support.js";


function scripted(turns: Generated[]): MockLanguageModelV4 {
  return new MockLanguageModelV4({ modelId: "mock-1", doGenerate: turns });
}

/** A refund tool that records what it ran with. */
function refundTool(ran: object[]) {
  return tool({
    description: "Refund an order",
    inputSchema: jsonSchema<{ order: number; amount_usd: number }>({
      type: "object",
      properties: { order: { type: "number" }, amount_usd: { type: "number" } },
      required: ["order", "amount_usd"],
    }),
    execute: async (input: { order: number; amount_usd: number }) => {
      ran.push(input);
      return { refunded: input.amount_usd };
    },
  });
}

function busWith(hooks: Parameters<typeof middleware>[0]["hooks"], fn: (event: never) => Outcome | undefined | Promise<Outcome | undefined>, failMode: "closed" | "open" = "closed") {
  const bus = new HookBus();
  bus.register(middleware({ name: "guard", hooks, failMode }, fn as never));
  return bus;
}

/** What the model read as the last tool result (the second call's prompt). */
function lastToolOutput(model: MockLanguageModelV4): unknown {
  const prompt = model.doGenerateCalls.at(-1)?.prompt ?? [];
  const toolMessage = prompt.filter((m) => m.role === "tool").at(-1);
  const part = toolMessage?.role === "tool" ? toolMessage.content.find((p) => p.type === "tool-result") : undefined;
  return part?.type === "tool-result" ? part.output : undefined;
}

async function run(aiRun: AIRun, model: MockLanguageModelV4, ran: object[], prompt: string | ModelMessage[] = "Refund order 7", instructions?: string) {
  const input = typeof prompt === "string" ? { prompt } : { messages: prompt };
  if (instructions !== undefined) Object.assign(input, { instructions });
  return generateText({
    model: wrapLanguageModel({ model, middleware: aiRun.middleware }),
    tools: aiRun.tools({ refund: refundTool(ran) }),
    stopWhen: isStepCount(5),
    ...input,
  });
}

test("continue: the call runs, every hook point is traced with run, step and tool", async () => {
  const seen: string[] = [];
  const bus = new HookBus();
  bus.register(
    middleware({ name: "watch", hooks: ["model.before", "model.after", "tool.before", "tool.after"], failMode: "closed" }, (event: unknown) => {
      seen.push((event as { constructor: { name: string } }).constructor.name);
      return undefined;
    }),
  );
  const ran: object[] = [];
  const model = scripted([callTurn("c1", "refund", { order: 7, amount_usd: 40 }), textTurn("Refunded.")]);
  const aiRun = new AIRun(bus, { runId: "run-1" });
  const result = await run(aiRun, model, ran);
  assert.equal(result.text, "Refunded.");
  assert.deepEqual(ran, [{ order: 7, amount_usd: 40 }]);
  assert.deepEqual(seen, ["ModelRequestEvent", "ModelResponseEvent", "ToolCallEvent", "ToolResultEvent", "ModelRequestEvent", "ModelResponseEvent"]);
  const hooks = aiRun.trace.records().filter((r) => r.kind === "hook");
  assert.deepEqual(
    hooks.map((r) => [r.hook, r.run, r.step ?? null, r.tool ?? null, r.outcome]),
    [
      ["model.before", "run-1", 1, null, "continue"],
      ["model.after", "run-1", 1, null, "continue"],
      ["tool.before", "run-1", 1, "refund", "continue"],
      ["tool.after", "run-1", 1, "refund", "continue"],
      ["model.before", "run-1", 2, null, "continue"],
      ["model.after", "run-1", 2, null, "continue"],
    ],
  );
  assert.deepEqual(lastToolOutput(model), { type: "json", value: { refunded: 40 } });
});

test("model.before sees the prompt, the tools and the model id; a modified request is what the model gets", async () => {
  let request: ModelRequestEvent["request"] | undefined;
  const bus = busWith(["model.before"], (event: ModelRequestEvent) => {
    request ??= event.request;
    const messages = event.request.messages.map((m) => (m.role === "user" ? m.with({ content: m.content.replace("4242", "[card]") }) : m));
    return Continue(event.with({ request: event.request.with({ messages, tools: [] }) }));
  });
  const model = scripted([textTurn("ok")]);
  const aiRun = new AIRun(bus);
  await run(aiRun, model, [], [{ role: "user", content: "card 4242, refund" }], "Be brief.");
  assert.equal(request?.model, "mock-1");
  assert.deepEqual(request?.messages.map((m) => [m.role, m.content]), [["system", "Be brief."], ["user", "card 4242, refund"]]);
  assert.deepEqual(request?.tools.map((t) => t.name), ["refund"]);
  assert.deepEqual(request?.tools[0]?.parameters["required"], ["order", "amount_usd"]);
  const sent = model.doGenerateCalls[0];
  assert.equal(sent?.prompt[1]?.role, "user");
  assert.deepEqual(sent?.prompt[1]?.content, [{ type: "text", text: "card [card], refund" }]);
  assert.equal(sent?.prompt[0]?.content, "Be brief."); // unchanged messages are the SDK's own
  assert.deepEqual(sent?.tools ?? [], []); // a tool removed is not offered
});

test("a modified tool call: the changed arguments are what runs; a modified result is what the model reads", async () => {
  const bus = new HookBus();
  bus.register(
    middleware({ name: "cap", hooks: ["tool.before"], failMode: "closed" }, (event: ToolCallEvent) =>
      Continue(event.with({ call: event.call.with({ arguments: { ...event.call.arguments, amount_usd: 100 } }) })),
    ),
  );
  bus.register(
    middleware({ name: "note", hooks: ["tool.after"], failMode: "closed" }, (event: ToolResultEvent) =>
      Continue(event.with({ result: event.result.with({ output: "refund capped at 100" }) })),
    ),
  );
  const ran: object[] = [];
  const model = scripted([callTurn("c1", "refund", { order: 7, amount_usd: 900 }), textTurn("done")]);
  const aiRun = new AIRun(bus);
  await run(aiRun, model, ran);
  assert.deepEqual(ran, [{ order: 7, amount_usd: 100 }]);
  assert.deepEqual(lastToolOutput(model), { type: "text", value: "refund capped at 100" });
});

test("a blocked tool call does not run; the model reads the refusal and the run goes on", async () => {
  const bus = busWith(["tool.before"], (event: ToolCallEvent) =>
    Number(event.call.arguments["amount_usd"]) > 500 ? Block("over the refund cap", { code: "refund_cap" }) : undefined,
  );
  const ran: object[] = [];
  const model = scripted([callTurn("c1", "refund", { order: 7, amount_usd: 900 }), textTurn("I could not refund that.")]);
  const aiRun = new AIRun(bus);
  const result = await run(aiRun, model, ran);
  assert.deepEqual(ran, []);
  assert.deepEqual(lastToolOutput(model), { type: "text", value: "The harness refused this tool call: over the refund cap" });
  assert.equal(result.text, "I could not refund that.");
  const blocked = aiRun.trace.records().find((r) => r.kind === "hook" && r.hook === "tool.before");
  assert.equal(blocked?.outcome, "block");
  assert.equal(blocked?.code, "refund_cap");
  assert.equal(aiRun.trace.records().some((r) => r.hook === "tool.after"), false);
});

test("a blocked model call does not happen: generateText rejects with HarnessStopped", async () => {
  const bus = busWith(["model.before"], () => Block("no model today", { code: "closed_shop" }));
  const model = scripted([textTurn("never")]);
  const aiRun = new AIRun(bus);
  await assert.rejects(run(aiRun, model, []), (error: unknown) => {
    assert.ok(error instanceof HarnessStopped);
    assert.equal(error.hook, "model.before");
    assert.equal(error.outcome, "block");
    assert.equal(error.reason, "no model today");
    assert.equal(error.code, "closed_shop");
    return true;
  });
  assert.equal(model.doGenerateCalls.length, 0);
});

test("a blocked response (model.after) never reaches the caller", async () => {
  const bus = busWith(["model.after"], (event: ModelResponseEvent) => (event.response.message.content.includes("secret") ? Block("leak") : undefined));
  const model = scripted([textTurn("the secret is 42")]);
  await assert.rejects(run(new AIRun(bus), model, []), (error: unknown) => error instanceof HarnessStopped && error.hook === "model.after");
});

test("a middleware that fails closed blocks: at model.before and at tool.before", async () => {
  const failing = () => {
    throw new Error("guard crashed");
  };
  const model = scripted([textTurn("never")]);
  await assert.rejects(run(new AIRun(busWith(["model.before"], failing)), model, []), (error: unknown) => {
    return error instanceof HarnessStopped && error.outcome === "block" && error.code === "middleware_error";
  });
  assert.equal(model.doGenerateCalls.length, 0);

  const ran: object[] = [];
  const toolModel = scripted([callTurn("c1", "refund", { order: 7, amount_usd: 40 }), textTurn("sorry")]);
  const aiRun = new AIRun(busWith(["tool.before"], failing));
  await run(aiRun, toolModel, ran);
  assert.deepEqual(ran, []);
  assert.deepEqual(lastToolOutput(toolModel), { type: "text", value: "The harness refused this tool call: middleware guard failed: exception" });
  const record = aiRun.trace.records().find((r) => r.kind === "failure" && r.hook === "tool.before");
  assert.equal(record?.failure, "exception");
  assert.equal(record?.error, "Error"); // the type name, never the message (R9)
});

test("suspend: an approval request; approved, the call runs on resumption", async () => {
  const bus = busWith(["tool.before"], (event: ToolCallEvent) =>
    Number(event.call.arguments["amount_usd"]) > 500 ? Suspend("large refund", { approverRole: "finance" }) : undefined,
  );
  const ran: object[] = [];
  const model = scripted([callTurn("c1", "refund", { order: 7, amount_usd: 900 }), textTurn("Refunded 900.")]);
  const aiRun = new AIRun(bus, { runId: "run-approve" });
  const messages: ModelMessage[] = [{ role: "user", content: "Refund order 7" }];
  const first = await run(aiRun, model, ran, messages);
  assert.deepEqual(ran, []);
  const request = first.content.find((part) => part.type === "tool-approval-request");
  assert.ok(request !== undefined && request.type === "tool-approval-request");
  assert.equal(request.toolCall.toolCallId, "c1");
  const pending = await aiRun.pending("c1");
  assert.equal(pending?.approverRole, "finance");
  assert.equal(pending?.reason, "large refund");

  messages.push(...first.responseMessages, {
    role: "tool",
    content: [{ type: "tool-approval-response", approvalId: request.approvalId, approved: true }],
  });
  const second = await run(aiRun, model, ran, messages);
  assert.deepEqual(ran, [{ order: 7, amount_usd: 900 }]);
  assert.equal(second.text, "Refunded 900.");
  // Asked once: the resumption uses the answer the run kept.
  const befores = aiRun.trace.records().filter((r) => r.kind === "hook" && r.hook === "tool.before");
  assert.deepEqual(befores.map((r) => r.outcome), ["suspend"]);
  assert.equal(aiRun.trace.records().filter((r) => r.kind === "hook" && r.hook === "tool.after").length, 1);
});

test("suspend: denied, the call never runs and the model reads the denial", async () => {
  const bus = busWith(["tool.before"], () => Suspend("needs finance"));
  const ran: object[] = [];
  const model = scripted([callTurn("c1", "refund", { order: 7, amount_usd: 900 }), textTurn("Not refunded.")]);
  const aiRun = new AIRun(bus);
  const messages: ModelMessage[] = [{ role: "user", content: "Refund order 7" }];
  const first = await run(aiRun, model, ran, messages);
  const request = first.content.find((part) => part.type === "tool-approval-request");
  assert.ok(request !== undefined && request.type === "tool-approval-request");
  messages.push(...first.responseMessages, {
    role: "tool",
    content: [{ type: "tool-approval-response", approvalId: request.approvalId, approved: false, reason: "too much" }],
  });
  const second = await run(aiRun, model, ran, messages);
  assert.deepEqual(ran, []);
  assert.equal(second.text, "Not refunded.");
  assert.deepEqual(lastToolOutput(model), { type: "execution-denied", reason: "too much" });
});

test("a suspended call the caller's toolApproval lets through unasked does not run", async () => {
  const bus = busWith(["tool.before"], () => Suspend("needs finance"));
  const ran: object[] = [];
  const model = scripted([callTurn("c1", "refund", { order: 7, amount_usd: 900 }), textTurn("ok")]);
  const aiRun = new AIRun(bus);
  await generateText({
    model: wrapLanguageModel({ model, middleware: aiRun.middleware }),
    tools: aiRun.tools({ refund: refundTool(ran) }),
    toolApproval: { refund: "not-applicable" }, // replaces the tool's needsApproval in the SDK
    stopWhen: isStepCount(5),
    prompt: "Refund order 7",
  });
  assert.deepEqual(ran, []);
  assert.deepEqual(lastToolOutput(model), {
    type: "text",
    value: "The harness refused this tool call: approval needed (needs finance), which was not given for this call",
  });
});

test("escalate at tool.before: the call does not run and the run's next model call does not happen", async () => {
  const bus = busWith(["tool.before"], () => Escalate("fraud suspected", { to: "risk" }));
  const ran: object[] = [];
  const model = scripted([callTurn("c1", "refund", { order: 7, amount_usd: 900 }), textTurn("never")]);
  await assert.rejects(run(new AIRun(bus), model, ran), (error: unknown) => {
    return error instanceof HarnessStopped && error.hook === "tool.before" && error.outcome === "escalate";
  });
  assert.deepEqual(ran, []);
  assert.equal(model.doGenerateCalls.length, 1);
});

test("streaming: the response is judged whole, then played; tools run; a modified text is what streams", async () => {
  const bus = busWith(["model.after"], (event: ModelResponseEvent) =>
    event.response.message.content === "" ? undefined : Continue(event.with({ response: event.response.with({ message: event.response.message.with({ content: "[checked] " + event.response.message.content }) }) })),
  );
  const finish = (unified: "stop" | "tool-calls") => ({ type: "finish" as const, usage, finishReason: { unified, raw: unified } });
  const model = new MockLanguageModelV4({
    modelId: "mock-stream",
    doStream: [
      {
        stream: convertArrayToReadableStream([
          { type: "stream-start" as const, warnings: [] },
          { type: "tool-call" as const, toolCallId: "c1", toolName: "refund", input: JSON.stringify({ order: 7, amount_usd: 40 }) },
          finish("tool-calls"),
        ]),
      },
      {
        stream: convertArrayToReadableStream([
          { type: "stream-start" as const, warnings: [] },
          { type: "text-start" as const, id: "t" },
          { type: "text-delta" as const, id: "t", delta: "Refun" },
          { type: "text-delta" as const, id: "t", delta: "ded." },
          { type: "text-end" as const, id: "t" },
          finish("stop"),
        ]),
      },
    ],
  });
  const ran: object[] = [];
  const aiRun = new AIRun(bus);
  const result = streamText({
    model: wrapLanguageModel({ model, middleware: aiRun.middleware }),
    tools: aiRun.tools({ refund: refundTool(ran) }),
    stopWhen: isStepCount(5),
    prompt: "Refund order 7",
  });
  assert.equal(await result.text, "[checked] Refunded.");
  assert.deepEqual(ran, [{ order: 7, amount_usd: 40 }]);
  const hooks = aiRun.trace.records().filter((r) => r.kind === "hook").map((r) => `${r.hook}@${r.step}`);
  assert.deepEqual(hooks, ["model.before@1", "model.after@1", "tool.before@1", "tool.after@1", "model.before@2", "model.after@2"]);
});

test("streaming: a blocked response streams nothing of it", async () => {
  const bus = busWith(["model.after"], () => Block("unsafe"));
  const model = new MockLanguageModelV4({
    doStream: {
      stream: convertArrayToReadableStream([
        { type: "text-start" as const, id: "t" },
        { type: "text-delta" as const, id: "t", delta: "unsafe text" },
        { type: "text-end" as const, id: "t" },
        { type: "finish" as const, usage, finishReason: { unified: "stop" as const, raw: "stop" } },
      ]),
    },
  });
  const aiRun = new AIRun(bus);
  const errors: unknown[] = [];
  const result = streamText({ model: wrapLanguageModel({ model, middleware: aiRun.middleware }), prompt: "hi", onError: ({ error }) => void errors.push(error) });
  const deltas: string[] = [];
  for await (const part of result.fullStream) if (part.type === "text-delta") deltas.push(part.text);
  assert.deepEqual(deltas, []);
  assert.ok(errors.some((e) => e instanceof HarnessStopped && e.hook === "model.after"));
});

test("AIRun takes a harness (anything with a bus) and refuses anything else", () => {
  const bus = new HookBus();
  assert.equal(new AIRun({ bus }).bus, bus);
  assert.throws(() => new AIRun({} as never), TypeError);
});

test("tool.after: a Block withholds the result; a tool's own toModelOutput is not given the refusal", async () => {
  const bus = busWith(["tool.after"], () => Block("contains card data"));
  const ran: object[] = [];
  const converted: unknown[] = [];
  const model = scripted([callTurn("c1", "refund", { order: 7, amount_usd: 40 }), textTurn("ok")]);
  const aiRun = new AIRun(bus);
  const refund = { ...refundTool(ran), toModelOutput: ({ output }: { output: unknown }) => (converted.push(output), { type: "text" as const, value: "converted" }) };
  await generateText({
    model: wrapLanguageModel({ model, middleware: aiRun.middleware }),
    tools: aiRun.tools({ refund }),
    stopWhen: isStepCount(5),
    prompt: "Refund order 7",
  });
  assert.deepEqual(ran, [{ order: 7, amount_usd: 40 }]); // it ran: tool.after comes after
  assert.deepEqual(converted, []);
  assert.deepEqual(lastToolOutput(model), { type: "text", value: "The harness withheld this tool's result: contains card data" });
});

test("a tool that throws: tool.after sees the failure (is_error); the SDK reports it to the model as it would", async () => {
  const errors: boolean[] = [];
  const bus = busWith(["tool.after"], (event: ToolResultEvent) => (errors.push(event.result.isError), undefined));
  const model = scripted([callTurn("c1", "refund", { order: 7, amount_usd: 40 }), textTurn("it failed")]);
  const aiRun = new AIRun(bus);
  const broken = tool({
    inputSchema: jsonSchema<{ order: number }>({ type: "object", properties: { order: { type: "number" } } }),
    execute: async (): Promise<string> => {
      throw new Error("payment service down");
    },
  });
  await generateText({
    model: wrapLanguageModel({ model, middleware: aiRun.middleware }),
    tools: aiRun.tools({ refund: broken }),
    stopWhen: isStepCount(5),
    prompt: "Refund order 7",
  });
  assert.deepEqual(errors, [true]);
  assert.deepEqual(lastToolOutput(model), { type: "error-text", value: "Error: payment service down" });
});

test("model.after: a tool call the chain removes is not run", async () => {
  const bus = busWith(["model.after"], (event: ModelResponseEvent) =>
    event.response.message.toolCalls.length === 0
      ? undefined
      : Continue(event.with({ response: event.response.with({ message: event.response.message.with({ content: "No refunds.", toolCalls: [] }) }) })),
  );
  const ran: object[] = [];
  const model = scripted([callTurn("c1", "refund", { order: 7, amount_usd: 40 }), textTurn("never")]);
  const result = await run(new AIRun(bus), model, ran);
  assert.deepEqual(ran, []);
  assert.equal(result.text, "No refunds.");
  assert.equal(result.finishReason, "stop");
  assert.equal(model.doGenerateCalls.length, 1);
});

test("Retry at tool.before refuses the call (the SDK cannot ask again); a failing open middleware lets it run", async () => {
  const ran: object[] = [];
  const model = scripted([callTurn("c1", "refund", { order: 7, amount_usd: 40 }), textTurn("ok")]);
  await run(new AIRun(busWith(["tool.before"], () => Retry("rate limited"))), model, ran);
  assert.deepEqual(ran, []);
  assert.deepEqual(lastToolOutput(model), { type: "text", value: "The harness refused this tool call: rate limited" });

  const openModel = scripted([callTurn("c1", "refund", { order: 7, amount_usd: 40 }), textTurn("ok")]);
  const failing = () => {
    throw new TypeError("bug");
  };
  await run(new AIRun(busWith(["tool.before"], failing, "open")), openModel, ran);
  assert.deepEqual(ran, [{ order: 7, amount_usd: 40 }]);
});

test("Suspend at model.before stops the call: the SDK pauses only for tool approvals", async () => {
  const model = scripted([textTurn("never")]);
  await assert.rejects(run(new AIRun(busWith(["model.before"], () => Suspend("review first"))), model, []), (error: unknown) => {
    return error instanceof HarnessStopped && error.outcome === "suspend";
  });
  assert.equal(model.doGenerateCalls.length, 0);
});

test("a change the SDK cannot carry out (another model) stops the call", async () => {
  const bus = busWith(["model.before"], (event: ModelRequestEvent) => Continue(event.with({ request: event.request.with({ model: "other" }) })));
  const model = scripted([textTurn("never")]);
  await assert.rejects(run(new AIRun(bus), model, []), (error: unknown) => error instanceof HarnessStopped && error.outcome === "modified");
  assert.equal(model.doGenerateCalls.length, 0);
});

test("the example (examples/vercel-ai.mjs) runs offline: the small refund runs, the big one is blocked", async () => {
  const root = fileURLToPath(new URL("../../", import.meta.url)); // ts-runner/, from dist/test/
  const { stdout } = await promisify(execFile)(process.execPath, ["examples/vercel-ai.mjs"], { cwd: root });
  assert.match(stdout, /refund tool ran: order 7, 40 USD/);
  assert.doesNotMatch(stdout, /refund tool ran: order 8/);
  assert.match(stdout, /tool result for call-2: "The harness refused this tool call: refunds over 500 USD need a manager \(asked for 900\)"/);
  assert.match(stdout, /step 2 tool\.before refund: block \(refund_cap\)/);
  assert.match(stdout, /answer: Refunded 40 USD for order 7; order 8 needs a manager\./);
});

test("run.toolApproval (the SDK's toolApproval setting): the approval request carries the reason and role; approved, the call runs", async () => {
  const bus = busWith(["tool.before"], (event: ToolCallEvent) =>
    Number(event.call.arguments["amount_usd"]) > 500 ? Suspend("large refund", { approverRole: "finance" }) : undefined,
  );
  const ran: object[] = [];
  const model = scripted([callTurn("c1", "refund", { order: 7, amount_usd: 900 }), textTurn("Refunded 900.")]);
  const aiRun = new AIRun(bus);
  const ask = (messages: ModelMessage[]) =>
    generateText({
      model: wrapLanguageModel({ model, middleware: aiRun.middleware }),
      tools: aiRun.tools({ refund: refundTool(ran) }),
      toolApproval: aiRun.toolApproval,
      stopWhen: isStepCount(5),
      messages,
    });
  const messages: ModelMessage[] = [{ role: "user", content: "Refund order 7" }];
  const first = await ask(messages);
  const request = first.content.find((part) => part.type === "tool-approval-request");
  assert.ok(request !== undefined && request.type === "tool-approval-request");
  assert.equal(request.reason, "large refund (approver: finance)");
  assert.equal(request.isAutomatic, undefined);
  assert.deepEqual(ran, []);
  messages.push(...first.responseMessages, { role: "tool", content: [{ type: "tool-approval-response", approvalId: request.approvalId, approved: true }] });
  const second = await ask(messages);
  assert.equal(second.text, "Refunded 900.");
  assert.deepEqual(ran, [{ order: 7, amount_usd: 900 }]);
});

test("streaming: a tool call the chain changes at model.after is what runs (the model's own input parts are not played)", async () => {
  const bus = busWith(["model.after"], (event: ModelResponseEvent) => {
    const calls = event.response.message.toolCalls.map((c) => c.with({ arguments: { ...c.arguments, amount_usd: 10 } }));
    return calls.length === 0 ? undefined : Continue(event.with({ response: event.response.with({ message: event.response.message.with({ toolCalls: calls }) }) }));
  });
  const finish = (unified: "stop" | "tool-calls") => ({ type: "finish" as const, usage, finishReason: { unified, raw: unified } });
  const input = JSON.stringify({ order: 7, amount_usd: 900 });
  const model = new MockLanguageModelV4({
    doStream: [
      {
        stream: convertArrayToReadableStream([
          { type: "tool-input-start" as const, id: "c1", toolName: "refund" },
          { type: "tool-input-delta" as const, id: "c1", delta: input },
          { type: "tool-input-end" as const, id: "c1" },
          { type: "tool-call" as const, toolCallId: "c1", toolName: "refund", input },
          finish("tool-calls"),
        ]),
      },
      { stream: convertArrayToReadableStream([{ type: "text-start" as const, id: "t" }, { type: "text-delta" as const, id: "t", delta: "ok" }, { type: "text-end" as const, id: "t" }, finish("stop")]) },
    ],
  });
  const ran: object[] = [];
  const aiRun = new AIRun(bus);
  const result = streamText({
    model: wrapLanguageModel({ model, middleware: aiRun.middleware }),
    tools: aiRun.tools({ refund: refundTool(ran) }),
    stopWhen: isStepCount(5),
    prompt: "Refund order 7",
  });
  const inputs: string[] = [];
  for await (const part of result.fullStream) if (part.type === "tool-input-delta") inputs.push(part.delta);
  assert.deepEqual(inputs, []);
  assert.deepEqual(ran, [{ order: 7, amount_usd: 10 }]);
  assert.equal(await result.text, "ok");
});

test("streaming: a suspended call is the SDK's approval request in the stream; the tool does not run", async () => {
  const bus = busWith(["tool.before"], () => Suspend("needs finance"));
  const input = JSON.stringify({ order: 7, amount_usd: 900 });
  const model = new MockLanguageModelV4({
    doStream: {
      stream: convertArrayToReadableStream([
        { type: "tool-call" as const, toolCallId: "c1", toolName: "refund", input },
        { type: "finish" as const, usage, finishReason: { unified: "tool-calls" as const, raw: "tool_calls" } },
      ]),
    },
  });
  const ran: object[] = [];
  const aiRun = new AIRun(bus);
  const result = streamText({
    model: wrapLanguageModel({ model, middleware: aiRun.middleware }),
    tools: aiRun.tools({ refund: refundTool(ran) }),
    stopWhen: isStepCount(5),
    prompt: "Refund order 7",
  });
  const kinds: string[] = [];
  for await (const part of result.fullStream) kinds.push(part.type);
  assert.ok(kinds.includes("tool-approval-request"));
  assert.deepEqual(ran, []);
  assert.equal((await aiRun.pending("c1"))?.reason, "needs finance");
});

test("a call whose input is not a JSON object is refused without running (the bus cannot judge it)", async () => {
  const ran: string[] = [];
  const model = scripted([
    { content: [{ type: "tool-call", toolCallId: "c1", toolName: "echo", input: JSON.stringify("hello") }], finishReason: { unified: "tool-calls", raw: "tool_calls" }, usage, warnings: [] },
    textTurn("ok"),
  ]);
  const aiRun = new AIRun(new HookBus());
  const echo = tool({ inputSchema: jsonSchema<string>({ type: "string" }), execute: async (text: string) => (ran.push(text), text) });
  const clientSide = tool({ inputSchema: jsonSchema<string>({ type: "string" }), outputSchema: jsonSchema<string>({ type: "string" }) });
  const tools = aiRun.tools({ echo, clientSide });
  assert.equal(tools.clientSide, clientSide); // no execute: nothing to guard
  await generateText({ model: wrapLanguageModel({ model, middleware: aiRun.middleware }), tools, stopWhen: isStepCount(5), prompt: "echo" });
  assert.deepEqual(ran, []);
  assert.deepEqual(lastToolOutput(model), { type: "text", value: "The harness refused this tool call: its arguments are not a JSON object" });
});

test("model.before at the next step sees the tool call and its result; a changed tool result or an added message is what the model gets", async () => {
  const requests: ModelRequestEvent["request"][] = [];
  const bus = busWith(["model.before"], (event: ModelRequestEvent) => {
    requests.push(event.request);
    if (event.step !== 2) return undefined;
    const messages = event.request.messages.map((m) => (m.role === "tool" ? m.with({ content: "[redacted]" }) : m));
    return Continue(event.with({ request: event.request.with({ messages }) }));
  });
  const ran: object[] = [];
  const model = scripted([callTurn("c1", "refund", { order: 7, amount_usd: 40 }), callTurn("c2", "refund", { order: 8, amount_usd: 30 }), textTurn("done")]);
  const aiRun = new AIRun(bus);
  await run(aiRun, model, ran);
  const second = requests[1];
  assert.deepEqual(second?.messages.map((m) => [m.role, m.content, m.toolCallId, m.toolCalls.map((c) => c.id)]), [
    ["user", "Refund order 7", null, []],
    ["assistant", "", null, ["c1"]],
    ["tool", JSON.stringify({ refunded: 40 }), "c1", []],
  ]);
  const sent = model.doGenerateCalls[1]?.prompt ?? [];
  const toolMessage = sent[2];
  assert.equal(toolMessage?.role, "tool");
  const part = toolMessage?.role === "tool" ? toolMessage.content[0] : undefined;
  assert.equal(part?.type === "tool-result" ? part.toolCallId : null, "c1");
  assert.deepEqual(part?.type === "tool-result" ? part.output : null, { type: "text", value: "[redacted]" });
  // The assistant turn, unchanged by the chain, is the SDK's own (its tool call's input as an object).
  const assistant = sent[1];
  const call = assistant?.role === "assistant" ? assistant.content.find((p) => p.type === "tool-call") : undefined;
  assert.deepEqual(call?.type === "tool-call" ? call.input : null, { order: 7, amount_usd: 40 });

  // Messages added: the prompt is rebuilt from the chain's messages.
  const addBus = busWith(["model.before"], (event: ModelRequestEvent) =>
    Continue(event.with({ request: event.request.with({ messages: [new Message({ role: "system", content: "Refunds only under 100." }), ...event.request.messages] }) })),
  );
  const addModel = scripted([textTurn("ok")]);
  await run(new AIRun(addBus), addModel, []);
  assert.deepEqual(addModel.doGenerateCalls[0]?.prompt, [
    { role: "system", content: "Refunds only under 100." },
    { role: "user", content: [{ type: "text", text: "Refund order 7" }] },
  ]);
});

test("a Retry at model.after asks model.before and the model again, within the run's bound; past it the call stops", async () => {
  const cite = (event: ModelResponseEvent) =>
    event.response.message.content.includes("[1]") ? undefined : Retry("the answer cites no source", { code: "missing_citation" });
  const seen: string[] = [];
  const bus = busWith(["model.before", "model.after"], (event: ModelRequestEvent | ModelResponseEvent) => {
    seen.push(event instanceof ModelRequestEventClass ? "model.before" : "model.after");
    return event instanceof ModelRequestEventClass ? undefined : cite(event as ModelResponseEvent);
  });
  const model = scripted([textTurn("Trust me."), textTurn("It is X [1].")]);
  const aiRun = new AIRun(bus);
  const result = await aiRun.generateText({ model, prompt: "What is it?" });
  assert.equal(result.text, "It is X [1].");
  assert.equal(model.doGenerateCalls.length, 2);
  assert.deepEqual(seen, ["model.before", "model.after", "model.before", "model.after"]);
  const steps = aiRun.trace.records().filter((r) => r.kind === "hook" && r.hook.startsWith("model.")).map((r) => r.step);
  assert.deepEqual(steps, [1, 1, 1, 1], "one step: the model asked again");

  const never = scripted([textTurn("No."), textTurn("Still no."), textTurn("Never.")]);
  await assert.rejects(new AIRun(busWith(["model.after"], cite), { maxRetries: 1 }).generateText({ model: never, prompt: "What is it?" }), (error: unknown) => {
    return error instanceof HarnessStopped && error.hook === "model.after" && error.outcome === "retry" && error.code === "missing_citation";
  });
  assert.equal(never.doGenerateCalls.length, 2, "asked once more, then the call stops");
});

test("a note appended at model.before (a guard's warning) keeps the SDK's own messages: their files and provider options", async () => {
  const bus = busWith(["model.before"], (event: ModelRequestEvent) =>
    Continue(event.with({ request: event.request.with({ messages: [...event.request.messages, new Message({ role: "user", content: "[harness notice] slow down" })] }) })),
  );
  const model = scripted([textTurn("ok")]);
  const image = { type: "file" as const, data: "aGVsbG8=", mediaType: "image/png" };
  const options = { acme: { cache: "ephemeral" } };
  const messages: ModelMessage[] = [
    { role: "user", content: [{ type: "text", text: "What is in this picture?" }, image], providerOptions: options },
  ];
  const result = await run(new AIRun(bus), model, [], messages, "Be brief.");
  assert.equal(result.text, "ok");
  const sent = model.doGenerateCalls[0]?.prompt ?? [];
  assert.equal(sent.length, 3);
  assert.equal(sent[0]?.content, "Be brief.");
  const user = sent[1];
  assert.equal(user?.role, "user");
  assert.deepEqual(user?.providerOptions, options, "the message the chain left alone is the SDK's own");
  const parts = user?.role === "user" ? user.content : [];
  assert.deepEqual(parts.map((p) => p.type), ["text", "file"]);
  assert.deepEqual(sent[2], { role: "user", content: [{ type: "text", text: "[harness notice] slow down" }] });
});

test("an input the tool's schema turns into objects (a Date) is seen as JSON, and the tool gets the SDK's input", async () => {
  const seen: unknown[] = [];
  const bus = busWith(["tool.before"], (event: ToolCallEvent) => (seen.push(event.call.arguments["when"]), undefined));
  const got: unknown[] = [];
  const schedule = tool({
    // A schema whose validation makes a Date of the text, as zod's coerce.date() would.
    inputSchema: jsonSchema<{ order: number; when: Date }>(
      { type: "object", properties: { order: { type: "number" }, when: { type: "string" } } },
      { validate: (value) => ({ success: true, value: { ...(value as { order: number }), when: new Date((value as { when: string }).when) } }) },
    ),
    execute: async ({ when }: { when: Date }) => (got.push(when), "scheduled"),
  });
  const model = scripted([callTurn("c1", "schedule", { order: 7, when: "2026-12-24T10:00:00.000Z" }), textTurn("ok")]);
  const aiRun = new AIRun(bus);
  await generateText({ model: wrapLanguageModel({ model, middleware: aiRun.middleware }), tools: aiRun.tools({ schedule }), stopWhen: isStepCount(5), prompt: "x" });
  assert.deepEqual(seen, ["2026-12-24T10:00:00.000Z"]);
  assert.ok(got[0] instanceof Date);
});

// --- the task lifecycle: run.generateText / run.streamText / run.start ... run.end --------------

const ALL_HOOKS = ["task.start", "step.start", "model.before", "model.after", "tool.before", "tool.after", "step.end", "task.end"] as const;

/** A bus whose one middleware sees every hook point: `answer` decides, `ends` collects task.end events. */
function lifecycleBus(answer: (event: { constructor: { name: string } }) => Outcome | undefined = () => undefined) {
  const ends: TaskEndEvent[] = [];
  const bus = new HookBus();
  bus.register(
    middleware({ name: "watch", hooks: [...ALL_HOOKS], failMode: "closed" }, (event: never) => {
      const seen = event as { constructor: { name: string } };
      if (seen instanceof TaskEndEvent) ends.push(seen);
      return answer(seen);
    }),
  );
  return { bus, ends };
}

function hooksOf(aiRun: AIRun): string[] {
  return aiRun.trace.records().filter((r) => r.kind === "hook").map((r) => (r.step === undefined || r.step === null ? r.hook : `${r.hook}@${r.step}`));
}

function endOf(ends: readonly TaskEndEvent[]): [string, number, JsonValue, number, number] | undefined {
  const end = ends.at(-1);
  return end === undefined ? undefined : [end.exitReason, end.steps, end.output, end.usage.inputTokens, end.usage.outputTokens];
}

const TWO_STEPS = [
  "task.start",
  "step.start@1",
  "model.before@1",
  "model.after@1",
  "tool.before@1",
  "tool.after@1",
  "step.end@1",
  "step.start@2",
  "model.before@2",
  "model.after@2",
  "step.end@2",
  "task.end",
];

test("run.generateText: a two-step task with a tool call emits the whole lifecycle in order", async () => {
  const { bus, ends } = lifecycleBus();
  const ran: object[] = [];
  const model = scripted([callTurn("c1", "refund", { order: 7, amount_usd: 40 }), textTurn("Refunded.")]);
  const aiRun = new AIRun(bus, { runId: "run-task" });
  const result = await aiRun.generateText({ model, tools: { refund: refundTool(ran) }, stopWhen: isStepCount(5), prompt: "Refund order 7" });
  assert.equal(result.text, "Refunded.");
  assert.deepEqual(ran, [{ order: 7, amount_usd: 40 }]);
  assert.deepEqual(hooksOf(aiRun), TWO_STEPS);
  assert.deepEqual(endOf(ends), ["completed", 2, "Refunded.", 20, 10]);
  assert.ok(aiRun.trace.records().filter((r) => r.kind === "hook").every((r) => r.run === "run-task"));
  assert.equal(aiRun.running, false);
});

test("task.start: a Block stops the task before any model call (task.end blocked); a changed input is what the model gets", async () => {
  const blocked = lifecycleBus((event) => (event instanceof TaskStartEvent ? Block("off topic") : undefined));
  const model = scripted([textTurn("never")]);
  const aiRun = new AIRun(blocked.bus);
  await assert.rejects(aiRun.generateText({ model, prompt: "write a poem" }), (error: unknown) => {
    return error instanceof HarnessStopped && error.hook === "task.start" && error.outcome === "block";
  });
  assert.equal(model.doGenerateCalls.length, 0);
  assert.deepEqual(hooksOf(aiRun), ["task.start", "task.end"]);
  assert.deepEqual(endOf(blocked.ends), ["blocked", 0, null, 0, 0]);

  for (const outcome of [Suspend("ask a human"), Escalate("fraud", { to: "risk" })]) {
    const stopped = lifecycleBus((event) => (event instanceof TaskStartEvent ? outcome : undefined));
    const again = scripted([textTurn("never")]);
    await assert.rejects(new AIRun(stopped.bus).generateText({ model: again, prompt: "hi" }), HarnessStopped);
    assert.equal(again.doGenerateCalls.length, 0);
    assert.equal(endOf(stopped.ends)?.[0], outcome.kind === "escalate" ? "escalated" : "blocked");
  }

  const redacting = lifecycleBus((event) =>
    event instanceof TaskStartEvent ? Continue(event.with({ input: String(event.input).replace("4242", "[card]") })) : undefined,
  );
  const told = scripted([textTurn("ok")]);
  await new AIRun(redacting.bus).generateText({ model: told, prompt: "card 4242, refund" });
  assert.deepEqual(told.doGenerateCalls[0]?.prompt.at(-1)?.content, [{ type: "text", text: "card [card], refund" }]);

  // A change of shape (messages where the SDK was given a prompt) stops the task: the SDK would not run it.
  const reshaped = lifecycleBus((event) => (event instanceof TaskStartEvent ? Continue(event.with({ input: [] })) : undefined));
  const unasked = scripted([textTurn("never")]);
  await assert.rejects(new AIRun(reshaped.bus).generateText({ model: unasked, prompt: "hi" }), (error: unknown) => {
    return error instanceof HarnessStopped && error.hook === "task.start" && error.outcome === "modified";
  });
  assert.equal(unasked.doGenerateCalls.length, 0);
  assert.equal(endOf(reshaped.ends)?.[0], "blocked");
});

test("task.end: a changed output is the answer the caller gets; a Block withholds it", async () => {
  const changed = lifecycleBus((event) => (event instanceof TaskEndEvent ? Continue(event.with({ output: `${String(event.output)} [reviewed]` })) : undefined));
  const aiRun = new AIRun(changed.bus);
  const result = await aiRun.generateText({ model: scripted([textTurn("Refunded.")]), prompt: "Refund order 7" });
  assert.equal(result.text, "Refunded. [reviewed]");
  // The SDK got the changed answer itself: the conversation goes on with it.
  const said = result.responseMessages.at(-1);
  assert.deepEqual(said?.role === "assistant" && typeof said.content !== "string" ? said.content.map((p) => (p.type === "text" ? p.text : p.type)) : said, ["Refunded. [reviewed]"]);

  const blocked = lifecycleBus((event) => (event instanceof TaskEndEvent ? Block("leaks the order history") : undefined));
  const withheld = new AIRun(blocked.bus);
  await assert.rejects(withheld.generateText({ model: scripted([textTurn("secret")]), prompt: "hi" }), (error: unknown) => {
    return error instanceof HarnessStopped && error.hook === "task.end" && error.outcome === "block";
  });
  assert.equal(blocked.ends.length, 1); // one task.end, however the call then ends
  assert.equal(withheld.running, false);
});

test("task.end is emitted when a middleware stops the task and when the model throws", async () => {
  // model.before blocks the second step: the first step completed, the second was cut short.
  let models = 0;
  const stopping = lifecycleBus((event) => (event instanceof ModelRequestEventClass && ++models === 2 ? Block("budget") : undefined));
  const aiRun = new AIRun(stopping.bus);
  const model = scripted([callTurn("c1", "refund", { order: 7, amount_usd: 40 }), textTurn("never")]);
  await assert.rejects(aiRun.generateText({ model, tools: { refund: refundTool([]) }, stopWhen: isStepCount(5), prompt: "Refund" }), HarnessStopped);
  assert.deepEqual(hooksOf(aiRun).slice(-3), ["step.start@2", "model.before@2", "task.end"]);
  assert.deepEqual(endOf(stopping.ends), ["blocked", 1, null, 10, 5]);
  assert.equal(aiRun.running, false);

  // An Escalate at tool.before ends the task before the next model call.
  const escalating = lifecycleBus((event) => (event instanceof ToolCallEventClass ? Escalate("fraud", { to: "risk" }) : undefined));
  await assert.rejects(
    new AIRun(escalating.bus).generateText({ model: scripted([callTurn("c1", "refund", { order: 7, amount_usd: 40 }), textTurn("never")]), tools: { refund: refundTool([]) }, stopWhen: isStepCount(5), prompt: "Refund" }),
    (error: unknown) => error instanceof HarnessStopped && error.outcome === "escalate",
  );
  assert.equal(endOf(escalating.ends)?.[0], "escalated");

  // The model throws: task.end "provider_error", and the caller gets the model's own error.
  const failing = lifecycleBus();
  const broken = new MockLanguageModelV4({ doGenerate: async () => { throw new Error("provider down"); } });
  const failed = new AIRun(failing.bus);
  await assert.rejects(failed.generateText({ model: broken, prompt: "hi", maxRetries: 0 }), /provider down/);
  assert.deepEqual(hooksOf(failed), ["task.start", "step.start@1", "model.before@1", "task.end"]);
  assert.deepEqual(endOf(failing.ends), ["provider_error", 0, null, 0, 0]);
  assert.equal(failed.running, false);

  // A step.end that blocks stops the task too.
  const ending = lifecycleBus((event) => (event instanceof StepEndEvent ? Block("too long") : undefined));
  const cut = new AIRun(ending.bus);
  await assert.rejects(cut.generateText({ model: scripted([textTurn("done")]), prompt: "hi" }), (error: unknown) => error instanceof HarnessStopped && error.hook === "step.end");
  assert.deepEqual(endOf(ending.ends), ["blocked", 0, null, 10, 5]);
});

function streamingModel() {
  const finish = (unified: "stop" | "tool-calls") => ({ type: "finish" as const, usage, finishReason: { unified, raw: unified } });
  return new MockLanguageModelV4({
    modelId: "mock-stream",
    doStream: [
      {
        stream: convertArrayToReadableStream([
          { type: "stream-start" as const, warnings: [] },
          { type: "tool-call" as const, toolCallId: "c1", toolName: "refund", input: JSON.stringify({ order: 7, amount_usd: 40 }) },
          finish("tool-calls"),
        ]),
      },
      {
        stream: convertArrayToReadableStream([
          { type: "stream-start" as const, warnings: [] },
          { type: "text-start" as const, id: "t" },
          { type: "text-delta" as const, id: "t", delta: "Refun" },
          { type: "text-delta" as const, id: "t", delta: "ded." },
          { type: "text-end" as const, id: "t" },
          finish("stop"),
        ]),
      },
    ],
  });
}

test("run.streamText: the same lifecycle; task.end's change is what streams, its Block streams none of the answer", async () => {
  const { bus, ends } = lifecycleBus((event) => (event instanceof TaskEndEvent ? Continue(event.with({ output: "Refunded (checked)." })) : undefined));
  const ran: object[] = [];
  const aiRun = new AIRun(bus);
  let theirs = 0;
  const result = await aiRun.streamText({
    model: streamingModel(),
    tools: { refund: refundTool(ran) },
    stopWhen: isStepCount(5),
    prompt: "Refund order 7",
    onEnd: () => void theirs++,
  });
  const deltas: string[] = [];
  for await (const part of result.fullStream) if (part.type === "text-delta") deltas.push(part.text);
  assert.equal(deltas.join(""), "Refunded (checked).");
  assert.deepEqual(ran, [{ order: 7, amount_usd: 40 }]);
  assert.deepEqual(hooksOf(aiRun), TWO_STEPS);
  assert.deepEqual(endOf(ends), ["completed", 2, "Refunded.", 20, 10]);
  assert.equal(theirs, 1); // the caller's onEnd still runs

  const blocked = lifecycleBus((event) => (event instanceof TaskEndEvent ? Block("unsafe") : undefined));
  const errors: unknown[] = [];
  const withheld = await new AIRun(blocked.bus).streamText({
    model: streamingModel(),
    tools: { refund: refundTool([]) },
    stopWhen: isStepCount(5),
    prompt: "Refund order 7",
    onError: ({ error }) => void errors.push(error),
  });
  const streamed: string[] = [];
  for await (const part of withheld.fullStream) if (part.type === "text-delta") streamed.push(part.text);
  assert.deepEqual(streamed, []);
  assert.ok(errors.some((e) => e instanceof HarnessStopped && e.hook === "task.end"));
  assert.equal(blocked.ends.length, 1);

  // A model.before Block mid-stream: task.end "blocked", once.
  const stopping = lifecycleBus((event) => (event instanceof ModelRequestEventClass && event.step === 2 ? Block("budget") : undefined));
  const stopped = await new AIRun(stopping.bus).streamText({ model: streamingModel(), tools: { refund: refundTool([]) }, stopWhen: isStepCount(5), prompt: "Refund", onError: () => undefined });
  for await (const part of stopped.fullStream) void part;
  assert.deepEqual(stopping.ends.map((e) => [e.exitReason, e.steps]), [["blocked", 1]]);
});

test("a task suspended for approval ends its segment 'suspended' and goes on, the same task, once approved", async () => {
  const { bus, ends } = lifecycleBus((event) => (event instanceof ToolCallEventClass ? Suspend("large refund", { approverRole: "finance" }) : undefined));
  const ran: object[] = [];
  const model = scripted([callTurn("c1", "refund", { order: 7, amount_usd: 900 }), textTurn("Refunded 900.")]);
  const aiRun = new AIRun(bus, { runId: "run-approve" });
  const tools = { refund: refundTool(ran) };
  const messages: ModelMessage[] = [{ role: "user", content: "Refund order 7" }];
  const first = await aiRun.generateText({ model, tools, stopWhen: isStepCount(5), messages });
  assert.deepEqual(ran, []);
  assert.deepEqual(endOf(ends), ["suspended", 0, null, 10, 5]);
  assert.equal(aiRun.suspended, true);
  assert.deepEqual(hooksOf(aiRun), ["task.start", "step.start@1", "model.before@1", "model.after@1", "tool.before@1", "task.end"]);
  const request = first.content.find((part) => part.type === "tool-approval-request");
  assert.ok(request !== undefined && request.type === "tool-approval-request");

  messages.push(...first.responseMessages, { role: "tool", content: [{ type: "tool-approval-response", approvalId: request.approvalId, approved: true }] });
  const second = await aiRun.generateText({ model, tools, stopWhen: isStepCount(5), messages });
  assert.equal(second.text, "Refunded 900.");
  assert.deepEqual(ran, [{ order: 7, amount_usd: 900 }]);
  // No second task.start: the approved call runs in its own step, which ends before the next.
  assert.deepEqual(hooksOf(aiRun).slice(6), ["tool.after@1", "step.end@1", "step.start@2", "model.before@2", "model.after@2", "step.end@2", "task.end"]);
  assert.deepEqual(endOf(ends), ["completed", 2, "Refunded 900.", 20, 10]);
  assert.equal(aiRun.running, false);
});

test("run.start / run.end around the caller's own SDK call: the same lifecycle; a task runs one at a time", async () => {
  const { bus, ends } = lifecycleBus((event) => (event instanceof TaskEndEvent ? Continue(event.with({ output: "[ok] " + String(event.output) })) : undefined));
  const ran: object[] = [];
  const aiRun = new AIRun(bus);
  const input = await aiRun.start("Refund order 7", { task: "refund" });
  assert.equal(input, "Refund order 7");
  await assert.rejects(aiRun.start("again"), /task under way/);
  const model = scripted([callTurn("c1", "refund", { order: 7, amount_usd: 40 }), textTurn("Refunded.")]);
  const result = await run(aiRun, model, ran, String(input));
  assert.equal(await aiRun.end(result.text), "[ok] Refunded.");
  assert.deepEqual(hooksOf(aiRun), TWO_STEPS);
  assert.deepEqual(endOf(ends), ["completed", 2, "Refunded.", 20, 10]);

  // fail(): the SDK's error ends the task; what to throw is the harness's stop, unwrapped.
  const stopped = lifecycleBus((event) => (event instanceof ModelRequestEventClass ? Block("no") : undefined));
  const other = new AIRun(stopped.bus);
  await other.start("hi");
  const error = await run(other, scripted([textTurn("never")]), [], "hi").then(() => null, (e: unknown) => e);
  const thrown = await other.fail(error);
  assert.ok(thrown instanceof HarnessStopped && thrown.hook === "model.before");
  assert.deepEqual(endOf(stopped.ends), ["blocked", 0, null, 0, 0]);
  assert.equal(await other.fail(error), error); // no task under way: nothing more is emitted
  assert.equal(stopped.ends.length, 1);
});

test("a model call the SDK retries is the same step: model.before is asked again, step.start is not", async () => {
  const { bus, ends } = lifecycleBus();
  let calls = 0;
  const model = new MockLanguageModelV4({
    doGenerate: async () => {
      if (++calls === 1) throw new APICallError({ message: "overloaded", url: "mock://model", requestBodyValues: {}, statusCode: 503, isRetryable: true });
      return textTurn("ok");
    },
  });
  const aiRun = new AIRun(bus);
  const result = await aiRun.generateText({ model, prompt: "hi", maxRetries: 1 });
  assert.equal(result.text, "ok");
  assert.deepEqual(hooksOf(aiRun), ["task.start", "step.start@1", "model.before@1", "model.before@1", "model.after@1", "step.end@1", "task.end"]);
  assert.deepEqual(endOf(ends), ["completed", 1, "ok", 10, 5]);
});

test("an answer with a provider-executed tool call is not taken as the last: task.end comes once the SDK's call is over", async () => {
  const log: string[] = [];
  const { bus, ends } = lifecycleBus((event) => {
    log.push(event.constructor.name);
    return undefined;
  });
  const answer = (provider: boolean): Generated => ({
    content: provider
      ? [
          { type: "text", text: "Searched." },
          { type: "tool-call", toolCallId: "p1", toolName: "web_search", input: "{}", providerExecuted: true },
          { type: "tool-result", toolCallId: "p1", toolName: "web_search", result: { hits: 1 } },
        ]
      : [{ type: "text", text: "Searched." }],
    finishReason: { unified: "stop", raw: "stop" },
    usage,
    warnings: [],
  });
  for (const provider of [false, true]) {
    log.length = 0;
    const aiRun = new AIRun(bus);
    const result = await aiRun.generateText({ model: scripted([answer(provider)]), prompt: "search", onStepEnd: () => void log.push("sdk step end") });
    assert.equal(result.text, "Searched.");
    // Without tool calls the answer is judged before the SDK takes it; with the provider's, after.
    const taskEnd = log.indexOf("TaskEndEvent");
    const sdkStep = log.indexOf("sdk step end");
    assert.ok(taskEnd >= 0 && sdkStep >= 0);
    assert.equal(taskEnd < sdkStep, !provider);
    assert.deepEqual(endOf(ends), ["completed", 1, "Searched.", 10, 5]);
  }
});
