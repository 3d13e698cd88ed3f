/**
 * Telling someone an approval is pending (Python's `harnessweaver/approvals/notify.py`): a
 * callback, or `HttpNotifier`, a signed POST a chat bot or ticket system receives.
 *
 * The POST's body is compact JSON `{"type":"approval.pending","approval":<record>}`; its headers
 * `X-Harnessweaver-Timestamp: <int seconds>` and `X-Harnessweaver-Signature: sha256=<hex
 * HMAC-SHA256(secret, "<timestamp>.<body>")>`, so a receiver checks who sent it and when
 * (`verifySignature`). A failure is the filer's to log by type name; the URL (which may hold a
 * token), the secret and the body never reach a message.
 */

import { createHmac, timingSafeEqual } from "node:crypto";
import type { ApprovalRecord } from "./record.js";

/** Whether `url` is an http(s) URL with a host (Python's `web_url`). */
export function webUrl(url: string): boolean {
  try {
    const parts = new URL(url);
    return (parts.protocol === "http:" || parts.protocol === "https:") && parts.hostname !== "";
  } catch {
    return false;
  }
}

/** A callback given each new record (sync or async). */
export type NotifyCallback = (record: ApprovalRecord) => void | Promise<void>;

/** What `Approvals` takes as `notify`: a callback or an object with `notify(record)` (`HttpNotifier`). */
export type Notifier = NotifyCallback | { notify(record: ApprovalRecord): void | Promise<void> };

/** The headers of a signed notification. */
export const TIMESTAMP_HEADER = "X-Harnessweaver-Timestamp";
export const SIGNATURE_HEADER = "X-Harnessweaver-Signature";

/** A notification that could not be delivered: names the kind of failure, never the URL or the body. */
export class NotifyFailed extends Error {
  override readonly name = "NotifyFailed";
}

/** `sha256=<hex>` of HMAC-SHA256(secret, "<timestamp>.<body>"). */
export function sign(secret: string, timestamp: number | string, body: string): string {
  return `sha256=${createHmac("sha256", secret).update(`${timestamp}.${body}`, "utf8").digest("hex")}`;
}

/** The body of a notification for `record`: compact JSON. */
export function notificationBody(record: ApprovalRecord): string {
  return JSON.stringify({ type: "approval.pending", approval: record });
}

/**
 * Whether `header` is the signature of `body` sent at `timestamp` with `secret` and that time is
 * within `tolerance` seconds of `now` (a replayed old notification fails). Constant-time.
 */
export function verifySignature(
  secret: string,
  timestamp: string | number,
  body: string,
  header: string | null | undefined,
  now: number = Date.now() / 1000,
  tolerance = 300,
): boolean {
  const stamp = typeof timestamp === "number" ? timestamp : /^-?\d+$/.test(timestamp.trim()) ? Number(timestamp.trim()) : Number.NaN;
  if (!Number.isSafeInteger(stamp) || Math.abs(now - stamp) > tolerance) return false;
  if (typeof header !== "string") return false;
  const expected = Buffer.from(sign(secret, stamp, body), "utf8");
  const given = Buffer.from(header, "utf8");
  return expected.length === given.length && timingSafeEqual(expected, given);
}

export interface HttpNotifierOptions {
  /** Seconds before the POST is given up (default 5). */
  readonly timeout?: number;
  /** The clock, in seconds (default the process's). */
  readonly clock?: () => number;
}

/** POSTs each new record to `url`, signed with `secret` (Python's `HttpNotifier`). */
export class HttpNotifier {
  readonly #url: string;
  readonly #secret: string;
  readonly timeout: number;
  readonly #clock: () => number;

  constructor(url: string, secret: string, options: HttpNotifierOptions = {}) {
    if (typeof url !== "string" || !webUrl(url)) throw new RangeError("a notifier url is an http:// or https:// URL");
    if (typeof secret !== "string" || secret === "") throw new RangeError("a notifier secret is non-empty text");
    const timeout = options.timeout ?? 5;
    if (!Number.isFinite(timeout) || timeout <= 0) throw new RangeError("a notifier timeout is a number of seconds > 0");
    this.#url = url;
    this.#secret = secret;
    this.timeout = timeout;
    this.#clock = options.clock ?? (() => Date.now() / 1000);
  }

  async notify(record: ApprovalRecord): Promise<void> {
    const body = notificationBody(record);
    const timestamp = Math.floor(this.#clock());
    let status: number;
    try {
      const response = await fetch(this.#url, {
        method: "POST",
        body,
        headers: {
          "Content-Type": "application/json",
          [TIMESTAMP_HEADER]: String(timestamp),
          [SIGNATURE_HEADER]: sign(this.#secret, timestamp, body),
        },
        signal: AbortSignal.timeout(this.timeout * 1000),
        redirect: "error",
      });
      status = response.status;
      await response.body?.cancel();
    } catch (error) {
      // fetch's messages may quote the URL: only the kind of failure goes on.
      const kind = error instanceof Error && /^[A-Za-z_][A-Za-z0-9_]*$/.test(error.name) ? error.name : "error";
      throw new NotifyFailed(`approval notification failed: ${kind}`);
    }
    if (status < 200 || status >= 300) throw new NotifyFailed(`approval notification refused: HTTP ${status}`);
  }

  /** Never the URL or the secret. */
  toString(): string {
    return "HttpNotifier(<url>)";
  }

  toJSON(): object {
    return { type: "HttpNotifier", timeout: this.timeout };
  }

  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return this.toString();
  }
}

/** Calls `notifier` with `record`. */
export async function deliver(notifier: Notifier, record: ApprovalRecord): Promise<void> {
  if (typeof notifier === "function") await notifier(record);
  else await notifier.notify(record);
}
