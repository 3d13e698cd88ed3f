"""A plugin for the state tests (``plugins: {local: [state_plugin]}``): ``stx.cap``, a
stateful middleware counting calls per user, and ``stx.plain``, a stateless one."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

import harnessweaver as hw
from harnessweaver.state import Stateful, StateUnavailable

BUILT: list[Cap] = []
"""Every Cap built, in order (the tests read the views the loader gave them)."""


class CapSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    limit: int = 2
    scope: str = "user"


@hw.middleware(hooks=["tool.before"], fail_mode="closed", config=CapSettings, state=True)
class Cap(Stateful):
    def __init__(self, config: CapSettings) -> None:
        self.config = config
        BUILT.append(self)

    async def __call__(self, event: Any, env: hw.Envelope) -> hw.Outcome | None:
        view = self.state
        try:
            key = view.key(self.config.scope, env, "calls")
            hold = f"{env.run_id}/{event.call.name}"
            got = await view.reserve(key, hold, 1, limit=self.config.limit, ttl=60)
        except StateUnavailable as exc:
            if view.fail_mode == "closed":
                return view.unavailable(exc)
            raise
        return None if got.granted else hw.Block("too many calls", code="cap")


@hw.middleware(hooks=["tool.before"], fail_mode="open")
async def plain(event: Any, env: hw.Envelope) -> None:
    return None


plugin = hw.Plugin(namespace="stx", version="1.0.0", middleware=[Cap, plain])
