"""Showing a loaded harness's chains: a text listing, JSON for tools, a mermaid flowchart.

Every hook point of the catalogue is shown, in catalogue order, with its middleware in the
order they run (``harness.chains()``); a hook point with no middleware is shown as empty.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypedDict

from .._pycore.catalogue import HOOKS, INBOUND

if TYPE_CHECKING:
    from .loader import Harness, HarnessEntry

__all__ = ["FORMATS", "match_text", "render", "render_json", "render_mermaid", "render_text"]

FORMATS = ("text", "json", "mermaid")


class Only(TypedDict):
    """The match keys (I22) whose chains are shown: a tool's on the tool hook points, a
    model's on ``model.before``; ``None``: every middleware."""

    tool: str | None
    model: str | None


_COLUMNS = ("#", "middleware", "use", "band", "fail mode", "timeout", "layer", "declared in")
_OPERATIONS = {"task": "task", "step": "step", "model": "model call", "tool": "tool call"}


def timeout_text(seconds: float | None) -> str:
    """A timeout as it would be written: ``2s``, ``250ms``, ``1.5s``; ``-`` for none."""
    if seconds is None:
        return "-"
    if seconds < 1:
        return f"{round(seconds * 1000, 6):g}ms"
    return f"{round(seconds, 9):g}s"


def match_text(match: Mapping[str, tuple[str, ...]] | None) -> str:
    """A matcher as it would be written: ``tool: refund_*, search``; ``-`` for none (I22)."""
    if not match:
        return "-"
    return "; ".join(f"{key}: {', '.join(patterns)}" for key, patterns in match.items())


def _direction(hook: str) -> str:
    return "inbound" if dict(HOOKS)[hook] == INBOUND else "outbound"


def _order(hook: str) -> str:
    return "outermost first" if _direction(hook) == "inbound" else "innermost first"


def _heading(harness: Harness, hook: str) -> str:
    """Direction and run order, and the chain deadline when the hook point has one (I26)."""
    deadline = harness.bus.deadline(hook)
    shown = "" if deadline is None else f", deadline {timeout_text(deadline)}"
    return f"{_direction(hook)}, {_order(hook)}{shown}"


def _row(position: int, entry: HarnessEntry, matched: bool, audited: bool) -> tuple[str, ...]:
    decl = entry.declaration
    row: tuple[str, ...] = (
        str(position),
        entry.name,  # as the trace names it: a guardrail's label says nothing a trace does
        entry.use or "-",
        decl.band,
        decl.fail_mode,
        timeout_text(decl.timeout),
    )
    if matched:
        row += (match_text(decl.match),)
    if audited:
        row += (decl.mode,)
    return (*row, entry.layer or "(code)", "-" if entry.source is None else str(entry.source))


def _title(harness: Harness, only: Only) -> str:
    shown = "".join(f", {key}: {value}" for key, value in only.items() if value is not None)
    if harness.mode is not None:  # I25: a harness-wide mode
        shown += f", mode: {harness.mode}"
    return (
        f"chains of {harness.spec.name if harness.spec else 'a harness built in code'} "
        f"(task: {harness.task or 'none'}, "
        f"env: {harness.env or 'none'}{shown}), each in run order"
    )


def render_text(harness: Harness, only: Only) -> str:
    """Every hook point with its chain: position, name (as the trace names it), use, band,
    fail mode, timeout, the matcher when any middleware has one (I22), the mode when any is
    audited (I25), layer and the file and line that declared it. ``only``: the tool and model
    whose chains the hook points carrying them show."""
    chains = harness.chains(**only)
    everyone = [e for entries in chains.values() for e in entries]
    matched = any(e.declaration.match for e in everyone)
    audited = any(e.declaration.mode == "audit" for e in everyone)
    extra = (("match",) if matched else ()) + (("mode",) if audited else ())
    columns = _COLUMNS[:6] + extra + _COLUMNS[6:]
    rows = [_row(i, e, matched, audited) for es in chains.values() for i, e in enumerate(es, 1)]
    widths = [max(len(r[k]) for r in [columns, *rows]) for k in range(len(columns))]

    def line(cells: tuple[str, ...]) -> str:
        return "  " + "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

    out = [_title(harness, only)]
    for hook, entries in chains.items():
        out.append("")
        out.append(f"{hook}  ({_heading(harness, hook)})")
        if not entries:
            out.append("  (none)")
            continue
        out.append(line(columns))
        for i, entry in enumerate(entries, 1):
            out.append(line(_row(i, entry, matched, audited)))
            if entry.loads:  # I38: the files the item read, under its row
                out.append("     loads: " + ", ".join(entry.loads))
    return "\n".join(out) + "\n"


def _entry_json(entry: HarnessEntry) -> dict[str, Any]:
    decl = entry.declaration
    shown: dict[str, Any] = {
        "name": entry.name,
        "label": entry.label,
        "use": entry.use,
        "band": decl.band,
        "fail_mode": decl.fail_mode,
        "timeout": decl.timeout,
        "layer": entry.layer,
        "file": entry.file,
        "line": entry.line,
    }
    if decl.match:  # I22: only a middleware with a matcher says one (absent: every event)
        shown["match"] = {key: list(patterns) for key, patterns in decl.match.items()}
    if decl.mode == "audit":  # I25: only an audited middleware says so (absent: enforce)
        shown["mode"] = "audit"
    if entry.loads:  # I38: only an item that read files says which (absent: none)
        shown["loads"] = list(entry.loads)
    return shown


def render_json(harness: Harness, only: Only) -> str:
    """``{"spec", "task", "env", "hooks": [{"hook", "direction", "chain": [...]}]}``, and
    ``"tool"`` (``"model"``) when the hook points carrying it show one tool's (model's) chain
    (I22)."""
    hooks = []
    for hook, entries in harness.chains(**only).items():
        shown: dict[str, Any] = {"hook": hook, "direction": _direction(hook)}
        deadline = harness.bus.deadline(hook)
        if deadline is not None:  # I26: only a hook point with a chain deadline says one
            shown["deadline"] = deadline
        shown["chain"] = [_entry_json(entry) for entry in entries]
        hooks.append(shown)
    document: dict[str, Any] = {
        "spec": None if harness.spec is None else str(harness.spec),
        "task": harness.task,
        "env": harness.env,
        "hooks": hooks,
    }
    document.update({key: value for key, value in only.items() if value is not None})
    return json.dumps(document, indent=2) + "\n"


def _node_text(entry: HarnessEntry) -> str:
    decl = entry.declaration
    details = f"{decl.band}, {decl.fail_mode}"
    if decl.timeout is not None:
        details += f", {timeout_text(decl.timeout)}"
    if decl.match:
        details += f", {match_text(decl.match)}"
    if decl.mode == "audit":
        details += ", audit"
    return f"{entry.name}<br/>{details}".replace('"', "#quot;")


def _subgraph(
    harness: Harness, hook: str, entries: tuple[HarnessEntry, ...]
) -> tuple[list[str], str, str]:
    """A hook point's subgraph, and the ids of its first and last nodes."""
    key = hook.replace(".", "_")
    texts = [_node_text(entry) for entry in entries] or ["(none)"]
    ids = [f"{key}_{i}" for i in range(1, len(texts) + 1)]
    lines = [f'    subgraph {key}["{hook}: {_heading(harness, hook)}"]']
    lines.append("        direction LR")
    lines.extend(f'        {node}["{text}"]' for node, text in zip(ids, texts, strict=True))
    if len(ids) > 1:
        lines.append("        " + " --> ".join(ids))
    lines.append("    end")
    return lines, ids[0], ids[-1]


def render_mermaid(harness: Harness, only: Only) -> str:
    """A ``flowchart LR`` in the style of hook-bus.md's onion diagram: for each operation,
    its inbound hook point's chain leads into it and its outbound one leads out of it."""
    chains = harness.chains(**only)
    out = ["flowchart LR"]
    for prefix, operation in _OPERATIONS.items():
        inbound, outbound = (hook for hook, _ in HOOKS if hook.startswith(f"{prefix}."))
        op = f"{prefix}_op"
        into, _, last = _subgraph(harness, inbound, chains[inbound])
        out_of, first, _ = _subgraph(harness, outbound, chains[outbound])
        out.extend(into + out_of)
        out.append(f"    {last} --> {op}(({operation})) --> {first}")
    return "\n".join(out) + "\n"


def render(
    harness: Harness,
    format: str = "text",
    *,
    tool: str | None = None,
    model: str | None = None,
) -> str:
    """The chains of ``harness`` in one of :data:`FORMATS`; with ``tool``, the tool hook
    points show the chain a call of that tool runs, with ``model``, ``model.before`` the
    chain a request to that model runs (I22)."""
    renderers = {"text": render_text, "json": render_json, "mermaid": render_mermaid}
    if format not in renderers:
        raise ValueError(f"unknown format {format!r}: one of {', '.join(FORMATS)}")
    return renderers[format](harness, Only(tool=tool, model=model))
