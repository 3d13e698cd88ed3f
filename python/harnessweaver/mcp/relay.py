"""The upstream's requests to a person or a model (sampling, elicitation, roots), relayed to
the proxy's client.

An upstream server may ask its client to sample the model, elicit from the user or list its
roots. The proxy is that client: it asks its own client the same thing, on the session of
the request being served (the most recent one when the upstream asks between requests).
A client that cannot answer gets its refusal passed back as the SDK's ``ErrorData``.
"""

from __future__ import annotations

import logging
from typing import Any

import mcp_types as types

__all__ = ["Relay"]

_log = logging.getLogger("harnessweaver.mcp")


class Relay:
    """The client callbacks of the proxy's upstream ``Client``."""

    def __init__(self) -> None:
        self.session: Any = None  # the client session the upstream's requests go to

    def callbacks(self) -> dict[str, Any]:
        return {
            "sampling_callback": self.sample,
            "elicitation_callback": self.elicit,
            "list_roots_callback": self.roots,
        }

    async def sample(self, context: Any, params: types.CreateMessageRequestParams) -> Any:
        return await self._ask(types.CreateMessageRequest(params=params), types.CreateMessageResult)

    async def elicit(self, context: Any, params: Any) -> Any:
        return await self._ask(types.ElicitRequest(params=params), types.ElicitResult)

    async def roots(self, context: Any) -> Any:
        return await self._ask(types.ListRootsRequest(), types.ListRootsResult)

    async def _ask(self, request: Any, result_type: type[Any]) -> Any:
        session = self.session
        if session is None or not session.can_send_request:
            return types.ErrorData(
                code=types.INVALID_REQUEST,
                message=f"{request.method}: the proxy's client cannot be asked now",
            )
        try:
            return await session.send_request(request, result_type)
        except Exception as exc:  # the client refused or failed: the upstream hears so
            kind = type(exc).__name__
            _log.info("harnessweaver mcp: %s relayed, failed: %s", request.method, kind)
            error = getattr(exc, "error", None)
            if isinstance(error, types.ErrorData):
                return error
            return types.ErrorData(code=types.INTERNAL_ERROR, message=f"{request.method} failed")
