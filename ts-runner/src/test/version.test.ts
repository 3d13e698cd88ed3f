/** The exported VERSION is the package's: both are copied from the Cargo workspace's version
 * by `nox -s version` (docs/packaging.md), and a Python test checks that copy too. */

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { it } from "node:test";
import { VERSION } from "../index.js";

it("VERSION is the version in package.json", () => {
  const manifest = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
    version: string;
  };
  assert.equal(VERSION, manifest.version);
});
