"""An item with several mistakes reports every one of them (issue 32), a misspelt
reserved key is offered the key it spells, and pydantic's wording stays out of the messages.

The same specs are conformance cases (``conformance/cases/harness/spec-mistakes.json``), whose
messages the TypeScript loader gives byte for byte."""

from __future__ import annotations

from pathlib import Path

import pytest
from spec_support import PLUGINS, problems, tool_call, write

import harnessweaver as hw

pytestmark = pytest.mark.anyio

FOUR_MISTAKES = """
middleware:
  - use: harnessweaver.loop_guard
    band: nowhere
    fail-mode: closed
    timeout: 5 parsecs
    warn_after: 5
    block_after: 3
"""


def test_four_mistakes_of_one_item_are_four_reports(tmp_path: Path) -> None:
    found = [str(problem) for problem in problems(write(tmp_path, FOUR_MISTAKES))]
    item = "harness.yaml:{}: middleware[0] (harnessweaver.loop_guard): "
    assert found == [
        item.format(3) + "invalid band 'nowhere': a band is one of baseline, platform, app or "
        "task (rule 1)",
        item.format(5) + "invalid timeout '5 parsecs': a timeout is a positive number of seconds "
        "or a string with a unit such as 250ms, 2s, 1.5s or 1m (ruling 15)",
        item.format(4) + "invalid settings: fail-mode: unknown setting (did you mean fail_mode?); "
        "block_after: block_after (3) must be greater than warn_after (5) (settings)",
    ]


def test_every_key_the_core_refuses_is_reported_at_its_line(tmp_path: Path) -> None:
    spec = PLUGINS + (
        "middleware:\n"
        "  - use: acme.guard\n"
        "    id: 1bad\n"
        "    hooks: [tool.befor]\n"
        "    fail_mode: ajar\n"
        "    timeout: -1\n"
        "    mode: loud\n"
    )
    found = [(p.kind, p.rule, p.line) for p in problems(write(tmp_path, spec))]
    assert found == [
        ("invalid_name", "I1", 4),
        ("unknown_hook", "ruling-2", 5),
        ("invalid_fail_mode", "ruling-14", 6),
        ("invalid_duration", "ruling-15", 7),
        ("invalid_mode", "I25", 8),
    ]


def test_a_problem_that_follows_from_a_refused_key_is_not_reported(tmp_path: Path) -> None:
    # Set aside, the refused band is the profile's baseline and the refused hooks are all of
    # the tracer's: R2 and a tool matcher on step.start would be about values nobody wrote.
    write(
        tmp_path,
        "middleware:\n  - {use: acme.watcher, band: nowhere}\n"
        "  - {use: acme.tracer, id: t, hooks: [tool.befor], match: {tool: [refund_*]}}\n",
        "base.yaml",
    )
    spec = write(tmp_path, PLUGINS + "profiles: [./base.yaml]\n")
    assert [(p.kind, p.file, p.line) for p in problems(spec)] == [
        ("invalid_band", "base.yaml", 2),
        ("unknown_hook", "base.yaml", 3),
    ]


def test_a_key_set_aside_does_not_hide_a_real_problem_of_another(tmp_path: Path) -> None:
    # The timeout is refused; the baseline item that declares open is R2 all the same.
    write(tmp_path, "middleware:\n  - {use: acme.watcher, timeout: soon}\n", "base.yaml")
    spec = write(tmp_path, PLUGINS + "profiles: [./base.yaml]\n")
    assert [p.kind for p in problems(spec)] == ["invalid_duration", "baseline_fail_open"]


@pytest.mark.parametrize(
    ("written", "hint"),
    [
        ("fail-mode: closed", "fail-mode: unknown setting (did you mean fail_mode?)"),
        ("Fail_Mode: closed", "Fail_Mode: unknown setting (did you mean fail_mode?)"),
        ("block-after: 4", "block-after: unknown setting (did you mean block_after?)"),
        ("warn-afer: 2", "warn-afer: unknown setting (did you mean warn_after?)"),
        ("enable: false", "enable: unknown setting (did you mean enabled?)"),
    ],
)
def test_a_misspelt_key_is_offered_the_key_it_spells(
    tmp_path: Path, written: str, hint: str
) -> None:
    spec = write(tmp_path, f"middleware:\n  - use: harnessweaver.loop_guard\n    {written}\n")
    (problem,) = problems(spec)
    assert problem.message == f"invalid settings: {hint} (settings)"


def test_a_middleware_without_settings_offers_the_reserved_key(tmp_path: Path) -> None:
    spec = write(tmp_path, PLUGINS + "middleware:\n  - {use: acme.guard, fail-mode: open, x: 1}\n")
    (problem,) = problems(spec)
    assert problem.message == (
        "guard is a function and takes no settings: fail-mode (did you mean fail_mode?), x "
        "(settings)"
    )


def test_a_top_level_key_written_with_a_dash_is_offered_its_key(tmp_path: Path) -> None:
    found = problems(write(tmp_path, "middleware: []\napproval-s: {}\nMode: audit\n"))
    hints = [p.message.split("; ")[-1] for p in found]
    assert hints == ["did you mean 'approvals'? (spec)", "did you mean 'mode'? (spec)"]


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (
            "warn_after: 5, block_after: 3",
            "block_after: block_after (3) must be greater than warn_after (5)",
        ),
        ("window: 4", "window: window (4) must be at least block_after (5): a window shorter"),
    ],
)
def test_no_pydantic_value_error_prefix(tmp_path: Path, settings: str, message: str) -> None:
    spec = write(tmp_path, f"middleware:\n  - {{use: harnessweaver.loop_guard, {settings}}}\n")
    (problem,) = problems(spec)
    assert problem.message.startswith(f"invalid settings: {message}")
    assert "Value error" not in problem.message


def test_a_rule_of_the_settings_as_a_whole_is_said_of_the_settings(tmp_path: Path) -> None:
    (problem,) = problems(write(tmp_path, "middleware:\n  - {use: harnessweaver.budget_guard}\n"))
    assert problem.message == (
        "invalid settings: (settings): give max_tokens, max_cost_usd or both: a budget needs a "
        "limit (settings)"
    )


# The loop guard: warn_after, when not given, follows a block_after below 4.


@pytest.mark.parametrize(
    ("block_after", "outcomes"),
    [
        (3, ["continue", "continue", "block"]),
        (2, ["continue", "block", "block"]),
        (4, ["continue", "continue", "continue", "block"]),
    ],
)
async def test_a_lone_block_after_loads_and_blocks_there(
    tmp_path: Path, block_after: int, outcomes: list[str]
) -> None:
    spec = f"middleware:\n  - {{use: harnessweaver.loop_guard, block_after: {block_after}}}\n"
    bus = hw.load(write(tmp_path, spec)).bus
    ctx, call = hw.RunContext(), tool_call("search", q="same")
    got = [(await bus.emit("tool.before", call, ctx)).outcome.kind for _ in outcomes]
    assert got == outcomes


@pytest.mark.parametrize(("block_after", "warn_after"), [(2, None), (3, 2), (4, 3), (9, 3)])
def test_the_default_warning_follows_block_after(block_after: int, warn_after: int | None) -> None:
    from harnessweaver.builtins.loops import LoopGuardSettings

    settings = LoopGuardSettings.model_validate_json(
        f'{{"block_after": {block_after}}}', strict=True
    )
    assert (settings.warn_after, settings.block_after) == (warn_after, block_after)
    assert LoopGuardSettings().warn_after == 3  # neither given: the default as before


async def test_the_lone_block_after_warns_the_model_one_call_before(tmp_path: Path) -> None:
    spec = "middleware:\n  - {use: harnessweaver.loop_guard, block_after: 3}\n"
    bus = hw.load(write(tmp_path, spec)).bus
    ctx, call = hw.RunContext(), tool_call("search", q="same")
    for _ in range(2):
        await bus.emit("tool.before", call, ctx)
    request = hw.ModelRequest(model="m", messages=(hw.Message(role="user", content="go"),))
    asked = await bus.emit("model.before", hw.ModelRequestEvent(request=request), ctx)
    assert asked.outcome.kind == "continue"  # the note: from the third such call, a refusal
    (note,) = asked.event.request.messages
    assert "2 times" in str(note.content) and "from 3 such calls on" in str(note.content)


def test_an_explicit_warn_after_still_breaks_the_rule(tmp_path: Path) -> None:
    spec = "middleware:\n  - {use: harnessweaver.loop_guard, warn_after: 3, block_after: 3}\n"
    (problem,) = problems(write(tmp_path, spec))
    assert "block_after (3) must be greater than warn_after (3)" in problem.message
