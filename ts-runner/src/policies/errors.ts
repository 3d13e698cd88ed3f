/**
 * The errors a policy middleware raises while it decides, or while its files load (I38;
 * Python: `policies/errors.py`).
 *
 * Each is raised inside the middleware, so the bus turns it into a failure under the item's
 * fail mode (closed: Block), never a Continue. The bus records the error's `name` only (I5,
 * R9), so these names are part of the contract, the same in every implementation. Their
 * messages name a path or a policy id, never a value of the event (an argument may hold a
 * secret).
 */

/** A policy middleware could not decide; the fail mode decides instead. */
export class PolicyError extends Error {
  override readonly name: string = "PolicyError";
}

/** The event (or the envelope's attributes) cannot become a Cedar request: `path` says where, never what was there. */
export class CedarRequestError extends PolicyError {
  override readonly name: string = "CedarRequestError";

  constructor(
    /** Where the value is, such as `context.arguments.amount`. */
    readonly path: string,
    why: string,
  ) {
    super(`cannot build the Cedar request: ${why} at ${path} (I38)`);
  }
}

/** A policy errored while it was evaluated and the item says `on_error: fail`. */
export class CedarEvaluationError extends PolicyError {
  override readonly name: string = "CedarEvaluationError";

  constructor(
    /** The shown ids of the policies that errored. */
    readonly policies: readonly string[],
  ) {
    super(`Cedar policy ${policies.join(", ") || "(unknown)"} errored while evaluated (I38)`);
  }
}

/**
 * Policies, a schema or entities that cannot be compiled (I38). `key` is the setting at fault
 * (`policies`, `schema`, `entities`, `namespace`), `file` the file as written (null: the
 * setting itself) and `line` the 1-based line in it. The spec loader reports it as a problem;
 * the behaviour form of the conformance runner throws it.
 */
export class CedarLoadError extends PolicyError {
  override readonly name: string = "CedarLoadError";

  constructor(
    readonly key: string,
    /** What is wrong, without the place and the rule. */
    readonly problem: string,
    readonly file: string | null = null,
    readonly line: number = 1,
  ) {
    super(`${file !== null ? `${file}:${line}: ` : ""}${problem} (I38)`);
  }
}

/**
 * The AuthZEN decision point gave no usable decision (unreachable, timeout, HTTP error, not
 * JSON, a decision that is not a boolean).
 */
export class AuthZenError extends PolicyError {
  override readonly name: string = "AuthZenError";
}
