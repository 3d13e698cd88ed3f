"""Every loading rule of a harness spec, and the error a user gets when it is broken: the
file, the line, the item and the rule are in the message, and nothing is built."""

from __future__ import annotations

from pathlib import Path

import pytest
from spec_support import HERE, PLUGINS, only_problem, plugged, problems, write

import harnessweaver as hw


def test_s8_only_profiles_put_middleware_in_baseline(tmp_path: Path) -> None:
    spec = write(
        tmp_path,
        plugged(
            """
        middleware:
          - {use: acme.guard}
          - use: acme.tracer
            band: baseline
        """
        ),
    )
    problem = only_problem(spec)
    assert (problem.kind, problem.rule, problem.line) == ("baseline_outside_profile", "S8", 5)
    assert str(problem).startswith("harness.yaml:5: middleware[1] (acme.tracer): middleware ")
    assert "only profiles" in str(problem) and str(problem).endswith("(S8)")


def test_an_env_overlay_cannot_reach_baseline_either(tmp_path: Path) -> None:
    spec = write(
        tmp_path,
        PLUGINS + "envs:\n  prod:\n    middleware:\n      - {use: acme.tracer, band: baseline}\n",
    )
    problem = only_problem(spec)
    assert (problem.kind, problem.item) == (
        "baseline_outside_profile",
        "envs.prod.middleware[0] (acme.tracer)",
    )


def test_ruling_16_a_band_never_moves_outward(tmp_path: Path) -> None:
    spec = write(
        tmp_path,
        PLUGINS
        + "tasks:\n  t:\n    validation:\n      rules:\n        - {use: acme.guard, band: app}\n",
    )
    problem = only_problem(spec)
    assert (problem.kind, problem.rule) == ("band_outward", "ruling-16")
    assert str(problem).startswith("harness.yaml:6: tasks.t.validation.rules[0] (acme.guard): ")
    assert "(ruling 16)" in problem.message


def test_r2_a_baseline_item_declaring_open_fails_loading(tmp_path: Path) -> None:
    write(tmp_path, "middleware:\n  - {use: acme.guard, id: g, fail_mode: open}\n", "base.yaml")
    spec = write(tmp_path, PLUGINS + "profiles: [./base.yaml]\n")
    problem = only_problem(spec)
    assert (problem.kind, problem.rule, problem.file, problem.line) == (
        "baseline_fail_open",
        "R2",
        "base.yaml",
        2,
    )
    assert str(problem).startswith("base.yaml:2: middleware[0] (acme.guard): ")
    assert "(R2)" in problem.message


def test_r2_a_plugin_profile_with_open_middleware_fails_loading(tmp_path: Path) -> None:
    spec = write(tmp_path, PLUGINS + "profiles: [profile://acme.watch]\n")
    problem = only_problem(spec)
    assert (problem.kind, problem.rule) == ("baseline_fail_open", "R2")
    assert str(problem).startswith("profile://acme.watch: middleware[0] (acme.watcher): ")


def test_r2_an_open_builtin_in_an_org_profile_must_be_made_closed(tmp_path: Path) -> None:
    org = tmp_path / "org"
    write(org, "middleware:\n  - {use: harnessweaver.redact_secrets}\n", "acme/base.yaml")
    spec = write(tmp_path, "profiles: [org://acme/base]\n")
    problem = only_problem(spec, org_profiles=[org])
    assert (problem.kind, problem.file) == ("baseline_fail_open", "org/acme/base.yaml")
    write(
        org,
        "middleware:\n  - {use: harnessweaver.redact_secrets, fail_mode: closed}\n",
        "acme/base.yaml",
    )
    harness = hw.load(spec, org_profiles=[org])
    assert harness.entries[0].declaration.band == "baseline"


def test_ruling_18_a_guardrail_stage_the_middleware_does_not_declare(tmp_path: Path) -> None:
    spec = write(
        tmp_path,
        plugged(
            """
        tasks:
          refund:
            guardrails:
              model.before:
                - {use: acme.guard, id: pii}
        """
        ),
    )
    problem = only_problem(spec)
    assert (problem.kind, problem.rule, problem.line) == ("hooks_widened", "ruling-18", 6)
    assert problem.item == "tasks.refund.guardrails.model.before[0] (acme.guard)"
    assert "'model.before'" in problem.message and "(ruling 18)" in problem.message


def test_ruling_18_hooks_narrow_and_never_widen(tmp_path: Path) -> None:
    spec = write(
        tmp_path,
        plugged(
            """
        middleware:
          - use: acme.guard
            hooks: [tool.before, tool.after]
        """
        ),
    )
    problem = only_problem(spec)
    assert (problem.kind, problem.line) == ("hooks_widened", 4)  # the line of `hooks:`
    assert "'tool.after'" in problem.message


def test_a_guardrail_cannot_name_other_hooks_than_its_stage(tmp_path: Path) -> None:
    spec = write(
        tmp_path,
        PLUGINS
        + "tasks:\n  t:\n    guardrails:\n      tool.before:\n"
        + "        - {use: acme.watcher, hooks: [tool.after]}\n",
    )
    problem = only_problem(spec)
    assert (problem.kind, problem.rule) == ("bad_item", "spec")
    assert "a guardrail of stage tool.before runs on tool.before only (spec)" in str(problem)


def test_a_disabled_item_is_checked_but_not_registered(tmp_path: Path) -> None:
    good = write(
        tmp_path,
        PLUGINS
        + "middleware:\n  - {use: acme.guard}\n"
        + "  - {use: acme.refund_cap, max_usd: 5, enabled: false}\n",
    )
    harness = hw.load(good)
    assert [entry.name for entry in harness.entries] == ["acme.guard"]
    assert [d.name for d in harness.bus.chain("tool.before")] == ["acme.guard"]
    bad = write(
        tmp_path,
        PLUGINS + "middleware:\n  - {use: acme.refund_cap, band: baseline, enabled: false}\n",
        "bad.yaml",
    )
    kinds = {(p.kind, p.line) for p in problems(bad)}
    assert kinds == {("baseline_outside_profile", 3), ("invalid_settings", 3)}


def test_enabled_is_a_boolean(tmp_path: Path) -> None:
    spec = write(tmp_path, PLUGINS + "middleware:\n  - {use: acme.guard, enabled: 'no'}\n")
    problem = only_problem(spec)
    assert str(problem) == (
        "harness.yaml:3: middleware[0] (acme.guard): enabled is true or false, got 'no' (spec)"
    )


def test_duplicate_ids_name_both_items(tmp_path: Path) -> None:
    spec = write(
        tmp_path,
        PLUGINS
        + "middleware:\n  - {use: acme.guard}\n"
        + "  - {use: acme.refund_cap, id: acme.guard, max_usd: 5}\n",
    )
    problem = only_problem(spec)
    assert (problem.kind, problem.rule, problem.line) == ("duplicate_id", "I2", 4)
    assert str(problem) == (
        "harness.yaml:4: middleware[1] (acme.refund_cap): the id 'acme.guard' is already used by "
        "middleware[0] (acme.guard) at harness.yaml:3; give one of them its own `id:` (I2)"
    )


def test_duplicate_ids_across_a_profile_and_a_task_not_selected(tmp_path: Path) -> None:
    spec = write(
        tmp_path,
        plugged(
            """
        profiles: [profile://acme.baseline]
        tasks:
          other:
            validation:
              rules: [{use: acme.guard, id: acme_trace}]
        """
        ),
    )
    problem = only_problem(spec)  # checked whatever the task: every task must load
    assert problem.kind == "duplicate_id"
    assert problem.item == "tasks.other.validation.rules[0] (acme.guard)"
    # the profile is outside the spec's folder, so it is named by its absolute path
    assert f"at {HERE.as_posix()}/acme_profiles/baseline.yaml:3;" in problem.message
    assert problem.message.endswith(
        "spec/acme_profiles/baseline.yaml:3; give one of them its own `id:` (I2)"
    )


def test_two_tasks_may_reuse_an_id(tmp_path: Path) -> None:
    spec = write(
        tmp_path,
        plugged(
            """
        tasks:
          a: {validation: {rules: [{use: acme.guard, id: rule}]}}
          b: {validation: {rules: [{use: acme.guard, id: rule}]}}
        """
        ),
    )
    assert [e.label for e in hw.load(spec, task="b").entries] == ["validation.rules[rule]"]


def test_unknown_use_suggests_close_names(tmp_path: Path) -> None:
    spec = write(tmp_path, PLUGINS + "middleware:\n  - {use: acme.gaurd}\n  - {use: acmee.guard}\n")
    first, second = problems(spec)
    assert (first.kind, first.rule, first.line) == ("unknown_use", "plugins", 3)
    assert str(first).startswith("harness.yaml:3: middleware[0] (acme.gaurd): unknown middleware ")
    assert first.message.endswith("did you mean acme.guard? (plugins)")
    assert "no plugin 'acmee' is loaded (the plugins are acme, harnessweaver)" in second.message
    assert "did you mean acme.guard?" in second.message


def test_an_item_needs_use(tmp_path: Path) -> None:
    spec = write(tmp_path, "middleware:\n  - {id: x}\n  - just text\n")
    first, second = problems(spec)
    assert (first.kind, first.line, first.item) == ("bad_item", 2, "middleware[0]")
    assert "an item needs `use: namespace.name`, got None" in first.message
    assert (second.kind, second.line) == ("not_a_mapping", 3)


@pytest.mark.parametrize(
    ("where", "text"),
    [
        (
            "stage",
            "tasks:\n  t:\n    guardrails:\n      tool.befor:\n        - {use: acme.guard}\n",
        ),
        ("hooks", "middleware:\n  - {use: acme.guard, hooks: [tool.befor]}\n"),
    ],
)
def test_unknown_hook_points(tmp_path: Path, where: str, text: str) -> None:
    problem = only_problem(write(tmp_path, PLUGINS + text))
    assert (problem.kind, problem.rule) == ("unknown_hook", "ruling-2")
    assert "unknown hook point 'tool.befor'" in problem.message and "(ruling 2)" in problem.message
    assert problem.line == (6 if where == "stage" else 3)


@pytest.mark.parametrize("timeout", ["2 s", "0", "-1", "soon", "true"])
def test_bad_durations(tmp_path: Path, timeout: str) -> None:
    spec = write(tmp_path, PLUGINS + f"middleware:\n  - use: acme.guard\n    timeout: {timeout}\n")
    problem = only_problem(spec)
    assert (problem.kind, problem.rule, problem.line) == ("invalid_duration", "ruling-15", 4)
    assert "(ruling 15)" in problem.message


def test_other_core_checks_keep_their_kind_and_rule(tmp_path: Path) -> None:
    spec = write(
        tmp_path,
        PLUGINS
        + "middleware:\n  - {use: acme.guard, band: core}\n"
        + "  - {use: acme.watcher, fail_mode: maybe}\n"
        + "  - {use: acme.tracer, id: 'not a name'}\n",
    )
    assert [(p.kind, p.rule, p.line) for p in problems(spec)] == [
        ("invalid_band", "rule-1", 3),
        ("invalid_fail_mode", "ruling-14", 4),
        ("invalid_name", "I1", 5),
    ]


def test_unreadable_yaml_gives_the_parsers_line(tmp_path: Path) -> None:
    spec = write(tmp_path, PLUGINS + "middleware:\n  - {use: acme.guard\n  - x: 1\n")
    problem = only_problem(spec)
    assert (problem.kind, problem.rule, problem.item) == ("unreadable_yaml", "yaml", "")
    assert problem.line is not None
    assert str(problem).startswith(f"harness.yaml:{problem.line}: not YAML: ")
    assert "flow mapping on line 3" in problem.message


def test_a_key_written_twice_is_an_error(tmp_path: Path) -> None:
    spec = write(
        tmp_path,
        PLUGINS + "middleware:\n  - use: acme.refund_cap\n    max_usd: 5\n    max_usd: 6\n",
    )
    problem = only_problem(spec)
    assert (problem.kind, problem.line) == ("unreadable_yaml", 5)
    assert "the key 'max_usd' is written twice" in problem.message


def test_a_missing_spec_file(tmp_path: Path) -> None:
    problem = only_problem(tmp_path / "nope.yaml")
    assert (problem.kind, problem.file) == ("unreadable_yaml", "nope.yaml")
    assert "cannot read the file: No such file or directory" in problem.message


def test_shapes_and_unknown_keys(tmp_path: Path) -> None:
    spec = write(
        tmp_path,
        "middlewares: []\nplugins: [a]\ntasks:\n  t: {guardrails: [], checks: 1}\n",
    )
    found = [(p.kind, p.item, p.line) for p in problems(spec)]
    assert found == [
        ("unknown_key", "", 1),
        ("not_a_mapping", "plugins", 2),
        ("unknown_key", "tasks.t", 4),
        ("not_a_mapping", "tasks.t.guardrails", 4),
    ]
    assert "did you mean 'middleware'?" in problems(spec)[0].message


def test_a_spec_that_is_not_a_mapping(tmp_path: Path) -> None:
    problem = only_problem(write(tmp_path, "- a\n- b\n"))  # what it holds, never its content
    assert str(problem) == "harness.yaml:1: a harness spec is a mapping, got a list (spec)"


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (
            "max_usdd: 5",
            "max_usdd: unknown setting (did you mean max_usd?); max_usd: Field required",
        ),
        ("{}", "max_usd: Field required"),
        ("max_usd: lots", "max_usd: Input should be a valid number"),
    ],
)
def test_settings_are_validated_by_the_config(tmp_path: Path, settings: str, message: str) -> None:
    extra = "" if settings == "{}" else f", {settings}"
    spec = write(tmp_path, PLUGINS + f"middleware:\n  - {{use: acme.refund_cap{extra}}}\n")
    problem = only_problem(spec)
    assert (problem.kind, problem.rule, problem.line) == ("invalid_settings", "settings", 3)
    assert str(problem).startswith(
        f"harness.yaml:3: middleware[0] (acme.refund_cap): invalid settings: {message}"
    )
    assert str(problem).endswith("(settings)")


def test_unknown_settings_are_refused_even_when_the_model_ignores_extras(tmp_path: Path) -> None:
    spec = write(tmp_path, PLUGINS + "middleware:\n  - use: acme.lax\n    limt: 3\n")
    problem = only_problem(spec)
    assert (problem.kind, problem.line) == ("invalid_settings", 4)  # the line of the key
    assert "limt: unknown setting (did you mean limit?)" in problem.message


def test_a_function_takes_no_settings(tmp_path: Path) -> None:
    spec = write(tmp_path, PLUGINS + "middleware:\n  - {use: acme.guard, max_usd: 5}\n")
    problem = only_problem(spec)
    assert "guard is a function and takes no settings: max_usd (settings)" in str(problem)


def test_unknown_task_and_env(tmp_path: Path) -> None:
    spec = write(tmp_path, PLUGINS + "envs: {staging: {}}\ntasks: {refund: {}}\n")
    env, task = problems(spec, task="extract", env="prod")
    assert (
        str(env) == "harness.yaml:2: envs: unknown env 'prod': the spec's envs are staging (spec)"
    )
    assert str(task) == (
        "harness.yaml:3: tasks: unknown task 'extract': the spec's tasks are refund (spec)"
    )


def test_unknown_profiles(tmp_path: Path) -> None:
    spec = write(
        tmp_path,
        plugged(
            """
        profiles:
          - profile://rags
          - profile://acme.nope
          - profile://zeta.base
          - org://acme/base
          - ./nope.yaml
          - ftp://x
        """
        ),
    )
    found = problems(spec)
    assert [(p.kind, p.rule, p.line) for p in found] == [
        ("unknown_profile", "profiles", n) for n in range(3, 9)
    ]
    messages = [p.message for p in found]
    assert "did you mean profile://rag?" in messages[0]
    assert "plugin acme has no profile 'nope' (it has baseline, watch)" in messages[1]
    assert "no plugin 'zeta' is loaded" in messages[2]
    assert "no org-profile directories are set" in messages[3]
    assert "no profile file './nope.yaml'" in messages[4]
    assert str(found[0]).startswith("harness.yaml:3: profiles[0]: profile://rags: ")


def test_unknown_and_broken_plugins(tmp_path: Path) -> None:
    write(tmp_path, "x = 1\n", "no_plugin_here.py")
    write(tmp_path, "raise RuntimeError('boom')\n", "broken_plugin_mod.py")
    spec = write(
        tmp_path,
        "plugins:\n  local: [missing_plugin_mod, no_plugin_here, broken_plugin_mod]\n"
        "  installed: [nope]\n",
    )
    found = problems(spec)
    assert [(p.kind, p.item) for p in found] == [
        ("plugin_import_error", "plugins.local[0]"),
        ("plugin_import_error", "plugins.local[1]"),
        ("plugin_import_error", "plugins.local[2]"),
        ("unknown_plugin", "plugins.installed[0]"),
    ]
    assert "No module named 'missing_plugin_mod'" in found[0].message
    assert "has no `plugin` (an hw.Plugin) or `plugins` (a list)" in found[1].message
    assert "cannot import broken_plugin_mod: RuntimeError (its message is not shown)" in (
        found[2].message
    )
    assert "boom" not in found[2].message  # R9: an import's message may hold anything
    assert "no entry point of that name in the group harnessweaver.plugins" in found[3].message


def test_all_or_nothing_every_problem_is_reported_and_nothing_is_built(tmp_path: Path) -> None:
    spec = write(
        tmp_path,
        plugged(
            """
        middleware:
          - {use: acme.guard}
          - {use: acme.refund_cap, id: cap}
          - {use: acme.watcher}
          - {use: acme.tracer, band: baseline}
        tasks:
          t:
            guardrails:
              tool.before: [{use: acme.watcher, id: w, timeout: 2 s}]
        """
        ),
    )
    found = problems(spec)
    assert [(p.kind, p.line) for p in found] == [
        ("invalid_settings", 4),
        ("baseline_outside_profile", 6),
        ("invalid_duration", 10),
    ]
