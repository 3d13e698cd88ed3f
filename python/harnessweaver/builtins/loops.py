"""``harnessweaver.loop_guard``: an agent that calls the same tool with the same arguments
again and again is warned, then refused.

Two calls are the same when their fingerprints are: the SHA-256 of the tool's name and the
canonical JSON of the arguments (keys sorted, no white space, ``1.0`` written as ``1``), so
the order in which a model happened to write the keys makes no difference.

At ``tool.before`` the guard counts, per run, how many of the run's last ``window`` tool calls
(this one included) had this call's fingerprint:

- from ``block_after`` on, the call is refused: ``Block``, code ``loop_detected``; the model
  receives the refusal and its reason, and must try something else;
- from ``warn_after`` on, the call runs, and the model is warned at its next request
  (``model.before``): a note, appended to the request, says which call repeats, how often,
  and when it will be refused (see ``_notes``: the bus has no warning outcome, and the model
  is the one that can stop looping). Each warning is given once.

Why these choices:

- The count is over a sliding window, not the whole run, so a tool polled legitimately now
  and then (``get_status()``) is not refused after its fifth call of a long run, and the
  state of a run is bounded (``window`` fingerprints).
- Refused calls are counted too: a model that insists keeps being refused until it has made
  other calls, instead of being let through every other time.
- The warning goes to the model rather than to an ``Escalate`` (which ends the run) or a
  ``Retry`` (which would repeat the very call that is looping).

Narrowing the guard's hooks to ``tool.before`` keeps the refusals and drops the warnings.
At ``task.end`` the run's state is dropped (see ``_runs``).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter, deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationInfo, field_validator

from ..envelope import Envelope
from ..events import ModelRequestEvent, TaskEndEvent, ToolCallEvent
from ..middleware import middleware
from ..outcomes import Block, Continue
from ._notes import with_note
from ._runs import RunStates

__all__ = ["LoopGuard", "LoopGuardSettings", "fingerprint"]


class LoopGuardSettings(BaseModel):
    """``warn_after`` (or ``null``: no warnings) < ``block_after`` <= ``window``."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    warn_after: int | None = Field(default=3, ge=2)
    block_after: int = Field(default=5, ge=2)
    window: int = Field(default=20, ge=2, le=10_000)

    @field_validator("block_after")
    @classmethod
    def _after_warning(cls, block_after: int, info: ValidationInfo) -> int:
        warn_after = info.data.get("warn_after")
        if warn_after is not None and block_after <= warn_after:
            raise ValueError(
                f"block_after ({block_after}) must be greater than warn_after ({warn_after})"
            )
        return block_after

    @field_validator("window")
    @classmethod
    def _holds_the_limit(cls, window: int, info: ValidationInfo) -> int:
        block_after = info.data.get("block_after")
        if block_after is not None and window < block_after:
            raise ValueError(
                f"window ({window}) must be at least block_after ({block_after}): "
                "a window shorter than the limit never reaches it"
            )
        return window


def _canonical(value: Any) -> Any:
    # Integral floats as ints: a model may write 2 or 2.0 for the same argument.
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {key: _canonical(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_canonical(item) for item in value]
    return value


def fingerprint(tool: str, arguments: Mapping[str, JsonValue]) -> str:
    """The SHA-256 (hex) of ``tool`` and the canonical JSON of ``arguments``."""
    text = json.dumps(
        [tool, _canonical(dict(arguments))],
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(slots=True)
class _Calls:
    """One run's last calls: their fingerprints in order, how often each occurs among them,
    and the warnings not yet given (fingerprint -> tool name and count)."""

    recent: deque[str]
    counts: Counter[str] = field(default_factory=Counter)
    pending: dict[str, tuple[str, int]] = field(default_factory=dict)

    def add(self, key: str) -> int:
        """Record a call; how many of the window's calls, this one included, share its key."""
        if len(self.recent) == self.recent.maxlen:
            oldest = self.recent.popleft()
            self.counts[oldest] -= 1
            if not self.counts[oldest]:
                del self.counts[oldest]
                self.pending.pop(oldest, None)
        self.recent.append(key)
        self.counts[key] += 1
        return self.counts[key]

    def dump(self) -> dict[str, Any]:
        """The window and the pending warnings, as JSON values (see ``_runs``)."""
        pending = [[key, tool, count] for key, (tool, count) in self.pending.items()]
        return {"recent": list(self.recent), "pending": pending}

    def restore(self, data: Any) -> None:
        """Take a :meth:`dump`; the window keeps this state's own length."""
        try:
            recent = [str(key) for key in data["recent"]]
            pending = {str(k): (str(tool), int(count)) for k, tool, count in data["pending"]}
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"not a loop_guard state: {type(exc).__name__}") from None
        self.recent.clear()
        self.recent.extend(recent)
        self.counts = Counter(self.recent)
        self.pending = {key: item for key, item in pending.items() if key in self.counts}


@middleware(
    hooks=["tool.before", "model.before", "task.end"],
    fail_mode="closed",
    config=LoopGuardSettings,
    sample={"warn_after": 3, "block_after": 5, "window": 20},
)
class LoopGuard:
    """Warns the model about a tool call it keeps repeating, then refuses it
    (``Block``, ``loop_detected``)."""

    def __init__(self, config: LoopGuardSettings) -> None:
        self.warn_after = config.warn_after
        self.block_after = config.block_after
        self.window = config.window
        self.runs: RunStates[_Calls] = RunStates(lambda: _Calls(deque(maxlen=config.window)))

    async def __call__(
        self, event: ToolCallEvent | ModelRequestEvent | TaskEndEvent, env: Envelope
    ) -> Block | Continue | None:
        if isinstance(event, ToolCallEvent):
            return self._call(event, env.run_id)
        if isinstance(event, ModelRequestEvent):
            return self._warn(event, env.run_id)
        self.runs.end(env.run_id, event)
        return None

    def _call(self, event: ToolCallEvent, run_id: str) -> Block | None:
        calls = self.runs[run_id]
        key = fingerprint(event.tool.name, event.call.arguments)
        count = calls.add(key)
        if count >= self.block_after:
            calls.pending.pop(key, None)  # the refusal says it all
            return Block(
                reason=f"{event.tool.name} was called with the same arguments {count} times "
                f"within the last {self.window} tool calls; try something else",
                code="loop_detected",
            )
        if self.warn_after is not None and count >= self.warn_after:
            calls.pending[key] = (event.tool.name, count)
        return None

    def _warn(self, event: ModelRequestEvent, run_id: str) -> Continue | None:
        calls = self.runs.peek(run_id)
        if calls is None or not calls.pending:
            return None
        notes = [
            f"you have called {tool} with the same arguments {count} times in your last "
            f"{self.window} tool calls; from {self.block_after} such calls on it will be "
            "refused, so try something else."
            for tool, count in calls.pending.values()
        ]
        calls.pending.clear()
        return Continue(modified=with_note(event, " ".join(notes)))
