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
import math
import os
import random
import shlex
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from checkout import CHECKOUT

import harnessweaver as hw
from harnessweaver.spec import Harness, HarnessEntry, Provenance
from harnessweaver.spec.render import timeout_text

FIXTURE = Path("ts-runner/src/test/fixtures/render-python.json")
ALL = ["task.start", "step.start", "model.before", "model.after"]
ALL += ["tool.before", "tool.after", "step.end", "task.end"]


# --- the renderer: one harness built by hand, the fixture both languages compare with ----


async def _nothing(event: hw.Event, env: hw.Envelope) -> None:
    return None


def _declared(name: str, hooks: list[str], **keys: object) -> object:
    keys = {"fail_mode": "closed", **keys}
    return hw.middleware(name=name, hooks=hooks, **keys)(_nothing)  # type: ignore[call-overload]


def scenario() -> Harness:
    """The harness ``render.test.ts`` builds the same way (``scenario()`` there)."""
    bus = hw.HookBus(deadlines={"tool.before": "1.1ms", "model.before": 30, "task.end": "0.25s"})
    entries = []

    def add(mw: object, layer: str, name: str, label: str, where: str, **keys: object) -> None:
        """Registers ``mw`` as a spec item would be; ``where`` is ``use@file:line``."""
        use, _, source = where.partition("@")
        file, _, line = source.rpartition(":") if source[-1].isdigit() else (source, "", "")
        decl = bus.register(mw, layer=layer, name=name, **keys)  # type: ignore[arg-type]
        provenance = Provenance(layer, file, int(line) if line else None)
        entries.append(HarnessEntry(decl.name, label, use, decl, provenance))

    tracer = _declared("tracer", ALL, timeout="250ms")
    add(tracer, "org_profile", "audit", "audit", "acme.audit_tracer@org/acme/baseline.yaml:5")
    tool = {"tool": ["refund_*", "issue_credit"]}
    cap = _declared("cap", ["tool.before"], timeout=1.5, match=tool)
    add(cap, "plugin_profile", "hard_cap", "hard_cap", "acme.refund_cap@profils/sécurité — 😀.yaml")
    hooks = ["model.before", "tool.before"]
    redact = _declared("redact", hooks, fail_mode="open", timeout="0.0015s")
    rag = "harnessweaver.redact_secrets@harnessweaver/profiles/rag.yaml:5"
    add(redact, "builtin_profile", "rag.redact", "rag.redact", rag)
    big = _declared("big", ["model.before"], timeout=90, match={"model": "gpt-5*"})
    add(big, "app", "big_models", 'big "models"', "acme.audit_tracer@harness.yaml:12", mode="audit")
    weekend = _declared("weekend", ["tool.before"], timeout="2s")
    guardrail = "guardrails.tool.before[pii]"
    add(weekend, "task", "pii", guardrail, "acme.no_weekend_refunds@harness.yaml:23")
    by_code = _declared("by_code", ["tool.after", "step.end"], timeout=3600)
    bus.register(by_code)  # type: ignore[arg-type]
    spec = Path("./examples//refunds/harness.yaml")
    return Harness(bus, tuple(entries), spec, "refund", None, mode="audit")


def _numbers() -> list[float]:
    """Floats whose notations JavaScript writes differently: whole numbers, exponents at the
    edges of repr's and :g's ranges, exact ties, subnormals, and a fixed pseudo-random spread
    (durations in whole nanoseconds, and any bit pattern)."""
    picked = [2.0, 0.25, 1e-05, 0.0001, 1e16, 1e15, 1.5, 0.1, 1.1, 1e-07, 5e-324, 0.0011]
    picked += [1.7976931348623157e308, 0.0005, 1000.125, 999999.5, 0.9999995, 1234567.0]
    picked += [3600.0, 1e-09, 2.5e-10, 0.000123456789, 86400.5, -0.0, -2.5, 123456789012345678.0]
    spread = random.Random(18)
    for _ in range(200):
        picked.append(spread.randint(1, 10**13) / 1e9)
        bits = struct.unpack("<d", spread.getrandbits(63).to_bytes(8, "little"))[0]
        if math.isfinite(bits):
            picked.append(bits)
    return picked


def rendered() -> dict[str, object]:
    """Every format of :func:`scenario` (whole, for one tool, for a tool and a model) and of
    an empty harness built in code; and ``notations``: for each of :func:`_numbers`, its
    ``repr``, ``format(x, "g")``, ``repr(round(x, 6))`` and ``timeout_text`` (the JSON
    ``timeout`` and ``deadline``, and the text's durations)."""
    harness, empty = scenario(), Harness(hw.HookBus())
    out: dict[str, object] = {}
    for form in ("text", "json", "mermaid"):
        out[form] = harness.render(form)
        out[f"{form}-tool"] = harness.render(form, tool="search")
        out[f"{form}-both"] = harness.render(form, tool="refund_payment", model="gpt-4o")
        out[f"{form}-empty"] = empty.render(form)
    out["notations"] = [
        [repr(x), format(x, "g"), repr(round(x, 6)), timeout_text(x)] for x in _numbers()
    ]
    return out


def _fixture_text() -> str:
    return json.dumps(rendered(), indent=1, ensure_ascii=False, sort_keys=True) + "\n"


def test_the_typescript_renderers_fixture_is_pythons_output() -> None:
    if CHECKOUT is None:
        pytest.skip("needs the checkout's ts-runner/src/test/fixtures")
    stored = json.loads((CHECKOUT / FIXTURE).read_text(encoding="utf-8"))
    assert stored == rendered(), "stale: python python/tests/test_hooks_identical.py --write"


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
    reason = (
        "the TypeScript CLI is absent (no node on PATH, or ts-runner/dist not built: "
        "cd ts-runner && npm run build)"
    )
    if os.environ.get("HARNESSWEAVER_REQUIRE_TS") == "1":
        pytest.fail(f"HARNESSWEAVER_REQUIRE_TS=1 but {reason}")
    pytest.skip(reason)


def _run(
    command: list[str], args: list[str], cwd: Path, org_profiles: str | None = None
) -> tuple[int, str, str]:
    """Status, stdout and stderr of ``hooks ARGS``; ``org_profiles``: the value of
    ``HARNESSWEAVER_ORG_PROFILES`` (otherwise unset)."""
    env = {k: v for k, v in os.environ.items() if k != "HARNESSWEAVER_ORG_PROFILES"}
    if org_profiles is not None:
        env["HARNESSWEAVER_ORG_PROFILES"] = org_profiles
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


@pytest.fixture
def refunds(tmp_path: Path) -> Path:
    """A copy of ``examples/refunds`` (its plugin's Node twin imports ``harnessweaver``, which
    resolves from the copy to the package under test, see :func:`_link_package`)."""
    if CHECKOUT is None:
        pytest.skip("needs the checkout's examples/refunds")
    ignore = shutil.ignore_patterns("__pycache__", "node_modules")
    shutil.copytree(
        CHECKOUT / "examples" / "refunds", tmp_path / "examples" / "refunds", ignore=ignore
    )
    return tmp_path


@pytest.mark.parametrize("form", ["text", "json", "mermaid"])
@pytest.mark.parametrize("args", REFUNDS_RUNS, ids=lambda a: " ".join(a) or "plain")
def test_refunds_example_prints_the_same_from_both(
    refunds: Path, args: list[str], form: str
) -> None:
    ts = _ts_or_skip()
    _link_package(refunds, ts)
    every = [*REFUNDS, *args, "--format", form]
    python = _run(PY_CLI, every, refunds)
    assert python[0] == 0, python[2]
    assert _run(ts, every, refunds) == python


def test_org_profiles_from_the_environment_as_python_reads_them(refunds: Path) -> None:
    """Without ``--org-profiles``, both read ``HARNESSWEAVER_ORG_PROFILES`` (os.pathsep
    between directories): one that does not exist, then the example's."""
    ts = _ts_or_skip()
    _link_package(refunds, ts)
    dirs = os.pathsep.join(["nowhere", "examples/refunds/org"])
    args = ["examples/refunds/harness.yaml", "--format", "json"]
    python = _run(PY_CLI, args, refunds, org_profiles=dirs)
    assert python[0] == 0, python[2]
    assert '"org/acme/baseline.yaml"' in python[1]
    assert _run(ts, args, refunds, org_profiles=dirs) == python
    # No directory at all: the same problem, where and which rule (its message tells each
    # language's users how to pass directories, so it is free text, as in the corpus).
    status, out, err = _run(PY_CLI, args, refunds)
    ts_status, ts_out, ts_err = _run(ts, args, refunds)
    assert (ts_status, ts_out, status, out) == (2, "", 2, "")

    def where_and_rule(line: str) -> tuple[list[str], str]:
        return line.split(": ")[:2], line.rsplit(" ", 1)[-1]

    assert err.endswith("\n") and ts_err.endswith("\n")
    shown = [where_and_rule(line) for line in err.splitlines()]
    assert shown == [(["harness.yaml:6", "profiles[0]"], "(profiles)")]
    assert [where_and_rule(line) for line in ts_err.splitlines()] == shown


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

DESK_PY = """\
from pydantic import BaseModel, ConfigDict
import harnessweaver as hw

class CapSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    max_usd: float

@hw.middleware(
    name="cap", hooks=["tool.before"], fail_mode="closed", timeout="250ms", config=CapSettings
)
class Cap:
    def __init__(self, config: CapSettings) -> None:
        self.max_usd = config.max_usd
    async def __call__(self, event, env):
        return None

@hw.middleware(
    name="tracer", hooks=["task.start", "tool.before", "tool.after", "task.end"], fail_mode="closed"
)
async def tracer(event, env):
    return None

@hw.middleware(
    name="models",
    hooks=["model.before", "model.after"],
    fail_mode="open",
    timeout=0.0005,
    match={"model": ["gpt-5*", "o3"]},
)
async def models(event, env):
    return None

plugin = hw.Plugin(namespace="desk", version="1.0.0", middleware=[Cap, tracer, models])
"""

DESK_MJS = """\
import { configurable, middleware, Plugin } from "harnessweaver";

const cap = configurable(
  { name: "cap", hooks: ["tool.before"], failMode: "closed", timeout: "250ms",
    settings: { type: "object", properties: { max_usd: { type: "number" } },
                required: ["max_usd"] } },
  () => async () => undefined,
);
const tracer = middleware(
  { name: "tracer", hooks: ["task.start", "tool.before", "tool.after", "task.end"],
    failMode: "closed" },
  async () => undefined,
);
const models = middleware(
  { name: "models", hooks: ["model.before", "model.after"], failMode: "open", timeout: 0.0005,
    match: { model: ["gpt-5*", "o3"] } },
  async () => undefined,
);
export const plugin = new Plugin(
  { namespace: "desk", version: "1.0.0", middleware: [cap, tracer, models] },
);
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
    link = root / "node_modules" / "harnessweaver"
    link.symlink_to(_package_of(command), target_is_directory=True)


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


# A plugin whose import fails (issue 28): a Python twin raising a BaseException subclass (a
# SystemExit escaped the loader before), a Node twin throwing an Error of the same name; both
# with a secret message, which neither prints (R9).
SECRET = "sk-ant-api03-plugin-secret-0123456789"
BROKEN_PY = f"class Halt(BaseException):\n    pass\n\n\nraise Halt({SECRET!r})\n"
BROKEN_MJS = (
    'class Halt extends Error { constructor(m) { super(m); this.name = "Halt"; } }\n'
    f"throw new Halt({SECRET!r});\n"
)


@pytest.mark.parametrize("form", ["text", "json"])
def test_a_plugin_whose_import_fails_is_refused_the_same_by_both(tmp_path: Path, form: str) -> None:
    ts = _ts_or_skip()
    spec = "plugins:\n  local: [broken_plugin]\nmiddleware: [{use: broken.guard}]\n"
    (tmp_path / "harness.yaml").write_text(spec, encoding="utf-8")
    (tmp_path / "broken_plugin.py").write_text(BROKEN_PY, encoding="utf-8")
    (tmp_path / "broken_plugin.mjs").write_text(BROKEN_MJS, encoding="utf-8")
    python = _run(PY_CLI, ["harness.yaml", "--format", form], tmp_path)
    assert python[:2] == (2, "")
    assert python[2].splitlines()[0] == (
        "harness.yaml:2: plugins.local[0]: cannot import broken_plugin: Halt (its message is "
        "not shown) (plugins)"
    )
    assert SECRET not in python[2]
    assert _run(ts, ["harness.yaml", "--format", form], tmp_path) == python


if __name__ == "__main__":
    # Rewrites the TypeScript renderer's fixture from this renderer's output.
    if sys.argv[1:] != ["--write"]:
        raise SystemExit("usage: python python/tests/test_hooks_identical.py --write")
    root = Path(__file__).resolve().parents[2]
    (root / FIXTURE).write_text(_fixture_text(), encoding="utf-8")
    print(f"wrote {FIXTURE}")
