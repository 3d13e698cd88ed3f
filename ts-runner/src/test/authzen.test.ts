// harnessweaver.authzen (src/policies/authzen.ts) against a real decision point: the local
// AuthZEN 1.0 PDP (e2e/authzen-pdp, cedar-go) decides on the request the middleware sent. Its
// Cedar policies test each part of the I38 mapping, as Python's test_authzen_pdp.py does.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { Continue, HookBus, load, Message, ModelRequest, ModelRequestEvent, ToolCall, ToolResult, ToolResultEvent, ToolSpec, type JsonValue } from "../index.js";
import { AuthZen, authzen, authzenRequest, denied } from "../policies/authzen.js";
import { AuthZenError } from "../policies/errors.js";
import { call, run, startPdp, withoutGo, type Pdp } from "./authzen-support.test.js";

const POLICIES = `
permit (principal == User::"alice", action == Action::"tool.before", resource == Tool::"search")
when {
  context.hook == "tool.before" && context.tool == "search" && context.step == 3 &&
  context.arguments.q == "weather" && context.arguments.limit == 12 &&
  context.arguments.tags.contains("fast") && !(context.arguments has gone) &&
  context.attributes.user == "alice" && context.attributes.team == "blue"
};
permit (principal == Agent::"bot", action == Action::"tool.after", resource == Tool::"search")
when { context.is_error == false && context.tool == "search" };
permit (
  principal == Agent::"anonymous", action == Action::"model.before", resource == Model::"gpt-x"
) when { context.model == "gpt-x" && context.tools.contains("search") && context.messages == 2 };
permit (principal, action == Action::"tool.before", resource == Tool::"delete_repository")
when { principal in Group::"admins" };
forbid (principal, action, resource == Tool::"search") when { context.arguments has rm };
`;
const ENTITIES = [
  { uid: { type: "User", id: "root" }, attrs: {}, parents: [{ type: "Group", id: "admins" }] },
  { uid: { type: "Group", id: "admins" }, attrs: {}, parents: [] },
];
const ALICE = { user: "alice", team: "blue", agent: "bot" };
const aliceSearch = (change: Record<string, JsonValue> = {}) => call("search", { q: "weather", limit: 12, tags: ["fast", "cheap"], ...change }, 3);
const guard = (url: string, settings: Record<string, unknown> = {}) => new AuthZen({ url, ...settings });

describe("authzen: the mapping, decided by the local cedar-go decision point", { skip: withoutGo() }, () => {
  let pdp: Pdp;
  before(async () => {
    pdp = await startPdp(POLICIES, ENTITIES);
  });
  after(async () => pdp.stop());

  it("sends the whole mapping the policy permits, through the bus", async () => {
    const bus = new HookBus();
    bus.register(authzen.build({ url: pdp.url }));
    assert.deepEqual((await bus.emit("tool.before", aliceSearch(), run(ALICE))).outcome, Continue());
  });

  it("counts each part of the mapping", async () => {
    const cases: [Record<string, JsonValue>, Record<string, JsonValue>][] = [
      [{ q: "rain" }, ALICE],
      [{ limit: 13 }, ALICE],
      [{ tags: ["slow"] }, ALICE],
      [{ rm: true }, ALICE],
      [{}, { ...ALICE, team: "red" }],
      [{}, { agent: "alice", team: "blue" }],
      [{}, {}],
    ];
    for (const [change, attributes] of cases) {
      assert.deepEqual(await guard(pdp.url).decide(aliceSearch(change), run(attributes).envelope), denied(), JSON.stringify([change, attributes]));
    }
  });

  it("sends numbers, nulls and the step as Cedar reads them", async () => {
    for (const limit of [12.0, 1.2e1]) {
      assert.deepEqual(await guard(pdp.url).decide(aliceSearch({ limit, gone: null }), run(ALICE).envelope), Continue());
    }
    const otherStep = call("search", { q: "weather", limit: 12, tags: ["fast"] }, 4);
    assert.deepEqual(await guard(pdp.url).decide(otherStep, run(ALICE).envelope), denied());
  });

  it("asks tool.after and model.before as their hook points", async () => {
    const bus = new HookBus();
    bus.register(authzen.build({ url: pdp.url }), { hooks: ["tool.after", "model.before"] });
    const result = (isError: boolean) =>
      new ToolResultEvent({ tool: new ToolSpec({ name: "search" }), call: new ToolCall({ name: "search" }), result: new ToolResult({ isError }) });
    assert.deepEqual((await bus.emit("tool.after", result(false), run({ agent: "bot" }))).outcome, Continue());
    assert.deepEqual((await bus.emit("tool.after", result(true), run({ agent: "bot" }))).outcome, denied());
    const messages = [new Message({ role: "user", content: "hi" }), new Message({ role: "user", content: "there" })];
    const model = (count: number) =>
      new ModelRequestEvent({ request: new ModelRequest({ model: "gpt-x", messages: messages.slice(0, count), tools: [new ToolSpec({ name: "search" })] }) });
    assert.deepEqual((await bus.emit("model.before", model(2), run())).outcome, Continue());
    assert.deepEqual((await bus.emit("model.before", model(1), run())).outcome, denied());
  });

  it("lets the decision point read its entities", async () => {
    const event = call("delete_repository");
    assert.deepEqual(await guard(pdp.url).decide(event, run({ user: "root" }).envelope), Continue());
    assert.deepEqual(await guard(pdp.url).decide(event, run({ user: "alice" }).envelope), denied());
  });

  it("writes the request in AuthZEN's words", () => {
    const request = authzenRequest("tool.before", aliceSearch(), { user: "alice" });
    assert.deepEqual(request.subject, { type: "user", id: "alice" });
    assert.deepEqual(request.action, { name: "tool.before" });
    assert.deepEqual(request.resource, { type: "tool", id: "search" });
    assert.deepEqual(request.context["arguments"], { q: "weather", limit: 12, tags: ["fast", "cheap"] });
    const asked = authzenRequest("model.before", new ModelRequestEvent({ request: new ModelRequest({ model: "m" }) }), { agent: "bot" });
    assert.deepEqual([asked.subject, asked.resource], [{ type: "agent", id: "bot" }, { type: "model", id: "m" }]);
  });

  it("asks many questions in one batch, and one by one", async () => {
    const questions = [
      authzenRequest("tool.before", aliceSearch(), ALICE),
      authzenRequest("tool.before", aliceSearch({ q: "rain" }), ALICE),
      authzenRequest("tool.before", call("delete_repository"), { user: "root" }),
      authzenRequest("tool.before", call("delete_repository"), {}),
    ];
    assert.deepEqual(await guard(pdp.url).evaluateMany(questions), [true, false, true, false]);
    assert.deepEqual(await guard(pdp.url, { batch: false }).evaluateMany(questions), [true, false, true, false]);
    assert.deepEqual(await guard(pdp.url).evaluateMany([]), []);
  });

  it("is used by a spec item, tool.before unless the item asks for more", async () => {
    const folder = mkdtempSync(join(tmpdir(), "authzen-spec-"));
    try {
      const spec = join(folder, "harness.yaml");
      writeFileSync(spec, `middleware:\n  - {use: harnessweaver.authzen, url: '${pdp.url}', timeout: 5s}\n`);
      const harness = await load(spec);
      assert.deepEqual(harness.chains().get("tool.before")?.map((entry) => entry.name), ["harnessweaver.authzen"]);
      assert.deepEqual(harness.chains().get("model.before"), []);
      assert.deepEqual((await harness.bus.emit("tool.before", aliceSearch(), run(ALICE))).outcome, Continue());
      assert.deepEqual((await harness.bus.emit("tool.before", aliceSearch({ q: "x" }), run(ALICE))).outcome, denied());
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});

describe("authzen: batch and credentials against the local decision point", { skip: withoutGo() }, () => {
  it("asks one by one when the point offers no batch endpoint", async () => {
    const pdp = await startPdp(POLICIES, ENTITIES, ["-no-batch"]);
    try {
      const questions = [authzenRequest("tool.before", aliceSearch(), ALICE), authzenRequest("tool.before", aliceSearch({ q: "rain" }), ALICE)];
      assert.deepEqual(await guard(pdp.url).evaluateMany(questions), [true, false]);
    } finally {
      await pdp.stop();
    }
  });

  it("sends the token as a bearer token; without it the point refuses, an error", async () => {
    process.env["HW_TEST_PDP_TOKEN"] = "tok-0123456789";
    const pdp = await startPdp(POLICIES, ENTITIES, ["-token-env", "HW_TEST_PDP_TOKEN"]);
    try {
      assert.deepEqual(await guard(pdp.url, { token_env: "HW_TEST_PDP_TOKEN" }).decide(aliceSearch(), run(ALICE).envelope), Continue());
      await assert.rejects(guard(pdp.url).decide(aliceSearch(), run(ALICE).envelope), (error) => error instanceof AuthZenError && /HTTP 401/.test(error.message));
    } finally {
      delete process.env["HW_TEST_PDP_TOKEN"];
      await pdp.stop();
    }
  });
});
