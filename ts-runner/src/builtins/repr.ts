/**
 * Python's `repr()` of a string, for reasons that quote a name as the Python built-ins do
 * (`tool 'search' is not allowed`): the reason is an outcome's text, compared by the corpus.
 *
 * The rules of CPython's `unicode_repr`: single quotes unless the text holds a `'` and no
 * `"`; `\\`, the quote, `\t`, `\n`, `\r` escaped; other characters that are not printable
 * (`str.isprintable()`: categories Cc, Cf, Cs, Co, Cn, Zl, Zp, Zs but the space) as `\xhh`,
 * `\uhhhh` or `\Uhhhhhhhh`.
 */

const NOT_PRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;

function escaped(cp: number): string {
  if (cp < 0x100) return `\\x${cp.toString(16).padStart(2, "0")}`;
  if (cp < 0x10000) return `\\u${cp.toString(16).padStart(4, "0")}`;
  return `\\U${cp.toString(16).padStart(8, "0")}`;
}

export function pythonRepr(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let out = quote;
  for (const char of text) {
    const cp = char.codePointAt(0) ?? 0;
    if (char === quote || char === "\\") out += `\\${char}`;
    else if (char === "\t") out += "\\t";
    else if (char === "\n") out += "\\n";
    else if (char === "\r") out += "\\r";
    else if (char !== " " && NOT_PRINTABLE.test(char)) out += escaped(cp);
    else out += char;
  }
  return out + quote;
}
