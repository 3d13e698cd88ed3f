/**
 * The approvals cases of the corpus (`given.approvals`, INTERPRETING.md §2, §4, I34).
 *
 * A case of this family runs no bus: its steps are operations on an approvals book
 * (`Approvals`) on a fresh `MemoryStore` with a clock the case sets, and each step's answer is
 * observed (`approvals`, one entry per step): a record, a claim's verdict, a status
 * (`statusAt`), an action and its identity (`actionOf`), a listing, or the refusal
 * (`ApprovalRefused`) with its code. The rules are the real ones: this module only translates
 * the case's words (Python: `harnessweaver/conformance/approvals.py`).
 */

import { Approvals, ApprovalRefused, actionOf, decide, statusAt, type ApprovalRecord, type Status, type Verdict } from "../approvals/index.js";
import { eventFromJSON, isEvent, type Event } from "../events.js";
import type { HookPoint } from "../catalogue.js";
import { contentIdentity } from "../identity.js";
import { isPlainObject, type JsonObject, type JsonValue } from "../json.js";
import { MemoryStore } from "../state/memory.js";
import { BehaviourError } from "./behaviours.js";

type Json = Readonly<Record<string, unknown>>;

const DEFAULT_EXPIRES_AFTER = 86_400;

function object(value: unknown, what: string): Json {
  if (!isPlainObject(value)) throw new BehaviourError(`${what} must be an object, got ${JSON.stringify(value)}`);
  return value;
}

function optional<T>(args: Json, key: string): T | null {
  return key in args ? (args[key] as T) : null;
}

/** One case's book(s), store and clock; `step` runs a step and returns its answer. */
export class ApprovalsCase {
  readonly #store = new MemoryStore();
  readonly #spec: string;
  readonly #expiresAfter: number;
  readonly #books = new Map<string, Approvals>();
  #now: number;

  constructor(
    given: Json,
    readonly samples: Json,
  ) {
    this.#spec = String(given["spec"]);
    this.#now = Number(given["now"]);
    this.#expiresAfter = given["expires_after"] === undefined ? DEFAULT_EXPIRES_AFTER : Number(given["expires_after"]);
  }

  /** The book of `spec` on the case's store: books of two specs share the records, as two deployments of two spec versions sharing one store do. */
  #book(spec: string): Approvals {
    let book = this.#books.get(spec);
    if (book === undefined) {
      book = new Approvals(this.#store, { spec, expiresAfter: this.#expiresAfter, clock: () => this.#now });
      this.#books.set(spec, book);
    }
    return book;
  }

  #eventJson(args: Json): JsonObject {
    return object(args["event"] ?? this.samples[String(args["hook"])], "event") as JsonObject;
  }

  #event(args: Json): Event {
    return eventFromJSON(args["hook"] as HookPoint, this.#eventJson(args));
  }

  async step(step: Json): Promise<Json> {
    if ("now" in step) this.#now = Number(step["now"]); // for this step and the ones after
    const book = this.#book(String(step["book"] ?? this.#spec));
    try {
      return await this.#run(book, step);
    } catch (thrown) {
      if (!(thrown instanceof ApprovalRefused)) throw thrown;
      return { refused: { code: thrown.code, approval: thrown.approval, message: thrown.message } };
    }
  }

  async #run(book: Approvals, step: Json): Promise<Json> {
    if ("file" in step) return { record: await book.file(this.#filing(object(step["file"], "file"))) };
    if ("consult" in step) {
      const args = object(step["consult"], "consult");
      return { verdict: verdictJson(await book.consult({ ...this.#filing(args), consumer: String(args["consumer"]) })) };
    }
    if ("decide" in step) return { record: await this.#decide(book, object(step["decide"], "decide")) };
    if ("claim" in step) {
      const args = object(step["claim"], "claim");
      const verdict = await book.claim(String(args["id"]), { hook: String(args["hook"]), event: this.#event(args), consumer: String(args["consumer"]) });
      return { verdict: verdictJson(verdict) };
    }
    if ("status" in step) return { status: statusAt(await book.get(String(object(step["status"], "status")["id"])), this.#now) };
    if ("get" in step) return { record: await book.get(String(object(step["get"], "get")["id"])) };
    if ("action" in step) {
      const action = actionOf(String(object(step["action"], "action")["hook"]), this.#eventJson(object(step["action"], "action")));
      return { action, identity: contentIdentity(action) };
    }
    if ("list" in step) {
      const status = optional<Status | "expired">(object(step["list"], "list"), "status");
      const records = await book.list({ status });
      const seen = records.map((record) => ({ id: record.id, status: statusAt(record, this.#now) }));
      return { list: seen.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)) };
    }
    throw new BehaviourError(`unknown approvals step ${JSON.stringify(step)}`);
  }

  #filing(args: Json) {
    return {
      hook: String(args["hook"]),
      event: this.#event(args),
      reason: String(args["reason"]),
      code: optional<string>(args, "code"),
      approverRole: optional<string>(args, "approver_role"),
      subject: optional<string>(args, "subject"),
      filedBy: String(args["filed_by"]),
    };
  }

  /**
   * `approved` with an edit is `edit`, without one `approve`; a denial is `deny`. A denial with
   * an edit, which no book call can say, goes to the rules' `decide` on the stored record, its
   * answer observed and nothing stored.
   */
  async #decide(book: Approvals, args: Json): Promise<ApprovalRecord> {
    const id = String(args["id"]);
    const common = {
      role: optional<string>(args, "role"),
      by: optional<string>(args, "by"),
      reason: String(args["reason"] ?? ""),
      spec: optional<string>(args, "spec"),
    };
    const edited = optional<JsonValue>(args, "edited");
    if (args["approved"] === true) {
      if (edited === null) return book.approve(id, common);
      return book.edit(id, edited as JsonObject, common); // passed as written: a wrong type is the rules' refusal
    }
    if (edited === null) return book.deny(id, common);
    const decision = { approved: false, role: common.role, by: common.by, reason: common.reason, edited: edited as JsonObject };
    return decide(await book.get(id), decision, this.#now, common.spec);
  }
}

function verdictJson(verdict: Verdict): Json {
  const event = isEvent(verdict.event) ? verdict.event.toJSON() : verdict.event;
  return { kind: verdict.kind, event, record: verdict.record };
}
