"""Wiring the command into Codex CLI so that Codex runs it: the hooks and their trust.

``--print-config --agent codex`` prints the hooks (stdout) and the trust entries Codex needs
for them at ``$CODEX_HOME/hooks.json`` (stderr, as TOML for ``$CODEX_HOME/config.toml``);
``--install --agent codex`` writes both files, keeping everything already in them: the hooks
are added to what ``hooks.json`` holds, the trust tables are appended to ``config.toml`` (or an
older hash of the same handler replaced), and the result is read back before it is written.
Trust is written first: a trusted entry with no hook does nothing, a hook with no trust is
skipped silently by Codex.
"""

from __future__ import annotations

import copy
import json
import os
import tempfile
import tomllib
from pathlib import Path
from typing import Any

from .trust import TrustEntry, entries, render

__all__ = ["CodexSetupError", "add_trust", "codex_home", "install", "merge_hooks", "trust_note"]


class CodexSetupError(Exception):
    """A Codex configuration this module will not rewrite (the message says what to do)."""


def codex_home(home: Path | None = None) -> Path:
    """``$CODEX_HOME``, else ``~/.codex`` (``home``: the user's home, default ``Path.home()``):
    where Codex reads its user config and hooks."""
    given = os.environ.get("CODEX_HOME")
    return Path(given) if given else (home or Path.home()) / ".codex"


def trust_note(snippet: dict[str, Any], command: str, home: Path) -> str:
    """What ``--print-config`` says beside the hooks: the trust tables for them once saved as
    ``home/hooks.json``."""
    hooks_file = home.absolute() / "hooks.json"
    return (
        f"# Codex runs these hooks only once trusted (untrusted, it skips them silently).\n"
        f"# Saved as {hooks_file} with no other hooks, add to {home.absolute() / 'config.toml'}"
        f" (or run with --install to write both files):"
        + render(entries(snippet, hooks_file, command))
    )


def merge_hooks(existing: dict[str, Any], snippet: dict[str, Any]) -> dict[str, Any]:
    """``existing`` (a ``hooks.json`` document) with the snippet's groups added to each event,
    unless a group there already runs the same handler."""
    merged = copy.deepcopy(existing)
    events = merged.setdefault("hooks", {})
    if not isinstance(events, dict):
        raise CodexSetupError("hooks.json: 'hooks' is not an object; fix or move the file")
    for event, groups in snippet["hooks"].items():
        present = events.setdefault(event, [])
        if not isinstance(present, list):
            raise CodexSetupError(f"hooks.json: hooks.{event} is not a list; fix the file")
        for group in groups:
            if group not in present:
                present.append(copy.deepcopy(group))
    return merged


def add_trust(config_text: str, trust: list[TrustEntry]) -> str:
    """``config_text`` (Codex's ``config.toml``) with ``trust`` recorded, everything else kept;
    :class:`CodexSetupError` when that cannot be done by appending tables or replacing an
    older hash."""
    try:
        states = _states(tomllib.loads(config_text))
    except tomllib.TOMLDecodeError:
        raise CodexSetupError("config.toml is not valid TOML; fix it first") from None
    text, appended = config_text, []
    for entry in trust:
        state = states.get(entry.key)
        if state is None:
            appended.append(entry)
        elif state.get("enabled") is False:
            raise CodexSetupError(f"config.toml disables {entry.key} (enabled = false)")
        elif state.get("trusted_hash") != entry.trusted_hash:
            old = state.get("trusted_hash")
            if not isinstance(old, str) or text.count(json.dumps(old)) != 1:
                raise CodexSetupError(f"config.toml: cannot update the trust of {entry.key}")
            text = text.replace(json.dumps(old), json.dumps(entry.trusted_hash))
    if appended:
        text = text + ("" if not text or text.endswith("\n") else "\n") + render(appended)
    try:
        written = _states(tomllib.loads(text))
    except tomllib.TOMLDecodeError:
        raise CodexSetupError("config.toml: the trust tables cannot be added to it") from None
    if any((written.get(e.key) or {}).get("trusted_hash") != e.trusted_hash for e in trust):
        raise CodexSetupError("config.toml: the trust tables cannot be added to it")
    return text


def install(snippet: dict[str, Any], command: str, home: Path) -> list[TrustEntry]:
    """Write the snippet into ``home/hooks.json`` and its trust into ``home/config.toml``,
    keeping both files' content; the entries written."""
    hooks_file, config_file = home / "hooks.json", home / "config.toml"
    existing: dict[str, Any] = {}
    if hooks_file.exists():
        try:
            loaded = json.loads(hooks_file.read_text(encoding="utf-8"))
        except (ValueError, RecursionError):  # nested past the parser's limit: not JSON to us
            raise CodexSetupError(f"{hooks_file} is not valid JSON; fix it first") from None
        if not isinstance(loaded, dict):
            raise CodexSetupError(f"{hooks_file} does not hold a JSON object; fix it first")
        existing = loaded
    merged = merge_hooks(existing, snippet)
    trust = entries(merged, hooks_file, command)
    config_text = config_file.read_text(encoding="utf-8") if config_file.exists() else ""
    home.mkdir(parents=True, exist_ok=True)
    _replace(config_file, add_trust(config_text, trust))
    _replace(hooks_file, json.dumps(merged, indent=2) + "\n")
    return trust


def _states(config: dict[str, Any]) -> dict[str, dict[str, Any]]:
    hooks = config.get("hooks")
    states = hooks.get("state") if isinstance(hooks, dict) else None
    if not isinstance(states, dict):
        return {}
    return {key: value for key, value in states.items() if isinstance(value, dict)}


def _replace(path: Path, text: str) -> None:
    """Write ``path`` whole or not at all (a temporary file renamed over it)."""
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        if path.exists():
            os.chmod(temporary, path.stat().st_mode & 0o777)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
