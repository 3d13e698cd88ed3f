"""``harnessweaver.cedar``: tool calls and model requests decided by Cedar policies (I38).

The item names its policies (and optionally a schema and entities) by path; they are read and
compiled once, when the spec loads, into a :class:`CedarPolicySet`. Each event becomes a
Cedar request (:mod:`.request`) and Cedar's answer an outcome:

- allow, no determining permit annotated ``@requireApproval`` or ``@escalate`` → ``Continue()``;
- allow with some → ``Suspend`` naming them (``code="cedar:<ids>"``, the approver role from
  the first one's annotation);
- deny by forbids → ``Block(code="cedar:<ids>")``; deny because no permit applies →
  ``no_decision`` (``block``: ``Block(code="cedar:no_permit")``, or ``continue``);
- a policy that errors → :class:`CedarEvaluationError` (``on_error: fail``) or Cedar's own
  semantics, the erroring policy ignored (``skip``).

Cedar evaluates every policy of the set it is given, and a call costs about 20 µs before the
first policy; so each request is decided by the policies whose scope may match it only:
a policy whose scope says ``action == A`` (``resource == R``) is left out of a request for
another action (resource). Such a policy could neither determine the decision nor error
(Cedar's scope comes before its conditions and short-circuits), so the answer is the one the
whole set gives; the slices are cached per (action, resource), a bounded number of them.
"""

from __future__ import annotations

import json
import os
import re
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, ClassVar, Final, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationInfo, model_validator

from ..envelope import Envelope
from ..events import ModelRequestEvent, ToolCallEvent, ToolResultEvent
from ..middleware import middleware
from ..outcomes import Block, Continue, Suspend
from ..spec.files import LoadProblem, folder_of
from ..spec.hooks import ItemHooks
from ..spec.limits import MAX_BYTES
from .errors import CedarEvaluationError, CedarLoadError, CedarRequestError
from .request import HOOKS, CedarRequest, cedar_request
from .statements import Head, Statement, Unreadable, read_head, split_statements

__all__ = [
    "APPROVAL_ANNOTATIONS",
    "CACHED_SLICES",
    "Cedar",
    "CedarPolicySet",
    "CedarSettings",
    "Evaluation",
    "PolicySource",
    "hook_of",
    "read_policy_file",
]

APPROVAL_ANNOTATIONS: Final = ("requireApproval", "escalate")
"""The annotations that turn a permit into a Suspend, in the order the approver role is taken."""
CACHED_SLICES: Final = 1024
"""How many (action, resource) slices are kept; the oldest goes first when one more is made
(tool names come from the model, so the cache must not grow with them)."""
CODE_LIMIT: Final = 128
REASON_LIMIT: Final = 4096
"""I28's bounds of an outcome's code and reason, in code points."""
INSTALL: Final = "pip install 'harnessweaver[cedar]'"
_NAME: Final = re.compile(r"[_a-zA-Z][_a-zA-Z0-9]*")
_RESERVED: Final = frozenset(
    {"true", "false", "if", "then", "else", "in", "is", "like", "has", "__cedar"}
)
_ERRORED: Final = re.compile(r"policy `([^`]*)`")
_HOOK_OF: Final[dict[type, str]] = {
    ToolCallEvent: "tool.before",
    ToolResultEvent: "tool.after",
    ModelRequestEvent: "model.before",
}

_Path = Annotated[str, Field(min_length=1)]
"""A path as the spec writes it: relative to the declaring file's folder, or absolute."""
EntityRef = tuple[str, str] | None
"""A policy's ``==`` scope constraint on action or resource, ``None`` when it may match any."""


@dataclass(frozen=True, slots=True)
class PolicySource:
    """One policy file's text and the path the spec writes for it."""

    file: str
    text: str


@dataclass(frozen=True, slots=True)
class _Policy:
    """One compiled policy: Cedar's id, the shown id, its annotations, its scope keys and its
    source: its statement (or, when the files split a policy, its JSON form), to build
    slices from."""

    cedar_id: str
    shown: str
    annotations: Mapping[str, str]
    action: EntityRef
    resource: EntityRef
    source: str


def _cedarpy() -> Any:
    try:
        import cedarpy
    except ImportError as exc:  # the extra is not installed
        why = f"harnessweaver.cedar needs the cedarpy package: {INSTALL}"
        raise CedarLoadError("policies", why=why) from exc
    return cedarpy


def hook_of(event: object) -> str:
    """The hook point an event of a policy middleware comes from."""
    hook = _HOOK_OF.get(type(event))
    if hook is None:
        raise TypeError(f"a Cedar policy decides on {', '.join(HOOKS)}, not {type(event).__name__}")
    return hook


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _scope(constraint: Mapping[str, Any]) -> EntityRef:
    if constraint.get("op") != "==":
        return None
    entity = constraint.get("entity")
    if not isinstance(entity, Mapping):  # `== ?principal` (a template) or a slot
        return None
    return str(entity.get("type")), str(entity.get("id"))


def _index(cedar_id: str) -> int:
    return int(cedar_id.removeprefix("policy")) if cedar_id.startswith("policy") else 0


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


class _Slice:
    """A Cedar policy set made of some policies, and how its ids map back: ``members[k]`` is
    the policy Cedar calls ``policyk`` there (``None``: the ids are the whole set's)."""

    __slots__ = ("members", "policies")

    def __init__(self, policies: Any, members: tuple[_Policy, ...] | None) -> None:
        self.policies = policies
        self.members = members


class CedarPolicySet:
    """A compiled Cedar policy set with its entities (and the schema that checked both), and
    how it maps answers to outcomes. Build with :meth:`compile`; decide with :meth:`decide`."""

    __slots__ = (
        "_by_id",
        "_by_text",
        "_cache",
        "_cedarpy",
        "_entities",
        "_policies",
        "_whole",
        "namespace",
        "no_decision",
        "on_error",
    )

    def __init__(
        self,
        cedarpy: Any,
        policies: Sequence[_Policy],
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
        self._by_id = {policy.cedar_id: policy for policy in policies}
        self._by_text = by_text
        self._whole = _Slice(whole, None)
        self._entities = entities
        self._cache: dict[tuple[str, str, str, str], _Slice] = {}
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
        templates = sorted((t["id"] for t in whole.templates()), key=_index)
        if templates:
            file, line = places.of(_index(templates[0]))
            why = (
                f"policy {templates[0]} is a template (?principal or ?resource): "
                "only static policies are allowed"
            )
            raise CedarLoadError("policies", why=why, file=file, line=line)
        statements = places.statements()
        by_text = len(statements) == len(whole)
        if by_text:  # the usual case: each statement is one policy, read here
            policies = [_from_text(cedarpy, i, s.text) for i, (_, s) in enumerate(statements)]
        else:  # the files split a policy between them: the engine's JSON form says
            policies = _from_engine(cedarpy, joined)
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
        cedarpy: Any, joined: str, schema: Any, policies: Sequence[_Policy], places: _Places
    ) -> None:
        result = cedarpy.validate_policies(joined, schema)
        if result.validation_passed or not policies:
            return
        # Cedar reports a policy's errors in no fixed order (it walks hash sets): the lowest
        # policy index, then the smallest text, so every run reports the same one.
        errors = sorted(result.errors, key=lambda error: (_index(error.policy_id), error.error))
        worst = errors[0]
        shown = next((p.shown for p in policies if p.cedar_id == worst.policy_id), worst.policy_id)
        file, line = places.of(_index(worst.policy_id))
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

    def _slice(self, request: CedarRequest) -> _Slice:
        """The policies whose scope may match ``request``, as one Cedar policy set."""
        action, resource = request["action"], request["resource"]
        key = (action["type"], action["id"], resource["type"], resource["id"])
        found = self._cache.get(key)
        if found is not None:
            return found
        wanted_action = (action["type"], action["id"])
        wanted_resource = (resource["type"], resource["id"])
        chosen = tuple(
            policy
            for policy in self._policies
            if policy.action in (None, wanted_action) and policy.resource in (None, wanted_resource)
        )
        if len(chosen) == len(self._policies):
            found = self._whole
        elif self._by_text:  # parsed alone, Cedar numbers them policy0...: members maps back
            text = "\n".join(policy.source for policy in chosen)
            found = _Slice(self._cedarpy.PolicySet.from_str(text), chosen)
        else:  # the JSON form keeps the ids
            text = ", ".join(policy.source for policy in chosen)
            document = '{"staticPolicies": {' + text + '}, "templates": {}, "templateLinks": []}'
            found = _Slice(self._cedarpy.PolicySet.from_json_str(document), None)
        if len(self._cache) >= CACHED_SLICES:
            del self._cache[next(iter(self._cache))]
        self._cache[key] = found
        return found

    def evaluate(self, request: CedarRequest, *, sliced: bool = True) -> Evaluation:
        """Cedar's answer to ``request`` from the slice of the policies its scope may match
        (or from the whole set), with the determining and the erroring policies."""
        chosen = self._slice(request) if sliced else self._whole
        result = self._cedarpy.is_authorized(request, chosen.policies, self._entities)
        diagnostics = result.diagnostics
        if result.decision.name == "NoDecision":  # Cedar refused the request itself
            raise CedarRequestError("request", why="Cedar could not read the request")
        errored = [m.group(1) for e in diagnostics.errors if (m := _ERRORED.search(e))]
        return Evaluation(
            result.decision.name == "Allow",
            tuple(self._member(chosen, i) for i in diagnostics.reasons),
            tuple(self._member(chosen, i) for i in errored),
            bool(diagnostics.errors),
        )

    def _member(self, chosen: _Slice, cedar_id: str) -> _Policy:
        if chosen.members is not None:
            return chosen.members[_index(cedar_id)]
        return self._by_id[cedar_id]

    def decide(
        self, hook: str, event: object, attributes: Mapping[str, object] | None
    ) -> Continue | Block | Suspend:
        """The outcome of ``event`` at ``hook``; raises :class:`CedarRequestError` or
        :class:`CedarEvaluationError` (the fail mode then decides)."""
        request = cedar_request(hook, event, attributes, self.namespace)
        return self.outcome(self.evaluate(request))

    def outcome(self, answer: Evaluation) -> Continue | Block | Suspend:
        """The outcome of Cedar's answer (I38)."""
        if answer.errored and self.on_error == "fail":
            raise CedarEvaluationError(_ids(answer.errors))
        if answer.allowed:
            return _allow(answer.determining)
        if answer.determining:
            ids = _ids(answer.determining)
            reason = "forbidden by Cedar policy " + ", ".join(ids)
            code = "cedar:" + ",".join(ids)
            return Block(reason=reason[:REASON_LIMIT], code=code[:CODE_LIMIT])
        if self.no_decision == "continue":
            return Continue()
        return Block(reason="no Cedar policy permits this request", code="cedar:no_permit")


@dataclass(frozen=True, slots=True)
class Evaluation:
    """Cedar's answer: allowed or not, the determining policies, the erroring ones (and
    whether any error was reported at all)."""

    allowed: bool
    determining: tuple[_Policy, ...]
    errors: tuple[_Policy, ...]
    errored: bool


def _ids(policies: Iterable[_Policy]) -> tuple[str, ...]:
    """``ids(S)`` of I38: the shown ids, deduplicated, sorted by code point."""
    return tuple(sorted({policy.shown for policy in policies}))


def _allow(determining: Sequence[_Policy]) -> Continue | Suspend:
    asking = [p for p in determining if any(a in p.annotations for a in APPROVAL_ANNOTATIONS)]
    if not asking:
        return Continue()
    ids = _ids(asking)
    first = next(policy for policy in asking if policy.shown == ids[0])
    role = next(first.annotations[a] for a in APPROVAL_ANNOTATIONS if a in first.annotations)
    reason = "approval required by Cedar policy " + ", ".join(ids)
    code = "cedar:" + ",".join(ids)
    return Suspend(reason=reason[:REASON_LIMIT], approver_role=role or None, code=code[:CODE_LIMIT])


def _policy(cedar_id: str, head: Head, source: str) -> _Policy:
    annotations = {k: v or "" for k, v in head.annotations.items()}
    shown = annotations.get("id", cedar_id)
    return _Policy(cedar_id, shown, annotations, head.action, head.resource, source)


def _from_text(cedarpy: Any, index: int, text: str) -> _Policy:
    """Policy ``index`` read from its statement (the engine reads the rare head this reader
    does not: an escape in a string, an odd token)."""
    try:
        head = read_head(text)
    except Unreadable:
        est = json.loads(cedarpy.policies_to_json_str(text))
        head = _head(next(iter(est["staticPolicies"].values())))
    return _policy(f"policy{index}", head, text)


def _head(body: Mapping[str, Any]) -> Head:
    annotations = body.get("annotations") or {}
    return Head(
        {k: None if v is None else str(v) for k, v in annotations.items()},
        _scope(body.get("action") or {}),
        _scope(body.get("resource") or {}),
    )


def _from_engine(cedarpy: Any, joined: str) -> list[_Policy]:
    """Every policy from the engine's JSON form (its ids kept; slices made from it)."""
    statics: Mapping[str, Any] = json.loads(cedarpy.policies_to_json_str(joined))["staticPolicies"]
    return [
        _policy(cedar_id, _head(statics[cedar_id]), f"{json.dumps(cedar_id)}: {json.dumps(body)}")
        for cedar_id, body in sorted(statics.items(), key=lambda item: _index(item[0]))
    ]


def _check_ids(policies: Sequence[_Policy], places: _Places) -> None:
    """Two policies with one shown id: a problem at the second."""
    first: dict[str, str] = {}
    for policy in policies:
        earlier = first.setdefault(policy.shown, policy.cedar_id)
        if earlier != policy.cedar_id:
            file, line = places.of(_index(policy.cedar_id))
            at, at_line = places.of(_index(earlier))
            why = (
                f"the policy id {json.dumps(policy.shown)} is already used by the policy "
                f"at {at}:{at_line}"
            )
            raise CedarLoadError("policies", why=why, file=file, line=line)


def read_policy_file(folder: Path, written: str, key: str) -> PolicySource:
    """The file ``written`` (relative to ``folder`` unless absolute), read as UTF-8 text."""
    path = folder / written  # an absolute `written` replaces the folder
    try:
        with path.open("rb") as stream:
            data = stream.read(MAX_BYTES + 1)
    except FileNotFoundError:
        raise CedarLoadError(key, why="the file does not exist", file=written, line=1) from None
    except OSError:
        raise CedarLoadError(key, why="the file cannot be read", file=written, line=1) from None
    if len(data) > MAX_BYTES:
        why = f"the file is larger than {MAX_BYTES:,} bytes"
        raise CedarLoadError(key, why=why, file=written, line=1)
    try:
        return PolicySource(written, data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        why = "the file is not UTF-8 text"
        raise CedarLoadError(key, why=why, file=written, line=line) from None


with warnings.catch_warnings():
    # `schema` is the setting's name in every implementation; on a pydantic model it shadows
    # the deprecated BaseModel.schema() classmethod, which this model never uses.
    warnings.filterwarnings("ignore", message=r'Field name "schema"', category=UserWarning)

    class CedarSettings(BaseModel):
        """``policies`` (a path or a list of paths), ``schema`` (Cedar schema syntax; a path
        ending ``.json``: Cedar's JSON schema format), ``entities`` (Cedar's JSON entity
        list), ``namespace``, ``no_decision`` (``block`` or ``continue``), ``on_error``
        (``fail`` or ``skip``). Paths are relative to the folder of the file declaring the
        item; they are read and compiled when the settings are validated by the loader."""

        model_config = ConfigDict(extra="forbid", frozen=True)
        policies: _Path | Annotated[tuple[_Path, ...], Field(min_length=1)]
        schema: str | None = Field(None, min_length=1)  # type: ignore[assignment]
        entities: str | None = Field(None, min_length=1)
        namespace: str | None = None
        no_decision: Literal["block", "continue"] = "block"
        on_error: Literal["fail", "skip"] = "fail"
        _compiled: CedarPolicySet | None = PrivateAttr(None)

        @property
        def policy_files(self) -> tuple[str, ...]:
            return (self.policies,) if isinstance(self.policies, str) else self.policies

        def loaded_files(self) -> tuple[str, ...]:
            """The files read, as written: the policies, the schema, the entities."""
            optional = (f for f in (self.schema, self.entities) if f is not None)
            return (*self.policy_files, *optional)

        def compile(self, folder: Path) -> CedarPolicySet:
            """Read the files (relative to ``folder``) and compile them."""
            sources = [read_policy_file(folder, f, "policies") for f in self.policy_files]
            schema = (
                None if self.schema is None else read_policy_file(folder, self.schema, "schema")
            )
            entities = None
            if self.entities is not None:
                entities = read_policy_file(folder, self.entities, "entities")
            return CedarPolicySet.compile(
                sources,
                schema=schema,
                schema_format="json" if (self.schema or "").endswith(".json") else "cedar",
                entities=entities,
                namespace=self.namespace,
                no_decision=self.no_decision,
                on_error=self.on_error,
            )

        @model_validator(mode="after")
        def _load(self, info: ValidationInfo) -> Self:
            folder = folder_of(info)
            if folder is None:  # built in code: compiled when the middleware is built
                return self
            try:
                self._compiled = self.compile(folder)
            except CedarLoadError as exc:
                raise LoadProblem(
                    "invalid_policy", exc.key, exc.message, exc.file, exc.line
                ) from None
            return self

        def policy_set(self) -> CedarPolicySet:
            """The compiled policy set: the one the loader made, else compiled now relative to
            the working directory (settings built in code)."""
            if self._compiled is None:
                return self.compile(Path.cwd())
            return self._compiled


@middleware(
    hooks=list(HOOKS),
    fail_mode="closed",
    config=CedarSettings,
    # An empty policy set, on every system: nothing is permitted, so every call is blocked.
    sample={"policies": os.devnull},
)
class Cedar:
    """Decides tool calls and model requests with Cedar policies (I38, ``docs/policies.md``)."""

    item_hooks: ClassVar[ItemHooks] = ItemHooks(default=("tool.before",), kind="invalid_policy")

    def __init__(self, config: CedarSettings) -> None:
        self.policies = config.policy_set()

    async def __call__(
        self, event: ToolCallEvent | ToolResultEvent | ModelRequestEvent, env: Envelope
    ) -> Continue | Block | Suspend:
        return self.policies.decide(hook_of(event), event, env.attributes)
