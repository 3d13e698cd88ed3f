"""``harnessweaver.redact_secrets``: secrets never reach a tool or the model."""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, JsonValue, field_validator

from ..envelope import Envelope
from ..events import Message, ModelRequestEvent, ToolCallEvent
from ..middleware import middleware
from ..outcomes import Continue

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
    patterns: tuple[str, ...] = DEFAULT_PATTERNS

    @field_validator("patterns")
    @classmethod
    def _compiles(cls, patterns: tuple[str, ...]) -> tuple[str, ...]:
        for pattern in patterns:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"invalid regular expression {pattern!r}: {exc}") from None
        return patterns


@middleware(
    hooks=["tool.before", "model.before"],
    fail_mode="open",
    config=RedactSettings,
    sample={"patterns": [r"sk-[A-Za-z0-9_-]{8,}"]},
)
class RedactSecrets:
    """Replaces secrets in a tool call's arguments (string values, at any depth) and in the
    contents of the messages of a model request; answers ``Continue(modified=...)`` when it
    replaced something."""

    def __init__(self, config: RedactSettings) -> None:
        self.pattern = re.compile("|".join(f"(?:{p})" for p in config.patterns))

    async def __call__(
        self, event: ToolCallEvent | ModelRequestEvent, env: Envelope
    ) -> Continue | None:
        if isinstance(event, ToolCallEvent):
            arguments = self._value(event.call.arguments)
            if arguments == event.call.arguments:
                return None
            call = event.call.model_copy(update={"arguments": arguments})
            return Continue(modified=event.model_copy(update={"call": call}))
        messages = self._messages(event.request.messages)
        if messages is None:
            return None
        request = event.request.model_copy(update={"messages": messages})
        return Continue(modified=event.model_copy(update={"request": request}))

    def _value(self, value: JsonValue) -> JsonValue:
        if isinstance(value, str):
            return self.pattern.sub(REDACTED, value)
        if isinstance(value, dict):
            return {key: self._value(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self._value(item) for item in value]
        return value

    def _messages(self, messages: Sequence[Message]) -> tuple[Message, ...] | None:
        changed = False
        out = []
        for message in messages:
            content = self.pattern.sub(REDACTED, message.content)
            if content != message.content:
                changed = True
                message = message.model_copy(update={"content": content})
            out.append(message)
        return tuple(out) if changed else None
