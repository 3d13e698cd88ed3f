// Copies the files the package reads at run time from their one copy in the repository into
// dist/ (run by "build", and by "prepack" so that `npm pack` ships them):
//   python/harnessweaver/spec/harness.schema.json -> dist/harness.schema.json (contract B;
//     exported as harnessweaver/harness.schema.json; the built-ins' settings schemas)
//   python/harnessweaver/profiles/*.yaml          -> dist/profiles/*.yaml (the built-in profiles)
//   src/state/lua/*.lua                           -> dist/state/lua/*.lua (the Redis scripts)
// A missing source is an error: a package without them would fail at its first import.
import { copyFileSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";

const python = new URL("../../python/harnessweaver/", import.meta.url);
const dist = new URL("../dist/", import.meta.url);

mkdirSync(dist, { recursive: true });
copyFileSync(new URL("spec/harness.schema.json", python), new URL("harness.schema.json", dist));

const profiles = new URL("profiles/", python);
const target = new URL("profiles/", dist);
rmSync(target, { recursive: true, force: true }); // a profile deleted upstream must not linger
mkdirSync(target, { recursive: true });
const names = readdirSync(profiles).filter((name) => name.endsWith(".yaml"));
if (names.length === 0) throw new Error(`no profiles in ${fileURLToPath(profiles)}`);
for (const name of names) copyFileSync(new URL(name, profiles), new URL(name, target));
console.log(`copy-assets: harness.schema.json and ${names.length} profiles into ${fileURLToPath(dist)}`);

// ts-runner/src/state/lua/*.lua -> dist/state/lua/ (the Redis backend's scripts; the copies in
// src are byte-identical to python/harnessweaver/state/lua/, which a test checks).
const lua = new URL("../src/state/lua/", import.meta.url);
const luaTarget = new URL("state/lua/", dist);
rmSync(luaTarget, { recursive: true, force: true });
mkdirSync(luaTarget, { recursive: true });
const scripts = readdirSync(lua).filter((name) => name.endsWith(".lua"));
if (scripts.length === 0) throw new Error(`no Lua scripts in ${fileURLToPath(lua)}`);
for (const name of scripts) copyFileSync(new URL(name, lua), new URL(name, luaTarget));
console.log(`copy-assets: ${scripts.length} Lua scripts into ${fileURLToPath(luaTarget)}`);
