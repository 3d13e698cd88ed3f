"""``harnessweaver.redact_secrets``: secrets never reach a tool or the model."""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..envelope import Envelope
from ..events import ModelRequestEvent, ToolCallEvent
from ..middleware import middleware
from ..outcomes import Continue
from ._rewrite import check_pattern, rewrite_request, rewrite_tool_call

__all__ = ["DEFAULT_PATTERNS", "REDACTED", "RedactSecrets", "RedactSettings"]

REDACTED = "[redacted]"
DEFAULT_PATTERNS: tuple[str, ...] = (
    r"sk-[A-Za-z0-9_-]{8,}",  # API keys of the sk-… family
    r"AKIA[0-9A-Z]{16}",  # AWS access key ids
    r"gh[pousr]_[A-Za-z0-9]{20,}",  # GitHub tokens
    r"xox[abprs]-[A-Za-z0-9-]{10,}",  # Slack tokens
)
"""API-key-like tokens, replaced when no ``patterns`` are given."""


class RedactSettings(BaseModel):
    """``patterns``: regular expressions whose matches are replaced by ``[redacted]``."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    patterns: tuple[str, ...] = Field(default=DEFAULT_PATTERNS, min_length=1)

    @field_validator("patterns")
    @classmethod
    def _compiles(cls, patterns: tuple[str, ...]) -> tuple[str, ...]:
        # An empty list, or a pattern matching "", would redact between every two characters.
        return tuple(check_pattern(pattern) for pattern in patterns)


@middleware(
    hooks=["tool.before", "model.before"],
    fail_mode="open",
    config=RedactSettings,
    sample={"patterns": [r"sk-[A-Za-z0-9_-]{8,}"]},
)
class RedactSecrets:
    """Replaces secrets in a tool call's arguments (string values, at any depth) and in the
    messages of a model request (their contents and the arguments of the tool calls they
    carry); answers ``Continue(modified=...)`` when it replaced something."""

    def __init__(self, config: RedactSettings) -> None:
        self.pattern = re.compile("|".join(f"(?:{p})" for p in config.patterns))

    def _redact(self, text: str) -> str:
        return self.pattern.sub(REDACTED, text)

    async def __call__(
        self, event: ToolCallEvent | ModelRequestEvent, env: Envelope
    ) -> Continue | None:
        if isinstance(event, ToolCallEvent):
            modified: ToolCallEvent | ModelRequestEvent | None = rewrite_tool_call(
                event, self._redact
            )
        else:
            modified = rewrite_request(event, self._redact)
        return None if modified is None else Continue(modified=modified)
