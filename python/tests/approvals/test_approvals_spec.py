"""``approvals:`` in harness.yaml and ``Harness.approvals``: the checked key (problems
``invalid_approvals`` naming the key and the variable, never a value), ``${NAME}`` references,
the one lazy book on the harness's store with the spec's identity."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

import harnessweaver as hw
from harnessweaver.approvals import (
    Approvals,
    ApprovalsConfig,
    ApprovalsConfigError,
    HttpNotifier,
    parse_approvals,
    spec_identity,
)
from harnessweaver.state import SqliteStore

SECRET = "hw-notify-s3cret-91ab"
BASE = """\
middleware:
  - use: harnessweaver.tool_allowlist
    allow: [refund]
tasks:
  refunds:
    guardrails:
      tool.before:
        - {use: harnessweaver.tool_allowlist, id: task_allow, allow: [refund, search]}
"""


def write(folder: Path, extra: str = "", base: str = BASE) -> Path:
    path = folder / "harness.yaml"
    path.write_text(base + textwrap.dedent(extra).lstrip("\n"), encoding="utf-8")
    return path


def problems(path: Path) -> list[hw.spec.Problem]:
    with pytest.raises(hw.SpecError) as caught:
        hw.load(path)
    found = [p for p in caught.value.problems if p.kind == "invalid_approvals"]
    assert found, caught.value
    assert all(p.rule == "approvals" for p in found)
    return found


def test_no_key_is_the_defaults(tmp_path: Path) -> None:
    harness = hw.load(write(tmp_path))
    assert harness.approvals_config == ApprovalsConfig()
    book = harness.approvals
    assert isinstance(book, Approvals)
    assert book.expires_after == 86400.0
    assert book.notify is None
    assert book.store is harness.store
    assert book.spec == spec_identity(harness)
    assert harness.approvals is book  # one per harness
    assert harness.with_agent(tools=()).approvals is book  # copies share it, as the store


def test_the_key_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("APPROVALS_SECRET", SECRET)
    monkeypatch.setenv("APPROVALS_HOST", "hooks.example.invalid")
    path = write(
        tmp_path,
        """
        approvals:
          expires_after: 3600
          notify: {url: "https://${APPROVALS_HOST}/approvals", secret: "${APPROVALS_SECRET}"}
        """,
    )
    harness = hw.load(path)
    config = harness.approvals_config
    assert (config.expires_after, config.url, config.secret) == (
        3600.0,
        "https://hooks.example.invalid/approvals",
        SECRET,
    )
    assert SECRET not in repr(config) and "hooks" not in repr(config)
    assert isinstance(harness.approvals.notify, HttpNotifier)
    assert harness.approvals.expires_after == 3600.0


@pytest.mark.parametrize(
    ("extra", "where", "says"),
    [
        ("approvals: [1]\n", "approvals", "approvals is a mapping"),
        ("approvals: {expire_after: 5}\n", "approvals.expire_after", "unknown key"),
        ("approvals: {expires_after: 0}\n", "approvals.expires_after", "> 0"),
        ("approvals: {expires_after: -3}\n", "approvals.expires_after", "> 0"),
        ("approvals: {expires_after: soon}\n", "approvals.expires_after", "number of seconds"),
        ("approvals: {expires_after: true}\n", "approvals.expires_after", "number of seconds"),
        ("approvals: {expires_after: .inf}\n", "approvals.expires_after", "number of seconds"),
        ("approvals: {notify: yes}\n", "approvals.notify", "notify is a mapping"),
        ("approvals: {notify: {url: 'https://x.invalid/'}}\n", "approvals.notify.secret", "needs"),
        ("approvals: {notify: {secret: abc}}\n", "approvals.notify.url", "needs url"),
        (
            "approvals: {notify: {url: 'https://x.invalid/', secret: s, retries: 3}}\n",
            "approvals.notify.retries",
            "unknown key",
        ),
        (
            "approvals: {notify: {url: 'ftp://x.invalid/', secret: s}}\n",
            "approvals.notify.url",
            "http:// or https://",
        ),
        (
            "approvals: {notify: {url: 'https://x.invalid/', secret: 5}}\n",
            "approvals.notify.secret",
            "is text",
        ),
    ],
)
def test_problems_name_the_key(tmp_path: Path, extra: str, where: str, says: str) -> None:
    found = problems(write(tmp_path, extra))
    assert [p.item for p in found] == [where], found
    assert says in found[0].message
    assert found[0].line is not None and found[0].line >= 9


def test_a_missing_variable_is_named_and_no_value_is_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HW_NO_SUCH_SECRET", raising=False)
    monkeypatch.setenv("HW_URL", "https://user:pw-77@x.invalid/")
    path = write(
        tmp_path,
        """
        approvals:
          notify:
            url: "${HW_URL}"
            secret: "${HW_NO_SUCH_SECRET}"
        """,
    )
    with pytest.raises(hw.SpecError) as caught:
        hw.load(path)
    text = str(caught.value)
    assert "HW_NO_SUCH_SECRET" in text and "approvals.notify.secret" in text
    assert "pw-77" not in text
    found = [p for p in caught.value.problems if p.kind == "invalid_approvals"]
    assert [p.line for p in found] == [12]


def test_a_written_secret_never_shows_in_a_problem(tmp_path: Path) -> None:
    path = write(tmp_path, f"approvals: {{notify: {{url: 'gopher://h/', secret: {SECRET}}}}}\n")
    with pytest.raises(hw.SpecError) as caught:
        hw.load(path)
    assert SECRET not in str(caught.value)
    assert "gopher" not in str(caught.value)


def test_parse_approvals_lists_every_problem() -> None:
    with pytest.raises(ApprovalsConfigError) as caught:
        parse_approvals({"expires_after": 0, "notify": {"url": 1}, "x": 1}, environ={})
    keys = [key for key, _ in caught.value.problems]
    assert keys == ["x", "expires_after", "notify.secret", "notify.url"]
    assert parse_approvals(None) == ApprovalsConfig()


def test_the_spec_identity_is_the_spec_version(tmp_path: Path) -> None:
    first = spec_identity(hw.load(write(tmp_path)))
    assert first.startswith("sha256:") and len(first) == 71
    assert spec_identity(hw.load(write(tmp_path))) == first  # loaded again: the same
    assert spec_identity(hw.load(write(tmp_path), task="refunds")) != first
    changed = BASE.replace("allow: [refund]", "allow: [refund, transfer]")
    assert spec_identity(hw.load(write(tmp_path, base=changed))) != first
    # the approvals key is not part of the version: it does not change what runs
    assert spec_identity(hw.load(write(tmp_path, "approvals: {expires_after: 60}\n"))) == first


def test_a_harness_built_in_code_is_the_code_spec() -> None:
    harness = hw.Harness.from_bus(hw.HookBus())
    assert spec_identity(harness) == "code"
    assert harness.approvals.spec == "code"


def test_the_book_is_on_the_store_the_host_opens(tmp_path: Path) -> None:
    opened: list[SqliteStore] = []

    def open_state(config: object) -> SqliteStore:
        opened.append(SqliteStore(tmp_path / "s.db"))
        return opened[0]

    harness = hw.load(write(tmp_path), open_state=open_state)
    assert harness.approvals.store is opened[0]
    import anyio

    anyio.run(harness.aclose)
