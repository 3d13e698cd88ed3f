"""The policies of a set whose scope may match a request, as one Cedar policy set (I38).

Cedar evaluates every policy of the set it is given, and a call costs about 20 µs before the
first policy; so each request is decided by the policies whose scope may match it only:
a policy whose scope says ``action == A`` (``resource == R``) is left out of a request for
another action (resource). Such a policy could neither determine the decision nor error
(Cedar's scope comes before its conditions and short-circuits), so the answer is the one the
whole set gives; the slices are cached per (action, resource), a bounded number of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from .policy import Policy, policy_index
from .request import CedarRequest

__all__ = ["CACHED_SLICES", "Slice", "Slices"]

CACHED_SLICES: Final = 1024
"""How many (action, resource) slices are kept; the oldest goes first when one more is made
(tool names come from the model, so the cache must not grow with them)."""


class Slice:
    """A Cedar policy set made of some policies, and how its ids map back: ``members[k]`` is
    the policy Cedar calls ``policyk`` there (``None``: the ids are the whole set's)."""

    __slots__ = ("members", "policies")

    def __init__(self, policies: Any, members: tuple[Policy, ...] | None) -> None:
        self.policies = policies
        self.members = members


class Slices:
    """The slices of one compiled set, made when a request first needs one, then cached;
    ``whole`` is the set itself."""

    __slots__ = ("_by_id", "_by_text", "_cache", "_cedarpy", "_policies", "whole")

    def __init__(
        self, cedarpy: Any, policies: Sequence[Policy], whole: Any, *, by_text: bool
    ) -> None:
        self._cedarpy = cedarpy
        self._policies = tuple(policies)
        self._by_id = {policy.cedar_id: policy for policy in policies}
        self._by_text = by_text
        self._cache: dict[tuple[str, str, str, str], Slice] = {}
        self.whole = Slice(whole, None)

    def of(self, request: CedarRequest) -> Slice:
        """The policies whose scope may match ``request``, as one Cedar policy set."""
        action, resource = request["action"], request["resource"]
        key = (action["type"], action["id"], resource["type"], resource["id"])
        found = self._cache.get(key)
        if found is not None:
            return found
        wanted_action = (action["type"], action["id"])
        wanted_resource = (resource["type"], resource["id"])
        chosen = tuple(
            policy
            for policy in self._policies
            if policy.action in (None, wanted_action) and policy.resource in (None, wanted_resource)
        )
        if len(chosen) == len(self._policies):
            found = self.whole
        elif self._by_text:  # parsed alone, Cedar numbers them policy0...: members maps back
            text = "\n".join(policy.source for policy in chosen)
            found = Slice(self._cedarpy.PolicySet.from_str(text), chosen)
        else:  # the JSON form keeps the ids
            text = ", ".join(policy.source for policy in chosen)
            document = '{"staticPolicies": {' + text + '}, "templates": {}, "templateLinks": []}'
            found = Slice(self._cedarpy.PolicySet.from_json_str(document), None)
        if len(self._cache) >= CACHED_SLICES:
            del self._cache[next(iter(self._cache))]
        self._cache[key] = found
        return found

    def member(self, chosen: Slice, cedar_id: str) -> Policy:
        """The policy ``chosen`` calls ``cedar_id``."""
        if chosen.members is not None:
            return chosen.members[policy_index(cedar_id)]
        return self._by_id[cedar_id]
