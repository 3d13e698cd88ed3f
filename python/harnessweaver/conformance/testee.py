"""The Python testee: runs corpus cases on this package and reports what it observes.

``python -m harnessweaver.conformance.testee --core rust|python`` speaks the JSON-lines
protocol of ``conformance/INTERPRETING.md`` §9 on stdin/stdout. Each case runs under asyncio
and under trio (when installed; ``hello`` lists the backends); the observations must be
identical, or the case is reported as errored.
``run_case`` is also used in-process by the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from pathlib import Path
from typing import Any

from .cedar import cedar_available

__all__ = ["FEATURES", "main", "observe"]

PROTOCOL = 1
BACKENDS = ("asyncio", "trio")
FEATURES = ("timeouts", "concurrency", "harness-spec", "approvals") + (
    ("cedar",) if cedar_available() else ()
)
"""The feature tags this testee declares (INTERPRETING.md §8); ``cedar`` (I38) only when the
Cedar engine (the ``cedar`` extra) is installed."""


def _catalogue() -> dict[str, Any]:
    from .cases import find_corpus

    return dict(json.loads((find_corpus(None) / "catalogue.json").read_text(encoding="utf-8")))


class _CaseRun:
    def __init__(self, case: dict[str, Any], samples: dict[str, Any]) -> None:
        import harnessweaver as hw

        from .behaviours import Behaviours

        self.hw = hw
        self.case = case
        given = case.get("given", {})
        try:
            self.bus = hw.HookBus(
                contracts=given.get("contracts"),
                deadlines=given.get("deadlines"),
                identity=given.get("identity"),
            )
            self.refused: Exception | None = None
        except hw.HarnessweaverError as exc:  # observed as the case's error (§6.1)
            self.bus, self.refused = hw.HookBus(), exc
        now = case.get("given", {}).get("envelope", {}).get("now", "2026-11-30T12:00:00+00:00")
        self.clock = hw.FixedClock(now)
        self.contexts: dict[str, Any] = {}
        # Through self.bus: a harness case's bus is the loader's, made after these.
        self.behaviours = Behaviours(samples, self.register, lambda n: self.bus.unregister(n))
        self.emits: list[dict[str, Any]] = []
        self.harness: dict[str, Any] | None = None
        self.emitted = 0
        """How many emits the case has begun (the scripted store's ``down`` counts them)."""
        self.approvals: Any = None
        """An approvals case's book and clock (``given.approvals``, I34); None otherwise."""
        self.answers: list[dict[str, Any]] = []
        """An approvals case's answers, one per step."""

    def register(self, decl: dict[str, Any]) -> None:
        from .behaviours import CaseFault

        hw = self.hw
        overrides = dict(decl.get("register", {}))
        enabled = overrides.pop("enabled", True)
        if "in" in decl:
            overrides["layer"] = decl["in"]
        elif "enabled" in decl.get("register", {}):
            raise CaseFault("`enabled` belongs to items declared `in` a layer (INTERPRETING.md §2)")
        if not isinstance(enabled, bool):
            raise CaseFault(f"`enabled` must be true or false, got {enabled!r}")
        registered = decl.get("name") if overrides.get("name") is None else overrides["name"]
        body = self.behaviours.function(str(registered), decl.get("does", {"return": "none"}))
        kwargs: dict[str, Any] = {"hooks": decl.get("hooks"), "name": decl.get("name")}
        for key in ("band", "timeout", "fail_mode", "match", "mode"):
            if key in decl:
                kwargs[key] = decl[key]
        mw = hw.middleware(**kwargs)(body)
        if enabled is False:  # checked like any item, but not registered (I13)
            hw.declare_in(mw.spec.declaration, **overrides)
        else:
            self.bus.register(mw, **overrides)

    async def emit(self, step: dict[str, Any]) -> dict[str, Any]:
        from .behaviours import RAN, json_form

        hw = self.hw
        hook = step["emit"]
        name = step.get("context", "main")
        if name not in self.contexts:
            # A context's run id is its name (INTERPRETING.md §4, I21); its attributes are
            # ``given.contexts[name].attributes`` (I33).
            given = self.case.get("given", {}).get("contexts", {}).get(name, {})
            attributes = given.get("attributes", {})
            envelope = hw.Envelope(clock=self.clock, run_id=name, attributes=attributes)
            self.contexts[name] = hw.RunContext(envelope=envelope)
        self.emitted += 1
        if "event_as" in step:
            event = self.behaviours.sample(step["event_as"])
        elif hook in hw.EVENT_TYPES:
            data = step.get("event", self.behaviours._samples[hook])
            event = hw.EVENT_TYPES[hook].model_validate(data)
        else:
            event = None
        ran: list[str] = []
        token = RAN.set(ran)
        try:
            if "deadline" in step:  # the emit's own chain deadline (I26)
                result = await self.bus.emit(
                    hook, event, self.contexts[name], deadline=step["deadline"]
                )
            else:
                result = await self.bus.emit(hook, event, self.contexts[name])
        finally:
            RAN.reset(token)
        return {
            "hook": hook,
            "outcome": result.outcome.to_dict(),
            "event": json_form(result.event),
            "ran": ran,
            "warnings": [{"middleware": w.middleware, "text": w.text} for w in result.warnings],
        }

    async def step(self, step: dict[str, Any]) -> None:
        import anyio

        if "emit" in step:
            self.emits.append(await self.emit(step))
        elif "register" in step:
            self.register(step["register"])
        elif "unregister" in step:
            self.bus.unregister(step["unregister"])
        elif self.approvals is not None:
            self.answers.append(await self.approvals.step(step))
        elif "concurrent" in step:
            group: list[dict[str, Any] | None] = [None] * len(step["concurrent"])
            raised: list[BaseException | None] = [None] * len(step["concurrent"])

            async def one(i: int, sub: dict[str, Any]) -> None:
                # A caller error ends this emit only (§4): its siblings run to the end.
                try:
                    group[i] = await self.emit(sub)
                except self.hw.HarnessweaverError as exc:
                    raised[i] = exc

            async with anyio.create_task_group() as tg:
                for i, sub in enumerate(step["concurrent"]):
                    tg.start_soon(one, i, sub)
            self.emits.extend(e for e in group if e is not None)
            first = next((exc for exc in raised if exc is not None), None)
            if first is not None:
                raise first
        else:
            raise ValueError(f"unknown step {step!r}")

    async def run(self) -> dict[str, Any]:
        given = self.case.get("given", {})
        if "approvals" in given:  # no bus of its own: its steps are the book's (I34)
            from .approvals import ApprovalsCase

            self.approvals = ApprovalsCase(given["approvals"], self.behaviours._samples)
            return await self.observe()
        if "harness" not in given:
            return await self.observe()
        from .harness import HarnessCase

        with HarnessCase(given["harness"], self.behaviours, lambda: self.emitted) as spec:
            try:
                harness = await spec.load()
            except self.hw.SpecError as exc:  # observed with its problems; no step runs (§6.1)
                return await self.observe(exc)
            self.bus, self.harness = harness.bus, spec.document(harness)
            return await self.observe()

    async def observe(self, refused: Exception | None = None) -> dict[str, Any]:
        """Runs the declarations and the steps (none when ``refused``) and observes (§6.1)."""
        error: dict[str, Any] | None = None
        try:
            refusal = refused or self.refused
            if refusal is not None:
                raise refusal
            for decl in self.case.get("given", {}).get("middleware", []):
                self.register(decl)
            for step in self.case.get("when", []):
                await self.step(step)
        except self.hw.HarnessweaverError as exc:
            error = {"kind": exc.kind, "rule": exc.rule, "message": str(exc)}
            if isinstance(exc, self.hw.SpecError):
                from .harness import problems_json

                error["problems"] = problems_json(exc)
        seen: dict[str, Any] = {} if self.harness is None else {"harness": self.harness}
        if self.approvals is not None:
            seen["approvals"] = self.answers
        return seen | {
            "error": error,
            "chains": {
                hook: [d.name for d in self.bus.chain(hook)] for hook in self.hw.EVENT_TYPES
            },
            "emits": self.emits,
            "traces": {
                name: [_untimed(r) for r in ctx.trace] for name, ctx in self.contexts.items()
            },
        }


def _untimed(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k not in ("t_ns", "duration_ns")}


def observe(case: dict[str, Any], samples: dict[str, Any], backend: str) -> dict[str, Any]:
    """Run one case on a fresh bus under ``backend`` and return the observation (§6.1)."""
    import anyio

    async def go() -> dict[str, Any]:
        return await _CaseRun(case, samples).run()

    result: dict[str, Any] = anyio.run(go, backend=backend)
    return result


def _answer(case: dict[str, Any], samples: dict[str, Any], backends: tuple[str, ...]) -> Any:
    seen = {b: observe(case, samples, b) for b in backends}
    texts = {b: json.dumps(o, sort_keys=True) for b, o in seen.items()}
    if len(set(texts.values())) > 1:
        detail = "; ".join(f"{b}: {t}" for b, t in texts.items())
        return {"errored": True, "message": f"backends disagree: {detail}"}
    return {"actual": seen[backends[0]]}


def _serve(backends: tuple[str, ...]) -> int:
    from .behaviours import CaseFault

    samples = _catalogue()["samples"]
    out = sys.stdout
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        cmd = message.get("cmd")
        if cmd == "hello":
            import harnessweaver as hw

            reply: dict[str, Any] = {
                "protocol": PROTOCOL,
                "implementation": {
                    "name": "harnessweaver",
                    "language": "python",
                    "version": hw.__version__,
                    "core": hw.CORE,
                    "backends": list(backends),
                },
                "features": list(FEATURES),
            }
        elif cmd == "run":
            try:
                reply = _answer(message["case"], samples, backends)
            except (Exception, CaseFault, BaseExceptionGroup):
                reply = {"errored": True, "message": traceback.format_exc()}
            reply["seq"] = message.get("seq")
        elif cmd == "stop":
            return 0
        else:
            reply = {"errored": True, "message": f"unknown command {cmd!r}"}
        out.write(json.dumps(reply) + "\n")
        out.flush()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harnessweaver.conformance.testee")
    parser.add_argument("--core", choices=("rust", "python"), help="which core to run")
    parser.add_argument("--backend", choices=(*BACKENDS, "both"), default="both")
    parser.add_argument("--corpus", type=Path, help="corpus directory (for catalogue.json)")
    args = parser.parse_args(argv)
    if args.core and os.environ.get("HARNESSWEAVER_CORE") != args.core:
        # ``python -m`` imported the package, and so chose its core, before this line ran:
        # start again with the core selected from the beginning.
        env = {**os.environ, "HARNESSWEAVER_CORE": args.core}
        arguments = sys.argv[1:] if argv is None else argv
        os.execve(sys.executable, [sys.executable, "-m", __spec__.name, *arguments], env)
    if args.corpus:
        os.environ["HARNESSWEAVER_CORPUS"] = str(args.corpus)
    backends = _available() if args.backend == "both" else (args.backend,)
    return _serve(backends)


def _available() -> tuple[str, ...]:
    """asyncio, and trio when it is installed (it is an optional dependency)."""
    import importlib.util

    return tuple(b for b in BACKENDS if b == "asyncio" or importlib.util.find_spec(b) is not None)


if __name__ == "__main__":
    raise SystemExit(main())
