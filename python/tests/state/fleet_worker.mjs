// A Node worker of the fleet tests (python/tests/state/test_fleet.py): loads a harness spec
// with ts-runner's `load` (its `state:` names the shared store), then runs `calls` model calls
// through the bus, each one model.before and, when let through, model.after with its usage.
// Prints one JSON line: {"allowed": [amounts], "codes": {code: count}}.
//
//   node fleet_worker.mjs <ts-runner/dist/index.js> <spec> <worker> <calls> <amounts,...> [delay-ms,...]
//
// With HW_FLEET_NODE_MODE=ai each call is instead a `generateText` of the AI SDK through
// harnessweaver/ai (`AIRun` over the harness), its model the SDK's own mock (10 + 5 tokens).
// With HW_FLEET_NODE_MODE=openai-agents each call is instead a run of the OpenAI Agents SDK
// (`@openai/agents`) through harnessweaver/openai-agents (`OpenAIAgentsAdapter` over the
// harness): a guarded agent whose model is the SDK's ScriptedModel, one answer of 10 + 5
// tokens. No tool call: the rate limit counts tool calls too, and a refused tool call does not
// end the run, so the worker could not tell what the limit let through.
import { existsSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [dist, spec, worker, callsText, amountsText, delaysText] = process.argv.slice(2);
const hw = await import(pathToFileURL(dist).href);
const harness = await hw.load(spec);
const ready = process.env.HW_FLEET_READY;
if (ready) writeFileSync(`${ready}/node-${worker}`, ""); // loaded: the fleet starts once every worker is
const go = process.env.HW_FLEET_GO;
while (go && !existsSync(go)) await new Promise((resolve) => setTimeout(resolve, 5)); // all start at once
const calls = Number(callsText);
const amounts = amountsText.split(",").map(Number);
const delays = (delaysText ?? "").split(",").filter((d) => d !== "").map(Number);
const allowed = [];
const codes = {};
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function codeOf(outcome) {
  // Outcomes are frozen objects discriminated on `kind` (src/outcomes.ts).
  if (outcome.kind === "block") return outcome.code ?? "blocked";
  if (outcome.kind === "retry") return outcome.code ?? "retry";
  return null;
}

if (process.env.HW_FLEET_NODE_MODE === "ai") {
  const { createRequire } = await import("node:module");
  const ts = dist.replace(/\/dist\/index\.js$/, "");
  const require = createRequire(`${ts}/package.json`);
  const ai = await import(pathToFileURL(require.resolve("ai")).href);
  const aiTest = await import(pathToFileURL(require.resolve("ai/test")).href);
  const { AIRun, HarnessStopped } = await import(pathToFileURL(`${ts}/dist/adapters/ai.js`).href);
  const usage = {
    inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: 5, text: 5, reasoning: undefined },
  };
  for (let i = 0; i < calls; i++) {
    if (delays.length > 0) await sleep(delays[i % delays.length]);
    const turn = { content: [{ type: "text", text: "done" }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] };
    const model = new aiTest.MockLanguageModelV4({ modelId: "m", doGenerate: [turn] });
    const run = new AIRun(harness, { runId: `ai-${worker}-${i}` });
    try {
      await ai.generateText({ model: ai.wrapLanguageModel({ model, middleware: run.middleware }), prompt: `question ${worker}/${i}` });
    } catch (error) {
      if (!(error instanceof HarnessStopped)) throw error;
      const code = error.code ?? error.outcome ?? "stopped";
      codes[code] = (codes[code] ?? 0) + 1;
      continue;
    }
    if (model.doGenerateCalls.length > 0) allowed.push(15);
  }
  process.stdout.write(JSON.stringify({ allowed, codes }) + "\n");
  if (typeof harness.close === "function") await harness.close();
  process.exit(0);
}

if (process.env.HW_FLEET_NODE_MODE === "openai-agents") {
  const { createRequire } = await import("node:module");
  const { readFileSync } = await import("node:fs");
  const { dirname, join } = await import("node:path");
  const ts = dist.replace(/\/dist\/index\.js$/, "");
  const require = createRequire(`${ts}/package.json`);
  // The ESM entry ts-runner's adapter imports too (require.resolve would give the CommonJS
  // copy: another Agent class, another tracing switch).
  const esm = async (name, sub = ".") => {
    let dir = dirname(require.resolve(sub === "." ? name : `${name}/${sub.slice(2)}`));
    while (!existsSync(join(dir, "package.json")) || JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).name !== name) {
      dir = dirname(dir);
    }
    const entry = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).exports[sub].import;
    return import(pathToFileURL(join(dir, entry)).href);
  };
  const agents = await esm("@openai/agents");
  const testing = await esm("@openai/agents", "./testing");
  const { OpenAIAgentsAdapter, HarnessStopped } = await import(pathToFileURL(`${ts}/dist/adapters/openai-agents.js`).href);
  agents.setTracingDisabled(true); // nothing is exported anywhere
  const adapter = new OpenAIAgentsAdapter(harness);
  const turn = (output) => ({
    output,
    usage: new agents.Usage({ requests: 1, inputTokens: 10, outputTokens: 5, totalTokens: 15 }),
  });
  const stopIn = (error) => {
    // The SDK may wrap what the guarded model throws (`error`, `cause`).
    let current = error;
    for (let depth = 0; depth < 8 && typeof current === "object" && current !== null; depth++) {
      if (current instanceof HarnessStopped) return current;
      current = current.error instanceof Error ? current.error : current.cause;
    }
    return null;
  };
  for (let i = 0; i < calls; i++) {
    if (delays.length > 0) await sleep(delays[i % delays.length]);
    const model = new testing.ScriptedModel([turn([testing.assistantMessage(`order ${i} has shipped`)])]);
    const agent = adapter.guard(new agents.Agent({ name: "support", instructions: "Help.", model }));
    const run = adapter.newRun({ runId: `agents-${worker}-${i}` });
    try {
      const result = await run.run(agent, `Where is order ${i}?`);
      if (result.finalOutput !== `order ${i} has shipped`) throw new Error(`unexpected final output ${result.finalOutput}`);
    } catch (error) {
      const stop = stopIn(error);
      if (stop === null) throw error;
      const code = stop.code ?? stop.outcome ?? "stopped";
      codes[code] = (codes[code] ?? 0) + 1;
    }
    for (let n = 0; n < model.calls.length; n++) allowed.push(15);
  }
  process.stdout.write(JSON.stringify({ allowed, codes }) + "\n");
  if (typeof harness.close === "function") await harness.close();
  process.exit(0);
}

for (let i = 0; i < calls; i++) {
  const amount = amounts[i % amounts.length];
  const envelope = new hw.Envelope({ runId: `node-${worker}-${i}`, attributes: { user: "fleet-user", app: "fleet" } });
  const ctx = new hw.RunContext({ envelope });
  if (delays.length > 0) await sleep(delays[i % delays.length]);
  const request = new hw.ModelRequestEvent({
    step: 1,
    request: new hw.ModelRequest({ model: "m", messages: [new hw.Message({ role: "user", content: `call ${worker}/${i}` })] }),
  });
  const before = await harness.bus.emit("model.before", request, ctx);
  const refused = codeOf(before.outcome);
  if (refused !== null) {
    codes[refused] = (codes[refused] ?? 0) + 1;
    continue;
  }
  if (delays.length > 0) await sleep(delays[(i + 1) % delays.length]);
  const response = new hw.ModelResponseEvent({
    step: 1,
    response: new hw.ModelResponse({
      message: new hw.Message({ role: "assistant", content: `answer ${worker}/${i}` }),
      usage: new hw.Usage({ inputTokens: 0, outputTokens: amount }),
    }),
  });
  const after = await harness.bus.emit("model.after", response, ctx);
  const late = codeOf(after.outcome);
  if (late !== null) codes[`after:${late}`] = (codes[`after:${late}`] ?? 0) + 1;
  allowed.push(amount);
}
process.stdout.write(JSON.stringify({ allowed, codes }) + "\n");
// Close the shared store's connections if the harness exposes them.
if (typeof harness.close === "function") await harness.close();
else if (harness.state && typeof harness.state.close === "function") await harness.state.close();
process.exit(0);
