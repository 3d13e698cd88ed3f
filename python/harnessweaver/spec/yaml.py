"""YAML that remembers where things are: every mapping and list knows its line.

Mappings load as :class:`YamlMap` (with the line of each key) and lists as :class:`YamlList`, so
a problem found later can name the line of the item, or of the very key, it is about. A key
written twice in one mapping is an error here (PyYAML would keep the last one silently).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator
from typing import Any

import yaml
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

__all__ = ["YamlList", "YamlMap", "YamlProblem", "line_of", "parse_yaml", "plain"]

_MERGE = "tag:yaml.org,2002:merge"


class YamlMap(dict[Any, Any]):
    """A mapping read from YAML: ``line`` is where it starts, ``key_lines`` where each key is."""

    __slots__ = ("key_lines", "line")

    line: int
    key_lines: dict[Any, int]


class YamlList(list[Any]):
    """A list read from YAML: ``line`` is where it starts, ``item_lines`` where each item is."""

    __slots__ = ("item_lines", "line")

    line: int
    item_lines: list[int]


class YamlProblem(Exception):
    """Text that is not YAML: ``message`` says why and ``line`` where (when the parser knows)."""

    def __init__(self, message: str, line: int | None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader, building :class:`YamlMap` and :class:`YamlList`."""


def _check_unique(node: MappingNode) -> None:
    seen: set[str] = set()
    for key, _ in node.value:
        if isinstance(key, ScalarNode) and key.tag != _MERGE:
            if key.value in seen:
                raise ConstructorError(
                    None, None, f"the key {key.value!r} is written twice", key.start_mark
                )
            seen.add(key.value)


def _map(loader: _Loader, node: MappingNode) -> Iterator[YamlMap]:
    data = YamlMap()
    data.line = node.start_mark.line + 1
    data.key_lines = {}
    yield data
    _check_unique(node)
    loader.flatten_mapping(node)
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=False)
        if not isinstance(key, Hashable):
            raise ConstructorError(None, None, "a key must be a plain value", key_node.start_mark)
        data[key] = loader.construct_object(value_node, deep=False)
        data.key_lines.setdefault(key, key_node.start_mark.line + 1)


def _list(loader: _Loader, node: SequenceNode) -> Iterator[YamlList]:
    data = YamlList()
    data.line = node.start_mark.line + 1
    data.item_lines = [child.start_mark.line + 1 for child in node.value]
    yield data
    data.extend(loader.construct_sequence(node))


_Loader.add_constructor("tag:yaml.org,2002:map", _map)
_Loader.add_constructor("tag:yaml.org,2002:seq", _list)


def parse_yaml(text: str) -> Any:
    """The value of a YAML document; :class:`YamlProblem` when it is not YAML."""
    try:
        return yaml.load(text, Loader=_Loader)  # a SafeLoader
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        reason = exc.problem or exc.context or "not YAML"
        if exc.context and exc.problem:
            since = exc.context_mark
            at = f" on line {since.line + 1}" if since is not None and since != mark else ""
            reason = f"{exc.problem} ({exc.context}{at})"
        raise YamlProblem(reason, None if mark is None else mark.line + 1) from None
    except yaml.YAMLError as exc:
        raise YamlProblem(str(exc), None) from None


def line_of(value: object, key: object = None) -> int | None:
    """The line of ``key`` in a :class:`YamlMap`, or of item ``key`` of a :class:`YamlList`,
    else of the value itself, when known."""
    if key is not None and isinstance(value, YamlMap) and key in value.key_lines:
        return value.key_lines[key]
    if isinstance(key, int) and isinstance(value, YamlList) and 0 <= key < len(value.item_lines):
        return value.item_lines[key]
    line = getattr(value, "line", None)
    return line if isinstance(line, int) else None


def plain(value: Any) -> Any:
    """``value`` with every :class:`YamlMap` and :class:`YamlList` made a plain dict or list."""
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain(item) for item in value]
    return value
