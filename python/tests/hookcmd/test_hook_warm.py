"""The warm helper (``hookcmd/warm.py``, ``hookcmd/helper.py``): later events of a machine are
answered by a helper that imported the bus once, with the cold path's answers and state; it
fails closed, never open, and leaves no process behind once idle."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hookcmd_support import (
    GUARDS,
    _wait_for,
    command,
    event,
    run_in_process,
    run_process,
    serving,
    sockets,
    stop_helpers,
    warm_helper,
)

from harnessweaver.hookcmd import protocol, warm

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the helper forks")

BARRED = ("pydantic", "asyncio", "sqlite3", "yaml", "harnessweaver.spec", "harnessweaver.events")
"""What a warm client must not import: all of it is the helper's."""

CLIENT = """
import json, sys
for name in {barred!r}:
    sys.modules[name] = None  # importing it fails: only the helper may answer
from harnessweaver.cli import main
code = main(sys.argv[1:])
sys.stdout.flush()
sys.stderr.write("\\nMODULES " + json.dumps(sorted(m for m, v in sys.modules.items() if v)) + "\\n")
raise SystemExit(code)
"""


def _client(
    doc: dict[str, Any], spec: Path, state: Path, env: dict[str, str], cwd: Path | None = None
) -> tuple[int, str]:
    """A hook process that cannot import the bus: it answers only through the helper."""
    args = command("claude-code", spec, state)[3:]
    done = subprocess.run(
        [sys.executable, "-c", CLIENT.format(barred=BARRED), *args],
        input=json.dumps(doc).encode(),
        capture_output=True,
        env={**os.environ, **env},
        cwd=cwd,
        timeout=120,
        check=False,
    )
    err = done.stderr.decode()
    assert "MODULES " in err, err
    loaded = json.loads(err.rsplit("MODULES ", 1)[1])
    assert not [m for m in loaded if m.split(".")[0] in BARRED or m.startswith(BARRED)]
    return done.returncode, done.stdout.decode()


@pytest.mark.parametrize(
    "name", ["PreToolUse", "PostToolUse", "UserPromptSubmit", "SessionStart", "Stop"]
)
def test_the_helper_answers_as_the_cold_path_does(name: str, tmp_path: Path) -> None:
    doc = event("claude-code", name, "s-same")
    cold = run_in_process("claude-code", doc, GUARDS, tmp_path / "cold.db")
    with warm_helper() as env:
        code, out = _client(doc, GUARDS, tmp_path / "warm.db", env)
    assert (code, out) == (cold.code, cold.stdout)


def test_the_helper_keeps_counting_where_cold_processes_left_off(tmp_path: Path) -> None:
    state = tmp_path / "st.db"
    doc = event("claude-code", "PreToolUse", "s-mixed")
    first = run_process("claude-code", doc, GUARDS, state)  # cold
    with warm_helper() as env:
        second = _client(doc, GUARDS, state, env)
        third = _client(doc, GUARDS, state, env)
    assert first.code == 0 and first.stdout == ""
    assert second == (0, "")
    assert third[0] == 0 and "loop_detected" in third[1]


def test_a_changed_spec_is_read_again(tmp_path: Path) -> None:
    spec = tmp_path / "harness.yaml"
    spec.write_text("middleware: []\n")
    doc = event("claude-code", "PreToolUse", "s-edit")
    with warm_helper() as env:
        assert _client(doc, spec, tmp_path / "st.db", env) == (0, "")
        allow = "middleware:\n  - {use: harnessweaver.tool_allowlist, allow: [Read]}\n"
        spec.write_text(allow)
        code, out = _client(doc, spec, tmp_path / "st.db", env)
    assert code == 0
    assert json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_the_child_takes_the_clients_directory_and_environment(tmp_path: Path) -> None:
    (tmp_path / "plugin_here.py").write_text(
        "import os\nimport harnessweaver as hw\n\n"
        "@hw.middleware(hooks=['tool.before'], fail_mode='closed')\n"
        "async def by_env(event, ctx):\n"
        "    if os.environ.get('HW_WARM_TEST') == 'block':\n"
        "        return hw.Block(reason='blocked by ' + os.getcwd(), code='env')\n"
        "    return hw.Continue()\n\n"
        "plugin = hw.Plugin(namespace='here', version='1', middleware=[by_env])\n"
    )
    spec = tmp_path / "harness.yaml"
    spec.write_text("plugins:\n  local: [plugin_here]\nmiddleware:\n  - {use: here.by_env}\n")
    doc = event("claude-code", "PreToolUse", "s-env")
    with warm_helper() as env:
        allowed = _client(doc, Path("harness.yaml"), Path("st.db"), env, tmp_path)
        blocked = _client(
            doc, Path("harness.yaml"), Path("st.db"), {**env, "HW_WARM_TEST": "block"}, tmp_path
        )
    assert allowed == (0, "")
    reason = json.loads(blocked[1])["hookSpecificOutput"]["permissionDecisionReason"]
    assert reason == f"blocked by {tmp_path} (env)"


def test_a_child_that_dies_after_taking_the_event_fails_closed(tmp_path: Path) -> None:
    (tmp_path / "plugin_dies.py").write_text(
        "import os\nimport harnessweaver as hw\n\n"
        "@hw.middleware(hooks=['tool.before'], fail_mode='closed')\n"
        "async def dies(event, ctx):\n"
        "    os._exit(0)\n\n"
        "plugin = hw.Plugin(namespace='dies', version='1', middleware=[dies])\n"
    )
    spec = tmp_path / "harness.yaml"
    spec.write_text("plugins:\n  local: [plugin_dies]\nmiddleware:\n  - {use: dies.dies}\n")
    with warm_helper() as env:
        done = subprocess.run(
            command("claude-code", spec, tmp_path / "st.db"),
            input=json.dumps(event("claude-code", "PreToolUse")).encode(),
            capture_output=True,
            env={**os.environ, **env},
            timeout=120,
            check=False,
        )
        after = _client(event("claude-code", "SessionStart"), GUARDS, tmp_path / "b.db", env)
    assert done.returncode == protocol.EXIT_BLOCK
    assert done.stdout == b""
    assert b"gave no answer (failing closed)" in done.stderr
    assert after == (0, "")  # the helper itself goes on


def test_a_hostile_request_ends_its_child_and_not_the_helper(tmp_path: Path) -> None:
    with warm_helper() as env:
        [path] = sockets(Path(env["HARNESSWEAVER_HOOK_WARM_DIR"]))
        for junk in (b"", b"not json\n{}", b'{"options": 7}\n', b"\xff" * 100_000):
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
                conn.connect(str(path))
                assert conn.recv(1) == warm.ACK
                conn.sendall(junk)
                conn.shutdown(socket.SHUT_WR)
                assert conn.recv(1) == b""  # no answer: a real client fails closed
        doc = event("claude-code", "PreToolUse", "s-after")
        assert _client(doc, GUARDS, tmp_path / "st.db", env) == (0, "")


def test_a_stale_socket_is_replaced(tmp_path: Path) -> None:
    with warm_helper() as env:
        folder = Path(env["HARNESSWEAVER_HOOK_WARM_DIR"])
        [path] = sockets(folder)
        stop_helpers(folder, signal.SIGKILL)  # a helper that crashed
        _wait_for(lambda: not _serving(path), "the helper to stop")
        assert path.exists()  # killed: its socket is left behind
        ran = run_process(
            "claude-code", event("claude-code", "PreToolUse"), GUARDS, tmp_path / "a", env
        )
        assert (ran.code, ran.stdout, ran.stderr) == (0, "", "")  # answered cold
        _wait_for(lambda: _serving(path), "a new helper")
        assert _client(event("claude-code", "Stop"), GUARDS, tmp_path / "b", env)[0] == 0


def _serving(path: Path) -> bool:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        try:
            conn.connect(str(path))
            return conn.recv(1) == warm.ACK
        except OSError:
            return False


def test_a_second_helper_for_the_same_socket_leaves_at_once(tmp_path: Path) -> None:
    with warm_helper() as env:
        [path] = sockets(Path(env["HARNESSWEAVER_HOOK_WARM_DIR"]))
        done = subprocess.run(
            [sys.executable, "-P", "-m", "harnessweaver.hookcmd.helper", str(path), "60"],
            capture_output=True,
            timeout=120,
            check=False,
        )
        assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
        assert _serving(path)


def test_an_idle_helper_exits_and_removes_its_socket() -> None:
    # 3 s, not 1: the helper must outlive the fixture's wait for its socket on a loaded machine.
    with warm_helper(idle=3) as env:
        folder = Path(env["HARNESSWEAVER_HOOK_WARM_DIR"])
        _wait_for(lambda: not sockets(folder), "the idle helper to leave")


@pytest.mark.parametrize("value", ["0", "off", "false", "no", " OFF "])
def test_the_helper_can_be_turned_off(value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(warm.ENV, value)
    monkeypatch.setenv(warm.IDLE_ENV, "not even read")
    assert warm.settings() is None


@pytest.mark.parametrize(
    ("value", "idle", "lifetime"),
    [("", "", 600), ("1", "", 600), ("on", " 45 ", 45), ("yes", "1", 1), ("", "86400", 86400)],
)
def test_the_helper_lifetime(
    value: str, idle: str, lifetime: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(warm.ENV, value)
    monkeypatch.setenv(warm.IDLE_ENV, idle)
    assert warm.settings() == lifetime


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("HARNESSWEAVER_HOOK_WARM", "2"),
        ("HARNESSWEAVER_HOOK_WARM", "warm"),
        ("HARNESSWEAVER_HOOK_WARM_IDLE", "0"),
        ("HARNESSWEAVER_HOOK_WARM_IDLE", "-1"),
        ("HARNESSWEAVER_HOOK_WARM_IDLE", "86401"),
        ("HARNESSWEAVER_HOOK_WARM_IDLE", "1.5"),
        ("HARNESSWEAVER_HOOK_WARM_IDLE", "\u0663"),
    ],
)
def test_a_bad_setting_fails_closed_naming_it(name: str, value: str, tmp_path: Path) -> None:
    env = {warm.ENV: "1", name: value}
    doc = event("claude-code", "PreToolUse")
    ran = run_process("claude-code", doc, GUARDS, tmp_path / "st.db", env)
    assert ran.code == protocol.EXIT_BLOCK and ran.stdout == ""
    assert f"{name}={value!r}" in ran.stderr and "failing closed" in ran.stderr


def test_a_folder_others_can_enter_is_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    folder = Path(tempfile.mkdtemp(prefix="hw-"))
    try:
        folder.chmod(0o777)
        monkeypatch.setenv(warm.DIR_ENV, str(folder))
        assert warm.address() is None
        folder.chmod(0o700)
        assert warm.address() is not None
    finally:
        folder.rmdir()


def test_a_socket_path_too_long_for_unix_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / ("x" * 90)
    monkeypatch.setenv(warm.DIR_ENV, str(folder))
    assert warm.address() is None


def test_the_socket_and_its_folder_are_private() -> None:
    with warm_helper() as env:
        folder = Path(env["HARNESSWEAVER_HOOK_WARM_DIR"])
        [path] = sockets(folder)
        assert stat.S_IMODE(path.stat().st_mode) & 0o077 == 0
        assert stat.S_IMODE(folder.stat().st_mode) & 0o077 == 0


def test_the_blocking_status_is_the_protocols() -> None:
    assert warm.EXIT_BLOCK == protocol.EXIT_BLOCK


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_the_helper_keeps_flat_memory_over_many_events_and_sessions(tmp_path: Path) -> None:
    with warm_helper() as env:
        folder = Path(env["HARNESSWEAVER_HOOK_WARM_DIR"])
        [lock] = folder.glob("hook-*.sock.lock")
        pid = int(lock.read_text())

        def burst(start: int) -> None:
            for number in range(start, start + 40):
                doc = event("claude-code", "PreToolUse", f"s-{number}")
                doc["tool_input"] = {"command": f"echo {number} " + "x" * 2000}
                assert _client(doc, GUARDS, tmp_path / "st.db", env)[0] == 0

        burst(0)
        settled = _rss_kib(pid)
        burst(40)
        burst(80)
        grown = _rss_kib(pid) - settled
    assert grown < 1024, f"the helper grew by {grown} KiB over 80 events of 80 sessions"


COUNTING_PLUGIN = (
    "import harnessweaver as hw\n\n"
    "@hw.middleware(hooks=['tool.before'], fail_mode='closed')\n"
    "async def counted(event, ctx):\n"
    "    with open('calls.txt', 'a') as calls:\n"
    "        calls.write(event.call.arguments['command'] + '\\n')\n"
    "    return hw.Continue()\n\n"
    "plugin = hw.Plugin(namespace='count', version='1', middleware=[counted])\n"
)


def _counting_project(tmp_path: Path) -> Path:
    """A spec whose one middleware writes each tool call it sees to ``calls.txt``."""
    (tmp_path / "plugin_count.py").write_text(COUNTING_PLUGIN)
    spec = tmp_path / "harness.yaml"
    spec.write_text("plugins:\n  local: [plugin_count]\nmiddleware:\n  - {use: count.counted}\n")
    return spec


def _tool_call(command_text: str) -> dict[str, Any]:
    return event("claude-code", "PreToolUse", "s-count", tool_input={"command": command_text})


def test_the_second_event_of_a_machine_is_answered_by_the_helper(tmp_path: Path) -> None:
    """The first event starts the helper before it answers in-process, and the helper listens
    before it imports anything: the very next event waits for it (a client that cannot import
    the bus can only be answered by it), and each event runs exactly once."""
    spec = _counting_project(tmp_path)
    folder = Path(tempfile.mkdtemp(prefix="hw-"))
    env = {warm.ENV: "1", warm.IDLE_ENV: "300", warm.DIR_ENV: str(folder)}
    try:
        first = subprocess.run(
            command("claude-code", spec, tmp_path / "st.db"),
            input=json.dumps(_tool_call("echo first")).encode(),
            capture_output=True,
            env={**os.environ, **env},
            cwd=tmp_path,
            timeout=120,
            check=False,
        )
        second = _client(_tool_call("echo second"), spec, tmp_path / "st.db", env, tmp_path)
    finally:
        stop_helpers(folder)
        shutil.rmtree(folder, ignore_errors=True)
    assert (first.returncode, first.stdout, first.stderr) == (0, b"", b"")
    assert second == (0, "")
    assert (tmp_path / "calls.txt").read_text().splitlines() == ["echo first", "echo second"]


def _file_client(
    doc: dict[str, Any], spec: Path, state: Path, env: dict[str, str], cwd: Path
) -> subprocess.CompletedProcess[bytes]:
    """The hook as ``warm.command_line()`` runs it (no ``site``), listing what it imported."""
    args = command("claude-code", spec, state)[4:]
    return subprocess.run(
        [*warm.command_line(), *args],
        input=json.dumps(doc).encode(),
        capture_output=True,
        env={**os.environ, **env, "PYTHONPROFILEIMPORTTIME": "1"},
        cwd=cwd,
        timeout=120,
        check=False,
    )


def _imported(stderr: bytes) -> set[str]:
    lines = stderr.decode().splitlines()
    return {line.rsplit("|", 1)[1].strip() for line in lines if line.startswith("import time:")}


def test_the_file_client_loads_only_builtin_modules_when_the_helper_answers(
    tmp_path: Path,
) -> None:
    spec = _counting_project(tmp_path)
    with warm_helper() as env:
        done = _file_client(_tool_call("echo file"), spec, tmp_path / "st.db", env, tmp_path)
    assert done.returncode == 0 and done.stdout == b"", done.stderr
    imported = _imported(done.stderr)
    assert imported, "no module list"
    heavy = {"socket", "json", "hashlib", "pathlib", "re", "typing", "enum", "site"}
    assert not {m for m in imported if m.split(".")[0] in heavy | {"harnessweaver"}}
    assert (tmp_path / "calls.txt").read_text().splitlines() == ["echo file"]


def test_the_file_client_answers_in_process_without_a_helper(tmp_path: Path) -> None:
    doc = event("claude-code", "PreToolUse", "s-file", tool_input={"command": "rm -rf /"})
    spec = tmp_path / "harness.yaml"
    spec.write_text("middleware:\n  - {use: harnessweaver.tool_allowlist, allow: [Read]}\n")
    cold = run_in_process("claude-code", doc, spec, tmp_path / "cold.db")
    done = _file_client(doc, spec, tmp_path / "file.db", {warm.ENV: "0"}, tmp_path)
    assert (done.returncode, done.stdout.decode()) == (cold.code, cold.stdout)
    assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_every_option_reaches_the_helper(tmp_path: Path) -> None:
    """The helper's child parses the hook's arguments again (``warm.words``): every field of
    the options, a path and a repeated one included, comes back as it was."""
    from harnessweaver.cli import build_parser
    from harnessweaver.hookcmd.options import HookOptions

    given = HookOptions(
        agent="gemini",
        spec=Path("rel/harness.yaml"),
        task="review",
        env="prod",
        state=tmp_path / "st.db",
        org_profiles=(Path("a"), tmp_path / "b"),
        rewrite="ask",
        state_ttl=3600,
        trace=tmp_path / "trace.jsonl",
    )
    assert all(value is not None for value in given)  # every field, so none goes unchecked
    args = build_parser("hook").parse_args(["hook", *warm.words(given)])
    parsed = {name: getattr(args, name) for name in HookOptions._fields}
    assert HookOptions(**{**parsed, "org_profiles": tuple(parsed["org_profiles"])}) == given


def test_a_document_over_the_limit_is_refused_unsent(tmp_path: Path) -> None:
    doc = event("claude-code", "PreToolUse", "s-big", tool_input={"command": "x" * 5000})
    with warm_helper() as env:
        ran = run_process(
            "claude-code",
            doc,
            GUARDS,
            tmp_path / "st.db",
            {**env, "HARNESSWEAVER_HOOK_MAX_INPUT": "4096"},
        )
    assert ran.code == protocol.EXIT_BLOCK and ran.stdout == ""
    assert "larger than 4096 bytes" in ran.stderr and "failing closed" in ran.stderr
    assert not (tmp_path / "st.db").exists()  # nothing reached the bus


def _held(folder: Path) -> bool:
    """Whether a helper holds the lock of its socket in ``folder`` (it does while it lives)."""
    import fcntl

    [path] = folder.glob("hook-*.sock.lock")
    with path.open("a+") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return True
    return False


def test_stop_helper_stops_the_helpers_of_this_folder_only(tmp_path: Path) -> None:
    """``harnessweaver hook --stop-helper`` stops the helpers whose sockets are in this user's
    folder, by the lock each holds: not another folder's, and not a process whose pid a stale
    lock file names."""
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
    try:
        with warm_helper() as mine, warm_helper() as other:
            here, there = (Path(env[warm.DIR_ENV]) for env in (mine, other))
            [path] = sockets(here)
            stale = here / "hook-stale.sock.lock"
            stale.write_text(f"{bystander.pid}\n")  # no helper holds it
            done = subprocess.run(
                [*command("claude-code", GUARDS, tmp_path / "st.db")[:4], "--stop-helper"],
                capture_output=True,
                env={**os.environ, **mine},
                timeout=120,
                check=False,
            )
            assert (done.returncode, done.stderr) == (0, b"")
            assert b"stopped 1 warm helper" in done.stdout
            assert not path.exists()
            stale.unlink()
            assert not _held(here)
            assert _held(there) and serving(sockets(there)[0])
            assert bystander.poll() is None
    finally:
        bystander.kill()
        bystander.wait()


def test_events_at_once_are_each_answered_by_the_helper_once(tmp_path: Path) -> None:
    """Parallel tool calls: more events at once than children forked ahead; each is answered
    by the helper (the clients cannot import the bus) and runs exactly once."""
    spec = _counting_project(tmp_path)
    args = command("claude-code", spec, tmp_path / "st.db")[3:]
    with warm_helper() as env:
        clients = [
            subprocess.Popen(
                [sys.executable, "-c", CLIENT.format(barred=BARRED), *args],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env={**os.environ, **env},
                cwd=tmp_path,
            )
            for _ in range(5)
        ]
        answers = [
            client.communicate(json.dumps(_tool_call(f"echo {n}")).encode(), timeout=120)
            for n, client in enumerate(clients)
        ]
    assert [client.returncode for client in clients] == [0] * 5, answers
    assert all(out == b"" for out, _ in answers)
    calls = (tmp_path / "calls.txt").read_text().splitlines()
    assert sorted(calls) == [f"echo {n}" for n in range(5)]


def test_the_helper_keeps_the_state_database_open_between_events(tmp_path: Path) -> None:
    """A child is not the last connection to the state database once the helper has seen it:
    SQLite's last connection checkpoints a WAL database and deletes its log as it closes
    (writing and syncing the file at every event); with the helper's holder connected, the log
    outlives the event that wrote it."""
    state = tmp_path / "st.db"
    wal = tmp_path / "st.db-wal"
    kept = []
    with warm_helper() as env:
        for number in range(20):  # the holder connects after the first event, soon after
            doc = _tool_call(f"echo {number}")
            assert _client(doc, GUARDS, state, env) == (0, "")
            kept.append(wal.exists())
            if kept[-1]:
                break
    assert kept[-1], "every event's child closed the database as its last connection"


@pytest.mark.parametrize("reason", ["the helper gave no answer", 'caf\u00e9 "quoted" \ud800'])
def test_a_fail_closed_answer_is_in_the_agents_terms(reason: str) -> None:
    """Agents that skip a hook exiting non-zero (Copilot CLI) get exit 0 and a deny; the
    others exit 2. The client builds it without ``json``: it must parse, and say the reason."""
    line = f"harnessweaver hook: error: {reason} (failing closed)\n"
    copilot = warm.closed("copilot", line)
    answer = json.loads(copilot.stdout)
    assert (copilot.code, copilot.stderr) == (0, line)
    assert copilot.stdout.isascii()
    for where in (answer, answer["hookSpecificOutput"]):
        assert where["permissionDecision"] == "deny"
        assert where["permissionDecisionReason"] == line.rstrip("\n")
    assert answer["hookSpecificOutput"]["hookEventName"] == "PreToolUse"
    other = warm.closed("claude-code", line)
    assert (other.code, other.stdout, other.stderr) == (protocol.EXIT_BLOCK, "", line)
