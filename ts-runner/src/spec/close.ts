/**
 * "Did you mean …?": Python's `difflib.get_close_matches` (the Ratcliff/Obershelp ratio of
 * `SequenceMatcher`, without its junk heuristics, which only apply to 200+ characters), so
 * the hints of a problem are the ones Python gives.
 */

function longest(a: string, b: string, alo: number, ahi: number, blo: number, bhi: number): [number, number, number] {
  let best: [number, number, number] = [alo, blo, 0];
  let lengths = new Map<number, number>();
  for (let i = alo; i < ahi; i++) {
    const next = new Map<number, number>();
    for (let j = blo; j < bhi; j++) {
      if (a[i] !== b[j]) continue;
      const k = (lengths.get(j - 1) ?? 0) + 1;
      next.set(j, k);
      if (k > best[2]) best = [i - k + 1, j - k + 1, k];
    }
    lengths = next;
  }
  return best;
}

function matched(a: string, b: string): number {
  let total = 0;
  const queue: [number, number, number, number][] = [[0, a.length, 0, b.length]];
  while (queue.length > 0) {
    const [alo, ahi, blo, bhi] = queue.pop() as [number, number, number, number];
    const [i, j, k] = longest(a, b, alo, ahi, blo, bhi);
    if (k === 0) continue;
    total += k;
    if (alo < i && blo < j) queue.push([alo, i, blo, j]);
    if (i + k < ahi && j + k < bhi) queue.push([i + k, ahi, j + k, bhi]);
  }
  return total;
}

/** `SequenceMatcher(None, a, b).ratio()`. */
export function ratio(a: string, b: string): number {
  const size = a.length + b.length;
  return size === 0 ? 1 : (2 * matched(a, b)) / size;
}

/** The best `n` of `possibilities` whose ratio to `word` is at least `cutoff`, best first. */
export function closeMatches(word: string, possibilities: Iterable<string>, n = 3, cutoff = 0.6): string[] {
  const scored: [number, string][] = [];
  for (const candidate of possibilities) {
    const score = ratio(candidate, word);
    if (score >= cutoff) scored.push([score, candidate]);
  }
  scored.sort((x, y) => y[0] - x[0] || (x[1] < y[1] ? 1 : x[1] > y[1] ? -1 : 0));
  return scored.slice(0, n).map(([, candidate]) => candidate);
}

function folded(key: string): string {
  return key.replaceAll("-", "_").toLowerCase();
}

/**
 * The name of `groups` that `key` most likely meant, or null (Python: `spec/close.py`). Each
 * group is tried in turn, first for a name spelt alike but for `-`/`_` and capitals (`fail-mode`
 * is `fail_mode`), then by ratio, so a setting is suggested before a reserved key.
 */
export function closest(key: string, ...groups: readonly (readonly string[])[]): string | null {
  for (const names of groups) {
    const same = names.find((name) => folded(name) === folded(key));
    if (same !== undefined) return same;
  }
  for (const names of groups) {
    const close = closeMatches(key.replaceAll("-", "_"), names, 1);
    if (close.length > 0) return close[0] as string;
  }
  return null;
}
