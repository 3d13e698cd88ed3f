/**
 * Durable approvals in the real SDKs (docs/approvals.md), across processes: a call suspended in
 * this process files a record in a real redis-server (started here on 127.0.0.1); another
 * process (node, this file run as a worker) decides it through the TypeScript Approvals API; a
 * third resumes the run (the OpenAI Agents SDK's serialised `RunState`, the AI SDK's messages
 * with the approval response) and the record decides: approved → the tool runs exactly once
 * (a side-effect file every process appends to counts its runs), denied → denied, a replay,
 * changed arguments or an unknown record → refused. The models are the SDKs' own offline test
 * models. Without redis-server these skip (under CI they fail: `missing`).
 */

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, describe, it } from "node:test";
import { Agent, RunState, setTracingDisabled, tool as agentTool, type AgentInputItem } from "@openai/agents";
import { assistantMessage, functionCall, ScriptedModel, type RecordedModelCall } from "@openai/agents/testing";
import { isStepCount, jsonSchema, tool as aiTool, type ModelMessage } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { z } from "zod";
import { AIRun } from "../adapters/ai.js";
import { OpenAIAgentsAdapter } from "../adapters/openai-agents.js";
import { Approvals, type ApprovalRecord } from "../approvals/index.js";
import { HookBus } from "../bus.js";
import { middleware } from "../middleware.js";
import { Suspend } from "../outcomes.js";
import { load } from "../spec/loader.js";
import { RedisStore } from "../state/redis.js";
import { missing, redisBinary, RedisServer } from "../testing/servers.js";
import { callTurn, textTurn } from "./adapter-ai-support.js";

setTracingDisabled(true);

const SPEC = "code";
const ROLE = "manager";
const WORKER = process.env["HW_APPROVALS_WORKER"];

/** Over $50 waits for a manager. */
function bus(): HookBus {
  const hub = new HookBus();
  hub.register(
    middleware({ name: "refund_policy", hooks: ["tool.before"], failMode: "closed" }, async (event) => {
      const amount = event.call.arguments["amount"] ?? event.call.arguments["amount_usd"];
      return typeof amount === "number" && amount > 50 ? Suspend(`$${amount} needs a manager`, { approverRole: ROLE }) : undefined;
    }),
  );
  return hub;
}

/** The side effect every process's refund tool leaves: one line per run, in one file. */
function paidIn(file: string): number[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8").split("\n").filter((line) => line !== "").map(Number);
}

// --- the OpenAI Agents SDK ------------------------------------------------------------------

function oaAgent(adapter: OpenAIAgentsAdapter, paid: string, model: ScriptedModel): Agent {
  const refund = agentTool({
    name: "refund",
    description: "Refund an amount in dollars to the customer's card.",
    parameters: z.object({ amount: z.number() }),
    execute: async ({ amount }) => {
      appendFileSync(paid, `${amount}\n`);
      return `refunded $${amount}`;
    },
  });
  return adapter.guard(new Agent({ name: "support", instructions: "Help.", model, tools: [refund] }));
}

/** What the model read as the result of the call (its last request's function_call_result). */
function oaToolOutput(call: RecordedModelCall | undefined): string | null {
  const input = call?.request.input;
  if (!Array.isArray(input)) return null;
  const result = (input as AgentInputItem[]).find((item) => item.type === "function_call_result");
  if (result === undefined || result.type !== "function_call_result") return null;
  const output = result.output;
  return typeof output === "string" ? output : !Array.isArray(output) && output.type === "text" ? output.text : JSON.stringify(output);
}

interface Resumed {
  readonly finalOutput: unknown;
  readonly interruptions: number;
  readonly read: string | null;
  readonly approval: string | null;
  readonly state?: string;
}

/** A worker: resumes the serialised run in `job.state` (another process than the one that paused it). */
async function oaResume(approvals: Approvals, job: Job): Promise<Resumed> {
  const adapter = new OpenAIAgentsAdapter(bus(), { approvals });
  const model = new ScriptedModel([[assistantMessage("All done.")]]);
  const agent = oaAgent(adapter, job.paid, model);
  const state = await RunState.fromString(agent, readFileSync(job.file, "utf8"));
  const run = adapter.newRun({ runId: job.runId });
  const result = await run.run(agent, state);
  const item = result.interruptions[0];
  return {
    finalOutput: result.finalOutput ?? null,
    interruptions: result.interruptions.length,
    read: oaToolOutput(model.lastCall),
    approval: item === undefined ? null : (run.approvalOf(item)?.id ?? null),
    state: result.state.toString(),
  };
}

// --- the Vercel AI SDK ----------------------------------------------------------------------


function aiTools(paid: string) {
  return {
    refund: aiTool({
      description: "Refund an order",
      inputSchema: jsonSchema<{ order: number; amount_usd: number }>({
        type: "object",
        properties: { order: { type: "number" }, amount_usd: { type: "number" } },
        required: ["order", "amount_usd"],
      }),
      execute: async (input: { order: number; amount_usd: number }) => {
        appendFileSync(paid, `${input.amount_usd}\n`);
        return { refunded: input.amount_usd };
      },
    }),
  };
}

/** What the model read as the call's result in its last request. */
function aiToolOutput(model: MockLanguageModelV4): unknown {
  const prompt = model.doGenerateCalls.at(-1)?.prompt ?? [];
  for (const message of prompt) {
    if (message.role !== "tool") continue;
    const part = message.content.find((p) => p.type === "tool-result");
    if (part?.type === "tool-result") return part.output;
  }
  return null;
}

/** A worker: the SDK's resumption request, in another process, with the messages in `job.file`. */
async function aiResume(approvals: Approvals, job: Job): Promise<Resumed> {
  const run = new AIRun(bus(), { runId: job.runId, approvals });
  const model = new MockLanguageModelV4({ modelId: "mock-1", doGenerate: [textTurn("Refunded.")] });
  const messages = JSON.parse(readFileSync(job.file, "utf8")) as ModelMessage[];
  const options = { model, tools: aiTools(job.paid), stopWhen: isStepCount(5), messages };
  const result = await run.generateText(job.policy === "needsApproval" ? options : { ...options, toolApproval: run.toolApproval });
  return { finalOutput: result.text, interruptions: 0, read: JSON.stringify(aiToolOutput(model)), approval: null };
}

// --- the workers ----------------------------------------------------------------------------

interface Job {
  readonly op: "approve" | "deny" | "edit" | "oa-resume" | "ai-resume";
  readonly url: string;
  readonly id?: string;
  readonly arguments?: Record<string, number>;
  readonly reason?: string;
  readonly file: string;
  readonly paid: string;
  readonly runId: string;
  readonly policy?: "toolApproval" | "needsApproval";
  /** The spec identity the book is for (default "code": a harness built in code). */
  readonly spec?: string;
}

async function work(job: Job): Promise<unknown> {
  const store = new RedisStore(job.url);
  try {
    const approvals = new Approvals(store, { spec: job.spec ?? SPEC });
    const decision = { role: ROLE, by: "worker", reason: job.reason ?? "" };
    switch (job.op) {
      case "approve":
        return await approvals.approve(job.id ?? "", decision);
      case "deny":
        return await approvals.deny(job.id ?? "", decision);
      case "edit":
        return await approvals.edit(job.id ?? "", job.arguments ?? {}, decision);
      case "oa-resume":
        return await oaResume(approvals, job);
      case "ai-resume":
        return await aiResume(approvals, job);
    }
  } finally {
    await store.close();
  }
}

const THIS_FILE = fileURLToPath(import.meta.url);
const REPO = fileURLToPath(new URL("../../../", import.meta.url));

/** A Python that runs this checkout's `harnessweaver approvals` CLI on Redis (HARNESSWEAVER_TEST_PYTHON, else python3), or null. */
async function python(): Promise<string | null> {
  for (const candidate of [process.env["HARNESSWEAVER_TEST_PYTHON"], "python3"]) {
    if (!candidate) continue;
    try {
      await promisify(execFile)(candidate, ["-c", "import harnessweaver.approvals.cli, harnessweaver.state.redis, redis"], { env: { ...process.env, PYTHONPATH: join(REPO, "python") } });
      return candidate;
    } catch {
      // not this one
    }
  }
  return null;
}

/** Runs `job` in a child node process (this file as a worker); its JSON answer. */
async function inChild<T>(job: Job): Promise<T> {
  const env: NodeJS.ProcessEnv = { ...process.env, HW_APPROVALS_WORKER: JSON.stringify(job) };
  delete env["NODE_TEST_CONTEXT"]; // the child is a plain process, not a test file of this run
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [THIS_FILE], { env, timeout: 60_000 }, (error, stdout, stderr) => {
      if (error !== null) reject(new Error(`worker ${job.op} failed: ${stderr.slice(-2000)}`));
      else resolve(JSON.parse(stdout) as T);
    });
  });
}

if (WORKER !== undefined) {
  process.stdout.write(JSON.stringify(await work(JSON.parse(WORKER) as Job)));
} else {
  const skip = missing("redis-server", redisBinary(), "apt-get install redis-server") ?? false;

  describe("durable approvals across processes (real redis-server)", { skip }, () => {
    let server: RedisServer;
    let store: RedisStore;
    let approvals: Approvals;
    let dir: string;
    let serial = 0;
    before(async () => {
      if (skip !== false) return;
      server = new RedisServer(redisBinary() as string);
      await server.start();
      store = new RedisStore(server.url);
      approvals = new Approvals(store, { spec: SPEC });
      dir = mkdtempSync(join(tmpdir(), "hw-approvals-"));
    });
    after(async () => {
      await store?.close();
      await server?.stop();
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    });

    /** Fresh files for one case: the serialised run, the side-effect file, a run id. */
    function files(): { file: string; paid: string; runId: string } {
      serial += 1;
      return { file: join(dir, `run-${serial}.json`), paid: join(dir, `paid-${serial}.txt`), runId: `run-${serial}` };
    }

    const decide = (op: "approve" | "deny" | "edit", id: string, extra: Partial<Job> = {}) =>
      inChild<ApprovalRecord>({ op, id, url: server.url, file: "", paid: "", runId: "", ...extra });

    // --- OpenAI Agents JS ---

    /** The first segment, here: the call suspends, its record is filed, the state is written out. */
    async function oaSuspend(amount: number): Promise<{ record: ApprovalRecord; file: string; paid: string; runId: string }> {
      const where = files();
      const adapter = new OpenAIAgentsAdapter(bus(), { approvals });
      const model = new ScriptedModel([[functionCall("refund", { amount }, { callId: "call_1" })]]);
      const agent = oaAgent(adapter, where.paid, model);
      const run = adapter.newRun({ runId: where.runId });
      const first = await run.run(agent, `Refund $${amount}, please.`);
      assert.equal(first.interruptions.length, 1);
      const record = run.approvalOf(first.interruptions[0]!);
      assert.ok(record !== undefined, "the suspended call's record");
      writeFileSync(where.file, first.state.toString());
      assert.deepEqual(paidIn(where.paid), [], "nothing runs before the approval");
      return { record, ...where };
    }

    const oaResumeIn = (where: { file: string; paid: string; runId: string }) => inChild<Resumed>({ op: "oa-resume", url: server.url, ...where });

    it("OpenAI Agents JS: a suspended call files a pending record bound to the call", async () => {
      const { record } = await oaSuspend(70);
      assert.equal(record.status, "pending");
      assert.equal(record.filed_by, "openai-agents-js");
      assert.deepEqual(record.action, { hook: "tool.before", tool: "refund", arguments: { amount: 70 } });
      assert.equal(record.approver_role, ROLE);
      assert.equal(record.reason, "$70 needs a manager");
      assert.match(record.subject ?? "", /^run:run-\d+$/);
      assert.equal((await approvals.get(record.id)).status, "pending", "it is in the shared store");
    });

    it("OpenAI Agents JS: approved in another process, resumed in a third: the tool runs exactly once; a replay waits for a new approval", async () => {
      const { record, ...where } = await oaSuspend(70);
      const decided = await decide("approve", record.id);
      assert.equal(decided.status, "approved");
      const resumed = await oaResumeIn(where);
      assert.equal(resumed.finalOutput, "All done.");
      assert.equal(resumed.read, "refunded $70");
      assert.deepEqual(paidIn(where.paid), [70], "ran once");
      const used = await approvals.get(record.id);
      assert.equal(used.status, "used");
      assert.equal(used.used?.by, `run:${where.runId}/call:call_1/tool.before`);
      // The same serialised state resumed again (another process): the used record approves nothing
      // more; the call waits for a new approval (a new record), and the tool does not run again.
      const again = await oaResumeIn(where);
      assert.equal(again.interruptions, 1);
      assert.ok(again.approval !== null && again.approval !== record.id, "a new record for the new ask");
      assert.equal((await approvals.get(again.approval)).status, "pending");
      assert.deepEqual(paidIn(where.paid), [70], "still once");
    });

    it("OpenAI Agents JS: denied from another process, the resumed call is rejected with the approver's reason", async () => {
      const { record, ...where } = await oaSuspend(80);
      await decide("deny", record.id, { reason: "not without a receipt" });
      const resumed = await oaResumeIn(where);
      assert.equal(resumed.read, "The approver denied this tool call: not without a receipt");
      assert.equal(resumed.finalOutput, "All done.");
      assert.deepEqual(paidIn(where.paid), []);
      assert.equal((await approvals.get(record.id)).status, "closed");
    });

    it("OpenAI Agents JS: an approver's edit is what runs", async () => {
      const { record, ...where } = await oaSuspend(90);
      await decide("edit", record.id, { arguments: { amount: 60 } });
      const resumed = await oaResumeIn(where);
      assert.equal(resumed.read, "refunded $60");
      assert.deepEqual(paidIn(where.paid), [60]);
    });

    it("OpenAI Agents JS: undecided, the resumed run stays interrupted and names the record; nothing runs", async () => {
      const { record, ...where } = await oaSuspend(75);
      const resumed = await oaResumeIn(where);
      assert.equal(resumed.interruptions, 1);
      assert.equal(resumed.approval, record.id);
      assert.deepEqual(paidIn(where.paid), []);
      assert.equal((await approvals.get(record.id)).status, "pending");
      // Approved later, the state the resumed run left resumes too: once.
      await decide("approve", record.id);
      writeFileSync(where.file, resumed.state ?? "");
      const later = await oaResumeIn(where);
      assert.equal(later.read, "refunded $75");
      assert.deepEqual(paidIn(where.paid), [75]);
    });

    it("OpenAI Agents JS: a state whose arguments were changed is not approved by the record for the others", async () => {
      const { record, ...where } = await oaSuspend(70);
      await decide("approve", record.id);
      const text = readFileSync(where.file, "utf8");
      const changed = text.replaceAll(JSON.stringify(JSON.stringify({ amount: 70 })).slice(1, -1), JSON.stringify(JSON.stringify({ amount: 99 })).slice(1, -1));
      assert.notEqual(changed, text, "the serialised call's arguments were found");
      writeFileSync(where.file, changed);
      const resumed = await oaResumeIn(where);
      assert.equal(resumed.interruptions, 1, "still waiting: a new record for the new arguments");
      assert.notEqual(resumed.approval, record.id);
      assert.deepEqual(paidIn(where.paid), []);
      assert.equal((await approvals.get(record.id)).status, "approved", "the approval for $70 is not used up by $99");
    });

    // --- Vercel AI SDK ---

    /** The first request, here: the call suspends into the SDK's approval request; the messages are written out. */
    async function aiSuspend(amount: number, policy: "toolApproval" | "needsApproval" = "toolApproval", book: Approvals = approvals) {
      const where = files();
      const run = new AIRun(bus(), { runId: where.runId, approvals: book });
      const model = new MockLanguageModelV4({ modelId: "mock-1", doGenerate: [callTurn("c1", "refund", { order: 7, amount_usd: amount })] });
      const messages: ModelMessage[] = [{ role: "user", content: `Refund order 7: $${amount}` }];
      const options = { model, tools: aiTools(where.paid), stopWhen: isStepCount(5), messages };
      const first = await run.generateText(policy === "needsApproval" ? options : { ...options, toolApproval: run.toolApproval });
      const request = first.content.find((part) => part.type === "tool-approval-request");
      assert.ok(request !== undefined && request.type === "tool-approval-request");
      const pending = await run.pending("c1");
      assert.ok(pending?.approval !== null && pending?.approval !== undefined, "the record filed for the call");
      const approved = (yes: boolean, list: ModelMessage[] = [...messages, ...first.responseMessages]): ModelMessage[] => [
        ...list,
        { role: "tool", content: [{ type: "tool-approval-response", approvalId: request.approvalId, approved: yes }] },
      ];
      assert.deepEqual(paidIn(where.paid), []);
      return { ...where, record: pending.approval, request, first, approved, policy };
    }

    async function aiResumeIn(where: { file: string; paid: string; runId: string; policy: "toolApproval" | "needsApproval" }, messages: ModelMessage[], spec = SPEC) {
      writeFileSync(where.file, JSON.stringify(messages));
      return inChild<Resumed>({ op: "ai-resume", url: server.url, file: where.file, paid: where.paid, runId: where.runId, policy: where.policy, spec });
    }

    it("Vercel AI: the approval request carries the record's id and how to decide it", async () => {
      const { record, request } = await aiSuspend(70);
      assert.equal(record.filed_by, "vercel-ai");
      assert.equal(record.status, "pending");
      assert.deepEqual(record.action, { hook: "tool.before", tool: "refund", arguments: { order: 7, amount_usd: 70 } });
      assert.ok(request.reason?.includes(`approval ${record.id} is pending`), request.reason);
      assert.ok(request.reason?.includes(`harnessweaver approvals approve ${record.id}`), request.reason);
    });

    it("Vercel AI: approved in another process, the SDK's resumption in a third runs the tool once; a replay is the SDK's denial", async () => {
      const suspended = await aiSuspend(70);
      await decide("approve", suspended.record.id);
      const messages = suspended.approved(true);
      const resumed = await aiResumeIn(suspended, messages);
      assert.equal(resumed.finalOutput, "Refunded.");
      assert.deepEqual(JSON.parse(resumed.read ?? "null"), { type: "json", value: { refunded: 70 } });
      assert.deepEqual(paidIn(suspended.paid), [70]);
      const used = await approvals.get(suspended.record.id);
      assert.equal(used.status, "used");
      assert.equal(used.used?.by, `run:${suspended.runId}/call:c1/tool.before`);
      const again = await aiResumeIn(suspended, messages);
      const read = JSON.parse(again.read ?? "null") as { type: string; reason?: string };
      assert.equal(read.type, "execution-denied");
      assert.match(read.reason ?? "", /approval_replayed/);
      assert.deepEqual(paidIn(suspended.paid), [70], "still once");
    });

    it("Vercel AI: denied in another process, the resumption is the SDK's denial with the approver's reason", async () => {
      const suspended = await aiSuspend(80);
      await decide("deny", suspended.record.id, { reason: "no receipt" });
      const resumed = await aiResumeIn(suspended, suspended.approved(true));
      assert.deepEqual(JSON.parse(resumed.read ?? "null"), { type: "execution-denied", reason: `approval ${suspended.record.id} was denied: no receipt` });
      assert.deepEqual(paidIn(suspended.paid), []);
      assert.equal((await approvals.get(suspended.record.id)).status, "closed");
    });

    it("Vercel AI: changed arguments in the resumed messages are not approved (approval_mismatch); the approval stays unused", async () => {
      const suspended = await aiSuspend(70);
      await decide("approve", suspended.record.id);
      const tampered = JSON.parse(JSON.stringify(suspended.approved(true)).replace('"amount_usd":70', '"amount_usd":99')) as ModelMessage[];
      const resumed = await aiResumeIn(suspended, tampered);
      const read = JSON.parse(resumed.read ?? "null") as { type: string; reason?: string };
      assert.equal(read.type, "execution-denied");
      assert.match(read.reason ?? "", /approval_mismatch/);
      assert.deepEqual(paidIn(suspended.paid), []);
      assert.equal((await approvals.get(suspended.record.id)).status, "approved");
    });

    it("Vercel AI: an approval response while the record is still pending does not run the call", async () => {
      const suspended = await aiSuspend(75);
      const resumed = await aiResumeIn(suspended, suspended.approved(true));
      const read = JSON.parse(resumed.read ?? "null") as { type: string; reason?: string };
      assert.equal(read.type, "execution-denied");
      assert.match(read.reason ?? "", new RegExp(`approval ${suspended.record.id} is pending`));
      assert.deepEqual(paidIn(suspended.paid), []);
      assert.equal((await approvals.get(suspended.record.id)).status, "pending");
    });

    it("Vercel AI with needsApproval (no toolApproval): approved from another process, the tool runs once; denied, it does not", async () => {
      const approvedCase = await aiSuspend(70, "needsApproval");
      await decide("approve", approvedCase.record.id);
      const resumed = await aiResumeIn(approvedCase, approvedCase.approved(true));
      assert.deepEqual(JSON.parse(resumed.read ?? "null"), { type: "json", value: { refunded: 70 } });
      assert.deepEqual(paidIn(approvedCase.paid), [70]);
      const deniedCase = await aiSuspend(80, "needsApproval");
      await decide("deny", deniedCase.record.id, { reason: "no" });
      const denied = await aiResumeIn(deniedCase, deniedCase.approved(true));
      assert.deepEqual(JSON.parse(denied.read ?? "null"), { type: "text", value: "The approver denied this tool call: no" });
      assert.deepEqual(paidIn(deniedCase.paid), []);
    });

    it("Vercel AI across languages: approved with Python's CLI, the resumption in another Node process runs the tool once", async (t) => {
      const py = await python();
      if (py === null) return t.skip("no Python with harnessweaver's dependencies and redis (set HARNESSWEAVER_TEST_PYTHON)");
      const spec = join(dir, "harness.yaml");
      writeFileSync(spec, 'middleware:\n  - {use: harnessweaver.tool_allowlist, id: tools, allow: [refund]}\nstate: {backend: redis, url: "${HW_TEST_REDIS}"}\n');
      process.env["HW_TEST_REDIS"] = server.url; // the spec's state: reads it, in both languages
      t.after(() => delete process.env["HW_TEST_REDIS"]);
      const harness = await load(spec, { openState: () => new RedisStore(server.url) });
      try {
        const suspended = await aiSuspend(70, "toolApproval", harness.approvals);
        const cli = ["-m", "harnessweaver.cli", "approvals"];
        const env = { ...process.env, PYTHONPATH: join(REPO, "python"), HW_TEST_REDIS: server.url };
        const approved = await promisify(execFile)(py, [...cli, "approve", suspended.record.id, "--spec", spec, "--role", ROLE, "--by", "ana"], { env });
        assert.equal(approved.stdout.trim(), `approval ${suspended.record.id} approved`);
        const resumed = await aiResumeIn(suspended, suspended.approved(true), harness.approvals.spec);
        assert.deepEqual(JSON.parse(resumed.read ?? "null"), { type: "json", value: { refunded: 70 } });
        assert.deepEqual(paidIn(suspended.paid), [70]);
        const used = await harness.approvals.get(suspended.record.id);
        assert.deepEqual([used.status, used.decision?.by], ["used", "ana"]);
      } finally {
        await harness.close();
      }
    });
  });

  describe("durable approvals fail closed when the store is down", () => {
    // A real RedisStore on a port nothing listens on: every operation is StateUnavailable.
    const down = () => new Approvals(new RedisStore("redis://127.0.0.1:1/0", { connectTimeout: 200 }), { spec: SPEC });
    let dir: string;
    before(() => {
      dir = mkdtempSync(join(tmpdir(), "hw-approvals-down-"));
    });
    after(() => rmSync(dir, { recursive: true, force: true }));

    it("OpenAI Agents JS: a suspended call whose record cannot be filed ends the run; nothing runs", async () => {
      const approvals = down();
      const paid = join(dir, "oa.txt");
      const adapter = new OpenAIAgentsAdapter(bus(), { approvals });
      const model = new ScriptedModel([[functionCall("refund", { amount: 70 }, { callId: "call_1" })], [assistantMessage("All done.")]]);
      const agent = oaAgent(adapter, paid, model);
      await assert.rejects(adapter.newRun({ runId: "down-1" }).run(agent, "Refund $70."), (error: unknown) => {
        assert.match(String(error), /state store redis/);
        assert.doesNotMatch(String(error), /127\.0\.0\.1/);
        return true;
      });
      assert.deepEqual(paidIn(paid), []);
      // A paused run (paused without approvals) resumed while the store is down: rejected before
      // anything runs, the state left as it was (resumable later).
      const plain = new OpenAIAgentsAdapter(bus());
      const first = await plain.newRun({ runId: "down-1" }).run(oaAgent(plain, paid, new ScriptedModel([[functionCall("refund", { amount: 70 }, { callId: "call_1" })]])), "Refund $70.");
      const text = first.state.toString();
      const state = await RunState.fromString(agent, text);
      await assert.rejects(adapter.newRun({ runId: "down-1" }).run(agent, state), /state store redis/);
      assert.equal(state.getInterruptions().length, 1);
      assert.equal(state._context.isToolApproved({ toolName: "refund", callId: "call_1" }), undefined, "undecided still");
      assert.deepEqual(paidIn(paid), []);
      await approvals.store.close();
    });

    it("Vercel AI: a suspended call whose record cannot be filed rejects the request; a resumption that cannot consult is refused", async () => {
      const approvals = down();
      const paid = join(dir, "ai.txt");
      const run = new AIRun(bus(), { runId: "down-2", approvals });
      const model = new MockLanguageModelV4({ modelId: "mock-1", doGenerate: [callTurn("c1", "refund", { order: 7, amount_usd: 70 }), textTurn("Refunded.")] });
      const messages: ModelMessage[] = [{ role: "user", content: "Refund order 7: $70" }];
      await assert.rejects(run.generateText({ model, tools: aiTools(paid), stopWhen: isStepCount(5), messages, toolApproval: run.toolApproval }), /state store redis/);
      // The resumption (messages with an approving response) in a run whose store is down: the SDK's denial.
      const resumedModel = new MockLanguageModelV4({ modelId: "mock-1", doGenerate: [textTurn("Sorry.")] });
      const again = new AIRun(bus(), { runId: "down-2", approvals });
      const history: ModelMessage[] = [
        ...messages,
        { role: "assistant", content: [{ type: "tool-call", toolCallId: "c1", toolName: "refund", input: { order: 7, amount_usd: 70 } }, { type: "tool-approval-request", approvalId: "a1", toolCallId: "c1" }] },
        { role: "tool", content: [{ type: "tool-approval-response", approvalId: "a1", approved: true }] },
      ];
      await again.generateText({ model: resumedModel, tools: aiTools(paid), stopWhen: isStepCount(5), messages: history, toolApproval: again.toolApproval });
      const read = aiToolOutput(resumedModel) as { type: string; reason?: string };
      assert.equal(read.type, "execution-denied");
      assert.match(read.reason ?? "", /state store redis/);
      assert.deepEqual(paidIn(paid), []);
      await approvals.store.close();
    });
  });
}
