/**
 * Python's IGNORECASE, spelled out for JavaScript (used by `pyregex.ts`).
 *
 * Python's `re` (str patterns) lets a literal `c` match a character `d` when
 * `lower(d) == lower(c)`, or when `lower(d)` is one of the extra cases of `lower(c)`
 * (`re._casefix._EXTRA_CASES`: `i` and dotless `ı`, `s` and long `ſ`, `µ` and `μ`…), with
 * `lower` the simple lowercase mapping of UnicodeData; a class matches `d` when `lower(d)` is
 * in the class's members lowered. JavaScript's `i` flag folds by another table (simple case
 * folding): `/i/iv` does not match `İ` or `ı`, Python's `(?i)i` matches both. So no `i` flag
 * is given to JavaScript: each literal and class under IGNORECASE is written as the explicit
 * set of the characters Python would match. Under `(?a)` only ASCII letters fold.
 */

/** `re._casefix._EXTRA_CASES` of Python 3.11 (lower-case code point → its extra cases). */
const EXTRA_CASES: ReadonlyMap<number, readonly number[]> = new Map([
  [105, [305]], [115, [383]], [181, [956]], [305, [105]], [383, [115]], [837, [953, 8126]], [912, [8147]], [944, [8163]],
  [946, [976]], [949, [1013]], [952, [977]], [953, [837, 8126]], [954, [1008]], [956, [181]], [960, [982]], [961, [1009]],
  [962, [963]], [963, [962]], [966, [981]], [976, [946]], [977, [952]], [981, [966]], [982, [960]], [1008, [954]], [1009, [961]],
  [1013, [949]], [1074, [7296]], [1076, [7297]], [1086, [7298]], [1089, [7299]], [1090, [7300, 7301]], [1098, [7302]],
  [1123, [7303]], [7296, [1074]], [7297, [1076]], [7298, [1086]], [7299, [1089]], [7300, [1090, 7301]], [7301, [1090, 7300]],
  [7302, [1098]], [7303, [1123]], [7304, [42571]], [7777, [7835]], [7835, [7777]], [8126, [837, 953]], [8147, [912]],
  [8163, [944]], [42571, [7304]], [64261, [64262]], [64262, [64261]],
]);

/** The simple lowercase mapping (UnicodeData), as Python's `_PyUnicode_ToLowercase`. */
export function lower(cp: number, ascii: boolean): number {
  if (ascii) return cp >= 65 && cp <= 90 ? cp + 32 : cp;
  if (cp === 0x130) return 0x69; // the one unconditional SpecialCasing entry: full "i̇", simple "i"
  const lowered = String.fromCodePoint(cp).toLowerCase();
  const first = lowered.codePointAt(0) ?? cp;
  return lowered.length === String.fromCodePoint(first).length ? first : cp;
}

const LIMIT = 0x110000;
let lowers: Int32Array | undefined;
let inverse: Map<number, number[]> | undefined;

/** The lowercase of every code point, and the code points of each lowercase that are not it; built once on first use. */
function tables(): { readonly lowers: Int32Array; readonly inverse: Map<number, number[]> } {
  if (lowers === undefined || inverse === undefined) {
    lowers = new Int32Array(LIMIT);
    inverse = new Map();
    for (let cp = 0; cp < LIMIT; cp++) {
      const lo = cp >= 0xd800 && cp <= 0xdfff ? cp : lower(cp, false);
      lowers[cp] = lo;
      if (lo === cp) continue;
      const found = inverse.get(lo);
      if (found === undefined) inverse.set(lo, [cp]);
      else found.push(cp);
    }
  }
  return { lowers, inverse };
}

/** Every code point whose lowercase is `t` (Unicode). */
function uppers(t: number): readonly number[] {
  return tables().inverse.get(t) ?? [];
}

/**
 * What a class of `spans` matches under Unicode IGNORECASE, for classes too large to lower
 * member by member: with a bitmap of the lowered set, one pass over every code point.
 */
export function matchingSpans(spans: readonly (readonly [number, number])[]): number[] {
  const { lowers: table } = tables();
  const targets = new Uint8Array(LIMIT);
  for (const [low, high] of spans) {
    for (let cp = low; cp <= high; cp++) {
      const lo = table[cp] as number;
      targets[lo] = 1;
      for (const extra of EXTRA_CASES.get(lo) ?? []) targets[extra] = 1;
    }
  }
  const out: number[] = [];
  for (let cp = 0; cp < LIMIT; cp++) if (targets[table[cp] as number] === 1 && (cp < 0xd800 || cp > 0xdfff)) out.push(cp);
  return out;
}

/** The lowered set a class (or literal) stands for: each member lowered, with its extra cases. */
export function lowered(members: Iterable<number>, ascii: boolean): Set<number> {
  const out = new Set<number>();
  for (const cp of members) {
    const lo = lower(cp, ascii);
    out.add(lo);
    if (!ascii) for (const extra of EXTRA_CASES.get(lo) ?? []) out.add(extra);
  }
  return out;
}

/** Every character `d` with `lower(d)` in `targets`, sorted. */
export function matching(targets: ReadonlySet<number>, ascii: boolean): number[] {
  const out = new Set<number>();
  for (const t of targets) {
    if (lower(t, ascii) === t) out.add(t);
    if (ascii) {
      if (t >= 97 && t <= 122) out.add(t - 32);
    } else {
      for (const cp of uppers(t)) out.add(cp);
    }
  }
  return [...out].sort((a, b) => a - b);
}

/** Sorted code points as `v`-mode class contents (runs written as ranges). */
export function ranges(cps: readonly number[], lit: (cp: number) => string): string {
  let out = "";
  for (let i = 0; i < cps.length; ) {
    let j = i;
    while (j + 1 < cps.length && cps[j + 1] === (cps[j] as number) + 1) j++;
    out += j > i ? `${lit(cps[i] as number)}-${lit(cps[j] as number)}` : lit(cps[i] as number);
    i = j + 1;
  }
  return out;
}
