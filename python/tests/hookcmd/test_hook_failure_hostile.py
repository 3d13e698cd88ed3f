"""The Codex transcript a failure is read from is named by the event document: a path to a
device, a FIFO or a directory is not read (it would never end, or block), a large
transcript is read only at its end, and a line nested too deeply to parse says nothing."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from harnessweaver.hookcmd.failure import _TRANSCRIPT_TAIL, failed


def codex_doc(transcript: str) -> dict[str, object]:
    return {"tool_response": "boom", "transcript_path": transcript, "tool_use_id": "call_1"}


def completed(exit_code: int) -> bytes:
    item = {"id": "call_1", "status": "completed", "exit_code": exit_code}
    return json.dumps({"payload": {"type": "item_completed", "item": item}}).encode() + b"\n"


@pytest.mark.parametrize("path", ["/dev/zero", "/dev/urandom", "/", "/no/such/file", "\0"])
def test_what_is_not_a_regular_file_is_not_read(path: str) -> None:
    assert failed("codex", codex_doc(path)) is False


def test_a_fifo_does_not_block(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert failed("codex", codex_doc(str(fifo))) is False


def test_a_large_transcript_is_read_at_its_end(tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    with transcript.open("wb") as out:
        out.write(completed(0))  # an older line about the same id, beyond the tail
        out.write(b"x" * (_TRANSCRIPT_TAIL + 10) + b"\n")
        out.write(completed(3))
    assert failed("codex", codex_doc(str(transcript))) is True
    transcript.write_bytes(completed(3) + b"y" * (_TRANSCRIPT_TAIL + 10) + b"\n")
    assert failed("codex", codex_doc(str(transcript))) is False  # not within the tail


def test_a_line_nested_too_deeply_says_nothing(tmp_path: Path) -> None:
    """It raised the parser's RecursionError: the hook failed closed as 'a bug' (issue 28)."""
    transcript = tmp_path / "t.jsonl"
    deep = b"[" * 100_000 + b"]" * 100_000
    line = completed(3).replace(b'"exit_code": 3', b'"exit_code": 3, "x": ' + deep)
    transcript.write_bytes(completed(3) + line)
    assert failed("codex", codex_doc(str(transcript))) is True  # the line before it tells
    transcript.write_bytes(line)
    assert failed("codex", codex_doc(str(transcript))) is False
