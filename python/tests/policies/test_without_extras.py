"""Without the ``cedar`` and ``authzen`` extras (no cedarpy, no httpx) every spec that does not
use those built-ins loads as before, and one that does is refused naming the extra. Run in a
fresh interpreter: the built-in plugin checks its samples when it is first imported, which a
spec load does, so a check there that needed an extra broke every spec (the conformance and
agents sessions, whose environments have neither, caught it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from checkout import PACKAGE

_PROGRAM = """
import json, sys
for name in ("cedarpy", "httpx"):
    sys.modules[name] = None  # `import name` raises ImportError, as when it is not installed
import harnessweaver as hw
answers = {}
for spec in sys.argv[1:]:
    try:
        hw.load(spec)
        answers[spec] = "loaded"
    except hw.SpecError as exc:
        answers[spec] = str(exc)
print(json.dumps(answers))
"""


def _load_without_extras(*specs: Path) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(PACKAGE.parent)}
    done = subprocess.run(
        [sys.executable, "-c", _PROGRAM, *map(str, specs)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    answers: dict[str, str] = json.loads(done.stdout)
    return answers


def test_specs_load_without_the_extras_and_their_items_name_them(tmp_path: Path) -> None:
    plain = tmp_path / "plain.yaml"
    plain.write_text("middleware:\n  - {use: harnessweaver.tool_denylist, deny: [rm]}\n")
    cedar = tmp_path / "cedar.yaml"
    cedar.write_text("middleware:\n  - {use: harnessweaver.cedar, policies: p.cedar}\n")
    (tmp_path / "p.cedar").write_text("permit(principal, action, resource);\n")
    authzen = tmp_path / "authzen.yaml"
    authzen.write_text("middleware:\n  - {use: harnessweaver.authzen, url: 'http://127.0.0.1:9'}\n")
    answers = _load_without_extras(plain, cedar, authzen)
    assert answers[str(plain)] == "loaded"
    assert "pip install 'harnessweaver[cedar]'" in answers[str(cedar)]
    assert "harnessweaver.authzen needs the httpx package" in answers[str(authzen)]
    assert "pip install 'harnessweaver[authzen]'" in answers[str(authzen)]
