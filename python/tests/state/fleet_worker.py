"""A Python worker process of the fleet tests (test_fleet.py) and the large benchmark run:
``workers`` asyncio tasks in this process, each making ``calls`` model calls through a harness
loaded from ``spec`` (whose ``state:`` names the shared store).

``mode`` ``loop``: each call is a run of the run loop (``harness.run``) whose scripted model
answers once with ``amount`` output tokens; ``bus``: each call is ``model.before`` and, when let
through, ``model.after`` emitted on the harness's bus. Prints one JSON line:
``{"allowed": [amounts], "codes": {code: count}}``.

    python fleet_worker.py <spec> <name> <mode> <workers> <calls> <amounts,...> [delays-ms,...]
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections import Counter
from typing import Any

import harnessweaver as hw

ATTRIBUTES = {"user": "fleet-user", "app": "fleet"}


def _code(outcome: Any) -> str | None:
    if isinstance(outcome, hw.Block | hw.Retry):
        return str(getattr(outcome, "code", None) or type(outcome).__name__.lower())
    return None


async def _bus_call(harness: Any, run_id: str, amount: int, pause: float) -> str | None:
    ctx = hw.RunContext(hw.Envelope(run_id=run_id, attributes=ATTRIBUTES))
    text = hw.Message(role="user", content=f"call {run_id}")
    request = hw.ModelRequestEvent(step=1, request=hw.ModelRequest(model="m", messages=(text,)))
    before = await harness.bus.emit("model.before", request, ctx)
    refused = _code(before.outcome)
    if refused is not None:
        return refused
    await asyncio.sleep(pause)
    usage = hw.Usage(input_tokens=0, output_tokens=amount)
    answer = hw.Message(role="assistant", content=f"answer {run_id}")
    response = hw.ModelResponseEvent(step=1, response=hw.ModelResponse(message=answer, usage=usage))
    after = await harness.bus.emit("model.after", response, ctx)
    late = _code(after.outcome)
    return None if late is None else f"after:{late}"


async def _loop_call(harness: Any, run_id: str, amount: int, pause: float) -> str | None:
    usage = hw.Usage(input_tokens=0, output_tokens=amount)
    provider = hw.ScriptedProvider([hw.ScriptedProvider.text("done", usage=usage)])
    ctx = hw.RunContext(hw.Envelope(run_id=run_id, attributes=ATTRIBUTES))
    await asyncio.sleep(pause)
    result = await harness.with_agent(provider=provider).run("go", ctx=ctx)
    if provider.requests:
        return None if result.exit_reason == "completed" else f"after:{result.exit_reason}"
    outcome = result.exit.model_dump(exclude_none=True)
    return str(outcome.get("code") or outcome.get("exit_reason"))


async def main(argv: list[str]) -> None:
    spec, name, mode, workers, calls, amounts_text = argv[:6]
    amounts = [int(a) for a in amounts_text.split(",")]
    delays = [float(d) / 1000 for d in (argv[6] if len(argv) > 6 else "").split(",") if d]
    harness = hw.load(spec)
    ready = os.environ.get("HW_FLEET_READY")
    if ready:  # loaded: the fleet starts once every worker is
        open(os.path.join(ready, f"py-{name}"), "w").close()
    go = os.environ.get("HW_FLEET_GO")
    while go and not os.path.exists(go):  # every worker starts at once
        await asyncio.sleep(0.005)
    call = _bus_call if mode == "bus" else _loop_call
    allowed: list[int] = []
    codes: Counter[str] = Counter()

    async def worker(number: int) -> None:
        for i in range(int(calls)):
            amount = amounts[(number + i) % len(amounts)]
            pause = delays[(number + i) % len(delays)] if delays else 0.0
            if pause:
                await asyncio.sleep(pause)
            code = await call(harness, f"py-{name}-{number}-{i}", amount, pause)
            if code is None:
                allowed.append(amount)
            else:
                codes[code] += 1

    await asyncio.gather(*(worker(n) for n in range(int(workers))))
    print(json.dumps({"allowed": allowed, "codes": dict(codes)}), flush=True)
    close = getattr(harness, "aclose", None) or getattr(
        getattr(harness, "state", None), "close", None
    )
    if close is not None:
        await close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
