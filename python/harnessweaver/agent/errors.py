"""The exceptions of the run loop: each has a stable ``kind`` and ``rule`` like every
harnessweaver error, and a message that names the bad value and the rule."""

from __future__ import annotations

from ..errors import HarnessweaverError

__all__ = ["AgentError", "JournalError", "ProviderError", "ScriptExhaustedError"]


class AgentError(HarnessweaverError):
    """The run loop was set up or driven in a way that breaks a rule (a tool, an option, a
    resume without the decision it needs...)."""


class ProviderError(AgentError):
    """A model provider could not produce a :class:`~harnessweaver.ModelResponse`."""


class ScriptExhaustedError(ProviderError):
    """A :class:`ScriptedProvider` was asked for more responses than it was given."""


class JournalError(AgentError):
    """A trajectory journal could not be read back."""
