"""The driver's side of the testee protocol (INTERPRETING.md §9).

A testee is a program that reads JSON Lines on stdin and answers on stdout. :class:`Testee`
spawns it, says ``hello``, sends one ``run`` per case and reads the answer within a per-case
time limit. A testee that exits, breaks the protocol or stops answering is killed, the case
is recorded as crashed or timed out, and a fresh process is started for the next case
(after Bowtie and protobuf's conformance runner). Stdout is read by a thread so a deadline
can be kept; stderr goes to a temporary file, so no pipe can fill up and deadlock.

With a :class:`ProtocolSchema` every message the testee sends is checked against the corpus's
``schema/protocol.schema.json``: one that breaks it is a protocol violation like a line that is
not JSON, so an implementation cannot pass by answering in a shape no other one would read.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import queue
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Self

from harnessweaver.conformance.canonical import canonical_json, parse_json

__all__ = [
    "PROTOCOL",
    "Answer",
    "Crashed",
    "Errored",
    "Hello",
    "Observed",
    "ProtocolSchema",
    "ProtocolSchemaError",
    "Skipped",
    "Testee",
    "TesteeError",
    "TimedOut",
    "schema_checks_available",
]

PROTOCOL = 1
_STDERR_TAIL = 4000
_GRACE = 5.0
_SHOWN = 200  # characters of a schema error shown: its message may quote a whole observation
# The definition of protocol.schema.json an answer must match, by the key that says what it is.
_ANSWERS = {"actual": "runActual", "skipped": "runSkipped", "errored": "runErrored"}


@dataclass(frozen=True, slots=True)
class Hello:
    implementation: dict[str, Any]
    features: frozenset[str]


@dataclass(frozen=True, slots=True)
class Observed:
    actual: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Skipped:
    reason: str


@dataclass(frozen=True, slots=True)
class Errored:
    message: str


@dataclass(frozen=True, slots=True)
class Crashed:
    reason: str
    stderr: str = ""


@dataclass(frozen=True, slots=True)
class TimedOut:
    reason: str
    stderr: str = ""


Answer = Observed | Skipped | Errored | Crashed | TimedOut


class TesteeError(Exception):
    """The testee could not be started (it died or broke the protocol during ``hello``)."""

    __test__ = False  # not a pytest test class, despite the name


class ProtocolSchemaError(Exception):
    """The corpus's protocol schema cannot be read, so no testee's messages can be checked."""


def schema_checks_available() -> bool:
    """Whether the testees' messages can be checked against the protocol schema here: it
    needs jsonschema (the ``conformance`` extra). Without it a run still judges every case,
    and holds messages to the protocol's framing alone; the command line says so."""
    return all(importlib.util.find_spec(name) is not None for name in ("jsonschema", "referencing"))


class ProtocolSchema:
    """A corpus's ``schema/protocol.schema.json`` (with the ``case.schema.json`` it refers
    to), compiled once for a whole run and shared by its testees."""

    def __init__(self, protocol: Mapping[str, Any], case: Mapping[str, Any]) -> None:
        # Imported here: only a conformance run pays for jsonschema, an extra of the package.
        try:
            from jsonschema import Draft202012Validator
            from jsonschema.exceptions import SchemaError
            from referencing import Registry, Resource
        except ImportError as exc:
            raise ProtocolSchemaError(
                f"checking what testees send needs jsonschema ({exc}): "
                "the `conformance` extra (from a clone: pip install '.[conformance]')"
            ) from exc

        try:
            Draft202012Validator.check_schema(protocol)
            resources = [(s["$id"], Resource.from_contents(s)) for s in (case, protocol)]
        except (SchemaError, KeyError, TypeError) as exc:
            raise ProtocolSchemaError(f"not a usable protocol schema: {exc}") from exc
        self._base = str(protocol["$id"])
        self._root: Any = Draft202012Validator(
            protocol, registry=Registry().with_resources(resources)
        )
        self._by_definition: dict[str, Any] = {}

    @classmethod
    def load(cls, corpus: Path) -> ProtocolSchema:
        """The schemas of ``corpus/schema``."""
        schemas = []
        for name in ("protocol.schema.json", "case.schema.json"):
            path = corpus / "schema" / name
            try:
                schema = parse_json(path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, ValueError) as exc:
                raise ProtocolSchemaError(f"cannot read the protocol schema {path}: {exc}") from exc
            if not isinstance(schema, dict):
                raise ProtocolSchemaError(f"{path}: not a JSON object")
            schemas.append(schema)
        return cls(*schemas)

    def problem(self, message: Mapping[str, Any], definition: str) -> str | None:
        """Why ``message`` is not a valid ``#/$defs/<definition>``: where (a JSON path) and
        what, of the error jsonschema ranks first; ``None`` when it is valid."""
        from jsonschema.exceptions import best_match

        validator = self._by_definition.get(definition)
        if validator is None:
            reference = {"$ref": f"{self._base}#/$defs/{definition}"}
            validator = self._by_definition[definition] = self._root.evolve(schema=reference)
        error = best_match(validator.iter_errors(message))
        if error is None:
            return None
        what = str(error.message)
        what = what if len(what) <= _SHOWN else what[: _SHOWN - 1] + "…"
        return f"breaks the protocol schema at {error.json_path}: {what}"


class _Violation(Exception):
    """The testee wrote something the protocol does not allow."""


class _Deadline(Exception):
    """The testee did not answer in time."""


class _Process:
    """One incarnation of the testee: pipes, a stdout reader thread, stderr in a file."""

    def __init__(self, command: Sequence[str], env: Mapping[str, str] | None) -> None:
        # Lives as long as the process; closed in stop().
        self._stderr: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115
        try:
            self.popen = subprocess.Popen(
                list(command),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                env=None if env is None else dict(env),
                start_new_session=os.name == "posix",
            )
        except OSError:
            self._stderr.close()
            raise
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._reader = threading.Thread(target=self._pump, name="testee-stdout", daemon=True)
        self._reader.start()

    def _pump(self) -> None:
        stdout = self.popen.stdout
        try:
            if stdout is not None:
                for line in iter(stdout.readline, b""):
                    self._lines.put(line)
        except (OSError, ValueError):
            pass
        finally:
            self._lines.put(None)

    def send(self, message: Mapping[str, Any]) -> None:
        stdin = self.popen.stdin
        if stdin is None:
            raise BrokenPipeError("no stdin")
        stdin.write((canonical_json(message) + "\n").encode("utf-8"))
        stdin.flush()

    def receive(self, deadline: float) -> dict[str, Any] | None:
        """The next message, or ``None`` at end of output; blank lines are ignored."""
        while True:
            try:
                raw = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise _Deadline from None
            if raw is None:
                self._lines.put(None)
                return None
            if not raw.strip():
                continue
            try:
                message = parse_json(raw.decode("utf-8"))
            except (UnicodeDecodeError, ValueError) as exc:
                raise _Violation(f"not a JSON line: {raw[:200]!r} ({exc})") from exc
            if not isinstance(message, dict):
                raise _Violation(f"not a JSON object: {raw[:200]!r}")
            return message

    def exit_code(self) -> int | None:
        try:
            return self.popen.wait(timeout=_GRACE)
        except subprocess.TimeoutExpired:
            return None

    def stderr_tail(self) -> str:
        with contextlib.suppress(OSError, ValueError):
            self._stderr.seek(0, os.SEEK_END)
            self._stderr.seek(max(0, self._stderr.tell() - _STDERR_TAIL))
            return self._stderr.read().decode("utf-8", errors="replace")
        return ""

    def kill(self) -> None:
        """Kill the testee and its process group; only while it is unreaped, so its pid
        (the group's id) cannot have been reused."""
        if os.name == "posix" and self.popen.returncode is None:
            with contextlib.suppress(OSError):
                os.killpg(self.popen.pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            self.popen.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=_GRACE)

    def stop(self) -> None:
        """Ask politely, wait a little, then kill (the process group too); free everything."""
        with contextlib.suppress(OSError, ValueError):
            self.send({"cmd": "stop"})
        with contextlib.suppress(OSError, ValueError):
            if self.popen.stdin is not None:
                self.popen.stdin.close()
        try:
            self.popen.wait(timeout=_GRACE)
        except subprocess.TimeoutExpired:
            self.kill()
        self._reader.join(timeout=1.0)
        # A reader still blocked (a grandchild holds the pipe) keeps stdout: closing a buffered
        # stream under a blocked reader can block too. The daemon thread dies with us.
        streams = [self._stderr] if self._reader.is_alive() else [self.popen.stdout, self._stderr]
        for stream in streams:
            with contextlib.suppress(OSError):
                if stream is not None:
                    stream.close()


class Testee:
    """A running implementation, restarted as needed; use as a context manager."""

    __test__ = False  # not a pytest test class, despite the name

    def __init__(
        self,
        command: Sequence[str],
        *,
        timeout: float = 60.0,
        startup_timeout: float | None = None,
        env: Mapping[str, str] | None = None,
        schema: ProtocolSchema | None = None,
    ) -> None:
        self.command = tuple(command)
        self.timeout = timeout
        self.startup_timeout = max(timeout, 30.0) if startup_timeout is None else startup_timeout
        self.env = env
        self.schema = schema  # None: only the checks the driver cannot do without
        self.hello: Hello | None = None
        self._process: _Process | None = None
        self._dead: str | None = None
        self._seq = 0

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def start(self) -> Hello:
        """Spawn the testee and say hello; raises :class:`TesteeError` when that fails."""
        if self._process is None:
            self._process = self._spawn()
        assert self.hello is not None
        return self.hello

    def _spawn(self) -> _Process:
        try:
            process = _Process(self.command, self.env)
        except OSError as exc:
            raise TesteeError(f"cannot start {' '.join(self.command)}: {exc}") from exc
        try:
            process.send({"cmd": "hello", "protocol": PROTOCOL})
            answer = process.receive(time.monotonic() + self.startup_timeout)
            if answer is None:
                raise _Violation(f"exited with code {process.exit_code()} before answering")
            hello = _parse_hello(answer, self.schema)
        except (OSError, _Violation, _Deadline) as exc:
            process.kill()
            tail = process.stderr_tail()
            process.stop()
            why = "no answer in time" if isinstance(exc, _Deadline) else str(exc)
            raise TesteeError(f"hello failed: {why}" + (f"\n{tail}" if tail else "")) from exc
        self.hello = self.hello or hello
        return process

    def run(self, case: Mapping[str, Any]) -> Answer:
        """Run one case; a dead or hung testee yields :class:`Crashed`/:class:`TimedOut`."""
        if self._dead is not None:
            return Crashed(self._dead)
        if self._process is None:
            try:
                self._process = self._spawn()
            except TesteeError as exc:
                self._dead = f"runner could not be restarted: {exc}"
                return Crashed(self._dead)
        self._seq += 1
        process = self._process
        try:
            process.send({"cmd": "run", "seq": self._seq, "case": case})
            return self._answer(process, self._seq)
        except _Deadline:
            return self._discard(TimedOut, f"no answer within {self.timeout:g} s")
        except _Violation as exc:
            return self._discard(Crashed, f"protocol violation: {exc}")
        except OSError as exc:
            return self._discard(Crashed, f"runner closed its input: {exc}")

    def _answer(self, process: _Process, seq: int) -> Answer:
        message = process.receive(time.monotonic() + self.timeout)
        if message is None:
            code = process.exit_code()
            return self._discard(Crashed, f"runner exited with code {code} during the case")
        if message.get("seq") != seq:
            raise _Violation(f"answer has seq {message.get('seq')!r}, expected {seq}")
        kind = next((key for key in _ANSWERS if key in message), None)
        if kind is not None and self.schema is not None:
            _check(self.schema, message, _ANSWERS[kind], "answer")
        if "actual" in message:
            if not isinstance(message["actual"], dict):
                raise _Violation('"actual" is not an object')
            return Observed(message["actual"])
        if message.get("skipped") is True:
            return Skipped(str(message.get("reason") or "skipped by the runner"))
        if message.get("errored") is True:
            return Errored(str(message.get("message") or "errored without a message"))
        raise _Violation(f'answer has none of "actual", "skipped", "errored": {message}')

    def _discard(self, kind: type[Crashed] | type[TimedOut], reason: str) -> Answer:
        """Kill the current process (the next case restarts it) and report why."""
        process, self._process = self._process, None
        if process is None:
            return kind(reason)
        process.kill()
        tail = process.stderr_tail()
        process.stop()
        return kind(reason, tail)

    def close(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            process.stop()


def _check(schema: ProtocolSchema, message: Mapping[str, Any], definition: str, what: str) -> None:
    problem = schema.problem(message, definition)
    if problem is not None:
        raise _Violation(f"{what} {problem}")


def _parse_hello(answer: dict[str, Any], schema: ProtocolSchema | None) -> Hello:
    if answer.get("protocol") != PROTOCOL:
        raise _Violation(f"protocol {answer.get('protocol')!r}, expected {PROTOCOL}")
    if schema is not None:
        _check(schema, answer, "helloAnswer", "hello answer")
    implementation = answer.get("implementation")
    if not isinstance(implementation, dict):
        raise _Violation('hello answer lacks an "implementation" object')
    features = answer.get("features", [])
    if not (isinstance(features, list) and all(isinstance(tag, str) for tag in features)):
        raise _Violation('hello answer\'s "features" is not a list of strings')
    return Hello(implementation, frozenset(features))
