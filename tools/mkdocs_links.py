"""mkdocs hook: a page's link to a file of the repository outside docs/ (an example, the corpus,
a source file) points at that file on the forge.

The pages are written to be read on the forge too, where ``../examples/agent/README.md``
resolves; in the built site it would not. A link whose target does not exist in the clone is
left as written, so mkdocs reports it and ``mkdocs build --strict`` fails on it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

__all__ = ["FORGE", "on_page_markdown", "rewrite"]

FORGE = "https://github.com/harnessweaver/harnessweaver"
"""The repository's home (``[project.urls]``); files are linked on its ``main`` branch."""

_LINK = re.compile(r"(\]\()([^)\s#]+)(#[^)\s]*)?(\))")
"""``](target#anchor)``: the inline links of Markdown (reference definitions are not used)."""


def rewrite(markdown: str, page: Path, docs: Path) -> str:
    """``markdown`` (the text of ``page``, a file under ``docs``) with each relative link that
    leaves ``docs`` for an existing file or folder of the repository made a forge URL."""
    root = docs.parent.resolve()

    def one(match: re.Match[str]) -> str:
        target = match.group(2)
        if "://" in target or target.startswith(("/", "mailto:")):
            return match.group(0)
        resolved = (page.parent / target).resolve()
        inside = resolved.is_relative_to(docs.resolve())
        if inside or not resolved.is_relative_to(root) or not resolved.exists():
            return match.group(0)
        kind = "tree" if resolved.is_dir() else "blob"
        url = f"{FORGE}/{kind}/main/{resolved.relative_to(root).as_posix()}"
        return f"{match.group(1)}{url}{match.group(3) or ''}{match.group(4)}"

    return _LINK.sub(one, markdown)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """The mkdocs event: called with each page's Markdown before it is rendered."""
    docs = Path(config["docs_dir"])
    return rewrite(markdown, docs / page.file.src_path, docs)
