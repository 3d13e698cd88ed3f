"""docs/quickstart.md runs as written: every file it shows is the file in examples/quickstart,
every command it marks ``<!-- quickstart: run -->`` is run (as a real process, by ``sh``, in a
copy of that folder) and prints exactly the output block that follows it.

The page is the source: the blocks are extracted from it, so the page and this test cannot
drift. ``harnessweaver`` and ``python`` on the commands' ``PATH`` are this interpreter and this
package (a user has them from ``pip install``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from checkout import require_checkout

import harnessweaver

ROOT = require_checkout()
PAGE = (ROOT / "docs" / "quickstart.md").read_text(encoding="utf-8")
EXAMPLE = ROOT / "examples" / "quickstart"

_MARKED = re.compile(
    r"<!-- quickstart: (?P<mark>[^>]*?) -->\n"
    r"(?:<!-- snippet: [^>]*-->\n)?"  # docsite's marker, which must be right before the fence
    r"```(?P<lang>\w*)\n(?P<body>.*?)^```",
    re.S | re.M,
)
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
_RUN = re.compile(
    r"<!-- quickstart: run -->\n```sh\n(?P<command>.*?)^```\s*```text\n(?P<output>.*?)^```",
    re.S | re.M,
)

FILES = [
    (m["mark"].removeprefix("file "), m["body"])
    for m in _MARKED.finditer(PAGE)
    if m["mark"].startswith("file ")
]
RUNS = [(m["command"], m["output"]) for m in _RUN.finditer(PAGE)]
NEEDS = {"langchain_agent.py": "langchain", "mcp_client.py": "mcp"}


def test_every_block_of_the_page_is_checked_or_says_why_not() -> None:
    """A block is a file (compared), a command (run), its output, or marked 'not run (why)'."""
    marked = {m.start("lang") - 3 for m in _MARKED.finditer(PAGE)}  # where each marked fence starts
    outputs = {m.start("output") - len("```text\n") for m in _RUN.finditer(PAGE)}
    for fence in _FENCE.finditer(PAGE):
        start = fence.start()
        if start in outputs:
            continue
        assert start in marked, (
            f"docs/quickstart.md: unmarked block at {PAGE[start : start + 60]!r}"
        )
    reasons = [m["mark"] for m in _MARKED.finditer(PAGE)]
    for mark in reasons:
        assert (
            mark in ("run",) or mark.startswith("file ") or re.fullmatch(r"not run \(.+\)", mark)
        ), mark


def test_the_page_shows_every_step() -> None:
    assert [path for path, _ in FILES] == [
        "examples/quickstart/first_middleware.py",
        "examples/quickstart/harness.yaml",
        "examples/quickstart/langchain_agent.py",
        "examples/quickstart/.claude/settings.json",
        "examples/quickstart/server.py",
        "examples/quickstart/mcp_client.py",
    ]
    assert [command.split()[0:2] for command, _ in RUNS] == [
        ["python", "first_middleware.py"],
        ["python", "langchain_agent.py"],
        ["harnessweaver", "hook"],
        ["python", "mcp_client.py"],
    ]


@pytest.mark.parametrize(("path", "body"), FILES, ids=[path for path, _ in FILES])
def test_a_file_the_page_shows_is_the_file_in_the_example(path: str, body: str) -> None:
    assert (ROOT / path).read_text(encoding="utf-8") == body


def _shims(folder: Path) -> Path:
    """``harnessweaver`` and ``python`` as a user's virtual environment has them. The package
    root is written into the shim: an MCP client starts its server with a fresh environment."""
    bin_dir = folder / "bin"
    bin_dir.mkdir()
    package_root = Path(harnessweaver.__file__).resolve().parent.parent
    for name, run in (("harnessweaver", "-m harnessweaver.cli "), ("python", "")):
        shim = bin_dir / name
        shim.write_text(
            f'#!/bin/sh\nPYTHONPATH="{package_root}${{PYTHONPATH:+:$PYTHONPATH}}" '
            f'exec "{sys.executable}" {run}"$@"\n',
            encoding="utf-8",
        )
        shim.chmod(0o755)
    return bin_dir


def run_as_written(command: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    work = tmp_path / "quickstart"
    shutil.copytree(EXAMPLE, work, ignore=shutil.ignore_patterns("__pycache__"))
    env = {
        **os.environ,
        "PATH": f"{_shims(tmp_path)}{os.pathsep}{os.environ['PATH']}",
        # The hook command keeps its state here rather than in the user's home.
        "HARNESSWEAVER_HOOK_STATE": str(tmp_path / "hook-state.sqlite3"),
    }
    return subprocess.run(
        ["sh", "-ec", command], cwd=work, env=env, capture_output=True, text=True, timeout=300
    )


@pytest.mark.parametrize(("command", "output"), RUNS, ids=[c.split()[1] for c, _ in RUNS])
def test_a_command_prints_what_the_page_shows(command: str, output: str, tmp_path: Path) -> None:
    for script, module in NEEDS.items():
        if script in command:
            pytest.importorskip(module)
    done = run_as_written(command, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == output, done.stderr


def test_the_langchain_run_ends_with_the_tool_blocked(tmp_path: Path) -> None:
    pytest.importorskip("langchain")
    [command] = [c for c, _ in RUNS if "langchain_agent.py" in c]
    done = run_as_written(command, tmp_path)
    assert done.returncode == 0, done.stderr
    assert (
        "the model read: The harness refused this tool call: tool 'run_shell' is denied\n"
        in done.stdout
    )
    assert "commands that ran: []\n" in done.stdout


def test_the_hook_command_denies_the_recorded_call(tmp_path: Path) -> None:
    [command] = [c for c, _ in RUNS if c.startswith("harnessweaver hook")]
    done = run_as_written(command, tmp_path)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny"
    assert answer["permissionDecisionReason"] == "tool 'Bash' is denied (tool_denied)"


def test_a_call_the_harness_lets_through_gets_no_answer(tmp_path: Path) -> None:
    """The page: 'A call the harness lets through gets no output at all (exit status 0)'."""
    [command] = [c for c, _ in RUNS if c.startswith("harnessweaver hook")]
    read = command.replace("< pre-tool-use.json", "< read.json")
    assert read != command
    done = run_as_written(
        "python -c \"import json; d = json.load(open('pre-tool-use.json')); "
        "d['tool_name'] = 'Read'; json.dump(d, open('read.json', 'w'))\"\n" + read,
        tmp_path,
    )
    assert (done.returncode, done.stdout) == (0, ""), done.stderr


def test_the_settings_wire_the_command_print_config_prints(tmp_path: Path) -> None:
    """The page's .claude/settings.json holds the PreToolUse entry the command itself prints."""
    done = run_as_written(
        "harnessweaver hook --agent claude-code --spec harness.yaml --print-config", tmp_path
    )
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)["hooks"]
    settings = json.loads((EXAMPLE / ".claude" / "settings.json").read_text(encoding="utf-8"))
    assert settings["hooks"] == {"PreToolUse": printed["PreToolUse"]}


def test_the_docs_index_lists_every_page_and_every_example() -> None:
    """docs/index.md is the entry point: a page or an example it does not list is lost."""
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    links = set(re.findall(r"\]\(([^)#\s]+)", index))
    docs = ROOT / "docs"
    pages = {
        str(page.relative_to(docs))
        for page in docs.rglob("*.md")
        if page.name != "index.md" and "reference" not in page.relative_to(docs).parts
    }
    assert pages - links == set(), "pages docs/index.md does not list"
    examples = {p.name for p in (ROOT / "examples").iterdir() if p.is_dir()}
    listed = {m for m in re.findall(r"\.\./examples/(\w+)/", index)}
    assert examples - listed == set(), "examples docs/index.md does not list"
    for link in links:
        if "://" not in link:
            assert (docs / link).exists(), f"docs/index.md links to {link}, which does not exist"
