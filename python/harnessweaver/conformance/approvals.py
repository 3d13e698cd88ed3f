"""The approvals cases of the corpus (``given.approvals``, INTERPRETING.md §2, §4, I34).

A case of this family runs no bus: its steps are operations on an approvals book
(:class:`harnessweaver.approvals.Approvals`) on a fresh :class:`~harnessweaver.state.MemoryStore`
with a clock the case sets, and each step's answer is observed (``approvals`` in the
observation, one entry per step): a record, a claim's verdict, a status (``status_at``), an
action and its identity (``action_of``), a listing, or the refusal (``ApprovalRefused``) with its
code. The rules themselves are the real ones: this module only translates the case's words.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["ApprovalsCase"]

DEFAULT_EXPIRES_AFTER = 86400.0


class ApprovalsCase:
    """One case's book(s), store and clock; :meth:`step` runs a step and returns its answer."""

    def __init__(self, given: Mapping[str, Any], samples: Mapping[str, Any]) -> None:
        from ..state import MemoryStore

        self.samples = samples
        self.store = MemoryStore()
        self.spec = str(given["spec"])
        self.now = float(given["now"])
        self.expires_after = float(given.get("expires_after", DEFAULT_EXPIRES_AFTER))
        self._books: dict[str, Any] = {}

    def book(self, spec: str) -> Any:
        """The book of ``spec`` on the case's store: books of two specs share the records, as
        two deployments of two spec versions sharing one store do."""
        from ..approvals import Approvals

        if spec not in self._books:
            self._books[spec] = Approvals(
                self.store, spec=spec, expires_after=self.expires_after, clock=self.clock
            )
        return self._books[spec]

    def clock(self) -> float:
        return self.now

    def event_json(self, args: Mapping[str, Any]) -> dict[str, Any]:
        return dict(args.get("event", self.samples[args["hook"]]))

    def event(self, args: Mapping[str, Any]) -> Any:
        from ..events import EVENT_TYPES

        return EVENT_TYPES[args["hook"]].model_validate(self.event_json(args))

    async def step(self, step: Mapping[str, Any]) -> dict[str, Any]:
        from ..approvals import ApprovalRefused

        if "now" in step:  # the clock moves for this step and the ones after
            self.now = float(step["now"])
        book = self.book(str(step.get("book", self.spec)))
        try:
            return await self._run(book, step)
        except ApprovalRefused as exc:
            return {"refused": {"code": exc.code, "approval": exc.approval, "message": str(exc)}}

    async def _run(self, book: Any, step: Mapping[str, Any]) -> dict[str, Any]:
        from ..approvals import action_of, status_at
        from ..identity import content_identity

        if "file" in step:
            return {"record": _record(await book.file(**self._filing(step["file"])))}
        if "consult" in step:
            args = step["consult"]
            verdict = await book.consult(**self._filing(args), consumer=args["consumer"])
            return {"verdict": _verdict(verdict)}
        if "decide" in step:
            return {"record": _record(await self._decide(book, step["decide"]))}
        if "claim" in step:
            args = step["claim"]
            verdict = await book.claim(
                args["id"], hook=args["hook"], event=self.event(args), consumer=args["consumer"]
            )
            return {"verdict": _verdict(verdict)}
        if "status" in step:
            return {"status": status_at(await book.get(step["status"]["id"]), self.now)}
        if "get" in step:
            return {"record": _record(await book.get(step["get"]["id"]))}
        if "action" in step:
            args = step["action"]
            action = action_of(args["hook"], self.event_json(args))
            return {"action": action, "identity": content_identity(action)}
        if "list" in step:
            records = await book.list(status=step["list"].get("status"))
            seen = [{"id": r.id, "status": status_at(r, self.now)} for r in records]
            return {"list": sorted(seen, key=lambda entry: str(entry["id"]))}
        raise ValueError(f"unknown approvals step {dict(step)!r}")

    def _filing(self, args: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "hook": args["hook"],
            "event": self.event(args),
            "reason": args["reason"],
            "code": args.get("code"),
            "approver_role": args.get("approver_role"),
            "subject": args.get("subject"),
            "filed_by": args["filed_by"],
        }

    async def _decide(self, book: Any, args: Mapping[str, Any]) -> Any:
        """``approved`` with an edit is ``edit``, without one ``approve``; a denial is ``deny``.
        A denial with an edit, which no book call can say, goes to ``rules.decide`` on the
        stored record, its answer observed and nothing stored."""
        from ..approvals import rules

        common = {
            "role": args.get("role"),
            "by": args.get("by"),
            "reason": args.get("reason", ""),
            "spec": args.get("spec"),
        }
        edited = args.get("edited")
        if args["approved"] is True:
            if edited is None:
                return await book.approve(args["id"], **common)
            return await book.edit(args["id"], edited, **common)
        if edited is None:
            return await book.deny(args["id"], **common)
        decision = {
            "approved": False,
            "role": common["role"],
            "by": common["by"],
            "reason": common["reason"],
            "edited": edited,
        }
        record = await book.get(args["id"])
        return rules.decide(record, decision, self.now, spec=common["spec"])


def _record(record: Any) -> dict[str, Any]:
    dumped: dict[str, Any] = record.to_json()
    return dumped


def _verdict(verdict: Any) -> dict[str, Any]:
    return {"kind": verdict.kind, "event": dict(verdict.event), "record": _record(verdict.record)}
