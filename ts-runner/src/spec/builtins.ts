/**
 * The seam between the loader and the built-ins (`../builtins/`): the built-in plugin
 * (namespace `harnessweaver`, always loaded), the built-in profiles (`profile://name` → the
 * path of its YAML file) and the JSON Schema of harness.yaml (contract B).
 */

export { BUILTIN_PROFILES, builtinPlugin } from "../builtins/index.js";
export { harnessSchema } from "../builtins/assets.js";
