"""The testee protocol: hello, run, restarts, time limits, stderr, shutdown."""

from __future__ import annotations

import copy
import os
import time
from pathlib import Path
from typing import Any

import pytest
from checkout import CORPUS
from driver_support import OBSERVATION, fake_command, make_case
from fake_testee import EMPTY

from harnessweaver.conformance.protocol import (
    Crashed,
    Errored,
    Observed,
    ProtocolSchema,
    ProtocolSchemaError,
    Skipped,
    Testee,
    TesteeError,
    TimedOut,
)

SCHEMA = ProtocolSchema.load(CORPUS)


def hellos(log: Path) -> list[str]:
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_hello_and_answers(tmp_path: Path) -> None:
    with Testee(fake_command("--features", "concurrency", "--name", "demo")) as testee:
        hello = testee.start()
        assert hello.features == frozenset({"concurrency"})
        assert hello.implementation["name"] == "demo"
        assert testee.run(make_case("a", fake={"actual": OBSERVATION})) == Observed(OBSERVATION)
        assert testee.run(make_case("b", fake={"skipped": "no trio"})) == Skipped("no trio")
        assert testee.run(make_case("c", fake={"errored": "what is 'juggle'?"})) == Errored(
            "what is 'juggle'?"
        )


def test_crash_is_reported_with_stderr_and_the_next_case_restarts(tmp_path: Path) -> None:
    log = tmp_path / "hello.log"
    with Testee(fake_command("--log", str(log)), timeout=10) as testee:
        testee.start()
        answer = testee.run(make_case("boom", fake={"crash": 7}))
        assert isinstance(answer, Crashed)
        assert "code 7" in answer.reason
        assert "fatal: crashing on boom" in answer.stderr
        assert len(hellos(log)) == 1
        assert testee.run(make_case("after")) == Observed(EMPTY)
        pids = [line.split()[1] for line in hellos(log)]
        assert len(pids) == 2 and pids[0] != pids[1]


def test_hang_times_out_kills_and_restarts(tmp_path: Path) -> None:
    log = tmp_path / "hello.log"
    with Testee(fake_command("--log", str(log)), timeout=0.5, startup_timeout=10) as testee:
        testee.start()
        first_pid = int(hellos(log)[0].split()[1])
        started = time.monotonic()
        answer = testee.run(make_case("slow", fake={"hang": 30}))
        assert isinstance(answer, TimedOut)
        assert answer.reason == "no answer within 0.5 s"
        assert time.monotonic() - started < 10
        assert not alive(first_pid)
        assert isinstance(testee.run(make_case("next")), Observed)
        assert len(hellos(log)) == 2


@pytest.mark.parametrize(
    ("fake", "reason"),
    [
        ({"garbage": "Traceback (most recent call last):"}, "not a JSON line"),
        ({"garbage": "[" * 100_000 + "]" * 100_000}, "nest more than 128 deep"),
        ({"garbage": '{"seq": 1, "actual": ' + "[" * 129 + "]" * 129 + "}"}, "128 deep"),
        ({"wrong_seq": True}, "answer has seq 101, expected 1"),
    ],
)
def test_protocol_violations_are_crashes(fake: dict[str, object], reason: str) -> None:
    with Testee(fake_command(), timeout=5) as testee:
        testee.start()
        answer = testee.run(make_case("odd", fake=fake))
        assert isinstance(answer, Crashed)
        assert answer.reason.startswith("protocol violation")
        assert reason in answer.reason
        assert isinstance(testee.run(make_case("next")), Observed)


def test_a_full_stderr_pipe_cannot_deadlock() -> None:
    flood = {"stderr_flood": 2_000_000, "actual": OBSERVATION}
    with Testee(fake_command(), timeout=20) as testee:
        testee.start()
        assert testee.run(make_case("noisy", fake=flood)) == Observed(OBSERVATION)


@pytest.mark.parametrize(
    ("mode", "problem"),
    [("exit", "exited with code 3"), ("garbage", "not a JSON line"), ("badproto", "protocol 2")],
)
def test_hello_failures_raise(mode: str, problem: str) -> None:
    with (
        Testee(fake_command("--hello", mode), timeout=5) as testee,
        pytest.raises(TesteeError, match=problem),
    ):
        testee.start()


def test_hello_failure_includes_stderr() -> None:
    with Testee(fake_command("--hello", "exit")) as testee, pytest.raises(TesteeError) as caught:
        testee.start()
    assert "cannot start: missing core" in str(caught.value)


def test_hello_hang_times_out() -> None:
    started = time.monotonic()
    testee = Testee(fake_command("--hello", "hang"), timeout=0.5, startup_timeout=0.5)
    with testee, pytest.raises(TesteeError, match="no answer in time"):
        testee.start()
    assert time.monotonic() - started < 10


def test_a_runner_that_cannot_restart_stops_being_tried(tmp_path: Path) -> None:
    flag = tmp_path / "broken"
    script = tmp_path / "once.py"
    script.write_text(
        "import os, subprocess, sys\n"
        f"flag = {str(flag)!r}\n"
        "if os.path.exists(flag):\n"
        "    sys.exit(4)\n"
        "open(flag, 'w').close()\n"
        f"sys.exit(subprocess.call(sys.argv[1:]))\n",
        encoding="utf-8",
    )
    command = [*fake_command()[:1], str(script), *fake_command()]
    with Testee(command, timeout=5) as testee:
        testee.start()
        assert isinstance(testee.run(make_case("boom", fake={"crash": 1})), Crashed)
        second = testee.run(make_case("next"))
        assert isinstance(second, Crashed) and "could not be restarted" in second.reason
        third = testee.run(make_case("later"))
        assert third == Crashed(second.reason)


def test_close_stops_the_child() -> None:
    testee = Testee(fake_command())
    testee.start()
    process = testee._process
    assert process is not None
    pid = process.popen.pid
    testee.close()
    assert process.popen.returncode == 0
    assert not alive(pid)


def test_a_missing_program_is_a_start_error(tmp_path: Path) -> None:
    testee = Testee([str(tmp_path / "no-such-runner")])
    with testee, pytest.raises(TesteeError, match="cannot start"):
        testee.start()


@pytest.mark.parametrize(
    ("mode", "problem"),
    [
        ("nocore", "at $.implementation: 'core' is a required property"),
        ("extra", "at $: Additional properties are not allowed ('backends' was unexpected)"),
    ],
)
def test_a_hello_that_breaks_the_protocol_schema_is_refused(mode: str, problem: str) -> None:
    testee = Testee(fake_command("--hello", mode), timeout=5, schema=SCHEMA)
    with testee, pytest.raises(TesteeError) as caught:
        testee.start()
    assert str(caught.value) == f"hello failed: hello answer breaks the protocol schema {problem}"


def test_without_a_schema_only_the_shape_the_driver_needs_is_checked() -> None:
    with Testee(fake_command("--hello", "nocore"), timeout=5) as testee:
        assert "core" not in testee.start().implementation


def broken(observation: dict[str, Any], where: str, *path: str | int) -> dict[str, Any]:
    """A copy of ``observation`` whose object at ``path`` holds an unknown key ``where``."""
    copied = copy.deepcopy(observation)
    target: Any = copied
    for step in path:
        target = target[step]
    target[where] = 1
    return copied


@pytest.mark.parametrize(
    ("actual", "problem"),
    [
        (broken(OBSERVATION, "verdict"), "at $.actual: Additional properties are not allowed"),
        (
            broken(OBSERVATION, "verdict", "traces", "main", 1),
            "at $.actual.traces.main[1]: Additional properties are not allowed",
        ),
        (
            broken(OBSERVATION, "reasons", "emits", 0),
            "at $.actual.emits[0]: Additional properties are not allowed",
        ),
    ],
)
def test_an_answer_that_breaks_the_protocol_schema_is_a_protocol_violation(
    actual: dict[str, Any], problem: str
) -> None:
    with Testee(fake_command(), timeout=5, schema=SCHEMA) as testee:
        testee.start()
        answer = testee.run(make_case("odd", fake={"actual": actual}))
        assert isinstance(answer, Crashed)
        assert answer.reason.startswith(
            f"protocol violation: answer breaks the protocol schema {problem}"
        )
        assert testee.run(make_case("next", fake={"actual": OBSERVATION})) == Observed(OBSERVATION)


def test_answers_that_keep_the_protocol_schema_pass() -> None:
    with Testee(fake_command(), timeout=5, schema=SCHEMA) as testee:
        assert testee.start().implementation["core"] == "fake"
        assert testee.run(make_case("a", fake={"actual": OBSERVATION})) == Observed(OBSERVATION)
        assert testee.run(make_case("b", fake={"skipped": "no trio"})) == Skipped("no trio")
        assert testee.run(make_case("c", fake={"errored": "what?"})) == Errored("what?")


def test_a_corpus_without_the_schemas_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ProtocolSchemaError, match=r"protocol\.schema\.json"):
        ProtocolSchema.load(tmp_path)
