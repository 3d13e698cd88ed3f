"""The ``harnessweaver`` command line.

Each subcommand is a ``(configure, run)`` pair registered in :data:`SUBCOMMANDS`. This module
imports nothing heavy at its top: each subcommand imports what it needs when it is configured
or run (the conformance driver for ``conformance`` and ``fuzz``, the harness-spec machinery
for ``hooks`` and ``hook``), and :func:`main` configures only the subcommand it runs. That
keeps ``harnessweaver hook``, which a coding agent starts for every tool call, fast to start.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO, TypedDict

if TYPE_CHECKING:
    from harnessweaver.conformance.driver import Implementation
    from harnessweaver.conformance.expectations import CaseResult

__all__ = [
    "EXIT_ERROR",
    "EXIT_FAILED",
    "EXIT_OK",
    "SUBCOMMANDS",
    "add_spec_selection",
    "build_parser",
    "main",
]

_log = logging.getLogger(__name__)

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_ERROR = 2

Runner = Callable[[argparse.Namespace], int]


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0 seconds: {text!r}")
    return value


def _configure_conformance(parser: argparse.ArgumentParser) -> None:
    from harnessweaver.conformance.driver import IMPL_NAME_HELP

    parser.add_argument(
        "--cases",
        type=Path,
        metavar="DIR",
        help="a directory of case files, searched recursively (default: the corpus's cases/; "
        "with --cases the corpus's known-failure lists are not applied)",
    )
    parser.add_argument(
        "--impl",
        action="append",
        default=[],
        metavar="NAME[=COMMAND]",
        help="an implementation to run: a built-in name (see --list-impls) or NAME=COMMAND "
        f"for any testee (COMMAND is split like a shell would; NAME uses {IMPL_NAME_HELP}); "
        "repeatable (default: python-rust, python-pure, and ts and rust when built)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("results"),
        metavar="DIR",
        help="where to write <impl>.jsonl results (default: ./results)",
    )
    parser.add_argument(
        "--expectations",
        type=Path,
        metavar="DIR",
        help="a directory of <impl>.json known-failure lists (default: the corpus's "
        "expectations/, unless --cases is given)",
    )
    parser.add_argument(
        "--timeout",
        type=_positive_seconds,
        default=60.0,
        metavar="SECONDS",
        help="per-case time limit before the runner is killed and restarted (default: 60)",
    )
    parser.add_argument(
        "--require-identical",
        action="store_true",
        help="fail when a case passed everywhere but its observations differ byte for byte",
    )
    parser.add_argument(
        "--require-feature",
        action="append",
        default=[],
        metavar="TAG",
        help="fail when an implementation skips cases for not declaring the feature tag TAG "
        "(repeatable; e.g. cedar)",
    )
    parser.add_argument(
        "--list-impls",
        action="store_true",
        help="print the built-in implementations and their commands, then exit",
    )


def _list_impls(out: TextIO) -> int:
    """The built-in implementations that can run here, with their commands; then the others,
    with why not and how to get them (never a command naming a file that does not exist)."""
    from harnessweaver.conformance.driver import builtin_implementations, unavailable

    missing: list[str] = []
    for impl in builtin_implementations().values():
        why = unavailable(impl.name)
        if why is None:
            print(f"{impl.name}: {' '.join(impl.command)}", file=out)
        else:
            missing.append(f"  {impl.name}: {why}")
    if missing:
        print("not available here:", *missing, sep="\n", file=out)
    return EXIT_OK


def _not_run(chosen: Sequence[Implementation]) -> dict[str, str]:
    """The built-in implementations a default run left out, with why and how to get them."""
    from harnessweaver.conformance.driver import builtin_implementations, unavailable

    ran = {impl.name for impl in chosen}
    found = {name: unavailable(name) for name in builtin_implementations() if name not in ran}
    return {name: why for name, why in found.items() if why is not None}


def _progress(impl: Implementation, result: CaseResult) -> None:
    print(f"  {impl.name} {result.id}: {result.status}", file=sys.stderr, flush=True)


def _run_conformance(args: argparse.Namespace) -> int:
    from harnessweaver.conformance.cases import (
        CORPUS_ENV,
        CaseLoadError,
        CorpusNotFound,
        load_cases,
        select,
    )
    from harnessweaver.conformance.driver import (
        ImplementationError,
        RunConfig,
        resolve_implementations,
        run_conformance,
    )
    from harnessweaver.conformance.expectations import ExpectationsError
    from harnessweaver.conformance.protocol import ProtocolSchemaError, schema_checks_available
    from harnessweaver.conformance.report import make_console, print_report, write_results

    if args.list_impls:
        return _list_impls(sys.stdout)
    try:
        implementations = resolve_implementations(args.impl)
        selection = select(args.cases, args.expectations)
        cases = load_cases(selection.cases_dir)
    except (ImplementationError, CorpusNotFound, CaseLoadError) as exc:
        print(f"harnessweaver conformance: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    config = RunConfig(
        cases=tuple(cases),
        implementations=tuple(implementations),
        expectations_dir=selection.expectations_dir,
        corpus_version=selection.corpus_version,
        corpus=selection.corpus,
        timeout=args.timeout,
        require_identical=args.require_identical,
        required_features=tuple(args.require_feature),
    )
    names = ", ".join(impl.name for impl in implementations)
    print(f"running {len(cases)} case(s) on {names}", file=sys.stderr, flush=True)
    if not schema_checks_available():
        print(
            "harnessweaver conformance: jsonschema is not installed, so what the runners send "
            "is held to the protocol's framing only, not checked against its schema (pip install "
            "'harnessweaver[conformance]' checks it)",
            file=sys.stderr,
        )
    if selection.corpus is None and _no_corpus():
        print(
            "harnessweaver conformance: no corpus found, so what the runners send is not checked "
            f"against its protocol schema (set {CORPUS_ENV} to check it)",
            file=sys.stderr,
        )
    try:
        outcome = run_conformance(config, _progress if sys.stderr.isatty() else None)
    except (ExpectationsError, ProtocolSchemaError) as exc:
        print(f"harnessweaver conformance: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    written = write_results(outcome, args.out)
    console = make_console(sys.stdout)
    print_report(outcome, console, _not_run(implementations) if not args.impl else {})
    console.text(("results: " + ", ".join(str(path) for path in written), None))
    return EXIT_OK if outcome.passed else EXIT_FAILED


def add_spec_selection(parser: argparse.ArgumentParser) -> None:
    """``--task NAME``, ``--env NAME`` and ``--org-profiles DIR`` (repeatable), worded once for
    every subcommand that loads a spec with :func:`harnessweaver.spec.load` (``hooks``,
    ``hook``, ``hook doctor``, ``bench``), which takes them as ``task``, ``env`` and
    ``org_profiles``. Here, not in ``harnessweaver.spec``: a hook event with no hook point
    must not import the spec package (``test_hook_startup.py``)."""
    parser.add_argument("--task", metavar="NAME", help="the task whose guardrails to include")
    parser.add_argument("--env", metavar="NAME", help="the environment overlay to include")
    parser.add_argument(
        "--org-profiles",
        action="append",
        type=Path,
        metavar="DIR",
        help="a directory org:// profiles are looked up in; repeatable (default: the "
        "HARNESSWEAVER_ORG_PROFILES environment variable)",
    )


def _configure_hooks(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("spec", type=Path, metavar="SPEC", help="the harness spec (harness.yaml)")
    add_spec_selection(parser)
    parser.add_argument(
        "--tool",
        metavar="NAME",
        help="show the chain a call of this tool runs on tool.before and tool.after: without "
        "the middleware whose matcher does not match it (I22)",
    )
    parser.add_argument(
        "--model",
        metavar="NAME",
        help="show the chain a request to this model runs on model.before: without the "
        "middleware whose matcher does not match it (I22)",
    )
    parser.add_argument(
        "--format",
        choices=("text", "json", "mermaid"),
        default="text",
        help="text (default), json for tools, or a mermaid flowchart",
    )


def _run_hooks(args: argparse.Namespace) -> int:
    from harnessweaver.spec import SpecError, load
    from harnessweaver.spec.render import render

    try:
        harness = load(args.spec, task=args.task, env=args.env, org_profiles=args.org_profiles)
    except SpecError as exc:
        print(exc, file=sys.stderr)
        return EXIT_ERROR
    except Exception as exc:  # a loader bug: one line naming the type, never a traceback
        _log.error("harnessweaver hooks: loading %s failed: %s", args.spec, type(exc).__name__)
        print(
            f"harnessweaver hooks: error: loading {args.spec} failed: {type(exc).__name__} "
            "(a bug in harnessweaver: please report it)",
            file=sys.stderr,
        )
        return EXIT_ERROR
    sys.stdout.write(render(harness, args.format, tool=args.tool, model=args.model))
    return EXIT_OK


def _configure_fuzz(parser: argparse.ArgumentParser) -> None:
    from harnessweaver.conformance import fuzz

    fuzz.configure(parser)


def _run_fuzz(args: argparse.Namespace) -> int:
    from harnessweaver.conformance import fuzz

    return fuzz.run_command(args)


def _hook_target(parser: argparse.ArgumentParser) -> None:
    """The arguments naming the agent and the harness (``hook`` and ``hook doctor``)."""
    from harnessweaver.hookcmd.agents import AGENTS

    parser.add_argument(
        "--agent",
        required=True,
        choices=tuple(AGENTS),
        help="the coding agent whose hook protocol to speak",
    )
    parser.add_argument(
        "--spec", type=Path, required=True, metavar="SPEC", help="the harness spec (harness.yaml)"
    )
    add_spec_selection(parser)


def _configure_hook(parser: argparse.ArgumentParser) -> None:
    from harnessweaver.hookcmd.options import REWRITES

    _hook_target(parser)
    parser.add_argument(
        "--state",
        type=Path,
        metavar="FILE",
        help="the SQLite database of the guards' state per session (default: "
        "$HARNESSWEAVER_HOOK_STATE, else $XDG_STATE_HOME/harnessweaver/hook-state.sqlite3)",
    )
    parser.add_argument(
        "--rewrite",
        choices=REWRITES,
        help="how a rewritten tool call is answered: the agent's own permission settings "
        "judge it (settings, the default), it runs without the agent's approval prompt "
        "(allow), or a person must approve it (ask; refused where the agent cannot ask)",
    )
    parser.add_argument(
        "--state-ttl",
        type=_state_ttl,
        metavar="AGE",
        help="how long a session's state outlives its last event: seconds, or 15m, 12h, 30d "
        "(default: $HARNESSWEAVER_HOOK_STATE_TTL, else 30d)",
    )
    parser.add_argument(
        "--trace",
        type=Path,
        metavar="FILE",
        help="append each event's trace records to FILE (JSON Lines; run id = the agent's "
        "session id)",
    )
    parser.add_argument(
        "--print-config",
        action="store_true",
        help="check that the spec loads, print the agent's settings snippet that wires this "
        "command in, then exit (Codex: with the trust entries it needs, on stderr)",
    )
    parser.add_argument(
        "--project-dir",
        type=Path,
        metavar="DIR",
        help="with --print-config: the agent's project directory (default: the current one); "
        "a spec inside it is written relative to the agent's project variable",
    )
    parser.add_argument(
        "--fast",
        action="store_true",
        help="with --print-config or --install: wire the hook as this interpreter running "
        "harnessweaver/hookcmd/hook.py without site (the fastest start: about 2x a bare "
        "interpreter per warm event, against 5x for `harnessweaver hook`)",
    )
    parser.add_argument(
        "--install",
        action="store_true",
        help="Codex only: add the hooks to $CODEX_HOME/hooks.json and their trust to "
        "$CODEX_HOME/config.toml, keeping what both hold, then exit",
    )
    parser.add_argument(
        "--stop-helper",
        action=_StopHelper,
        help="stop this user's warm helpers (those of the current socket folder), then exit",
    )


def _state_ttl(text: str) -> int:
    from harnessweaver.hookcmd.lifetime import parse_ttl

    try:
        return parse_ttl(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


class _StopHelper(argparse.Action):
    """``--stop-helper``: acted on when read, so that ``--agent`` and ``--spec`` are not needed."""

    def __init__(self, option_strings: Sequence[str], dest: str, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        from harnessweaver.hookcmd.warm import stop

        print(f"harnessweaver hook: stopped {stop()} warm helper(s)")
        parser.exit()


def _run_hook(args: argparse.Namespace) -> int:
    if args.print_config:
        return _print_config(args)
    if args.install:
        return _codex_install(args)
    try:
        code = _hook(args)
    except BaseException as exc:  # the last resort: exit 1 or a traceback would fail open
        from harnessweaver.hookcmd.output import EXIT_BLOCK, refusal

        _log.error("harnessweaver hook failed: %s", type(exc).__name__)
        with contextlib.suppress(Exception):
            sys.stderr.write(refusal(f"{type(exc).__name__} (a bug: please report it)"))
        code = EXIT_BLOCK
    return _answered(code)


def _hook(args: argparse.Namespace) -> int:
    from harnessweaver.hookcmd.options import HookOptions
    from harnessweaver.hookcmd.warm import run

    options = HookOptions(
        agent=args.agent,
        spec=args.spec,
        task=args.task,
        env=args.env,
        state=args.state,
        state_ttl=args.state_ttl,
        org_profiles=None if args.org_profiles is None else tuple(args.org_profiles),
        rewrite=args.rewrite,
        trace=args.trace,
    )
    return run(options)


def _codex_trust_note(spec: str, args: argparse.Namespace) -> None:
    from harnessweaver.hookcmd.codex_setup import codex_home, trust_note
    from harnessweaver.hookcmd.config import command_line, snippet

    wired = snippet("codex", spec, args.task, args.env, **_wording(args))
    command = command_line("codex", spec, args.task, args.env, **_wording(args))
    print(trust_note(wired, command, codex_home()), file=sys.stderr)


def _codex_install(args: argparse.Namespace) -> int:
    from harnessweaver.hookcmd.codex_setup import CodexSetupError, codex_home, install
    from harnessweaver.hookcmd.config import command_line, snippet

    if args.agent != "codex":
        print("harnessweaver hook: --install writes Codex's configuration only", file=sys.stderr)
        return EXIT_ERROR
    if _unloadable(args):
        return EXIT_ERROR
    spec = str(args.spec.resolve())
    home = codex_home()
    try:
        trust = install(
            snippet("codex", spec, args.task, args.env, **_wording(args)),
            command_line("codex", spec, args.task, args.env, **_wording(args)),
            home,
        )
    except (CodexSetupError, OSError) as exc:
        detail = str(exc) if isinstance(exc, CodexSetupError) else type(exc).__name__
        print(f"harnessweaver hook --install: {detail}", file=sys.stderr)
        return EXIT_ERROR
    print(f"wired {len(trust)} trusted hooks into {home / 'hooks.json'}", file=sys.stderr)
    return EXIT_OK


class _Wording(TypedDict):
    rewrite: str | None
    trace: str | None
    fast: bool


def _wording(args: argparse.Namespace) -> _Wording:
    """The options that --print-config and --install write into the command they wire."""
    trace = None if args.trace is None else str(args.trace.resolve())
    return {"rewrite": args.rewrite, "trace": trace, "fast": args.fast}


def _answered(code: int) -> int:
    """``code`` once stdout is flushed: a stdout that fails now (the agent closed the pipe)
    blocks, and is pointed at the null device so the interpreter's own flush at exit cannot
    turn the status into 120."""
    try:
        sys.stdout.flush()
    except Exception:
        _to_devnull(sys.stdout)
        return EXIT_ERROR
    return code if code in (EXIT_OK, EXIT_ERROR) else EXIT_ERROR


def _to_devnull(stream: TextIO) -> None:
    with contextlib.suppress(Exception):
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, stream.fileno())
        os.close(null)


def _unloadable(args: argparse.Namespace) -> bool:
    """Whether the spec fails to load (said on stderr): its hooks would refuse every event."""
    from harnessweaver.spec import SpecError, load

    spec = args.spec.resolve()
    try:
        load(spec, task=args.task, env=args.env, org_profiles=args.org_profiles)
    except SpecError as exc:
        print(
            f"harnessweaver hook: error: {spec} does not load (wired in, the hooks would refuse "
            f"every event):\n{exc}",
            file=sys.stderr,
        )
        return True
    except Exception as exc:  # a loader bug: its type, never its message (R9)
        print(
            f"harnessweaver hook: error: loading {spec} failed: {type(exc).__name__} "
            "(a bug in harnessweaver: please report it)",
            file=sys.stderr,
        )
        return True
    return False


def _print_config(args: argparse.Namespace) -> int:
    """The settings snippet, for a spec that loads (the hooks of one that does not would
    refuse every event). A reader that stops early (``| head``) ends it quietly."""
    import json

    from harnessweaver.hookcmd.config import snippet

    if _unloadable(args):
        return EXIT_ERROR
    spec = args.spec.resolve()
    project = (args.project_dir or Path.cwd()).resolve()
    config = snippet(args.agent, str(spec), args.task, args.env, project=project, **_wording(args))
    try:
        sys.stdout.write(json.dumps(config, indent=2) + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        _to_devnull(sys.stdout)
        return EXIT_FAILED
    if args.agent == "codex":
        _codex_trust_note(str(spec), args)
    return EXIT_OK


def _configure_mcp(parser: argparse.ArgumentParser) -> None:
    from harnessweaver.mcp.command import configure

    configure(parser)


def _run_mcp(args: argparse.Namespace) -> int:
    from harnessweaver.mcp.command import run

    return run(args)


def _configure_approvals(parser: argparse.ArgumentParser) -> None:
    from harnessweaver.approvals.cli import configure

    configure(parser)


def _run_approvals(args: argparse.Namespace) -> int:
    from harnessweaver.approvals.cli import run

    return run(args)


def _configure_bench(parser: argparse.ArgumentParser) -> None:
    from harnessweaver.benchcmd.command import configure

    configure(parser)


def _run_bench(args: argparse.Namespace) -> int:
    from harnessweaver.benchcmd.command import run

    return run(args)


SUBCOMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None], Runner]] = {
    "conformance": (
        "run implementations over the conformance corpus and judge them",
        _configure_conformance,
        _run_conformance,
    ),
    "fuzz": (
        "compare implementations on generated cases (differential testing)",
        _configure_fuzz,
        _run_fuzz,
    ),
    "hooks": (
        "print every hook point's middleware, in run order, as a harness spec loads them",
        _configure_hooks,
        _run_hooks,
    ),
    "hook": (
        "act as a coding agent's hook command (Claude Code, Codex, Gemini CLI, Copilot CLI, "
        "Cursor, VS Code): one event "
        "on stdin through the harness's bus, the agent's decision on stdout",
        _configure_hook,
        _run_hook,
    ),
    "mcp": (
        "front an MCP server with a harness spec: every tools/call through the bus (stdio, or "
        "Streamable HTTP with --upstream and --listen)",
        _configure_mcp,
        _run_mcp,
    ),
    "approvals": (
        "list, show and decide the durable approvals of a harness spec (approve, deny, edit)",
        _configure_approvals,
        _run_approvals,
    ),
    "bench": (
        "time a harness spec's own emits at every hook point with middleware, against the "
        "same middleware awaited in a plain loop (the floor)",
        _configure_bench,
        _run_bench,
    ),
}


def _no_corpus() -> bool:
    from harnessweaver.conformance.cases import CorpusNotFound, find_corpus

    try:
        find_corpus()
    except CorpusNotFound:
        return True
    return False


class _Version(argparse.Action):
    """``--version``: worked out only when asked (it imports the package and finds the
    corpus), so that ``harnessweaver hook`` starts as fast as before."""

    def __init__(self, option_strings: Sequence[str], dest: str, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        print(version_text())
        parser.exit()


def version_text() -> str:
    """``harnessweaver 0.1.0 (core rust, corpus 1.4.0)``: the package, the core it selected
    and the corpus ``harnessweaver conformance`` would run (or that none was found)."""
    import harnessweaver as hw
    from harnessweaver.conformance.cases import CorpusNotFound, corpus_version, find_corpus

    try:
        corpus = f"corpus {corpus_version(find_corpus()) or 'without a VERSION'}"
    except CorpusNotFound:
        corpus = "no corpus found"
    return f"harnessweaver {hw.__version__} (core {hw.CORE}, {corpus})"


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser; with ``only``, only that subcommand's arguments are
    configured (the others are listed, and importing what they need is left undone)."""
    parser = argparse.ArgumentParser(
        prog="harnessweaver",
        description="harnessweaver: a hook bus for AI-agent harnesses.",
    )
    parser.add_argument(
        "--version",
        action=_Version,
        help="print the package version, the core it runs and the corpus version, then exit",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (summary, configure, run) in SUBCOMMANDS.items():
        sub = commands.add_parser(name, help=summary, description=summary)
        if only is None or only == name:
            configure(sub)
        sub.set_defaults(run=run)
    return parser


def _chosen(argv: Sequence[str]) -> str | None:
    """The subcommand ``argv`` runs, when its first word names one."""
    return argv[0] if argv and argv[0] in SUBCOMMANDS else None


def _doctor_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="harnessweaver hook doctor",
        description="check that a coding agent really runs `harnessweaver hook` on a spec: "
        "the spec loads, the agent's settings wire every event to it, the agent runs (trusts, "
        "enables) the hooks, and the wired command answers in a form the agent acts on",
    )
    _hook_target(parser)
    parser.add_argument(
        "--project",
        type=Path,
        default=Path.cwd(),
        metavar="DIR",
        help="the project the agent runs in (default: the current directory)",
    )
    parser.add_argument(
        "--no-run", action="store_true", help="do not run the wired command on a harmless call"
    )
    return parser


def _run_doctor(words: Sequence[str]) -> int:
    """``harnessweaver hook doctor``: exit status 1 when anything was found."""
    from harnessweaver.hookcmd.doctor import diagnose, render
    from harnessweaver.hookcmd.options import HookOptions

    args = _doctor_parser().parse_args(words)
    options = HookOptions(
        agent=args.agent,
        spec=args.spec.absolute(),
        task=args.task,
        env=args.env,
        org_profiles=None if args.org_profiles is None else tuple(args.org_profiles),
    )
    report = diagnose(options, args.project.resolve(), Path.home(), dry_run=not args.no_run)
    print(render(options, report))
    return EXIT_OK if report.ok else EXIT_FAILED


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``harnessweaver`` console script; returns the exit status."""
    words = sys.argv[1:] if argv is None else list(argv)
    if words[:2] == ["hook", "doctor"]:
        return _run_doctor(words[2:])
    args = build_parser(_chosen(words)).parse_args(words)
    run: Runner = args.run
    return run(args)


if __name__ == "__main__":
    raise SystemExit(main())
