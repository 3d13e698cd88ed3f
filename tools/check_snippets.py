"""Every fenced block of ``README.md`` and ``docs/**/*.md``, checked as what it claims to be.

A reader copies these first, so each one is checked by the tool that would reject it:

- ``python``: ``mypy --strict`` (each block a module of its own), then run (120 s at most) in a
  scratch copy of ``examples/refunds``, the pages' running example: its ``app`` plugin, its
  ``harness.yaml`` and ``org/`` profiles (``HARNESSWEAVER_ORG_PROFILES``). When the page shows
  a harness spec before the block, the last one is that folder's ``harness.yaml`` (a page that
  says "a harness.yaml next to your code", then loads it).
- ``ts``, ``typescript``: ``tsc`` with ``ts-runner``'s strict settings against the built package
  (``from "harnessweaver"`` resolves to ``ts-runner/dist``: ``npm run build`` first).
- ``yaml``: a harness spec (top-level keys all the spec's) is loaded with
  ``harnessweaver.spec.load``, bare and once per task and per env it declares, in that scratch
  copy; a block using ``acme.*`` without ``plugins:`` gets the example's ``app.harness_plugin``
  (the running example's), each ``${NAME}`` missing from the environment a placeholder, and
  state is opened in memory. A profile file (``profile:``) is loaded through a spec listing it;
  other YAML is parsed.
- ``json``: parsed, as one document or one per line (a JSONL excerpt of a trace); ``toml``: parsed.
- ``sh``, ``bash``: ``bash -n`` (running them would install, start servers, use the network).
- ``cedar``: parsed as a Cedar policy set by cedarpy (the engine the Python built-in uses);
  ``cedarschema``: parsed as a Cedar schema.
- anything else is shown as-is: ``console`` (a session with its output), ``text``, ``mermaid``...

Running Python blocks is the default because they are short, offline programs; a block that
can only type-check here says why, on the line right before its fence:

    <!-- snippet: no-run: needs a Redis server -->

A block that is only an illustration (a fragment quoting names from the text around it, a
signature list, an excerpt with elisions) is not checked at all, and must say why:

    <!-- snippet: illustration: a fragment: `harness` and `event` are the page's -->

A block a harness spec on the page names as a file (a Cedar policy set, its schema, its
entities) says where it goes, and is written there in the scratch copy before any spec is
loaded, besides being checked as its language:

    <!-- snippet: file: policies/tools.cedar -->

``--list`` prints every marked block with its reason. ``nox -s docs`` runs this; exit status 1
when any block fails, each failure naming the page and line.

    python tools/check_snippets.py [--list] [PAGE ...]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

__all__ = [
    "MARKERS",
    "Problem",
    "Snippet",
    "check",
    "main",
    "pages",
    "snippets",
]

ROOT = Path(__file__).resolve().parents[1]
TS = ROOT / "ts-runner"
EXAMPLE = ROOT / "examples" / "refunds"
"""The folder Python and YAML blocks run in (a scratch copy): the docs' running example."""
MARKERS = ("illustration", "no-run", "file")
RUN_TIMEOUT = 120.0
"""Seconds a Python block may run: a hang is a failure, not a stuck CI."""

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<lang>[\w+-]*)[^\n]*$")
_MARKER = re.compile(r"^\s*<!--\s*snippet:\s*(?P<kind>[\w-]+)\s*(?::\s*(?P<reason>.*?))?\s*-->\s*$")
_SPEC_KEYS = frozenset(
    (
        "approvals",
        "contracts",
        "deadlines",
        "envs",
        "identity",
        "middleware",
        "mode",
        "plugins",
        "profiles",
        "state",
        "tasks",
    )
)
"""The top-level keys of a harness spec (the schema's ``spec``): a mapping of only these is one."""
_CHECKED_TOGETHER = frozenset(("python", "py", "ts", "typescript"))
_SHOWN = frozenset(("", "console", "text", "mermaid", "sql", "diff", "shell-session", "output"))


@dataclass(frozen=True)
class Snippet:
    """One fenced block: where it is, its language and text, and its marker if it has one."""

    page: str
    line: int
    """The line of the opening fence (1-based)."""
    lang: str
    code: str
    marker: str | None = None
    reason: str | None = None

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


@dataclass(frozen=True)
class Problem:
    """A block that failed its check: where, and what the tool said."""

    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


def pages(root: Path = ROOT) -> list[Path]:
    """README.md and every page under docs/."""
    return [root / "README.md", *sorted((root / "docs").rglob("*.md"))]


def snippets(text: str, page: str) -> tuple[list[Snippet], list[Problem]]:
    """The fenced blocks of ``text`` (indented ones, in lists, included), and the problems of
    their markers: an unknown kind, a missing reason, or a marker with no fence after it."""
    lines = text.split("\n")
    found: list[Snippet] = []
    problems: list[Problem] = []
    index = 0
    while index < len(lines):
        marker = _MARKER.match(lines[index])
        if marker is None and lines[index].lstrip().startswith("<!-- snippet:"):
            problems.append(
                Problem(
                    f"{page}:{index + 1}",
                    "a snippet marker must be alone on its line: <!-- snippet: KIND: REASON -->",
                )
            )
        opening = _FENCE.match(lines[index])
        if marker is not None:
            kind, reason = marker["kind"], (marker["reason"] or "").strip()
            following = _FENCE.match(lines[index + 1]) if index + 1 < len(lines) else None
            if kind not in MARKERS:
                problems.append(
                    Problem(
                        f"{page}:{index + 1}",
                        f"unknown snippet marker {kind!r}: one of {', '.join(MARKERS)}",
                    )
                )
            elif not reason:
                problems.append(
                    Problem(
                        f"{page}:{index + 1}",
                        f"snippet marker {kind!r} needs a reason: <!-- snippet: {kind}: WHY -->",
                    )
                )
            if following is None:
                problems.append(
                    Problem(
                        f"{page}:{index + 1}",
                        "a snippet marker must be right before a fenced block",
                    )
                )
            index += 1
            continue
        if opening is None:
            index += 1
            continue
        indent, fence, lang = opening["indent"], opening["fence"], opening["lang"].lower()
        closing = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        end = index + 1
        while end < len(lines) and not closing.match(lines[end]):
            end += 1
        body = [
            line[len(indent) :] if line.startswith(indent) else line.lstrip()
            for line in lines[index + 1 : end]
        ]
        previous = _MARKER.match(lines[index - 1]) if index > 0 else None
        kind = previous["kind"] if previous is not None and previous["kind"] in MARKERS else None
        reason = (previous["reason"] or "").strip() if previous is not None else None
        found.append(Snippet(page, index + 1, lang, "\n".join(body) + "\n", kind, reason or None))
        index = end + 1
    return found, problems


def _scratch_example(scratch: Path) -> Path:
    """A copy of examples/refunds to run blocks in (they may write files)."""
    work = scratch / "work"
    if not work.exists():
        shutil.copytree(EXAMPLE, work, ignore=shutil.ignore_patterns("__pycache__"))
    return work


def _installed() -> bool:
    """Whether this Python imports a ``harnessweaver`` of its own (a wheel under test), not the
    clone's source: then the blocks run against that one."""
    found = importlib.util.find_spec("harnessweaver")
    origin = Path(found.origin).resolve() if found is not None and found.origin else None
    return origin is not None and not origin.is_relative_to(ROOT)


def _environment(work: Path) -> dict[str, str]:
    python = "" if _installed() else str(ROOT / "python")
    paths = [python, str(work), os.environ.get("PYTHONPATH", "")]
    # org://acme/baseline, which the example's harness.yaml lists, is in its org/ folder
    org = {"HARNESSWEAVER_ORG_PROFILES": str(work / "org")}
    return {**os.environ, **org, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}


_MYPY_LINE = re.compile(r"^(?:.*[/\\])?snippet_(\d+)\.py:(\d+): (error|note): (.*)$")


def check_python(
    blocks: Sequence[Snippet], scratch: Path, specs: dict[Snippet, str] | None = None
) -> list[Problem]:
    """mypy --strict over every block at once (each its own module), then each block that is
    not ``no-run`` run as a program; where ``specs`` gives a block a harness spec (its page's
    last before it), that spec is the ``harness.yaml`` of the folder it runs in."""
    if not blocks:
        return []
    folder = scratch / "python"
    folder.mkdir()
    for number, block in enumerate(blocks):
        (folder / f"snippet_{number}.py").write_text(block.code, encoding="utf-8")
    problems: list[Problem] = []
    failed: set[int] = set()
    remaining = set(range(len(blocks)))
    while remaining:  # a syntax error stops mypy for all: such a block is reported, then left out
        found, syntax = _mypy(blocks, folder, remaining)
        for number, problem in found:
            failed.add(number)
            if problem not in problems:  # a later round repeats the errors of the others
                problems.append(problem)
        if not syntax:
            break
        remaining -= syntax
    for number, block in enumerate(blocks):
        if block.marker == "no-run" or number in failed:
            continue
        work = scratch / f"run_{number}"  # its own copy: a block may write files
        shutil.copytree(EXAMPLE, work, ignore=shutil.ignore_patterns("__pycache__"))
        if specs and block in specs:
            (work / "harness.yaml").write_text(specs[block], encoding="utf-8")
        problems += _run_python(block, folder / f"snippet_{number}.py", work)
    return problems


def _is_spec(block: Snippet) -> bool:
    """A YAML block that is a whole harness spec (its top-level keys all the spec's)."""
    if block.lang not in ("yaml", "yml"):
        return False
    try:
        document = yaml.safe_load(block.code)
    except yaml.YAMLError:
        return False
    return isinstance(document, dict) and bool(document) and set(document) <= _SPEC_KEYS


def page_specs(blocks: Sequence[Snippet]) -> dict[Snippet, str]:
    """Each Python block's harness spec: the last one its page shows before it (a page that
    says "a harness.yaml next to your code" and then runs ``hw.load("harness.yaml")``)."""
    found: dict[Snippet, str] = {}
    last: dict[str, str] = {}
    for block in sorted(blocks, key=lambda b: (b.page, b.line)):
        if _is_spec(block) and block.marker != "illustration":
            last[block.page] = block.code
        elif block.lang in ("python", "py") and block.page in last:
            found[block] = last[block.page]
    return found


def _mypy(
    blocks: Sequence[Snippet], folder: Path, numbers: set[int]
) -> tuple[list[tuple[int, Problem]], set[int]]:
    """mypy --strict over the blocks ``numbers``: each error by block, and the blocks with a
    syntax error (which stops mypy before it checks the others)."""
    command = [
        sys.executable,
        "-m",
        "mypy",
        "--strict",
        "--config-file",
        str(ROOT / "pyproject.toml"),
    ]
    command += ["--no-incremental", "--python-version", "3.11"]
    command += [f"snippet_{number}.py" for number in sorted(numbers)]
    env = {
        **_environment(folder),
        "MYPYPATH": os.pathsep.join((str(ROOT / "python"), str(EXAMPLE))),
    }
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True, env=env, check=False)
    found: list[tuple[int, Problem]] = []
    syntax: set[int] = set()
    for line in done.stdout.splitlines():
        match = _MYPY_LINE.match(line)
        if match is None or match[3] != "error":
            continue
        number, block = int(match[1]), blocks[int(match[1])]
        found.append(
            (number, Problem(f"{block.page}:{block.line + int(match[2])}", f"mypy: {match[4]}"))
        )
        if match[4].endswith("[syntax]"):
            syntax.add(number)
    if done.returncode != 0 and not found:  # mypy failed without a word on any block
        found.append((-1, Problem("mypy", (done.stdout + done.stderr).strip()[-2000:])))
    return found, syntax


def _run_python(block: Snippet, path: Path, work: Path) -> list[Problem]:
    try:
        done = subprocess.run(
            [sys.executable, str(path)],
            cwd=work,
            capture_output=True,
            text=True,
            env=_environment(work),
            timeout=RUN_TIMEOUT,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return [Problem(block.where, f"still running after {RUN_TIMEOUT:.0f}s")]
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-6:]
        return [Problem(block.where, f"exited {done.returncode}:\n    " + "\n    ".join(tail))]
    return []


_TSC_LINE = re.compile(r"^(?:.*[/\\])?snippet_(\d+)\.ts\((\d+),\d+\): error (TS\d+: .*)$")
_TSCONFIG = {
    "extends": "../tsconfig.json",
    "compilerOptions": {
        "noEmit": True,
        "rootDir": ".",
        # the frameworks' own declarations do not compile under the package's settings
        # (tsconfig.adapters.json says why); the snippets themselves are checked strictly
        "skipLibCheck": True,
        "noUnusedLocals": False,
        "noUnusedParameters": False,
        "declaration": False,
        "declarationMap": False,
        "sourceMap": False,
    },
    "include": ["*.ts"],
    "exclude": [],
}


def check_typescript(blocks: Sequence[Snippet]) -> list[Problem]:
    """tsc over every block at once, each a module in a folder inside ts-runner: there
    ``harnessweaver`` is the package itself (its exports, so the built ``dist/``), and the
    frameworks resolve from its node_modules."""
    if not blocks:
        return []
    tsc = TS / "node_modules" / ".bin" / "tsc"
    if not (TS / "dist" / "index.d.ts").exists() or not tsc.exists():
        return [
            Problem(
                "ts-runner",
                "TypeScript blocks need the built package: cd ts-runner && npm ci && npm run build",
            )
        ]
    folder = Path(tempfile.mkdtemp(prefix=".snippets-", dir=TS))
    try:
        (folder / "tsconfig.json").write_text(json.dumps(_TSCONFIG, indent=2), encoding="utf-8")
        for number, block in enumerate(blocks):
            # `export {}` makes each a module: names of one never clash with another's
            (folder / f"snippet_{number}.ts").write_text(
                block.code + "export {};\n", encoding="utf-8"
            )
        command = [str(tsc), "-p", str(folder / "tsconfig.json"), "--pretty", "false"]
        done = subprocess.run(command, cwd=TS, capture_output=True, text=True, check=False)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    problems: list[Problem] = []
    for line in done.stdout.splitlines():
        match = _TSC_LINE.match(line)
        if match is not None:
            block = blocks[int(match[1])]
            problems.append(
                Problem(f"{block.page}:{block.line + int(match[2])}", f"tsc: {match[3]}")
            )
    if done.returncode != 0 and not problems:
        problems.append(Problem("tsc", (done.stdout + done.stderr).strip()[-2000:]))
    return problems


_LOAD = """
import json, sys
from pathlib import Path
import harnessweaver as hw
from harnessweaver.state import MemoryStore

path, runs = Path(sys.argv[1]), json.loads(sys.argv[2])
for task, env in runs:
    harness = hw.load(path, task=task, env=env, org_profiles=["org"],
                      open_state=lambda config: MemoryStore())
"""
"""Loads a spec bare and with each task and env; state is kept in memory (a block naming a
Redis URL is checked, not connected to)."""


def _placeholders(code: str) -> dict[str, str]:
    """A value for each ``${NAME}`` the block reads that this process does not have: a URL
    where the name says so (the loader checks a URL's scheme), else a word."""
    names = set(re.findall(r"\$\{(\w+)\}", code)) - set(os.environ)
    values = {}
    for name in names:
        if name.endswith("URL"):
            scheme = "postgresql" if re.search(r"backend:\s*postgres", code) else "redis"
            values[name] = f"{scheme}://127.0.0.1:1/0"
        else:
            values[name] = "snippet-placeholder"
    return values


def check_yaml(block: Snippet, scratch: Path) -> list[Problem]:
    """A harness spec or profile loaded by the real loader; other YAML parsed."""
    try:
        document = yaml.safe_load(block.code)
    except yaml.YAMLError as exc:
        return [Problem(block.where, f"YAML: {exc}")]
    if not isinstance(document, dict):
        return []
    work = _scratch_example(scratch)
    spec = work / f"snippet_{block.line}.yaml"
    if "profile" in document:  # a profile file, loaded as a spec's profile
        (work / f"profile_{block.line}.yaml").write_text(block.code, encoding="utf-8")
        spec.write_text(f"profiles: [./profile_{block.line}.yaml]\n", encoding="utf-8")
        runs: list[tuple[str | None, str | None]] = [(None, None)]
    elif set(document) <= _SPEC_KEYS:
        code = block.code
        if "plugins" not in document and re.search(r"\buse:\s*acme\.", code):
            code = f"plugins: {{local: [app.harness_plugin]}}\n{code}"  # the running example's
        spec.write_text(code, encoding="utf-8")
        runs = [(None, None)]
        runs += [(task, None) for task in document.get("tasks") or {}]
        runs += [(None, env) for env in document.get("envs") or {}]
    else:
        return []  # YAML of another tool: parsed above
    done = subprocess.run(
        [sys.executable, "-c", _LOAD, str(spec), json.dumps(runs)],
        cwd=work,
        capture_output=True,
        text=True,
        env={**_environment(work), **_placeholders(block.code)},
        timeout=RUN_TIMEOUT,
        check=False,
    )
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-8:]
        return [Problem(block.where, "harness spec refused:\n    " + "\n    ".join(tail))]
    return []


def check_json(block: Snippet) -> list[Problem]:
    """One JSON document, or one per non-empty line."""
    try:
        json.loads(block.code)
        return []
    except json.JSONDecodeError as whole:
        lines = [line for line in block.code.splitlines() if line.strip()]
        for number, line in enumerate(lines, 1):
            try:
                json.loads(line)
            except json.JSONDecodeError as exc:
                shown = whole if len(lines) == 1 else exc
                return [Problem(f"{block.page}:{block.line + number}", f"JSON: {shown}")]
        return []


def check_toml(block: Snippet) -> list[Problem]:
    try:
        tomllib.loads(block.code)
    except tomllib.TOMLDecodeError as exc:
        return [Problem(block.where, f"TOML: {exc}")]
    return []


def check_shell(block: Snippet) -> list[Problem]:
    done = subprocess.run(
        ["bash", "-n"], input=block.code, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        return [Problem(block.where, f"bash -n: {done.stderr.strip()}")]
    return []


def place_files(blocks: Sequence[Snippet], work: Path) -> list[Problem]:
    """Each ``file:`` block written at its path under the scratch example (inside it only)."""
    problems: list[Problem] = []
    for block in blocks:
        if block.marker != "file" or block.reason is None:
            continue
        target = (work / block.reason).resolve()
        if not target.is_relative_to(work.resolve()):
            problems.append(Problem(block.where, f"file: {block.reason!r} is outside the example"))
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(block.code, encoding="utf-8")
    return problems


def check_cedar(block: Snippet) -> list[Problem]:
    """A Cedar policy set (``cedar``) or schema in Cedar's syntax (``cedarschema``), parsed by
    cedarpy, the engine the Python built-in uses."""
    import cedarpy

    what, parse = (
        ("Cedar policies", cedarpy.PolicySet.from_str)
        if block.lang == "cedar"
        else ("Cedar schema", cedarpy.Schema.from_str)
    )
    try:
        parse(block.code)
    except ValueError as exc:
        return [Problem(block.where, f"{what}: {exc}")]
    return []


def check(blocks: Iterable[Snippet]) -> list[Problem]:
    """Every block checked by its language; marked illustrations skipped."""
    blocks = list(blocks)
    checked = [block for block in blocks if block.marker != "illustration"]
    problems: list[Problem] = []
    with tempfile.TemporaryDirectory(prefix="snippets-") as name:
        scratch = Path(name)
        python = [b for b in checked if b.lang in ("python", "py")]
        problems += check_python(python, scratch, page_specs(blocks))
        problems += check_typescript([b for b in checked if b.lang in ("ts", "typescript")])
        problems += place_files(checked, _scratch_example(scratch))
        for block in checked:
            if block.lang in ("cedar", "cedarschema"):
                problems += check_cedar(block)
            elif block.lang in ("yaml", "yml"):
                problems += check_yaml(block, scratch)
            elif block.lang == "json":
                problems += check_json(block)
            elif block.lang == "toml":
                problems += check_toml(block)
            elif block.lang in ("sh", "bash"):
                problems += check_shell(block)
            elif block.lang not in _SHOWN | _CHECKED_TOGETHER:
                why = f"no check for a {block.lang!r} block: mark it"
                problems.append(Problem(block.where, f"{why} <!-- snippet: illustration: WHY -->"))
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("pages", nargs="*", type=Path, help="default: README.md and docs/**/*.md")
    parser.add_argument("--list", action="store_true", help="print the marked blocks and why")
    args = parser.parse_args(argv)
    blocks: list[Snippet] = []
    problems: list[Problem] = []
    for page in [p.resolve() for p in args.pages] or pages():
        name = page.relative_to(ROOT).as_posix() if page.is_relative_to(ROOT) else str(page)
        found, wrong = snippets(page.read_text(encoding="utf-8"), name)
        blocks += found
        problems += wrong
    if args.list:
        for block in blocks:
            if block.marker is not None:
                print(f"{block.where} [{block.lang}] {block.marker}: {block.reason}")
        return 0
    problems += check(blocks)
    marked = sum(block.marker == "illustration" for block in blocks)
    for problem in problems:
        print(problem, flush=True)
    print(f"{len(blocks)} blocks: {len(problems)} problems, {marked} illustrations not checked")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
