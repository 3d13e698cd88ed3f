"""``harnessweaver.tool_allowlist`` (only the tools on its list may run) and
``harnessweaver.tool_denylist`` (the tools on its list may not)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ..envelope import Envelope
from ..events import ToolCallEvent
from ..middleware import middleware
from ..outcomes import Block

__all__ = ["AllowlistSettings", "DenylistSettings", "ToolAllowlist", "ToolDenylist"]


class AllowlistSettings(BaseModel):
    """``allow``: the names of the tools that may be called."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    allow: tuple[str, ...] = Field(min_length=1)


@middleware(
    hooks=["tool.before"],
    fail_mode="closed",
    config=AllowlistSettings,
    sample={"allow": ["search", "calculator"]},
)
class ToolAllowlist:
    """Blocks (``tool_not_allowed``) every call of a tool that is not on the allow list."""

    def __init__(self, config: AllowlistSettings) -> None:
        self.allow = frozenset(config.allow)

    async def __call__(self, event: ToolCallEvent, env: Envelope) -> Block | None:
        if event.tool.name in self.allow:
            return None
        return Block(reason=f"tool {event.tool.name!r} is not allowed", code="tool_not_allowed")


class DenylistSettings(BaseModel):
    """``deny``: the names of the tools that may not be called."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    deny: tuple[str, ...] = Field(min_length=1)


@middleware(
    hooks=["tool.before"],
    fail_mode="closed",
    config=DenylistSettings,
    sample={"deny": ["delete_repository"]},
)
class ToolDenylist:
    """Blocks (``tool_denied``) every call of a tool that is on the deny list (exact names)."""

    def __init__(self, config: DenylistSettings) -> None:
        self.deny = frozenset(config.deny)

    async def __call__(self, event: ToolCallEvent, env: Envelope) -> Block | None:
        if event.tool.name not in self.deny:
            return None
        return Block(reason=f"tool {event.tool.name!r} is denied", code="tool_denied")
