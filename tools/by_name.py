"""Installing ``harnessweaver`` by name, as a user does: from a package index (the local one
of tools/local_index.py), with the extras and the wheel pip picks for the CPython, and the
kit run from what that install alone gives. Used by tools/installed.py ``--index``.

- :func:`install_by_name`: ``pip install harnessweaver==V`` (``[EXTRA]``) with the index added
  to the one pip is configured with; pip's install report must show the artifact under test,
  from the local index (not a file of the same name from elsewhere). An sdist is asked for
  with ``--no-binary harnessweaver``, as a user who wants to build it does.
- :func:`plain_conformance`: ``harnessweaver conformance`` right after that install, with only
  the package's own dependencies (no jsonschema, no cedarpy): it must pass, say that messages
  are held to the framing only, and run the implementations expected, the TypeScript one from
  an npm project that installed the npm package and the Rust one from ``cargo install``.
- :func:`check_extra`: ``harnessweaver[EXTRA]`` resolves, ``pip check`` holds, and the extra's
  adapter imports.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

__all__ = [
    "ByName",
    "Plain",
    "by_name_arguments",
    "by_name_of",
    "check_extra",
    "install_by_name",
    "plain_conformance",
]

EXTRA_IMPORTS = {
    "langchain": ("langchain", "langgraph", "harnessweaver.adapters.langchain"),
    "openai-agents": ("agents", "harnessweaver.adapters.openai_agents"),
    "mcp": ("mcp", "harnessweaver.mcp"),
}
"""What each extra checked here must make importable: its packages and our module using them."""


@dataclass(frozen=True, slots=True)
class Plain:
    """The run of the kit right after the install: from ``cwd`` (an npm project, for ``ts``),
    with ``path`` (where ``cargo install`` put the Rust testee) first on ``PATH``."""

    impls: tuple[str, ...]
    cwd: Path | None
    path: Path | None


@dataclass(frozen=True, slots=True)
class ByName:
    index: str
    extra: str | None = None
    plain: Plain | None = None


def by_name_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--index",
        metavar="URL",
        help="install harnessweaver by name from this PEP 503 repository (its .../simple/ URL), "
        "added to pip's configured index; pip must choose the artifact given",
    )
    parser.add_argument(
        "--extra", help="with --index: install harnessweaver[EXTRA] and check it imports; no suite"
    )
    parser.add_argument(
        "--plain-impls",
        metavar="A,B",
        help="with --index: right after the install, harnessweaver conformance with the package's "
        "own dependencies alone must pass and run exactly these implementations",
    )
    parser.add_argument("--npm-project", type=Path, help="where --plain-impls runs (for ts)")
    parser.add_argument("--testee-path", type=Path, help="put first on PATH for --plain-impls")


def by_name_of(args: argparse.Namespace) -> ByName | None:
    if args.index is None:
        if args.extra or args.plain_impls:
            raise SystemExit("--extra and --plain-impls need --index")
        return None
    plain = None
    if args.plain_impls:
        impls = tuple(name for name in args.plain_impls.split(",") if name)
        plain = Plain(impls, args.npm_project, args.testee_path)
    return ByName(args.index, args.extra, plain)


def _log(message: str) -> None:
    print(f"installed > {message}", flush=True)


def _run(command: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    _log(" ".join(command))
    done = subprocess.run(command, env=env, cwd=cwd, text=True, capture_output=True)
    if done.returncode != 0:
        print(done.stdout, done.stderr, sep="\n")
        raise SystemExit(f"failed ({done.returncode}): {' '.join(command)}")
    return done


def version_of(artifact: Path) -> str:
    """``0.1.0`` of ``harnessweaver-0.1.0-cp311-....whl`` or ``harnessweaver-0.1.0.tar.gz``."""
    return artifact.name.removesuffix(".tar.gz").split("-")[1]


def install_by_name(
    pip: list[str], artifact: Any, by_name: ByName, env: dict[str, str], work: Path
) -> None:
    """``pip install harnessweaver[EXTRA]==V`` from the index; the file pip chose must be
    ``artifact.path``, served by that index."""
    wanted = "harnessweaver" + (f"[{by_name.extra}]" if by_name.extra else "")
    report = work / "install-report.json"
    command = [*pip, "install", "--quiet", "--extra-index-url", by_name.index]
    if artifact.kind == "sdist":
        command += ["--no-binary", "harnessweaver"]
    _run([*command, "--report", str(report), f"{wanted}=={version_of(artifact.path)}"], env, work)
    installed = json.loads(report.read_text(encoding="utf-8"))["install"]
    ours = [item for item in installed if item["metadata"]["name"] == "harnessweaver"]
    url = ours[0]["download_info"]["url"] if ours else ""
    host = urlparse(by_name.index).netloc
    if urlparse(url).netloc != host or Path(urlparse(url).path).name != artifact.path.name:
        raise SystemExit(
            f"pip chose {url or 'nothing'} for {wanted}, not {artifact.path.name} "
            f"from the index at {host}"
        )
    _log(f"pip chose {artifact.path.name} for `{wanted}` from the local index")


def plain_conformance(bin_dir: Path, plain: Plain, env: dict[str, str], work: Path) -> None:
    """The kit from the install alone: passes, says what it does not check without jsonschema,
    runs exactly ``plain.impls``."""
    run_env = {k: v for k, v in env.items() if k not in ("HARNESSWEAVER_CORPUS",)}
    run_env = {k: v for k, v in run_env.items() if not k.startswith("HARNESSWEAVER_")}
    if plain.path is not None:
        run_env["PATH"] = os.pathsep.join([str(plain.path), run_env["PATH"]])
    harnessweaver = str(bin_dir / ("harnessweaver.exe" if os.name == "nt" else "harnessweaver"))
    command = [harnessweaver, "conformance", "--require-identical", "--out", str(work / "plain")]
    done = _run(command, run_env, plain.cwd or work)
    lines = done.stdout.splitlines()
    ran = [line for line in lines if line.startswith("implementations run: ")]
    expected = f"implementations run: {', '.join(plain.impls)}"
    problems = []
    if ran != [expected]:
        problems.append(f"expected {expected!r}, the report says {ran}")
    if "CONFORMANCE PASSED" not in lines:
        problems.append("no CONFORMANCE PASSED")
    if "jsonschema is not installed" not in done.stderr:
        problems.append("no line saying the messages are not checked against the schema")
    if problems:
        print(done.stdout[-4000:], done.stderr[-2000:], sep="\n")
        raise SystemExit("the kit from the install alone: " + "; ".join(problems))
    tail = lines[lines.index(expected) :]
    print("\n".join(tail), flush=True)
    _log(f"the kit from the install alone passed: {', '.join(plain.impls)}")


def check_extra(vpython: str, pip: list[str], extra: str, env: dict[str, str], work: Path) -> None:
    """``pip check`` holds and the extra's packages and adapter import."""
    _run([*pip, "check"], env, work)
    modules = EXTRA_IMPORTS.get(extra)
    if modules is None:
        raise SystemExit(f"--extra {extra}: no imports known to check (EXTRA_IMPORTS)")
    code = "import importlib, sys\nfor name in sys.argv[1:]:\n    importlib.import_module(name)"
    _run([vpython, "-c", code, *modules], env, work)
    _log(f"harnessweaver[{extra}]: {', '.join(modules)} import")
