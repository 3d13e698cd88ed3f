/**
 * The structure of harness.yaml and of profile files as `harness.schema.json` states it
 * (contract B: generated from Python's models of the spec, shipped with both packages).
 *
 * The parser (`model.ts`) finds the structural problems with the file, item and line a user
 * needs, and the schema refuses exactly the documents it refuses (Python's tests pin that);
 * ajv checks every document the parser found nothing wrong with against the schema too, so a
 * document the schema refuses never loads, whatever the parser missed.
 */

import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";

import { harnessSchema } from "./builtins.js";

let validators: { spec: ValidateFunction; profile: ValidateFunction } | undefined;

function compiled(): { spec: ValidateFunction; profile: ValidateFunction } {
  if (validators === undefined) {
    const ajv = new Ajv2020({ allErrors: false, strict: false, validateFormats: false });
    const schema = harnessSchema() as { $id?: string };
    ajv.addSchema(schema as object);
    const id = schema.$id ?? "";
    validators = {
      spec: ajv.compile({ $ref: `${id}#/$defs/spec` }),
      profile: ajv.compile({ $ref: `${id}#/$defs/profile` }),
    };
  }
  return validators;
}

/** Where `document` (plain JSON) breaks the schema of a spec or a profile, or null when it fits. */
export function structureProblem(document: unknown, what: "spec" | "profile"): string | null {
  const validate = compiled()[what];
  if (validate(document ?? {})) return null;
  const error = validate.errors?.[0];
  if (error === undefined) return "it does not fit harness.schema.json";
  const where = error.instancePath ? error.instancePath.slice(1).replaceAll("/", ".") : "(top level)";
  return `${where} does not fit harness.schema.json: ${error.message ?? "invalid"}`;
}
