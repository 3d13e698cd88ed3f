"""A call a person must approve, through the real ``harnessweaver mcp`` process, when the
client cannot be asked (the SDK's client without an elicitation callback declares no
elicitation capability): the proxy files it in the approvals book and refuses naming the
record; the real ``harnessweaver approvals`` CLI decides it in another process; the same call
then runs once on the upstream (counted in its ``--record`` file), and again is refused.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from inproc import spec_file
from mcp import Client
from proxy_procs import asyncio_only, proxy_stdio, records

from harnessweaver.mcp.convert import META_KEY

pytestmark = pytest.mark.anyio

ID = re.compile(r"ap_[0-9a-f]{16}_[0-9]+")


@pytest.fixture
def anyio_backend() -> str:
    return asyncio_only()


def approvals(*argv: str, spec: Path, state: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "harnessweaver.cli", "approvals", *argv]
    command += ["--spec", str(spec), "--state-file", str(state)]
    return subprocess.run(
        command, capture_output=True, text=True, timeout=120, check=False, env=dict(os.environ)
    )


def text(result: Any) -> str:
    return str(result.content[0].text)


def refused_naming(result: Any) -> str:
    """The call was refused naming a pending approval; its id (also under ``_meta``)."""
    assert result.is_error is True
    said = text(result)
    assert said.startswith("harnessweaver refused the call: a person must approve; ")
    assert "this client cannot ask one" in said
    assert said.endswith("(code: needs_approval)")
    found = ID.findall(said)
    assert found and set(found) == {found[0]}
    assert f"harnessweaver approvals approve {found[0]}" in said
    meta = result.meta[META_KEY]
    assert meta == {"outcome": "suspend", "code": "needs_approval", "approval": found[0]}
    return found[0]


def upstream_calls(record: Path) -> list[dict[str, Any]]:
    return records(record) if record.exists() else []


async def test_a_cli_approval_lets_the_same_call_run_once_on_the_upstream(tmp_path: Path) -> None:
    spec, state, record = spec_file(tmp_path), tmp_path / "state.sqlite3", tmp_path / "up.jsonl"
    more = ("--state-file", str(state))
    async with Client(proxy_stdio(spec, record=record, more=more)) as client:
        first = refused_naming(await client.call_tool("echo", {"text": "ask 1"}))
        assert refused_naming(await client.call_tool("echo", {"text": "ask 1"})) == first
    assert upstream_calls(record) == []

    decided = approvals("approve", first, "--by", "alice", spec=spec, state=state)
    assert decided.returncode == 0, decided.stderr

    # A new proxy process (the client restarted its server): the approval is in the store.
    async with Client(proxy_stdio(spec, record=record, more=more)) as client:
        changed = refused_naming(await client.call_tool("echo", {"text": "ask 2"}))
        assert changed != first  # other arguments: a question of their own
        ran = await client.call_tool("echo", {"text": "ask 1"})
        assert ran.is_error is False, text(ran)
        assert upstream_calls(record) == [{"tool": "echo", "arguments": {"text": "ask 1"}}]
        again = refused_naming(await client.call_tool("echo", {"text": "ask 1"}))
        assert again not in (first, changed)
    assert len(upstream_calls(record)) == 1

    listed = approvals("list", "--format", "json", spec=spec, state=state)
    assert listed.returncode == 0, listed.stderr
    used = {item["id"]: item for item in json.loads(listed.stdout)}[first]
    assert (used["status"], used["filed_by"], used["subject"]) == (
        "used",
        "mcp proxy",
        "mcp:harnessweaver-mcp",
    )


async def test_a_cli_denial_refuses_the_same_call(tmp_path: Path) -> None:
    spec, state, record = spec_file(tmp_path), tmp_path / "state.sqlite3", tmp_path / "up.jsonl"
    async with Client(proxy_stdio(spec, record=record, more=("--state-file", str(state)))) as c:
        first = refused_naming(await c.call_tool("echo", {"text": "ask"}))
        decided = approvals("deny", first, "--reason", "no", spec=spec, state=state)
        assert decided.returncode == 0, decided.stderr
        result = await c.call_tool("echo", {"text": "ask"})
        assert result.is_error is True
        assert text(result) == (
            f"harnessweaver refused the call: approval {first} was denied: no "
            "(code: approval_denied)"
        )
        assert result.meta[META_KEY]["approval"] == first
    assert upstream_calls(record) == []


async def test_a_store_that_cannot_answer_refuses(tmp_path: Path) -> None:
    spec, record = spec_file(tmp_path), tmp_path / "up.jsonl"
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])  # nobody listens once the block ends
    spec.write_text(
        spec.read_text() + f"state: {{backend: redis, url: 'redis://127.0.0.1:{port}/0'}}\n"
    )
    async with Client(proxy_stdio(spec, record=record)) as client:
        result = await client.call_tool("echo", {"text": "ask"})
    assert result.is_error is True
    assert text(result).endswith("(code: state_unavailable)")
    assert not ID.search(text(result))
    assert upstream_calls(record) == []


async def test_without_a_state_file_the_proxy_files_in_the_hook_commands_even_on_a_new_machine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the hook command's state file is where `harnessweaver approvals` looks by default; on a
    # machine where the hook command never ran its folder does not exist yet: the proxy makes
    # it (as the CLI does) rather than refusing every call it files with state_unavailable
    import harnessweaver as hw
    from harnessweaver.mcp.serve import _approvals

    state = tmp_path / "never" / "made" / "hook-state.sqlite3"
    monkeypatch.setenv("HARNESSWEAVER_HOOK_STATE", str(state))
    spec = tmp_path / "harness.yaml"
    spec.write_text("middleware: []\n", encoding="utf-8")
    harness = hw.load(spec)
    book, store = _approvals(harness, None)
    assert store is not None
    try:
        event = {"call": {"id": "c1", "name": "move", "arguments": {"to": "x"}}}
        record = await book.file(
            hook="tool.before", event=event, reason="r", filed_by="mcp proxy", subject="mcp:t"
        )
        assert record.status == "pending" and state.is_file()
        assert (state.parent.stat().st_mode & 0o777) == 0o700
    finally:
        await store.close()
        await harness.aclose()
