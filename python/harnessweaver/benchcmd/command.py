"""``harnessweaver bench SPEC``: time a harness's own emits, hook point by hook point, against
their floor (docs/bench.md). ``configure`` and ``run`` are what ``cli.py`` registers."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from ..cli import add_spec_selection

if TYPE_CHECKING:
    from ..events import Event
    from ..spec import Harness
    from .measure import HookRun

__all__ = ["configure", "run"]

EXIT_OK = 0
EXIT_ERROR = 2
_PROG = "harnessweaver bench"
_log = logging.getLogger(__name__)


def _count(least: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if value < least:
            raise argparse.ArgumentTypeError(f"must be at least {least}: {text!r}")
        return value

    return parse


def configure(parser: argparse.ArgumentParser) -> None:
    # SPEC and FILE are kept as given: the JSON document names them so
    parser.add_argument("spec", metavar="SPEC", help="the harness spec (harness.yaml)")
    add_spec_selection(parser)
    parser.add_argument(
        "--events",
        metavar="FILE",
        help='the events to time: JSON Lines of {"hook": ..., "event": {...}}, or a run '
        "journal (default: one sample event per hook point)",
    )
    parser.add_argument(
        "--hook",
        action="append",
        default=[],
        metavar="HOOK",
        help="time only this hook point (repeatable; default: every one with middleware)",
    )
    parser.add_argument(
        "--rounds",
        type=_count(3),
        default=21,
        metavar="N",
        help="rounds per hook point, the first 2 dropped as warm-up (default: 21)",
    )
    parser.add_argument(
        "--per",
        type=_count(1),
        default=200,
        metavar="N",
        help="emits (and floor passes, and calls of each middleware) per round (default: 200)",
    )
    parser.add_argument(
        "--format", choices=("text", "json"), default="text", help="text (default) or json"
    )
    parser.add_argument(
        "--dump-events",
        type=Path,
        metavar="OUT",
        help="write the events the command would time as an events file (what the Node "
        "command reads: it reads no journal), then exit",
    )


class _Refused(Exception):
    """A reason to exit 2, said on stderr."""


def run(args: argparse.Namespace) -> int:
    """Run the command; its exit status (2: the spec, the events or a hook were refused)."""
    try:
        timed = _events(args)
        harness = _load(args)
    except _Refused as exc:
        print(f"{_PROG}: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    try:
        return asyncio.run(_bench(harness, timed, args))
    except _Refused as exc:
        print(f"{_PROG}: error: {exc}", file=sys.stderr)
        return EXIT_ERROR


def _events(args: argparse.Namespace) -> list[tuple[str, Event]]:
    from ..events import EVENT_TYPES
    from .events import EventsError, read_events
    from .samples import sample_events

    unknown = [hook for hook in args.hook if hook not in EVENT_TYPES]
    if unknown:
        raise _Refused(
            f"--hook {unknown[0]!r} is not a hook point (hook points: {', '.join(EVENT_TYPES)})"
        )
    if args.events is None:
        return [(hook, event) for hook, events in sample_events().items() for event in events]
    try:
        return read_events(args.events)
    except EventsError as exc:
        raise _Refused(str(exc)) from None


def _org_beside(args: argparse.Namespace, exc: Exception) -> Path | None:
    """The spec's own ``org/`` folder, for a spec whose ``org://`` profiles found no directory
    to look in because none was given (``--org-profiles``, ``HARNESSWEAVER_ORG_PROFILES``).
    The bench times a harness and enforces nothing, so it takes the org profiles that sit
    beside the spec, as the examples keep them, and says so; ``hooks`` and every enforcement
    point still need the directories named."""
    from ..spec import SpecError
    from ..spec.resolve import NO_ORG_DIRS, ORG_PROFILES_ENV

    if args.org_profiles or os.environ.get(ORG_PROFILES_ENV) or not isinstance(exc, SpecError):
        return None
    beside = Path(args.spec).parent / "org"
    if not beside.is_dir() or not any(NO_ORG_DIRS in p.message for p in exc.problems):
        return None
    return beside


def _load(args: argparse.Namespace) -> Harness:
    """The harness, loaded as ``harnessweaver hooks`` loads it (same loader, same errors), but
    for an ``org/`` folder beside the spec taken when no org-profile directory is given."""
    from ..spec import SpecError, load
    from ..spec.resolve import ORG_PROFILES_ENV

    try:
        try:
            return load(args.spec, task=args.task, env=args.env, org_profiles=args.org_profiles)
        except SpecError as exc:
            beside = _org_beside(args, exc)
            if beside is None:
                raise
            print(
                f"{_PROG}: org:// profiles from {beside}, the spec's own org/ folder (no "
                f"--org-profiles or {ORG_PROFILES_ENV} was given)",
                file=sys.stderr,
            )
            return load(args.spec, task=args.task, env=args.env, org_profiles=[beside])
    except SpecError as exc:
        raise _Refused(f"{args.spec} does not load:\n{exc}") from None
    except Exception as exc:  # a loader bug: its type, never its message (R9)
        _log.error("%s: loading %s failed: %s", _PROG, args.spec, type(exc).__name__)
        raise _Refused(
            f"loading {args.spec} failed: {type(exc).__name__} (a bug in harnessweaver: please "
            "report it)"
        ) from None


def _selected(
    harness: Harness, timed: list[tuple[str, Event]], args: argparse.Namespace
) -> tuple[dict[str, list[Event]], list[str]]:
    """The events of each hook point to time, and notes on those with middleware left untimed.

    A hook point is timed when some event's chain (matchers applied) is non-empty; one asked
    for with ``--hook`` that cannot be timed is refused, naming it and why."""
    from .events import grouped
    from .measure import chains_of

    bus = harness.bus
    by_hook = grouped(timed)
    chosen: dict[str, list[Event]] = {}
    notes: list[str] = []
    asked = dict.fromkeys(args.hook)
    for hook in asked or [*dict.fromkeys([*by_hook, *_with_middleware(harness)])]:
        events = by_hook.get(hook, [])
        if not events:
            if asked:
                raise _Refused(f"--hook {hook}: no event of {hook} in {args.events}")
            notes.append(f"{hook}: not timed: no event of this hook point in {args.events}")
            continue
        if any(chain.names for chain in chains_of(bus, hook, events)):
            chosen[hook] = events
        elif asked:
            raise _Refused(
                f"--hook {hook}: no middleware runs there for {_source(args)} (see "
                "`harnessweaver hooks`)"
            )
    if not chosen:
        raise _Refused(f"no hook point of {args.spec} has middleware for {_source(args)}")
    return {hook: chosen[hook] for hook in by_hook if hook in chosen}, notes


def _with_middleware(harness: Harness) -> list[str]:
    from ..events import EVENT_TYPES

    return [hook for hook in EVENT_TYPES if harness.bus.chain(hook)]


def _source(args: argparse.Namespace) -> str:
    return "the sample events" if args.events is None else f"the events of {args.events}"


async def _bench(harness: Harness, timed: list[tuple[str, Event]], args: argparse.Namespace) -> int:
    try:
        chosen, notes = _selected(harness, timed, args)
        if args.dump_events is not None:
            return _dump(chosen, timed, args.dump_events)
        runs = await _measure(harness, chosen, args)
        _report(harness, runs, notes, args)
        return EXIT_OK
    finally:
        await harness.aclose()


def _dump(chosen: Mapping[str, list[Event]], timed: list[tuple[str, Event]], out: Path) -> int:
    from .events import dump_events

    try:
        count = dump_events([(hook, e) for hook, e in timed if hook in chosen], out)
    except OSError as exc:
        raise _Refused(f"{out}: cannot write it ({exc.strerror or type(exc).__name__})") from None
    print(f"{_PROG}: wrote {count} event(s) of {', '.join(chosen)} to {out}", file=sys.stderr)
    return EXIT_OK


async def _measure(
    harness: Harness, chosen: Mapping[str, list[Event]], args: argparse.Namespace
) -> list[HookRun]:
    from .measure import Unbounded, measure_hook

    runs: list[HookRun] = []
    with _progress(len(chosen) * args.rounds) as tick:
        for hook, events in chosen.items():
            try:
                run = await measure_hook(harness.bus, hook, events, args.rounds, args.per, tick)
            except Unbounded as exc:
                raise _Refused(str(exc)) from None
            runs.append(run)
    for hook_run in runs:
        if not any(hook_run.floor_batches):
            raise _Refused(f"{hook_run.hook}: the clock saw no floor time: raise --per")
    return runs


@contextmanager
def _progress(total: int) -> Iterator[Callable[[], None]]:
    """A progress bar on stderr, one step per round, when stderr is a terminal (rich's when
    it is installed); elsewhere nothing, so that logs and pipes stay clean."""
    if not sys.stderr.isatty():
        yield lambda: None
        return
    try:
        import rich  # noqa: F401 - only asked whether it is there, as report.py asks
    except ImportError:
        done = [0]

        def plain() -> None:
            done[0] += 1
            print(f"\r{_PROG}: round {done[0]}/{total}", end="", file=sys.stderr, flush=True)

        yield plain
        print(file=sys.stderr)
        return
    from rich.console import Console
    from rich.progress import Progress

    with Progress(console=Console(file=sys.stderr), transient=True) as bar:
        task = bar.add_task("timing rounds", total=total)
        yield lambda: bar.advance(task)


def _report(
    harness: Harness, runs: Sequence[HookRun], notes: Sequence[str], args: argparse.Namespace
) -> None:
    from .. import CORE
    from .report import Meta, document, print_text

    meta = Meta(
        implementation="python-rust" if CORE == "rust" else "python-pure",
        spec=str(args.spec),
        task=args.task,
        env=args.env,
        events="samples" if args.events is None else str(args.events),
        rounds=args.rounds,
        per=args.per,
    )
    uses = {entry.name: entry.use for entry in harness.entries}
    doc = document(meta, runs, uses)
    if args.format == "json":
        sys.stdout.write(json.dumps(doc, ensure_ascii=False) + "\n")
    else:
        print_text(doc, runs, notes, sys.stdout)
