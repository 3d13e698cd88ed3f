"""YAML that remembers where things are: every mapping and list knows its line.

Mappings load as :class:`YamlMap` (with the line of each key) and lists as :class:`YamlList`, so
a problem found later can name the line of the item, or of the very key, it is about. A key
written twice in one mapping is an error here (PyYAML would keep the last one silently).

The document is read within the limits of :mod:`.limits`, by PyYAML's own (pure-Python)
parser: libyaml's events would compose three to four times faster, but libyaml accepts
documents PyYAML refuses (a tab inside a plain scalar, among others), and what a spec means
must not depend on how PyYAML was installed.
"""

from __future__ import annotations

import re
import reprlib
from collections.abc import Collection, Hashable, Iterator
from typing import Any

import yaml
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, ScalarNode, SequenceNode
from yaml.reader import ReaderError

from .limits import Bounded, Limit

__all__ = ["YamlList", "YamlMap", "YamlProblem", "line_of", "parse_yaml", "plain", "shown"]

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
    """Text that is not YAML, or past a limit: ``message`` says why, ``line`` where (when the
    parser knows), ``kind`` which problem (``unreadable_yaml`` or a limit's kind).

    ``shown`` is the message as it may be shown about a file that is not known to be a spec:
    names the parser quotes from the text (a tag, an alias, a key) are left out. ``trusted``
    says the document's top level is a mapping with at least one of the keys it was parsed
    for (a spec with a mistake, not some other file), whose names may be shown.
    """

    def __init__(
        self, message: str, line: int | None, kind: str = "unreadable_yaml", trusted: bool = False
    ) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.kind = kind
        self.trusted = trusted

    @property
    def shown(self) -> str:
        return self.message if self.trusted else _QUOTED.sub(_withheld, self.message)


_QUOTED = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
_KEPT = re.compile(r"'<[a-z ]+>'|'\\?.'|'\\x[0-9a-f]{2}'|'\\u[0-9a-f]{4}'")


def _withheld(quoted: re.Match[str]) -> str:
    """A quoted fragment of a parser's message: kept when it is a token name or one character
    (``'<stream end>'``, ``','``), else withheld."""
    text = quoted.group()
    return text if _KEPT.fullmatch(text) else "'…'"


class _Loader(Bounded, yaml.SafeLoader):
    """PyYAML's own reader, scanner and parser under the bounded composer."""

    def __init__(self, text: str, keys: Collection[str]) -> None:
        yaml.SafeLoader.__init__(self, text)
        self.start(keys)


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


def parse_yaml(text: str, keys: Collection[str] = ()) -> Any:
    """The value of a YAML document; :class:`YamlProblem` when it is not YAML or is past a
    limit. ``keys`` are the top-level keys of what the document should be (a spec's): a
    problem found once the top level is known to be a mapping with one of them is ``trusted``.
    """
    loader = None
    try:
        loader = _Loader(text, keys)  # a SafeLoader; it checks the characters first
        return loader.get_single_data()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        reason = exc.problem or exc.context or "not YAML"
        if exc.context and exc.problem:
            since = exc.context_mark
            at = f" on line {since.line + 1}" if since is not None and since != mark else ""
            reason = f"{exc.problem} ({exc.context}{at})"
        line = None if mark is None else mark.line + 1
        kind = exc.kind if isinstance(exc, Limit) else "unreadable_yaml"
        raise YamlProblem(reason, line, kind, loader is not None and loader.trusted) from None
    except ReaderError as exc:  # a character YAML does not allow: say which, and where
        line = text.count("\n", 0, exc.position) + 1
        reason = f"unacceptable character #x{exc.character:04x}: {exc.reason}"
        raise YamlProblem(reason, line) from None
    except yaml.YAMLError as exc:
        raise YamlProblem(type(exc).__name__, None) from None
    finally:
        if loader is not None:
            loader.dispose()


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


class _Shown(reprlib.Repr):
    """``repr`` cut short: a value of a spec in a message is shown, never all of it."""

    def __init__(self) -> None:
        super().__init__()
        self.maxstring = self.maxother = 60
        self.maxlist = self.maxtuple = self.maxset = self.maxfrozenset = self.maxdict = 4
        self.maxlevel = 3

    # reprlib finds these by the type's name
    def repr_YamlMap(self, value: YamlMap, level: int) -> str:
        return self.repr_dict(value, level)

    def repr_YamlList(self, value: YamlList, level: int) -> str:
        return self.repr_list(value, level)


shown = _Shown().repr
"""A value as a message shows it: its ``repr``, cut short when it is long or deep."""
