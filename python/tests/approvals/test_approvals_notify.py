"""The notifier against a real HTTP server on 127.0.0.1 (http.server in a thread): the POST
is signed, verify_signature accepts it and refuses tampering and old timestamps, and a
receiver that fails or is not there never stops a filing (nor shows in a log line)."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from harnessweaver.approvals import (
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    Approvals,
    HttpNotifier,
    sign,
    verify_signature,
)
from harnessweaver.state import MemoryStore

pytestmark = pytest.mark.anyio
SECRET = "hw-approvals-secret-4d2e"
SPEC = "sha256:" + "f" * 64
EVENT = {
    "step": 1,
    "tool": {"name": "refund", "description": "", "parameters": {}},
    "call": {"id": "call-1", "name": "refund", "arguments": {"amount": 5, "note": "é"}},
}


class Receiver:
    def __init__(self, status: int) -> None:
        self.status = status
        self.posts: list[tuple[dict[str, str], bytes]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.posts.append((dict(self.headers), body))
                self.send_response(receiver.status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook?token=tok-123"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)


@pytest.fixture
def receiver(request: pytest.FixtureRequest) -> Iterator[Receiver]:
    made = Receiver(getattr(request, "param", 204))
    made.thread.start()
    yield made
    made.server.shutdown()
    made.server.server_close()


async def file(book: Approvals, amount: int = 5) -> Any:
    event = {**EVENT, "call": {**EVENT["call"], "arguments": {"amount": amount}}}
    return await book.file(hook="tool.before", event=event, reason="r", filed_by="run loop")


async def test_the_post_is_signed_and_verifies(receiver: Receiver) -> None:
    book = Approvals(MemoryStore(), spec=SPEC, notify=HttpNotifier(receiver.url, SECRET))
    filed = await book.file(hook="tool.before", event=EVENT, reason="r", filed_by="run loop")
    await file(book, amount=5 + 0)  # not the same binding: amount 5 without the note
    await book.file(hook="tool.before", event=EVENT, reason="r", filed_by="run loop")  # known
    assert len(receiver.posts) == 2
    headers, body = receiver.posts[0]
    assert headers["Content-Type"] == "application/json"
    payload = json.loads(body)
    assert payload == {"type": "approval.pending", "approval": filed.to_json()}
    assert body == json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()
    stamp, signature = headers[TIMESTAMP_HEADER], headers[SIGNATURE_HEADER]
    assert signature.startswith("sha256=") and len(signature) == 7 + 64
    now = time.time()
    assert verify_signature(SECRET, stamp, body, signature, now)
    assert verify_signature(SECRET, stamp, body.decode(), signature, now)
    assert not verify_signature("another secret", stamp, body, signature, now)
    assert not verify_signature(SECRET, stamp, body.replace(b'"r"', b'"x"'), signature, now)
    assert not verify_signature(SECRET, int(stamp) + 1, body, signature, now)
    assert not verify_signature(SECRET, stamp, body, signature, int(stamp) + 301)
    assert verify_signature(SECRET, stamp, body, signature, int(stamp) + 300)
    assert not verify_signature(SECRET, "soon", body, signature, now)


def test_the_signature_is_hmac_sha256_of_timestamp_dot_body() -> None:
    import hashlib
    import hmac

    expected = hmac.new(b"k", b"1700000000.{}", hashlib.sha256).hexdigest()
    assert sign("k", 1700000000, "{}") == "sha256=" + expected


@pytest.mark.parametrize("receiver", [500], indirect=True)
async def test_a_failing_receiver_never_stops_the_filing(
    receiver: Receiver, caplog: pytest.LogCaptureFixture
) -> None:
    book = Approvals(MemoryStore(), spec=SPEC, notify=HttpNotifier(receiver.url, SECRET))
    with caplog.at_level(logging.WARNING):
        filed = await file(book)
    assert len(receiver.posts) == 1
    assert await book.get(filed.id) == filed
    assert "HTTPError" in caplog.text
    for secret in ("tok-123", SECRET, "127.0.0.1", "amount"):
        assert secret not in caplog.text


async def test_a_receiver_not_there_never_stops_the_filing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    import socket

    with socket.socket() as sock:  # a port nobody listens on once closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    notifier = HttpNotifier(f"http://127.0.0.1:{port}/hook", SECRET, timeout=2.0)
    book = Approvals(MemoryStore(), spec=SPEC, notify=notifier)
    with caplog.at_level(logging.WARNING):
        filed = await file(book)
    assert await book.get(filed.id) == filed
    assert "the notifier failed" in caplog.text
    assert str(port) not in caplog.text and SECRET not in caplog.text


def test_the_notifier_checks_its_arguments_and_hides_them() -> None:
    for url in ("ftp://example.invalid/", "not a url", "http://[::1/x"):
        with pytest.raises(ValueError, match="http"):
            HttpNotifier(url, SECRET)
    with pytest.raises(ValueError, match="secret"):
        HttpNotifier("https://example.invalid/", "")
    with pytest.raises(ValueError, match="timeout"):
        HttpNotifier("https://example.invalid/", SECRET, timeout=0)
    shown = repr(HttpNotifier("https://user:pw@example.invalid/?t=tok", SECRET))
    assert "pw" not in shown and "tok" not in shown and SECRET not in shown
