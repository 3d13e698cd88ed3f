"""``harnessweaver hook doctor``: is the hook command wired so that the agent really runs it?

A hook that is not run is worse than none: it is trusted and does nothing. Each agent has
ways of not running a configured hook without a word (Codex: hooks not yet trusted; Gemini
CLI: a folder not trusted, ``hooksConfig``; Claude Code: ``disableAllHooks``), and each
protocol has answers it reads as "go on" (exit status 1, a JSON it cannot parse). The doctor
reads the agent's own settings files, finds the handlers that run ``harnessweaver hook``, and
checks, in order: the spec loads; every event with a hook point is wired to this spec, for
every tool; the agent will run the hooks; the command can be started; and, run on a harmless
event as the agent would run it, it answers in a form the agent acts on. Each problem is a
:class:`Finding` with the fix.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .agents import AGENTS
from .codex_setup import codex_home
from .config import snippet
from .options import HookOptions

__all__ = ["Finding", "Handler", "Report", "diagnose", "render"]

DRY_RUN_TIMEOUT = 60.0
"""Seconds the dry run of a wired command may take (a cold start loads the whole spec)."""

_PROJECT_VARIABLES = ("CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR")


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem: which check found it, what is wrong, and how to fix it."""

    check: str
    problem: str
    fix: str


@dataclass(frozen=True, slots=True)
class Handler:
    """One command handler of an agent's settings: the file, the event, the group's matcher
    and the command text."""

    source: Path
    event: str
    matcher: str | None
    command: str
    fail_closed: bool | None = None
    """Cursor's ``failClosed`` (``None``: not set)."""


@dataclass(slots=True)
class Report:
    """What passed (one line each) and what did not."""

    passed: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.findings


# -- where each agent keeps its settings ---------------------------------------------------


def settings_files(agent: str, project: Path, home: Path) -> list[Path]:
    """The settings files whose ``hooks`` the agent reads, project first."""
    if agent == "claude-code":
        user = Path(os.environ.get("CLAUDE_CONFIG_DIR") or home / ".claude")
        claude = project / ".claude"
        return [claude / "settings.json", claude / "settings.local.json", user / "settings.json"]
    if agent == "codex":
        return [project / ".codex" / "hooks.json", codex_home(home) / "hooks.json"]
    if agent == "cursor":
        return [project / ".cursor" / "hooks.json", home / ".cursor" / "hooks.json"]
    if agent in ("copilot", "vscode"):
        return sorted((project / ".github" / "hooks").glob("*.json"))
    return [project / ".gemini" / "settings.json", home / ".gemini" / "settings.json"]


def _read_json(path: Path, report: Report) -> dict[str, Any] | None:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        report.findings.append(
            Finding("settings", f"{path} cannot be read: {type(exc).__name__}", "repair the file")
        )
        return None
    if not isinstance(doc, dict):
        report.findings.append(Finding("settings", f"{path} is not a JSON object", "repair it"))
        return None
    return doc


def handlers(path: Path, doc: dict[str, Any]) -> Iterator[Handler]:
    """Every command handler of ``doc["hooks"]``: matcher groups of handlers (Claude Code,
    Codex, Gemini CLI) or flat lists of handlers (Copilot CLI, Cursor, VS Code). Malformed
    parts are skipped: the agent's own validation reports them."""
    hooks = doc.get("hooks")
    if not isinstance(hooks, dict):
        return
    for event, groups in hooks.items():
        for group in groups if isinstance(groups, list) else []:
            if not isinstance(group, dict):
                continue
            matcher = group.get("matcher")
            matcher = matcher if isinstance(matcher, str) else None
            flat = "hooks" not in group
            for handler in [group] if flat else group.get("hooks") or []:
                if not isinstance(handler, dict):
                    continue
                command = handler.get("command", handler.get("bash"))
                closed = handler.get("failClosed")
                if isinstance(command, str):
                    yield Handler(
                        path,
                        str(event),
                        matcher,
                        command,
                        closed if isinstance(closed, bool) else None,
                    )


# -- reading a command line -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HookCall:
    """A handler's command as the hook command's arguments (``None`` fields: not given)."""

    words: tuple[str, ...]
    agent: str | None
    spec: Path | None


def hook_call(command: str, project: Path) -> HookCall | None:
    """``command`` read as ``harnessweaver hook ...`` (the project variables expanded as the
    agent would), or ``None`` when it does not run the hook command."""
    for name in _PROJECT_VARIABLES:
        command = command.replace("${" + name + "}", str(project))
        command = command.replace("$" + name, str(project))
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    start = _arguments_start(words)
    if start is None:
        return None
    given = _options(words[start:])
    spec = given.get("--spec")
    return HookCall(
        tuple(words),
        given.get("--agent"),
        None if spec is None else (project / spec).resolve(),
    )


def _arguments_start(words: list[str]) -> int | None:
    """Where the hook's arguments start: after ``harnessweaver hook`` (the console script,
    or ``python -m harnessweaver.cli hook``) or after ``.../harnessweaver/hookcmd/hook.py``
    (``--print-config --fast``); ``None`` when the command runs neither."""
    for i, word in enumerate(words[:4]):
        if Path(word).parts[-3:] == ("harnessweaver", "hookcmd", "hook.py"):
            return i + 1
    if "hook" in words and any("harnessweaver" in Path(w).name for w in words[:3]):
        return words.index("hook") + 1
    return None


def _options(words: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for i, word in enumerate(words):
        name, eq, value = word.partition("=")
        if eq and name.startswith("--"):
            found[name] = value
        elif word.startswith("--") and i + 1 < len(words):
            found.setdefault(word, words[i + 1])
    return found


# -- the checks ----------------------------------------------------------------------------


def diagnose(options: HookOptions, project: Path, home: Path, *, dry_run: bool = True) -> Report:
    """Every check of ``options.agent``'s settings under ``project`` and ``home``."""
    report = Report()
    _check_spec(options, report)
    files = settings_files(options.agent, project, home)
    settings = {path: _read_json(path, report) or {} for path in files}  # read once
    wired = _check_wiring(options, project, settings, report)
    _check_enabled(options.agent, settings, report)
    if options.agent == "gemini":
        _check_gemini_trust(project, home, settings, report)
    if options.agent == "codex":
        _check_codex_trust(options, project, home, wired, report)
    if options.agent == "cursor":
        _check_cursor_fail_closed(wired, report)
    commands = sorted({h.command for h in wired})
    for command in commands:
        _check_command(command, project, report)
        if dry_run and options.agent in _TOOL_EVENT:
            _check_answer(options.agent, command, project, report)
    return report


def _check_spec(options: HookOptions, report: Report) -> None:
    from ..spec import SpecError, load

    fix = f"correct the spec; `harnessweaver hooks {shlex.quote(str(options.spec))}` lists it"
    if not options.spec.is_file():
        report.findings.append(Finding("spec", f"{options.spec} does not exist", fix))
        return
    try:
        harness = load(
            options.spec, task=options.task, env=options.env, org_profiles=options.org_profiles
        )
    except SpecError as exc:
        report.findings.append(Finding("spec", f"{options.spec} does not load:\n{exc}", fix))
        return
    except Exception as exc:  # a loader bug: its type only (R9)
        problem = f"loading {options.spec} failed: {type(exc).__name__}"
        report.findings.append(Finding("spec", problem, fix))
        return
    report.passed.append(f"the spec loads ({len(harness.entries)} middleware)")


def _print_config(options: HookOptions) -> str:
    words = ["harnessweaver", "hook", "--agent", options.agent, "--spec", str(options.spec)]
    for flag, value in (("--task", options.task), ("--env", options.env)):
        if value:
            words += [flag, value]
    return shlex.join([*words, "--print-config"])


def _check_wiring(
    options: HookOptions, project: Path, settings: dict[Path, dict[str, Any]], report: Report
) -> list[Handler]:
    """The handlers that run the hook command on this spec; a finding per event with a hook
    point that none of them covers, or covers only for some tools."""
    agent, spec = options.agent, options.spec.resolve()
    ours: list[Handler] = []
    files = list(settings)
    for path, doc in settings.items():
        for handler in handlers(path, doc):
            call = hook_call(handler.command, project)
            if call is None:
                continue
            if call.agent != agent or call.spec != spec:
                report.findings.append(
                    Finding(
                        "wiring",
                        f"{path}: {handler.event} runs the hook command for agent "
                        f"{call.agent!r} on {call.spec}, not {agent!r} on {spec}",
                        f"replace it with what `{_print_config(options)}` prints",
                    )
                )
                continue
            ours.append(handler)
    wanted = snippet(agent, str(spec), options.task, options.env)["hooks"]
    target = files[0] if files else project / ".github" / "hooks" / "harnessweaver.json"
    fix = f"merge the `hooks` of `{_print_config(options)}` into {target}"
    for event, groups in wanted.items():
        matcher = groups[0].get("matcher")
        mine = [h for h in ours if h.event == event]
        if not mine:
            report.findings.append(Finding("wiring", f"{event} is not wired to {spec}", fix))
        elif matcher is not None and not any(_every_tool(h.matcher) for h in mine):
            seen = ", ".join(repr(h.matcher) for h in mine)
            report.findings.append(
                Finding(
                    "wiring",
                    f"{event} runs the hook command only for the tools matching {seen}: "
                    "other tools are never checked",
                    f"use the matcher {matcher!r} (every tool)",
                )
            )
    if ours and not any(f.check == "wiring" for f in report.findings):
        report.passed.append(f"every event with a hook point is wired to {spec}")
    return ours


def _every_tool(matcher: str | None) -> bool:
    return matcher in (None, "", "*", ".*")


def _check_enabled(agent: str, settings: dict[Path, dict[str, Any]], report: Report) -> None:
    """The agent's switches that turn every hook off without a word."""
    for path, doc in settings.items():
        if agent == "claude-code" and doc.get("disableAllHooks") is True:
            report.findings.append(
                Finding(
                    "enabled",
                    f"{path}: disableAllHooks is true: no hook runs",
                    "remove disableAllHooks",
                )
            )
        config = doc.get("hooksConfig")
        if agent == "gemini" and isinstance(config, dict):
            if config.get("enabled") is False:
                report.findings.append(
                    Finding(
                        "enabled",
                        f"{path}: hooksConfig.enabled is false: no hook runs",
                        "remove it or set it to true",
                    )
                )
            disabled = config.get("disabled")
            if isinstance(disabled, list) and "harnessweaver" in disabled:
                report.findings.append(
                    Finding(
                        "enabled",
                        f"{path}: hooksConfig.disabled lists harnessweaver",
                        "remove harnessweaver from the list",
                    )
                )


def _check_gemini_trust(
    project: Path, home: Path, settings: dict[Path, dict[str, Any]], report: Report
) -> None:
    """Gemini CLI runs no hook from its settings in a folder it does not trust (folder trust
    is on by default), and says so only in its debug log."""
    if os.environ.get("GEMINI_CLI_TRUST_WORKSPACE") == "true":
        return
    user = settings.get(home / ".gemini" / "settings.json", {})  # read in diagnose
    security = user.get("security") if isinstance(user.get("security"), dict) else {}
    trust = security.get("folderTrust") if isinstance(security, dict) else None
    if isinstance(trust, dict) and trust.get("enabled") is False:
        return
    path = Path(
        os.environ.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
        or home / ".gemini" / "trustedFolders.json"
    )
    rules = _read_json(path, report) or {}
    if _gemini_trusted(project, rules):
        report.passed.append(f"Gemini CLI trusts {project}")
        return
    report.findings.append(
        Finding(
            "trust",
            f"Gemini CLI does not trust {project}, so it runs none of its hooks there "
            "(it says so only in its debug log)",
            f'add "{project}": "TRUST_FOLDER" to {path} (or trust it in Gemini\'s /permissions)',
        )
    )


def _gemini_trusted(project: Path, rules: dict[str, Any]) -> bool:
    """Gemini's rule: the longest rule path containing the project decides; ``TRUST_PARENT``
    trusts the rule's parent."""
    where = project.resolve()
    best, level = -1, None
    for rule, value in rules.items():
        base = Path(rule).parent if value == "TRUST_PARENT" else Path(rule)
        if where.is_relative_to(base.resolve()) and len(rule) > best:
            best, level = len(rule), value
    return level in ("TRUST_FOLDER", "TRUST_PARENT")


def _check_codex_trust(
    options: HookOptions, project: Path, home: Path, wired: list[Handler], report: Report
) -> None:
    """Codex runs a hook only once its trust is recorded in the user's ``config.toml``, and a
    project's ``.codex/hooks.json`` only in a project it trusts; it skips the rest silently."""
    from . import trust

    config = codex_home(home) / "config.toml"
    events = [e for e, hook in AGENTS["codex"].events.items() if hook is not None]
    install = _print_config(options).replace("--print-config", "--install")
    for hooks_file in sorted({h.source for h in wired}):
        if hooks_file.is_relative_to(project) and not _codex_trusts_project(config, project):
            report.findings.append(
                Finding(
                    "trust",
                    f"Codex ignores {hooks_file}: the project {project} is not trusted",
                    f'add to {config}: [projects."{project}"] trust_level = "trusted"',
                )
            )
        commands = sorted({h.command for h in wired if h.source == hooks_file})
        found = [trust.check(hooks_file, config, command, events) for command in commands]
        for problem in (line for check in found for line in check.problems()):
            if "no hook runs the command" not in problem:  # the wiring check names those
                report.findings.append(Finding("trust", problem, f"`{install}` records it"))
        if all(check.ok for check in found):
            report.passed.append(f"Codex trusts every hook of {hooks_file}")


def _codex_trusts_project(config: Path, project: Path) -> bool:
    import tomllib

    try:
        doc = tomllib.loads(config.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False
    projects = doc.get("projects")
    entry = projects.get(str(project)) if isinstance(projects, dict) else None
    return isinstance(entry, dict) and entry.get("trust_level") == "trusted"


def _check_cursor_fail_closed(wired: list[Handler], report: Report) -> None:
    """Cursor lets the call through when a hook crashes or times out, unless the handler says
    ``failClosed: true``."""
    open_ = sorted({f"{h.source}: {h.event}" for h in wired if h.fail_closed is not True})
    for where in open_:
        report.findings.append(
            Finding(
                "fail-closed",
                f"{where} has no failClosed: true: a crash or a timeout of the hook lets the "
                "call through",
                'add "failClosed": true to the handler (as --print-config prints it)',
            )
        )
    if wired and not open_:
        report.passed.append("every Cursor handler fails closed")


def _check_command(command: str, project: Path, report: Report) -> None:
    call = hook_call(command, project)
    assert call is not None
    program = call.words[0]
    if shutil.which(program) is None:
        report.findings.append(
            Finding(
                "command",
                f"the agent cannot start {program!r}: not found on PATH",
                "write the command's full path (e.g. /srv/app/.venv/bin/harnessweaver)",
            )
        )
    else:
        report.passed.append(f"{program} is found")


# -- the dry run: the wired command, on a harmless tool call ------------------------------

_TOOL_EVENT = {"claude-code": "PreToolUse", "codex": "PreToolUse", "gemini": "BeforeTool"}


def _probe(agent: str, project: Path) -> dict[str, Any]:
    event = _TOOL_EVENT[agent]
    doc: dict[str, Any] = {
        "session_id": "harnessweaver-doctor",
        "transcript_path": None,
        "cwd": str(project),
        "hook_event_name": event,
        "tool_name": "run_shell_command" if agent == "gemini" else "Bash",
        "tool_input": {"command": "true"},
    }
    if agent == "gemini":
        doc["timestamp"] = "1970-01-01T00:00:00Z"
    else:
        doc["tool_use_id"] = "harnessweaver-doctor"
    return doc


def _check_answer(agent: str, command: str, project: Path, report: Report) -> None:
    """Run ``command`` as the agent does (``sh -c``, the event on stdin) on a private state
    database, and check that its answer is one the agent acts on."""
    with tempfile.TemporaryDirectory(prefix="harnessweaver-doctor-") as scratch:
        env = {
            **os.environ,
            "HARNESSWEAVER_HOOK_STATE": str(Path(scratch) / "state.sqlite3"),
            "HARNESSWEAVER_HOOK_WARM": "0",
            **{name: str(project) for name in _PROJECT_VARIABLES},
        }
        try:
            done = subprocess.run(
                ["/bin/sh", "-c", command],
                input=json.dumps(_probe(agent, project)).encode(),
                capture_output=True,
                cwd=project,
                env=env,
                timeout=DRY_RUN_TIMEOUT,
                check=False,
            )
        except subprocess.TimeoutExpired:
            problem = f"`{command}` gave no answer in {DRY_RUN_TIMEOUT:.0f} s"
            report.findings.append(Finding("answer", problem, "see why it hangs"))
            return
    problems = answer_problems(agent, done.returncode, done.stdout)
    fix = "run the command by hand on the event; upgrade harnessweaver, or remove the wrapper"
    for problem in problems:
        report.findings.append(Finding("answer", f"`{command}`: {problem}", fix))
    if not problems:
        report.passed.append(f"`{command}` answers a tool call in a form {agent} acts on")


def answer_problems(agent: str, code: int, stdout: bytes) -> list[str]:
    """The known traps of each protocol in one answer: exit statuses the agent reads as
    "go on", output it cannot parse, decisions it ignores."""
    title = AGENTS[agent].title
    if code not in (0, 2):
        return [f"exit status {code}: {title} reads it as 'go on' (only 2 blocks)"]
    if code == 2 or not stdout.strip():
        return []
    try:
        doc = json.loads(stdout)
    except (ValueError, RecursionError):
        return [f"stdout is not JSON: {title} ignores it and runs the tool"]
    if not isinstance(doc, dict):
        return [f"stdout is a JSON {type(doc).__name__}, not an object: {title} ignores it"]
    return _decision_problems(agent, doc)


def _decision_problems(agent: str, doc: dict[str, Any]) -> list[str]:
    specific = doc.get("hookSpecificOutput")
    if agent == "gemini" or not isinstance(specific, dict):
        return []
    problems = []
    if "permissionDecision" in specific and specific.get("hookEventName") != "PreToolUse":
        problems.append(
            "permissionDecision without hookEventName 'PreToolUse': the decision is ignored"
        )
    decision = specific.get("permissionDecision")
    if agent == "codex" and decision == "ask":
        problems.append("permissionDecision 'ask': Codex rejects it and runs the tool")
    if agent == "codex" and "updatedInput" in specific and decision != "allow":
        problems.append("updatedInput without permissionDecision 'allow': Codex ignores it")
    return problems


def render(options: HookOptions, report: Report) -> str:
    """The report as the command prints it."""
    lines = [f"harnessweaver hook doctor: {AGENTS[options.agent].title}, spec {options.spec}"]
    lines += [f"  ok    {line}" for line in report.passed]
    for finding in report.findings:
        problem = finding.problem.replace("\n", "\n        ")
        lines.append(f"  FAIL  [{finding.check}] {problem}")
        lines.append(f"        fix: {finding.fix}")
    count = len(report.findings)
    lines.append("no problems found" if not count else f"{count} problem(s) found")
    return "\n".join(lines)
