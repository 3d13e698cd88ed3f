"""``harnessweaver.authzen``: a remote policy decision point over the OpenID AuthZEN 1.0
Authorization API (I38).

The event is mapped as ``harnessweaver.cedar`` maps it (:func:`~.request.cedar_request`, no
namespace), then written in AuthZEN's words: the subject ``{"type": "user"|"agent", "id"}``, the
action ``{"name": <hook point>}``, the resource ``{"type": "tool"|"model", "id"}`` and the same
context record as plain JSON. ``POST <url>/access/v1/evaluation`` answers it: ``decision: true``
→ ``Continue``; ``false`` → ``Block(code="authzen:deny")``. Anything else (unreachable, past the
timeout, an HTTP status other than 200, a body that is not JSON, a decision that is not a
boolean) raises :class:`AuthZenError`, so the item's fail mode decides (closed by default):
never a silent allow.

:meth:`AuthZen.evaluate_many` asks several questions in one exchange with
``/access/v1/evaluations`` when the decision point's ``/.well-known/authzen-configuration``
offers it (and ``batch`` is on), else one by one. The middleware itself asks one question per
event; the batch is an API for callers that ask several.

The bearer token (``token_env`` names the environment variable, read when the item is built)
is kept out of every message, log, trace and ``repr``; the ``url`` may carry no user, password,
query or fragment, so nothing secret can ride in it.
"""

from __future__ import annotations

import importlib.util
import json
import os
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Final
from urllib.parse import urlsplit

import anyio
from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator

from .._select import core
from ..envelope import Envelope
from ..events import ModelRequestEvent, ToolCallEvent, ToolResultEvent
from ..middleware import SAMPLE, middleware
from ..outcomes import Block, Continue
from ..spec.hooks import ItemHooks
from .errors import AuthZenError
from .request import HOOKS, cedar_request

__all__ = [
    "DENIED",
    "EVALUATIONS_PATH",
    "EVALUATION_PATH",
    "MAX_BODY",
    "METADATA_PATH",
    "AuthZen",
    "AuthZenSettings",
    "authzen_request",
]

EVALUATION_PATH: Final = "/access/v1/evaluation"
EVALUATIONS_PATH: Final = "/access/v1/evaluations"
METADATA_PATH: Final = "/.well-known/authzen-configuration"
MAX_BODY: Final = 1 << 20
"""The most bytes of an answer read: a decision point that sends more is not answering."""
DENIED: Final = Block(reason="the decision point denied this request", code="authzen:deny")
_RULE: Final = "(I38)"
INSTALL: Final = "pip install 'harnessweaver[authzen]'"


def _need_httpx() -> None:
    if importlib.util.find_spec("httpx") is None:  # also when sys.modules holds None for it
        raise ValueError(f"harnessweaver.authzen needs the httpx package: {INSTALL}")


def _seconds(timeout: object) -> float:
    """Seconds of a ``timeout`` written as the bus writes one (ruling 15: ``2s``, ``250ms``,
    ``1m`` or a positive number of seconds)."""
    try:
        return float(core.parse_duration(timeout))
    except Exception as exc:  # the core's DeclarationError: shown as a settings error
        raise ValueError(f"timeout {timeout!r} is not a duration (ruling 15)") from exc


def _hook_of(event: object) -> str:
    if isinstance(event, ToolCallEvent):
        return "tool.before"
    if isinstance(event, ToolResultEvent):
        return "tool.after"
    if isinstance(event, ModelRequestEvent):
        return "model.before"
    raise TypeError(f"harnessweaver.authzen decides {', '.join(HOOKS)}, not {type(event).__name__}")


def authzen_request(
    hook: str, event: object, attributes: Mapping[str, object] | None
) -> dict[str, Any]:
    """The AuthZEN evaluation request of ``event`` at ``hook``: the Cedar request of I38 with
    lower-case types (``User`` → ``user``, ``Tool`` → ``tool``) and the action named by the hook
    point. ``CedarRequestError`` (a path, never a value) when the context cannot be built."""
    cedar = cedar_request(hook, event, attributes, None)
    principal, resource = cedar["principal"], cedar["resource"]
    return {
        "subject": {"type": principal["type"].lower(), "id": principal["id"]},
        "action": {"name": hook},
        "resource": {"type": resource["type"].lower(), "id": resource["id"]},
        "context": cedar["context"],
    }


class AuthZenSettings(BaseModel):
    """``url`` (required: the decision point's http(s) base URL), ``timeout`` (a duration,
    default ``2s``: for the whole exchange), ``token_env`` (the name of an environment variable
    holding a bearer token), ``batch`` (default true: use ``/access/v1/evaluations`` when the
    decision point's metadata offers it)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    url: str
    timeout: str | float = "2s"
    token_env: str | None = None
    batch: bool = True

    @field_validator("url")
    @classmethod
    def _a_base_url(cls, url: str, info: ValidationInfo) -> str:
        # httpx is the ``authzen`` extra: without it an item is refused when the spec loads, and
        # the middleware when it is registered in code; never the built-in's own sample, checked
        # when the built-in plugin is imported, which every spec load does.
        if not (isinstance(info.context, dict) and info.context.get(SAMPLE)):
            _need_httpx()
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("url must be an http:// or https:// URL with a host (I38)")
        if parts.username is not None or parts.password is not None:
            raise ValueError("url may not carry a user or password: name one in token_env (I38)")
        if "?" in url or "#" in url:
            raise ValueError("url may not carry a query or fragment (I38)")
        return url.rstrip("/")

    @field_validator("timeout")
    @classmethod
    def _a_timeout(cls, timeout: str | float) -> str | float:
        _seconds(timeout)
        return timeout

    @field_validator("token_env")
    @classmethod
    def _a_set_variable(cls, name: str | None) -> str | None:
        # The variable's name may be shown; its value never is.
        if name is not None and not os.environ.get(name):
            raise ValueError(
                f"token_env names {name}, an environment variable that is not set (I38)"
            )
        return name


class _Token:
    """A bearer token that shows as ``<hidden>`` wherever it is printed."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def header(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._value}"}

    def __repr__(self) -> str:
        return "<hidden>"

    __str__ = __repr__


@middleware(
    hooks=list(HOOKS),
    fail_mode="closed",
    name="authzen",
    config=AuthZenSettings,
    # Nothing listens on port 9 of the loopback: a run that uses the sample fails closed.
    sample={"url": "http://127.0.0.1:9"},
)
class AuthZen:
    """Asks an AuthZEN 1.0 decision point about each tool call (and, as the item's ``hooks``
    say, tool result and model request): allowed → ``Continue``, denied → ``Block``
    (``authzen:deny``), no usable answer → :class:`AuthZenError` under the fail mode."""

    item_hooks: ClassVar[ItemHooks] = ItemHooks(default=("tool.before",), kind="invalid_policy")

    def __init__(self, config: AuthZenSettings) -> None:
        self.url = config.url
        self.timeout = _seconds(config.timeout)
        self.batch = config.batch
        value = os.environ.get(config.token_env, "") if config.token_env else ""
        self._token = _Token(value) if value else None
        self._endpoints: tuple[str, str | None] | None = None

    def __repr__(self) -> str:
        return f"<AuthZen {self.url} timeout={self.timeout}s batch={self.batch}>"

    async def __call__(
        self, event: ToolCallEvent | ToolResultEvent | ModelRequestEvent, env: Envelope
    ) -> Continue | Block:
        request = authzen_request(_hook_of(event), event, env.attributes)
        return Continue() if await self.evaluate(request) else DENIED

    async def evaluate(self, request: Mapping[str, Any]) -> bool:
        """The decision on one AuthZEN evaluation request; :class:`AuthZenError` without one."""
        single, _ = await self._endpoints_of()
        return _decision(await self._post(single, request), single)

    async def evaluate_many(self, requests: Sequence[Mapping[str, Any]]) -> list[bool]:
        """The decisions on several requests, in their order: in one exchange when the decision
        point offers ``/access/v1/evaluations``, else one by one. :class:`AuthZenError` when any
        has no usable answer."""
        if not requests:
            return []
        single, many = await self._endpoints_of()
        if many is None:
            return [_decision(await self._post(single, request), single) for request in requests]
        # Every item is whole (no defaults at the top) and the semantic is execute_all (the
        # default), so the answer has one decision per item, in order.
        answer = await self._post(many, {"evaluations": [dict(r) for r in requests]})
        items = answer.get("evaluations") if isinstance(answer, dict) else None
        if not isinstance(items, list) or len(items) != len(requests):
            raise AuthZenError(
                f"the decision point at {many} answered without one decision per request "
                f"({len(requests)} asked) {_RULE}"
            )
        return [_decision(item, many) for item in items]

    async def _endpoints_of(self) -> tuple[str, str | None]:
        """The evaluation endpoint and the batch one (``None``: not offered, or batch off).
        The metadata is asked once; an answer without it (404, not JSON) means the defaults."""
        if self._endpoints is not None:
            return self._endpoints
        single = self.url + EVALUATION_PATH
        if not self.batch:
            self._endpoints = (single, None)
            return self._endpoints
        where = self.url + METADATA_PATH
        status, body = await self._exchange("GET", where, None)
        many: str | None = None
        if status == 200:
            meta = _json(body)
            if isinstance(meta, dict):
                named = meta.get("access_evaluation_endpoint")
                single = single if named is None else self._same_origin(named)
                offered = meta.get("access_evaluations_endpoint")
                many = None if offered is None else self._same_origin(offered)
        self._endpoints = (single, many)
        return self._endpoints

    def _same_origin(self, endpoint: object) -> str:
        """An endpoint the metadata names, if it is a URL on the decision point's own origin:
        the token is never sent anywhere else."""
        ours = urlsplit(self.url)
        if isinstance(endpoint, str):
            theirs = urlsplit(endpoint)
            if (theirs.scheme, theirs.netloc) == (ours.scheme, ours.netloc) and not (
                theirs.query or theirs.fragment
            ):
                return endpoint
        raise AuthZenError(
            f"the decision point at {self.url} names an endpoint off its own origin in its "
            f"metadata; the token is only sent to {ours.scheme}://{ours.netloc} {_RULE}"
        )

    async def _post(self, where: str, body: Mapping[str, Any]) -> object:
        status, answer = await self._exchange("POST", where, body)
        if status != 200:
            raise AuthZenError(f"the decision point at {where} answered HTTP {status} {_RULE}")
        parsed = _json(answer)
        if parsed is _NOT_JSON:
            raise AuthZenError(f"the decision point at {where} answered with no JSON {_RULE}")
        return parsed

    async def _exchange(
        self, method: str, where: str, body: Mapping[str, Any] | None
    ) -> tuple[int, bytes]:
        """One request within the timeout (for the whole exchange, not each read): its status
        and at most :data:`MAX_BODY` bytes of its body."""
        import httpx  # the ``authzen`` extra, checked when the settings were validated

        headers = {"Accept": "application/json"}
        if self._token is not None:
            headers.update(self._token.header())
        content = None
        if body is not None:
            headers["Content-Type"] = "application/json"
            content = json.dumps(body, ensure_ascii=False, allow_nan=False).encode()
        try:
            with anyio.fail_after(self.timeout):
                async with (
                    httpx.AsyncClient(timeout=self.timeout, follow_redirects=False) as client,
                    client.stream(method, where, headers=headers, content=content) as answer,
                ):
                    chunks: list[bytes] = []
                    size = 0
                    # Read to the end (the timeout bounds it) but keep no more than MAX_BODY:
                    # leaving the stream early would leave httpx's generators unclosed.
                    async for chunk in answer.aiter_bytes():
                        size += len(chunk)
                        if size <= MAX_BODY:
                            chunks.append(chunk)
                    status = answer.status_code
        except (TimeoutError, httpx.TimeoutException):
            raise AuthZenError(
                f"the decision point at {where} did not answer within {self.timeout:g}s {_RULE}"
            ) from None
        except httpx.HTTPError:
            # Nothing of the exception is shown: the same words in every implementation.
            raise AuthZenError(
                f"the decision point at {where} could not be reached {_RULE}"
            ) from None
        if size > MAX_BODY:
            raise AuthZenError(
                f"the decision point at {where} answered more than {MAX_BODY} bytes {_RULE}"
            )
        return status, b"".join(chunks)


_NOT_JSON: Final = object()


def _json(body: bytes) -> object:
    try:
        return json.loads(body)
    except ValueError:
        return _NOT_JSON


def _decision(answer: object, where: str) -> bool:
    decision = answer.get("decision") if isinstance(answer, dict) else None
    if not isinstance(decision, bool):
        raise AuthZenError(
            f"the decision point at {where} answered without a boolean decision {_RULE}"
        )
    return decision
