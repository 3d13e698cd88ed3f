"""The verdict of run_kit.py, which gates ``nox -s mcp``: a scenario that passes bare must pass
through the proxy; one missing through the proxy counts as failed; one that fails bare asks
nothing of the proxy; and the kit's result folders are read as it writes them."""

from __future__ import annotations

import json
from pathlib import Path

from run_kit import REVISIONS, Scenario, compare, read_results, report


def _ok(name: str) -> Scenario:
    return Scenario(name, True, 2)


def _failed(name: str) -> Scenario:
    return Scenario(name, False, 2, ["check: broke"])


def test_a_scenario_passing_bare_must_pass_through_the_proxy() -> None:
    bare = {n: _ok(n) for n in ("ping", "tools-list", "prompts-list")} | {"x": _failed("x")}
    proxied = {"ping": _ok("ping"), "tools-list": _failed("tools-list"), "x": _failed("x")}
    rows, regressions = compare(bare, proxied)
    assert regressions == ["prompts-list", "tools-list"]
    assert rows == [
        ["ping", "pass", "pass"],
        ["prompts-list", "pass", "not run"],
        ["tools-list", "pass", "FAIL (1/2)"],
        ["x", "FAIL (1/2)", "FAIL (1/2)"],
    ]


def test_the_kit_folders_are_read_as_it_writes_them(tmp_path: Path) -> None:
    checks = {
        "server-ping-2026-12-06T08-55-49-887Z": [{"id": "ping", "status": "SUCCESS"}],
        "server-tools-call-error-2026-12-06T08-55-50-001Z": [
            {"id": "a", "status": "SUCCESS"},
            {"id": "b", "status": "WARNING"},
            {"id": "c", "status": "FAILURE", "errorMessage": "no isError"},
        ],
    }
    for folder, content in checks.items():
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "checks.json").write_text(json.dumps(content), encoding="utf-8")
    assert read_results(tmp_path) == {
        "ping": Scenario("ping", True, 1),
        "tools-call-error": Scenario("tools-call-error", False, 3, ["c: no isError"]),
    }


def test_nothing_ran_fails_and_so_does_a_regression(tmp_path: Path) -> None:
    nothing: dict[str, Scenario] = {}
    empty = {(r, kind): (nothing, "") for r in REVISIONS for kind in ("bare", "proxied")}
    assert report(empty, tmp_path) == 1
    same = {
        (r, kind): ({"ping": _ok("ping")}, "") for r in REVISIONS for kind in ("bare", "proxied")
    }
    assert report(same, tmp_path) == 0
    worse = same | {(REVISIONS[0], "proxied"): ({"ping": _failed("ping")}, "")}
    assert report(worse, tmp_path) == 1
    written = json.loads((tmp_path / "mcp-conformance.json").read_text(encoding="utf-8"))
    assert written[REVISIONS[0]]["regressions"] == ["ping"]
