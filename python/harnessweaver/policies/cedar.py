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

The parts, one module each: :mod:`.files` reads the files the item names, :mod:`.compiled`
compiles them into a :class:`CedarPolicySet`, :mod:`.slices` gives each request only the
policies whose scope may match it, :mod:`.outcome` turns Cedar's answer into the outcome above;
this module is the middleware and its settings.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Annotated, ClassVar, Final, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationInfo, model_validator

from ..envelope import Envelope
from ..events import ModelRequestEvent, ToolCallEvent, ToolResultEvent
from ..middleware import middleware
from ..outcomes import Block, Continue, Suspend
from ..spec.files import LoadProblem, folder_of
from ..spec.hooks import ItemHooks
from .compiled import CedarPolicySet
from .errors import CedarLoadError
from .files import PolicySource, read_policy_file
from .outcome import APPROVAL_ANNOTATIONS, Evaluation
from .request import HOOKS
from .slices import CACHED_SLICES

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

_HOOK_OF: Final[dict[type, str]] = {
    ToolCallEvent: "tool.before",
    ToolResultEvent: "tool.after",
    ModelRequestEvent: "model.before",
}

_Path = Annotated[str, Field(min_length=1)]
"""A path as the spec writes it: relative to the declaring file's folder, or absolute."""


def hook_of(event: object) -> str:
    """The hook point an event of a policy middleware comes from."""
    hook = _HOOK_OF.get(type(event))
    if hook is None:
        raise TypeError(f"a Cedar policy decides on {', '.join(HOOKS)}, not {type(event).__name__}")
    return hook


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
