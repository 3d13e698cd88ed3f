"""``harnessweaver.shell_guard``: the rules, the scanner they read, the settings, and hostile
commands (long ones answered in linear time: measured by the corpus's and these inputs
completing, never asserted as a time)."""

from __future__ import annotations

import json
import typing
from pathlib import Path
from typing import Any

import checkout
import pytest
from builtins_support import bus_with, call, run
from hypothesis import given, settings
from hypothesis import strategies as st

import harnessweaver as hw
from harnessweaver import builtins
from harnessweaver.builtins import _shellwords, shell
from harnessweaver.builtins.shell import MAX_COMMAND, RULES, ShellGuard, ShellGuardSettings

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    """One event loop is enough: the guard awaits nothing."""
    return "asyncio"


CORPUS = checkout.CORPUS / "cases" / "harness" / "builtins-guards.json"
SCHEMA = checkout.PACKAGE / "spec" / "harness.schema.json"  # the package's own copy


async def verdict(command: Any, tool: str = "Bash", **settings: Any) -> str | None:
    """The reason of the guard's Block for ``command`` (None: the call runs)."""
    bus = bus_with(builtins.ShellGuard, **settings)
    outcome = (await bus.emit("tool.before", call(tool, command=command), run())).outcome
    if outcome == hw.Continue():
        return None
    assert isinstance(outcome, hw.Block) and outcome.code == "shell_command_denied"
    return outcome.reason


def rule(name: str, tool: str = "Bash") -> str:
    return f"tool {tool!r}: command matches rule {name!r}"


# --- the table -------------------------------------------------------------------------


def test_the_rules_table_the_settings_type_and_the_schema_name_the_same_rules() -> None:
    literal = typing.get_args(shell.RuleName)
    schema = json.loads(SCHEMA.read_text())["$defs"]["settings.harnessweaver.shell_guard"]
    assert list(RULES) == list(literal) == schema["properties"]["rules"]["items"]["enum"]
    assert schema["properties"]["rules"]["default"] == list(RULES)
    assert ShellGuardSettings().rules == tuple(RULES)


def test_every_rule_blocks_something_in_the_corpus() -> None:
    """A rule added to RULES without a corpus case that it blocks fails here."""
    reasons = {
        emit["outcome"].get("reason")
        for case in json.loads(CORPUS.read_text())["cases"]
        for emit in case["then"].get("emits", [])
    }
    for name in RULES:
        assert any(r and r.endswith(f"command matches rule {name!r}") for r in reasons), name


def test_the_plugin_holds_both_guards_with_their_declarations() -> None:
    names = [spec.name for spec in hw.HookBus().register_plugin(builtins.plugin)]
    at = names.index("harnessweaver.tool_denylist")
    assert names[at : at + 2] == ["harnessweaver.tool_denylist", "harnessweaver.shell_guard"]


# --- the scanner -----------------------------------------------------------------------


def words(text: str) -> list[list[list[str]]]:
    return [[list(c) for c in p] for p in _shellwords.scan(text).pipelines]


def test_the_scanner_reads_words_through_quotes_and_backslashes() -> None:
    assert words("rm -rf \"/\" '~' \\/ a\\ b") == [
        [["rm", "-rf", "/", "~", "/", "a b"]],
        [["/"]],
        [["~"]],
    ]
    assert words('echo "a \\"b\\" \\$x \\q"') == [
        [["echo", 'a "b" $x \\q']],
        [["a", "b", "$x", "q"]],
        [["b"]],
    ]


def test_the_scanner_splits_commands_and_pipelines_on_the_operators() -> None:
    assert words("a | b |& c || d && e; f & g\nh (i) `j`") == [
        [["a"], ["b"], ["c"]],
        [["d"]],
        [["e"]],
        [["f"]],
        [["g"]],
        [["h"]],
        [["i"]],
        [["j"]],
    ]


def test_redirections_comments_and_line_continuations_are_not_operators() -> None:
    assert words("curl x 2>&1 &>log <&3 | sh") == [[["curl", "x", "2>&1", "&>log", "<&3"], ["sh"]]]
    assert words("ls # rm -rf /\nrm a#b") == [[["ls"]], [["rm", "a#b"]]]
    assert words("rm \\\n-rf") == [[["rm", "-rf"]]]


def test_quoted_text_is_scanned_again_two_quotes_deep_and_no_deeper() -> None:
    scanned = words('bash -c "sh -c \'dash -c \\"rm -rf /\\"\'"')
    assert ["rm", "-rf", "/"] not in [c for p in scanned for c in p]
    assert ["dash", "-c", "rm -rf /"] in [c for p in scanned for c in p]


def test_unterminated_quotes_and_a_trailing_backslash_end_at_the_text_end() -> None:
    assert words("a 'b c") == [[["a", "b c"]], [["b", "c"]]]
    assert words('a "b') == [[["a", "b"]], [["b"]]]
    assert words("a\\") == [[["a\\"]]]


# --- the rules, beyond the corpus ------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("rm -rf /", "rm_recursive_force"),
        ("rm -r -- -f /", None),  # after --, -f is a file name
        ("rm -rf -- /", "rm_recursive_force"),
        ("rm -rf //", "rm_recursive_force"),
        ("rm -rf /srv/app", None),
        ("git push --force-if-includes origin main", None),
        ("git -c x=y push -f origin main", "git_force_push"),
        ("git push -f origin refs/heads/main", "git_force_push"),
        ("git push -f origin :main", "git_force_push"),
        ("curl x | timeout 5 bash", None),  # documented: timeout's duration is its program
        ("dd of=/dev/sda", "dd_to_device"),
        ("chmod -R 775 x", None),
        ("chmod -R 772 x", "chmod_recursive_777"),
        ("f(){ f|f& }", "fork_bomb"),
    ],
)
async def test_rules_at_their_edges(command: str, expected: str | None) -> None:
    assert await verdict(command) == (None if expected is None else rule(expected))


async def test_the_first_rule_of_the_table_wins_whatever_the_settings_order() -> None:
    given_order = ["fork_bomb", "rm_recursive_force"]
    assert await verdict(":(){ :|:& };: ; rm -rf /", rules=given_order) == rule(
        "rm_recursive_force"
    )


async def test_a_user_pattern_is_searched_in_python_s_dialect_after_the_rules() -> None:
    patterns = [{"name": "drop", "pattern": r"(?i:\bdrop\s+table\b)"}]
    assert await verdict("psql -c 'DROP  TABLE users'", patterns=patterns) == rule("drop")
    assert await verdict("echo droptable", patterns=patterns) is None
    assert await verdict("rm -rf / ; drop table x", patterns=patterns) == rule("rm_recursive_force")


async def test_tools_arguments_and_lists() -> None:
    assert await verdict("rm -rf /", tool="search") is None
    assert await verdict(["bash", "-lc", "rm -rf ~"], tool="shell") == rule(
        "rm_recursive_force", "shell"
    )
    bus = bus_with(builtins.ShellGuard, tools=["run"], arguments=["script", "cmd"])
    event = call("run", script="ls", cmd="mkfs /dev/sda")
    outcome = (await bus.emit("tool.before", event, run())).outcome
    assert outcome == hw.Block(reason=rule("mkfs", "run"), code="shell_command_denied")


@pytest.mark.parametrize("value", [42, None, True, 1.5, {"a": "rm -rf /"}, ["rm", 1], [["rm"]]])
async def test_a_command_that_is_not_text_is_refused_without_its_value(value: Any) -> None:
    reason = await verdict(value)
    assert reason == "tool 'Bash': argument 'command' is not a string or a list of strings"


# --- settings --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"rules": ["mkfs", "mkfs"]}, "a rule is named twice"),
        ({"rules": []}, "no rules and no patterns: the guard would check nothing"),
        ({"patterns": [{"name": "x", "pattern": "a*"}]}, "matches the empty string"),
        ({"patterns": [{"name": "x", "pattern": "("}]}, "invalid regular expression '('"),
        ({"patterns": [{"name": "mkfs", "pattern": "m"}]}, "is a built-in rule's"),
        ({"patterns": [{"name": "A", "pattern": "m"}]}, "is not [a-z][a-z0-9_]*"),
        (
            {"patterns": [{"name": "x", "pattern": "m", "flags": "i"}]},
            "a pattern is {name, pattern}",
        ),
        (
            {"patterns": [{"name": "x", "pattern": "a"}, {"name": "x", "pattern": "b"}]},
            "a pattern name is given twice",
        ),
        ({"rules": ["rm_rf"]}, "Input should be 'rm_recursive_force'"),
        ({"tools": []}, "at least 1 item"),
        ({"protected_branches": []}, "at least 1 item"),
    ],
)
def test_bad_settings_are_refused_naming_the_rule(settings: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=None) as raised:
        ShellGuardSettings(**settings)
    assert message in str(raised.value)


def test_rules_off_with_patterns_is_a_guard_of_patterns_only() -> None:
    ShellGuardSettings(rules=[], patterns=[{"name": "x", "pattern": "x"}])


async def test_it_loads_from_a_spec_by_name(tmp_path: Path) -> None:
    spec = tmp_path / "harness.yaml"
    spec.write_text("middleware:\n  - {use: harnessweaver.shell_guard}\n")
    harness = hw.load(spec)
    outcome = (
        await harness.bus.emit("tool.before", call("Bash", command="rm -rf ~"), run())
    ).outcome
    assert outcome == hw.Block(reason=rule("rm_recursive_force"), code="shell_command_denied")


# --- hostile input ---------------------------------------------------------------------


async def test_a_command_longer_than_max_command_is_refused_unread() -> None:
    too_long = "ls " + "a" * (MAX_COMMAND - 2)
    assert len(too_long) == MAX_COMMAND + 1
    reason = f"tool 'Bash': command is longer than {MAX_COMMAND} characters"
    assert await verdict(too_long) == reason
    assert await verdict(too_long[:-1]) is None  # exactly MAX_COMMAND is read
    # characters are code points: an astral character is one, as in the TypeScript guard
    assert await verdict("\U0001f600" * MAX_COMMAND) is None
    assert await verdict(["ls", "a" * MAX_COMMAND]) == reason  # the joined list is measured


HOSTILE = [
    ("rm " * (MAX_COMMAND // 3 - 3) + "-rf /", "rm_recursive_force"),
    ("(" * (MAX_COMMAND - 8) + "rm -rf /", "rm_recursive_force"),
    ("'a' \"b\" " * (MAX_COMMAND // 8 - 2) + "rm -rf /", "rm_recursive_force"),
    ("'\"" * (MAX_COMMAND // 2 - 8) + "rm -rf /", None),  # one word: ...'"'rm (bash agrees)
    ("rm -rf " + "rm " * (MAX_COMMAND // 3 - 8) + "/", None),  # the last rm has no flags
    ("dd " * (MAX_COMMAND // 3 - 8) + "of=/dev/sda", "dd_to_device"),
    ("chmod " * (MAX_COMMAND // 6 - 8) + "-R 777 x", "chmod_recursive_777"),
    ("git push " * (MAX_COMMAND // 9 - 8) + "-f", "git_force_push"),
    ("a(){" * (MAX_COMMAND // 4 - 4) + ":(){ :|:& };:", "fork_bomb"),
    ("curl x " + "| a " * (MAX_COMMAND // 4 - 8) + "| sh", "curl_pipe_shell"),
    ("git push -f origin " + "x " * (MAX_COMMAND // 2 - 16) + "main", "git_force_push"),
    ("rm -rf " + "/" * (MAX_COMMAND - 7), "rm_recursive_force"),
    ("\\" * MAX_COMMAND, None),
    ("-" * MAX_COMMAND, None),
    ("(){" * (MAX_COMMAND // 3), None),
    ("chmod -R " + "7" * (MAX_COMMAND - 9), None),
    ("git " * (MAX_COMMAND // 4), None),
]


@pytest.mark.parametrize(
    ("command", "expected"), HOSTILE, ids=[str(i) for i in range(len(HOSTILE))]
)
async def test_long_hostile_commands_are_read_and_answered(
    command: str, expected: str | None
) -> None:
    assert len(command) <= MAX_COMMAND
    assert await verdict(command) == (None if expected is None else rule(expected))


ALPHABET = st.sampled_from(
    [
        "rm",
        "-rf",
        "-r",
        "-f",
        "/",
        "~",
        "*",
        ".",
        "curl",
        "wget",
        "sh",
        "bash",
        "git",
        "push",
        "-f",
        "origin",
        "main",
        "+main",
        "chmod",
        "-R",
        "777",
        "a+w",
        "mkfs",
        "dd",
        "of=/dev/sda",
        ":",
        "(){",
        "|",
        "&",
        ";",
        "&&",
        "||",
        "'",
        '"',
        "\\",
        "#",
        "\n",
        "(",
        ")",
        "`",
        "$(",
        " ",
        "\t",
        "2>&1",
        "é",
        "\U0001f600",
        "\x00",
        "x",
    ]
)
commands = st.lists(ALPHABET, max_size=40).map("".join)


@settings(max_examples=300, deadline=None)
@given(commands)
async def test_any_command_gets_an_answer_that_never_shows_it(command: str) -> None:
    reason = await verdict(command)
    assert reason is None or reason in {rule(name) for name in RULES}


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "rm",
                "-rf",
                "-fr",
                "-r",
                "/",
                "~",
                "build",
                "curl",
                "|",
                "sh",
                "git",
                "push",
                "-f",
                "origin",
                "main",
                "x",
                ";",
            ]
        ),
        max_size=12,
    )
)
async def test_more_blanks_or_quoted_plain_words_never_change_the_answer(parts: list[str]) -> None:
    plain = await verdict(" ".join(parts))
    assert await verdict(" \t ".join(parts)) == plain
    quoted = " ".join(p if p in ("|", ";") else f"'{p}'" for p in parts)
    assert await verdict(quoted) == plain


def test_a_rule_is_a_function_of_the_scanned_command() -> None:
    scanned = _shellwords.scan("rm -rf /")
    protected = ShellGuard(ShellGuardSettings()).settings
    assert [name for name, check in RULES.items() if check(scanned, protected)] == [
        "rm_recursive_force"
    ]
