// harnessweaver's bus in front of an OpenAI Agents SDK agent, offline: a refund tool and a
// guard that suspends big refunds for a manager's approval (approved once, rejected once),
// refuses refunds over the limit, and rounds odd amounts down.
//
//     npm --prefix ts-runner run example:openai-agents      # from the repository root
//
// The model is the SDK's own ScriptedModel (@openai/agents/testing: no network, no key); the
// agent, its tool, the approvals and the resume are the SDK's own.
// docs/integrations/openai-agents-js.md explains each mapping.

import { Agent, setTracingDisabled, tool } from "@openai/agents";
import { assistantMessage, functionCall, ScriptedModel } from "@openai/agents/testing";
import { z } from "zod";
import { Block, Continue, HookBus, middleware, Suspend } from "harnessweaver";
import { denial, OpenAIAgentsAdapter } from "harnessweaver/openai-agents";

setTracingDisabled(true); // nothing is exported anywhere

const paid = [];
const refund = tool({
  name: "refund",
  description: "Refund an amount in dollars to the customer's card.",
  parameters: z.object({ amount: z.number() }),
  execute: async ({ amount }) => {
    paid.push(amount);
    return `refunded $${amount}`;
  },
});

/** Over $100 is refused; over $50 waits for a manager; refunds are paid in whole tens. */
const refundGuard = middleware({ name: "refund_guard", hooks: ["tool.before"], failMode: "closed" }, async (event) => {
  const amount = event.call.arguments["amount"];
  if (typeof amount !== "number") return Block("no amount given", { code: "refund_amount" });
  if (amount > 100) return Block(`$${amount} is over the $100 limit`, { code: "refund_limit" });
  if (amount > 50) return Suspend(`$${amount} needs a manager`, { approverRole: "manager" });
  if (amount % 10 !== 0) return Continue(event.with({ call: event.call.with({ arguments: { amount: amount - (amount % 10) } }) }));
  return undefined;
});

const bus = new HookBus();
bus.register(refundGuard);
const adapter = new OpenAIAgentsAdapter(bus); // or new OpenAIAgentsAdapter(await load("harness.yaml"))

/** A guarded agent whose model asks for refund(amount), then says it is done. */
function agentFor(amount) {
  const model = new ScriptedModel([[functionCall("refund", { amount }, { callId: "call_1" })], [assistantMessage("All done.")]]);
  return { model, agent: adapter.guard(new Agent({ name: "support", instructions: "Help.", model, tools: [refund] })) };
}

/** What the model read back as the refund's result. */
function modelRead(model) {
  const item = model.lastCall.request.input.find((i) => i.type === "function_call_result");
  return typeof item.output === "string" ? item.output : item.output.text;
}

{
  const { agent, model } = agentFor(30);
  const run = adapter.newRun({ runId: "refund-30" });
  const result = await run.run(agent, "Refund $30, please.");
  console.log(`admitted: refund(30) ran; the model read "${modelRead(model)}"; final output "${result.finalOutput}"`);
}
{
  const { agent, model } = agentFor(70);
  const run = adapter.newRun({ runId: "refund-70" });
  const suspended = await run.run(agent, "Refund $70, please.");
  const pending = suspended.interruptions[0];
  console.log(`suspended: refund(70) waits for approval (${pending.name}, ${pending.arguments}); paid so far [${paid}]`);
  suspended.state.approve(pending); // the manager said yes
  const result = await run.run(agent, suspended.state);
  console.log(`approved: refund(70) ran; the model read "${modelRead(model)}"; final output "${result.finalOutput}"`);

  console.log("the approved run's trace (run, step, tool on every record):");
  for (const record of run.trace.records().filter((r) => r.kind === "hook")) {
    const where = ["run", "step", "tool"].filter((k) => record[k] !== undefined).map((k) => `${k}=${record[k]}`);
    console.log(`  ${record.hook.padEnd(13)} ${record.outcome.padEnd(9)} ${where.join(" ")}`);
  }
}
{
  const { agent, model } = agentFor(90);
  const run = adapter.newRun({ runId: "refund-90" });
  const suspended = await run.run(agent, "Refund $90, please.");
  suspended.state.reject(suspended.interruptions[0], { message: denial("not without a receipt") });
  await run.run(agent, suspended.state);
  console.log(`rejected: refund(90) never ran; the model read "${modelRead(model)}"`);
}
{
  const { agent, model } = agentFor(500);
  await adapter.newRun({ runId: "refund-500" }).run(agent, "Refund $500, please.");
  console.log(`blocked: refund(500) never ran; the model read "${modelRead(model)}"`);
}
{
  const { agent } = agentFor(13);
  await adapter.newRun({ runId: "refund-13" }).run(agent, "Refund $13, please.");
  console.log(`rewritten: the model asked refund(13), refund(${paid.at(-1)}) ran`);
}
console.log(`paid in all: [${paid}]`);
