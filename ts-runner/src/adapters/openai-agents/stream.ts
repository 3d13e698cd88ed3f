/**
 * A streamed segment of a `GuardedRun`: the SDK's `StreamedRunResult`, and `completed`, which
 * settles once `task.end` has been emitted for it.
 *
 * `task.end` is emitted when the SDK's run completes (`result.completed`), whether or not the
 * caller reads the stream, so a streamed run leaves the same records as `run.run`.
 */

import type { Agent, StreamedRunResult } from "@openai/agents";
import type { GuardedRun } from "./run.js";

export class GuardedStream<TContext, TAgent extends Agent<any, any>> {
  /** The SDK's streamed result: iterate it for the run's events. */
  readonly result: StreamedRunResult<TContext, TAgent>;
  /**
   * The result once `task.end` was emitted (its `finalOutput` as `task.end` left it); rejects
   * with `HarnessStopped` when the bus ended the run, or with the SDK's error.
   */
  readonly completed: Promise<StreamedRunResult<TContext, TAgent>>;

  constructor(run: GuardedRun, result: StreamedRunResult<TContext, TAgent>) {
    this.result = result;
    this.completed = result.completed.then(
      () => run.finished(result),
      async (error: unknown) => {
        throw await run.failed(error);
      },
    );
    // A caller that only reads the stream has seen the failure there: no unhandled rejection.
    this.completed.catch(() => undefined);
  }

  /** The SDK's events, as `result` gives them. */
  [Symbol.asyncIterator]() {
    return this.result[Symbol.asyncIterator]();
  }
}
