"""A compiled Cedar policy set (I38): the policies, the schema that checks them and the
entities, parsed once, when the spec loads, then asked once per event.

Compiling stops at the first problem, in I38's order, as a :class:`CedarLoadError` at the file
and line it is on, so the loader reports it as any other spec problem. The engine (``cedarpy``,
the ``cedar`` extra) is imported when a set is compiled, not when this module is.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal, Self

from ..outcomes import Block, Continue, Suspend
from .errors import CedarLoadError, CedarRequestError
from .files import PolicySource
from .outcome import Evaluation, outcome_of
from .policy import Policy, from_engine, from_text, policy_index
from .request import CedarRequest, cedar_request
from .slices import Slices
from .statements import Statement, split_statements

__all__ = ["INSTALL", "CedarPolicySet"]

INSTALL: Final = "pip install 'harnessweaver[cedar]'"
_NAME: Final = re.compile(r"[_a-zA-Z][_a-zA-Z0-9]*")
_RESERVED: Final = frozenset(
    {"true", "false", "if", "then", "else", "in", "is", "like", "has", "__cedar"}
)
_ERRORED: Final = re.compile(r"policy `([^`]*)`")


def _cedarpy() -> Any:
    try:
        import cedarpy
    except ImportError as exc:  # the extra is not installed
        why = f"harnessweaver.cedar needs the cedarpy package: {INSTALL}"
        raise CedarLoadError("policies", why=why) from exc
    return cedarpy


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _check_namespace(namespace: str | None) -> None:
    if namespace is None:
        return
    parts = namespace.split("::")
    if all(_NAME.fullmatch(p) and p not in _RESERVED for p in parts):
        return
    why = f"the namespace {json.dumps(namespace)} is not a Cedar name (Name or A::B)"
    raise CedarLoadError("namespace", why=why)


class _Places:
    """Where each policy of the joined files starts: split only when a problem needs a line."""

    def __init__(self, sources: Sequence[PolicySource]) -> None:
        self.sources = sources
        self._found: list[tuple[str, Statement]] | None = None

    def statements(self) -> list[tuple[str, Statement]]:
        if self._found is None:
            self._found = [
                (source.file, statement)
                for source in self.sources
                for statement in split_statements(source.text)
            ]
        return self._found

    def of(self, index: int) -> tuple[str, int]:
        found = self.statements()
        if 0 <= index < len(found):
            file, statement = found[index]
            return file, statement.line
        return self.sources[0].file, 1

    def first_bad(self, cedarpy: Any, whole: ValueError) -> CedarLoadError:
        """The first statement that does not parse alone (the whole set did not parse)."""
        for file, statement in self.statements():
            try:
                cedarpy.PolicySet.from_str(statement.text)
            except ValueError as exc:
                why = f"the policy does not parse: {_one_line(str(exc))}"
                return CedarLoadError("policies", why=why, file=file, line=statement.line)
        why = f"the policies do not parse: {_one_line(str(whole))}"
        return CedarLoadError("policies", why=why, file=self.sources[0].file, line=1)


def _json_line(text: str, file: str, key: str, what: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        why = f"the {what} is not JSON"
        raise CedarLoadError(key, why=why, file=file, line=exc.lineno) from exc


class CedarPolicySet:
    """A compiled Cedar policy set with its entities (and the schema that checked both), and
    how it maps answers to outcomes. Build with :meth:`compile`; decide with :meth:`decide`."""

    __slots__ = (
        "_cedarpy",
        "_entities",
        "_policies",
        "_slices",
        "namespace",
        "no_decision",
        "on_error",
    )

    def __init__(
        self,
        cedarpy: Any,
        policies: Sequence[Policy],
        whole: Any,
        entities: Any,
        *,
        by_text: bool,
        namespace: str | None,
        no_decision: str,
        on_error: str,
    ) -> None:
        self._cedarpy = cedarpy
        self._policies = tuple(policies)
        self._slices = Slices(cedarpy, self._policies, whole, by_text=by_text)
        self._entities = entities
        self.namespace = namespace
        self.no_decision = no_decision
        self.on_error = on_error

    @property
    def ids(self) -> tuple[str, ...]:
        """The shown id of each policy, in the order the files give them."""
        return tuple(policy.shown for policy in self._policies)

    def __len__(self) -> int:
        return len(self._policies)

    @classmethod
    def compile(
        cls,
        sources: Sequence[PolicySource],
        *,
        schema: PolicySource | None = None,
        schema_format: Literal["cedar", "json"] = "cedar",
        entities: PolicySource | None = None,
        namespace: str | None = None,
        no_decision: Literal["block", "continue"] = "block",
        on_error: Literal["fail", "skip"] = "fail",
    ) -> Self:
        """Parse the policies of ``sources`` (joined with ``"\\n"``, in order), the schema and
        the entities, check the policies and entities against the schema; a
        :class:`CedarLoadError` at the first problem (I38's order)."""
        cedarpy = _cedarpy()
        _check_namespace(namespace)
        if not sources:
            raise CedarLoadError("policies", why="no policy file is given")
        places = _Places(sources)
        joined = "\n".join(source.text for source in sources)
        try:
            whole = cedarpy.PolicySet.from_str(joined)
        except ValueError as exc:
            raise places.first_bad(cedarpy, exc) from None
        templates = sorted((t["id"] for t in whole.templates()), key=policy_index)
        if templates:
            file, line = places.of(policy_index(templates[0]))
            why = (
                f"policy {templates[0]} is a template (?principal or ?resource): "
                "only static policies are allowed"
            )
            raise CedarLoadError("policies", why=why, file=file, line=line)
        statements = places.statements()
        by_text = len(statements) == len(whole)
        if by_text:  # the usual case: each statement is one policy, read here
            policies = [from_text(cedarpy, i, s.text) for i, (_, s) in enumerate(statements)]
        else:  # the files split a policy between them: the engine's JSON form says
            policies = from_engine(cedarpy, joined)
        _check_ids(policies, places)
        parsed_schema = cls._schema(cedarpy, schema, schema_format)
        if parsed_schema is not None:
            cls._validate(cedarpy, joined, parsed_schema, policies, places)
        handle = cls._entities_of(cedarpy, entities, parsed_schema)
        return cls(
            cedarpy,
            policies,
            whole,
            handle,
            by_text=by_text,
            namespace=namespace,
            no_decision=no_decision,
            on_error=on_error,
        )

    @staticmethod
    def _schema(cedarpy: Any, schema: PolicySource | None, schema_format: str) -> Any:
        if schema is None:
            return None
        try:
            if schema_format == "json":
                _json_line(schema.text, schema.file, "schema", "schema")
                return cedarpy.Schema.from_json_str(schema.text)
            return cedarpy.Schema.from_str(schema.text)
        except ValueError as exc:
            why = f"the schema does not parse: {_one_line(str(exc))}"
            raise CedarLoadError("schema", why=why, file=schema.file, line=1) from None

    @staticmethod
    def _validate(
        cedarpy: Any, joined: str, schema: Any, policies: Sequence[Policy], places: _Places
    ) -> None:
        result = cedarpy.validate_policies(joined, schema)
        if result.validation_passed or not policies:
            return
        # Cedar reports a policy's errors in no fixed order (it walks hash sets): the lowest
        # policy index, then the smallest text, so every run reports the same one.
        errors = sorted(
            result.errors, key=lambda error: (policy_index(error.policy_id), error.error)
        )
        worst = errors[0]
        shown = next((p.shown for p in policies if p.cedar_id == worst.policy_id), worst.policy_id)
        file, line = places.of(policy_index(worst.policy_id))
        why = f"the schema rejects policy {shown}: {_one_line(worst.error)}"
        raise CedarLoadError("policies", why=why, file=file, line=line)

    @staticmethod
    def _entities_of(cedarpy: Any, entities: PolicySource | None, schema: Any) -> Any:
        if entities is None:  # still read with the schema: it adds its actions and their groups
            return cedarpy.Entities.from_json_str("[]", schema)
        _json_line(entities.text, entities.file, "entities", "entity file")
        try:
            handle = cedarpy.Entities.from_json_str(entities.text)
        except ValueError as exc:
            why = f"the entities do not parse: {_one_line(str(exc))}"
            raise CedarLoadError("entities", why=why, file=entities.file, line=1) from None
        if schema is None:
            return handle
        try:
            return cedarpy.Entities.from_json_str(entities.text, schema)
        except ValueError as exc:
            why = f"the schema rejects the entities: {_one_line(str(exc))}"
            raise CedarLoadError("entities", why=why, file=entities.file, line=1) from None

    def evaluate(self, request: CedarRequest, *, sliced: bool = True) -> Evaluation:
        """Cedar's answer to ``request`` from the slice of the policies its scope may match
        (or from the whole set), with the determining and the erroring policies."""
        slices = self._slices
        chosen = slices.of(request) if sliced else slices.whole
        result = self._cedarpy.is_authorized(request, chosen.policies, self._entities)
        diagnostics = result.diagnostics
        if result.decision.name == "NoDecision":  # Cedar refused the request itself
            raise CedarRequestError("request", why="Cedar could not read the request")
        errored = [m.group(1) for e in diagnostics.errors if (m := _ERRORED.search(e))]
        return Evaluation(
            result.decision.name == "Allow",
            tuple(slices.member(chosen, i) for i in diagnostics.reasons),
            tuple(slices.member(chosen, i) for i in errored),
            bool(diagnostics.errors),
        )

    def decide(
        self, hook: str, event: object, attributes: Mapping[str, object] | None
    ) -> Continue | Block | Suspend:
        """The outcome of ``event`` at ``hook``; raises :class:`CedarRequestError` or
        :class:`CedarEvaluationError` (the fail mode then decides)."""
        request = cedar_request(hook, event, attributes, self.namespace)
        return self.outcome(self.evaluate(request))

    def outcome(self, answer: Evaluation) -> Continue | Block | Suspend:
        """The outcome of Cedar's answer (I38, :func:`.outcome.outcome_of`)."""
        return outcome_of(answer, no_decision=self.no_decision, on_error=self.on_error)


def _check_ids(policies: Sequence[Policy], places: _Places) -> None:
    """Two policies with one shown id: a problem at the second."""
    first: dict[str, str] = {}
    for policy in policies:
        earlier = first.setdefault(policy.shown, policy.cedar_id)
        if earlier != policy.cedar_id:
            file, line = places.of(policy_index(policy.cedar_id))
            at, at_line = places.of(policy_index(earlier))
            why = (
                f"the policy id {json.dumps(policy.shown)} is already used by the policy "
                f"at {at}:{at_line}"
            )
            raise CedarLoadError("policies", why=why, file=file, line=line)
