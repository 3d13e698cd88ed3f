"""Checking items before anything is built: what ``use`` names, the layer rules (decided by
the core through ``declare_in``), the settings, and ids unique across the harness."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from .._select import core
from ..errors import HarnessweaverError
from ..middleware import MiddlewareSpec, spec_of
from .errors import Problems
from .files import FOLDER, LoadProblem
from .hooks import item_hooks_of, refused_hook
from .model import Item
from .resolve import Plugins
from .settings import SettingsProblem, validate_settings
from .yaml import shown

if TYPE_CHECKING:
    from .._pycore.declaration import Declaration

__all__ = ["Checked", "build", "check_ids", "check_item"]

_KEY_OF_KIND = {
    "invalid_name": "id",
    "invalid_hooks": "hooks",
    "unknown_hook": "hooks",
    "hooks_widened": "hooks",
    "invalid_band": "band",
    "band_outward": "band",
    "baseline_outside_profile": "band",
    "invalid_fail_mode": "fail_mode",
    "invalid_duration": "timeout",
    "baseline_fail_open": "fail_mode",
    "invalid_match": "match",
    "unknown_match_key": "match",
    "match_key_not_carried": "match",
    "match_widened": "match",
    "invalid_mode": "mode",
    "baseline_audit_not_org": "mode",
}
"""The item key a core error is about, for the line it is reported at."""


@dataclass(frozen=True, slots=True)
class Checked:
    """An item that passed every check: its middleware, declaration as registered, config."""

    item: Item
    spec: MiddlewareSpec
    target: Any
    declaration: Declaration
    config: BaseModel | None


_NEEDS: dict[str, tuple[str, ...]] = {
    "match_key_not_carried": ("hooks",),
    "match_widened": ("hooks",),
    "baseline_fail_open": ("band", "fail_mode"),
    "baseline_audit_not_org": ("band", "mode"),
}
"""The keys a core error's judgement rests on besides its own: once one of them was refused
(and set aside), such an error is about a value the user did not write, so it is not said."""


def _declare(item: Item, spec: MiddlewareSpec, problems: Problems) -> Declaration | None:
    """The item's declaration, or ``None`` with every key the core refuses reported.

    The core stops at the first key it refuses; to report the others too, that key is set
    aside (as if not written) and the item declared again, until the core accepts the rest.
    An error that follows only from a key set aside is not reported (:data:`_NEEDS`)."""
    layer = item.source.layer
    keys: dict[str, Any] = {"name": item.id, **item.keys}
    refused: set[str] = set()
    while True:
        try:
            declaration = core.declare_in(spec.declaration, layer, **keys)
        except HarnessweaverError as exc:
            key = _KEY_OF_KIND.get(exc.kind)
            if not refused.intersection(_NEEDS.get(exc.kind, ())):
                problems.core(item.source.file, item.where, item.line(key), exc)
            written = "name" if key == "id" else key
            if key is None or written not in keys:  # nothing left to set aside: stop here
                return None
            del keys[written]
            refused.add(key)
            continue
        return None if refused else declaration


def _settings(
    item: Item, spec: MiddlewareSpec, target: Any, problems: Problems, folder: Path | None
) -> tuple[bool, Any]:
    context = None if folder is None else {FOLDER: folder}
    try:
        if spec.is_class and not isinstance(target, type) and item.settings:
            keys = ", ".join(item.settings)
            raise SettingsProblem(
                f"{item.use} is built already and takes no settings: {keys}", None
            )
        return True, validate_settings(spec, item.settings, context)
    except SettingsProblem as exc:
        line = item.line(exc.key)
        problems.add(item.source.file, item.where, line, "invalid_settings", exc.message)
        return False, None
    except LoadProblem as exc:  # a file the settings name (I38): its file and line lead
        _load_problem(item, exc.kind, exc.key, exc.message, problems, exc.file, exc.line)
        return False, None


def _load_problem(
    item: Item,
    kind: str,
    key: str | None,
    message: str,
    problems: Problems,
    file: str | None = None,
    line: int = 1,
) -> None:
    """A problem of ``key``'s line whose message starts ``<file>:<line>: ``: the file a
    setting names, or (``file`` None) the declaring file at that key's line."""
    at = item.line(key)
    where = f"{file}:{line}" if file is not None else f"{item.source.file}:{at or 1}"
    problems.add(item.source.file, item.where, at, kind, f"{where}: {message}")


def _item_hooks(item: Item, spec: MiddlewareSpec, target: Any, problems: Problems) -> Item | None:
    """The item with its middleware's default ``hooks:`` when it names none (``ItemHooks``);
    ``None`` (and a problem) when it names one the middleware does not declare."""
    chosen = item_hooks_of(target)
    if chosen is None:
        return item
    refused = refused_hook(item.keys, spec.declaration.hooks)
    if refused is not None:
        declared = ", ".join(spec.declaration.hooks)
        message = f"{item.use} runs on {declared}, not {shown(refused)}"
        _load_problem(item, chosen.kind, "hooks", message, problems)
        return None
    if item.keys.get("hooks") is None:
        return replace(item, keys={**item.keys, "hooks": list(chosen.default)})
    return item


def check_item(
    item: Item, plugins: Plugins, problems: Problems, folder: Path | None = None
) -> Checked | None:
    """Every check of one item; ``None`` when one failed (its problems are added).
    ``folder`` is the folder of the file declaring it: the settings' paths are relative to it."""
    target, why = plugins.find(item.use)
    spec = spec_of(target)
    if spec is None:
        problems.add(item.source.file, item.where, item.line("use"), "unknown_use", why)
        return None
    chosen = _item_hooks(item, spec, target, problems)
    declaration = None if chosen is None else _declare(chosen, spec, problems)
    item = chosen or item
    ok, config = _settings(item, spec, target, problems, folder)
    if declaration is None or not ok:
        return None
    return Checked(item, spec, target, declaration, config)


def check_ids(
    base: Sequence[Item],
    envs: Mapping[str, Sequence[Item]],
    tasks: Mapping[str, Sequence[Item]],
    problems: Problems,
) -> None:
    """Ids are unique in every harness the spec can load: the profiles and the app's items
    with any one env overlay and any one task (disabled items included).

    Each combination is checked in the order items register (base, env, task), but the ids
    of the base and of each env are collected once, not again for every task: the work grows
    with the number of items times the number of envs, not with envs times tasks times items.
    """
    first_of_base = _first_ids(base, {}, problems)
    for env in [(), *envs.values()]:
        first_of_env = _first_ids(env, first_of_base, problems)
        for task in [(), *tasks.values()]:
            _first_ids(task, first_of_base, problems, first_of_env)


def _first_ids(
    items: Sequence[Item],
    earlier: Mapping[str, Item],
    problems: Problems,
    between: Mapping[str, Item] | None = None,
) -> dict[str, Item]:
    """The first item of each id among ``items`` that ``earlier`` (or ``between``) does not
    have; an item whose id one of them has already is a ``duplicate_id`` problem."""
    seen: dict[str, Item] = {}
    for item in items:
        if not isinstance(item.id, str):
            continue
        first = earlier.get(item.id) or (between or {}).get(item.id)
        first = first or seen.setdefault(item.id, item)
        if first is not item:
            problems.add(
                item.source.file,
                item.where,
                item.line("id"),
                "duplicate_id",
                f"the id {shown(item.id)} is already used by {first.where} at "
                f"{first.source}; give one of them its own `id:`",
            )
    return seen


def build(checked: Checked, problems: Problems) -> Any:
    """What is registered: the function or instance, or the class built from its config."""
    if not isinstance(checked.target, type):
        return checked.target
    try:
        if checked.config is None:
            return checked.target()
        return checked.target(checked.config)
    except Exception as exc:
        item = checked.item
        message = f"building {item.use} failed: {type(exc).__name__}: {exc}"
        problems.add(item.source.file, item.where, item.line(), "invalid_settings", message)
        return None
