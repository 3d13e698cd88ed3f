"""``harnessweaver approvals``: list, show and decide the approvals of a harness spec.

``harnessweaver approvals approve ID --spec S`` decides an approval filed by any process that
shares the spec's store: the spec's ``state:``; else ``--state-file F`` (SQLite); else the
hook command's state file, where a hook command without a ``state:`` files. The decision is
made for the spec version ``--spec/--task/--env`` load (its identity), so an approval filed
under another version of the spec is refused, not decided. Exit status: 0 done, 1 refused (the
code and the message on stderr), 2 a usage error, a spec that does not load, a store down.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
import unicodedata
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..spec.loader import Harness
    from ..state.config import StateConfig
    from ..state.store import Store
    from .book import Approvals
    from .record import ApprovalRecord

__all__ = ["ACTIONS", "EXIT_ERROR", "EXIT_OK", "EXIT_REFUSED", "configure", "run"]

EXIT_OK = 0
EXIT_REFUSED = 1
EXIT_ERROR = 2
ACTIONS = ("list", "show", "approve", "deny", "edit")
_PROG = "harnessweaver approvals"


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--spec", type=Path, required=True, help="the harness spec (harness.yaml)")
    parser.add_argument("--task", help="the spec's task (part of the spec version decided for)")
    parser.add_argument("--env", help="the spec's environment overlay (part of the version)")
    parser.add_argument(
        "--org-profiles", action="append", type=Path, metavar="DIR", help="org profile folder"
    )
    parser.add_argument(
        "--state-file",
        type=Path,
        metavar="F",
        help="the SQLite state file, for a spec without a state: store (default: the hook "
        "command's state file)",
    )


def _decider(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", metavar="ID", help="the approval's id (ap_<16 hex>_<serial>)")
    _common(parser)
    parser.add_argument("--role", help="the role deciding (the approval's approver_role)")
    parser.add_argument("--by", metavar="NAME", help="who decides, kept in the record")
    parser.add_argument("--reason", default="", metavar="TEXT", help="why, kept in the record")


def configure(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="the approvals of the spec's store")
    _common(listing)
    listing.add_argument(
        "--status",
        choices=("pending", "approved", "denied", "used", "closed", "expired"),
        help="only the approvals with this status now",
    )
    listing.add_argument("--format", choices=("text", "json"), default="text")
    show = actions.add_parser("show", help="one approval, its complete action as JSON")
    show.add_argument("id", metavar="ID", help="the approval's id")
    _common(show)
    show.add_argument("--format", choices=("text", "json"), default="text")
    _decider(actions.add_parser("approve", help="approve an approval, as filed"))
    _decider(actions.add_parser("deny", help="deny an approval"))
    edit = actions.add_parser(
        "edit", help="approve an approval with other arguments (the whole event at non-tool hooks)"
    )
    _decider(edit)
    edit.add_argument(
        "--arguments",
        required=True,
        metavar="JSON|@FILE",
        help="the new arguments as a JSON object, or @FILE to read them from FILE",
    )


# -- terminal-safe text --------------------------------------------------------------------


def _safe(text: str) -> str:
    """``text`` with control and format characters (escape sequences, bidi overrides)
    written as ``\\uXXXX``: a filed action is anyone's text and must not drive the terminal."""
    return "".join(
        f"\\u{ord(char):04x}" if unicodedata.category(char) in ("Cc", "Cf") and char != "\n"
        else char
        for char in text
    )  # fmt: skip


def _json(value: object) -> str:
    # JSON escapes C0 controls itself; _safe escapes the rest inside strings (valid JSON).
    return _safe(json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False))


def _when(at: float) -> str:
    from .rules import when

    return when(at)


def _line(record: ApprovalRecord, now: float) -> str:
    from .rules import status_at

    role = record.approver_role or "-"
    tool = record.tool or "-"
    fields = (
        record.id,
        status_at(record, now),
        record.hook,
        tool,
        f"role={role}",
        f"expires={_when(record.expires_at)}",
        record.reason,
    )
    return _safe("  ".join(fields).replace("\n", " "))


def _details(record: ApprovalRecord, now: float) -> str:
    from .rules import status_at

    rows = [
        ("id", record.id),
        ("status", status_at(record, now)),
        ("hook", record.hook),
        ("tool", record.tool or "-"),
        ("reason", record.reason),
        ("code", record.code or "-"),
        ("approver role", record.approver_role or "-"),
        ("subject", record.subject or "-"),
        ("filed by", record.filed_by),
        ("filed at", _when(record.filed_at)),
        ("expires at", _when(record.expires_at)),
        ("spec", record.spec),
        ("identity", record.identity),
    ]
    if record.decision is not None:
        made = record.decision
        verb = "approved" if made.approved else "denied"
        who = f" by {made.by}" if made.by else ""
        role = f" as {made.role}" if made.role else ""
        why = f": {made.reason}" if made.reason else ""
        rows.append(("decision", f"{verb}{who}{role} at {_when(made.at)}{why}"))
    if record.used is not None:
        rows.append(("used", f"by {record.used.by} at {_when(record.used.at)}"))
    text = "\n".join(_safe(f"{name}: {value}".replace("\n", " ")) for name, value in rows)
    text += "\naction:\n" + _json(record.action)
    if record.decision is not None and record.decision.edited is not None:
        text += "\nedited:\n" + _json(record.decision.edited)
    return text


# -- the store and the book -----------------------------------------------------------------


def _opener(state_file: Path | None) -> Callable[[StateConfig | None], Store]:
    """The spec's ``state:``; else (none, or memory, which no other process could share)
    the SQLite file: ``--state-file``, else the hook command's."""

    def open_state(config: StateConfig | None) -> Store:
        from ..state.config import open_store
        from .config import sqlite_store

        if config is not None and config.backend != "memory":
            return open_store(config)
        return sqlite_store(state_file)

    return open_state


def _load(args: argparse.Namespace) -> Harness | None:
    from ..spec import SpecError, load

    try:
        return load(
            args.spec,
            task=args.task,
            env=args.env,
            org_profiles=args.org_profiles,
            open_state=_opener(args.state_file),
        )
    except SpecError as exc:
        print(f"{_PROG}: error: {args.spec} does not load:\n{exc}", file=sys.stderr)
    except (ImportError, OSError) as exc:
        print(f"{_PROG}: error: loading {args.spec}: {type(exc).__name__}", file=sys.stderr)
    return None


def _edited(text: str) -> tuple[Any, str | None]:
    """The ``--arguments`` value (JSON, or ``@FILE``) and a usage problem, if any."""
    source = "--arguments"
    if text.startswith("@"):
        source = text[1:]
        try:
            text = Path(source).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            return None, f"--arguments: cannot read {source}: {type(exc).__name__}"
    try:
        return json.loads(text), None
    except json.JSONDecodeError as exc:
        return None, f"--arguments: {source} is not JSON (line {exc.lineno}, column {exc.colno})"


async def _act(args: argparse.Namespace, book: Approvals, spec: str) -> int:
    now = book.clock()
    if args.action == "list":
        records = await book.list(status=args.status)
        if args.format == "json":
            print(_json([record.to_json() for record in records]))
        else:
            for record in records:
                print(_line(record, now))
        return EXIT_OK
    if args.action == "show":
        record = await book.get(args.id)
        print(_json(record.to_json()) if args.format == "json" else _details(record, now))
        return EXIT_OK
    decided: Callable[..., Awaitable[ApprovalRecord]]
    given: dict[str, Any] = {"role": args.role, "by": args.by, "reason": args.reason, "spec": spec}
    if args.action == "edit":
        edited, problem = _edited(args.arguments)
        if problem is not None:
            print(f"{_PROG} edit: error: {problem}", file=sys.stderr)
            return EXIT_ERROR
        record = await book.edit(args.id, edited, **given)
    else:
        decided = book.approve if args.action == "approve" else book.deny
        record = await decided(args.id, **given)
    verb = "approved" if record.status == "approved" else "denied"
    edit = " with an edit" if record.decision is not None and record.decision.edited else ""
    print(f"approval {record.id} {verb}{edit}")
    return EXIT_OK


async def _run(args: argparse.Namespace, harness: Harness) -> int:
    from ..state.store import StateUnavailable
    from .record import ApprovalRefused, spec_identity

    try:
        return await _act(args, harness.approvals, spec_identity(harness))
    except ApprovalRefused as exc:
        print(f"{_PROG} {args.action}: refused: {exc.code}: {_safe(str(exc))}", file=sys.stderr)
        return EXIT_REFUSED
    except StateUnavailable as exc:
        print(f"{_PROG} {args.action}: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    finally:
        await harness.aclose()


def run(args: argparse.Namespace) -> int:
    """Run ``harnessweaver approvals ACTION``; the exit status."""
    harness = _load(args)
    if harness is None:
        return EXIT_ERROR
    try:
        return asyncio.run(_run(args, harness))
    except BrokenPipeError:  # a reader that stopped early (| head): what was done is done
        _to_devnull()
        return EXIT_OK


def _to_devnull() -> None:
    """Point stdout at the null device, so the interpreter's flush at exit cannot fail."""
    with contextlib.suppress(Exception):
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
