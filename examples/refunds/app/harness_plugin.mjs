// The acme plugin in Node (the twin of harness_plugin.py): the refund desk's middleware as
// `acme.<name>`, and its baseline profile (`profile://acme.baseline`, next to this file).
import { Plugin } from "harnessweaver";
import { auditTracer, noWeekendRefunds, refundCap } from "./middleware.mjs";

export const plugin = new Plugin({
  namespace: "acme",
  version: "1.0.0",
  middleware: [noWeekendRefunds, refundCap, auditTracer],
  profiles: { baseline: new URL("./profiles/baseline.yaml", import.meta.url) },
});
