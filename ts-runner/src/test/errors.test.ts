import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { declare, DeclarationError, HarnessweaverError, type DeclarationOptions, type ErrorKind } from "../index.js";
import { DOCUMENTATION, ruleUrl, SPEC } from "../errors.js";

const REPO = new URL("../../../", import.meta.url);
const read = (path: string): string => readFileSync(new URL(path, REPO), "utf8");

/** The anchors of a Markdown file: its `<a id>` anchors outside code fences. */
function anchors(markdown: string): Set<string> {
  const prose = markdown.replace(/^(```|~~~).*?^\1/gms, "");
  return new Set([...prose.matchAll(/<a\s+(?:id|name)="([^"]+)"\s*>/g)].map((m) => m[1]!));
}

/** The rows of INTERPRETING.md §5's table: [kind, rule]. */
function errorTable(): Array<[string, string]> {
  const text = read("conformance/INTERPRETING.md");
  const section = text.slice(text.indexOf("## 5. "), text.indexOf("## 6. "));
  return [...section.matchAll(/^\| `([a-z_]+)` \| .* \| `([^`]+)` \|$/gm)].map((m) => [m[1]!, m[2]!]);
}

describe("errors name their rule and link to it", () => {
  const table = errorTable();
  const spec = anchors(read(SPEC));

  it("reads the whole table of §5", () => {
    assert.ok(table.length >= 24, `only ${table.length} kinds in §5`);
  });

  for (const [kind, rule] of table) {
    it(`${kind}: rule ${rule}, linked to an anchor of the specification`, () => {
      const error = new HarnessweaverError(kind as ErrorKind, "a message");
      assert.equal(error.rule, rule);
      const [file, anchor] = error.link.split("#");
      assert.equal(file, "docs/spec/hook-bus.md");
      assert.ok(spec.has(anchor!), `${error.link} names no anchor of ${SPEC}`);
      assert.equal(error.url, `https://github.com/harnessweaver/harnessweaver/blob/main/${error.link}`);
      assert.equal(error.message, "a message");
    });
  }

  it("a thrown error carries them and keeps its message as written", () => {
    const options = { name: "guard", hooks: ["tool.before"], failMode: "closed", timeout: "2 s" };
    assert.throws(
      () => declare(options as unknown as DeclarationOptions),
      (error: unknown) => {
        assert.ok(error instanceof DeclarationError);
        assert.equal(error.rule, "ruling-15");
        assert.equal(error.link, "docs/spec/hook-bus.md#ruling-15");
        assert.ok(error.message.endsWith("(ruling 15)"), error.message);
        assert.ok(!error.message.includes(error.link));
        assert.equal(error.url, "https://github.com/harnessweaver/harnessweaver/blob/main/docs/spec/hook-bus.md#ruling-15");
        return true;
      },
    );
  });

  it("urls start from the documentation URL package.json names (npm's homepage), as Python's", () => {
    const pkg = JSON.parse(read("ts-runner/package.json")) as { homepage: string };
    assert.equal(pkg.homepage, DOCUMENTATION);
    assert.equal(ruleUrl("spec"), "https://github.com/harnessweaver/harnessweaver/blob/main/docs/harness-spec.md#errors");
    assert.ok(DOCUMENTATION.endsWith("/docs/index.md"));
  });
});
