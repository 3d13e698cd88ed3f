/**
 * Where a file stops being UTF-8, for the loader (`./resolve.ts`) and the Cedar files
 * (`../policies/files.ts`) alike. A module of its own, importing nothing: the policies'
 * modules import it without importing the loader, which imports the built-in middleware,
 * and so the policies themselves.
 */

/** The first byte offset of `data` that is not UTF-8, or -1 (Python's `exc.start`). */
export function notUtf8(data: Buffer): number {
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(data);
    return -1;
  } catch {
    let low = 0;
    let high = data.length;
    // The longest prefix that decodes (a cut multi-byte character at its end aside).
    while (low < high) {
      const mid = Math.ceil((low + high) / 2);
      try {
        new TextDecoder("utf-8", { fatal: true }).decode(data.subarray(0, mid), { stream: true });
        low = mid;
      } catch {
        high = mid - 1;
      }
    }
    return low;
  }
}
