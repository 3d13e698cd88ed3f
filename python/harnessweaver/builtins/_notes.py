"""Telling the model something: how the built-in guards give a warning.

The bus has no "warning" outcome, and none of its outcomes fits one: ``Escalate`` ends the run,
``Suspend`` pauses it, ``Retry`` repeats the operation and ``Block`` refuses it. A guard's
warning is meant for the party that can act on it, the model (it is the model that loops or
spends), so a guard warns by adding a note to the next model request at ``model.before``:
``Continue(modified=...)``. The warning is then in the request the model receives, in the
trace (the guard's ``model.before`` record says ``modified: true``), and in whatever the run
loop journals about the request.

A note never adds more than one message to a request, however many guards warn at once: the
first appends a user message, and a later one, finding a user message last, extends it. That
keeps a chain of warning guards inside the ``model.before`` contract (the message list may
grow by at most one user message, and only the last message may change).
"""

from __future__ import annotations

from typing import Final

from ..events import Message, ModelRequestEvent

__all__ = ["NOTE_PREFIX", "with_note"]

NOTE_PREFIX: Final = "[harness notice]"
"""How every note starts, so a reader (or the model) can tell it from the user's words."""


def with_note(event: ModelRequestEvent, note: str) -> ModelRequestEvent:
    """``event`` with ``note`` told to the model: added to the last message when that is a
    user message, else appended as a new user message."""
    text = f"{NOTE_PREFIX} {note}"
    messages = event.request.messages
    if messages and messages[-1].role == "user":
        last = messages[-1]
        joined = f"{last.content}\n\n{text}" if last.content else text
        messages = (*messages[:-1], last.model_copy(update={"content": joined}))
    else:
        messages = (*messages, Message(role="user", content=text))
    request = event.request.model_copy(update={"messages": messages})
    return event.model_copy(update={"request": request})
