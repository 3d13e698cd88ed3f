/**
 * The layers of a harness spec, and the band each gives the middleware it declares (I13).
 *
 * hook-bus.md, "Where bands come from": the layer that declares a middleware sets its band,
 * not the code that implements it (the band given to `middleware()` is only the default for
 * direct registration). A spec item may restate that band or move it inward, never outward
 * (ruling 16), and only the three profile layers put middleware in baseline (S8, ruling 17).
 * Hooks narrow as at registration (ruling 18) and R2 is checked on the result. The same rules
 * as the Rust core's `layer.rs` and the pure-Python core's `layer.py`.
 */

import { BANDS, Declaration, overrideFrom, type Band, type BandRule, type Overrides } from "./declaration.js";
import { bandOutward, baselineOutsideProfile, valueError } from "./errors.js";
import { shown } from "./shown.js";

/** Every layer of a harness spec and the band it gives its middleware, outermost first (I13). */
export const LAYERS = Object.freeze({
  /** An org profile (`org://…`). */
  org_profile: "baseline",
  /** A plugin's profile (`profile://acme.baseline`). */
  plugin_profile: "baseline",
  /** A profile file named by path. */
  profile_file: "baseline",
  /** A profile shipped with harnessweaver (`profile://rag`). */
  builtin_profile: "platform",
  /** The framework's own defaults. */
  framework: "platform",
  /** The app's `harness.yaml`. */
  app: "app",
  /** An environment overlay. */
  env: "app",
  /** A task's own guardrails and validation rules. */
  task: "task",
} as const satisfies Record<string, Band>);

/** The name of a harness-spec layer (I13). */
export type Layer = keyof typeof LAYERS;

/** Whether `value` names one of the layers of I13 (exactly: no other spelling). */
export function isLayer(value: unknown): value is Layer {
  return typeof value === "string" && Object.prototype.hasOwnProperty.call(LAYERS, value);
}

/** The layer named by `layer`; anything else is an `unknown_layer` `RegistrationError` (I13). */
export function checkLayer(layer: unknown): Layer {
  if (!isLayer(layer)) throw valueError("register", "unknown_layer", "layer", shown(layer));
  return layer;
}

/** Ruling 16 and S8 for the spec items of `layer`: restate or move inward; baseline only from profiles. */
function bandRule(layer: Layer): BandRule {
  const own = LAYERS[layer];
  return (name, band) => {
    if (BANDS.indexOf(band) >= BANDS.indexOf(own)) return;
    if (band === "baseline") throw baselineOutsideProfile(name, layer);
    throw bandOutward(name, layer, own, band);
  };
}

/**
 * The declaration as a spec item of `layer` declares it, without registering anything: what a
 * harness spec loader checks before building a bus. The layer sets the band (the declared band
 * is ignored); the item's keys then apply in the order of I4: `name`, `hooks` (narrowing only,
 * ruling 18), `band` (the layer's band or a later one: ruling 16, S8), `failMode`, `timeout`;
 * then R2 on the result. The layer itself is checked first. Throws a `RegistrationError`.
 */
export function declareIn(declaration: Declaration, layer: Layer, item: Overrides = {}): Declaration {
  if (!(declaration instanceof Declaration)) {
    throw new TypeError("declareIn() needs a Declaration (a middleware's .declaration)");
  }
  const checked = checkLayer(layer);
  return overrideFrom(declaration, LAYERS[checked], item, bandRule(checked), checked === "org_profile");
}
