"""``hw.load``: a harness spec in, a :class:`Harness` out, its bus's chains all resolved.

Loading reads the spec and its profiles, loads the plugins they list, and checks every item
of every layer, every env overlay and every task (selected or not) before building anything:
the layer rules through the core (``declare_in``), settings through the middleware's config,
ids for uniqueness. One problem anywhere and nothing is built (:class:`SpecError` lists them
all). Then the selected items are registered, in this order: profiles as listed, the app's
middleware, the env overlay, the task's guardrails (stages as written), its validation rules.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Unpack, cast

from .._pycore.catalogue import HOOKS
from .._pycore.matcher import CARRIED
from ..agent.options import AgentChanges, AgentOptions
from ..approvals.config import ApprovalsConfig, ApprovalsConfigError, parse_approvals
from ..bus import HookBus
from ..errors import HarnessweaverError
from ..identity import IdentityScheme
from ..state.config import StateConfig, StateConfigError, open_store, parse_config
from ..state.memory import MemoryStore
from ..state.store import Store
from ..state.view import StateView
from .check import Checked, build, check_ids, check_item
from .deadlines import spec_deadlines
from .errors import Problems, SpecError
from .files import LoadsFiles
from .model import SPEC_KEYS, Document, Item, Provenance, parse_profile, parse_spec
from .render import render
from .resolve import Context, Plugins, find_profile
from .yaml import line_of, plain, shown

if TYPE_CHECKING:
    from pydantic import JsonValue

    from .._pycore.declaration import Declaration
    from ..agent.result import RunResult
    from ..agent.state import Decision, RunState
    from ..approvals.book import Approvals
    from ..context import RunContext

__all__ = ["CONTRACT_MODES", "ContractMode", "Harness", "HarnessEntry", "OpenState", "load"]

_log = logging.getLogger(__name__)

ContractMode = Literal["warn", "strict"]
OpenState = Callable[[StateConfig | None], Store]
"""``load(open_state=...)``: the spec's checked ``state:`` (None without one) → the store."""
CONTRACT_MODES: tuple[ContractMode, ...] = ("warn", "strict")
"""The hook-contract modes a harness may ask its bus for."""
MODES = ("enforce", "audit")
"""The modes a harness may run its middleware in (I25)."""
PROFILE_LAYERS = ("org_profile", "plugin_profile", "profile_file")
"""The layers whose items a harness-wide mode never reaches (I25: baseline is the org's)."""


@dataclass(frozen=True, slots=True)
class HarnessEntry:
    """One middleware of a loaded harness: its registered name, how it is shown (``label``),
    the ``use`` it came from, its declaration as registered and where it was declared.

    ``use`` and ``source`` are ``None`` for middleware registered on the bus by code."""

    name: str
    label: str
    use: str | None
    declaration: Declaration
    source: Provenance | None
    settings: Mapping[str, Any] = field(default_factory=dict)
    loads: tuple[str, ...] = ()
    """The files its settings made it read when the spec loaded (policies, schema, entities:
    I38), as the spec writes their paths; ``harnessweaver hooks`` shows them."""

    @property
    def layer(self) -> str | None:
        return None if self.source is None else self.source.layer

    @property
    def file(self) -> str | None:
        return None if self.source is None else self.source.file

    @property
    def line(self) -> int | None:
        return None if self.source is None else self.source.line


@dataclass(frozen=True, slots=True)
class Harness:
    """A harness: ``bus`` has every selected item registered; ``entries`` says where each
    came from (``spec`` is ``None`` for a harness built in code with :meth:`from_bus`).

    ``contracts`` is the hook-contract mode asked for (``"warn"`` or ``"strict"``), which the
    bus was built with (I14, ``docs/contracts.md``). ``agent`` holds what :meth:`run` needs
    (provider, tools, budgets, journal...), set with :meth:`with_agent`; the harness itself
    stays immutable.
    """

    bus: HookBus
    entries: tuple[HarnessEntry, ...] = ()
    spec: Path | None = None
    task: str | None = None
    env: str | None = None
    contracts: ContractMode | None = None
    agent: AgentOptions = field(default_factory=AgentOptions)
    mode: str | None = None
    """The harness-wide mode (I25): the selected env overlay's ``mode:``, else the spec's."""
    store: Store = field(default_factory=MemoryStore)
    """The state store of this harness's stateful middleware (the spec's ``state:``; a
    MemoryStore of its own when it names none: two harnesses never share counts by accident).
    Close it with :meth:`aclose`; :meth:`with_agent` copies share it."""
    approvals_config: ApprovalsConfig = field(default_factory=ApprovalsConfig)
    """The spec's checked ``approvals:`` (the defaults when it has none)."""
    _books: dict[str, Approvals] = field(default_factory=dict, repr=False, compare=False)
    """Where :attr:`approvals` keeps the one book it makes (shared by :meth:`with_agent`
    copies, as the store is)."""

    @property
    def approvals(self) -> Approvals:
        """The durable approvals of this harness (docs/approvals.md): an
        :class:`~harnessweaver.approvals.Approvals` on :attr:`store` bound to this spec's
        identity, made on first use, one per harness."""
        book = self._books.get("book")
        if book is None:
            from ..approvals import Approvals, HttpNotifier, spec_identity

            config = self.approvals_config
            notify = None
            if config.url is not None and config.secret is not None:
                notify = HttpNotifier(config.url, config.secret)
            book = Approvals(
                self.store,
                spec=spec_identity(self),
                expires_after=config.expires_after,
                notify=notify,
            )
            book = self._books.setdefault("book", book)
        return book

    async def aclose(self) -> None:
        """Close the state store (its connections, its file); the harness is done."""
        await self.store.close()

    @classmethod
    def from_bus(
        cls,
        bus: HookBus,
        *,
        task: str | None = None,
        store: Store | None = None,
        **agent: Unpack[AgentChanges],
    ) -> Harness:
        """A harness built in code around an existing bus (no spec); ``agent`` are the
        :class:`~harnessweaver.AgentOptions` fields, as for :meth:`with_agent`. ``store`` is
        the state store its :meth:`aclose` closes (default: a new MemoryStore); the bus's
        stateful middleware are given views of it with ``harnessweaver.state.attach``."""
        if not isinstance(bus, HookBus):
            raise TypeError(f"Harness.from_bus takes an hw.HookBus, got {bus!r}")
        if store is None:
            return cls(bus, task=task, agent=AgentOptions(**agent))
        return cls(bus, task=task, agent=AgentOptions(**agent), store=store)

    def with_agent(self, **changes: Unpack[AgentChanges]) -> Harness:
        """A copy of this harness whose agent options have ``changes`` (any field of
        :class:`~harnessweaver.AgentOptions`: ``provider``, ``tools``, ``budgets``...)."""
        return replace(self, agent=replace(self.agent, **changes))

    async def run(self, task_input: JsonValue, *, ctx: RunContext | None = None) -> RunResult:
        """Run this harness's task on ``task_input`` through the bus until it stops: it
        completes, a middleware stops it, a budget ends it... (docs/agent.md)."""
        from ..agent.loop import start_run

        agent = self._agent()
        return await start_run(self.bus, agent, task=self.task, task_input=task_input, ctx=ctx)

    async def resume(
        self, state: RunState, decision: Decision | None = None, *, ctx: RunContext | None = None
    ) -> RunResult:
        """Go on with a stopped run exactly where it stopped. A suspended run needs the
        approver's ``decision``; a run stopped by a crash, a budget or a provider error
        resumes with none."""
        from ..agent.loop import resume_run

        return await resume_run(self.bus, self._agent(), state, decision, ctx=ctx)

    def _agent(self) -> AgentOptions:
        """The agent options a run uses: a spec that declares ``approvals:`` files its
        suspended calls in :attr:`approvals` unless the options name another book."""
        if self.agent.approvals is not None or not self.approvals_config.declared:
            return self.agent
        return replace(self.agent, approvals=self.approvals)

    def run_sync(
        self, task_input: JsonValue, *, ctx: RunContext | None = None, backend: str = "asyncio"
    ) -> RunResult:
        """:meth:`run` from synchronous code, in a new event loop of ``backend``."""
        import anyio

        return anyio.run(lambda: self.run(task_input, ctx=ctx), backend=backend)

    def resume_sync(
        self,
        state: RunState,
        decision: Decision | None = None,
        *,
        ctx: RunContext | None = None,
        backend: str = "asyncio",
    ) -> RunResult:
        """:meth:`resume` from synchronous code, in a new event loop of ``backend``."""
        import anyio

        return anyio.run(lambda: self.resume(state, decision, ctx=ctx), backend=backend)

    def entry(self, name: str) -> HarnessEntry:
        """The entry registered as ``name``."""
        for entry in self.entries:
            if entry.name == name:
                return entry
        raise KeyError(f"no middleware {name!r} in this harness")

    def chains(
        self, *, tool: str | None = None, model: str | None = None
    ) -> dict[str, tuple[HarnessEntry, ...]]:
        """Every hook point of the catalogue, in catalogue order, with its middleware in run
        order (an empty tuple when none is attached). With ``tool``, the tool hook points show
        the chain a call of that tool runs; with ``model``, ``model.before`` shows the chain a
        request to that model runs: without the middleware whose matcher does not match it
        (I22)."""
        known = {entry.name: entry for entry in self.entries}
        asked = {"tool": tool, "model": model}

        def chain(hook: str) -> tuple[Declaration, ...]:
            value = asked[CARRIED[hook]] if hook in CARRIED else None
            return self.bus.chain(hook) if value is None else self.bus.chain_for(hook, value)

        return {
            hook: tuple(
                known.get(decl.name) or HarnessEntry(decl.name, decl.name, None, decl, None)
                for decl in chain(hook)
            )
            for hook, _ in HOOKS
        }

    def render(
        self, format: str = "text", *, tool: str | None = None, model: str | None = None
    ) -> str:
        """The chains as ``harnessweaver hooks`` prints them: ``"text"``, ``"json"`` or
        ``"mermaid"``; with ``tool`` (``model``), the chain of that tool's calls (that model's
        requests), I22."""
        return render(self, format, tool=tool, model=model)


def _read_spec(path: Path, ctx: Context) -> Document | None:
    file = ctx.display(path)
    ok, content = ctx.read(path, file, SPEC_KEYS)
    return parse_spec(content, file, ctx.problems) if ok else None


def _profiles(
    spec: Document, ctx: Context, plugins: Plugins, folders: dict[str, Path]
) -> list[Document]:
    """The profiles the spec lists, parsed; ``folders`` gets each one's folder (by its file
    as shown): the paths its items' settings name are relative to it."""
    docs = []
    for ref in spec.profiles:
        found = find_profile(ref, ctx, plugins)
        if found is None:
            continue
        doc = parse_profile(found.content, found.file, found.layer, ctx.problems)
        plugins.load(doc, found.base)
        folders.setdefault(found.file, found.base)
        docs.append(doc)
    return docs


def _choose(spec: Document, key: str, name: str | None, ctx: Context) -> tuple[Item, ...]:
    options: Mapping[str, tuple[Item, ...]] = spec.envs if key == "envs" else spec.tasks
    if name is None:
        return ()
    if name not in options:
        what = key.removesuffix("s")
        have = f"the spec's {key} are {', '.join(options)}" if options else f"the spec has no {key}"
        message = f"unknown {what} {shown(name)}: {have}"
        ctx.problems.add(spec.file, key, spec.lines.get(key), f"unknown_{what}", message)
        return ()
    return options[name]


def _check_contracts(contracts: object) -> ContractMode | None:
    if contracts is None or contracts in CONTRACT_MODES:
        return contracts
    raise HarnessweaverError(
        "invalid_contracts",
        "contracts",
        f"invalid contracts mode {contracts!r}: a contract mode is 'warn' or 'strict' (contracts)",
    )


def _spec_contracts(spec: Document, problems: Problems) -> ContractMode | None:
    """The spec's own ``contracts:`` mode (a ``contracts=`` argument of :func:`load` wins)."""
    mode = spec.contracts
    if mode is None or mode in CONTRACT_MODES:
        return mode
    problems.add(
        spec.file,
        "contracts",
        spec.lines.get("contracts"),
        "invalid_contracts",
        f"invalid contracts mode {shown(mode)}: a contract mode is 'warn' or 'strict'",
    )
    return None


def _spec_identity(spec: Document, problems: Problems) -> IdentityScheme | None:
    """The spec's ``identity:`` scheme (I27), checked by the bus itself: what a bus refuses is
    a problem of the spec's line, with the bus's kind, rule and message."""
    try:
        return HookBus(identity=cast("IdentityScheme | None", spec.identity)).identity
    except HarnessweaverError as exc:
        problems.core(spec.file, "identity", spec.lines.get("identity"), exc)
        return None


def _harness_mode(
    spec: Document, env: str | None, task: str | None, problems: Problems
) -> str | None:
    """I25: the harness-wide mode: the selected task's ``mode:``, else the selected env
    overlay's, else the spec's; every one written is checked, selected or not."""
    written = [("mode", spec.mode, spec.lines.get("mode"))]
    written += [(f"envs.{n}.mode", m, spec.env_lines.get(n)) for n, m in spec.env_modes.items()]
    written += [(f"tasks.{n}.mode", m, spec.task_lines.get(n)) for n, m in spec.task_modes.items()]
    for where, mode, line in written:
        if mode is not None and mode not in MODES:
            message = f"invalid mode {shown(mode)}: mode is 'enforce' or 'audit'"
            problems.add(spec.file, where, line, "invalid_mode", message)
    chosen = spec.env_modes.get(env, spec.mode) if env is not None else spec.mode
    if task is not None:
        chosen = spec.task_modes.get(task, chosen)
    return chosen if chosen in MODES else None


def _spec_state(spec: Document, base: Path, problems: Problems) -> StateConfig | None:
    """The spec's ``state:`` checked (docs/state.md); a problem names the key and the
    variable, never a value (a URL may hold a password)."""
    node = spec.state
    try:
        return parse_config(plain(node), base=base)
    except StateConfigError as exc:
        for key, message in exc.problems:
            line = (line_of(node, key) if key else None) or spec.lines.get("state")
            where = f"state.{key}" if key else "state"
            problems.add(spec.file, where, line, "invalid_state", message)
        return None


def _spec_approvals(spec: Document, problems: Problems) -> ApprovalsConfig | None:
    """The spec's ``approvals:`` checked (docs/approvals.md); a problem names the key and the
    variable, never a value (a URL may hold a token; the secret is one)."""
    node = spec.approvals
    try:
        return parse_approvals(plain(node))
    except ApprovalsConfigError as exc:
        for key, message in exc.problems:
            head, _, rest = key.partition(".")
            line = line_of(node, head) if head else None
            if rest and head and isinstance(node, Mapping):
                line = line_of(node[head], rest) if isinstance(node.get(head), Mapping) else line
            where = f"approvals.{key}" if key else "approvals"
            problems.add(
                spec.file, where, line or spec.lines.get("approvals"), "invalid_approvals", message
            )
        return None


def _open_store(
    config: StateConfig | None, open_state: OpenState | None, spec: Document, problems: Problems
) -> Store | None:
    """The harness's store: ``open_state(config)`` when given, else :func:`open_store`."""
    try:
        return open_store(config) if open_state is None else open_state(config)
    except ImportError as exc:  # redis or psycopg not installed: the message names the extra
        line = spec.lines.get("state")
        problems.add(spec.file, "state.backend", line, "invalid_state", str(exc))
        return None


def _item_keys(item: Item, mode: str | None) -> Mapping[str, Any]:
    """An item's keys, with the harness-wide ``mode`` where it gives none of its own and is
    not a profile's (I25). Such an item is never baseline (S8), so its checks do not change."""
    if mode is None or "mode" in item.keys or item.source.layer in PROFILE_LAYERS:
        return item.keys
    return {**item.keys, "mode": mode}


def _register(
    chosen: Iterable[tuple[Checked, Any]],
    contracts: ContractMode | None,
    deadlines: Mapping[str, Any] | None = None,
    mode: str | None = None,
    identity: IdentityScheme | None = None,
    state: tuple[Store, float, str | None] | None = None,
) -> tuple[HookBus, tuple[HarnessEntry, ...]]:
    """The bus with every chosen item registered; each stateful one (``state=True``) is
    given its view of the harness's store (``state``: store, timeout, task) under the layer
    and the name it is registered with and its fail mode as registered."""
    bus = HookBus(contracts=contracts, deadlines=deadlines, identity=identity)
    entries = []
    for checked, middleware in chosen:
        item = checked.item
        layer = item.source.layer
        keys = _item_keys(item, mode)
        decl = bus.register(middleware, layer=layer, name=str(item.id), **keys)
        if checked.spec.state and state is not None:
            store, timeout, task = state
            view = StateView(
                store,
                layer=layer,
                item=decl.name,
                fail_mode=decl.fail_mode,
                timeout=timeout,
                task=task,
            )
            middleware.attach_state(view)
        loads = checked.config.loaded_files() if isinstance(checked.config, LoadsFiles) else ()
        entries.append(
            HarnessEntry(
                decl.name, item.label, item.use, decl, item.source, plain(item.settings), loads
            )
        )
    return bus, tuple(entries)


def load(
    path: str | os.PathLike[str],
    *,
    task: str | None = None,
    env: str | None = None,
    org_profiles: Iterable[str | os.PathLike[str]] | None = None,
    contracts: ContractMode | None = None,
    open_state: OpenState | None = None,
) -> Harness:
    """Load a harness spec (``harness.yaml``) with one task and one env overlay, or none.

    ``org_profiles`` are the directories ``org://`` profiles are looked up in (default: the
    ``HARNESSWEAVER_ORG_PROFILES`` environment variable, ``os.pathsep``-separated). Raises
    :class:`SpecError`, listing every problem, when anything is wrong; nothing is built then.
    ``contracts`` (``"warn"`` or ``"strict"``) is the harness's hook-contract mode.
    ``open_state`` makes the harness's state store from the spec's checked ``state:`` (``None``
    when it has none) instead of :func:`harnessweaver.state.open_store`: a host (the hook
    command, the conformance runner) chooses the store or wraps it; it is ``Harness.store``.
    """
    contracts = _check_contracts(contracts)  # refused before anything is read
    try:
        harness = _load(Path(path), task, env, org_profiles, contracts, open_state)
    except SpecError as exc:  # logged by kind only: a message may quote the spec (R9)
        kinds = ", ".join(dict.fromkeys(problem.kind for problem in exc.problems))
        _log.warning("harness spec %s rejected: %d problem(s): %s", path, len(exc.problems), kinds)
        raise
    _log.info(
        "harness spec %s loaded (task %s, env %s): %d middleware",
        path,
        task,
        env,
        len(harness.entries),
    )
    return harness


def _load(
    spec_path: Path,
    task: str | None,
    env: str | None,
    org_profiles: Iterable[str | os.PathLike[str]] | None,
    contracts: ContractMode | None,
    open_state: OpenState | None = None,
) -> Harness:
    ctx = Context.of(spec_path, org_profiles)
    problems = ctx.problems
    spec = _read_spec(spec_path, ctx)
    if spec is None:
        raise problems.error()
    spec_contracts = _spec_contracts(spec, problems)  # checked even when the argument wins
    contracts = contracts or spec_contracts
    deadlines = spec_deadlines(spec, task, problems)  # I26: the harness's and the task's
    mode = _harness_mode(spec, env, task, problems)
    identity = _spec_identity(spec, problems)
    state = _spec_state(spec, spec_path.parent, problems)
    approvals = _spec_approvals(spec, problems)
    plugins = Plugins(problems)
    plugins.load(spec, ctx.root)
    folders = {spec.file: ctx.root}
    profiles = _profiles(spec, ctx, plugins, folders)
    selected_env = _choose(spec, "envs", env, ctx)
    selected_task = _choose(spec, "tasks", task, ctx)
    base = [*chain.from_iterable(doc.middleware for doc in profiles), *spec.middleware]
    everything = [*base, *chain.from_iterable(spec.envs.values())]
    everything.extend(chain.from_iterable(spec.tasks.values()))
    checked = {
        id(item): check_item(item, plugins, problems, folders.get(item.source.file, ctx.root))
        for item in everything
    }
    check_ids(base, spec.envs, spec.tasks, problems)
    if problems:
        raise problems.error()
    selected = [checked[id(item)] for item in (*base, *selected_env, *selected_task)]
    chosen = [(c, build(c, problems)) for c in selected if c is not None and c.item.enabled]
    if problems or state is None or approvals is None:
        raise problems.error()
    config = state if spec.state is not None else None
    store = _open_store(config, open_state, spec, problems)  # once nothing else is wrong
    if store is None:
        raise problems.error()
    try:
        bus, entries = _register(
            chosen, contracts, deadlines, mode, identity, (store, state.timeout, task)
        )
    except HarnessweaverError as exc:  # every check ran already; this would be a core bug
        problems.core(spec.file, "", None, exc)
        raise problems.error() from exc
    return Harness(
        bus,
        entries,
        spec_path,
        task,
        env,
        contracts,
        mode=mode,
        store=store,
        approvals_config=approvals,
    )
