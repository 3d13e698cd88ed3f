/**
 * `harnessweaver.authzen` (Python: `policies/authzen.py`): a remote policy decision point over
 * the OpenID AuthZEN 1.0 Authorization API (I38).
 *
 * The event is mapped as `harnessweaver.cedar` maps it (`cedarRequest`, no namespace), then
 * written in AuthZEN's words: the subject `{type: "user"|"agent", id}`, the action
 * `{name: <hook point>}`, the resource `{type: "tool"|"model", id}` and the same context record
 * as plain JSON. `POST <url>/access/v1/evaluation` answers it: `decision: true` → Continue;
 * `false` → Block (`authzen:deny`). Anything else (unreachable, past the timeout, an HTTP
 * status other than 200, a body that is not JSON, a decision that is not a boolean) throws
 * `AuthZenError`, so the item's fail mode decides (closed by default): never a silent allow.
 *
 * `AuthZen.evaluateMany` asks several questions in one exchange with `/access/v1/evaluations`
 * when the decision point's `/.well-known/authzen-configuration` offers it (and `batch` is
 * on), else one by one. The middleware itself asks one question per event.
 *
 * The bearer token (`token_env` names the environment variable, read when the item is built)
 * is kept out of every message, log, trace and inspection; the `url` may carry no user,
 * password, query or fragment.
 */

import { parseDuration, type Duration } from "../duration.js";
import type { Envelope } from "../envelope.js";
import { ModelRequestEvent, ToolCallEvent, ToolResultEvent, type Event } from "../events.js";
import { Block, Continue } from "../outcomes.js";
import { configurable } from "../plugin.js";
import { pythonRepr } from "../builtins/repr.js";
import { SettingsError, settingsSchema } from "../builtins/settings.js";
import { setItemHooks } from "../spec/hooks.js";
import { AuthZenError } from "./errors.js";
import { cedarRequest, POLICY_HOOKS, type CedarValue, type PolicyHook } from "./request.js";

export const EVALUATION_PATH = "/access/v1/evaluation";
export const EVALUATIONS_PATH = "/access/v1/evaluations";
export const METADATA_PATH = "/.well-known/authzen-configuration";
/** The most bytes of an answer kept: a decision point that sends more is not answering. */
export const MAX_BODY = 1 << 20;
const RULE = "(I38)";

/** What a denied request gives. */
export function denied(): Block {
  return Block("the decision point denied this request", { code: "authzen:deny" });
}

/** An AuthZEN evaluation request. */
export interface AuthZenRequest {
  readonly subject: { readonly type: string; readonly id: string };
  readonly action: { readonly name: string };
  readonly resource: { readonly type: string; readonly id: string };
  readonly context: { readonly [key: string]: CedarValue };
}

/** The hook point of a policy middleware's event. */
function hookOf(event: Event): PolicyHook {
  if (event instanceof ModelRequestEvent) return "model.before";
  if (event instanceof ToolResultEvent) return "tool.after";
  if (event instanceof ToolCallEvent) return "tool.before";
  throw new TypeError(`harnessweaver.authzen decides ${POLICY_HOOKS.join(", ")}`);
}

/**
 * The AuthZEN evaluation request of `event` at `hook`: the Cedar request of I38 with lower-case
 * types (`User` → `user`, `Tool` → `tool`) and the action named by the hook point;
 * `CedarRequestError` (a path, never a value) when the context cannot be built.
 */
export function authzenRequest(hook: PolicyHook, event: Event, attributes: Readonly<Record<string, unknown>> | null): AuthZenRequest {
  const cedar = cedarRequest(hook, event, attributes, null);
  return {
    subject: { type: cedar.principal.type.toLowerCase(), id: cedar.principal.id },
    action: { name: hook },
    resource: { type: cedar.resource.type.toLowerCase(), id: cedar.resource.id },
    context: cedar.context,
  };
}

/** The settings of an item, as the loader validated them (schema: `settings.harnessweaver.authzen`). */
export interface AuthZenSettings {
  readonly url: string;
  readonly timeout?: Duration;
  readonly token_env?: string | null;
  readonly batch?: boolean;
}

/** The checks pydantic's validators make in Python, with Python's messages. */
function checked(settings: AuthZenSettings): { url: string; seconds: number; token: string | null; batch: boolean } {
  let parts: URL | null = null;
  try {
    parts = new URL(settings.url);
  } catch {
    parts = null;
  }
  if (parts === null || !["http:", "https:"].includes(parts.protocol) || parts.hostname === "") {
    throw new SettingsError("url", `url must be an http:// or https:// URL with a host ${RULE}`);
  }
  if (parts.username !== "" || parts.password !== "") {
    throw new SettingsError("url", `url may not carry a user or password: name one in token_env ${RULE}`);
  }
  if (parts.search !== "" || parts.hash !== "" || settings.url.includes("?") || settings.url.includes("#")) {
    throw new SettingsError("url", `url may not carry a query or fragment ${RULE}`);
  }
  const timeout = settings.timeout ?? "2s";
  let seconds: number;
  try {
    seconds = parseDuration(timeout);
  } catch {
    const shown = typeof timeout === "string" ? pythonRepr(timeout) : String(timeout);
    throw new SettingsError("timeout", `timeout ${shown} is not a duration (ruling 15)`);
  }
  const name = settings.token_env ?? null;
  const token = name === null ? null : (process.env[name] ?? "");
  if (name !== null && token === "") {
    // The variable's name may be shown; its value never is.
    throw new SettingsError("token_env", `token_env names ${name}, an environment variable that is not set ${RULE}`);
  }
  return { url: settings.url.replace(/\/+$/, ""), seconds, token, batch: settings.batch ?? true };
}

const NOT_JSON = Symbol("not JSON");

function parsed(body: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(body)) as unknown;
  } catch {
    return NOT_JSON;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function decision(answer: unknown, where: string): boolean {
  const given = isObject(answer) ? answer["decision"] : undefined;
  if (typeof given !== "boolean") throw new AuthZenError(`the decision point at ${where} answered without a boolean decision ${RULE}`);
  return given;
}

/** A decision point: asks it one question, or several. The token is held in a closure, never a property. */
export class AuthZen {
  readonly url: string;
  readonly timeout: number;
  readonly batch: boolean;
  readonly #headers: () => Record<string, string>;
  #endpoints: [string, string | null] | null = null;

  constructor(settings: AuthZenSettings) {
    const { url, seconds, token, batch } = checked(settings);
    this.url = url;
    this.timeout = seconds;
    this.batch = batch;
    this.#headers = () => (token === null ? {} : { Authorization: `Bearer ${token}` });
  }

  toString(): string {
    return `<AuthZen ${this.url} timeout=${this.timeout}s batch=${this.batch}>`;
  }

  toJSON(): Record<string, unknown> {
    return { url: this.url, timeout: this.timeout, batch: this.batch };
  }

  /** Allowed → Continue, denied → Block `authzen:deny`; `AuthZenError` without a usable answer. */
  async decide(event: Event, envelope: Envelope): Promise<Continue | Block> {
    const request = authzenRequest(hookOf(event), event, envelope.attributes);
    return (await this.evaluate(request)) ? Continue() : denied();
  }

  /** The decision on one AuthZEN evaluation request; `AuthZenError` without one. */
  async evaluate(request: object): Promise<boolean> {
    const [single] = await this.endpoints();
    return decision(await this.post(single, request), single);
  }

  /**
   * The decisions on several requests, in their order: in one exchange when the decision point
   * offers `/access/v1/evaluations`, else one by one; `AuthZenError` when any has no usable answer.
   */
  async evaluateMany(requests: readonly object[]): Promise<boolean[]> {
    if (requests.length === 0) return [];
    const [single, many] = await this.endpoints();
    if (many === null) {
      const out: boolean[] = [];
      for (const request of requests) out.push(decision(await this.post(single, request), single));
      return out;
    }
    // Every item is whole (no defaults at the top) and the semantic is execute_all (the
    // default), so the answer has one decision per item, in order.
    const answer = await this.post(many, { evaluations: requests });
    const items = isObject(answer) ? answer["evaluations"] : undefined;
    if (!Array.isArray(items) || items.length !== requests.length) {
      throw new AuthZenError(`the decision point at ${many} answered without one decision per request (${requests.length} asked) ${RULE}`);
    }
    return items.map((item) => decision(item, many));
  }

  /** The evaluation endpoint and the batch one (null: not offered, or batch off); the metadata is asked once. */
  private async endpoints(): Promise<[string, string | null]> {
    if (this.#endpoints !== null) return this.#endpoints;
    let single = this.url + EVALUATION_PATH;
    if (!this.batch) return (this.#endpoints = [single, null]);
    const [status, body] = await this.exchange("GET", this.url + METADATA_PATH, null);
    let many: string | null = null;
    if (status === 200) {
      const meta = parsed(body);
      if (isObject(meta)) {
        const named = meta["access_evaluation_endpoint"];
        if (named !== undefined && named !== null) single = this.sameOrigin(named);
        const offered = meta["access_evaluations_endpoint"];
        if (offered !== undefined && offered !== null) many = this.sameOrigin(offered);
      }
    }
    return (this.#endpoints = [single, many]);
  }

  /** An endpoint the metadata names, if it is on the decision point's own origin: the token is never sent elsewhere. */
  private sameOrigin(endpoint: unknown): string {
    const ours = new URL(this.url);
    if (typeof endpoint === "string") {
      try {
        const theirs = new URL(endpoint);
        if (theirs.protocol === ours.protocol && theirs.host === ours.host && theirs.search === "" && theirs.hash === "") return endpoint;
      } catch {
        // not a URL: refused below
      }
    }
    throw new AuthZenError(
      `the decision point at ${this.url} names an endpoint off its own origin in its metadata; ` +
        `the token is only sent to ${ours.protocol}//${ours.host} ${RULE}`,
    );
  }

  private async post(where: string, body: object): Promise<unknown> {
    const [status, answer] = await this.exchange("POST", where, body);
    if (status !== 200) throw new AuthZenError(`the decision point at ${where} answered HTTP ${status} ${RULE}`);
    const value = parsed(answer);
    if (value === NOT_JSON) throw new AuthZenError(`the decision point at ${where} answered with no JSON ${RULE}`);
    return value;
  }

  /** One request within the timeout (for the whole exchange): its status and at most MAX_BODY bytes of its body. */
  private async exchange(method: "GET" | "POST", where: string, body: object | null): Promise<[number, Uint8Array]> {
    const headers: Record<string, string> = { Accept: "application/json", ...this.#headers() };
    if (body !== null) headers["Content-Type"] = "application/json";
    const signal = AbortSignal.timeout(Math.max(1, Math.round(this.timeout * 1000)));
    const chunks: Uint8Array[] = [];
    let size = 0;
    let status: number;
    try {
      const response = await fetch(where, {
        method,
        headers,
        body: body === null ? null : JSON.stringify(body),
        redirect: "manual",
        signal,
      });
      status = response.status;
      if (response.body !== null) {
        // Read to the end (the timeout bounds it) but keep no more than MAX_BODY.
        for await (const chunk of response.body) {
          size += chunk.length;
          if (size <= MAX_BODY) chunks.push(chunk);
        }
      }
    } catch (error) {
      if (signal.aborted) throw new AuthZenError(`the decision point at ${where} did not answer within ${this.timeout}s ${RULE}`);
      // Nothing of the error is shown: the same words in every implementation.
      void error;
      throw new AuthZenError(`the decision point at ${where} could not be reached ${RULE}`);
    }
    if (size > MAX_BODY) throw new AuthZenError(`the decision point at ${where} answered more than ${MAX_BODY} bytes ${RULE}`);
    return [status, Buffer.concat(chunks)];
  }
}

/** `harnessweaver.authzen` (I38; docs/policies.md). */
export const authzen = configurable(
  { name: "authzen", hooks: [...POLICY_HOOKS], failMode: "closed", settings: settingsSchema("authzen") },
  (given) => {
    const point = new AuthZen(given as unknown as AuthZenSettings);
    return async (event: Event, envelope: Envelope) => point.decide(event, envelope);
  },
);

// An item without `hooks:` decides tool.before only, as harnessweaver.cedar does.
setItemHooks(authzen, { default: ["tool.before"], kind: "invalid_policy" });
