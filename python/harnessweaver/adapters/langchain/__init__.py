"""The LangChain v1 adapter: a harness's bus as an ``AgentMiddleware`` for ``create_agent``.

Install ``harnessweaver[langchain]``. ``docs/integrations/langchain.md`` says what maps to
what, and what LangChain cannot express.
"""

from .decisions import Answer, read_answer
from .middleware import DEFAULT_MAX_RETRIES, HarnessMiddleware, HarnessState
from .scripted import ScriptedChatModel

__all__ = [
    "DEFAULT_MAX_RETRIES",
    "Answer",
    "HarnessMiddleware",
    "HarnessState",
    "ScriptedChatModel",
    "read_answer",
]
