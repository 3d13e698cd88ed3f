"""``harnessweaver.max_messages``: a bound on how long a conversation sent to the model gets."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ..envelope import Envelope
from ..events import ModelRequestEvent
from ..middleware import middleware
from ..outcomes import Block

__all__ = ["MaxMessages", "MaxMessagesSettings"]


class MaxMessagesSettings(BaseModel):
    """``limit``: the most messages a model request may carry."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    limit: int = Field(gt=0)


@middleware(
    hooks=["model.before"],
    fail_mode="closed",
    config=MaxMessagesSettings,
    sample={"limit": 50},
)
class MaxMessages:
    """Blocks (``too_many_messages``) a model request with more than ``limit`` messages."""

    def __init__(self, config: MaxMessagesSettings) -> None:
        self.limit = config.limit

    async def __call__(self, event: ModelRequestEvent, env: Envelope) -> Block | None:
        count = len(event.request.messages)
        if count <= self.limit:
            return None
        return Block(
            reason=f"the request has {count} messages, more than {self.limit}",
            code="too_many_messages",
        )
