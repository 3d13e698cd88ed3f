"""Shell command text → pipelines of commands of words, for ``shell_guard``'s rules.

Not a shell: a scanner that is linear in the text and the same in Python and TypeScript
(``ts-runner/src/builtins/shellwords.ts``), so that a rule sees the same words in both. It
knows what a guard needs to see through: quotes and backslashes (``"/"`` is the word ``/``),
comments, and the operators that end a command (``;``, ``&&``, ``||``, ``&``, a new line,
``(``, ``)``, a backquote) or join two into a pipeline (``|``, ``|&``). ``>&`` and ``&>`` are
redirections, not operators. The text of every quoted part (``bash -c 'rm -rf /'``) is scanned
again as a command of its own, up to ``MAX_DEPTH`` quotes deep: a guard would rather refuse
``echo "rm -rf /"`` than let ``sh -c "rm -rf /"`` through.

No regular expression is used here, so no input can make a match backtrack.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BLANKS", "MAX_DEPTH", "Command", "Pipeline", "Scanned", "basename", "scan"]

BLANKS = " \t\r\f\v"
"""What separates two words (a new line also ends the command). ASCII only, in both languages."""
MAX_DEPTH = 2
"""How many quotes deep quoted text is scanned again (``bash -c "sh -c '…'"``)."""
_ENDS = "\n;&()`"
_QUOTED_ESCAPES = '"\\$`\n'

Command = tuple[str, ...]
Pipeline = tuple[Command, ...]


@dataclass(frozen=True, slots=True)
class Scanned:
    """The command text, and its pipelines with those of its quoted parts after them."""

    text: str
    pipelines: tuple[Pipeline, ...]


def basename(word: str) -> str:
    """``/usr/bin/rm`` → ``rm``: a program named by its path is still that program."""
    return word[word.rfind("/") + 1 :]


class _Scanner:
    def __init__(self) -> None:
        self.pipelines: list[Pipeline] = []
        self.quoted: list[str] = []
        self._pipeline: list[Command] = []
        self._command: list[str] = []
        self._word: list[str] | None = None

    def _char(self, c: str) -> None:
        if self._word is None:
            self._word = []
        self._word.append(c)

    def _end_word(self) -> None:
        if self._word is not None:
            self._command.append("".join(self._word))
            self._word = None

    def _end_command(self) -> None:
        self._end_word()
        if self._command:
            self._pipeline.append(tuple(self._command))
            self._command = []

    def _end_pipeline(self) -> None:
        self._end_command()
        if self._pipeline:
            self.pipelines.append(tuple(self._pipeline))
            self._pipeline = []

    def _redirection(self) -> bool:
        # the & of 2>&1 or <&3 belongs to its word
        return self._word is not None and len(self._word) > 0 and self._word[-1] in "<>"

    def scan(self, text: str) -> None:
        i, n = 0, len(text)
        while i < n:
            c = text[i]
            if c == "\\":
                if i + 1 < n and text[i + 1] == "\n":  # a line continuation
                    i += 2
                    continue
                self._char(text[i + 1] if i + 1 < n else "\\")
                i += 2
            elif c == "'":
                end = text.find("'", i + 1)
                end = n if end < 0 else end
                part = text[i + 1 : end]
                self._char("")  # '' is a word too
                self._word_extend(part)
                self.quoted.append(part)
                i = end + 1
            elif c == '"':
                i = self._double(text, i + 1)
            elif c in BLANKS:
                self._end_word()
                i += 1
            elif c == "#" and self._word is None:
                end = text.find("\n", i)
                i = n if end < 0 else end
            elif c == "|":
                if i + 1 < n and text[i + 1] == "|":
                    self._end_pipeline()
                    i += 2
                else:
                    self._end_command()
                    i += 2 if i + 1 < n and text[i + 1] == "&" else 1
            elif c == "&" and (self._redirection() or (i + 1 < n and text[i + 1] == ">")):
                self._char(c)
                i += 1
            elif c in _ENDS:
                self._end_pipeline()
                i += 1
            else:
                self._char(c)
                i += 1
        self._end_pipeline()

    def _word_extend(self, part: str) -> None:
        assert self._word is not None
        self._word.append(part)

    def _double(self, text: str, i: int) -> int:
        """The double-quoted part from ``i``; the position after its closing quote."""
        n = len(text)
        part: list[str] = []
        while i < n and text[i] != '"':
            if text[i] == "\\" and i + 1 < n and text[i + 1] in _QUOTED_ESCAPES:
                if text[i + 1] != "\n":
                    part.append(text[i + 1])
                i += 2
            else:
                part.append(text[i])
                i += 1
        joined = "".join(part)
        self._char("")
        self._word_extend(joined)
        self.quoted.append(joined)
        return i + 1


def scan(text: str) -> Scanned:
    """The pipelines of ``text`` and of its quoted parts (breadth first, ``MAX_DEPTH`` deep)."""
    pipelines: list[Pipeline] = []
    level = [text]
    for _ in range(MAX_DEPTH + 1):
        deeper: list[str] = []
        for part in level:
            scanner = _Scanner()
            scanner.scan(part)
            pipelines.extend(scanner.pipelines)
            deeper.extend(scanner.quoted)
        level = deeper
    return Scanned(text=text, pipelines=tuple(pipelines))
