"""``harnessweaver.shell_guard``: destructive shell commands never run.

A call of a shell tool (``tools``) has its command (the ``arguments`` it names; a list of
words is joined with spaces) checked against the built-in rules of ``RULES`` that ``rules``
names, then against the user's ``patterns``; the first that matches blocks the call with
code ``shell_command_denied`` and a reason naming the tool and the rule, never the command.

The rules read the words of each command (``_shellwords``), not the text, so they see
through quotes, paths (``/bin/rm``) and pipelines, and no input can make them backtrack.
A guard is a seat belt, not a sandbox: a command built at run time (``$x -rf /``, a script
file, base64) is not seen. ``docs/builtins.md`` has the rules' table.

``RULES`` is the one place to extend: a rule is a name and a function of the scanned command
and the settings (mirrored in ``ts-runner/src/builtins/shell.ts``; the corpus keeps the two
the same).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
)

from ..envelope import Envelope
from ..events import ToolCallEvent
from ..middleware import middleware
from ..outcomes import Block
from ._rewrite import check_pattern
from ._shellwords import Command, Scanned, basename, scan

__all__ = [
    "DEFAULT_ARGUMENTS",
    "DEFAULT_TOOLS",
    "MAX_COMMAND",
    "RULES",
    "Rule",
    "RuleName",
    "ShellGuard",
    "ShellGuardSettings",
]

MAX_COMMAND = 262_144
"""A command longer than this (in characters) is refused unread: it is twice what Linux lets
one argument of a program be (128 KiB, so ``bash -c`` could not run it), and a user's pattern
that backtracks cannot be made to run for long."""

DEFAULT_TOOLS: tuple[str, ...] = (
    "Bash",  # Claude Code; Codex's hooks
    "Shell",  # Cursor's hooks
    "bash",  # Copilot CLI
    "run_shell_command",  # Gemini CLI
    "run_in_terminal",  # VS Code's Copilot agent
    "run_terminal_cmd",  # Cursor's agent
    "shell",  # Codex's model tool, and a common name
    "local_shell",  # the OpenAI Responses API's tool
    "exec_command",  # Codex's unified exec (argument cmd)
    "execute_command",  # Cline, Roo Code
    "sh",
    "terminal",
)
"""The shell tools of the coding agents, and the common names for one."""
DEFAULT_ARGUMENTS: tuple[str, ...] = ("command", "cmd")
"""The arguments that carry the command."""


@dataclass(frozen=True, slots=True)
class _Settings:
    protected: frozenset[str]


def _each_command(scanned: Scanned) -> list[Command]:
    return [command for pipeline in scanned.pipelines for command in pipeline]


def _invocations(scanned: Scanned, program: str) -> list[Command]:
    """The arguments of each time a command names ``program`` (``/bin/rm`` too): the words
    after it, up to where it is named again. (Up to there, not to the command's end: then
    each word is read once, and ``rm rm rm … -rf /`` cannot make a rule quadratic.)"""
    found: list[Command] = []
    for command in _each_command(scanned):
        start = -1
        for at, word in enumerate(command):
            if basename(word) == program:
                if start >= 0:
                    found.append(command[start:at])
                start = at + 1
        if start >= 0:
            found.append(command[start:])
    return found


def _short(word: str) -> str:
    """The letters of a short-option cluster (``-rf`` → ``rf``), or ``""``."""
    return word[1:] if len(word) > 1 and word[0] == "-" and word[1] != "-" else ""


_DANGEROUS = frozenset({"/", "~", "*", ".", "..", ".*", "$HOME", "${HOME}"})


def _dangerous_target(word: str) -> bool:
    """``/``, a folder of the root (``/etc``), the home folder, or everything here."""
    target = word[:-2] if word.endswith("/*") else word
    target = target.rstrip("/") or "/"
    if target in _DANGEROUS:
        return True
    if target.startswith("~"):
        return "/" not in target  # ~ or ~user
    return target.startswith("/") and "/" not in target[1:]


def _rm_recursive_force(scanned: Scanned, settings: _Settings) -> bool:
    for args in _invocations(scanned, "rm"):
        recursive = force = dangerous = no_root = False
        options = True
        for arg in args:
            letters = _short(arg) if options else ""
            if options and arg == "--":
                options = False
            elif letters:
                recursive = recursive or "r" in letters or "R" in letters
                force = force or "f" in letters
            elif options and arg.startswith("--"):
                recursive = recursive or arg == "--recursive"
                force = force or arg == "--force"
                no_root = no_root or arg == "--no-preserve-root"
            else:
                dangerous = dangerous or _dangerous_target(arg)
        if recursive and force and (dangerous or no_root):
            return True
    return False


_DOWNLOADERS = frozenset({"curl", "wget"})
_INTERPRETERS = frozenset(
    {"sh", "bash", "zsh", "dash", "ksh", "fish", "perl", "ruby", "node", "python", "python3"}
)
_WRAPPERS = frozenset(
    {"sudo", "doas", "env", "nohup", "time", "nice", "command", "exec", "builtin", "stdbuf"}
)


def _program(command: Command) -> str:
    """The program a command runs: past ``sudo``, ``env X=1`` and the like."""
    for word in command:
        name = basename(word)
        if name in _WRAPPERS or word.startswith("-") or ("=" in word and not word.startswith("=")):
            continue
        return name
    return ""


def _curl_pipe_shell(scanned: Scanned, settings: _Settings) -> bool:
    for pipeline in scanned.pipelines:
        downloaded = False
        for command in pipeline:
            if downloaded and _program(command) in _INTERPRETERS:
                return True
            downloaded = downloaded or any(basename(word) in _DOWNLOADERS for word in command)
    return False


def _world_writable(mode: str) -> bool:
    """An octal mode with the others' write bit, or a symbolic one giving ``o``/``a`` write."""
    if len(mode) in (3, 4) and all(c in "01234567" for c in mode):
        return mode[-1] in "2367"
    for clause in mode.split(","):
        who = len(clause) - len(clause.lstrip("ugoa"))
        rest = clause[who:]
        granted = rest[:1] in ("+", "=") and "w" in rest
        if granted and (who == 0 or "a" in clause[:who] or "o" in clause[:who]):
            return True
    return False


def _chmod_recursive_777(scanned: Scanned, settings: _Settings) -> bool:
    for args in _invocations(scanned, "chmod"):
        recursive = any("R" in _short(a) or a == "--recursive" for a in args)
        if recursive and any(_world_writable(a) for a in args if not a.startswith("-")):
            return True
    return False


_GIT_OPTIONS_WITH_VALUE = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace"})
_PUSH_OPTIONS_WITH_VALUE = frozenset({"-o", "--push-option", "--repo", "--receive-pack", "--exec"})


def _pushed_to_protected(args: Command, protected: frozenset[str]) -> bool:
    """Whether ``git push ARGS`` force-updates a protected branch, or one it cannot name."""
    force = every = False
    positional: list[str] = []
    skip = False
    for at, arg in enumerate(args):
        if skip:
            skip = False
        elif arg == "--":
            positional.extend(args[at + 1 :])
            break
        elif arg.startswith("--"):
            name = arg.split("=", 1)[0]
            force = force or name in ("--force", "--force-with-lease", "--mirror")
            every = every or name in ("--all", "--branches", "--mirror")
            skip = arg in _PUSH_OPTIONS_WITH_VALUE
        elif _short(arg):
            force = force or "f" in _short(arg)
            skip = arg in _PUSH_OPTIONS_WITH_VALUE
        else:
            positional.append(arg)
    refspecs = positional[1:]  # the first is the remote
    if every or not refspecs:  # every branch, or the current one: it may be a protected one
        return force
    for refspec in refspecs:
        if not (force or refspec.startswith("+")):
            continue
        spec = refspec[1:] if refspec.startswith("+") else refspec
        target = spec.split(":", 1)[1] if ":" in spec else spec
        target = target.removeprefix("refs/heads/")
        if target in protected or target in ("", "HEAD", "@"):
            return True
    return False


def _git_force_push(scanned: Scanned, settings: _Settings) -> bool:
    for args in _invocations(scanned, "git"):
        skip = False
        for at, arg in enumerate(args):
            if skip:
                skip = False
            elif arg.startswith("-"):
                skip = arg in _GIT_OPTIONS_WITH_VALUE
            else:  # the subcommand
                if arg == "push" and _pushed_to_protected(args[at + 1 :], settings.protected):
                    return True
                break
    return False


def _makes_file_system(program: str) -> bool:
    return program in ("mkfs", "mke2fs") or program.startswith("mkfs.")


def _mkfs(scanned: Scanned, settings: _Settings) -> bool:
    return any(
        _makes_file_system(basename(word)) for command in _each_command(scanned) for word in command
    )


_HARMLESS_DEVICES = frozenset({"null", "zero", "stdout", "stderr", "tty"})


def _dd_to_device(scanned: Scanned, settings: _Settings) -> bool:
    for args in _invocations(scanned, "dd"):
        for arg in args:
            device = arg.removeprefix("of=/dev/")
            harmless = device in _HARMLESS_DEVICES or device.startswith("fd/")
            if device != arg and not harmless:
                return True
    return False


_NOT_IN_NAMES = "(){}|&;<>'\"`$"
_NO_BLANKS = str.maketrans("", "", " \t\r\f\v\n")  # made once, not on every call


def _fork_bomb(scanned: Scanned, settings: _Settings) -> bool:
    """``NAME(){ NAME|NAME& }``: a function that starts two of itself (blanks ignored)."""
    text = scanned.text.translate(_NO_BLANKS)
    at = text.find("(){")
    while at >= 0:
        start = at
        while start > 0 and text[start - 1] not in _NOT_IN_NAMES:
            start -= 1  # never past the previous "(){" (a "{"): linear in the text
        name = text[start:at]
        if name and text.startswith(f"{name}|{name}&", at + 3):
            return True
        at = text.find("(){", at + 3)
    return False


Rule = Callable[[Scanned, _Settings], bool]
RuleName = Literal[
    "rm_recursive_force",
    "curl_pipe_shell",
    "chmod_recursive_777",
    "git_force_push",
    "mkfs",
    "dd_to_device",
    "fork_bomb",
]
RULES: Mapping[str, Rule] = {
    # rm with -r/-R/--recursive and -f/--force (any order, clustered or not) of /, a folder of
    # the root, ~, ~user, $HOME, *, . or .. (a trailing / or /* too); or with --no-preserve-root
    "rm_recursive_force": _rm_recursive_force,
    # curl or wget, then later in the same pipeline a shell or interpreter (past sudo, env…)
    "curl_pipe_shell": _curl_pipe_shell,
    # chmod -R (or --recursive) with a mode giving others write: 777, 0666, a+w, o=rwx, +w
    "chmod_recursive_777": _chmod_recursive_777,
    # git push forced (-f, --force, --force-with-lease, --mirror, a +refspec) to a protected
    # branch, to HEAD, or with no branch named (the current one may be protected)
    "git_force_push": _git_force_push,
    # mkfs, mkfs.TYPE, mke2fs (any word of a command): making a file system erases the device
    "mkfs": _mkfs,
    # dd of=/dev/… (not /dev/null, zero, stdout, stderr, tty, fd/N)
    "dd_to_device": _dd_to_device,
    # NAME(){ NAME|NAME& }
    "fork_bomb": _fork_bomb,
}
"""The built-in rules, in the order they are tried: the one place to extend."""


_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")


def _check_pattern_item(item: dict[str, str]) -> None:
    if set(item) != {"name", "pattern"}:
        raise ValueError("a pattern is {name, pattern}")
    name = item["name"]
    if _NAME.fullmatch(name) is None:
        raise ValueError(f"the pattern name {name!r} is not [a-z][a-z0-9_]* (at most 64)")
    if name in RULES:
        raise ValueError(f"the pattern name {name!r} is a built-in rule's")
    check_pattern(item["pattern"])


_PatternItem = Annotated[
    dict[str, str],
    WithJsonSchema(
        {
            "type": "object",
            "additionalProperties": False,
            "required": ["name", "pattern"],
            "properties": {
                "name": {"type": "string", "pattern": "^[a-z][a-z0-9_]{0,63}$"},
                "pattern": {"type": "string", "minLength": 1},
            },
        }
    ),
]


class ShellGuardSettings(BaseModel):
    """``tools`` whose ``arguments`` hold a command; the built-in ``rules`` and the user's
    ``patterns`` (``{name, pattern}``) it must not match; the ``protected_branches`` of
    ``git_force_push``."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    tools: tuple[str, ...] = Field(default=DEFAULT_TOOLS, min_length=1)
    arguments: tuple[str, ...] = Field(default=DEFAULT_ARGUMENTS, min_length=1)
    rules: tuple[RuleName, ...] = Field(
        default=tuple(RULES),  # type: ignore[arg-type]
        json_schema_extra={"uniqueItems": True},
    )
    patterns: tuple[_PatternItem, ...] = Field(default=(), validate_default=True)  # rules: []
    protected_branches: tuple[str, ...] = Field(default=("main", "master"), min_length=1)

    @field_validator("rules")
    @classmethod
    def _unique(cls, rules: tuple[str, ...]) -> tuple[str, ...]:
        if len(set(rules)) != len(rules):
            raise ValueError("a rule is named twice")
        return rules

    @field_validator("patterns")
    @classmethod
    def _patterns(
        cls, patterns: tuple[dict[str, str], ...], info: ValidationInfo
    ) -> tuple[dict[str, str], ...]:
        for item in patterns:
            _check_pattern_item(item)
        if len({item["name"] for item in patterns}) != len(patterns):
            raise ValueError("a pattern name is given twice")
        if not patterns and "rules" in info.data and not info.data["rules"]:
            raise ValueError("no rules and no patterns: the guard would check nothing")
        return patterns


def _command_text(value: JsonValue) -> str | None:
    """The command an argument holds: a string, or a list of strings joined with spaces."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return " ".join(item for item in value if isinstance(item, str))
    return None


@middleware(
    hooks=["tool.before"],
    fail_mode="closed",
    config=ShellGuardSettings,
    sample={"rules": ["rm_recursive_force", "curl_pipe_shell"], "protected_branches": ["main"]},
)
class ShellGuard:
    """Blocks (``shell_command_denied``) a shell tool's call whose command matches a rule."""

    def __init__(self, config: ShellGuardSettings) -> None:
        self.tools = frozenset(config.tools)
        self.arguments = config.arguments
        enabled = frozenset(config.rules)
        self.rules: list[tuple[str, Rule]] = [
            (name, rule) for name, rule in RULES.items() if name in enabled
        ]
        self.patterns = [(p["name"], re.compile(p["pattern"])) for p in config.patterns]
        self.settings = _Settings(protected=frozenset(config.protected_branches))

    def _denied_by(self, text: str) -> str | None:
        scanned = scan(text)
        for name, rule in self.rules:
            if rule(scanned, self.settings):
                return name
        for name, pattern in self.patterns:
            if pattern.search(text) is not None:
                return name
        return None

    async def __call__(self, event: ToolCallEvent, env: Envelope) -> Block | None:
        tool = event.tool.name
        if tool not in self.tools:
            return None
        for argument in self.arguments:
            if argument not in event.call.arguments:
                continue
            text = _command_text(event.call.arguments[argument])
            if text is None:
                reason = (
                    f"tool {tool!r}: argument {argument!r} is not a string or a list of strings"
                )
            elif len(text) > MAX_COMMAND:
                reason = f"tool {tool!r}: command is longer than {MAX_COMMAND} characters"
            else:
                rule = self._denied_by(text)
                if rule is None:
                    continue
                reason = f"tool {tool!r}: command matches rule {rule!r}"
            return Block(reason=reason, code="shell_command_denied")
        return None
