"""``state:`` in harness.yaml: which store a loaded harness gets, the view every stateful item
is given (its layer, id, fail mode, task), ``${NAME}`` references, and problems that name
the key and the variable, never a value."""

from __future__ import annotations

import importlib.util
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import state_plugin
from conftest import tool_call

import harnessweaver as hw
from harnessweaver.state import (
    MemoryStore,
    SqliteStore,
    StateConfig,
    StateConfigError,
    StateUnavailable,
    StateView,
    parse_config,
)

pytestmark = pytest.mark.anyio
PASSWORD = "hunter2-s3cret"
HEAD = "plugins: {local: [state_plugin]}\n"
ITEMS = """
middleware:
  - {use: stx.cap, id: app_cap}
  - {use: stx.plain}
tasks:
  refunds:
    guardrails:
      tool.before:
        - {use: stx.cap, id: task_cap, fail_mode: open, limit: 5}
"""


def write(folder: Path, body: str, name: str = "harness.yaml") -> Path:
    path = folder / name
    path.write_text(HEAD + textwrap.dedent(body).lstrip("\n"), encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def built() -> Iterator[list[state_plugin.Cap]]:
    state_plugin.BUILT.clear()
    yield state_plugin.BUILT
    state_plugin.BUILT.clear()


def views(built: list[state_plugin.Cap]) -> dict[str, StateView]:
    found = {}
    for cap in built:
        view = cap._state_view
        assert view is not None, "a stateful item was never attached"
        found[view.item] = view
    return found


def state_problems(path: Path, **kwargs: Any) -> list[hw.Problem]:
    with pytest.raises(hw.SpecError) as caught:
        hw.load(path, **kwargs)
    assert PASSWORD not in str(caught.value)
    found = [p for p in caught.value.problems if p.kind == "invalid_state"]
    assert all(p.rule == "state" for p in found)
    return found


@pytest.fixture
def secret_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HW_TEST_URL", f"redis://admin:{PASSWORD}@127.0.0.1:1/0")
    monkeypatch.delenv("HW_TEST_MISSING", raising=False)


# -- the store and the views ----------------------------------------------------------


async def test_without_state_each_harness_has_its_own_memory_store(
    tmp_path: Path, built: list[state_plugin.Cap]
) -> None:
    spec = write(tmp_path, ITEMS)
    one = hw.load(spec, task="refunds")
    got = views(built)
    assert set(got) == {"app_cap", "task_cap"}  # the stateless item gets none
    built.clear()
    two = hw.load(spec)
    assert isinstance(one.store, MemoryStore) and isinstance(two.store, MemoryStore)
    assert one.store is not two.store
    assert views(built)["app_cap"].store is two.store
    app, task = got["app_cap"], got["task_cap"]
    assert app.store is one.store and task.store is one.store
    assert (task.layer, task.fail_mode, task.task) == ("task", "open", "refunds")
    assert (app.layer, app.fail_mode, app.timeout) == ("app", "closed", 0.25)
    await one.aclose()
    await two.aclose()


async def test_a_profile_s_item_is_keyed_by_its_layer(
    tmp_path: Path, built: list[state_plugin.Cap]
) -> None:
    (tmp_path / "team.yaml").write_text(
        "profile: team\nmiddleware:\n  - {use: stx.cap, id: team_cap}\n", encoding="utf-8"
    )
    spec = write(tmp_path, "profiles: [team.yaml]\nmiddleware:\n  - {use: stx.cap}\n")
    harness = hw.load(spec)
    got = views(built)
    assert got["team_cap"].layer == "profile_file" and got["stx.cap"].layer == "app"
    env = hw.Envelope(attributes={"user": "ann"})
    assert got["team_cap"].key("user", env, "calls") == "hw1/profile_file/team_cap/user/ann/calls"
    await harness.aclose()


async def test_sqlite_state_is_shared_by_two_loaded_harnesses(
    tmp_path: Path, built: list[state_plugin.Cap]
) -> None:
    spec = write(tmp_path, "state: {backend: sqlite, path: data/state.db, timeout: 2s}\n" + ITEMS)
    (tmp_path / "data").mkdir()
    workers = [hw.load(spec), hw.load(spec)]
    assert all(isinstance(w.store, SqliteStore) for w in workers)
    assert all(v.timeout == 2.0 for v in views(built).values())
    outcomes = []
    for i in range(3):
        ctx = hw.RunContext(envelope=hw.Envelope(attributes={"user": "ann"}))
        result = await workers[i % 2].bus.emit("tool.before", tool_call(f"t{i}"), ctx)
        outcomes.append(result.outcome)
    assert outcomes == [hw.Continue(), hw.Continue(), hw.Block("too many calls", code="cap")]
    assert (tmp_path / "data" / "state.db").exists()  # relative to the spec's folder
    for worker in workers:
        await worker.aclose()


async def test_aclose_closes_the_store(tmp_path: Path) -> None:
    harness = hw.load(write(tmp_path, ITEMS))
    await harness.aclose()
    with pytest.raises(StateUnavailable):
        await harness.store.total("k")


async def test_an_unreachable_store_follows_each_item_s_fail_mode(tmp_path: Path) -> None:
    spec = write(tmp_path, "state: {backend: sqlite, path: no-such-folder/state.db}\n" + ITEMS)
    harness = hw.load(spec, task="refunds")
    ctx = hw.RunContext(envelope=hw.Envelope(attributes={"user": "ann"}))
    result = await harness.bus.emit("tool.before", tool_call(), ctx)
    assert result.outcome == hw.Block(
        "middleware app_cap: state store unavailable (sqlite)", code="state_unavailable"
    )
    assert "no-such-folder" not in repr(list(ctx.trace))
    await harness.aclose()


async def test_a_harness_from_a_bus_has_a_memory_store_or_the_one_given(tmp_path: Path) -> None:
    assert isinstance(hw.Harness.from_bus(hw.HookBus()).store, MemoryStore)
    store = SqliteStore(tmp_path / "s.db")
    harness = hw.Harness.from_bus(hw.HookBus(), store=store, task="t")
    assert harness.store is store and harness.with_agent().store is store
    await harness.aclose()
    with pytest.raises(StateUnavailable):
        await store.total("k")


def test_path_and_url_may_reference_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HW_STATE_DIR", str(tmp_path / "elsewhere"))
    config = parse_config({"backend": "sqlite", "path": "${HW_STATE_DIR}/s.db"}, base=tmp_path)
    assert config.path == str(tmp_path / "elsewhere" / "s.db")
    config = parse_config(
        {"backend": "postgres", "url": "postgresql://u:${PW}@127.0.0.1/db"},
        environ={"PW": PASSWORD},
    )
    assert config.url == f"postgresql://u:{PASSWORD}@127.0.0.1/db"
    assert repr(config) == "StateConfig(backend='postgres', timeout=0.25)"
    assert parse_config(None) == StateConfig()


def test_redis_and_postgres_connect_to_nothing_when_loaded(
    tmp_path: Path, secret_env: None
) -> None:
    for backend in ("redis", "postgres"):
        spec = write(tmp_path, f"state: {{backend: {backend}, url: '${{HW_TEST_URL}}'}}\n")
        if importlib.util.find_spec(f"harnessweaver.state.{backend}") is None:
            (problem,) = state_problems(spec)  # not there yet, or not installed: says so
            assert "state` extra" in problem.message and problem.item == "state.backend"
            continue
        harness = hw.load(spec)  # nothing listens on port 1: loading does not care
        assert harness.store.backend == backend
        assert PASSWORD not in repr(harness.store)


# -- problems -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("state", "where", "said"),
    [
        ("{backend: mongo}", "state.backend", "unknown backend: the backends are memory, sqlite"),
        ("{backend: sqlite}", "state.path", "backend sqlite needs path"),
        ("{backend: redis}", "state.url", "backend redis needs url"),
        ("{backend: memory, path: x.db}", "state.path", "backend memory takes no path"),
        ("{backend: sqlite, path: x.db, url: 'redis://hunter2-s3cret@h'}", "state.url",
         "backend sqlite takes no url"),
        ("{backend: sqlite, path: x.db, pasword: hunter2-s3cret}", "state.pasword",
         "unknown key: the keys are backend, url, path, timeout"),
        ("{backend: sqlite, path: x.db, timeout: soon}", "state.timeout",
         "timeout is a duration such as 250ms or 1s"),
        ("{backend: sqlite, path: x.db, timeout: -1s}", "state.timeout", "a duration"),
        ("{backend: sqlite, path: 7}", "state.path", "path is text, got int"),
        ("sqlite", "state", "state is a mapping"),
        ("{backend: redis, url: 'redis://u:${HW_TEST_MISSING}@h'}", "state.url",
         "the environment variable HW_TEST_MISSING referenced by url is not set"),
        ("{backend: redis, url: '${}'}", "state.url", "must name a variable"),
        ("{backend: redis, url: '${HW_TEST_EMPTY}'}", "state.url", "empty once its references"),
    ],
)  # fmt: skip
def test_a_bad_state_names_the_key_never_the_value(
    tmp_path: Path,
    secret_env: None,
    monkeypatch: pytest.MonkeyPatch,
    state: str,
    where: str,
    said: str,
) -> None:
    monkeypatch.setenv("HW_TEST_EMPTY", "")
    spec = write(tmp_path, f"middleware: [{{use: stx.cap}}]\nstate: {state}\n")
    (problem,) = state_problems(spec)
    assert problem.item == where
    assert said in problem.message
    assert problem.line == 3  # the state: line (flow mappings carry no key lines)
    assert str(problem).startswith("harness.yaml:3: ")


def test_every_problem_is_listed_with_its_line(tmp_path: Path, secret_env: None) -> None:
    spec = write(
        tmp_path,
        f"""
        state:
          backend: redis
          url: "redis://admin:{PASSWORD}@${{HW_TEST_MISSING}}:6379"
          timeout: never
          extra: {PASSWORD}
        """,
    )
    found = {(p.item, p.line) for p in state_problems(spec)}
    assert found == {("state.url", 4), ("state.timeout", 5), ("state.extra", 6)}


def test_the_config_error_lists_key_and_message() -> None:
    with pytest.raises(StateConfigError) as caught:
        parse_config({"backend": "redis", "url": "${NOPE_NOT_SET}"}, environ={})
    assert caught.value.problems == (
        ("url", "the environment variable NOPE_NOT_SET referenced by url is not set"),
    )
    assert str(caught.value) == (
        "state.url: the environment variable NOPE_NOT_SET referenced by url is not set"
    )


async def test_a_host_chooses_the_store_with_open_state(
    tmp_path: Path, built: list[state_plugin.Cap]
) -> None:
    asked: list[StateConfig | None] = []
    mine = MemoryStore()

    def open_state(config: StateConfig | None) -> MemoryStore:
        asked.append(config)
        return mine

    harness = hw.load(write(tmp_path, ITEMS), open_state=open_state)
    assert asked == [None] and harness.store is mine  # no state: in the spec
    assert views(built)["app_cap"].store is mine
    spec = write(tmp_path, "state: {backend: sqlite, path: s.db, timeout: 1s}\n" + ITEMS)
    hw.load(spec, open_state=open_state)
    assert asked[1] == StateConfig("sqlite", None, str(tmp_path / "s.db"), 1.0)
    assert views(built)["app_cap"].timeout == 1.0


def test_open_state_is_not_called_for_a_bad_spec(tmp_path: Path) -> None:
    def open_state(config: StateConfig | None) -> MemoryStore:
        raise AssertionError("called")

    spec = write(tmp_path, "state: {backend: nope}\n" + ITEMS)
    with pytest.raises(hw.SpecError):
        hw.load(spec, open_state=open_state)
