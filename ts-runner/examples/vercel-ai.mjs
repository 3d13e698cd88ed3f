// A refund agent on the Vercel AI SDK, guarded by harnessweaver, offline: the SDK's own mock
// model plays a script (refund 40, refund 900, then an answer), and a guard blocks refunds over
// 500. Run from the repository root: npm --prefix ts-runner run example:ai
import { generateText, isStepCount, jsonSchema, tool, wrapLanguageModel } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { Block, FixedClock, Envelope, HookBus, middleware, RunContext } from "harnessweaver";
import { AIRun } from "harnessweaver/ai";

// The harness: one guard at tool.before. (A harness loaded from harness.yaml works the same:
// new AIRun(harness), since AIRun takes anything with a `bus`.)
const bus = new HookBus();
bus.register(
  middleware({ name: "refund_cap", hooks: ["tool.before"], failMode: "closed" }, (event) => {
    const amount = event.call.arguments["amount_usd"];
    if (event.tool.name === "refund" && typeof amount === "number" && amount > 500) {
      return Block(`refunds over 500 USD need a manager (asked for ${amount})`, { code: "refund_cap" });
    }
    return undefined;
  }),
);

// The model: scripted turns, as a provider would answer them.
const usage = {
  inputTokens: { total: 20, noCache: 20, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 8, text: 8, reasoning: undefined },
};
const call = (id, input) => ({
  content: [{ type: "tool-call", toolCallId: id, toolName: "refund", input: JSON.stringify(input) }],
  finishReason: { unified: "tool-calls", raw: "tool_calls" },
  usage,
  warnings: [],
});
const model = new MockLanguageModelV4({
  modelId: "scripted-refunds",
  doGenerate: [
    call("call-1", { order: 7, amount_usd: 40 }),
    call("call-2", { order: 8, amount_usd: 900 }),
    {
      content: [{ type: "text", text: "Refunded 40 USD for order 7; order 8 needs a manager." }],
      finishReason: { unified: "stop", raw: "stop" },
      usage,
      warnings: [],
    },
  ],
});

// The tool: what really moves money.
const refund = tool({
  description: "Refund an order",
  inputSchema: jsonSchema({
    type: "object",
    properties: { order: { type: "number" }, amount_usd: { type: "number" } },
    required: ["order", "amount_usd"],
  }),
  execute: async ({ order, amount_usd }) => {
    console.log(`  refund tool ran: order ${order}, ${amount_usd} USD`);
    return { refunded: amount_usd, order };
  },
});

const envelope = new Envelope({ runId: "refunds-1", clock: new FixedClock("2026-12-02T10:00:00+00:00") });
const run = new AIRun(bus, { context: new RunContext({ envelope }) });
console.log("run refunds-1:");
const result = await generateText({
  model: wrapLanguageModel({ model, middleware: run.middleware }),
  tools: run.tools({ refund }),
  stopWhen: isStepCount(5),
  prompt: "Refund order 7 (40 USD) and order 8 (900 USD).",
});

for (const step of result.steps) {
  for (const part of step.content) {
    if (part.type === "tool-result") console.log(`  tool result for ${part.toolCallId}: ${JSON.stringify(part.output)}`);
  }
}
console.log(`answer: ${result.text}`);
console.log("trace:");
for (const record of run.trace.records()) {
  if (record.kind !== "hook") continue;
  const code = record.code === undefined || record.code === null ? "" : ` (${record.code})`;
  console.log(`  step ${record.step} ${record.hook}${record.tool ? ` ${record.tool}` : ""}: ${record.outcome}${code}`);
}
