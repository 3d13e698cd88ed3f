"""AGENT-HOOKS composition profiles (its §7.4, §7.5): how the verdicts of the interceptors
at one emission become one, written for harnessweaver from the contract's text.

- ``sequential/first_deny``: each interceptor sees the context as the ones before it left it
  (fold-through, its §7.4); the first deny ends the emission; a liftable deny is put to the
  approval resolver, whose permit either ends the emission (``on_approval=stop``) or takes
  the deny's place and the fold goes on (``resume``).
- ``sequential/run_all``: every interceptor runs (fold-through); the most severe verdict
  wins; the resolver is consulted once, only when every deny is liftable.
- ``parallel/strictest``: every interceptor sees the same untransformed context; the most
  severe wins; two transforms conflict.
- ``parallel/unanimous``: anything but allow from anyone is a disagreement.

Severity (its §7.3): deny, then liftable deny, then transform, then allow. The combined verdict
carries every warning given (first seen first) and, when it permits, every result label of
the permits (its §7.3).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .host import AgentHooksHost

__all__ = ["Composed", "compose", "host_error", "project"]


@dataclass(frozen=True, slots=True)
class Composed:
    """One emission's result: the combined verdict and what its record says of it."""

    combined: Any
    decided_by: int | None
    summaries: list[dict[str, Any]]
    truncated: bool | None
    resolved_by: str | None
    context: dict[str, Any]
    """The context as the combined verdict leaves it (transformed, or the one given)."""


def host_error(kind: Any, message: str | None = None, *, liftable: bool = False) -> Any:
    """The deny a host gives for a failure of its §11 (reason ``host_error:<kind>``)."""
    from agent_hooks import Verdict

    return Verdict.host_error(kind, message, liftable=liftable)


def _synthesized(verdict: Any) -> bool:
    return bool(verdict.reason) and verdict.reason.startswith("host_error:")


def project(verdict: Any) -> dict[str, Any]:
    """A verdict as its record holds it: a transform's path, never its value (its §10.3)."""
    wire: dict[str, Any] = verdict.to_wire()
    if "transform" in wire:
        wire["transform"] = {"path": wire["transform"]["path"]}
    return wire


def _summary(index: int, verdict: Any, name: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {"index": index, "decision": verdict.decision.value}
    if verdict.reason:
        out["reason"] = verdict.reason
    if name is not None:
        out["name"] = name
    return out


def _unions(verdict: Any, pool: list[Any]) -> Any:
    """``verdict`` carrying the warnings of ``pool`` and, when it permits, their labels."""
    warnings, seen = [], set()
    for given in pool:
        for warning in given.warnings:
            key = (warning.reason, warning.message)
            if key not in seen:
                seen.add(key)
                warnings.append(warning)
    labels: list[str] = []
    if verdict.decision.permits:
        for given in pool:
            if given.decision.permits:
                labels += [label for label in given.result_labels if label not in labels]
    if tuple(warnings) == verdict.warnings and tuple(labels) == verdict.result_labels:
        return verdict
    if not _synthesized(verdict):
        return replace(verdict, warnings=tuple(warnings), result_labels=tuple(labels))
    # The SDK builds a host_error deny only through Verdict.host_error, which takes no
    # warnings, and its checks refuse that reason to anyone else: set them on a copy.
    united = copy.copy(verdict)
    object.__setattr__(united, "warnings", tuple(warnings))
    object.__setattr__(united, "result_labels", tuple(labels))
    return united


def _severity(verdict: Any) -> int:
    """Its §5 order: deny, liftable deny, transform, allow."""
    if not verdict.decision.permits:
        return 3 if verdict.approval is None else 2
    return 0 if verdict.decision.value == "allow" else 1


def _fold(context: dict[str, Any], verdict: Any) -> tuple[dict[str, Any] | None, Any]:
    """``context`` with the transform applied (its §5.2), or ``None`` and the deny that a
    transform which does not apply becomes."""
    from agent_hooks import HostError
    from agent_hooks.path import PathError, apply

    from .contexts import retarget

    if context["interception_point"] in ("agent_startup", "agent_shutdown"):
        return None, host_error(HostError.TRANSFORM_TARGET_FORBIDDEN)
    transform = verdict.transform
    try:
        target = apply(context["target"], transform.path, transform.value)
    except PathError as exc:
        return None, host_error(exc.host_error, str(exc))
    return retarget(context, target), verdict


async def compose(
    host: AgentHooksHost, point: str, context: dict[str, Any], bound: list[tuple[Any, Any]]
) -> Composed:
    """The emission at ``point`` by the host's profile."""
    profile = host.composition.profile.value
    if profile == "sequential/first_deny":
        return await _first_deny(host, point, context, bound)
    if profile == "sequential/run_all":
        return await _run_all(host, point, context, bound)
    return await _parallel(host, point, context, bound, unanimous=profile == "parallel/unanimous")


async def _first_deny(
    host: AgentHooksHost, point: str, context: dict[str, Any], bound: list[tuple[Any, Any]]
) -> Composed:
    from agent_hooks import ALLOW

    on_approval = host.composition.on_approval
    resume = on_approval is not None and on_approval.value == "resume"
    summaries: list[dict[str, Any]] = []
    pool: list[Any] = []
    last: tuple[int, Any] | None = None  # the last transform that applied
    resolved: str | None = None
    current = context
    for index, (interceptor, name) in enumerate(bound):
        verdict = await host._invoke(interceptor, current)
        summaries.append(_summary(index, verdict, name))
        pool.append(verdict)
        more = index + 1 < len(bound)
        approved = False
        if not verdict.decision.permits:
            asked = None if _synthesized(verdict) else await host._consult(point, current, verdict)
            if asked is None:
                return Composed(_unions(verdict, pool), index, summaries, more, resolved, current)
            answer, permitted = asked
            if not permitted:
                by = None if _synthesized(answer) else index
                return Composed(_unions(answer, pool), by, summaries, more, "rejection", current)
            resolved, approved, verdict = "approval", True, answer  # in the deny's place (§7.6)
            pool.append(answer)
        if verdict.decision.value == "transform":
            folded, verdict = _fold(current, verdict)
            if folded is None:
                return Composed(verdict, None, summaries, more, resolved, current)
            current = folded
            last = (index, verdict)
        if approved and not resume:  # on_approval=stop: the resolution ends the emission
            return Composed(_unions(verdict, pool), index, summaries, more, resolved, current)
    if last is None:
        return Composed(_unions(ALLOW, pool), None, summaries, False, resolved, current)
    return Composed(_unions(last[1], pool), last[0], summaries, False, resolved, current)


async def _run_all(
    host: AgentHooksHost, point: str, context: dict[str, Any], bound: list[tuple[Any, Any]]
) -> Composed:
    from agent_hooks import ALLOW

    summaries: list[dict[str, Any]] = []
    pool: list[tuple[int, Any]] = []
    current = context
    last: tuple[int, Any] | None = None
    for index, (interceptor, name) in enumerate(bound):
        verdict = await host._invoke(interceptor, current)
        summaries.append(_summary(index, verdict, name))
        if verdict.decision.value == "transform":
            folded, verdict = _fold(current, verdict)
            if folded is None:  # its §7.4: a transform that fails ends the fold
                more = index + 1 < len(bound)
                given = [v for _, v in pool]
                return Composed(_unions(verdict, given), None, summaries, more, None, current)
            current = folded
            last = (index, verdict)
        pool.append((index, verdict))
    verdicts = [v for _, v in pool]
    denies = [(i, v) for i, v in pool if not v.decision.permits]
    if not denies:
        if last is None:
            return Composed(_unions(ALLOW, verdicts), None, summaries, False, None, current)
        return Composed(_unions(last[1], verdicts), last[0], summaries, False, None, current)
    return await _strictest_deny(host, point, context, denies, verdicts, summaries, current)


async def _parallel(
    host: AgentHooksHost,
    point: str,
    context: dict[str, Any],
    bound: list[tuple[Any, Any]],
    *,
    unanimous: bool,
) -> Composed:
    from agent_hooks import ALLOW, HostError

    summaries: list[dict[str, Any]] = []
    given: list[tuple[int, Any]] = []
    for index, (interceptor, name) in enumerate(bound):  # each on the same snapshot
        verdict = await host._invoke(interceptor, context)
        summaries.append(_summary(index, verdict, name))
        given.append((index, verdict))
    verdicts = [v for _, v in given]
    knobs = host.composition
    if unanimous and any(v.decision.value != "allow" for v in verdicts):
        liftable = knobs.on_disagreement is not None and knobs.on_disagreement.value == "approval"
        failed = host_error(HostError.COMPOSITION_DISAGREEMENT, liftable=liftable)
        return await _arbitrate(host, point, context, failed, verdicts, summaries)
    transforms = [(i, v) for i, v in given if v.decision.value == "transform"]
    denies = [(i, v) for i, v in given if not v.decision.permits]
    if denies:
        return await _strictest_deny(host, point, context, denies, verdicts, summaries, context)
    if len(transforms) > 1:
        on_conflict = knobs.on_transform_conflict
        liftable = on_conflict is not None and on_conflict.value == "approval"
        failed = host_error(HostError.TRANSFORM_CONFLICT, liftable=liftable)
        return await _arbitrate(host, point, context, failed, verdicts, summaries)
    if transforms:
        index, winner = transforms[0]
        folded, verdict = _fold(context, winner)
        if folded is None:
            return Composed(_unions(verdict, verdicts), None, summaries, False, None, context)
        return Composed(_unions(verdict, verdicts), index, summaries, False, None, folded)
    return Composed(_unions(ALLOW, verdicts), None, summaries, False, None, context)


async def _strictest_deny(
    host: AgentHooksHost,
    point: str,
    context: dict[str, Any],
    denies: list[tuple[int, Any]],
    verdicts: list[Any],
    summaries: list[dict[str, Any]],
    lifted: dict[str, Any],
) -> Composed:
    """The aggregating profiles' deny (its §7.4, §7.5): the most severe, ties to the lowest
    index; the resolver is consulted once, only when every deny is liftable. ``lifted`` is
    the context a permit leaves (run_all's fold; the snapshot in the parallel profiles)."""
    index, worst = max(denies, key=lambda pair: (_severity(pair[1]), -pair[0]))
    if all(v.approval is not None for _, v in denies):
        asked = await host._consult(point, context, worst)
        if asked is not None:
            answer, permitted = asked
            if not permitted:
                by = None if _synthesized(answer) else index
                return Composed(
                    _unions(answer, verdicts), by, summaries, False, "rejection", context
                )
            return Composed(_unions(answer, verdicts), index, summaries, False, "approval", lifted)
    return Composed(_unions(worst, verdicts), index, summaries, False, None, context)


async def _arbitrate(
    host: AgentHooksHost,
    point: str,
    context: dict[str, Any],
    failed: Any,
    verdicts: list[Any],
    summaries: list[dict[str, Any]],
) -> Composed:
    """A host-made deny (a conflict, a disagreement): put to the resolver when the knob makes
    it liftable; a permit takes its place, carrying the emission's unions (its §7.6)."""
    if failed.approval is not None:
        asked = await host._consult(point, context, failed)
        if asked is not None:
            answer, permitted = asked
            if permitted:
                current = context
                if answer.decision.value == "transform":
                    folded, answer = _fold(context, answer)
                    current = folded if folded is not None else context
                return Composed(
                    _unions(answer, verdicts), None, summaries, False, "approval", current
                )
            return Composed(_unions(answer, verdicts), None, summaries, False, "rejection", context)
    return Composed(_unions(failed, verdicts), None, summaries, False, None, context)
