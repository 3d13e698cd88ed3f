/** The two ways a behaviour spends time: interruptibly (`sleep`) or not at all (`busy`). */

/**
 * Resolves after `seconds`, or rejects with the signal's reason as soon as `signal` aborts
 * (the timer is cleared, so nothing lingers). `0` yields to the event loop once.
 */
export function sleep(seconds: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const done = () => {
      signal.removeEventListener("abort", aborted);
      resolve();
    };
    const cancel = seconds > 0 ? timer(done, seconds) : immediate(done);
    const aborted = () => {
      cancel();
      reject(signal.reason);
    };
    signal.addEventListener("abort", aborted, { once: true });
  });
}

/** Blocks the thread for `seconds` without ever yielding, so nothing can interrupt it. */
export function busy(seconds: number): void {
  const until = performance.now() + seconds * 1000;
  while (performance.now() < until) {
    // spin: the point is to never give the event loop a turn
  }
}

function timer(done: () => void, seconds: number): () => void {
  const handle = setTimeout(done, Math.min(seconds * 1000, 2 ** 31 - 1));
  return () => clearTimeout(handle);
}

function immediate(done: () => void): () => void {
  const handle = setImmediate(done);
  return () => clearImmediate(handle);
}
