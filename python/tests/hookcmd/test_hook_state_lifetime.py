"""A session's state goes by age: its lifetime after its last event (``--state-ttl``,
``$HARNESSWEAVER_HOOK_STATE_TTL``, 30 days by default), checked on an injected clock."""

from __future__ import annotations

import io
import json
import os
import sqlite3
import subprocess
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from hookcmd_support import GUARDS, command, event, run_process, warm_helper

from harnessweaver.hookcmd import store as store_module
from harnessweaver.hookcmd.command import HookOptions, main
from harnessweaver.hookcmd.lifetime import DEFAULT_TTL, MAX_TTL, TTL_ENV, parse_ttl
from harnessweaver.hookcmd.store import Store

T0 = 1_900_000_000.0
HOUR = 3600


class Clock:
    """The store's clock, set by the test."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.at = T0
        monkeypatch.setattr(store_module, "now", lambda: self.at)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    return Clock(monkeypatch)


def _call(state: Path, session: str, ttl: int | None = None) -> tuple[int, str, str]:
    options = HookOptions(agent="claude-code", spec=GUARDS, state=state, state_ttl=ttl)
    out, err = io.StringIO(), io.StringIO()
    raw = json.dumps(event("claude-code", "PreToolUse", session)).encode()
    code = main(options, io.BytesIO(raw), out, err)
    return code, out.getvalue(), err.getvalue()


def _sessions(state: Path) -> list[str]:
    with closing(sqlite3.connect(state)) as db:
        return [session for (session,) in db.execute("SELECT session FROM sessions ORDER BY 1")]


def _times(state: Path, session: str) -> tuple[float, float]:
    with closing(sqlite3.connect(state)) as db:
        query = "SELECT updated, expires FROM sessions WHERE session = ?"
        ((updated, expires),) = db.execute(query, (session,)).fetchall()
    return float(updated), float(expires)


def test_a_session_is_forgotten_its_lifetime_after_its_last_event(
    clock: Clock, tmp_path: Path
) -> None:
    state = tmp_path / "st.db"
    for _ in range(2):
        assert _call(state, "s-old") == (0, "", "")  # the loop guard counts 2
    clock.at = T0 + DEFAULT_TTL / 2
    _call(state, "s-recent")
    assert _times(state, "s-old") == (T0, T0 + DEFAULT_TTL)
    clock.at = T0 + DEFAULT_TTL  # not yet past it: a third call would be a loop
    _call(state, "s-other")
    assert _sessions(state) == ["s-old", "s-other", "s-recent"]
    clock.at = T0 + DEFAULT_TTL + 1
    _call(state, "s-other")
    assert _sessions(state) == ["s-other", "s-recent"]
    code, out, _ = _call(state, "s-old")
    assert (code, out) == (0, "")  # a new count: 1, not 3


def test_an_expired_session_starts_afresh_at_its_own_next_event(
    clock: Clock, tmp_path: Path
) -> None:
    state = tmp_path / "st.db"
    for _ in range(2):
        _call(state, "s-back")
    clock.at = T0 + DEFAULT_TTL + 1  # nothing else ran meanwhile to expire it
    assert _call(state, "s-back") == (0, "", "")  # expired before it is read
    assert _times(state, "s-back") == (clock.at, clock.at + DEFAULT_TTL)


def test_the_lifetime_comes_from_the_option_else_the_environment(
    clock: Clock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = tmp_path / "st.db"
    monkeypatch.setenv(TTL_ENV, "2h")
    _call(state, "s-env")
    _call(state, "s-option", ttl=90 * 86_400)
    assert _times(state, "s-env") == (T0, T0 + 2 * HOUR)
    assert _times(state, "s-option") == (T0, T0 + 90 * 86_400)
    clock.at = T0 + 3 * HOUR  # each row keeps the lifetime it was written with
    _call(state, "s-third", ttl=60)
    assert _sessions(state) == ["s-option", "s-third"]


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("900", 900), ("900s", 900), ("15m", 900), ("12h", 43_200), ("30d", DEFAULT_TTL),
     (" 7D ", 7 * 86_400), ("3650d", MAX_TTL), ("1", 1)],
)  # fmt: skip
def test_a_lifetime_is_seconds_or_a_number_with_a_unit(text: str, seconds: int) -> None:
    assert parse_ttl(text) == seconds


@pytest.mark.parametrize(
    "text", ["", "0", "0d", "-5", "1.5h", "1e3", "30 d", "1w", "d", "3651d", "٣", "abc"]
)
def test_anything_else_is_refused_with_the_form(text: str) -> None:
    with pytest.raises(ValueError, match="whole number of seconds"):
        parse_ttl(text)


def test_a_bad_environment_value_fails_closed_naming_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(TTL_ENV, "forever")
    code, out, err = _call(tmp_path / "st.db", "s-bad")
    assert (code, out) == (2, "")
    assert f"{TTL_ENV}='forever': expected a whole number of seconds" in err
    assert "failing closed" in err and err.count("\n") == 1
    assert not (tmp_path / "st.db").exists()  # nothing was emitted, nothing stored
    assert _call(tmp_path / "st.db", "s-bad", ttl=HOUR)[0] == 0  # the option wins


def test_a_bad_option_fails_closed_naming_it(tmp_path: Path) -> None:
    args = command("claude-code", GUARDS, tmp_path / "st.db", "--state-ttl", "2 weeks")
    code, out, err = _run(args, event("claude-code", "PreToolUse"), {})
    assert (code, out) == (2, b"")
    assert b"argument --state-ttl: '2 weeks': expected a whole number" in err


@pytest.mark.parametrize("warm", [False, True])
def test_the_option_reaches_the_process_that_answers(tmp_path: Path, warm: bool) -> None:
    state = tmp_path / "st.db"
    doc: Any = event("claude-code", "PreToolUse", "s-opt")
    args = command("claude-code", GUARDS, state, "--state-ttl", "45m")
    if warm:
        with warm_helper() as env:
            ran = _run(args, doc, env)
    else:
        ran = _run(args, doc, {"HARNESSWEAVER_HOOK_WARM": "0"})
    assert ran == (0, b"", b"")
    updated, expires = _times(state, "s-opt")
    assert expires - updated == 45 * 60


def _run(args: list[str], doc: Any, env: dict[str, str]) -> tuple[int, bytes, bytes]:
    done = subprocess.run(
        args,
        input=json.dumps(doc).encode(),
        capture_output=True,
        env={**os.environ, **env},
        timeout=120,
        check=False,
    )
    return done.returncode, done.stdout, done.stderr


def test_options_carry_the_lifetime_to_the_helper() -> None:
    options = HookOptions(agent="gemini", spec=GUARDS, state_ttl=7200)
    assert HookOptions.from_json(options.to_json()) == options
    assert HookOptions.from_json(options._replace(state_ttl=None).to_json()).state_ttl is None
    for bad in ("7200", 1.5, True):
        with pytest.raises(TypeError):
            HookOptions.from_json({**options.to_json(), "state_ttl": bad})


def test_a_database_written_before_expiry_times_is_taken_over(tmp_path: Path) -> None:
    state = tmp_path / "old.db"
    with closing(sqlite3.connect(state)) as db:
        db.executescript(
            """
            CREATE TABLE sessions (agent TEXT NOT NULL, session TEXT NOT NULL,
                harness TEXT NOT NULL, step INTEGER NOT NULL, blocked TEXT,
                states TEXT NOT NULL, updated REAL NOT NULL,
                PRIMARY KEY (agent, session, harness));
            CREATE INDEX sessions_updated ON sessions (updated);
            INSERT INTO sessions VALUES ('codex', 's-was', 'h', 3, NULL, '[]', 1000.0);
            """
        )
    store = Store(state)
    try:
        assert store.sessions() == [("codex", "s-was")]
        assert store.load("codex", "s-was", "h").step == 3
        assert store.expire(1000.0 + DEFAULT_TTL) == 0
        assert store.expire(1000.0 + DEFAULT_TTL + 1) == 1
    finally:
        store.close()
    with closing(sqlite3.connect(state)) as db:
        indexes = {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
    assert "sessions_expires" in indexes and "sessions_updated" not in indexes
    assert run_process("codex", event("codex", "PreToolUse"), GUARDS, state).code == 0
