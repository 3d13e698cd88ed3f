"""What ``harnessweaver bench`` prints: the JSON document (``--format json``), or a table and
the lines a user can act on.

The table is drawn with ``rich`` when it is installed (the ``conformance`` extra), as aligned
plain text when it is not, as the conformance report does (``conformance/console.py``). Off a
terminal ``rich`` prints no colour and no escape sequences.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from .measure import HookRun, Stop, percentile

__all__ = ["Meta", "document", "fmt_us", "print_text"]

_KINDS = ("continue", "block", "suspend", "escalate", "retry")
"""Outcome kinds in the order they are shown (then any other, as met)."""
_COLUMNS = (
    "hook",
    "middleware",
    "emit p50",
    "emit p99",
    "floor p50",
    "ratio",
    "dominant (share)",
    "outcomes",
)
FOOTER = (
    "floor = the same middleware awaited in a plain loop in the same rounds (no timeout, fail "
    "mode, trace or combining); ratio = what the bus adds around them: the median over rounds "
    "of (emit batch time / floor batch time). Times are per emit, in µs."
)


@dataclass(frozen=True, slots=True)
class Meta:
    """What was run: the head of the JSON document."""

    implementation: str
    spec: str
    task: str | None
    env: str | None
    events: str
    rounds: int
    per: int


def _each(run: HookRun, uses: Mapping[str, str | None]) -> list[dict[str, Any]]:
    p50s = {name: percentile(times, 0.5) for name, times in run.each.items()}
    total = sum(p50s.values())
    return [
        {
            "name": name,
            "use": uses.get(name),
            "p50_ns": p50,
            "share": p50 / total if total > 0 else 1.0 / len(p50s),
        }
        for name, p50 in p50s.items()
    ]


def _outcomes(run: HookRun) -> dict[str, int]:
    known = {kind: run.outcomes[kind] for kind in _KINDS if run.outcomes[kind]}
    return known | {kind: n for kind, n in run.outcomes.items() if kind not in known and n}


def hook_entry(run: HookRun, uses: Mapping[str, str | None]) -> dict[str, Any]:
    """One hook point's entry of the document, keys in the contract's order."""
    each = _each(run, uses)
    top = max(each, key=lambda item: item["share"])
    return {
        "hook": run.hook,
        "middleware": list(run.middleware),
        "events": run.events,
        "emit": {"p50_ns": percentile(run.emits, 0.5), "p99_ns": percentile(run.emits, 0.99)},
        "floor": {"p50_ns": percentile(run.floors, 0.5), "p99_ns": percentile(run.floors, 0.99)},
        "ratio": run.ratio,
        "outcomes": _outcomes(run),
        "dominant": {"name": top["name"], "use": top["use"], "share": top["share"]},
        "each": each,
    }


def document(meta: Meta, runs: Sequence[HookRun], uses: Mapping[str, str | None]) -> dict[str, Any]:
    """The ``--format json`` document (issue 34's shared contract: the Node command writes the
    same keys in the same order)."""
    return {
        "harnessweaver_bench": 1,
        "implementation": meta.implementation,
        "spec": meta.spec,
        "task": meta.task,
        "env": meta.env,
        "events": meta.events,
        "rounds": meta.rounds,
        "per": meta.per,
        "hooks": [hook_entry(run, uses) for run in runs],
    }


def fmt_us(ns: float) -> str:
    """Nanoseconds as µs with 3 significant digits: ``0.912``, ``12.3``, ``1230``."""
    us = ns / 1000
    if us >= 999.5:
        return f"{float(f'{us:.3g}'):.0f}"
    return f"{us:#.3g}".rstrip(".")


def _named(name: str, use: str | None) -> str:
    return f"`{name}`" if use is None or use == name else f"`{name}` ({use})"


def _row(entry: Mapping[str, Any]) -> list[str]:
    top = entry["dominant"]
    outcomes = ", ".join(f"{kind} {n}" for kind, n in entry["outcomes"].items())
    return [
        entry["hook"],
        ", ".join(entry["middleware"]),
        fmt_us(entry["emit"]["p50_ns"]),
        fmt_us(entry["emit"]["p99_ns"]),
        fmt_us(entry["floor"]["p50_ns"]),
        f"{entry['ratio']:.2f}x",
        f"{top['name']} ({top['share']:.0%})",
        outcomes,
    ]


_VERBS = {"block": "blocked", "suspend": "suspended", "escalate": "escalated", "retry": "retried"}


def stop_lines(hook: str, stops: Sequence[Stop], events: str, count: int) -> list[str]:
    """What to do about the events the chain did not let through: one line per middleware
    and outcome that stopped them (the sample event; or how many of the file's)."""
    groups: dict[tuple[str, str | None, str | None], int] = {}
    for stop in stops:
        key = (stop.kind, stop.middleware, stop.code)
        groups[key] = groups.get(key, 0) + 1
    lines = []
    for (kind, middleware, code), stopped in groups.items():
        verb = _VERBS.get(kind, f"answered {kind}")
        who = "a middleware" if middleware is None else f"`{middleware}`"
        coded = "" if code is None else f" (code {code})"
        if events == "samples":
            subject, after, hint = (
                "the sample event was",
                "the emit",
                "time your own events with --events FILE",
            )
        else:
            subject = f"{stopped} of {count} events of {events} {'was' if stopped == 1 else 'were'}"
            after, hint = "their emits", "that is what those events cost"
        result = (
            f"later middleware did not run in {after}"
            if kind == "block"
            else f"the outcome of {after} was {kind}, not continue"
        )
        lines.append(f"{hook}: {subject} {verb} by {who}{coded}: {result}; {hint}")
    return lines


def action_lines(doc: Mapping[str, Any], runs: Sequence[HookRun]) -> list[str]:
    """The lines under the table: who dominates each chain, and which events were stopped."""
    lines: list[str] = []
    for entry, run in zip(doc["hooks"], runs, strict=True):
        top = entry["dominant"]
        if len(entry["each"]) > 1:
            lines.append(
                f"{entry['hook']}: {_named(top['name'], top['use'])} is {top['share']:.0%} "
                "of the chain's own time"
            )
        lines.extend(_drift(entry, run))
        lines.extend(stop_lines(run.hook, run.stops, doc["events"], run.events))
    return lines


def _drift(entry: Mapping[str, Any], run: HookRun) -> list[str]:
    """A line when timed emits were stopped though no event was on its first emit: a stateful
    middleware (a rate or budget guard) changed its answer as the rounds went on."""
    stopped = {kind: n for kind, n in entry["outcomes"].items() if kind != "continue"}
    if run.stops or not stopped:
        return []
    counts = ", ".join(f"{kind} {n}" for kind, n in stopped.items())
    timed = sum(entry["outcomes"].values())
    return [
        f"{run.hook}: {sum(stopped.values())} of {timed} timed emits were not let through "
        f"({counts}) though every event came through its first emit: a stateful middleware "
        "(a rate or budget guard) changed its answer as the rounds went on, so these times are "
        "partly those of stopped chains"
    ]


def title(doc: Mapping[str, Any]) -> str:
    chosen = ", ".join(f"{key} {doc[key]}" for key in ("task", "env") if doc[key] is not None)
    return (
        f"harnessweaver bench {doc['spec']}{f' ({chosen})' if chosen else ''} on "
        f"{doc['implementation']}: {doc['rounds']} rounds (first 2 dropped) of {doc['per']} "
        f"per batch, events: {doc['events']}"
    )


def print_text(
    doc: Mapping[str, Any], runs: Sequence[HookRun], notes: Sequence[str], out: TextIO
) -> None:
    """The table, the lines to act on, ``notes`` (hook points not timed) and the footer."""
    rows = [_row(entry) for entry in doc["hooks"]]
    lines = [*action_lines(doc, runs), *notes]
    try:
        import rich  # noqa: F401 - only asked whether it is there
    except ImportError:
        _plain(title(doc), rows, lines, out)
    else:
        _rich(title(doc), rows, lines, out)


def _plain(heading: str, rows: Sequence[Sequence[str]], lines: Sequence[str], out: TextIO) -> None:
    cells = [list(_COLUMNS), *(list(row) for row in rows)]
    widths = [max(len(line[i]) for line in cells) for i in range(len(_COLUMNS))]

    def show(line: Sequence[str]) -> str:
        return "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True))

    print(heading, file=out)
    print(show(cells[0]).rstrip(), file=out)
    print("  ".join("-" * width for width in widths), file=out)
    for row in cells[1:]:
        print(show(row).rstrip(), file=out)
    print(file=out)
    for text in [*lines, FOOTER]:
        print(text, file=out)


def _rich(heading: str, rows: Sequence[Sequence[str]], lines: Sequence[str], out: TextIO) -> None:
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    try:
        tty = out.isatty()
    except (AttributeError, ValueError):
        tty = False
    console = Console(
        file=out,
        force_terminal=tty,
        color_system="auto" if tty else None,
        width=None if tty else 200,
        highlight=False,
        markup=False,
        emoji=False,
    )
    console.print(Text(heading), soft_wrap=True)  # a table's title would wrap at its width
    table = Table(box=box.SIMPLE_HEAD)
    for column in _COLUMNS:
        numeric = column not in ("hook", "middleware", "dominant (share)", "outcomes")
        table.add_column(
            column,
            justify="right" if numeric else "left",
            no_wrap=column != "middleware",
            overflow="fold",
        )
    for row in rows:
        table.add_row(*row)
    console.print(table)
    for line in lines:
        console.print(Text(line), soft_wrap=True)
    console.print(Text(FOOTER, style="dim"), soft_wrap=True)
