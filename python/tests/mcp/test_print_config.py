"""``harnessweaver mcp --print-config``: each client's snippet parses in that client's format,
names the server, and carries the proxy's command line exactly (an absolute spec path; odd
paths with spaces, quotes, backslashes and control characters survive), or its URL."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harnessweaver.mcp.clients import CLIENTS, print_config, proxy_argv

ODD = [
    "/opt/my tools/harnessweaver",
    "mcp",
    "--spec",
    '/home/o\'brien/"quoted" dir/harness.yaml',
    "--",
    "C:\\Program Files\\node.exe",
    "line\nbreak\ttab\rreturn\x00nul\x1fus\x7fdel\x08bs\x0cff",
    "ünïcødé ✓ 😀",
    "$HOME ${VAR} `x` ; & | > *",
    "",
]
"""A command line no shell quoting would survive: it must reach the client as these words."""


def parsed(client: str, text: str) -> dict[str, Any]:
    """The snippet read as the client reads its file."""
    doc: dict[str, Any] = tomllib.loads(text) if client == "codex" else json.loads(text)
    return doc


def entry(client: str, text: str, name: str = "notes") -> dict[str, Any]:
    """The server's entry: under ``mcp_servers`` (Codex), ``servers`` (VS Code) or
    ``mcpServers`` (every other client); the only key of the snippet."""
    doc = parsed(client, text)
    key = {"codex": "mcp_servers", "vscode": "servers"}.get(client, "mcpServers")
    assert list(doc) == [key], doc
    assert list(doc[key]) == [name], doc
    server: dict[str, Any] = doc[key][name]
    return server


@pytest.mark.parametrize("client", CLIENTS)
def test_each_client_gets_the_command_line_exactly(client: str) -> None:
    server = entry(client, print_config(client, "notes", ODD))

    assert server["command"] == ODD[0]
    assert server["args"] == ODD[1:]


@pytest.mark.parametrize(
    ("client", "kind"),
    [
        ("claude-code", {"type": "stdio"}),
        ("claude-desktop", {}),
        ("codex", {"required": True}),
        ("gemini", {}),
        ("cursor", {}),
        ("vscode", {"type": "stdio"}),
    ],
)
def test_each_client_gets_its_own_stdio_entry(client: str, kind: dict[str, str]) -> None:
    argv = ["harnessweaver", "mcp", "--spec", "/p/harness.yaml", "--", "npx", "server"]

    server = entry(client, print_config(client, "notes", argv))

    assert server == {**kind, "command": "harnessweaver", "args": argv[1:]}


@pytest.mark.parametrize(
    ("client", "expected"),
    [
        ("claude-code", {"type": "http", "url": "http://127.0.0.1:8765/mcp"}),
        ("codex", {"url": "http://127.0.0.1:8765/mcp", "required": True}),
        ("gemini", {"httpUrl": "http://127.0.0.1:8765/mcp"}),
        ("cursor", {"url": "http://127.0.0.1:8765/mcp"}),
        ("vscode", {"type": "http", "url": "http://127.0.0.1:8765/mcp"}),
    ],
)
def test_each_client_gets_its_own_url_entry(client: str, expected: dict[str, str]) -> None:
    text = print_config(client, "notes", url="http://127.0.0.1:8765/mcp")

    assert entry(client, text) == expected


def test_claude_desktop_has_no_url_form_in_its_file() -> None:
    with pytest.raises(ValueError, match="stdio servers only"):
        print_config("claude-desktop", "notes", url="http://127.0.0.1:8765/mcp")


def test_codex_gets_the_table_of_its_config_toml() -> None:
    text = print_config("codex", "notes", ["harnessweaver", "mcp", "--", "srv"])

    assert text == (
        '[mcp_servers.notes]\ncommand = "harnessweaver"\nargs = ["mcp", "--", "srv"]\n'
        "required = true\n"
    )


@pytest.mark.parametrize("client", CLIENTS)
@given(argv=st.lists(st.text(st.characters(exclude_categories=("Cs",))), min_size=1))
def test_any_command_line_survives(client: str, argv: list[str]) -> None:
    server = entry(client, print_config(client, "notes", argv))

    assert [server["command"], *server["args"]] == argv


@pytest.mark.parametrize("client", CLIENTS)
def test_text_no_file_can_hold_is_refused(client: str) -> None:
    # A lone surrogate: what Python makes of a path's bytes that are not UTF-8.
    with pytest.raises(ValueError, match="not valid Unicode"):
        print_config(client, "notes", ["harnessweaver", "/tmp/caf\udce9"])


@pytest.mark.parametrize("name", ["", "my server", "a.b", "naïve", 'x"y', "n" * 65])
def test_a_name_some_client_would_not_take_is_refused(name: str) -> None:
    with pytest.raises(ValueError, match="server name"):
        print_config("claude-code", name, ["harnessweaver"])


def test_the_names_every_client_takes_are_kept() -> None:
    for name in ("notes", "my-server_2", "N" * 64):
        assert entry("codex", print_config("codex", name, ["x"]), name) == {
            "command": "x",
            "args": [],
            "required": True,
        }


@pytest.mark.parametrize(
    ("argv", "url"),
    [(None, None), (["harnessweaver"], "http://127.0.0.1:1/mcp"), ([], None)],
)
def test_exactly_one_of_command_line_and_url(argv: list[str] | None, url: str | None) -> None:
    with pytest.raises(ValueError):
        print_config("cursor", "notes", argv, url=url)


def test_an_unknown_client_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown client 'zed'"):
        print_config("zed", "notes", ["harnessweaver"])


def test_the_proxy_argv_carries_the_absolute_spec_and_the_server_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    server = ["npx", "-y", "@modelcontextprotocol/server-filesystem", "/my files"]

    argv = proxy_argv("conf/harness.yaml", server, task="triage", trace="t.jsonl")

    spec, trace = str(tmp_path / "conf" / "harness.yaml"), str(tmp_path / "t.jsonl")
    assert argv == [
        "harnessweaver", "mcp", "--spec", spec, "--task", "triage", "--trace", trace,
        "--", *server,
    ]  # fmt: skip
    config = entry("claude-code", print_config("claude-code", "files", argv), "files")
    assert config["args"] == argv[1:]


def test_the_proxy_argv_of_an_http_upstream(tmp_path: Path) -> None:
    argv = proxy_argv(
        tmp_path / "harness.yaml",
        upstream="http://127.0.0.1:9000/mcp",
        listen="127.0.0.1:8765",
        env="prod",
        program="/opt/hw/bin/harnessweaver",
    )

    assert argv == [
        "/opt/hw/bin/harnessweaver", "mcp", "--spec", str(tmp_path / "harness.yaml"),
        "--env", "prod", "--upstream", "http://127.0.0.1:9000/mcp", "--listen", "127.0.0.1:8765",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("server", "upstream"), [((), None), (["srv"], "http://127.0.0.1:9000/mcp")]
)
def test_the_proxy_argv_needs_exactly_one_upstream(server: list[str], upstream: str | None) -> None:
    with pytest.raises(ValueError, match="either"):
        proxy_argv("/p/harness.yaml", server, upstream=upstream)


# -- harnessweaver mcp --print-config --------------------------------------------------------


def cli(capsys: pytest.CaptureFixture[str], *words: str) -> tuple[int, str, str]:
    from harnessweaver.cli import main

    status = main(["mcp", "--print-config", *words])
    out, err = capsys.readouterr()
    return status, out, err


def test_the_command_prints_the_proxy_in_front_of_the_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    server = ["npx", "-y", "@modelcontextprotocol/server-filesystem", "/my files"]

    status, out, _ = cli(
        capsys, "--client", "claude-code", "--spec", "a dir/harness.yaml", "--name", "files",
        "--task", "triage", "--otel", "otlp", "--call-timeout", "2.5", "--", *server,
    )  # fmt: skip

    assert status == 0
    config = entry("claude-code", out, "files")
    assert config["type"] == "stdio"
    assert Path(config["command"]).name == "harnessweaver"
    spec = str(tmp_path / "a dir" / "harness.yaml")
    assert config["args"] == [
        "mcp", "--spec", spec, "--task", "triage", "--otel", "otlp", "--name", "files",
        "--call-timeout", "2.5", "--", *server,
    ]  # fmt: skip


def test_the_command_prints_the_url_the_proxy_listens_on(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, _ = cli(
        capsys, "--client", "gemini", "--spec", "h.yaml", "--upstream",
        "http://127.0.0.1:9000/mcp", "--listen", "127.0.0.1:8765",
    )  # fmt: skip

    assert status == 0
    assert entry("gemini", out, "harnessweaver-mcp") == {"httpUrl": "http://127.0.0.1:8765/mcp"}


@pytest.mark.parametrize(
    ("words", "message"),
    [
        (["--client", "cursor", "--upstream", "http://127.0.0.1:9/mcp"], "needs --listen"),
        (
            ["--client", "claude-desktop", "--upstream", "http://127.0.0.1:9/mcp", "--listen",
             "127.0.0.1:8765"],
            "stdio servers only",
        ),
        (["--client", "codex", "--name", "my server", "--", "srv"], "server name"),
    ],
)  # fmt: skip
def test_the_command_says_what_it_cannot_print(
    capsys: pytest.CaptureFixture[str], words: list[str], message: str
) -> None:
    status, out, err = cli(capsys, "--spec", "h.yaml", *words)

    assert (status, out) == (2, "")
    assert err.startswith("harnessweaver mcp: error: ") and message in err, err
