"""The spec's ``approvals:`` key, checked: how long a record waits, whom to notify.

``approvals: {expires_after: 3600, notify: {url: https://..., secret: ${APPROVALS_SECRET}}}``.
``url`` and ``secret`` may hold ``${NAME}`` references to environment variables (as
``state:`` does), so a secret lives in the environment, never in the spec. A problem names the
key and the variable, never a value: a URL may hold a token and the secret is a secret.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from ..state.config import expand_references

if TYPE_CHECKING:
    from pathlib import Path

    from ..state.sqlite import SqliteStore

__all__ = [
    "APPROVALS_KEYS",
    "DEFAULT_EXPIRES_AFTER",
    "NOTIFY_KEYS",
    "ApprovalsConfig",
    "ApprovalsConfigError",
    "parse_approvals",
    "sqlite_store",
    "web_url",
]

APPROVALS_KEYS = ("expires_after", "notify")
NOTIFY_KEYS = ("url", "secret")
DEFAULT_EXPIRES_AFTER = 86400.0


def web_url(url: str) -> bool:
    """Whether ``url`` is an http(s) URL with a host."""
    try:
        parts = urlsplit(url)
        return parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:  # a malformed address (an unclosed [ipv6] ...)
        return False


@dataclass(frozen=True, slots=True, repr=False)
class ApprovalsConfig:
    """A checked ``approvals:``; ``url`` and ``secret`` expanded (None: no notifier).
    ``repr`` never shows the URL nor the secret."""

    expires_after: float = DEFAULT_EXPIRES_AFTER
    url: str | None = None
    secret: str | None = None
    declared: bool = False
    """The spec has an ``approvals:`` key: its run loop files records (docs/approvals.md)."""

    def __repr__(self) -> str:
        notify = "yes" if self.url is not None else "no"
        return f"ApprovalsConfig(expires_after={self.expires_after!r}, notify={notify})"


class ApprovalsConfigError(ValueError):
    """An ``approvals:`` that cannot be used: ``problems`` are ``(key, message)`` pairs, the
    key dotted under ``approvals`` (``notify.secret``), never a value."""

    problems: tuple[tuple[str, str], ...]

    def __init__(self, problems: tuple[tuple[str, str], ...]) -> None:
        self.problems = problems
        super().__init__(
            "; ".join(f"approvals{'.' if key else ''}{key}: {message}" for key, message in problems)
        )


def _key_name(key: object) -> str:
    return key if isinstance(key, str) and len(key) <= 40 else type(key).__name__


def _expand(
    key: str, value: object, environ: Mapping[str, str], problems: list[tuple[str, str]]
) -> str | None:
    if value is None:  # a key given as null is no text either (state: reads None as absent)
        problems.append((key, f"{key} is text, got NoneType"))
        return None
    return expand_references(key, value, environ, problems)


def parse_approvals(raw: object, *, environ: Mapping[str, str] | None = None) -> ApprovalsConfig:
    """The checked form of an ``approvals:`` mapping (``None``: the defaults). Raises
    :class:`ApprovalsConfigError` listing every problem."""
    if raw is None:
        return ApprovalsConfig()
    if not isinstance(raw, Mapping):
        raise ApprovalsConfigError(
            (("", "approvals is a mapping such as {expires_after: 3600}, "
                  f"got {type(raw).__name__}"),)
        )  # fmt: skip
    environ = os.environ if environ is None else environ
    problems: list[tuple[str, str]] = []
    for key in raw:
        if key not in APPROVALS_KEYS:
            problems.append(
                (_key_name(key), f"unknown key: the keys are {', '.join(APPROVALS_KEYS)}")
            )
    expires_after = DEFAULT_EXPIRES_AFTER
    given = raw.get("expires_after")
    if given is not None:
        if (
            isinstance(given, bool)
            or not isinstance(given, int | float)
            or not math.isfinite(given)
            or given <= 0
        ):
            problems.append(("expires_after", "expires_after is a number of seconds > 0"))
        else:
            expires_after = float(given)
    url = secret = None
    notify = raw.get("notify")
    if notify is not None and not isinstance(notify, Mapping):
        problems.append(
            ("notify", f"notify is a mapping {{url, secret}}, got {type(notify).__name__}")
        )
    elif notify is not None:
        for key in notify:
            if key not in NOTIFY_KEYS:
                message = f"unknown key: the keys are {', '.join(NOTIFY_KEYS)}"
                problems.append((f"notify.{_key_name(key)}", message))
        for key in NOTIFY_KEYS:
            if notify.get(key) is None:
                problems.append((f"notify.{key}", f"notify needs {key}"))
        if notify.get("url") is not None:
            url = _expand("notify.url", notify["url"], environ, problems)
            if url is not None and not web_url(url):
                problems.append(("notify.url", "notify.url is an http:// or https:// URL"))
                url = None
        if notify.get("secret") is not None:
            secret = _expand("notify.secret", notify["secret"], environ, problems)
    if problems:
        raise ApprovalsConfigError(tuple(problems))
    return ApprovalsConfig(expires_after, url, secret, declared=True)


def sqlite_store(state_file: Path | None) -> SqliteStore:
    """The store approvals live in when the spec names no shared one (none, or ``memory``,
    which no other process could share): the SQLite file ``state_file``, else the hook
    command's state file (its folder made, private to the user), where ``harnessweaver
    approvals`` looks by default."""
    from ..hookcmd.store import default_path
    from ..state.sqlite import SqliteStore

    if state_file is not None:
        return SqliteStore(state_file)
    path = default_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    return SqliteStore(path)
