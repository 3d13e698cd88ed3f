import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { harnessSchema } from "../spec/builtins.js";
import { MAX_BYTES } from "../spec/limits.js";
import { LAYER_KEYS, PROFILE_KEYS, RESERVED, SPEC_KEYS } from "../spec/model.js";
import { lineOf, parseYaml, plain, YamlList, YamlMap, YamlProblem } from "../spec/yaml.js";
import { folder, onlyProblem } from "./spec-support.js";

function refused(text: string, keys: readonly string[] = []): YamlProblem {
  try {
    parseYaml(text, keys);
  } catch (error) {
    assert.ok(error instanceof YamlProblem, String(error));
    return error;
  }
  assert.fail("parsed");
}

describe("YAML with lines", () => {
  it("mappings and lists know their lines, and their keys' and items'", () => {
    const doc = parseYaml("a: 1\nitems:\n  - {x: 1}\n  - y: 2\n    z: 3\n");
    assert.ok(doc instanceof YamlMap);
    const items = doc.get("items");
    assert.ok(items instanceof YamlList);
    assert.deepEqual([doc.line, lineOf(doc, "items"), lineOf(items, 1), lineOf(items[1], "z"), lineOf(items[0])], [1, 2, 4, 5, 3]);
    assert.deepEqual(plain(doc), { a: 1, items: [{ x: 1 }, { y: 2, z: 3 }] });
  });

  it("plain scalars take PyYAML's YAML 1.1 types", () => {
    const doc = plain(parseYaml("v: [yes, No, on, OFF, y, 1_000, 012, 0x1F, 0b11, 1:30, 1.5, .inf, ~, null, '', '5', !!str 5, !!int '7']\n"));
    assert.deepEqual(doc, { v: [true, false, true, false, "y", 1000, 10, 31, 3, 90, 1.5, Infinity, null, null, "", "5", "5", 7] });
  });

  it("merge keys: a list of mappings in order (a later key wins), the mapping's own keys last", () => {
    const doc = plain(parseYaml("a: &a {x: 1, y: 1}\nb: &b {y: 2}\nc: {<<: [*a, *b], x: 3}\n"));
    assert.deepEqual(doc, { a: { x: 1, y: 1 }, b: { y: 2 }, c: { x: 3, y: 2 } });
  });

  for (const [text, line, kind, message] of [
    ["a: 1\na: 2\n", 2, "unreadable_yaml", "the key 'a' is written twice"],
    ["x: *nope\n", 1, "unreadable_yaml", "found undefined alias 'nope'"],
    ["? [a]\n: 1\n", 1, "unreadable_yaml", "a key must be a plain value"],
    ["a: &x 1\nb: &x 2\n", 2, "unreadable_yaml", "found duplicate anchor 'x'"],
    ["a: !!float x\n", 1, "unreadable_yaml", "a value cannot be read as its tag says"],
    ["a:\n  - &x [*x]\n", 2, "recursive_alias", "an alias stands for a mapping or list that contains it"],
    [`a: ${"[".repeat(64)}${"]".repeat(64)}\n`, 1, "too_deep", "mappings and lists nest more than 64 deep"],
  ] as const) {
    it(`refuses ${JSON.stringify(text.slice(0, 24))}: ${kind} on line ${line}`, () => {
      const problem = refused(text);
      assert.deepEqual([problem.line, problem.kind, problem.message], [line, kind, message]);
    });
  }

  it("a hostile nesting (a million brackets, compact sequences) is refused where it passes the limit", () => {
    // Parsed whole, the first took the yaml package 30 s; only the part up to the limit is parsed.
    assert.deepEqual([refused(`a: 1\nb: ${"[".repeat(1_000_000)}\n`).kind, refused(`a: 1\nb: ${"[".repeat(1_000_000)}\n`).line], ["too_deep", 2]);
    const compact = refused(`a:\n${"- ".repeat(100_000)}x\n`);
    assert.deepEqual([compact.kind, compact.line], ["too_deep", 2]);
    const maps = refused(`a: ${"{a: ".repeat(100_000)}\n`);
    assert.deepEqual([maps.kind, maps.line], ["too_deep", 1]);
  });

  it("63 levels below the top level are fine", () => {
    assert.doesNotThrow(() => parseYaml(`a: ${"[".repeat(63)}${"]".repeat(63)}\n`));
  });

  it("an alias bomb is refused when its aliases stand for more than 100,000 nodes", () => {
    let text = "a: &a [1,1,1,1,1,1,1,1,1,1]\n";
    for (const [from, to] of [..."abcdefgh"].map((c, i) => [c, "bcdefghi"[i]] as const)) {
      text += `${to}: &${to} [${Array(10).fill(`*${from}`).join(",")}]\n`;
    }
    const problem = refused(text);
    assert.deepEqual([problem.kind, problem.line], ["too_many_aliases", 5]);
  });

  it("a file not known to be a spec is not quoted in a parser's message", () => {
    const problem = refused("secret: 'hunter2\n");
    assert.doesNotMatch(problem.shown, /hunter2/);
    const parsed = refused("- {a: 1\n");
    assert.equal(parsed.trusted, false);
  });
});

describe("reading spec files", () => {
  it("a file larger than the limit is not parsed: too_large, without a line", async () => {
    const root = folder({});
    writeFileSync(join(root, "harness.yaml"), `# ${"x".repeat(MAX_BYTES)}\n`);
    const problem = await onlyProblem(join(root, "harness.yaml"));
    assert.deepEqual([problem.kind, problem.rule, problem.line, problem.file], ["too_large", "limits", null, "harness.yaml"]);
  });

  it("a file that is not UTF-8 names the line of the first bad byte", async () => {
    const root = folder({});
    writeFileSync(join(root, "harness.yaml"), Buffer.concat([Buffer.from("middleware:\n  - {use: x}\n# "), Buffer.from([0xff, 0x0a])]));
    const problem = await onlyProblem(join(root, "harness.yaml"));
    assert.deepEqual([problem.kind, problem.line], ["unreadable_yaml", 3]);
    assert.match(problem.message, /not UTF-8 text/);
  });

  it("a missing spec file is unreadable_yaml", async () => {
    const problem = await onlyProblem(join(folder({}), "nope.yaml"));
    assert.deepEqual([problem.kind, problem.file, problem.line], ["unreadable_yaml", "nope.yaml", null]);
    assert.match(problem.message, /cannot read the file: No such file or directory/);
  });

  it("a profile that is not a profile is named, never quoted", async () => {
    const root = folder({ "harness.yaml": "profiles: [./creds.json]\n", "creds.json": '{"password": "hunter2"}\n' });
    const problem = await onlyProblem(join(root, "harness.yaml"));
    assert.equal(String(problem), "creds.json:1: not a profile: none of its keys is profile, plugins, middleware (spec)");
  });

  it("a problem's item and message are one line", async () => {
    const root = folder({ "harness.yaml": 'middleware:\n  - {use: "acme.g\\nuard"}\n' });
    const problem = await onlyProblem(join(root, "harness.yaml"));
    assert.equal(problem.item, "middleware[0] (acme.g\\nuard)");
    assert.doesNotMatch(String(problem), /\n/);
  });

  it("a long use is cut short in the item as Python's reprlib cuts it (the string Python prints)", async () => {
    const use = `acme.${"x".repeat(100)}`;
    const root = folder({ "harness.yaml": `middleware:\n  - {use: ${use}}\n` });
    const problem = await onlyProblem(join(root, "harness.yaml"));
    assert.equal(problem.item, `middleware[0] ('acme.xxxxxxxxxxxxxxxxxxxxxx...xxxxxxxxxxxxxxxxxxxxxxxxxxxx')`);
  });
});

describe("the key tables are harness.schema.json's (contract B)", () => {
  it("spec, profile and item keys", () => {
    const defs = harnessSchema().$defs as Record<string, { properties: Record<string, unknown> }>;
    const keys = (name: string) => Object.keys(defs[name]?.properties ?? {}).sort();
    assert.deepEqual(keys("spec"), [...SPEC_KEYS].sort());
    assert.deepEqual(keys("profile"), [...PROFILE_KEYS].sort());
    assert.deepEqual(keys("item"), [...RESERVED].sort());
    assert.ok(LAYER_KEYS.every((key) => (RESERVED as readonly string[]).includes(key)));
  });
});
