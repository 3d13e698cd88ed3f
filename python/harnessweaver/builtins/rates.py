"""``harnessweaver.rate_limit``: at most ``limit`` tool calls and model requests per ``per``.

Each call (``tool.before``) and each model request (``model.before``) takes one place in a
sliding window: the guard reserves 1 on the counter ``calls`` of its ``scope`` with the limit
``limit`` and the hold id ``{run}/{step}/{content identity}``, then commits it as a charge that
expires ``per`` after it was made. So at any moment the counter holds the calls of the last
``per``, however many workers share the store, and the same event emitted again (a Retry, a
redelivered job) takes no second place while its first is in the window.

Over the limit the call is refused, ``Block``, or with ``on_exceed: retry`` answered with a
``Retry`` after ``per`` (by then every place taken now is free again); the code is
``rate_limited`` either way. The guard fails closed: a store that cannot answer lets nothing
through (``Block``, ``state_unavailable``).
"""

from __future__ import annotations

from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..envelope import Envelope
from ..events import ModelRequestEvent, ToolCallEvent
from ..middleware import middleware
from ..outcomes import Block, Retry
from ..state import StateUnavailable
from ._state import Duration, Guard, Scope, charge_id, duration, unavailable, where, written

__all__ = ["COUNTER", "RateLimit", "RateLimitSettings"]

COUNTER: Final = "calls"
"""The counter's name: one live hold per call in the window."""


class RateLimitSettings(BaseModel):
    """``limit`` calls per ``per`` (a duration: ``1m``, ``1h``, ``30s``) in ``scope``;
    ``on_exceed``: ``block`` (default) or ``retry``."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    limit: int = Field(ge=1)
    per: Duration
    scope: Scope = "run"
    on_exceed: Literal["block", "retry"] = "block"

    @field_validator("per")
    @classmethod
    def _a_window(cls, per: Duration) -> Duration:
        duration(per)
        return per


@middleware(
    hooks=["tool.before", "model.before"],
    fail_mode="closed",
    config=RateLimitSettings,
    sample={"limit": 60, "per": "1m", "scope": "user", "on_exceed": "block"},
    state=True,
)
class RateLimit(Guard):
    """Refuses (``Block``) or defers (``Retry``) a call past ``limit`` per ``per``, code
    ``rate_limited``."""

    def __init__(self, config: RateLimitSettings) -> None:
        self.limit = config.limit
        self.per = duration(config.per)
        self.per_shown = written(config.per)
        self.scope = config.scope
        self.retry = config.on_exceed == "retry"

    async def __call__(
        self, event: ToolCallEvent | ModelRequestEvent, env: Envelope
    ) -> Block | Retry | None:
        view = self.state
        try:
            key, hold = view.key(self.scope, env, COUNTER), charge_id(env, event)
            held = await view.reserve(key, hold, 1, limit=self.limit, ttl=self.per, life=self.per)
            if held.granted:
                if not held.repeated:
                    await view.commit(key, hold, 1, ttl=self.per, life=self.per)
                return None
        except StateUnavailable as exc:
            return unavailable(view, exc)
        calls = "1 call" if self.limit == 1 else f"{self.limit} calls"
        reason = f"rate limit of {calls} per {self.per_shown} {where(self.scope)} reached"
        if self.retry:
            return Retry(reason=reason, delay=self.per, code="rate_limited")
        return Block(reason=reason, code="rate_limited")
