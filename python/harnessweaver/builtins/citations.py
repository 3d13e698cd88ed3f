"""``harnessweaver.require_citations``: answers must cite their sources as ``[1]``, ``[2]``…"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict

from ..envelope import Envelope
from ..events import ModelResponseEvent
from ..middleware import middleware
from ..outcomes import Retry

__all__ = ["CitationSettings", "RequireCitations"]

CITATION = re.compile(r"\[\d+\]")
"""A numbered citation such as ``[1]`` or ``[12]``."""


class CitationSettings(BaseModel):
    """``required``: whether an answer without a citation is asked for again."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    required: bool = True


@middleware(
    hooks=["model.after"],
    fail_mode="open",
    config=CitationSettings,
    sample={"required": True},
)
class RequireCitations:
    """Asks for the answer again (``Retry``, ``missing_citation``) when its text cites nothing.

    Only text answers are judged: a response that calls tools, or has no text, passes.
    """

    def __init__(self, config: CitationSettings) -> None:
        self.required = config.required

    async def __call__(self, event: ModelResponseEvent, env: Envelope) -> Retry | None:
        message = event.response.message
        if not self.required or message.tool_calls or not message.content.strip():
            return None
        if CITATION.search(message.content):
            return None
        return Retry(reason="the answer cites no source", code="missing_citation")
