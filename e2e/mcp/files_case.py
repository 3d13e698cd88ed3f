"""The one scenario both transports go through: a served folder with a scratch/ subfolder and
a file holding a secret token; a write outside scratch/ and a move, which harness.yaml refuses;
a write inside scratch/, which it lets through; a read of the secret, which it redacts. Each
test gives it a connected ``Client`` and checks what reached the folder and the trace."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.types import CallToolResult, TextContent

__all__ = ["SECRET", "Served", "check_trace", "exercise"]

SECRET = "hwtok-Q7rT2mXv9LpK4sNw"
"""What harness.yaml's pattern (hwtok-[A-Za-z0-9]{16,}) redacts."""


@dataclass(frozen=True)
class Served:
    """The folder the upstream serves (its root, and the proxy's working folder)."""

    root: Path

    @classmethod
    def make(cls, tmp_path: Path) -> Served:
        root = (tmp_path / "served").resolve()
        (root / "scratch").mkdir(parents=True)
        (root / "notes.txt").write_text(f"deploy with {SECRET} tonight\n", encoding="utf-8")
        return cls(root)


def _refusal(reason: str, code: str) -> list[TextContent]:
    text = f"harnessweaver refused the call: {reason} (code: {code})"
    return [TextContent(type="text", text=text)]


def _text(result: CallToolResult) -> str:
    return "".join(part.text for part in result.content if isinstance(part, TextContent))


async def exercise(client: Client, served: Served) -> None:
    root = served.root
    outside, inside = root / "outside.txt", root / "scratch" / "ok.txt"

    listed = {tool.name for tool in (await client.list_tools()).tools}
    assert {"write_file", "read_text_file", "move_file"} <= listed

    refused = await client.call_tool("write_file", {"path": str(outside), "content": "pwned"})
    assert refused.is_error is True
    assert refused.content == _refusal(f"write_file outside {root / 'scratch'}", "outside_sandbox")

    # "scratch/../x" names a file outside scratch/: normalised before it is judged.
    sneaky = str(root / "scratch" / ".." / "outside.txt")
    refused = await client.call_tool("write_file", {"path": sneaky, "content": "pwned"})
    assert refused.is_error is True
    assert not outside.exists()

    dest = root / "scratch" / "moved.txt"
    move = {"source": str(root / "notes.txt"), "destination": str(dest)}
    moved = await client.call_tool("move_file", move)
    assert moved.is_error is True
    assert moved.content == _refusal("move_file is never allowed here", "destructive_call")
    assert (root / "notes.txt").exists() and not dest.exists()

    written = await client.call_tool("write_file", {"path": str(inside), "content": "fine"})
    assert written.is_error is not True, _text(written)
    assert inside.read_text(encoding="utf-8") == "fine"

    read = await client.call_tool("read_text_file", {"path": str(root / "notes.txt")})
    assert read.is_error is not True, _text(read)
    assert _text(read) == "deploy with [redacted:token] tonight\n"
    # Nowhere in what the client got, structured content included (an agent such as Claude
    # Code passes structuredContent to the model rather than the text).
    assert SECRET not in json.dumps(read.model_dump(mode="json"))
    assert SECRET in (root / "notes.txt").read_text(encoding="utf-8")


def check_trace(records: list[dict[str, Any]]) -> None:
    """The trace says what was refused (by whom, with which code) and what was rewritten."""
    blocks = [
        (r["tool"], r.get("code"))
        for r in records
        if r.get("hook") == "tool.before" and r.get("middleware") == "fs_guard"
        and r.get("outcome") == "block"
    ]  # fmt: skip
    assert blocks == [
        ("write_file", "outside_sandbox"),
        ("write_file", "outside_sandbox"),
        ("move_file", "destructive_call"),
    ]
    # The hook records (the chain's combined outcome) say the same.
    refused = [
        (r["tool"], r.get("code"))
        for r in records
        if r.get("hook") == "tool.before"
        and r.get("kind") == "hook"
        and r.get("outcome") == "block"
    ]
    assert refused == blocks
    redactions = [
        r["tool"]
        for r in records
        if r.get("hook") == "tool.after" and r.get("middleware") == "secrets"
        and r.get("outcome") == "continue" and r.get("modified") is True
    ]  # fmt: skip
    assert redactions == ["read_text_file"]
    # No tool.after for a refused call: the upstream never answered one.
    after = [r["tool"] for r in records if r.get("hook") == "tool.after" and "middleware" in r]
    assert after == ["write_file", "read_text_file"]
