"""Loading a harness spec: plugins, profiles in every layer, env overlays, tasks, and the bus
that comes out (bands from layers, run order, labels, provenance)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from spec_support import HERE, PLUGINS, names, plugged, tool_call, untimed, write

import harnessweaver as hw

LAYERED = """
profiles:
  - org://acme/base
  - profile://acme.baseline
  - profile://safe-tools
  - ./profiles/security.yaml
middleware:
  - {use: acme.guard}
  - {use: acme.refund_cap, id: cap, max_usd: 500}
envs:
  staging:
    middleware: [{use: acme.refund_cap, id: staging_cap, max_usd: 50, timeout: 1s}]
tasks:
  refund:
    guardrails:
      tool.before:
        - {use: acme.watcher, id: pii}
      tool.after:
        - {use: acme.watcher, id: after}
    validation:
      rules:
        - {use: acme.refund_cap, id: small_cap, max_usd: 50}
"""


@pytest.fixture
def layered(tmp_path: Path) -> Path:
    write(tmp_path / "org", "middleware: [{use: acme.tracer, id: org_trace}]\n", "acme/base.yaml")
    write(tmp_path, "middleware: [{use: acme.guard, id: sec_guard}]\n", "profiles/security.yaml")
    return write(tmp_path, plugged(LAYERED))


def test_an_empty_spec_loads_an_empty_bus(tmp_path: Path) -> None:
    harness = hw.load(write(tmp_path, ""))
    assert harness.entries == ()
    assert list(harness.chains()) == [hook for hook in hw.EVENT_TYPES]
    assert all(chain == () for chain in harness.chains().values())


def test_every_layer_sets_the_band_and_registration_order_follows_loading(
    layered: Path, tmp_path: Path
) -> None:
    harness = hw.load(layered, task="refund", env="staging", org_profiles=[tmp_path / "org"])
    assert [(e.name, e.layer, e.declaration.band) for e in harness.entries] == [
        ("org_trace", "org_profile", "baseline"),
        ("acme_trace", "plugin_profile", "baseline"),
        ("safe_tools.tool_allowlist", "builtin_profile", "platform"),
        ("safe_tools.redact_secrets", "builtin_profile", "platform"),
        ("sec_guard", "profile_file", "baseline"),
        ("acme.guard", "app", "app"),
        ("cap", "app", "app"),
        ("staging_cap", "env", "app"),
        ("pii", "task", "task"),
        ("after", "task", "task"),
        ("small_cap", "task", "task"),
    ]
    assert names(harness, "tool.before") == [
        "org_trace",
        "acme_trace",
        "sec_guard",
        "safe_tools.tool_allowlist",
        "safe_tools.redact_secrets",
        "acme.guard",
        "cap",
        "staging_cap",
        "pii",
        "small_cap",
    ]
    assert names(harness, "tool.after") == ["after", "acme_trace", "org_trace"]  # outbound
    assert harness.entry("staging_cap").declaration.timeout == 1.0
    assert (harness.task, harness.env) == ("refund", "staging")


def test_labels_and_provenance(layered: Path, tmp_path: Path) -> None:
    harness = hw.load(layered, task="refund", org_profiles=[tmp_path / "org"])
    shown = {e.name: (e.label, e.use, str(e.source)) for e in harness.entries}
    assert shown["pii"] == ("guardrails.tool.before[pii]", "acme.watcher", "harness.yaml:17")
    assert shown["small_cap"] == (
        "validation.rules[small_cap]",
        "acme.refund_cap",
        "harness.yaml:22",
    )
    assert shown["cap"] == ("cap", "acme.refund_cap", "harness.yaml:9")
    assert shown["org_trace"] == ("org_trace", "acme.tracer", "org/acme/base.yaml:1")
    assert shown["sec_guard"][2] == "profiles/security.yaml:1"
    assert shown["safe_tools.tool_allowlist"][2] == "harnessweaver/profiles/safe-tools.yaml:5"
    assert shown["acme_trace"][2].endswith("spec/acme_profiles/baseline.yaml:3")
    assert harness.entry("cap").settings == {"max_usd": 500}
    assert isinstance(harness.entries[0].source, hw.Provenance)


def test_a_guardrail_is_narrowed_to_its_stage(layered: Path, tmp_path: Path) -> None:
    harness = hw.load(layered, task="refund", org_profiles=[tmp_path / "org"])
    assert harness.entry("pii").declaration.hooks == ("tool.before",)  # watcher declares two
    assert "pii" not in names(harness, "tool.after")


def test_no_task_and_no_env_leave_their_items_out(layered: Path, tmp_path: Path) -> None:
    harness = hw.load(layered, org_profiles=[tmp_path / "org"])
    assert not {"staging_cap", "pii", "after", "small_cap"} & {e.name for e in harness.entries}


def test_org_profiles_from_the_environment_variable(
    layered: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    elsewhere = tmp_path / "empty"
    elsewhere.mkdir()
    monkeypatch.setenv("HARNESSWEAVER_ORG_PROFILES", f"{elsewhere}{os.pathsep}{tmp_path / 'org'}")
    harness = hw.load(layered)
    assert harness.entries[0].name == "org_trace"
    monkeypatch.setenv("HARNESSWEAVER_ORG_PROFILES", str(elsewhere))
    with pytest.raises(hw.SpecError, match=r"no acme/base.yaml in the org-profile directories"):
        hw.load(layered)


def test_a_harness_runs(layered: Path, tmp_path: Path) -> None:
    import anyio

    harness = hw.load(layered, task="refund", org_profiles=[tmp_path / "org"])
    ctx = hw.RunContext(envelope=hw.Envelope(clock=hw.FixedClock("2026-11-30T12:00:00+00:00")))

    async def emit() -> hw.HookResult:
        return await harness.bus.emit("tool.before", tool_call("search", amount_usd=80), ctx)

    result = anyio.run(emit)
    assert result.outcome == hw.Block(reason="over the refund cap", code="refund_cap")
    assert [r.get("middleware") for r in untimed(ctx.trace)][-2:] == ["small_cap", None]


def test_plugins_listed_in_a_profile_serve_every_item(tmp_path: Path) -> None:
    write(tmp_path, PLUGINS + "middleware: [{use: acme.tracer, id: t}]\n", "p.yaml")
    spec = write(tmp_path, "profiles: [./p.yaml]\nmiddleware: [{use: acme.guard}]\n")
    assert [e.name for e in hw.load(spec).entries] == ["t", "acme.guard"]


def test_local_plugins_are_imported_next_to_the_spec(tmp_path: Path) -> None:
    plugin_module = """
        import harnessweaver as hw

        @hw.middleware(hooks=["step.end"], fail_mode="open")
        async def ping(event, env):
            return None

        plugins = [hw.Plugin(namespace="zeta", version="1", middleware=[ping])]
    """
    write(tmp_path, textwrap.dedent(plugin_module), "zeta_spec_plugin.py")
    spec = write(tmp_path, "plugins: {local: [zeta_spec_plugin]}\nmiddleware: [{use: zeta.ping}]\n")
    assert names(hw.load(spec), "step.end") == ["zeta.ping"]


def test_two_plugins_with_one_namespace(tmp_path: Path) -> None:
    write(tmp_path, "from spec_support import beta_plugin as plugin\n", "beta_again.py")
    write(
        tmp_path, "import harnessweaver as hw\nplugin = hw.Plugin('beta', '9')\n", "beta_clash.py"
    )
    ok = write(tmp_path, "plugins: {local: [spec_support, beta_again]}\n", "ok.yaml")
    hw.load(ok)  # the same plugin twice is fine
    spec = write(tmp_path, "plugins: {local: [spec_support, beta_again, beta_clash]}\n")
    with pytest.raises(hw.SpecError) as caught:
        hw.load(spec)
    (problem,) = caught.value.problems
    assert (problem.kind, problem.item) == ("duplicate_plugin", "plugins.local[2]")
    assert "module beta_clash gives plugin namespace 'beta', which module beta_again" in str(
        problem
    )


def _install(folder: Path, entry_points: str) -> None:
    info = folder / "hw_spec_test_plugins-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: hw-spec-test-plugins\nVersion: 1.0\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        "[harnessweaver.plugins]\n" + entry_points, encoding="utf-8"
    )


def test_installed_plugins_come_from_entry_points(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _install(
        tmp_path / "site", "beta = spec_support:beta_plugin\ngamma = spec_support:make_gamma\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    spec = write(
        tmp_path,
        "plugins: {installed: [beta, gamma]}\n"
        "middleware: [{use: beta.guard}, {use: gamma.check}]\n",
    )
    harness = hw.load(spec)
    assert [e.name for e in harness.entries] == ["beta.guard", "gamma.check"]
    typo = write(tmp_path, "plugins: {installed: [betta]}\n", "typo.yaml")
    with pytest.raises(hw.SpecError, match=r"no installed plugin 'betta'.*did you mean 'beta'\?"):
        hw.load(typo)


def test_an_entry_point_giving_another_namespace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _install(tmp_path / "site", "delta = spec_support:beta_plugin\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    with pytest.raises(hw.SpecError) as caught:
        hw.load(write(tmp_path, "plugins: {installed: [delta]}\n"))
    (problem,) = caught.value.problems
    assert problem.kind == "plugin_import_error"
    assert "gives plugin namespace 'beta', not 'delta'" in problem.message


def test_the_builtin_plugin_needs_no_listing(tmp_path: Path) -> None:
    spec = write(tmp_path, "middleware: [{use: harnessweaver.max_messages, id: mm, limit: 2}]\n")
    assert hw.load(spec).entry("mm").use == "harnessweaver.max_messages"


def test_spec_errors_pickle(tmp_path: Path) -> None:
    import pickle

    with pytest.raises(hw.SpecError) as caught:
        hw.load(write(tmp_path, "nonsense: 1\n"))
    copy = pickle.loads(pickle.dumps(caught.value))
    assert copy.problems == caught.value.problems and str(copy) == str(caught.value)


def test_plugin_profiles_resolve_against_the_plugin_module() -> None:
    import spec_support

    assert spec_support.plugin.profile("baseline") == HERE / "acme_profiles" / "baseline.yaml"
    assert dict(spec_support.plugin.profile("watch")) == {
        "middleware": [{"use": "acme.watcher", "id": "watch"}]
    }
    with pytest.raises(KeyError, match="it has baseline, watch"):
        spec_support.plugin.profile("nope")


@pytest.mark.parametrize(
    ("profiles", "kind", "message"),
    [
        ({"not a name": "x.yaml"}, "invalid_name", "invalid profile name 'not a name'"),
        ({"base": 3}, "invalid_profile", "profile 'base' must be a path or a mapping, got 3"),
    ],
)
def test_plugin_profiles_are_checked(profiles: dict[str, object], kind: str, message: str) -> None:
    with pytest.raises(hw.DeclarationError, match=message) as caught:
        hw.Plugin("acme", "1", profiles=profiles)  # type: ignore[arg-type]
    assert caught.value.kind == kind


def test_an_absolute_plugin_profile_path_is_kept(tmp_path: Path) -> None:
    plugin = hw.Plugin("acme", "1", profiles={"base": tmp_path / "base.yaml"})
    assert plugin.profile("base") == tmp_path / "base.yaml"
    assert hash(plugin) == hash(hw.Plugin("acme", "1"))
