/**
 * The statement splitter (Python: `policies/statements.py`): a Cedar policy file cut into its
 * statements at each `;` outside string literals and `//` comments. Used only when the whole
 * set fails to parse (the fast path parses the set at once), to find the line of the offending
 * statement (I38), and to read each policy's head (annotations and scope) without asking the
 * engine for its JSON form.
 */

// What Python's str.isspace() calls a blank, so both split alike.
const SPACE = /^[\t\n\v\f\r \x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]$/;

/** One statement: its text with the `;` (when there is one), its offset and the 1-based line of its first token. */
export interface Statement {
  readonly text: string;
  readonly start: number;
  readonly line: number;
}

/** The statements of `source`, in order; text after the last `;` is one when it holds a token. */
export function statements(source: string): Statement[] {
  const out: Statement[] = [];
  let start = 0;
  let first = -1; // offset of the current statement's first token
  let i = 0;
  const n = source.length;
  const lines = lineStarts(source);
  const close = (end: number) => {
    if (first >= 0) out.push({ text: source.slice(start, end), start, line: lineOf(lines, first) });
    start = end;
    first = -1;
  };
  while (i < n) {
    const ch = source[i];
    if (ch === "/" && source[i + 1] === "/") {
      const end = source.indexOf("\n", i);
      i = end < 0 ? n : end;
      continue;
    }
    if (SPACE.test(ch ?? "")) {
      i += 1;
      continue;
    }
    if (first < 0) first = i;
    if (ch === '"') {
      i += 1;
      while (i < n && source[i] !== '"') i += source[i] === "\\" ? 2 : 1;
      i += 1;
      continue;
    }
    i += 1;
    if (ch === ";") close(i);
  }
  close(n);
  return out;
}

/** The offsets at which the lines of `source` start. */
export function lineStarts(source: string): number[] {
  const starts = [0];
  for (let i = source.indexOf("\n"); i >= 0; i = source.indexOf("\n", i + 1)) starts.push(i + 1);
  return starts;
}

/** The 1-based line of offset `at`, given the `lineStarts` of its text. */
export function lineOf(starts: readonly number[], at: number): number {
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if ((starts[mid] ?? 0) <= at) low = mid;
    else high = mid - 1;
  }
  return low + 1;
}

/** An entity in a policy's scope, `{type, id}`. */
export interface ScopeUid {
  readonly type: string;
  readonly id: string;
}

/** What the index needs of a policy: its annotations and its `action ==` / `resource ==` entities (null: any). */
export interface Head {
  readonly annotations: ReadonlyMap<string, string>;
  readonly action: ScopeUid | null;
  readonly resource: ScopeUid | null;
}

const TOKEN = /\s+|\/\/[^\n]*|"(?:[^"\\]|\\.)*"|[A-Za-z_][A-Za-z0-9_]*|::|==|[@(),[\]?]|./gsy;

/**
 * The head of a static policy the engine parsed already, read from its text, or null when it
 * holds what this reader leaves to the engine (a string with an escape): then the caller asks
 * Cedar for the policy's JSON form. Reading the text is what keeps 1,000 policies loading fast.
 */
export function readHead(text: string): Head | null {
  const tokens: string[] = [];
  TOKEN.lastIndex = 0;
  for (let found = TOKEN.exec(text); found !== null; found = TOKEN.exec(text)) {
    const token = found[0];
    if (/^\s/.test(token) || token.startsWith("//")) continue;
    if (token.startsWith('"') && token.includes("\\")) return null;
    tokens.push(token);
    if (token === "permit" || token === "forbid") {
      if (tokens.length > 0 && tokens[tokens.length - 2] !== "@") break;
    }
  }
  const annotations = new Map<string, string>();
  let i = 0;
  while (tokens[i] === "@") {
    const key = tokens[i + 1] ?? "";
    i += 2;
    let value = "";
    if (tokens[i] === "(") {
      value = (tokens[i + 1] ?? '""').slice(1, -1);
      i += 3;
    }
    annotations.set(key, value);
  }
  if (tokens[i] !== "permit" && tokens[i] !== "forbid") return null;
  // The rest of the scope, token by token, up to the `)` closing it.
  const rest: string[] = [];
  TOKEN.lastIndex = 0;
  let seen = 0;
  let depth = 0;
  let inScope = false;
  for (let found = TOKEN.exec(text); found !== null; found = TOKEN.exec(text)) {
    const token = found[0];
    if (/^\s/.test(token) || token.startsWith("//")) continue;
    if (token.startsWith('"') && token.includes("\\")) return null;
    seen += 1;
    if (seen <= i + 1) continue; // the annotations and the effect
    if (!inScope) {
      if (token !== "(") return null;
      inScope = true;
      continue;
    }
    if (token === "(" || token === "[") depth += 1;
    if (token === ")" || token === "]") {
      if (depth === 0) break;
      depth -= 1;
    }
    rest.push(token);
  }
  const parts: string[][] = [[]];
  depth = 0;
  for (const token of rest) {
    if (token === "[" || token === "(") depth += 1;
    if (token === "]" || token === ")") depth -= 1;
    if (token === "," && depth === 0) parts.push([]);
    else parts[parts.length - 1]?.push(token);
  }
  if (parts.length !== 3) return null;
  return { annotations, action: equalTo(parts[1] ?? [], "action"), resource: equalTo(parts[2] ?? [], "resource") };
}

/** The entity of a `var == Type::"id"` constraint, or null for any other. */
function equalTo(tokens: readonly string[], variable: string): ScopeUid | null {
  if (tokens[0] !== variable || tokens[1] !== "==" || tokens.length < 5 || tokens.length % 2 === 0) return null;
  const path: string[] = [];
  for (let i = 2; i < tokens.length - 2; i += 2) {
    if (tokens[i + 1] !== "::") return null;
    path.push(tokens[i] ?? "");
  }
  const id = tokens[tokens.length - 1] ?? "";
  if (!id.startsWith('"')) return null;
  return { type: path.join("::"), id: id.slice(1, -1) };
}
