"""Hostile harness specs: alias bombs, self-referencing aliases, deep nesting, huge files,
bytes that are not text, and specs that name some other file as a profile. Each is refused
with a :class:`hw.SpecError` naming the file, the line and the rule, quickly and without a
traceback, and nothing of a file that is not a spec is quoted (docs/harness-spec.md,
"Limits" and "What a problem shows")."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest
from conftest import run_unless_stuck
from spec_support import only_problem, plugged, problems, write

import harnessweaver as hw
from harnessweaver.spec.limits import MAX_ALIASED_NODES, MAX_BYTES, MAX_DEPTH
from harnessweaver.spec.yaml import YamlProblem, parse_yaml

SECRET = "sk-live-0123456789abcdef"


def bomb(levels: int, width: int = 10) -> str:
    """A billion-laughs spec: ``width ** levels`` strings in well under 1 KB."""
    lines = [f"l0: &l0 [{', '.join(['lol'] * width)}]"]
    for level in range(1, levels):
        lines.append(f"l{level}: &l{level} [{', '.join([f'*l{level - 1}'] * width)}]")
    return "\n".join(lines) + "\n"


def allow(value: str) -> str:
    """A spec whose one item's ``allow`` setting is ``value``."""
    return f"middleware:\n  - use: harnessweaver.tool_allowlist\n    allow: {value}\n"


def test_an_alias_bomb_is_refused_at_the_alias_past_the_limit(tmp_path: Path) -> None:
    text = "tasks:\n  t:\n    " + bomb(7).replace("\n", "\n    ").rstrip() + "\n"
    text += allow("*l6")
    assert len(text) < 1024  # 10 ** 7 strings
    problem = only_problem(write(tmp_path, text))
    assert (problem.kind, problem.rule, problem.file) == (
        "too_many_aliases",
        "limits",
        "harness.yaml",
    )
    assert problem.line is not None and 3 < problem.line < 12
    assert str(problem) == (
        f"harness.yaml:{problem.line}: the aliases stand for more than "
        f"{MAX_ALIASED_NODES:,} nodes in all (limits)"
    )


def test_aliases_below_the_limit_still_load(tmp_path: Path) -> None:
    text = "tasks: {}\n" + allow("&tools [search, calculator]")
    text += "envs:\n  prod:\n    middleware:\n"
    text += "      - {use: harnessweaver.tool_allowlist, id: prod_tools, allow: *tools}\n"
    harness = hw.load(write(tmp_path, text), env="prod")
    assert [entry.settings["allow"] for entry in harness.entries] == [["search", "calculator"]] * 2


@pytest.mark.parametrize(
    ("value", "line"),
    [
        ("&x [*x]", 3),  # the issue's own example
        ("&x [[a, [b, *x]]]", 3),
        ("&x {y: *x}", 3),
        ("\n      - &x\n        - *x", 5),
    ],
)
def test_an_alias_inside_what_it_names_is_refused(tmp_path: Path, value: str, line: int) -> None:
    problem = only_problem(write(tmp_path, allow(value)))
    assert (problem.kind, problem.rule, problem.line) == ("recursive_alias", "limits", line)
    assert problem.message == "an alias stands for a mapping or list that contains it (limits)"


def test_a_merge_key_that_merges_its_own_mapping_is_refused(tmp_path: Path) -> None:
    problem = only_problem(write(tmp_path, "plugins: &p {<<: *p}\n"))
    assert (problem.kind, problem.line) == ("recursive_alias", 1)


def test_nesting_deeper_than_the_limit_is_refused(tmp_path: Path) -> None:
    text = allow("[" * 3000 + "]" * 3000)
    problem = only_problem(write(tmp_path, text))
    assert (problem.kind, problem.rule, problem.line) == ("too_deep", "limits", 3)
    assert problem.message == f"mappings and lists nest more than {MAX_DEPTH} deep (limits)"


def test_the_depth_limit_counts_every_mapping_and_list() -> None:
    assert parse_yaml("[" * MAX_DEPTH + "]" * MAX_DEPTH) is not None
    with pytest.raises(YamlProblem) as caught:
        parse_yaml("a: 1\nb: " + "[" * MAX_DEPTH + "]" * MAX_DEPTH + "\n")  # 65 with the root
    assert (caught.value.kind, caught.value.line) == ("too_deep", 2)


def test_a_file_past_the_size_limit_is_not_parsed(tmp_path: Path) -> None:
    spec = tmp_path / "harness.yaml"
    spec.write_bytes(b"middleware: []\n" + b"#" * MAX_BYTES)
    problem = only_problem(spec)
    assert (problem.kind, problem.rule, problem.line) == ("too_large", "limits", None)
    assert str(problem) == f"harness.yaml: the file is larger than {MAX_BYTES:,} bytes (limits)"


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_an_endless_file_is_read_no_further_than_the_limit() -> None:
    problem = only_problem(Path("/dev/zero"))
    assert (problem.kind, problem.file) == ("too_large", "zero")  # relative to its folder


def test_bytes_that_are_not_utf8_give_their_line(tmp_path: Path) -> None:
    spec = tmp_path / "harness.yaml"
    spec.write_bytes(b"middleware: []\ntasks:\n  t: \xff\xfe\x00\n")
    problem = only_problem(spec)
    assert (problem.kind, problem.rule, problem.line) == ("unreadable_yaml", "yaml", 3)
    assert problem.message == "cannot read the file: not UTF-8 text (yaml)"


def test_a_character_yaml_forbids_is_one_line_with_its_line(tmp_path: Path) -> None:
    spec = tmp_path / "harness.yaml"
    spec.write_bytes(b"middleware: []\n\n# \x00\n")
    problem = only_problem(spec)
    assert (problem.kind, problem.line) == ("unreadable_yaml", 3)
    assert str(problem) == (
        "harness.yaml:3: not YAML: unacceptable character #x0000: "
        "special characters are not allowed (yaml)"
    )


def test_a_byte_order_mark_is_allowed(tmp_path: Path) -> None:
    spec = tmp_path / "harness.yaml"
    spec.write_bytes(b"\xef\xbb\xbf" + allow("[search]").encode())
    assert [entry.name for entry in hw.load(spec).entries] == ["harnessweaver.tool_allowlist"]


@pytest.mark.parametrize(
    "content",
    [
        f"root:x:0:0:root:/root:/bin/bash\napi_key={SECRET}\n",  # text
        f"- {SECRET}\n- hunter2\n",  # a list
        f'{{"type": "service_account", "private_key": "{SECRET}"}}\n',  # a mapping, not a spec
        f"token: !{SECRET} x\n",  # not YAML: the parser would quote the tag
        f"a: *{SECRET}\n",  # not YAML: the parser would quote the alias
        f"[{SECRET}, {{a: 1, a: 2}}]\n",  # a key written twice, in a list
        f"{SECRET}: [\n",  # not YAML
    ],
)
def test_a_profile_path_to_another_file_never_quotes_it(tmp_path: Path, content: str) -> None:
    secrets = tmp_path / "etc" / "secrets"
    write(tmp_path, content, "etc/secrets")
    spec = write(tmp_path / "app", "profiles: [../etc/secrets]\n")
    problem = only_problem(spec)
    assert SECRET not in str(problem) and "hunter2" not in str(problem)
    assert "root:" not in str(problem) and "private_key" not in str(problem)
    assert problem.file == secrets.as_posix()
    assert problem.rule in ("spec", "yaml")


def test_a_mapping_with_none_of_a_profiles_keys_is_not_a_profile(tmp_path: Path) -> None:
    write(tmp_path, f"middlewares: []\napi_key: {SECRET}\n", "p.yaml")
    problem = only_problem(write(tmp_path, "profiles: [p.yaml]\n"))
    assert str(problem) == (
        "p.yaml:1: not a profile: none of its keys is profile, plugins, middleware; "
        "did you mean 'middleware'? (spec)"
    )


def test_a_spec_with_a_mistake_is_still_quoted(tmp_path: Path) -> None:
    """A file with one of a spec's keys is a spec with a mistake: naming what is wrong helps."""
    spec = write(tmp_path, "middleware: []\ncontracts: loud\nx: !custom 1\n")
    problem = only_problem(spec)
    assert "could not determine a constructor for the tag '!custom'" in problem.message


def test_a_spec_is_known_as_one_from_its_first_spec_key(tmp_path: Path) -> None:
    """A syntax error after a key of a spec, before the document is complete, still names."""
    problem = only_problem(write(tmp_path, "middleware:\n  - {use: *nope}\n"))
    assert problem.message == "not YAML: found undefined alias 'nope' (yaml)"
    write(tmp_path, "envs: 1\ntasks: *nope\n", "p.yaml")
    problem = only_problem(write(tmp_path, "profiles: [p.yaml]\n"))
    assert problem.message == "not YAML: found undefined alias '…' (yaml)"  # a profile's keys


def test_values_shown_in_a_problem_are_cut_short(tmp_path: Path) -> None:
    huge = "[" + ", ".join(["x" * 1000] * 1000) + "]"
    spec = write(tmp_path, f"middleware:\n  - use: {huge}\n    enabled: {'y' * 100_000}\n")
    found = problems(spec)
    assert [p.kind for p in found] == ["bad_item", "bad_item"]
    assert all(len(str(p)) < 400 for p in found)


def test_a_core_problem_quoting_a_value_is_one_bounded_line(tmp_path: Path) -> None:
    band = "x" * 50_000
    text = allow("[a]") + f'    band: "core\\n{band}"\n'
    text += '  - {use: harnessweaver.max_messages, limit: 2, fail_mode: "a\\rb"}\n'
    spec = write(tmp_path, text)
    found = problems(spec)
    assert [(p.kind, p.rule) for p in found] == [
        ("invalid_band", "rule-1"),
        ("invalid_fail_mode", "ruling-14"),
    ]
    assert "invalid band 'core\\nxxx" in found[0].message and "…" in found[0].message
    assert found[0].message.endswith("(rule 1)") and len(found[0].message) <= 2_001
    assert "invalid fail_mode 'a\\rb'" in found[1].message


def test_loading_is_logged_by_kind_never_by_message(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="harnessweaver")
    good = write(tmp_path, plugged("middleware: [{use: acme.guard}]\n"), "good.yaml")
    hw.load(good, task=None)
    write(tmp_path, f"- {SECRET}\n", "bad.yaml")
    with pytest.raises(hw.SpecError):
        hw.load(tmp_path / "bad.yaml")
    records = [(r.name, r.levelname, r.getMessage()) for r in caplog.records]
    loaded = f"harness spec {good} loaded (task None, env None): 1 middleware"
    rejected = f"harness spec {tmp_path / 'bad.yaml'} rejected: 1 problem(s): not_a_mapping"
    assert ("harnessweaver.spec.loader", "INFO", loaded) in records
    assert ("harnessweaver.spec.loader", "WARNING", rejected) in records
    assert all(SECRET not in message for _, _, message in records)


def test_ids_are_checked_across_an_env_and_a_task(tmp_path: Path) -> None:
    text = plugged("""
        envs:
          a: {middleware: [{use: acme.watcher, id: w}]}
          b: {middleware: [{use: acme.guard}]}
        tasks:
          t: {validation: {rules: [{use: acme.tracer, id: w}]}}
          u: {validation: {rules: [{use: acme.guard}]}}
    """)
    found = [(p.item, p.line, p.message) for p in problems(write(tmp_path, text))]
    assert found == [
        ("tasks.t.validation.rules[0] (acme.tracer)", 6,
         "the id 'w' is already used by envs.a.middleware[0] (acme.watcher) at harness.yaml:3; "
         "give one of them its own `id:` (I2)"),
        ("tasks.u.validation.rules[0] (acme.guard)", 7,
         "the id 'acme.guard' is already used by envs.b.middleware[0] (acme.guard) at "
         "harness.yaml:4; give one of them its own `id:` (I2)"),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (bomb(9) + allow("*l8"), "too_many_aliases"),  # 10 ** 9 strings
        (allow("&x [*x]"), "recursive_alias"),
        (allow("[" * 3000 + "]" * 3000), "too_deep"),
    ],
)
def test_hooks_refuses_them_in_one_line_without_a_traceback(
    tmp_path: Path, text: str, kind: str
) -> None:
    spec = write(tmp_path, "tasks: {}\n" + text)
    code = f"import sys, harnessweaver.cli as c; sys.exit(c.main(['hooks', {str(spec)!r}]))"
    done = run_unless_stuck(code, f"harnessweaver hooks did not refuse a {kind} spec")
    assert done.returncode == 2
    assert done.stdout == ""
    assert len(done.stderr.splitlines()) == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith("harness.yaml:") and done.stderr.endswith("(limits)\n")


def test_hooks_names_a_loader_bug_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import harnessweaver.spec as spec_package
    from harnessweaver.cli import EXIT_ERROR, main

    def broken(*args: object, **kwargs: object) -> None:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(spec_package, "load", broken)
    assert main(["hooks", str(tmp_path / "harness.yaml")]) == EXIT_ERROR
    out, err = capsys.readouterr()
    assert out == "" and "Traceback" not in err and len(err.splitlines()) == 1
    assert "failed: RecursionError (a bug in harnessweaver" in err
    assert sys.getrecursionlimit() > 0
