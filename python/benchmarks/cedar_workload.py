"""The Cedar benchmark's workload (issue 33): a generated, realistic policy set of N policies,
the same decisions as a hand-written Python middleware (the floor), and the events both decide.

The policy set is what an organisation's tool policies look like: for each tool, one
``permit`` per user group with a ``when`` condition on the call's arguments (an amount limit,
a region from a set, or a path pattern, in turn), and about one policy in ten a ``forbid``
(a frozen account, or a tool a group may never call). Every policy has an ``@id``. Users are
in groups through ``entities.json``, as Cedar's ``principal in Group::"..."`` reads them.

``PythonPolicy`` (``bench.python_policy``, settings ``n``) makes the same decisions, with the
same codes, as Python code written by hand: the rules of a tool found by its name (a dict),
then the forbids. Both are loaded through a ``harness.yaml`` (``specs``), so the two buses are
built alike and differ only in the middleware; the benchmark checks that they agree on every
event before it times them.

Used by ``python/benchmarks/test_cedar.py`` (``nox -s bench``) and ``tools/bench_cedar.py``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

import harnessweaver as hw

__all__ = [
    "COUNTS",
    "GROUPS",
    "USERS",
    "Forbid",
    "Permit",
    "PythonPolicy",
    "PythonPolicySettings",
    "Rules",
    "cycle",
    "entities",
    "events",
    "plugin",
    "policy_text",
    "rules",
    "specs",
]

COUNTS = (10, 100, 1000)
"""The policy-set sizes the issue asks for."""

GROUPS = ("support", "finance")
"""Groups with a permit per tool; ``contractors`` only appear in forbids."""
USERS = {"alice": "support", "bob": "finance", "carol": "contractors"}
"""Each user's group (entities.json gives Cedar the same)."""
_LIMITS = {"support": 50_000, "finance": 5_000_000}
"""Amount limits in cents: Cedar has no floats (docs/policies.md)."""
_REGIONS = {"support": ("eu", "us"), "finance": ("eu", "us", "apac")}
_PATHS = {"support": "/srv/shared/", "finance": "/srv/"}
_VERBS = ("refund", "create", "update", "delete", "read", "search", "send", "export")
_NOUNS = ("payment", "invoice", "ticket", "order", "customer", "report", "email", "file")


@dataclass(frozen=True)
class Permit:
    """``permit`` for ``group`` on ``tool`` when the argument check of ``shape`` holds."""

    id: str
    tool: str
    group: str
    shape: str
    """``amount`` (``amount_cents`` at most the group's limit), ``region`` (one of the
    group's regions) or ``path`` (under the group's folder)."""


@dataclass(frozen=True)
class Forbid:
    """``forbid`` of any call on ``account`` (when ``account`` is set), or of ``tool`` for
    ``group``."""

    id: str
    account: str | None = None
    tool: str | None = None
    group: str | None = None


@dataclass(frozen=True)
class Rules:
    permits: tuple[Permit, ...]
    forbids: tuple[Forbid, ...]

    @property
    def tools(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(p.tool for p in self.permits))


def _tool(index: int) -> str:
    verb, noun = _VERBS[index % len(_VERBS)], _NOUNS[index // len(_VERBS) % len(_NOUNS)]
    return f"{verb}_{noun}" if index < 64 else f"{verb}_{noun}_{index // 64}"


def rules(n: int) -> Rules:
    """``n`` policies: ``n // 10`` forbids (at least one), the rest permits, two per tool."""
    forbid_count = max(1, n // 10)
    permit_count = n - forbid_count
    permits = []
    for index in range(permit_count):
        tool, group = _tool(index // 2), GROUPS[index % 2]
        shape = ("amount", "region", "path")[index // 2 % 3]
        permits.append(Permit(f"permit-{tool}-{group}", tool, group, shape))
    tools = tuple(dict.fromkeys(p.tool for p in permits))
    forbids = []
    for index in range(forbid_count):
        if index % 2 == 0:
            forbids.append(Forbid(f"forbid-account-{index}", account=f"A-{1000 + index}"))
        else:
            tool = tools[index % len(tools)]
            forbids.append(Forbid(f"forbid-{tool}-contractors", tool=tool, group="contractors"))
    return Rules(tuple(permits), tuple(forbids))


def _condition(permit: Permit) -> str:
    if permit.shape == "amount":
        limit = _LIMITS[permit.group]
        return f"context.arguments has amount_cents && context.arguments.amount_cents <= {limit}"
    if permit.shape == "region":
        regions = ", ".join(f'"{r}"' for r in _REGIONS[permit.group])
        return f"context.arguments has region && [{regions}].contains(context.arguments.region)"
    return f'context.arguments has path && context.arguments.path like "{_PATHS[permit.group]}*"'


def policy_text(found: Rules) -> str:
    """The rules as Cedar policy text, one statement each."""
    out = []
    for permit in found.permits:
        out.append(
            f'@id("{permit.id}")\n'
            f'permit (principal in Group::"{permit.group}", action == Action::"tool.before",'
            f' resource == Tool::"{permit.tool}")\nwhen {{ {_condition(permit)} }};'
        )
    for forbid in found.forbids:
        if forbid.account is not None:
            out.append(
                f'@id("{forbid.id}")\nforbid (principal, action == Action::"tool.before", '
                f"resource)\nwhen {{ context.arguments has account && "
                f'context.arguments.account == "{forbid.account}" }};'
            )
        else:
            out.append(
                f'@id("{forbid.id}")\nforbid (principal in Group::"{forbid.group}", '
                f'action == Action::"tool.before", resource == Tool::"{forbid.tool}");'
            )
    return "\n\n".join(out) + "\n"


def entities() -> list[dict[str, Any]]:
    """Cedar's JSON entity list: each user in its group."""
    groups = sorted(set(USERS.values()))
    found: list[dict[str, Any]] = [
        {"uid": {"type": "Group", "id": g}, "attrs": {}, "parents": []} for g in groups
    ]
    for user, group in USERS.items():
        found.append(
            {
                "uid": {"type": "User", "id": user},
                "attrs": {},
                "parents": [{"type": "Group", "id": group}],
            }
        )
    return found


def _allowed(permit: Permit, arguments: Any) -> bool:
    """The permit's ``when`` condition, as Python."""
    if permit.shape == "amount":
        amount = arguments.get("amount_cents")
        return isinstance(amount, int) and amount <= _LIMITS[permit.group]
    if permit.shape == "region":
        return arguments.get("region") in _REGIONS[permit.group]
    path = arguments.get("path")
    return isinstance(path, str) and path.startswith(_PATHS[permit.group])


class PythonPolicySettings(BaseModel):
    """``n``: the size of the policy set this middleware decides like."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    n: int = Field(gt=0)


@hw.middleware(hooks=["tool.before"], fail_mode="closed", config=PythonPolicySettings)
class PythonPolicy:
    """The generated policy set's decisions, hand-written: the floor of the Cedar rows."""

    def __init__(self, config: PythonPolicySettings) -> None:
        found = rules(config.n)
        self.by_tool: dict[str, list[Permit]] = {}
        for permit in found.permits:
            self.by_tool.setdefault(permit.tool, []).append(permit)
        self.accounts = {f.account: f.id for f in found.forbids if f.account is not None}
        self.tool_forbids: dict[tuple[str, str], str] = {
            (f.tool, f.group): f.id
            for f in found.forbids
            if f.tool is not None and f.group is not None
        }

    async def __call__(self, event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Outcome | None:
        tool = event.call.name or event.tool.name
        arguments = event.call.arguments
        user = env.attributes.get("user")
        group = USERS.get(user) if isinstance(user, str) else None
        forbidden = []
        account = arguments.get("account")
        if isinstance(account, str) and account in self.accounts:
            forbidden.append(self.accounts[account])
        if group is not None and (tool, group) in self.tool_forbids:
            forbidden.append(self.tool_forbids[(tool, group)])
        if forbidden:
            ids = sorted(set(forbidden))
            return hw.Block(
                reason="forbidden by Cedar policy " + ", ".join(ids), code="cedar:" + ",".join(ids)
            )
        for permit in self.by_tool.get(tool, ()):
            if permit.group == group and _allowed(permit, arguments):
                return None
        return hw.Block(reason="no Cedar policy permits this request", code="cedar:no_permit")


plugin = hw.Plugin(namespace="bench", version="1.0.0", middleware=[PythonPolicy])
"""``bench.python_policy``: the floor, loaded through a harness spec like the Cedar one."""


def specs(n: int, folder: Path) -> tuple[Path, Path]:
    """Write the policy set of size ``n``, its entities and two harness specs into ``folder``:
    one with ``harnessweaver.cedar``, one with the Python floor. Returns (cedar, python)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "policies.cedar").write_text(policy_text(rules(n)), encoding="utf-8")
    (folder / "entities.json").write_text(json.dumps(entities(), indent=1), encoding="utf-8")
    cedar = folder / "cedar.yaml"
    cedar.write_text(
        "middleware:\n"
        "  - use: harnessweaver.cedar\n"
        "    id: policy\n"
        "    policies: policies.cedar\n"
        "    entities: entities.json\n",
        encoding="utf-8",
    )
    python = folder / "python.yaml"
    python.write_text(
        "plugins: {local: [cedar_workload]}\n"
        f"middleware:\n  - {{use: bench.python_policy, id: policy, n: {n}}}\n",
        encoding="utf-8",
    )
    return cedar, python


def events(n: int) -> list[tuple[str, hw.ToolCallEvent]]:
    """The calls both buses decide, each with its user: allowed, over a limit (no permit), on
    a frozen account (forbid), a contractor on a forbidden tool (forbid), an unknown user (no
    permit). Tools from the middle of the set: Cedar's order of evaluation does not help."""
    found = rules(n)
    permits = found.permits
    middle = permits[len(permits) // 2 - len(permits) // 2 % 6]  # an ``amount`` permit
    tool = middle.tool
    frozen = next(f.account for f in found.forbids if f.account is not None)
    barred = next((f.tool for f in found.forbids if f.tool is not None), tool)

    def call(name: str, **arguments: Any) -> hw.ToolCallEvent:
        return hw.ToolCallEvent(
            step=1,
            tool=hw.ToolSpec(name=name),
            call=hw.ToolCall(id="c1", name=name, arguments=arguments),
        )

    return [
        ("alice", call(tool, amount_cents=12_000, account="A-1")),
        ("alice", call(tool, amount_cents=90_000, account="A-1")),
        ("bob", call(tool, amount_cents=90_000, account="A-1")),
        ("bob", call(tool, amount_cents=1_000, account=frozen)),
        ("carol", call(barred, amount_cents=1_000, account="A-1")),
        ("mallory", call(tool, amount_cents=1_000, account="A-1")),
    ]


def cycle(items: list[tuple[str, hw.ToolCallEvent]]) -> Iterator[tuple[str, hw.ToolCallEvent]]:
    while True:
        yield from items
