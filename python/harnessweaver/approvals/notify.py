"""Telling someone an approval waits: a callback, or a signed HTTP POST.

The POST carries ``{"type":"approval.pending","approval":<record>}`` signed with HMAC-SHA256
over ``f"{timestamp}.{body}"``, so a receiver can check it came from a holder of the secret
and is recent (:func:`verify_signature`). A notifier that fails is logged by the failure's
type name only and never stops the filing: the record is what counts, the message is a
courtesy. The URL (it may hold a token), the secret and the body (it holds the arguments)
are never logged.
"""

from __future__ import annotations

import hashlib
import hmac
import inspect
import json
import logging
import time
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable
from typing import TypeAlias

import anyio
import anyio.to_thread

from .config import web_url
from .record import ApprovalRecord

__all__ = [
    "SIGNATURE_HEADER",
    "TIMESTAMP_HEADER",
    "HttpNotifier",
    "Notifier",
    "notify_safely",
    "sign",
    "verify_signature",
]

_log = logging.getLogger(__name__)

TIMESTAMP_HEADER = "X-Harnessweaver-Timestamp"
SIGNATURE_HEADER = "X-Harnessweaver-Signature"

Notifier: TypeAlias = Callable[[ApprovalRecord], "Awaitable[object] | object"]
"""A callable (sync or async) given each newly filed record."""


def _bytes(value: str | bytes) -> bytes:
    return value.encode("utf-8") if isinstance(value, str) else value


def sign(secret: str | bytes, timestamp: int | str, body: str | bytes) -> str:
    """The signature header's value: ``sha256=`` + hex HMAC-SHA256(secret, ``ts.body``)."""
    message = _bytes(str(timestamp)) + b"." + _bytes(body)
    return "sha256=" + hmac.new(_bytes(secret), message, hashlib.sha256).hexdigest()


def verify_signature(
    secret: str | bytes,
    timestamp: int | str,
    body: str | bytes,
    header: str,
    now: float,
    tolerance: float = 300,
) -> bool:
    """Whether ``header`` signs ``body`` at ``timestamp`` with ``secret`` and the timestamp is
    within ``tolerance`` seconds of ``now`` (a replayed old message is refused)."""
    try:
        stamp = int(str(timestamp))
    except ValueError:
        return False
    if abs(now - stamp) > tolerance or not isinstance(header, str):
        return False
    return hmac.compare_digest(sign(secret, stamp, body).encode(), header.encode())


class HttpNotifier:
    """POST each new record to ``url``, signed with ``secret``, within ``timeout`` seconds
    (stdlib HTTP in a worker thread: the event loop never waits on the network)."""

    __slots__ = ("_secret", "_url", "timeout")

    def __init__(self, url: str, secret: str, timeout: float = 5.0) -> None:
        if not isinstance(url, str) or not web_url(url):
            raise ValueError("a notifier url is an http:// or https:// URL")
        if not isinstance(secret, str) or not secret:
            raise ValueError("a notifier secret is non-empty text")
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
            raise ValueError("a notifier timeout is a number of seconds > 0")
        self._url = url
        self._secret = secret
        self.timeout = float(timeout)

    def __repr__(self) -> str:  # never the URL (it may hold a token) nor the secret
        return f"HttpNotifier(timeout={self.timeout!r})"

    def request(self, record: ApprovalRecord, now: float | None = None) -> urllib.request.Request:
        """The signed request for ``record`` (what :meth:`__call__` sends)."""
        payload = {"type": "approval.pending", "approval": record.to_json()}
        body = json.dumps(payload, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        stamp = int(time.time() if now is None else now)
        headers = {
            "Content-Type": "application/json",
            TIMESTAMP_HEADER: str(stamp),
            SIGNATURE_HEADER: sign(self._secret, stamp, body),
        }
        return urllib.request.Request(
            self._url, data=body.encode("utf-8"), headers=headers, method="POST"
        )

    def _send(self, request: urllib.request.Request) -> None:
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as answer:
                answer.read()
        except urllib.error.HTTPError as exc:  # a status >= 400: its answer is still open
            exc.close()
            raise

    async def __call__(self, record: ApprovalRecord) -> None:
        request = self.request(record)
        with anyio.fail_after(self.timeout + 1.0):
            await anyio.to_thread.run_sync(self._send, request, abandon_on_cancel=True)


async def notify_safely(notify: Notifier, record: ApprovalRecord) -> bool:
    """Call ``notify`` with ``record``; a failure is logged by its type name (never its
    message, which may quote the URL) and answered False: filing goes on."""
    try:
        result = notify(record)
        if inspect.isawaitable(result):
            await result
    except Exception as exc:  # any notifier failure: logged, filing goes on
        _log.warning("approval %s: the notifier failed: %s", record.id, type(exc).__name__)
        return False
    return True
