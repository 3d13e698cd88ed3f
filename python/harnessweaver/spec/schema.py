"""The structure of a harness spec and of a profile, as pydantic models.

These models are the one description of the keys a spec and a profile may have: the key
tables of :mod:`.model` (``SPEC_KEYS``, ``PROFILE_KEYS``, ``RESERVED``) are read from them, and
``tools/harness_schema.py`` turns them into ``harness.schema.json`` (JSON Schema 2020-12),
which editors use for completion and the TypeScript loader for its structural check.

They say what the parser of :mod:`.model` checks, no more: which keys exist, which values are
mappings, lists or text, that an item has a ``use`` and ``enabled`` is true or false. What a
value means — a band, a duration, a hook point, a mode, a matcher, a setting — is checked by
the loader and the core with their own kinds and rules (docs/harness-spec.md, "Errors"), so
those keys accept any value here; their ``examples`` are what an editor offers. One rule of
the parser is not expressed: a guardrail's ``hooks:`` must be its stage (a key elsewhere).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from ..events import EVENT_TYPES

__all__ = [
    "LAYER_KEYS",
    "Env",
    "Item",
    "Plugins",
    "Profile",
    "Spec",
    "State",
    "Task",
    "Validation",
]

Ref = Annotated[str, Field(pattern=r"\S")]
"""A module name, a namespace or a profile reference: text that is not blank."""

_BANDS = ["baseline", "platform", "app", "task"]  # rule-1's four, as examples for editors
_HOOKS = list(EVENT_TYPES)  # the catalogue's hook points, in catalogue order


class _Closed(BaseModel):
    """A mapping whose keys are all known: any other is an ``unknown_key`` problem."""

    model_config = ConfigDict(extra="forbid")


class Plugins(_Closed):
    """The plugins a spec or profile loads (``plugins:``)."""

    local: list[Ref] | None = Field(
        None,
        description="In-repo modules, imported with the listing file's folder on sys.path "
        "(Python) or found under it (Node): app.harness_plugin",
    )
    installed: list[Ref] | None = Field(
        None,
        description="Installed plugins by namespace: an entry point of the group "
        "harnessweaver.plugins (Python), an npm package (Node)",
    )


class Item(BaseModel):
    """One middleware item: ``use``, ``id``, the layer keys, ``enabled``; every other key is
    a setting, validated by the middleware's own settings schema."""

    model_config = ConfigDict(extra="allow")

    id: Any = Field(
        None, description="The name it is registered under (default: the use value); unique"
    )
    use: str = Field(
        description="namespace.name of a middleware of a loaded plugin "
        "(the built-in ones are harnessweaver.<name>)",
        examples=["harnessweaver.tool_allowlist"],
    )
    band: Any = Field(
        None,
        description="Restates the layer's band or moves it inward (ruling 16); baseline only "
        "in a profile (S8)",
        examples=_BANDS,
    )
    hooks: Any = Field(
        None,
        description="Narrows the middleware's hook points, never widens them (ruling 18)",
        examples=[_HOOKS],
    )
    fail_mode: Any = Field(
        None,
        description="closed or open; baseline middleware fail closed (R2)",
        examples=["closed", "open"],
    )
    timeout: Any = Field(
        None,
        description="A positive number of seconds or a duration: 250ms, 2s, 1.5s, 1m",
        examples=["2s", "250ms"],
    )
    match: Any = Field(
        None,
        description="Which events it applies to (I22): {tool: [patterns]}, {model: pattern}",
        examples=[{"tool": ["refund_*"]}],
    )
    mode: Any = Field(None, description="enforce or audit (I25)", examples=["enforce", "audit"])
    enabled: bool = Field(
        True, description="false: checked like any item (settings too) but not registered"
    )


LAYER_KEYS = ("band", "hooks", "fail_mode", "timeout", "match", "mode")
"""The keys of an item given to the core as they are (``declare_in``, ``register``)."""

Items = list[Item] | None
Deadlines = Annotated[
    dict[str, Any] | None,
    Field(
        description="A time budget per hook point for its whole chain (I26): {tool.before: 2s}",
        examples=[{"tool.before": "2s"}],
    ),
]
Mode = Annotated[
    Any,
    Field(
        description="The harness-wide mode (I25): enforce or audit", examples=["enforce", "audit"]
    ),
]


class Env(_Closed):
    """An environment overlay (``envs.<name>``), chosen with env=NAME / --env NAME."""

    middleware: Items = None
    mode: Mode = None


class Validation(_Closed):
    """A task's business rules (``tasks.<name>.validation``)."""

    rules: Items = None


class Task(_Closed):
    """A task (``tasks.<name>``), chosen with task=NAME / --task NAME."""

    guardrails: dict[str, Items] | None = Field(
        None,
        description="Items per stage (a hook point); each runs at its stage only",
        examples=[{"tool.before": [{"use": "harnessweaver.tool_allowlist", "allow": ["search"]}]}],
    )
    validation: Validation | None = None
    deadlines: Deadlines = None
    mode: Mode = None


class State(_Closed):
    """Where the harness's stateful middleware keep their counts (``state:``,
    docs/state.md): one store per loaded harness, in memory unless a backend is named."""

    backend: Any = Field(
        None,
        description="memory (the default: this process only), sqlite (the processes of one "
        "machine), redis or postgres (a fleet)",
        examples=["memory", "sqlite", "redis", "postgres"],
    )
    url: Any = Field(
        None,
        description="redis and postgres: the server's URL; ${NAME} reads an environment "
        "variable (keep credentials there)",
        examples=["${REDIS_URL}", "redis://127.0.0.1:6379/0"],
    )
    path: Any = Field(
        None,
        description="sqlite: the file, relative to the spec's folder; ${NAME} reads an "
        "environment variable",
        examples=["state.db"],
    )
    timeout: Any = Field(
        None,
        description="How long one store call may take before the store counts as "
        "unavailable (default 250ms)",
        examples=["250ms", "1s"],
    )


class Notify(_Closed):
    """Whom to tell when an approval is filed (``approvals.notify``): a signed POST."""

    url: Any = Field(
        None,
        description="The receiver (http or https); ${NAME} reads an environment variable",
        examples=["${APPROVALS_URL}", "https://approvals.example.invalid/hook"],
    )
    secret: Any = Field(
        None,
        description="The HMAC-SHA256 key of X-Harnessweaver-Signature; keep it in the "
        "environment: ${NAME}",
        examples=["${APPROVALS_SECRET}"],
    )


class Approvals(_Closed):
    """Durable approvals (``approvals:``, docs/approvals.md): records in the state store,
    decided with ``harnessweaver approvals``."""

    expires_after: Any = Field(
        None,
        description="Seconds a filed approval waits for its decision (default 86400)",
        examples=[3600],
    )
    notify: Notify | None = None


class Spec(_Closed):
    """A harness spec (``harness.yaml``): every key is optional."""

    plugins: Plugins | None = None
    profiles: list[Ref] | None = Field(
        None,
        description="Loaded in this order: org://dir/name, profile://namespace.name, "
        "profile://name (built in), or a file path relative to the spec",
        examples=[["profile://agent-guards"]],
    )
    middleware: Items = None
    envs: dict[str, Env | None] | None = None
    tasks: dict[str, Task | None] | None = None
    contracts: Any = Field(
        None, description="The hook-contract mode: warn or strict", examples=["warn", "strict"]
    )
    deadlines: Deadlines = None
    mode: Mode = None
    identity: Any = Field(
        None,
        description="The content-identity scheme of hook records (I27)",
        examples=["jcs-sha256"],
    )
    state: State | None = None
    approvals: Approvals | None = None


class Profile(_Closed):
    """A profile: an org profile, a plugin's, a profile file or a built-in one."""

    profile: str | None = Field(None, description="A name, for readers")
    plugins: Plugins | None = None
    middleware: Items = None
