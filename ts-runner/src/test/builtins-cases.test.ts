// The corpus's spec-level cases of the built-ins (conformance/cases/harness/builtins-*.json),
// run against the TypeScript built-ins before the TypeScript spec loader runs them whole: each
// item of the case's harness.yaml (and of the built-in profiles it lists) is validated with
// its settings schema (ajv), built, and registered as the loader would (name = id or use,
// hooks narrowed, the item's layer); then the `when` emits run and the outcomes, events,
// chains and trace records must be the ones the corpus pins from Python. An invalid-settings
// case must refuse exactly the items its problems name. (The `harness` document and the
// problems' lines are the loader's and the renderer's to prove.)

import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { Ajv2020 } from "ajv/dist/2020.js";
import { parse } from "yaml";
import {
  builtinPlugin,
  BUILTIN_PROFILES,
  Envelope,
  eventFromJSON,
  HookBus,
  isHookPoint,
  outcomeJSON,
  RunContext,
  type Configurable,
  type HookPoint,
  type Layer,
} from "../index.js";
import { untimed } from "../testing/support.js";

const CORPUS = new URL("../../../conformance/", import.meta.url);
const SAMPLES = (JSON.parse(readFileSync(new URL("catalogue.json", CORPUS), "utf8")) as { samples: Record<string, unknown> }).samples;
const CASES = new URL("cases/harness/", CORPUS);
// Item keys the loader takes (docs/harness-spec.md); every other key of an item is a setting.
const RESERVED = new Set(["use", "id", "label", "hooks", "band", "fail_mode", "timeout", "match", "mode", "when", "tasks", "env", "enabled"]);

interface Item {
  readonly use: string;
  readonly id?: string;
  readonly hooks?: HookPoint[];
  readonly [key: string]: unknown;
}
interface Step {
  readonly emit: HookPoint;
  readonly event?: unknown;
  readonly context?: string;
}
interface Case {
  readonly id: string;
  readonly given: { readonly harness: { readonly files: Record<string, string> } };
  readonly when: readonly Step[];
  readonly then: {
    readonly error?: { readonly problems: readonly { readonly item: string }[] };
    readonly emits: readonly { readonly hook: string; readonly outcome: unknown; readonly event?: unknown }[];
    readonly chains?: Readonly<Record<string, readonly string[]>>;
    readonly traces?: Readonly<Record<string, unknown>>;
  };
}

const ajv = new Ajv2020({ useDefaults: true, strict: false });

/** The items of the spec, profiles first (as the loader orders layers), each with its layer. */
function itemsOf(spec: string): [Item, Layer][] {
  const doc = (parse(spec) ?? {}) as { profiles?: string[]; middleware?: Item[] };
  const items: [Item, Layer][] = [];
  for (const ref of doc.profiles ?? []) {
    const path = BUILTIN_PROFILES[ref.replace("profile://", "")];
    assert.ok(path !== undefined, ref);
    const profile = parse(readFileSync(path, "utf8")) as { middleware: Item[] };
    for (const item of profile.middleware) items.push([item, "builtin_profile"]);
  }
  for (const item of doc.middleware ?? []) items.push([item, "app"]);
  return items;
}

/** The built middleware of an item, or the reason its settings are refused. */
function build(item: Item): ReturnType<Configurable["build"]> | string {
  const configurable = builtinPlugin.get(item.use) as Configurable;
  const settings: Record<string, unknown> = Object.fromEntries(Object.entries(item).filter(([key]) => !RESERVED.has(key)));
  const check = ajv.compile(configurable.settings);
  if (!check(settings)) return ajv.errorsText(check.errors);
  try {
    return configurable.build(settings);
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

async function play(c: Case): Promise<void> {
  const items = itemsOf(c.given.harness.files["harness.yaml"] ?? "");
  const built = items.map(([item]) => build(item));
  const refused = built.flatMap((b, i) => (typeof b === "string" ? [i] : []));
  if (c.then.error !== undefined) {
    const expected = c.then.error.problems.map((p) => Number(/^middleware\[(\d+)\]/.exec(p.item)?.[1]));
    assert.deepEqual(refused, expected, `${c.id}: the items refused (${built.filter((b) => typeof b === "string").join(" | ")})`);
    return;
  }
  assert.deepEqual(refused, [], `${c.id}: ${String(built.find((b) => typeof b === "string"))}`);
  const bus = new HookBus();
  items.forEach(([item, layer], i) => {
    const options = { name: item.id ?? item.use, layer, ...(item.hooks === undefined ? {} : { hooks: item.hooks }) };
    bus.register(built[i] as Exclude<(typeof built)[number], string>, options);
  });
  const contexts = new Map<string, RunContext>();
  const context = (name: string) => {
    let found = contexts.get(name);
    if (found === undefined) contexts.set(name, (found = new RunContext({ envelope: new Envelope({ runId: name }) })));
    return found;
  };
  for (const [i, step] of c.when.entries()) {
    const event = eventFromJSON(step.emit, step.event ?? SAMPLES[step.emit]);
    const done = await bus.emit(step.emit, event, context(step.context ?? "main"));
    const expected = c.then.emits[i];
    assert.ok(expected !== undefined, `${c.id}: emit ${i}`);
    assert.deepEqual(outcomeJSON(done.outcome), expected.outcome, `${c.id}: emit ${i} outcome`);
    if (expected.event !== undefined) assert.deepEqual(done.event.toJSON(), expected.event, `${c.id}: emit ${i} event`);
  }
  for (const [hook, names] of Object.entries(c.then.chains ?? {})) {
    assert.ok(isHookPoint(hook));
    assert.deepEqual(bus.chain(hook).map((d) => d.name), names, `${c.id}: chain ${hook}`);
  }
  for (const [name, records] of Object.entries(c.then.traces ?? {})) {
    assert.deepEqual(untimed(context(name).trace.records()), records, `${c.id}: trace ${name}`);
  }
}

describe("builtins: the corpus's spec-level cases, item by item", () => {
  // builtins-cedar.json's items read policy files relative to the spec: only the loader can play
  // them, and the TS testee does, in the conformance run (`nox -s conformance`, --require-feature cedar).
  const files = readdirSync(CASES).filter(
    (name) => name.startsWith("builtins-") && name.endsWith(".json") && name !== "builtins-cedar.json",
  );
  it("finds the case files", () => assert.ok(files.length >= 5, files.join(", ")));
  for (const file of files) {
    const { cases } = JSON.parse(readFileSync(new URL(file, CASES), "utf8")) as { cases: Case[] };
    for (const c of cases) it(c.id, () => play(c));
  }
});
