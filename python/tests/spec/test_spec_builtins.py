"""The built-in middleware (plugin namespace ``harnessweaver``) and the built-in profiles."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest
from spec_support import problems, tool_call, untimed, write

import harnessweaver as hw
from harnessweaver import builtins
from harnessweaver.middleware import spec_of
from harnessweaver.spec.resolve import builtin_profiles

pytestmark = pytest.mark.anyio


def request(*contents: str) -> hw.ModelRequestEvent:
    messages = tuple(hw.Message(role="user", content=text) for text in contents)
    return hw.ModelRequestEvent(request=hw.ModelRequest(model="m", messages=messages))


def response(content: str, **extra: Any) -> hw.ModelResponseEvent:
    message = hw.Message(role="assistant", content=content, **extra)
    return hw.ModelResponseEvent(response=hw.ModelResponse(message=message))


def bus_with(middleware: object, **settings: Any) -> hw.HookBus:
    bus = hw.HookBus()
    bus.register(middleware, settings=settings or None)
    return bus


async def test_tool_allowlist(ctx: hw.RunContext) -> None:
    bus = bus_with(builtins.ToolAllowlist, allow=["search"])
    allowed = await bus.emit("tool.before", tool_call("search"), ctx)
    refused = await bus.emit("tool.before", tool_call("delete_everything"), ctx)
    assert allowed.outcome == hw.Continue()
    assert refused.outcome == hw.Block(
        reason="tool 'delete_everything' is not allowed", code="tool_not_allowed"
    )


async def test_max_messages(ctx: hw.RunContext) -> None:
    bus = bus_with(builtins.MaxMessages, limit=2)
    assert (await bus.emit("model.before", request("a", "b"), ctx)).outcome == hw.Continue()
    blocked = await bus.emit("model.before", request("a", "b", "c"), ctx)
    assert blocked.outcome == hw.Block(
        reason="the request has 3 messages, more than 2", code="too_many_messages"
    )


async def test_redact_secrets_in_tool_arguments(ctx: hw.RunContext) -> None:
    bus = bus_with(builtins.RedactSecrets)
    event = tool_call(
        "search", query="key sk-abcdef123456", nested={"list": ["AKIAABCDEFGHIJKLMNOP", 3]}
    )
    result = await bus.emit("tool.before", event, ctx)
    assert result.outcome.kind == "continue" and result.outcome.modified is not None
    assert result.event.call.arguments == {
        "query": "key [redacted]",
        "nested": {"list": ["[redacted]", 3]},
    }
    clean = await bus.emit("tool.before", tool_call("search", query="weather"), ctx)
    assert clean.outcome == hw.Continue() and clean.event.call.arguments == {"query": "weather"}
    assert [r["modified"] for r in untimed(ctx.trace) if r["kind"] == "outcome"] == [True, False]


async def test_redact_secrets_in_messages_with_own_patterns(ctx: hw.RunContext) -> None:
    bus = bus_with(builtins.RedactSecrets, patterns=[r"\d{4}-\d{4}"])
    result = await bus.emit("model.before", request("card 1234-5678 please", "thanks"), ctx)
    assert [m.content for m in result.event.request.messages] == [
        "card [redacted] please",
        "thanks",
    ]
    untouched = await bus.emit("model.before", request("sk-abcdef123456"), ctx)
    assert untouched.outcome == hw.Continue()


def test_redact_secrets_refuses_a_bad_pattern() -> None:
    with pytest.raises(hw.RegistrationError, match=r"invalid regular expression '\('"):
        bus_with(builtins.RedactSecrets, patterns=["("])


@pytest.mark.parametrize(
    ("patterns", "message"),
    [([], "patterns: Tuple should have at least 1 item"), (["a*"], "matches the empty string")],
)
def test_redact_secrets_refuses_patterns_that_match_everywhere(
    patterns: list[str], message: str
) -> None:
    # an empty alternation, or "a*", matches "" and would redact between every two characters
    with pytest.raises(hw.RegistrationError, match=message):
        bus_with(builtins.RedactSecrets, patterns=patterns)


async def test_redact_secrets_in_the_tool_calls_of_messages(ctx: hw.RunContext) -> None:
    # the model provider receives earlier tool calls' arguments too
    bus = bus_with(builtins.RedactSecrets)
    asked = hw.Message(
        role="assistant", tool_calls=(hw.ToolCall(name="s", arguments={"key": "sk-abcdef123456"}),)
    )
    event = hw.ModelRequestEvent(request=hw.ModelRequest(messages=(asked,)))
    result = await bus.emit("model.before", event, ctx)
    assert result.event.request.messages[0].tool_calls[0].arguments == {"key": "[redacted]"}


async def test_require_citations(ctx: hw.RunContext) -> None:
    bus = bus_with(builtins.RequireCitations)
    cited = await bus.emit("model.after", response("Paris is the capital [1]."), ctx)
    uncited = await bus.emit("model.after", response("Paris is the capital."), ctx)
    calling = await bus.emit(
        "model.after", response("", tool_calls=(hw.ToolCall(name="search"),)), ctx
    )
    assert cited.outcome == hw.Continue() and calling.outcome == hw.Continue()
    assert uncited.outcome == hw.Retry(reason="the answer cites no source", code="missing_citation")
    lenient = bus_with(builtins.RequireCitations, required=False)
    assert (
        await lenient.emit("model.after", response("No sources."), ctx)
    ).outcome == hw.Continue()


def test_every_builtin_builds_from_its_sample() -> None:
    bus = hw.HookBus()
    registered = bus.register_plugin(builtins.plugin)  # a class with a config uses its sample
    assert [d.name for d in registered] == [
        "harnessweaver.tool_allowlist",
        "harnessweaver.max_messages",
        "harnessweaver.redact_secrets",
        "harnessweaver.require_citations",
        "harnessweaver.loop_guard",
        "harnessweaver.budget_guard",
        "harnessweaver.tool_failure_guard",
        "harnessweaver.redact_pii",
        "harnessweaver.rate_limit",
        "harnessweaver.tool_denylist",
        "harnessweaver.shell_guard",
        "harnessweaver.cedar",
        "harnessweaver.authzen",
    ]
    for item in builtins.plugin.middleware:
        spec = spec_of(item)
        assert spec is not None and spec.config is not None and spec.sample is not None
        assert spec.config.model_config.get("extra") == "forbid"
        hw.HookBus().register(item, settings=spec.sample)


def test_the_builtin_plugin_has_the_package_version() -> None:
    assert builtins.plugin.version == hw.__version__


def test_the_builtin_profiles_are_package_data() -> None:
    folder = files("harnessweaver").joinpath("profiles")
    assert folder.joinpath("rag.yaml").is_file() and folder.joinpath("safe-tools.yaml").is_file()
    assert folder.joinpath("agent-guards.yaml").is_file()
    assert list(builtin_profiles()) == ["agent-guards", "rag", "safe-tools"]


@pytest.mark.parametrize("name", list(builtin_profiles()))
def test_every_builtin_profile_loads_in_the_platform_band(name: str, tmp_path: Path) -> None:
    harness = hw.load(write(tmp_path, f"profiles: [profile://{name}]\n"))
    assert harness.entries
    for entry in harness.entries:
        assert (entry.layer, entry.declaration.band) == ("builtin_profile", "platform")
        assert entry.name.startswith(name.replace("-", "_") + ".")
        assert entry.file == f"harnessweaver/profiles/{name}.yaml"


def test_the_builtin_profiles_combine(tmp_path: Path) -> None:
    harness = hw.load(write(tmp_path, "profiles: [profile://rag, profile://safe-tools]\n"))
    assert [e.name for e in harness.chains()["model.before"]] == [
        "rag.redact_secrets",
        "rag.max_messages",
        "safe_tools.redact_secrets",
    ]


def test_the_agent_guards_profile(tmp_path: Path) -> None:
    harness = hw.load(write(tmp_path, "profiles: [profile://agent-guards]\n"))
    chains = {hook: [e.name for e in entries] for hook, entries in harness.chains().items()}
    assert chains["tool.before"] == ["agent_guards.loop_guard", "agent_guards.tool_failure_guard"]
    # personal data is kept from the model and from the records, not from the tools; the
    # task's input is redacted where it enters, so the journal never holds it (issue 13)
    assert chains["task.start"] == ["agent_guards.redact_pii"]
    assert chains["model.before"] == ["agent_guards.loop_guard", "agent_guards.redact_pii"]
    assert chains["tool.after"] == ["agent_guards.redact_pii", "agent_guards.tool_failure_guard"]
    assert harness.entry("agent_guards.loop_guard").settings == {"warn_after": 3, "block_after": 5}


async def test_the_guards_from_a_spec(tmp_path: Path) -> None:
    spec = """
    middleware:
      - {use: harnessweaver.loop_guard, id: loops, warn_after: 2, block_after: 3}
      - {use: harnessweaver.budget_guard, id: budget, max_tokens: 100}
      - {use: harnessweaver.tool_failure_guard, id: failures, max_consecutive: 1}
      - {use: harnessweaver.redact_pii, id: pii, hooks: [tool.before], detect: [email]}
    """
    bus = hw.load(write(tmp_path, spec)).bus
    ctx = hw.RunContext()
    mail = tool_call("send", to="bo@example.com")
    outcomes = [(await bus.emit("tool.before", mail, ctx)).outcome.kind for _ in range(3)]
    assert outcomes == ["continue", "continue", "block"]  # loops: the third is refused
    redacted = await bus.emit("tool.before", tool_call("send", to="al@example.com"), ctx)
    assert redacted.event.call.arguments == {"to": "[redacted:email]"}
    usage = hw.Usage(input_tokens=100)
    answer = hw.ModelResponse(message=hw.Message(role="assistant"), usage=usage)
    await bus.emit("model.after", hw.ModelResponseEvent(response=answer), ctx)
    asked = await bus.emit("model.before", request("go on"), ctx)
    assert asked.outcome == hw.Block(
        reason="the run has spent 100 tokens of its 100 tokens budget", code="budget_exceeded"
    )
    failed = hw.ToolResultEvent(
        tool=hw.ToolSpec(name="send"),
        call=hw.ToolCall(name="send"),
        result=hw.ToolResult(is_error=True),
    )
    await bus.emit("tool.after", failed, ctx)
    refused = await bus.emit("tool.before", tool_call("send", to="someone else"), ctx)
    assert refused.outcome.kind == "block" and refused.outcome.code == "tool_failing"


def test_the_guards_settings_errors_name_file_line_key_and_rule(tmp_path: Path) -> None:
    spec = """
    middleware:
      - {use: harnessweaver.loop_guard, warn_after: 5, block_after: 3}
      - {use: harnessweaver.budget_guard, max_tokens: 100, warn_at: 2}
      - use: harnessweaver.tool_failure_guard
        max_consecutiv: 2
      - {use: harnessweaver.redact_pii, detect: [ssn]}
    """
    found = [str(problem) for problem in problems(write(tmp_path, spec))]
    assert found == [
        "harness.yaml:2: middleware[0] (harnessweaver.loop_guard): invalid settings: "
        "block_after: block_after (3) must be greater than warn_after (5) (settings)",
        "harness.yaml:3: middleware[1] (harnessweaver.budget_guard): invalid settings: "
        "warn_at: Input should be less than 1 (settings)",
        "harness.yaml:5: middleware[2] (harnessweaver.tool_failure_guard): invalid settings: "
        "max_consecutiv: unknown setting (did you mean max_consecutive?) (settings)",
        "harness.yaml:6: middleware[3] (harnessweaver.redact_pii): invalid settings: "
        "detect.0: Input should be 'email', 'phone' or 'credit_card' (settings)",
    ]


def test_hooks_lists_the_guards(tmp_path: Path) -> None:
    harness = hw.load(write(tmp_path, "profiles: [profile://agent-guards]\n"))
    assert "agent_guards.tool_failure_guard  harnessweaver.tool_failure_guard" in harness.render()
    assert '"name": "agent_guards.redact_pii"' in harness.render("json")
    assert "agent_guards.loop_guard<br/>platform, closed" in harness.render("mermaid")
