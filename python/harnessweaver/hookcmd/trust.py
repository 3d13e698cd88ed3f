"""Codex CLI's hook trust: the entries Codex needs before it runs a hook, and a check of them.

Codex (0.169) lists every hook of a ``hooks.json`` but runs only those whose trust is recorded
in the user's ``$CODEX_HOME/config.toml``; an untrusted hook is skipped without a word, so a
harness wired in but not trusted lets every call through. Codex's own review (the TUI's
"Hooks need review") writes one table per handler::

    [hooks.state."/abs/path/hooks.json:pre_tool_use:0:0"]
    trusted_hash = "sha256:…"

The key is the declaring file's absolute path, the event in snake_case and the handler's group
and position; the hash is SHA-256 over the handler's identity (event, matcher where the event
takes one, command text, timeout) as compact JSON with sorted keys. Any change to the command
(the spec's absolute path is in it) or to where the file lives needs a new entry.

:func:`entries` computes them, :func:`render` writes them as TOML, :func:`check` reads a Codex
configuration back (for ``harnessweaver hook doctor``).
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

__all__ = [
    "CodexCheck",
    "HookTrust",
    "Status",
    "TrustEntry",
    "check",
    "entries",
    "event_label",
    "render",
    "trusted_hash",
]

Status = Literal["trusted", "untrusted", "modified", "disabled"]

_NO_MATCHER = frozenset({"UserPromptSubmit", "Stop", "Interrupt"})
"""Events whose matcher Codex ignores, and leaves out of the hash."""

_DEFAULT_TIMEOUT = 600
"""Codex's timeout (seconds) for a handler that names none; it is part of the hash."""

_MAX_TIMEOUT = 2**63 - 1

_CLAMPED = {"SessionEnd": 3}
"""Events whose timeout Codex clamps (with a warning) before hashing: a ``SessionEnd`` handler
of 30 s is trusted as one of 3 s (seen in 0.169.1: the 30 s hash leaves it untrusted)."""


@dataclass(frozen=True, slots=True)
class TrustEntry:
    """One handler's trust as Codex stores it: ``[hooks.state."<key>"] trusted_hash = …``."""

    key: str
    event: str
    command: str
    trusted_hash: str


@dataclass(frozen=True, slots=True)
class HookTrust:
    """What Codex's configuration says of one handler that runs the command."""

    entry: TrustEntry
    status: Status


@dataclass(frozen=True, slots=True)
class CodexCheck:
    """The result of :func:`check`: the wired events with no handler running the command, each
    such handler's trust, and what cannot be read."""

    hooks_file: Path
    config_file: Path
    missing: tuple[str, ...]
    hooks: tuple[HookTrust, ...]
    unreadable: tuple[str, ...]

    @property
    def ok(self) -> bool:
        """Every wired event has the command, and Codex would run every such handler."""
        return not (self.missing or self.unreadable) and all(
            hook.status == "trusted" for hook in self.hooks
        )

    def problems(self) -> list[str]:
        """One line per finding, each saying how to fix it."""
        lines = list(self.unreadable)
        if self.missing:
            lines.append(
                f"{self.hooks_file}: no hook runs the command for {', '.join(self.missing)}: "
                "wire it as `harnessweaver hook --agent codex --print-config` prints"
            )
        for hook in self.hooks:
            entry, config = hook.entry, self.config_file
            if hook.status == "disabled":
                lines.append(f"{entry.key} is disabled (enabled = false) in {config}")
            elif hook.status != "trusted":
                why = "is not trusted" if hook.status == "untrusted" else "changed since trusted"
                lines.append(
                    f"{entry.key} {why}, so Codex skips it silently: run `harnessweaver hook "
                    f'--agent codex --install`, or add to {config}: [hooks.state."{entry.key}"] '
                    f'trusted_hash = "{entry.trusted_hash}"'
                )
        return lines


def event_label(event: str) -> str:
    """Codex's snake_case name of a hook event (``PreToolUse`` -> ``pre_tool_use``)."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


def trusted_hash(event: str, matcher: str | None, handler: Mapping[str, Any]) -> str:
    """The hash Codex records when it trusts ``handler`` (a command handler of ``hooks.json``)
    in a group with ``matcher`` at ``event``."""
    identity: dict[str, Any] = {"type": "command", "command": handler["command"]}
    timeout = handler.get("timeout", handler.get("timeoutSec", _DEFAULT_TIMEOUT))
    identity["timeout"] = min(max(int(timeout), 1), _CLAMPED.get(event, _MAX_TIMEOUT))
    identity["async"] = bool(handler.get("async", False))
    if handler.get("statusMessage") is not None:
        identity["statusMessage"] = handler["statusMessage"]
    doc: dict[str, Any] = {"event_name": event_label(event), "hooks": [identity]}
    if matcher is not None and event not in _NO_MATCHER:
        doc["matcher"] = matcher
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def entries(
    hooks: Mapping[str, Any], hooks_file: Path, command: str | None = None
) -> list[TrustEntry]:
    """The trust entries of the command handlers in ``hooks`` (a ``hooks.json`` document, as
    found at ``hooks_file``), only those running ``command`` when it is given.

    ``hooks_file`` must be where Codex reads the document (the key holds its absolute path)."""
    found: list[TrustEntry] = []
    events = hooks.get("hooks")
    if not isinstance(events, Mapping):
        return found
    source = str(hooks_file.absolute())
    for event, groups in events.items():
        if not isinstance(groups, list):
            continue
        for group_index, group in enumerate(groups):
            handlers = group.get("hooks") if isinstance(group, Mapping) else None
            if not isinstance(handlers, list):
                continue
            matcher = group.get("matcher")
            for handler_index, handler in enumerate(handlers):
                if not _is_command(handler) or (command and handler["command"] != command):
                    continue
                key = f"{source}:{event_label(event)}:{group_index}:{handler_index}"
                digest = trusted_hash(event, matcher, handler)
                found.append(TrustEntry(key, event, handler["command"], digest))
    return found


def render(trust: Iterable[TrustEntry]) -> str:
    """``trust`` as the TOML tables to add to ``$CODEX_HOME/config.toml``."""
    tables = (
        f"\n[hooks.state.{json.dumps(e.key)}]\ntrusted_hash = {json.dumps(e.trusted_hash)}\n"
        for e in trust
    )
    return "".join(tables)


def check(hooks_file: Path, config_file: Path, command: str, events: Iterable[str]) -> CodexCheck:
    """Whether Codex, reading ``hooks_file`` and trust from ``config_file`` (the user's
    ``config.toml``), runs ``command`` at each of ``events``.

    A missing or unparsable file is reported in ``unreadable``; nothing is raised."""
    unreadable: list[str] = []
    hooks: dict[str, Any] = {}
    try:
        loaded = json.loads(hooks_file.read_text(encoding="utf-8"))
        hooks = loaded if isinstance(loaded, dict) else {}
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        unreadable.append(f"{hooks_file}: cannot read the hooks ({type(exc).__name__})")
    states = _states(config_file, unreadable)
    trust = entries(hooks, hooks_file, command)
    wired = {entry.event for entry in trust}
    missing = tuple(event for event in events if event not in wired)
    judged = tuple(HookTrust(entry, _status(entry, states.get(entry.key))) for entry in trust)
    return CodexCheck(hooks_file, config_file, missing, judged, tuple(unreadable))


def _is_command(handler: Any) -> bool:
    return (
        isinstance(handler, Mapping)
        and handler.get("type") == "command"
        and isinstance(handler.get("command"), str)
    )


def _states(config_file: Path, unreadable: list[str]) -> Mapping[str, Any]:
    try:
        config = tomllib.loads(config_file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}  # no config: nothing is trusted
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        unreadable.append(f"{config_file}: cannot read Codex's config ({type(exc).__name__})")
        return {}
    hooks = config.get("hooks")
    states = hooks.get("state") if isinstance(hooks, dict) else None
    return states if isinstance(states, dict) else {}


def _status(entry: TrustEntry, state: Any) -> Status:
    if not isinstance(state, dict):
        return "untrusted"
    if state.get("enabled") is False:
        return "disabled"
    recorded = state.get("trusted_hash")
    if recorded is None:
        return "untrusted"
    return "trusted" if recorded == entry.trusted_hash else "modified"
