"""What the hook command imports: every event pays it (docs/performance.md, "The hook
command"). Module lists, not times: no test here asserts wall-clock time."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from hookcmd_support import SCRIPTED, event

PROBE = """
import io, json, sys
from harnessweaver.cli import main
sys.stdin = io.TextIOWrapper(io.BytesIO(sys.argv[1].encode()))
code = main(["hook", "--agent", "claude-code", "--spec", sys.argv[2], "--state", sys.argv[3]])
print(json.dumps([code, sorted(m for m in sys.modules if m.startswith("harnessweaver"))]))
"""


def _modules(doc: dict[str, object], tmp_path: Path) -> tuple[int, set[str]]:
    args = [json.dumps(doc), str(SCRIPTED), str(tmp_path / "st.db")]
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args], capture_output=True, check=True, text=True
    )
    code, modules = json.loads(done.stdout.splitlines()[-1])
    return code, set(modules)


def test_the_cli_imports_no_conformance_driver_for_a_hook(tmp_path: Path) -> None:
    code, modules = _modules(event("claude-code", "PreToolUse"), tmp_path)
    assert code == 0
    assert "harnessweaver.hookcmd.command" in modules
    assert not {m for m in modules if m.startswith("harnessweaver.conformance")}


def test_an_event_with_no_hook_point_loads_no_spec(tmp_path: Path) -> None:
    code, modules = _modules(event("claude-code", "Notification"), tmp_path)
    assert code == 0
    assert not {
        m for m in modules if m.startswith(("harnessweaver.spec", "harnessweaver.builtins"))
    }
    assert "harnessweaver.hookcmd.store" not in modules


WARM_PROBE = """
import io, json, sys
from pathlib import Path
from harnessweaver.hookcmd import helper, warm
helper._preload()
before = {m for m in sys.modules if m.startswith("harnessweaver")}
warm._given = sys.argv[1].encode()  # what the helper's child runs (_answer)
out = sys.stdout
sys.stdout = io.StringIO()
code = helper._run(["--agent", "claude-code", "--spec", sys.argv[2], "--state", sys.argv[3]])
sys.stdout = out
print(json.dumps([code, sorted(m for m in sys.modules if m.startswith("harnessweaver"))]))
print(json.dumps(sorted(before)))
"""


def test_the_warm_helper_preloads_every_module_an_event_needs(tmp_path: Path) -> None:
    """A warm helper's forked child answers an event with what the helper imported before
    forking (``helper._preload``): a module left to the child is imported again for every
    event, which is the cost the helper exists to save."""
    args = [json.dumps(event("claude-code", "PreToolUse")), str(SCRIPTED), str(tmp_path / "st.db")]
    done = subprocess.run(
        [sys.executable, "-c", WARM_PROBE, *args],
        capture_output=True,
        check=True,
        text=True,
    )
    answered, preloaded = done.stdout.splitlines()[-2:]
    code, modules = json.loads(answered)
    assert code == 0
    assert set(modules) - set(json.loads(preloaded)) == set()
