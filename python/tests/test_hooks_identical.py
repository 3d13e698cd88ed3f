"""``harnessweaver hooks`` prints the same bytes from Python and from the TypeScript package.

Two checks, one per side of the fixture both languages share:

- the renderer: a harness built by hand (every layer, a harness-wide mode, an audited item,
  matchers, chain deadlines such as 1.1 ms, timeouts such as 0.25 s and 3600 s, a code-registered
  middleware, a file name outside ASCII) rendered by ``render.py`` in every format must equal
  ``ts-runner/src/test/fixtures/render-python.json``, which ``render.test.ts`` compares the
  TypeScript renderer with (``python python/tests/test_hooks_identical.py --write`` rewrites it);
- the command: the same specs (``examples/refunds`` and a spec with a task, an env overlay,
  deadlines, matchers and an audit mode, whose plugin has a Python and a Node twin) through
  ``harnessweaver hooks`` and the TypeScript CLI give byte-identical stdout, stderr and exit
  status in every format.

The TypeScript CLI is ``$HARNESSWEAVER_TS_CLI`` (``nox -s ts`` points it at the ``harnessweaver``
command of the packed tarball installed in a scratch project), else ``node
ts-runner/dist/cli.js``. Without node or a built ``ts-runner/dist`` the command checks are skipped,
saying why, unless ``HARNESSWEAVER_REQUIRE_TS=1`` (set by ``nox -s ts``), which makes that a
failure: in CI they never skip silently.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from textwrap import dedent

import pytest
from checkout import CHECKOUT

import harnessweaver as hw
from harnessweaver.spec import Harness, HarnessEntry, Provenance

FIXTURE = Path("ts-runner/src/test/fixtures/render-python.json")
ALL = ["task.start", "step.start", "model.before", "model.after"]
ALL += ["tool.before", "tool.after", "step.end", "task.end"]


# --- the renderer: one harness built by hand, the fixture both languages compare with ----


async def _nothing(event: hw.Event, env: hw.Envelope) -> None:
    return None


def _declared(name: str, hooks: list[str], **keys: object) -> object:
    return hw.middleware(name=name, hooks=hooks, **{"fail_mode": "closed", **keys})(_nothing)  # type: ignore[call-overload]


def scenario() -> Harness:
    """The harness ``render.test.ts`` builds the same way (``scenario()`` there)."""
    bus = hw.HookBus(deadlines={"tool.before": "1.1ms", "model.before": 30, "task.end": "0.25s"})
    entries = []

    def add(mw: object, layer: str, name: str, label: str, use: str, file: str, line: int | None, **keys: object) -> None:  # fmt: skip
        decl = bus.register(mw, layer=layer, name=name, **keys)  # type: ignore[arg-type]
        entries.append(HarnessEntry(decl.name, label, use, decl, Provenance(layer, file, line)))

    tracer = _declared("tracer", ALL, timeout="250ms")
    add(tracer, "org_profile", "audit", "audit", "acme.audit_tracer", "org/acme/baseline.yaml", 5)
    cap = _declared("cap", ["tool.before"], timeout=1.5, match={"tool": ["refund_*", "issue_credit"]})
    add(cap, "plugin_profile", "hard_cap", "hard_cap", "acme.refund_cap", "profils/sécurité — 😀.yaml", None)  # fmt: skip
    redact = _declared("redact", ["model.before", "tool.before"], fail_mode="open", timeout="0.0015s")
    add(redact, "builtin_profile", "rag.redact", "rag.redact", "harnessweaver.redact_secrets", "harnessweaver/profiles/rag.yaml", 5)  # fmt: skip
    big = _declared("big", ["model.before"], timeout=90, match={"model": "gpt-5*"})
    add(big, "app", "big_models", 'big "models"', "acme.audit_tracer", "harness.yaml", 12, mode="audit")  # fmt: skip
    weekend = _declared("weekend", ["tool.before"], timeout="2s")
    add(weekend, "task", "pii", "guardrails.tool.before[pii]", "acme.no_weekend_refunds", "harness.yaml", 23)  # fmt: skip
    bus.register(_declared("by_code", ["tool.after", "step.end"], timeout=3600))  # type: ignore[arg-type]
    spec = Path("./examples//refunds/harness.yaml")
    return Harness(bus, tuple(entries), spec, "refund", None, mode="audit")


def rendered() -> dict[str, str]:
    """Every format of :func:`scenario` (whole, for one tool, for a tool and a model) and of
    an empty harness built in code."""
    harness, empty = scenario(), Harness(hw.HookBus())
    out = {}
    for form in ("text", "json", "mermaid"):
        out[form] = harness.render(form)
        out[f"{form}-tool"] = harness.render(form, tool="search")
        out[f"{form}-both"] = harness.render(form, tool="refund_payment", model="gpt-4o")
        out[f"{form}-empty"] = empty.render(form)
    return out


def _fixture_text() -> str:
    return json.dumps(rendered(), indent=1, ensure_ascii=False, sort_keys=True) + "\n"


def test_the_typescript_renderers_fixture_is_pythons_output() -> None:
    if CHECKOUT is None:
        pytest.skip("needs the checkout's ts-runner/src/test/fixtures")
    stored = json.loads((CHECKOUT / FIXTURE).read_text(encoding="utf-8"))
    assert stored == rendered(), f"stale: python python/tests/test_hooks_identical.py --write"


# --- the command: the same specs through both CLIs --------------------------------------


def _ts_cli() -> list[str] | None:
    """The TypeScript ``harnessweaver`` command, or None (with the reason left to the caller)."""
    configured = os.environ.get("HARNESSWEAVER_TS_CLI")
    if configured:
        return shlex.split(configured)
    node = shutil.which("node")
    if node is None or CHECKOUT is None or not (CHECKOUT / "ts-runner/dist/cli.js").is_file():
        return None
    return [node, str(CHECKOUT / "ts-runner/dist/cli.js")]


def _ts_or_skip() -> list[str]:
    command = _ts_cli()
    if command is not None:
        return command
    reason = "the TypeScript CLI is absent (no node on PATH, or ts-runner/dist not built: cd ts-runner && npm run build)"  # fmt: skip
    if os.environ.get("HARNESSWEAVER_REQUIRE_TS") == "1":
        pytest.fail(f"HARNESSWEAVER_REQUIRE_TS=1 but {reason}")
    pytest.skip(reason)


def _run(command: list[str], args: list[str], cwd: Path) -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if k != "HARNESSWEAVER_ORG_PROFILES"}
    done = subprocess.run(
        [*command, "hooks", *args], cwd=cwd, env=env, capture_output=True, timeout=120
    )
    return done.returncode, done.stdout.decode(), done.stderr.decode()


PY_CLI = [sys.executable, "-m", "harnessweaver.cli"]

REFUNDS = ["examples/refunds/harness.yaml", "--org-profiles", "examples/refunds/org"]
REFUNDS_RUNS = [
    [],
    ["--task", "refund"],
    ["--task", "refund", "--env", "staging"],
    ["--task", "refund", "--tool", "lookup_order"],
]


@pytest.mark.parametrize("form", ["text", "json", "mermaid"])
@pytest.mark.parametrize("args", REFUNDS_RUNS, ids=lambda a: " ".join(a) or "plain")
def test_refunds_example_prints_the_same_from_both(args: list[str], form: str) -> None:
    ts = _ts_or_skip()
    assert CHECKOUT is not None
    every = [*REFUNDS, *args, "--format", form]
    python = _run(PY_CLI, every, CHECKOUT)
    assert python[0] == 0, python[2]
    assert _run(ts, every, CHECKOUT) == python


# A spec with what the example lacks: chain deadlines (a task tightening one), matchers given
# by the item and by the declaration, an audit mode with an env that enforces, a middleware
# with settings, and odd timeouts. Its plugin has a Python module and a Node twin.
ROLLOUT = """\
plugins:
  local: ["desk_plugin"]
mode: audit
deadlines:
  tool.before: 2s
  model.before: 0.25
  task.end: 1.1ms
middleware:
  - {use: desk.cap, id: cap, max_usd: 200, match: {tool: [refund_*, issue_credit]}}
  - {use: desk.tracer, timeout: 1.5}
  - {use: desk.models, mode: enforce}
envs:
  prod:
    mode: enforce
    middleware:
      - {use: desk.cap, id: prod_cap, max_usd: 5000, timeout: 90s}
tasks:
  refund:
    deadlines:
      tool.before: 500ms
    guardrails:
      tool.before:
        - {use: desk.tracer, id: watch, fail_mode: open}
    validation:
      rules:
        - {use: desk.cap, id: small_cap, max_usd: 50, band: task}
"""

DESK_PY = '''\
from pydantic import BaseModel, ConfigDict
import harnessweaver as hw

class CapSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    max_usd: float

@hw.middleware(name="cap", hooks=["tool.before"], fail_mode="closed", timeout="250ms", config=CapSettings)
class Cap:
    def __init__(self, config: CapSettings) -> None:
        self.max_usd = config.max_usd
    async def __call__(self, event, env):
        return None

@hw.middleware(name="tracer", hooks=["task.start", "tool.before", "tool.after", "task.end"], fail_mode="closed")
async def tracer(event, env):
    return None

@hw.middleware(name="models", hooks=["model.before", "model.after"], fail_mode="open", timeout=0.0005, match={"model": ["gpt-5*", "o3"]})
async def models(event, env):
    return None

plugin = hw.Plugin(namespace="desk", version="1.0.0", middleware=[Cap, tracer, models])
'''

DESK_MJS = """\
import { configurable, middleware, Plugin } from "harnessweaver";

const cap = configurable(
  { name: "cap", hooks: ["tool.before"], failMode: "closed", timeout: "250ms",
    settings: { type: "object", properties: { max_usd: { type: "number" } }, required: ["max_usd"] } },
  () => async () => undefined,
);
const tracer = middleware(
  { name: "tracer", hooks: ["task.start", "tool.before", "tool.after", "task.end"], failMode: "closed" },
  async () => undefined,
);
const models = middleware(
  { name: "models", hooks: ["model.before", "model.after"], failMode: "open", timeout: 0.0005,
    match: { model: ["gpt-5*", "o3"] } },
  async () => undefined,
);
export const plugin = new Plugin({ namespace: "desk", version: "1.0.0", middleware: [cap, tracer, models] });
"""

ROLLOUT_RUNS = [
    [],
    ["--task", "refund"],
    ["--task", "refund", "--env", "prod"],
    ["--tool", "refund_payment", "--model", "gpt-4o"],
    ["--task", "refund", "--tool", "search", "--model", "gpt-5-mini"],
    ["--task", "nope"],  # a SpecError: the problem on stderr, status 2
    ["--env", "prod", "--task", "nope"],
]


@pytest.fixture
def rollout(tmp_path: Path) -> Path:
    """The spec above, written with both plugin twins."""
    (tmp_path / "harness.yaml").write_text(ROLLOUT, encoding="utf-8")
    (tmp_path / "desk_plugin.py").write_text(DESK_PY, encoding="utf-8")
    (tmp_path / "desk_plugin.mjs").write_text(DESK_MJS, encoding="utf-8")
    return tmp_path


def _link_package(root: Path, command: list[str]) -> None:
    """Lets the Node twin import the package the TypeScript CLI runs: a
    ``node_modules/harnessweaver`` link to it, as an npm install would make."""
    (root / "node_modules").mkdir()
    (root / "node_modules" / "harnessweaver").symlink_to(_package_of(command), target_is_directory=True)


def _package_of(command: list[str]) -> Path:
    """The directory of the npm package whose CLI ``command`` runs (its bin or dist/cli.js)."""
    script = Path(command[-1])
    resolved = (script if script.is_absolute() else Path.cwd() / script).resolve()
    for parent in resolved.parents:
        if (parent / "package.json").is_file():
            return parent
    raise AssertionError(f"no package.json above {resolved}")


@pytest.mark.parametrize("form", ["text", "json", "mermaid"])
@pytest.mark.parametrize("args", ROLLOUT_RUNS, ids=lambda a: " ".join(a) or "plain")
def test_a_spec_with_deadlines_matchers_and_modes_prints_the_same_from_both(
    rollout: Path, args: list[str], form: str
) -> None:
    ts = _ts_or_skip()
    _link_package(rollout, ts)
    every = ["harness.yaml", *args, "--format", form]
    python = _run(PY_CLI, every, rollout)
    assert python[0] in (0, 2), python[2]
    assert _run(ts, every, rollout) == python


def test_the_rollout_spec_exercises_what_it_is_for(rollout: Path) -> None:
    """Guards the spec above against drifting into one that shows nothing of interest."""
    status, out, _ = _run(PY_CLI, ["harness.yaml", "--task", "refund", "--format", "json"], rollout)
    document = json.loads(out)
    deadlines = {hook["hook"]: hook.get("deadline") for hook in document["hooks"]}
    assert (status, deadlines["tool.before"], deadlines["task.end"]) == (0, 0.5, 0.0011)
    chain = {entry["name"]: entry for hook in document["hooks"] for entry in hook["chain"]}
    assert chain["cap"]["match"] == {"tool": ["refund_*", "issue_credit"]}
    assert chain["cap"]["mode"] == "audit" and "mode" not in chain["desk.models"]
    assert chain["desk.tracer"]["timeout"] == 1.5 and chain["desk.models"]["timeout"] == 0.0005


if __name__ == "__main__":
    # Rewrites the TypeScript renderer's fixture from this renderer's output.
    if sys.argv[1:] != ["--write"]:
        raise SystemExit("usage: python python/tests/test_hooks_identical.py --write")
    root = Path(__file__).resolve().parents[2]
    (root / FIXTURE).write_text(_fixture_text(), encoding="utf-8")
    print(f"wrote {FIXTURE}")
