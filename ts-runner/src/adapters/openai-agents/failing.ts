/**
 * A tool whose failures the bus sees: the SDK's `tool()` with its `execute` watched.
 *
 * The SDK turns an exception in a function tool into the text its `errorFunction` gives the
 * model, inside the tool's own `invoke`: a wrapped `invoke` (tools.ts) only ever sees a result,
 * so `tool.after` cannot tell a failure from an answer and `harnessweaver.tool_failure_guard`
 * never counts one. A tool made here marks its call failed (by call id, on the run in flight)
 * before the exception goes on to the SDK, which answers the model as it always does; the call's
 * `tool.after` then carries `is_error: true`. The tool is returned guarded.
 */

import { tool as sdkTool } from "@openai/agents";
import { currentRun } from "./run.js";
import { guardTool } from "./tools.js";

type Options = Parameters<typeof sdkTool>[0];
type Execute = (input: unknown, context: unknown, details?: { readonly toolCall?: { readonly callId?: string } }) => unknown;

/**
 * `tool(options)` from `@openai/agents`, guarded, with its failures seen by the bus (`tool.after`'s
 * `result.isError`): use it in place of the SDK's for tools whose failures a guard should count.
 */
export const tool = ((options: Options) => {
  const execute = options.execute as Execute;
  const watched: Execute = async (input, context, details) => {
    try {
      return await execute(input, context, details);
    } catch (error) {
      const callId = details?.toolCall?.callId;
      const record = callId === undefined ? undefined : currentRun()?.call(callId);
      if (record !== undefined) record.failed = true;
      throw error; // the SDK's errorFunction answers the model, as it would
    }
  };
  return guardTool(sdkTool({ ...options, execute: watched } as Options));
}) as typeof sdkTool;
