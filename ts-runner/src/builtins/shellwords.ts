/**
 * Shell command text → pipelines of commands of words, for `shell_guard`'s rules
 * (python/harnessweaver/builtins/_shellwords.py, which says what it sees through and why).
 *
 * Not a shell: a scanner linear in the text, the same as Python's step by step, so that a rule
 * sees the same words in both. Only ASCII characters have a meaning here, so walking UTF-16
 * units (JavaScript) or code points (Python) gives the same words. No regular expression is
 * used, so no input can make a match backtrack.
 */

/** What separates two words (a new line also ends the command). ASCII only, in both languages. */
export const BLANKS = " \t\r\f\v";
/** How many quotes deep quoted text is scanned again (`bash -c "sh -c '…'"`). */
export const MAX_DEPTH = 2;
const ENDS = "\n;&()`";
const QUOTED_ESCAPES = '"\\$`\n';

export type Command = readonly string[];
export type Pipeline = readonly Command[];

/** The command text, and its pipelines with those of its quoted parts after them. */
export interface Scanned {
  readonly text: string;
  readonly pipelines: readonly Pipeline[];
}

/** `/usr/bin/rm` → `rm`: a program named by its path is still that program. */
export function basename(word: string): string {
  return word.slice(word.lastIndexOf("/") + 1);
}

class Scanner {
  readonly pipelines: Pipeline[] = [];
  readonly quoted: string[] = [];
  #pipeline: Command[] = [];
  #command: string[] = [];
  #word: string[] | null = null;

  #char(c: string): void {
    (this.#word ??= []).push(c);
  }

  #endWord(): void {
    if (this.#word !== null) {
      this.#command.push(this.#word.join(""));
      this.#word = null;
    }
  }

  #endCommand(): void {
    this.#endWord();
    if (this.#command.length > 0) {
      this.#pipeline.push(this.#command);
      this.#command = [];
    }
  }

  #endPipeline(): void {
    this.#endCommand();
    if (this.#pipeline.length > 0) {
      this.pipelines.push(this.#pipeline);
      this.#pipeline = [];
    }
  }

  /** The & of 2>&1 or <&3 belongs to its word. */
  #redirection(): boolean {
    const word = this.#word;
    return word !== null && word.length > 0 && "<>".includes(word[word.length - 1] as string);
  }

  scan(text: string): void {
    let i = 0;
    const n = text.length;
    while (i < n) {
      const c = text[i] as string;
      if (c === "\\") {
        if (i + 1 < n && text[i + 1] === "\n") {
          i += 2; // a line continuation
          continue;
        }
        this.#char(i + 1 < n ? (text[i + 1] as string) : "\\");
        i += 2;
      } else if (c === "'") {
        let end = text.indexOf("'", i + 1);
        end = end < 0 ? n : end;
        const part = text.slice(i + 1, end);
        this.#char(""); // '' is a word too
        this.#char(part);
        this.quoted.push(part);
        i = end + 1;
      } else if (c === '"') {
        i = this.#double(text, i + 1);
      } else if (BLANKS.includes(c)) {
        this.#endWord();
        i += 1;
      } else if (c === "#" && this.#word === null) {
        const end = text.indexOf("\n", i);
        i = end < 0 ? n : end;
      } else if (c === "|") {
        if (i + 1 < n && text[i + 1] === "|") {
          this.#endPipeline();
          i += 2;
        } else {
          this.#endCommand();
          i += i + 1 < n && text[i + 1] === "&" ? 2 : 1;
        }
      } else if (c === "&" && (this.#redirection() || (i + 1 < n && text[i + 1] === ">"))) {
        this.#char(c);
        i += 1;
      } else if (ENDS.includes(c)) {
        this.#endPipeline();
        i += 1;
      } else {
        this.#char(c);
        i += 1;
      }
    }
    this.#endPipeline();
  }

  /** The double-quoted part from `i`; the position after its closing quote. */
  #double(text: string, start: number): number {
    const n = text.length;
    const part: string[] = [];
    let i = start;
    while (i < n && text[i] !== '"') {
      if (text[i] === "\\" && i + 1 < n && QUOTED_ESCAPES.includes(text[i + 1] as string)) {
        if (text[i + 1] !== "\n") part.push(text[i + 1] as string);
        i += 2;
      } else {
        part.push(text[i] as string);
        i += 1;
      }
    }
    const joined = part.join("");
    this.#char("");
    this.#char(joined);
    this.quoted.push(joined);
    return i + 1;
  }
}

/** The pipelines of `text` and of its quoted parts (breadth first, `MAX_DEPTH` deep). */
export function scan(text: string): Scanned {
  const pipelines: Pipeline[] = [];
  let level = [text];
  for (let depth = 0; depth <= MAX_DEPTH; depth++) {
    const deeper: string[] = [];
    for (const part of level) {
      const scanner = new Scanner();
      scanner.scan(part);
      // a loop, not push(...): a long command has more pipelines than a call takes arguments
      for (const pipeline of scanner.pipelines) pipelines.push(pipeline);
      for (const quoted of scanner.quoted) deeper.push(quoted);
    }
    level = deeper;
  }
  return { text, pipelines };
}
