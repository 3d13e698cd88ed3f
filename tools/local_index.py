"""A package index of this machine's own: the built artifacts served as a PEP 503 "simple"
repository over HTTP on 127.0.0.1, so that ``pip install harnessweaver`` by name is tried the
way a user meets it (the name, the extras, the markers, the wheel pip picks for the CPython).

Used by ``nox -s installed`` (tools/installed.py ``--index``). Standard library only.

    with serve(build_index(dist_files, root)) as url:   # http://127.0.0.1:PORT/
        pip install --extra-index-url {url}full/simple harnessweaver
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import html
import shutil
import threading
from collections.abc import Iterable, Iterator, Mapping
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

__all__ = ["build_index", "serve"]

PROJECT = "harnessweaver"


def _page(title: str, links: Iterable[tuple[str, str]]) -> str:
    anchors = "\n".join(
        f'<a href="{html.escape(href)}">{html.escape(text)}</a><br>' for href, text in links
    )
    return (
        '<!DOCTYPE html>\n<html><head><meta name="pypi:repository-version" content="1.0">'
        f"<title>{html.escape(title)}</title></head>\n<body>\n{anchors}\n</body></html>\n"
    )


def build_index(views: Mapping[str, Iterable[Path]], root: Path) -> Path:
    """One PEP 503 repository per view (``root/<view>/simple/``), each listing its files
    (copied once to ``root/files/``) with their SHA-256, as an index serves them."""
    files = root / "files"
    files.mkdir(parents=True, exist_ok=True)
    for view, artifacts in views.items():
        simple = root / view / "simple"
        project = simple / PROJECT
        project.mkdir(parents=True, exist_ok=True)
        links = []
        for artifact in sorted(artifacts):
            target = files / artifact.name
            if not target.exists():
                shutil.copyfile(artifact, target)
            digest = hashlib.sha256(target.read_bytes()).hexdigest()
            links.append((f"../../../files/{artifact.name}#sha256={digest}", artifact.name))
        (project / "index.html").write_text(_page(f"Links for {PROJECT}", links), encoding="utf-8")
        (simple / "index.html").write_text(
            _page("Simple index", [(f"{PROJECT}/", PROJECT)]), encoding="utf-8"
        )
    return root


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass  # pip's own output says what it fetched


@contextlib.contextmanager
def serve(root: Path) -> Iterator[str]:
    """Serve ``root`` on 127.0.0.1 (a free port) from a thread; yields the base URL."""
    handler = functools.partial(_Quiet, directory=str(root))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, name="local-index", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
