"""``harnessweaver mcp --print-config``: the snippet that registers the proxied server with an
MCP client, in that client's own configuration format.

A client starts a stdio server from a ``command`` and its ``args``; it reaches an HTTP server
at a ``url``. The proxy is registered the same way: its own command line
(:func:`proxy_argv`: ``harnessweaver mcp --spec ABS_SPEC [--task T] -- <server command>``)
where the client would have started the server, or the URL the proxy listens on
(``harnessweaver mcp ... --upstream URL --listen 127.0.0.1:PORT``, then ``url`` below).

Where each format comes from (the client's documentation, checked against the pinned agents
of e2e/agents where one is there):

- ``claude-code``: a project's ``.mcp.json`` (also what ``claude --mcp-config FILE`` reads):
  ``{"mcpServers": {NAME: {"type": "stdio", "command", "args"}}}`` or ``{"type": "http",
  "url"}`` (Claude Code docs, "MCP": project scope). The model sees the tools as
  ``mcp__NAME__TOOL``; e2e/agents/test_mcp_proxy.py runs Claude Code 2.1.332 on exactly this.
- ``claude-desktop``: ``claude_desktop_config.json``, ``{"mcpServers": {NAME: {"command",
  "args"}}}`` (MCP docs, "Connect to local MCP servers"). The file holds local (stdio)
  servers only: a remote one is added as a connector in the app's settings.
- ``codex``: ``~/.codex/config.toml`` (or a trusted project's ``.codex/config.toml``),
  ``[mcp_servers.NAME]`` with ``command`` and ``args``, or ``url`` for Streamable HTTP (Codex
  docs, "Model Context Protocol"; ``codex mcp add NAME -- CMD...`` writes the same table),
  and ``required = true`` (see :func:`_codex`). The model sees the tools as the namespace
  ``mcp__NAME``; e2e/agents/test_mcp_proxy.py runs Codex CLI 0.169.1 on exactly this.
- ``gemini``: ``~/.gemini/settings.json`` or a project's ``.gemini/settings.json``,
  ``{"mcpServers": {NAME: {"command", "args"}}}``, or ``httpUrl`` for Streamable HTTP
  (``url`` there means the older SSE transport) (Gemini CLI docs, "MCP servers"). The model
  sees the tools as ``mcp_NAME_TOOL``; e2e/agents/test_mcp_proxy.py runs Gemini CLI 0.61.0 on
  exactly this.
- ``cursor``: ``~/.cursor/mcp.json`` or a project's ``.cursor/mcp.json``, ``{"mcpServers":
  {NAME: {"command", "args"}}}`` or ``{"url"}`` (Cursor docs, "Model Context Protocol").
- ``vscode``: a workspace's ``.vscode/mcp.json``, ``{"servers": {NAME: {"type": "stdio",
  "command", "args"}}}`` or ``{"type": "http", "url"}`` (VS Code docs, "MCP configuration
  reference": ``servers``, not ``mcpServers``).

Every path is written as given: :func:`proxy_argv` makes the spec's absolute, since a client
starts its servers from a working folder of its own choosing. Arguments are data in every
format (a JSON array, a TOML array), never shell text, so spaces and quotes need no quoting.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["CLIENTS", "print_config", "proxy_argv", "proxy_program"]

CLIENTS: tuple[str, ...] = (
    "claude-code",
    "claude-desktop",
    "codex",
    "gemini",
    "cursor",
    "vscode",
)
"""The clients ``--print-config --client`` knows."""

_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""A server name every client takes as it is: Codex refuses others in ``codex mcp add``, and
Claude Code builds the model's tool names ``mcp__NAME__TOOL`` from it, which the model APIs
restrict to these characters."""


def proxy_argv(
    spec: str | Path,
    server: Sequence[str] = (),
    *,
    upstream: str | None = None,
    listen: str | None = None,
    task: str | None = None,
    env: str | None = None,
    trace: str | Path | None = None,
    org_profiles: Sequence[str | Path] = (),
    call_timeout: float | None = None,
    otel: str | None = None,
    name: str | None = None,
    state_file: str | Path | None = None,
    program: str = "harnessweaver",
) -> list[str]:
    """The proxy's command line: ``PROGRAM mcp --spec ABS_SPEC [options] -- SERVER...`` for a
    stdio upstream, or ``... --upstream URL --listen ADDRESS`` for an HTTP one. Paths (spec,
    trace, org profile folders, the state file) are made absolute against this process's
    working folder."""
    if bool(server) == (upstream is not None):
        raise ValueError("give either the server's command or --upstream URL, not both")
    argv = [program, "mcp", "--spec", str(Path(spec).absolute())]
    options = (("--task", task), ("--env", env), ("--otel", otel), ("--name", name))
    for option, value in options:
        if value is not None:
            argv += [option, value]
    if trace is not None:
        argv += ["--trace", str(Path(trace).absolute())]
    for folder in org_profiles:
        argv += ["--org-profiles", str(Path(folder).absolute())]
    if call_timeout is not None:
        argv += ["--call-timeout", repr(call_timeout)]
    if state_file is not None:
        argv += ["--state-file", str(Path(state_file).absolute())]
    if upstream is not None:
        argv += ["--upstream", upstream]
        if listen is not None:
            argv += ["--listen", listen]
        return argv
    return [*argv, "--", *server]


def proxy_program() -> str:
    """The ``harnessweaver`` command as the snippet names it: the absolute path of the one on
    ``PATH`` (desktop clients start servers without the login shell's ``PATH``), or the bare
    name when there is none."""
    found = shutil.which("harnessweaver")
    return str(Path(found).absolute()) if found else "harnessweaver"


def print_config(
    client: str, name: str, argv: Sequence[str] | None = None, *, url: str | None = None
) -> str:
    """The text that registers the server ``name`` with ``client``: started as ``argv``
    (``argv[0]`` the command, the rest its arguments, exactly), or reached at ``url``.

    JSON for every client but Codex (TOML); raises ``ValueError`` for an unknown client, a
    name a client would not take, both or neither of ``argv`` and ``url``, text no
    configuration file can hold (a lone surrogate), and a URL for Claude Desktop."""
    if client not in CLIENTS:
        raise ValueError(f"unknown client {client!r}: one of {', '.join(CLIENTS)}")
    if _NAME.fullmatch(name) is None:
        raise ValueError(f"server name {name!r}: letters, digits, '_' and '-' only (1-64)")
    if (argv is None) == (url is None):
        raise ValueError("give either the command line (argv) or url, not both")
    words = [] if argv is None else [str(word) for word in argv]
    if argv is not None and not words:
        raise ValueError("the command line is empty")
    for text in [*words, url or ""]:
        _check_text(text)
    if client == "codex":
        return _codex(name, words, url)
    entry: dict[str, Any]
    if url is not None:
        entry = _url_entry(client, url)
    else:
        entry = {"command": words[0], "args": words[1:]}
        if client in ("claude-code", "vscode"):
            entry = {"type": "stdio", **entry}
    key = "servers" if client == "vscode" else "mcpServers"
    return json.dumps({key: {name: entry}}, indent=2, ensure_ascii=False) + "\n"


def _url_entry(client: str, url: str) -> dict[str, Any]:
    if client == "claude-desktop":
        raise ValueError(
            "Claude Desktop's configuration file holds stdio servers only: front a "
            "stdio server (-- CMD ARG...) for it"
        )
    if client == "gemini":
        return {"httpUrl": url}  # Gemini's `url` is the SSE transport
    if client == "cursor":
        return {"url": url}
    return {"type": "http", "url": url}  # claude-code, vscode


def _check_text(text: str) -> None:
    # Neither JSON nor TOML written as UTF-8 can hold a lone surrogate (what Python makes of a
    # path's bytes that are not UTF-8): refuse rather than print a file the client can't read.
    if any("\ud800" <= char <= "\udfff" for char in text):
        raise ValueError(f"{text!r} is not valid Unicode text: no configuration file holds it")


def _codex(name: str, words: list[str], url: str | None) -> str:
    lines = [f"[mcp_servers.{name}]"]
    if url is not None:
        lines.append(f"url = {_toml_string(url)}")
    else:
        lines.append(f"command = {_toml_string(words[0])}")
        lines.append(f"args = [{', '.join(_toml_string(word) for word in words[1:])}]")
    # Codex then waits for the server before the first model request, and refuses to start
    # when it cannot start (the proxy exits 2 on a spec that does not load). Without it,
    # `codex exec` 0.169.1 asked the model before the proxy was up, and the model's first
    # call of the server's tools failed as "unsupported call".
    lines.append("required = true")
    return "\n".join(lines) + "\n"


_TOML_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f"}
_TOML_ESCAPES["\r"] = "\\r"


def _toml_string(text: str) -> str:
    """A TOML basic string: quotes, backslashes and control characters escaped (TOML 1.0
    allows no raw control character but tab there, and no raw DEL)."""
    out = []
    for char in text:
        if char in _TOML_ESCAPES:
            out.append(_TOML_ESCAPES[char])
        elif char < " " or char == "\x7f":
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'
