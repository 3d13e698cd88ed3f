"""Which store a harness uses: the spec's ``state:`` key, read into :class:`StateConfig`, and
:func:`open_store`.

``state: {backend: redis, url: "${REDIS_URL}", timeout: 250ms}``. ``url`` and ``path`` may
hold ``${NAME}`` references to environment variables, so a credential lives in the
environment, never in the spec. Whatever goes wrong names the key and the variable, never a
value: a URL may carry a password, and a problem's text reaches logs and terminals.
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from .._select import core
from ..errors import HarnessweaverError
from .store import BACKENDS, Store
from .view import DEFAULT_TIMEOUT

__all__ = [
    "CONFIG_KEYS",
    "StateConfig",
    "StateConfigError",
    "expand_references",
    "open_store",
    "parse_config",
]

CONFIG_KEYS = ("backend", "url", "path", "timeout")
"""The keys of ``state:``."""
_REFERENCE = re.compile(r"\$\{([^}]*)\}")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_NEEDS = {"memory": None, "sqlite": "path", "redis": "url", "postgres": "url"}
"""The location key each backend needs (memory none)."""
_MODULES = {"redis": (".redis", "RedisStore"), "postgres": (".postgres", "PostgresStore")}


@dataclass(frozen=True, slots=True, repr=False)
class StateConfig:
    """A checked ``state:``: the backend, where it is (references expanded), the timeout of
    each call in seconds. ``repr`` shows the backend and timeout only."""

    backend: str = "memory"
    url: str | None = None
    path: str | None = None
    timeout: float = DEFAULT_TIMEOUT

    def __repr__(self) -> str:
        return f"StateConfig(backend={self.backend!r}, timeout={self.timeout!r})"


class StateConfigError(ValueError):
    """A ``state:`` that cannot be used. ``problems`` are ``(key, message)`` pairs, each
    naming the key (and a variable), never a value."""

    problems: tuple[tuple[str, str], ...]

    def __init__(self, problems: tuple[tuple[str, str], ...]) -> None:
        self.problems = problems
        super().__init__("; ".join(f"state.{key}: {message}" for key, message in problems))


def expand_references(
    key: str, value: object, environ: Mapping[str, str], problems: list[tuple[str, str]]
) -> str | None:
    """``value`` with each ``${NAME}`` replaced by the variable's value (``None``: none); a
    problem names ``key`` and the variable, never a value (``approvals:`` uses it too)."""
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        problems.append((key, f"{key} is text, got {type(value).__name__}"))
        return None
    missing: list[str] = []

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if not _NAME.match(name):
            missing.append(f"a reference ${{...}} must name a variable ({key})")
            return ""
        if name not in environ:
            missing.append(f"the environment variable {name} referenced by {key} is not set")
            return ""
        return environ[name]

    expanded = _REFERENCE.sub(replace, value)
    problems.extend((key, message) for message in missing)
    if missing:
        return None
    if not expanded.strip():
        problems.append((key, f"{key} is empty once its references are expanded"))
        return None
    return expanded


def parse_config(
    raw: object,
    *,
    base: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> StateConfig:
    """The checked form of a ``state:`` mapping (``None``: the default, memory).

    A relative ``path`` is taken from ``base`` (the spec's folder); ``environ`` defaults to
    :data:`os.environ`. Raises :class:`StateConfigError` listing every problem."""
    if raw is None:
        return StateConfig()
    if not isinstance(raw, Mapping):
        raise StateConfigError(
            (("", f"state is a mapping such as {{backend: sqlite, path: state.db}}, "
                  f"got {type(raw).__name__}"),)
        )  # fmt: skip
    environ = os.environ if environ is None else environ
    problems: list[tuple[str, str]] = []
    for key in raw:
        if key not in CONFIG_KEYS:
            name = key if isinstance(key, str) and len(key) <= 40 else type(key).__name__
            problems.append((str(name), f"unknown key: the keys are {', '.join(CONFIG_KEYS)}"))
    backend = raw.get("backend")
    backend = "memory" if backend is None else backend  # `backend: null` is no backend given
    if backend not in BACKENDS:
        backend = None
        problems.append(("backend", f"unknown backend: the backends are {', '.join(BACKENDS)}"))
    url = expand_references("url", raw.get("url"), environ, problems)
    path = expand_references("path", raw.get("path"), environ, problems)
    timeout = DEFAULT_TIMEOUT
    if raw.get("timeout") is not None:
        try:
            timeout = core.parse_duration(raw["timeout"])
        except (HarnessweaverError, TypeError, ValueError):
            problems.append(("timeout", "timeout is a duration such as 250ms or 1s"))
    if backend is not None:
        needs = _NEEDS[backend]
        for key in ("url", "path"):
            given = raw.get(key) is not None
            if given and key != needs:
                problems.append((key, f"backend {backend} takes no {key}"))
            elif not given and key == needs:
                problems.append((key, f"backend {backend} needs {key}"))
    if problems:
        raise StateConfigError(tuple(problems))
    if path is not None and base is not None and not Path(path).is_absolute():
        path = str(Path(base) / path)
    return StateConfig(cast(str, backend), url, path, timeout)


def open_store(config: StateConfig | None = None) -> Store:
    """A new store for ``config`` (memory when None). Opening connects to nothing: the first
    call does (a store down at load time is a failure of that call, not of loading).
    Redis and PostgreSQL need the ``state`` extra (ImportError names it)."""
    config = StateConfig() if config is None else config
    if config.backend == "memory":
        from .memory import MemoryStore

        return MemoryStore()
    if config.backend == "sqlite":
        from .sqlite import SqliteStore

        assert config.path is not None
        return SqliteStore(config.path)
    module_name, class_name = _MODULES[config.backend]
    try:
        module = importlib.import_module(module_name, __package__)
    except ImportError as exc:
        raise ImportError(
            f"the {config.backend} state backend needs the `state` extra: "
            "pip install '.[state]' from a clone"
        ) from exc
    store_class: Any = getattr(module, class_name)
    return cast(Store, store_class(config.url))
