"""``harnessweaver.authzen`` when the decision point gives no usable answer: every such answer
is an :class:`AuthZenError` and the item's fail mode decides (closed: Block; open: the run goes
on, the failure recorded), never a silent allow. The bearer token is never in an error, a log,
the trace or a ``repr``."""

from __future__ import annotations

import json
import logging
import socket
from pathlib import Path
from typing import Any

import pytest
from test_authzen_support import Misbehaving, event_call, pdp, run

import harnessweaver as hw
from harnessweaver.policies import authzen as authzen_module
from harnessweaver.policies.authzen import MAX_BODY, AuthZen, AuthZenSettings
from harnessweaver.policies.errors import AuthZenError

pytestmark = pytest.mark.anyio

TOKEN = "tok-PLANTED-5f1c9e0b7a2d4e86"
TOKEN_ENV = "HW_TEST_AUTHZEN_TOKEN"

BAD_ANSWERS = {
    "slow": "did not answer within",
    "500": "answered HTTP 500",
    "redirect": "answered HTTP 302",
    "garbage": "answered with no JSON",
    "huge": f"answered more than {MAX_BODY} bytes",
    "string": "without a boolean decision",
    "number": "without a boolean decision",
    "null": "without a boolean decision",
    "missing": "without a boolean decision",
}


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def timeout(url: str, mode: str = "") -> str:
    """Short only where the point never answers: elsewhere a loaded machine must not turn an
    answer into a timeout."""
    return "300ms" if mode in ("slow", "all") else "20s"


def guard(url: str, mode: str = "", **settings: Any) -> AuthZen:
    return AuthZen(AuthZenSettings(url=url, timeout=timeout(url, mode), **settings))


@pytest.mark.parametrize("mode", sorted(BAD_ANSWERS))
async def test_a_bad_answer_is_an_authzen_error(mode: str) -> None:
    with Misbehaving(mode) as point, pytest.raises(AuthZenError) as raised:
        await guard(point.url, mode)(event_call(), run(user="alice").envelope)
    assert BAD_ANSWERS[mode] in str(raised.value)
    assert str(raised.value).endswith("(I38)")


async def test_an_unreachable_point_is_an_authzen_error() -> None:
    url = f"http://127.0.0.1:{_closed_port()}"
    with pytest.raises(AuthZenError, match="could not be reached"):
        await guard(url)(event_call(), run().envelope)


@pytest.mark.parametrize("mode", ["slow", "500", "garbage", "string", "unreachable"])
async def test_fail_closed_blocks_and_fail_open_goes_on(mode: str) -> None:
    with Misbehaving(mode) as point:
        url = f"http://127.0.0.1:{_closed_port()}" if mode == "unreachable" else point.url
        for fail_mode in ("closed", "open"):
            bus = hw.HookBus()
            settings = {"url": url, "timeout": timeout(url, mode)}
            bus.register(AuthZen, settings=settings, fail_mode=fail_mode)
            ctx = run(user="alice")
            result = await bus.emit("tool.before", event_call(), ctx)
            failures = [r for r in ctx.trace if r.get("error") == "AuthZenError"]
            assert len(failures) == 1, (fail_mode, ctx.trace)
            if fail_mode == "closed":
                assert isinstance(result.outcome, hw.Block)
                assert result.outcome.code == "middleware_error"
            else:
                assert result.outcome == hw.Continue()


async def test_a_batch_answer_short_of_one_decision_per_question_is_an_error() -> None:
    metadata: dict[str, Any] = {}
    with Misbehaving("short", metadata) as point:
        metadata["access_evaluations_endpoint"] = point.url + "/access/v1/evaluations"
        questions = [{"subject": {"type": "agent", "id": "a"}}] * 2
        with pytest.raises(AuthZenError, match="one decision per request"):
            await guard(point.url).evaluate_many(questions)


async def test_metadata_naming_another_origin_is_refused() -> None:
    with Misbehaving("allow", {"access_evaluations_endpoint": "http://127.0.0.1:9/steal"}) as point:
        with pytest.raises(AuthZenError, match="off its own origin"):
            await guard(point.url).evaluate_many([{"action": {"name": "x"}}])
        assert all(not seen.startswith("POST") for seen, _, _ in point.seen)


async def test_metadata_offering_the_batch_is_used() -> None:
    metadata: dict[str, Any] = {}
    with Misbehaving("allow", metadata) as point:
        metadata["access_evaluations_endpoint"] = point.url + "/access/v1/evaluations"
        assert await guard(point.url).evaluate_many([{"a": 1}, {"b": 2}]) == [True, True]
        assert [seen for seen, _, _ in point.seen] == [
            "GET /.well-known/authzen-configuration",
            "POST /access/v1/evaluations",
        ]
        assert json.loads(point.seen[1][2]) == {"evaluations": [{"a": 1}, {"b": 2}]}


@pytest.mark.parametrize(
    "settings",
    [
        {},
        {"url": "ftp://127.0.0.1"},
        {"url": "127.0.0.1:8080"},
        {"url": "http://user:pw@127.0.0.1"},
        {"url": "http://127.0.0.1/?key=1"},
        {"url": "http://127.0.0.1/?"},
        {"url": "http://127.0.0.1", "timeout": "0s"},
        {"url": "http://127.0.0.1", "timeout": "soon"},
        {"url": "http://127.0.0.1", "token_env": "HW_TEST_AUTHZEN_UNSET"},
        {"url": "http://127.0.0.1", "batch": "maybe"},
        {"url": "http://127.0.0.1", "token": "x"},
    ],
)
def test_bad_settings_are_refused(
    settings: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HW_TEST_AUTHZEN_UNSET", raising=False)
    bus = hw.HookBus()
    with pytest.raises(hw.RegistrationError):
        bus.register(AuthZen, settings=settings)


async def test_the_token_is_never_shown(
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    monkeypatch.setenv("HW_TEST_PDP_TOKEN", "another-token-the-pep-lacks")
    shown: list[str] = []
    settings = AuthZenSettings(url="http://127.0.0.1:9", token_env=TOKEN_ENV)
    middleware = AuthZen(settings)
    shown += [repr(middleware), str(vars(middleware)), repr(settings), settings.model_dump_json()]
    # Every failure: a point that refuses the token (401), misbehaving ones, an unreachable one.
    with pdp(
        "permit (principal, action, resource);", extra=["-token-env", "HW_TEST_PDP_TOKEN"]
    ) as base:
        urls = [base, f"http://127.0.0.1:{_closed_port()}"]
        points = [Misbehaving(mode) for mode in ("500", "garbage", "slow", "string")]
        for point in points:
            point.__enter__()
        try:
            for url in [*urls, *(point.url for point in points)]:
                for fail_mode in ("closed", "open"):
                    bus = hw.HookBus()
                    bus.register(
                        AuthZen,
                        settings={"url": url, "token_env": TOKEN_ENV, "timeout": "300ms"},
                        fail_mode=fail_mode,
                    )
                    ctx = run(user="alice")
                    result = await bus.emit("tool.before", event_call(), ctx)
                    shown += [repr(result), json.dumps(ctx.trace, default=repr)]
                    assert any(r.get("error") == "AuthZenError" for r in ctx.trace), url
                    try:
                        await guard(url, "all", token_env=TOKEN_ENV)(event_call(), run().envelope)
                    except AuthZenError as exc:
                        shown += [str(exc), repr(exc), repr(exc.__cause__), repr(exc.__context__)]
                    else:
                        raise AssertionError(f"{url} gave a decision")
            # The token was sent: the misbehaving points saw it (so its absence above is real).
            assert any(
                headers.get("Authorization") == f"Bearer {TOKEN}"
                for _, headers, _ in points[0].seen
            )
        finally:
            for point in points:
                point.__exit__(None, None, None)
    out, err = capsys.readouterr()
    shown += [out, err, caplog.text]
    assert not [text for text in shown if TOKEN in text]
    assert len(shown) > 20


def test_without_httpx_the_item_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    # httpx is the `authzen` extra; an installation without it is told how to get it.
    real = authzen_module.importlib.util.find_spec
    monkeypatch.setattr(
        authzen_module.importlib.util,
        "find_spec",
        lambda name, *args: None if name == "httpx" else real(name, *args),
    )
    with pytest.raises(hw.RegistrationError, match=r"pip install 'harnessweaver\[authzen\]'"):
        hw.HookBus().register(AuthZen, settings={"url": "http://127.0.0.1:9"})


@pytest.mark.parametrize("hooks", ["[task.end]", "[tool.before, model.after]"])
def test_a_hook_point_it_does_not_decide_is_refused(tmp_path: Path, hooks: str) -> None:
    spec = tmp_path / "harness.yaml"
    spec.write_text(
        f"middleware:\n  - {{use: harnessweaver.authzen, url: 'http://127.0.0.1:9', "
        f"hooks: {hooks}}}\n"
    )
    with pytest.raises(hw.SpecError) as raised:
        hw.load(spec)
    assert "harness.yaml:2:" in str(raised.value)
