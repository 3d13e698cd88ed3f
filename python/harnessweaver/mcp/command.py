"""``harnessweaver mcp``: an MCP server fronted by a harness spec.

``harnessweaver mcp --spec S -- CMD ARG...`` serves MCP on stdio and starts ``CMD`` as the
upstream stdio server; ``--upstream URL --listen HOST:PORT`` serves Streamable HTTP at
``http://HOST:PORT/mcp`` in front of the upstream's URL. A spec that does not load, an
upstream that cannot be started or reached: one line on stderr and exit status 2, before any
client is served (a proxy that cannot enforce never serves).
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Any

__all__ = ["EXIT_FAILED", "configure", "run"]

EXIT_FAILED = 2
CLIENTS = ("claude-code", "claude-desktop", "codex", "gemini", "cursor", "vscode")
_DEFAULT_NAME = "harnessweaver-mcp"

_log = logging.getLogger("harnessweaver.mcp")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--spec", type=Path, required=True, help="the harness spec (harness.yaml)")
    parser.add_argument("--task", help="the spec's task whose middleware run")
    parser.add_argument("--env", help="the spec's environment overlay")
    parser.add_argument(
        "--org-profiles", action="append", type=Path, metavar="DIR", help="org profile folder"
    )
    parser.add_argument(
        "--trace", type=Path, metavar="FILE", help="write the bus's trace as JSON Lines to FILE"
    )
    parser.add_argument(
        "--otel",
        choices=("console", "otlp"),
        help="export the trace as OpenTelemetry spans: to stderr (console), or with OTLP/HTTP "
        "as the OTEL_EXPORTER_OTLP_* variables say (otlp)",
    )
    parser.add_argument(
        "--state-file",
        type=Path,
        metavar="FILE",
        help="the SQLite file calls needing a person's approval are filed in when the client "
        "cannot ask one and the spec names no state: (default: the hook command's state file, "
        "where `harnessweaver approvals` looks)",
    )
    parser.add_argument(
        "--upstream", metavar="URL", help="the Streamable HTTP server to front (with --listen)"
    )
    parser.add_argument(
        "--listen", metavar="HOST:PORT", help="serve Streamable HTTP here (with --upstream)"
    )
    parser.add_argument(
        "--call-timeout",
        type=float,
        metavar="SECONDS",
        help="a tool call the upstream has not answered by then is refused (upstream_timeout)",
    )
    parser.add_argument(
        "--name", default=_DEFAULT_NAME, help="the server name the proxy gives its clients"
    )
    parser.add_argument(
        "--print-config",
        action="store_true",
        help="print the snippet that registers the proxied server with --client, then exit",
    )
    parser.add_argument("--client", choices=CLIENTS, help="the MCP client of --print-config")
    parser.add_argument(
        "server", nargs=argparse.REMAINDER, help="-- the upstream stdio server's command"
    )


def run(args: argparse.Namespace) -> int:
    """The proxy until its client goes (stdio) or it is stopped (HTTP)."""
    argv = list(args.server)
    if argv[:1] == ["--"]:
        argv = argv[1:]
    problem = _problem(args, argv)
    if problem is not None:
        print(f"harnessweaver mcp: error: {problem}", file=sys.stderr)
        return EXIT_FAILED
    if args.print_config:
        return _print_config(args, argv)
    harness = _load(args)
    if harness is None:
        return EXIT_FAILED
    import anyio

    try:
        from .serve import serve_http, serve_stdio
        from .telemetry import TelemetryError
    except ModuleNotFoundError as exc:
        print(f"harnessweaver mcp: error: {exc}", file=sys.stderr)
        return EXIT_FAILED

    try:
        if args.upstream is not None:
            host, port = _address(args.listen)
            anyio.run(serve_http, harness, args, host, port)
        else:
            anyio.run(serve_stdio, harness, args, argv)
    except KeyboardInterrupt:
        return 0
    except (_Unavailable, TelemetryError) as exc:
        print(f"harnessweaver mcp: error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    return 0


class _Unavailable(Exception):
    """The upstream cannot be started or reached."""


def _problem(args: argparse.Namespace, argv: list[str]) -> str | None:
    if args.print_config and args.client is None:
        return "--print-config needs --client (" + ", ".join(CLIENTS) + ")"
    if args.upstream is not None and argv:
        return "give either --upstream URL or '-- CMD ARG...', not both"
    if args.upstream is None and not argv:
        return "no upstream: give '-- CMD ARG...' (stdio) or --upstream URL --listen HOST:PORT"
    if (args.upstream is None) != (args.listen is None) and not args.print_config:
        return "--upstream and --listen go together (Streamable HTTP)"
    if args.call_timeout is not None and not args.call_timeout > 0:
        return f"--call-timeout must be a number of seconds above 0, got {args.call_timeout}"
    if args.listen is not None:
        try:
            _address(args.listen)
        except ValueError as exc:
            return str(exc)
    return None


def _address(listen: str) -> tuple[str, int]:
    host, sep, port = listen.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"--listen takes HOST:PORT (e.g. 127.0.0.1:8765), got {listen!r}")
    return host.strip("[]"), int(port)


def _load(args: argparse.Namespace) -> Any:
    from ..spec import SpecError, load

    try:
        profiles = None if args.org_profiles is None else tuple(args.org_profiles)
        return load(args.spec, task=args.task, env=args.env, org_profiles=profiles)
    except SpecError as exc:
        print(f"harnessweaver mcp: error: the harness spec does not load:\n{exc}", file=sys.stderr)
    except Exception as exc:  # a loader bug: its type, never its message (R9)
        kind = type(exc).__name__
        print(f"harnessweaver mcp: error: loading {args.spec} failed: {kind}", file=sys.stderr)
    return None


def _print_config(args: argparse.Namespace, argv: list[str]) -> int:
    from .clients import print_config, proxy_argv, proxy_program

    try:
        if args.upstream is not None:
            # The client reaches the proxy, which the user starts with the same options.
            if args.listen is None:
                raise ValueError("--print-config with --upstream needs --listen HOST:PORT")
            host, port = _address(args.listen)
            host = f"[{host}]" if ":" in host else host
            text = print_config(args.client, args.name, url=f"http://{host}:{port}/mcp")
        else:
            command = proxy_argv(
                args.spec,
                argv,
                task=args.task,
                env=args.env,
                trace=args.trace,
                org_profiles=args.org_profiles or (),
                call_timeout=args.call_timeout,
                otel=args.otel,
                name=None if args.name == _DEFAULT_NAME else args.name,
                state_file=args.state_file,
                program=proxy_program(),
            )
            text = print_config(args.client, args.name, command)
    except ValueError as exc:
        print(f"harnessweaver mcp: error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    sys.stdout.write(text)
    return 0
