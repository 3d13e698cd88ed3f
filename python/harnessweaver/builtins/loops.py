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

The window is a record on the guard's state view (``_state``): by default the run's
(``scope: run``, dropped at a final ``task.end``), or a session's, user's, task's, app's or
the org's, shared by every worker on the store. A warning is given to the run whose call
earned it.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from collections.abc import Mapping
from typing import Any, Final

from pydantic import Field, JsonValue, ValidationInfo, field_validator, model_validator

from ..envelope import Envelope
from ..events import ModelRequestEvent, TaskEndEvent, ToolCallEvent
from ..middleware import middleware
from ..outcomes import Block, Continue
from ..state import StateUnavailable, StateView
from ._notes import with_note
from ._state import Guard, StateSettings, duration, final, unavailable, update, where

__all__ = ["RECORD", "LoopGuard", "LoopGuardSettings", "fingerprint"]

RECORD: Final = "calls"
"""The record's name: ``{"recent": [fingerprint, ...], "pending": [[fingerprint, tool, count,
run_id], ...]}``, the scope's last ``window`` calls and the warnings not yet given."""


WARN_AFTER: Final = 3
"""``warn_after`` when neither it nor a ``block_after`` of 4 or less is given."""


def _no_default(schema: dict[str, Any]) -> None:
    # The default of warn_after follows block_after (see _warning_follows): no one number is
    # it, and the TypeScript loader, which fills a schema's defaults, must not fill 3 in.
    schema.pop("default", None)


class LoopGuardSettings(StateSettings):
    """``warn_after`` (or ``null``: no warnings) < ``block_after`` <= ``window``; ``scope``
    and ``lifetime`` of the record. ``warn_after`` not given is 3, or ``block_after - 1``
    when that is less (none when ``block_after`` is 2): ``block_after: 3`` alone warns at 2."""

    warn_after: int | None = Field(
        default=WARN_AFTER,
        ge=2,
        description="default 3, or block_after - 1 when that is less (null when block_after is 2)",
        json_schema_extra=_no_default,
    )
    block_after: int = Field(default=5, ge=2)
    window: int = Field(default=20, ge=2, le=10_000)

    @model_validator(mode="before")
    @classmethod
    def _warning_follows(cls, data: Any) -> Any:
        """A lone ``block_after`` lower than the default warning moves the warning below it
        (one call before the refusal) instead of being refused for breaking a rule with a
        default the user never wrote."""
        if not isinstance(data, dict) or "warn_after" in data:
            return data
        block_after = data.get("block_after")
        if type(block_after) is not int or block_after > WARN_AFTER:
            return data
        return {**data, "warn_after": block_after - 1 if block_after - 1 >= 2 else None}

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


def _calls(value: Any, window: int) -> tuple[list[str], list[list[Any]]]:
    """The record's window of fingerprints and its pending warnings, ``[fingerprint, tool,
    count, run]`` each; a record that is not one starts again (empty)."""
    if not isinstance(value, dict):
        return [], []
    recent, pending = value.get("recent"), value.get("pending")
    if not isinstance(recent, list) or not all(isinstance(key, str) for key in recent):
        return [], []
    kept = [
        list(entry)
        for entry in (pending if isinstance(pending, list) else [])
        if isinstance(entry, list)
        and len(entry) == 4
        and isinstance(entry[0], str)
        and isinstance(entry[1], str)
        and isinstance(entry[2], int)
        and isinstance(entry[3], str)
    ]
    return recent[-window:], kept


@middleware(
    hooks=["tool.before", "model.before", "task.end"],
    fail_mode="closed",
    config=LoopGuardSettings,
    sample={"warn_after": 3, "block_after": 5, "window": 20},
    state=True,
)
class LoopGuard(Guard):
    """Warns the model about a tool call it keeps repeating, then refuses it
    (``Block``, ``loop_detected``)."""

    def __init__(self, config: LoopGuardSettings) -> None:
        self.warn_after = config.warn_after
        self.block_after = config.block_after
        self.window = config.window
        self.scope = config.scope
        self.life = duration(config.lifetime)

    async def __call__(
        self, event: ToolCallEvent | ModelRequestEvent | TaskEndEvent, env: Envelope
    ) -> Block | Continue | None:
        view = self.state
        try:
            if isinstance(event, ToolCallEvent):
                return await self._call(view, event, env)
            if isinstance(event, ModelRequestEvent):
                return await self._warn(view, event, env)
            if self.scope == "run" and final(event):
                await view.delete(view.key("run", env, RECORD))
            return None
        except StateUnavailable as exc:
            return unavailable(view, exc)

    async def _call(self, view: StateView, event: ToolCallEvent, env: Envelope) -> Block | None:
        key = fingerprint(event.tool.name, event.call.arguments)
        run, tool = env.run_id, event.tool.name

        def add(value: Any) -> tuple[Any, int]:
            recent, pending = _calls(value, self.window)
            recent.append(key)
            recent = recent[-self.window :]
            counts = Counter(recent)
            count = counts[key]
            pending = [p for p in pending if p[0] in counts]  # gone from the window
            mine = next((p for p in pending if p[0] == key and p[3] == run), None)
            if count >= self.block_after:
                if mine is not None:
                    pending.remove(mine)  # the refusal says it all
            elif self.warn_after is not None and count >= self.warn_after:
                if mine is None:
                    pending.append([key, tool, count, run])
                else:
                    mine[1], mine[2] = tool, count
            return {"recent": recent, "pending": pending}, count

        count = await update(view, view.key(self.scope, env, RECORD), add, life=self.life)
        if count >= self.block_after:
            return Block(
                reason=f"{tool} was called with the same arguments {count} times "
                f"within the last {self.window} tool calls{self._where}; try something else",
                code="loop_detected",
            )
        return None

    @property
    def _where(self) -> str:
        return "" if self.scope == "run" else f" {where(self.scope)}"

    async def _warn(
        self, view: StateView, event: ModelRequestEvent, env: Envelope
    ) -> Continue | None:
        run, key = env.run_id, view.key(self.scope, env, RECORD)
        record = await view.read(key)
        if not any(p[3] == run for p in _calls(record.value, self.window)[1]):
            return None  # nothing to tell this run: no write

        def take(value: Any) -> tuple[Any, list[list[Any]]]:
            recent, pending = _calls(value, self.window)
            mine = [p for p in pending if p[3] == run]
            if not mine:
                return None, []
            rest = [p for p in pending if p[3] != run]
            return {"recent": recent, "pending": rest}, mine

        mine = await update(view, key, take, life=self.life, first=record)
        if not mine:
            return None
        notes = [
            f"you have called {tool} with the same arguments {count} times in your last "
            f"{self.window} tool calls{self._where}; from {self.block_after} such calls on it "
            "will be refused, so try something else."
            for _, tool, count, _ in mine
        ]
        return Continue(modified=with_note(event, " ".join(notes)))
