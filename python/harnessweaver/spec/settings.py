"""Settings: every key of an item that is not reserved, validated by the middleware's config.

A class with a pydantic ``config`` gets its settings validated by it; a key the config does not
have is an error even when the model would ignore it (unless it says ``extra="allow"``). A
function, or a class without a config, takes no settings.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from ..middleware import MiddlewareSpec
from .close import closest
from .model import RESERVED

__all__ = ["SettingsProblem", "validate_settings"]


class SettingsProblem(Exception):
    """Settings that do not fit: ``message`` says why, ``key`` is the first key at fault."""

    def __init__(self, message: str, key: str | None) -> None:
        super().__init__(message)
        self.message = message
        self.key = key


def _unknown_keys(config: type[BaseModel], settings: Mapping[str, Any]) -> list[tuple[str, str]]:
    if config.model_config.get("extra") == "allow":
        return []
    names = [
        alias
        for name, info in config.model_fields.items()
        for alias in (name, info.alias)
        if isinstance(alias, str)
    ]
    found = []
    for key in settings:
        if key not in names:
            # A reserved key misspelt (`fail-mode:`) lands here as a setting: name it too.
            close = closest(key, names, RESERVED)
            hint = f"did you mean {close}?" if close else f"the settings are {', '.join(names)}"
            found.append((key, f"{key}: unknown setting ({hint})"))
    return found


def _keys(settings: Mapping[str, Any]) -> str:
    """The keys of settings a middleware does not take, each misspelt reserved key with the
    key it likely meant (``fail-mode`` is ``fail_mode``, not a setting)."""
    shown = []
    for key in settings:
        close = closest(key, RESERVED)
        shown.append(f"{key} (did you mean {close}?)" if close else key)
    return ", ".join(shown)


def _pydantic(
    config: type[BaseModel], settings: Mapping[str, Any], context: Mapping[str, Any] | None
) -> tuple[Any, list[Any]]:
    # Strict, as JSON: a spec's settings are data, checked as their JSON Schema says (the
    # TypeScript loader checks the same schema), so `limit: "5"` is no integer in either language.
    try:
        text = json.dumps(dict(settings), allow_nan=True)
    except (TypeError, ValueError) as exc:  # a YAML value JSON has no form for (a date, bytes)
        return None, [(None, f"settings are JSON data (numbers, text, lists, mappings): {exc}")]
    try:
        return config.model_validate_json(text, strict=True, context=context), []
    except ValidationError as exc:
        faults = [
            (str(error["loc"][0]) if error["loc"] else None, _shown(error))
            for error in exc.errors()
            if error["type"] != "extra_forbidden"
        ]
        return None, faults


_VALUE_ERROR = "Value error, "
"""What pydantic puts before the message of a validator's ``ValueError``: the message itself
says what is wrong, so the prefix is dropped (the TypeScript loader drops it too)."""


def _shown(error: Any) -> str:
    where = ".".join(map(str, error["loc"])) or "(settings)"
    return f"{where}: {error['msg'].removeprefix(_VALUE_ERROR)}"


def validate_settings(
    spec: MiddlewareSpec, settings: Mapping[str, Any], context: Mapping[str, Any] | None = None
) -> BaseModel | None:
    """The validated config of a class with a ``config`` (else ``None``);
    :class:`SettingsProblem` when the settings do not fit. ``context`` is pydantic's
    validation context (the loader's holds the declaring file's folder, ``files.FOLDER``); a
    config that loads files raises :class:`~.files.LoadProblem` through it."""
    if spec.config is None:
        if settings:
            what = "a function" if not spec.is_class else "a class without a config"
            keys = _keys(settings)
            raise SettingsProblem(f"{spec.name} is {what} and takes no settings: {keys}", None)
        return None
    faults = _unknown_keys(spec.config, settings)
    validated, more = _pydantic(spec.config, settings, context)
    faults.extend(more)
    if faults:
        message = "invalid settings: " + "; ".join(text for _, text in faults)
        raise SettingsProblem(message, next((key for key, _ in faults if key), None))
    return validated  # type: ignore[no-any-return]
