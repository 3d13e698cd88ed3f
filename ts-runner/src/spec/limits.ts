/**
 * The limits a spec file is read within (docs/harness-spec.md, "Limits"): the same numbers as
 * Python's `spec/limits.py`, checked while the YAML document is walked, before anything is
 * built from it. A spec may be hostile: an alias bomb (aliases of aliases standing for 10^9
 * values) is cheap to parse, the blow-up comes from whatever walks the result, so each node's
 * weight (its aliases counted as what they stand for) is computed once and the aliases' total
 * is bounded.
 */

/** The largest spec or profile file read, in bytes. */
export const MAX_BYTES = 4 * 1024 * 1024;
/** The deepest nesting of mappings and lists, the top level included. */
export const MAX_DEPTH = 64;
/** How many nodes all the aliases of a document may stand for, together. */
export const MAX_ALIASED_NODES = 100_000;
