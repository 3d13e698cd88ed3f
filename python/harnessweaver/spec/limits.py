"""The limits a spec file is read within (docs/harness-spec.md, "Limits"), checked while the
YAML is composed, before anything is constructed from it or walked.

A spec may be hostile. PyYAML composes an alias as a reference to its anchor's node, so an
alias bomb (a few hundred bytes of aliases of aliases standing for 10^9 values) composes in
microseconds; the blow-up comes from whatever walks the result. So each node's size, its
aliases counted as what they stand for, is computed here once, as it is composed, and the
aliases' total is bounded. A self-referencing alias (``&x [*x]``) is infinite and refused;
nesting is bounded before the composer's recursion reaches the stack's end.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from typing import Any, cast

import yaml
from yaml.composer import Composer
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.events import AliasEvent, CollectionStartEvent
from yaml.nodes import MappingNode, Node, SequenceNode

__all__ = ["MAX_ALIASED_NODES", "MAX_BYTES", "MAX_DEPTH", "Bounded", "Limit"]

MAX_BYTES = 4 * 1024 * 1024
"""The largest spec or profile file read, in bytes (a 20,000-item spec is about 1.3 MB)."""
MAX_DEPTH = 64
"""The deepest nesting of mappings and lists, the top level included (a spec's own structure
is 7 deep)."""
MAX_ALIASED_NODES = 100_000
"""How many nodes all the aliases of a document may stand for, together: each alias counts
the nodes of what it names, aliases inside it included."""


class Limit(yaml.MarkedYAMLError):
    """A document past one of the limits; ``kind`` says which."""

    def __init__(self, kind: str, problem: str, mark: Any) -> None:
        super().__init__(problem=problem, problem_mark=mark)
        self.kind = kind


class Bounded(Composer, SafeConstructor):
    """PyYAML's composer and safe constructor with the limits checked as each node is
    composed (a mixin: the loader in :mod:`.yaml` adds the reader, scanner and parser).

    ``trusted`` is set as soon as a key of the top-level mapping is one of ``keys``: the
    file is a spec (perhaps with a mistake), not some other file, and a problem found from
    then on may quote it.
    """

    keys: Collection[str]
    trusted: bool

    def start(self, keys: Collection[str]) -> None:
        self.keys = keys
        self.trusted = False
        self.depth = 0
        self.open: set[str] = set()  # anchors of the collections being composed
        self.weight: dict[int, int] = {}  # id(node) -> how many nodes it stands for
        self.aliased = 0

    def compose_node(self, parent: Node | None, index: int) -> Node | None:
        event = self.peek_event()  # type: ignore[attr-defined]
        if isinstance(event, AliasEvent):
            return self._alias(event, parent, index)
        if not isinstance(event, CollectionStartEvent):
            node = cast(Node, super().compose_node(parent, index))
            self.weight[id(node)] = 1
            if index is None and self.depth == 1 and isinstance(parent, MappingNode):
                self.trusted = self.trusted or node.value in self.keys  # a key of the top level
            return node
        if self.depth == MAX_DEPTH:
            raise Limit(
                "too_deep", f"mappings and lists nest more than {MAX_DEPTH} deep", event.start_mark
            )
        self.depth += 1
        if event.anchor is not None:
            self.open.add(event.anchor)
        node = cast(Node, super().compose_node(parent, index))
        self.open.discard(event.anchor)
        self.depth -= 1
        children = node.value if isinstance(node, SequenceNode) else _flat(node.value)
        self.weight[id(node)] = 1 + sum(self.weight[id(child)] for child in children)
        return node

    def _alias(self, event: AliasEvent, parent: Node | None, index: int) -> Node:
        if event.anchor in self.open:
            raise Limit(
                "recursive_alias",
                "an alias stands for a mapping or list that contains it",
                event.start_mark,
            )
        node = cast(Node, super().compose_node(parent, index))  # undefined: the composer says
        self.aliased += self.weight[id(node)]
        if self.aliased > MAX_ALIASED_NODES:
            raise Limit(
                "too_many_aliases",
                f"the aliases stand for more than {MAX_ALIASED_NODES:,} nodes in all",
                event.start_mark,
            )
        return node

    def construct_object(self, node: Node, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep)
        except (ValueError, TypeError, OverflowError):  # !!float x, !!timestamp 2001-13-45...
            raise ConstructorError(
                None, None, "a value cannot be read as its tag says", node.start_mark
            ) from None


def _flat(pairs: list[tuple[Node, Node]]) -> Iterator[Node]:
    for key, value in pairs:
        yield key
        yield value
