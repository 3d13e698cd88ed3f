// The refund desk's middleware in Node: the twin of middleware.py, so that the same
// harness.yaml loads in both languages (`plugins.local: ["app.harness_plugin"]` finds
// harness_plugin.py in Python, harness_plugin.mjs in Node).
import { Block, configurable, middleware, Suspend } from "harnessweaver";

export const ALL_HOOKS = ["task.start", "step.start", "model.before", "model.after", "tool.before", "tool.after", "step.end", "task.end"];

/** What the tracer saw: the type of every event, in order. */
export const AUDIT_LOG = [];

/** Refunds asked for at the weekend wait for someone in finance. */
export const noWeekendRefunds = middleware(
  { name: "no_weekend_refunds", hooks: ["tool.before"], band: "app", failMode: "closed", timeout: "2s" },
  async (event, env) => {
    if (event.tool.name === "refund_payment" && env.clock.isWeekend()) {
      return Suspend("weekend refunds need approval", { approverRole: "finance" });
    }
    return undefined;
  },
);

/** A middleware with settings: `max_usd`, required (Python's CapSettings, extra keys refused). */
export const refundCap = configurable(
  {
    name: "refund_cap",
    hooks: ["tool.before"],
    failMode: "closed",
    settings: { type: "object", properties: { max_usd: { type: "number" } }, required: ["max_usd"] },
  },
  ({ max_usd: maxUsd }) =>
    async (event) => {
      if (event.tool.name !== "refund_payment") return undefined;
      // Typed arguments, as RefundArgs: an amount that is not a number throws, and fail-closed blocks.
      const given = event.call.arguments["amount_usd"];
      const amount = given === undefined ? 0 : given;
      if (typeof amount !== "number") throw new TypeError("amount_usd is not a number");
      return amount > maxUsd ? Block("over the refund cap", { code: "refund_cap" }) : undefined;
    },
);

/** The org's tracer: notes every event. It lives in baseline, so it fails closed (R2). */
export const auditTracer = middleware(
  { name: "audit_tracer", hooks: ALL_HOOKS, failMode: "closed", timeout: "250ms" },
  async (event) => {
    AUDIT_LOG.push(event.constructor.name);
    return undefined;
  },
);
