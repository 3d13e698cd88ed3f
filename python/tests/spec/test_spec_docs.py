"""The docs' harness specs load, and the error table of docs/harness-spec.md is the code's.

Every ```yaml block of README.md and docs/**/*.md that is a harness spec (a mapping of only
the spec's top-level keys) is loaded with the real loader, bare and with each task and each
env it declares, so a doc example a reader copies and the loader refuses fails the suite
(issue 32: the loop guard of coding-agents.md, the audit example of harness-spec.md).

Where a block is loaded: in a copy of ``examples/refunds`` (its ``app.harness_plugin``, the
acme plugin the docs' examples use, and its ``org/`` profiles), as ``tools/check_snippets.py``
does; a block whose first line names a file of the repository (``# e2e/mcp/harness.yaml,
...``) is that file, and is loaded in a copy of its folder. A ``${NAME}`` the block reads from
the environment is set (to a placeholder: the store is a MemoryStore, nothing is connected
to). A block marked ``<!-- snippet: illustration: WHY -->`` on the line before its fence (the
snippet checker's marker) is not loaded.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from checkout import CHECKOUT, require_checkout

import harnessweaver as hw
from harnessweaver.spec.errors import RULES
from harnessweaver.spec.model import PROFILE_KEYS, SPEC_KEYS
from harnessweaver.state import MemoryStore

_FENCE = re.compile(r"^(?P<indent>\s*)```(?P<lang>[\w-]*)\s*$")
_ILLUSTRATION = re.compile(r"^\s*<!--\s*snippet:\s*illustration\s*:")
_NAMES_A_FILE = re.compile(r"^#\s*(?P<path>[\w./-]+\.ya?ml)\b")
_VARIABLE = re.compile(r"\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    text: str
    illustration: bool

    def __str__(self) -> str:
        return f"{self.page}:{self.line}"


def _pages() -> list[Path]:
    if CHECKOUT is None:
        return []
    return [CHECKOUT / "README.md", *sorted((CHECKOUT / "docs").rglob("*.md"))]


def _yaml_blocks(page: Path, root: Path) -> Iterator[Block]:
    lines = page.read_text(encoding="utf-8").splitlines()
    index = 0
    while index < len(lines):
        fence = _FENCE.match(lines[index])
        if fence is None:
            index += 1
            continue
        start, indent = index, len(fence["indent"])
        index += 1
        body = []
        while index < len(lines) and not lines[index].strip().startswith("```"):
            body.append(lines[index][indent:])
            index += 1
        index += 1
        if fence["lang"] in ("yaml", "yml"):
            marked = start > 0 and _ILLUSTRATION.match(lines[start - 1]) is not None
            relative = page.relative_to(root).as_posix()
            yield Block(relative, start + 1, "\n".join(body) + "\n", marked)


def _is_spec(text: str) -> bool:
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError:
        return False  # not this test's concern: the snippet checker parses every block
    return isinstance(document, dict) and bool(document) and set(document) <= set(SPEC_KEYS)


def _spec_blocks() -> list[Block]:
    if CHECKOUT is None:
        return []
    return [b for page in _pages() for b in _yaml_blocks(page, CHECKOUT) if _is_spec(b.text)]


SPECS = _spec_blocks()


def test_the_docs_have_harness_specs_to_load() -> None:
    require_checkout()
    loaded = [block for block in SPECS if not block.illustration]
    assert len(loaded) >= 10, [str(block) for block in SPECS]
    pages = {block.page for block in loaded}
    assert {"docs/harness-spec.md", "docs/integrations/coding-agents.md"} <= pages


def _refusals(block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What the loader says of ``block`` loaded bare and with each task and env it declares
    (nothing when it loads every time)."""
    root = require_checkout()
    named = _NAMES_A_FILE.match(block.text)
    home = root / "examples" / "refunds"
    if named is not None and (root / named["path"]).is_file():
        home = (root / named["path"]).parent
    work = tmp_path / "work"
    shutil.copytree(home, work, ignore=shutil.ignore_patterns("__pycache__", "node_modules"))
    for name in _VARIABLE.findall(block.text):
        monkeypatch.setenv(name, "placeholder")
    spec = work / "snippet.yaml"
    spec.write_text(block.text, encoding="utf-8")
    document = yaml.safe_load(block.text)
    runs: list[tuple[str | None, str | None]] = [(None, None)]
    runs += [(task, None) for task in document.get("tasks") or {}]
    runs += [(None, env) for env in document.get("envs") or {}]
    refused = []
    for task, env in runs:
        try:
            hw.load(
                spec,
                task=task,
                env=env,
                org_profiles=[work / "org"],
                open_state=lambda config: MemoryStore(),
            )
        except hw.SpecError as exc:
            refused.append(f"{block} (task {task}, env {env}):\n{exc}")
    return refused


@pytest.mark.parametrize("block", SPECS, ids=str)
def test_every_harness_spec_of_the_docs_loads(
    block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if block.illustration:
        pytest.skip("marked as an illustration: <!-- snippet: illustration: ... -->")
    assert _refusals(block, tmp_path, monkeypatch) == []


def test_a_block_the_loader_refuses_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The test above can fail: a page whose loop guard breaks its own rule (as coding-agents.md's
    # `block_after: 3` did with the default warn_after of 3 before issue 32) is refused.
    page = tmp_path / "page.md"
    page.write_text(
        "Text.\n\n  ```yaml\n  middleware:\n"
        "    - {use: harnessweaver.loop_guard, warn_after: 3, block_after: 3}\n  ```\n",
        encoding="utf-8",
    )
    (block,) = [b for b in _yaml_blocks(page, tmp_path) if _is_spec(b.text)]
    assert (str(block), block.illustration) == ("page.md:3", False)
    (refusal,) = _refusals(block, tmp_path, monkeypatch)
    assert "block_after (3) must be greater than warn_after (3)" in refusal


# The error table of docs/harness-spec.md: its rows, and the key lists its messages quote.


def _errors_section() -> str:
    text = (require_checkout() / "docs" / "harness-spec.md").read_text(encoding="utf-8")
    return text[text.index("\n## Errors\n") : text.index("\n### Limits\n")]


def _table_kinds() -> set[str]:
    rows = re.findall(r"^\| ((?:`[a-z_]+`(?:, )?)+) \|", _errors_section(), re.MULTILINE)
    return {kind.strip("`") for row in rows for kind in row.split(", ")}


def test_the_error_table_has_a_row_for_every_spec_level_kind() -> None:
    assert set(RULES) - _table_kinds() == set()


def test_the_key_lists_the_error_table_quotes_are_the_loaders() -> None:
    section = _errors_section()
    (spec_keys,) = re.findall(r"the keys are ([a-z_, ]+);", section)
    assert tuple(spec_keys.split(", ")) == SPEC_KEYS  # deadlines, mode, identity... (issue 32)
    (profile_keys,) = re.findall(r"not a profile: none of its keys is ([a-z_, ]+) \(", section)
    assert tuple(profile_keys.split(", ")) == PROFILE_KEYS
