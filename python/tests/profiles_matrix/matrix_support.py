"""Every built-in profile (and the built-in guards a first harness uses) as one scenario that
any runner can play: the harness spec, the prompt, the model's script, and what must show.

A scenario is framework-neutral: a turn is a list of tool calls ``(name, arguments, id)`` or
a text answer. The tools are plain functions each runner wraps in its own framework's tool
type, and they record what really ran. ``check`` asserts the scenario's characteristic
decision on what every runner reports alike (:class:`Played`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from checkout import PACKAGE

PROFILES_DIR = PACKAGE / "profiles"  # the package under test: a checkout's or an installed one

SECRET = "sk-live-abcdefghijkl"
EMAIL = "jane@example.com"

Call = tuple[str, dict[str, Any], str]
Turn = list[Call] | str


@dataclass
class Played:
    """What a runner reports of one run."""

    output: str
    """The run's final answer."""
    ran: list[str]
    """Each tool call that really ran: ``name arguments``."""
    read: list[list[str]]
    """For each model call, the texts the model read (messages, tool results, refusals)."""
    records: list[dict[str, Any]] = field(default_factory=list)
    """The run's trace records."""


@dataclass(frozen=True)
class Tools:
    """The tools the scenarios offer; each call that runs is noted in ``ran``."""

    ran: list[str] = field(default_factory=list)

    def search(self, query: str) -> str:
        """Search the knowledge base."""
        self.ran.append(f"search {query}")
        return f"found: {query}"

    def calculator(self, expression: str) -> str:
        """Compute an arithmetic expression."""
        self.ran.append(f"calculator {expression}")
        return "4"

    def lookup_order(self, order: int) -> str:
        """Look an order up."""
        self.ran.append(f"lookup_order {order}")
        return f"order {order}: shipped to {EMAIL}"

    def delete_account(self, user: str) -> str:
        """Delete a user's account."""
        self.ran.append(f"delete_account {user}")
        return f"deleted {user}"

    def bash(self, command: str) -> str:
        """Run a shell command."""
        self.ran.append(f"bash {command}")
        return "ok"


TOOL_NAMES = ("search", "calculator", "lookup_order", "delete_account", "bash")


@dataclass(frozen=True)
class Scenario:
    name: str
    spec: str
    """The harness.yaml."""
    prompt: str
    script: list[Turn]
    check: Callable[[Played], None]


def _all_read(played: Played) -> str:
    return "\n".join(text for call in played.read for text in call)


def _agent_guards(played: Played) -> None:
    # redact_pii: the email is redacted in the task's input and in the tool's result, and the
    # run goes on (a rewrite is applied, never the end of the run)
    assert played.output == "Order 7 has shipped."
    assert played.ran == ["lookup_order 7"]
    assert EMAIL not in _all_read(played)
    assert any("[redacted:email]" in text for text in played.read[0])
    assert any("shipped to [redacted:email]" in text for text in played.read[-1])


def _rag(played: Played) -> None:
    # redact_secrets: the key never reaches the model; require_citations: an answer citing
    # nothing is asked for again, and the cited one is the output
    assert SECRET not in _all_read(played)
    assert any("[redacted]" in text for text in played.read[0])
    assert played.output == "Refunds take 5 days [1]."
    assert len(played.read) == 2  # the uncited answer was asked for again


def _refused(played: Played, call: str, reason: str) -> None:
    assert call not in played.ran
    refusal = f"The harness refused this tool call: {reason}"
    assert any(refusal in text for text in played.read[1]), played.read[1]
    assert played.output == "Done."


def _safe_tools(played: Played) -> None:
    # tool_allowlist: a tool not on the list never runs, the model reads why, the run goes on;
    # redact_secrets: an allowed tool runs without the secret
    _refused(played, "delete_account jane", "tool 'delete_account' is not allowed")
    assert played.ran == ["search [redacted] refunds"]


def _tool_denylist(played: Played) -> None:
    _refused(played, "delete_account jane", "tool 'delete_account' is denied")
    assert played.ran == ["search refunds"]


def _shell_guard(played: Played) -> None:
    _refused(played, "bash rm -rf /", "tool 'bash': command matches rule 'rm_recursive_force'")
    assert played.ran == ["bash ls"]


def _profile(name: str) -> str:
    return f"profiles:\n  - profile://{name}\n"


SCENARIOS: dict[str, Scenario] = {
    scenario.name: scenario
    for scenario in [
        Scenario(
            "agent-guards",
            _profile("agent-guards"),
            f"I am {EMAIL}: where is order 7?",
            [[("lookup_order", {"order": 7}, "c1")], "Order 7 has shipped."],
            _agent_guards,
        ),
        Scenario(
            "rag",
            _profile("rag"),
            f"My key is {SECRET}. How long do refunds take?",
            ["Refunds take 5 days.", "Refunds take 5 days [1]."],
            _rag,
        ),
        Scenario(
            "safe-tools",
            _profile("safe-tools"),
            "Delete jane, then search the refund policy.",
            [
                [("delete_account", {"user": "jane"}, "c1")],
                [("search", {"query": f"{SECRET} refunds"}, "c2")],
                "Done.",
            ],
            _safe_tools,
        ),
        Scenario(
            "harnessweaver.tool_denylist",
            "middleware:\n"
            "  - {use: harnessweaver.tool_denylist, id: deny, deny: [delete_account]}\n",
            "Delete jane, then search the refund policy.",
            [
                [("delete_account", {"user": "jane"}, "c1")],
                [("search", {"query": "refunds"}, "c2")],
                "Done.",
            ],
            _tool_denylist,
        ),
        Scenario(
            "harnessweaver.shell_guard",
            "middleware:\n  - {use: harnessweaver.shell_guard, id: shell}\n",
            "Clean up, then list the files.",
            [
                [("bash", {"command": "rm -rf /"}, "c1")],
                [("bash", {"command": "ls"}, "c2")],
                "Done.",
            ],
            _shell_guard,
        ),
    ]
}


def builtin_profiles() -> list[str]:
    """The built-in profiles shipped in the package (``profile://<name>``)."""
    return sorted(path.stem for path in PROFILES_DIR.glob("*.yaml"))


def write_spec(scenario: Scenario, folder: Path) -> Path:
    path = folder / "harness.yaml"
    path.write_text(scenario.spec, encoding="utf-8")
    return path
