"""Random but valid conformance cases, for differential testing (``harnessweaver fuzz``).

The strategies build cases in the corpus format (INTERPRETING.md §2-§4) from the closed
behaviour vocabulary: chains across all four bands and several registration orders, inbound and
outbound hook points, every outcome, modifications, every failure kind under both fail modes,
timeouts, registration overrides, several emits in a row, concurrent emits, and now and then a
declaration error, an odd declaration value (I17: lone surrogates, padded or non-ASCII text,
sub-nanosecond and overflowing timeouts, mixed hook lists), an outcome holding a lone surrogate
(I16) or texts at and past their bounds (I28), a raise of a hostile type name (I28: empty, long,
a line break, JSON, non-ASCII), a stray cancellation (I15), an event whose step or tool name a
record must leave out or mend (I21), or a matcher (I22: tool and model patterns, a registration
narrowing or widening one, an invalid one; events with tool and model names that match or not,
or are not text), a mode (I25: audited middleware, declared or by override, a baseline one now
and then, an invalid mode), a chain deadline (I26: a hook point's or an emit's own, spent,
generous or invalid), or content identities (I27), with tool arguments at the edges of I-JSON.
Nothing here knows the expected result: implementations are compared with each other.

Timeouts are generated only in combinations that machine load cannot flip: a timeout that
must fire is 1 ms on a middleware that sleeps 30 s (interrupted) or blocks for 10 ms without
suspending (a late answer, ruling 10), either of which takes longer than 1 ms however fast the
machine is; a timeout that must not fire is 30 s on a middleware that never sleeps. Chain
deadlines (I26) likewise: 0 (every middleware is skipped, nothing is timed) or 30 s (which
never passes, so a 1 ms timeout stays the earlier limit), never one that could race.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from hypothesis import strategies as st

__all__ = ["cases"]

Json = dict[str, Any]

NAMES = ("a", "b", "c", "d", "e", "f", "g", "h")
BANDS = ("baseline", "platform", "app", "task")
# Hook points whose events all have a `step` field, in both directions.
HOOKS = ("tool.before", "tool.after", "model.before", "model.after", "step.start", "step.end")
TOOL_HOOKS = frozenset({"tool.before", "tool.after"})
REASONS = ("policy", "needs review", "try later")
CODES = (None, "policy", "cap")
# Texts that are no valid text (I16): an outcome holding one is an invalid return.
BAD_TEXTS = ("r\udcff", "\ud800", "\udcffx")
# Steps and tool names a record shows, or leaves out, alike in every implementation (I21): out
# of range on either side and at the bounds; text UTF-8 cannot carry, empty, non-ASCII. Only
# integers a JSON number holds exactly in every language: an event's own JSON form (§6.3) of
# a larger one differs between Python and TypeScript, whatever its trace records say. The
# Python tests take steps past 64 bits (python/tests/test_trace_correlation.py).
STEPS = (-1, -(2**53), 2**53 - 1, 2**53)
TOOL_NAMES = ("sh\udcff", "\ud800x", "", "r\u00e9sum\u00e9")
# Declaration values every implementation must judge alike (I17), each one invalid, so that
# none of them can turn a sure timing into a race: field -> values.
ODD_VALUES: dict[str, tuple[Any, ...]] = {
    "name": ("\udcff", "g\udcff", " a", "\u00e9", "a\n", "a\uff11", "a..b"),
    "hooks": (["\udcff"], ["nope", 5], [5, "nope"], [" tool.before"], ["TOOL.BEFORE"]),
    "band": ("\udcff", " app", "APP"),
    "fail_mode": ("\udcff", "Open", " closed"),
    "timeout": (
        "\udcff", "2s\udcff", "1e3s", " 2s", "\uff12s", "0.0000004ms", "307445735m",
        5e-324, 4e-10, 18446744074, [2], {"s": 2},
    ),
}  # fmt: skip
ERRORS = ("ValueError", "RuntimeError", "KeyError", "PolicyError")
# Type names every implementation must record alike (I28): kept (dotted, at the 128 bound) or
# recorded as UnnamedException (empty, past the bound, a line break, JSON, a token, non-ASCII,
# misplaced dots, a leading digit, `$`, outside the BMP). None holds NUL or a lone surrogate:
# Python can make no class of such a name.
HOSTILE_ERRORS = (
    "payments.CardDeclined", "E" * 128, "", "E" * 129, "Boom" * 1250, "line\nbreak",
    '{"token":"sk-live-x"}', "sk-live-x", "\u00c4rger", "a..b", ".a", "a.", "9Lives", "$Err",
    "E\U0001f600",
)  # fmt: skip
# Outcome texts at and past their bounds (I28: reason 4,096 code points, code, approver_role
# and to 128), some outside the BMP: past the bound, the answer is an invalid return.
LONG_REASONS = ("r" * 4096, "r" * 4097, "\U0001f600" * 4096, "\U0001f600" * 4097)
LONG_TOKENS = ("c" * 128, "c" * 129, "\U0001f600" * 128, "\U0001f600" * 129, "x" * 5000)
# Chain deadlines (I26) no machine load can flip: an emit's own (spent, generous or invalid:
# an invalid_deadline error) and a hook point's (generous only: a bus that cannot be built
# is no observation).
EMIT_DEADLINES: tuple[Any, ...] = (0, "0s", "0ms", "30s", 30, "-1s", "soon", True, [1])  # 5 valid
HOOK_DEADLINES: tuple[Any, ...] = ("30s", 30, "0.5m")
# Matchers (I22): patterns for the tool and model names emits carry, and invalid matchers.
TOOL_PATTERNS = ("refund_*", "refund_payment", "r?fund_*", "*", "web_*", "*_x", "\u00e9*")
MODEL_PATTERNS = ("scripted", "s*", "gpt-*", "?")
EMIT_TOOLS = ("refund_payment",) * 3 + TOOL_NAMES + ("web_search", "refund_x")
EMIT_MODELS = ("scripted", "gpt-5", "claude", "", "m\udcff")
# Tool arguments at the edges of I-JSON, which content identity (I27) must judge alike: inside,
# outside (an integer or an integral float beyond 2^53 - 1, a lone surrogate in a value or a
# key) and forms RFC 8785 rewrites (key order, float spelling, non-ASCII keys).
EMIT_ARGUMENTS: tuple[dict[str, Any], ...] = (
    {},
    {"n": 2**53 - 1, "m": -(2**53 - 1)},
    {"n": 2**53},
    {"f": 1e21},
    {"f": [0.5, -0.0, 1e-7, 3.0, 2.5e-9]},
    {"s": "\ud800"},
    {"\udc00": 1},
    {"z": 1, "\ue000": 2, "\U0001f600": 3, "a": {"y": None, "x": True}},
)
ODD_MATCHES: tuple[Any, ...] = (
    {}, "refund_*", ["refund_*"], {"tool": []}, {"tool": [""]}, {"tool": "x" * 129},
    {"tool": ["x"] * 33}, {"tool": 5}, {"tool": ["ok", 5]}, {"tool": "\udcff"}, {"tools": "x"},
    {"tool": "x", "other": 1}, {"model": "gpt-*", "tool": {"a": 1}},
)  # fmt: skip

# Modes (I25): invalid ones every implementation must judge alike.
ODD_MODES: tuple[Any, ...] = ("Audit", "audit ", "\udcff", "dry_run", "", 0, True, ["audit"])

_values = st.one_of(
    st.text(alphabet="xyz ", max_size=3),
    st.integers(-3, 3),
    st.booleans(),
    st.lists(st.integers(0, 2), max_size=2),
    st.dictionaries(st.sampled_from(("k", "v")), st.integers(0, 2), max_size=1),
)


# Warnings (I24): valid lists (empty texts, past the bounds of 8 texts and 256 code points,
# outside the BMP) and, now and then, values that make the answer an invalid return.
_WARNING_TEXTS = ("w", "", "careful", "\U0001f600" * 257, "x" * 300, "\u00e9" * 256)
_BAD_WARNINGS: tuple[Any, ...] = ("w", 5, {"w": 1}, ["w", 1], ["w", "\udcff"], [None])
_warnings = st.one_of(
    st.lists(st.sampled_from(_WARNING_TEXTS), max_size=3),
    st.lists(st.sampled_from(_WARNING_TEXTS), min_size=8, max_size=11),
    st.sampled_from(_BAD_WARNINGS),
)


def _warned(answers: st.SearchStrategy[Json]) -> st.SearchStrategy[Json]:
    """``answers``, about one in three carrying warnings (I24)."""
    return st.one_of(
        answers,
        answers,
        st.builds(lambda a, w: {**a, "warnings": w}, answers, _warnings),
    )


def _modified_as() -> st.SearchStrategy[Json]:
    return st.builds(lambda h: {"return": "continue", "modified_as": h}, st.sampled_from(HOOKS))


@cache  # building a strategy is costly for hypothesis; reuse them
def _modify(name: str, hooks: tuple[str, ...]) -> st.SearchStrategy[Json]:
    changes = [st.builds(lambda n: {"set": {"step": n}}, st.integers(0, 9))]
    if set(hooks) <= TOOL_HOOKS:  # only tool events have call.arguments
        changes.append(st.just({"append": {"call.arguments.trail": name}}))
    return st.builds(lambda m: {"return": "continue", "modify": m}, st.one_of(changes))


@cache
def _outcome() -> st.SearchStrategy[Json]:
    # Now and then (about one in ten) a text that is not text (I16), or one at or past its
    # bound (I28).
    reason = st.one_of(st.sampled_from(REASONS * 3 + BAD_TEXTS[:1]), st.sampled_from(LONG_REASONS))
    code = st.one_of(st.sampled_from(CODES * 3 + BAD_TEXTS[1:2]), st.sampled_from(LONG_TOKENS))
    role = st.sampled_from(("finance", "ops", "finance", "ops", BAD_TEXTS[2], *LONG_TOKENS[:2]))
    to = st.sampled_from(("oncall",) * 6 + LONG_TOKENS[:2])

    def with_code(base: Json, c: str | None) -> Json:
        return base if c is None else {**base, "code": c}

    return st.one_of(
        st.builds(lambda r, c: with_code({"return": "block", "reason": r}, c), reason, code),
        st.builds(
            lambda r, a, c: with_code({"return": "suspend", "reason": r, "approver_role": a}, c),
            reason,
            role,
            code,
        ),
        st.builds(
            lambda r, t, c: with_code({"return": "escalate", "reason": r, "to": t}, c),
            reason,
            to,
            code,
        ),
        st.builds(
            lambda r, d, n: {"return": "retry", "reason": r, "delay": d, "max_attempts": n},
            reason,
            st.sampled_from((0.5, 2)),
            st.sampled_from((1, 3)),
        ),
    )


@cache
def _leaf(name: str, hooks: tuple[str, ...]) -> st.SearchStrategy[Json]:
    return st.one_of(
        st.just({"return": "none"}),
        _warned(st.just({"return": "continue"})),
        _warned(_modify(name, hooks)),
        _warned(_modified_as()),
        _warned(_outcome()),
        st.builds(lambda v: {"return": "value", "value": v}, _values),
        st.builds(lambda e: {"raise": e, "message": "sk-secret-1"}, st.sampled_from(ERRORS)),
        st.builds(
            lambda e: {"raise": e, "message": "sk-secret-1"}, st.sampled_from(HOSTILE_ERRORS)
        ),
        st.just({"raise_cancelled": True}),  # a stray cancellation (I15)
    )


@cache
def _behaviour(name: str, hooks: tuple[str, ...], ordered: bool) -> st.SearchStrategy[Json]:
    """``ordered``: calls happen in a known order, so a ``sequence`` is deterministic."""
    leaf = _leaf(name, hooks)
    condition = st.one_of(
        st.builds(lambda n: {"path": "step", "greater_than": n}, st.integers(0, 5)),
        st.builds(lambda n: {"path": "step", "equals": n}, st.integers(0, 2)),
        st.builds(lambda w: {"weekend": w}, st.booleans()),
    )
    return st.one_of(
        leaf,
        leaf,
        st.builds(lambda b: {"sleep": 0, "then": b}, leaf),
        st.builds(lambda c, t, e: {"if": c, "then": t, "else": e}, condition, leaf, leaf),
        *(
            [st.builds(lambda bs: {"sequence": bs}, st.lists(leaf, min_size=1, max_size=3))]
            if ordered
            else []
        ),
    )


def _now_and_then(draw: st.DrawFn, one_in: int) -> bool:
    """True once in ``one_in`` draws. The draw that says yes is the largest, so shrinking (which
    lowers draws) turns an extra off: a minimal case keeps only what its divergence needs."""
    return bool(draw(st.integers(0, one_in - 1)) == one_in - 1)


@cache
@st.composite
def _declaration(draw: st.DrawFn, name: str, pool: tuple[str, ...], ordered: bool) -> Json:
    hooks = tuple(draw(st.lists(st.sampled_from(pool), min_size=1, max_size=2, unique=True)))
    band = draw(st.sampled_from(BANDS))
    # Baseline middleware fail closed (R2); now and then an open one tests the error.
    open_ok = band != "baseline" or _now_and_then(draw, 20)
    fail_mode = draw(st.sampled_from(("closed", "open") if open_ok else ("closed",)))
    timing = draw(st.sampled_from(("none", "none", "none", "safe", "cancelled", "late")))
    does = draw(_behaviour(name, hooks, ordered))
    decl: Json = {"name": name, "hooks": list(hooks), "fail_mode": fail_mode, "band": band}
    if timing == "safe":
        decl["timeout"] = draw(st.sampled_from(("30s", 30, "18446744073.709551615s")))
    elif timing == "cancelled":
        decl["timeout"], does = "1ms", {"sleep": 30, "then": does}
    elif timing == "late":
        decl["timeout"], does = "1ms", {"busy": 0.01, "then": does}
    decl["does"] = does
    match = draw(_match(hooks))
    if match is not None:
        decl["match"] = match
    mode = draw(_mode(band))
    if mode is not None:
        decl["mode"] = mode
    if _now_and_then(draw, 25):  # an odd value in one field (I17)
        field = draw(st.sampled_from(sorted(ODD_VALUES)))
        decl[field] = draw(st.sampled_from(ODD_VALUES[field]))
    overrides = draw(_overrides(hooks))
    if overrides:
        decl["register"] = overrides
    return decl


@cache
@st.composite
def _mode(draw: st.DrawFn, band: str | None) -> Any:
    """Now and then a mode (I25): mostly audit, sometimes enforce, rarely an invalid one; on a
    baseline middleware audit only rarely (baseline_audit_not_org); ``None`` for none. None
    comes first, so that shrinking a case drops the mode before anything else."""
    roll = draw(st.integers(0, 39))
    if roll < (34 if band == "baseline" else 26):
        return None
    if roll < 36:
        return "audit"
    if roll < 39:
        return "enforce"
    return draw(st.sampled_from(ODD_MODES))


def _carried(hooks: tuple[str, ...]) -> tuple[str, ...]:
    """The match keys (I22) the hook points carry."""
    return (("tool",) if set(hooks) & TOOL_HOOKS else ()) + (
        ("model",) if "model.before" in hooks else ()
    )


@cache
@st.composite
def _match(draw: st.DrawFn, hooks: tuple[str, ...]) -> Any:
    """Now and then a matcher (I22) over the keys the hook points carry (or, rarely, one they
    do not carry, or an invalid one); ``None`` for none."""
    roll = draw(st.integers(0, 19))
    if roll == 0:
        return draw(st.sampled_from(ODD_MATCHES))
    keys = _carried(hooks) or (("model",) if roll == 1 else ())
    if roll > 6 or not keys:
        return None
    match: Json = {}
    for key in keys:
        pool = TOOL_PATTERNS if key == "tool" else MODEL_PATTERNS
        patterns = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=3))
        match[key] = patterns[0] if len(patterns) == 1 and draw(st.booleans()) else patterns
    return match


@cache
@st.composite
def _overrides(draw: st.DrawFn, hooks: tuple[str, ...]) -> Json:
    overrides: Json = {}
    if _now_and_then(draw, 4):
        overrides["band"] = draw(st.sampled_from(BANDS))
    if len(hooks) > 1 and draw(st.booleans()):
        overrides["hooks"] = [draw(st.sampled_from(hooks))]
    if _now_and_then(draw, 6):
        overrides["fail_mode"] = "closed"
    if _now_and_then(draw, 10):
        # Only invalid ones: a valid new timeout could turn a sure timing into a race.
        overrides["timeout"] = draw(st.sampled_from(("2 s", 0, -1)))
    if _now_and_then(draw, 8):  # a matcher that narrows, widens or is invalid (I22)
        match = draw(_match(hooks))
        if match is not None:
            overrides["match"] = match
    if _now_and_then(draw, 8):  # audit or enforce, whatever was declared (I25)
        mode = draw(_mode(overrides.get("band")))
        if mode is not None:
            overrides["mode"] = mode
    if _now_and_then(draw, 30):  # an odd override (I17)
        field = draw(st.sampled_from(sorted(ODD_VALUES)))
        overrides[field] = draw(st.sampled_from(ODD_VALUES[field]))
    return overrides


@cache
@st.composite
def _emit(draw: st.DrawFn, pool: tuple[str, ...], context: str = "main") -> Json:
    step: Json = {"emit": draw(st.sampled_from(pool))}
    if context != "main":
        step["context"] = context
    if _now_and_then(draw, 4) and step["emit"] == "model.before":
        step["event"] = {
            "step": 1,
            "request": {"model": draw(st.sampled_from(EMIT_MODELS)), "messages": [], "tools": []},
        }
    if _now_and_then(draw, 4) and "tool.before" in pool and step["emit"] == "tool.before":
        tool = draw(st.sampled_from(EMIT_TOOLS))
        step["event"] = {
            "step": draw(st.one_of(st.integers(0, 6), st.sampled_from(STEPS))),
            "tool": {"name": tool, "description": "", "parameters": {}},
            "call": {"id": "c", "name": tool, "arguments": draw(st.sampled_from(EMIT_ARGUMENTS))},
        }
    if _now_and_then(draw, 8):  # the emit's own chain deadline (I26)
        # An error ends the case: not inside a concurrent group, whose other emit may be
        # anywhere by then.
        valid = context != "main"
        step["deadline"] = draw(st.sampled_from(EMIT_DEADLINES[:5] if valid else EMIT_DEADLINES))
    return step


@st.composite
def cases(draw: st.DrawFn) -> Json:
    """One random case in the corpus format, with an empty ``then``."""
    pool = tuple(draw(st.lists(st.sampled_from(HOOKS), min_size=1, max_size=2, unique=True)))
    names = draw(st.lists(st.sampled_from(NAMES[:6]), max_size=5, unique=True))
    kinds = draw(
        st.lists(
            st.sampled_from(("emit", "emit", "emit", "register", "concurrent")),
            min_size=1,
            max_size=3,
        )
    )
    # Concurrent emits call middleware in an order the backend's scheduler picks, so a
    # `sequence` (k-th call does k-th thing) would make the case order-dependent.
    ordered = "concurrent" not in kinds
    middleware = [draw(_declaration(name, pool, ordered)) for name in names]
    when: list[Json] = []
    for kind in kinds:
        if kind == "register" and len(names) < len(NAMES):
            spare = next(n for n in NAMES if n not in names)
            names.append(spare)
            when.append({"register": draw(_declaration(spare, pool, ordered))})
        elif kind == "concurrent":
            when.append({"concurrent": [draw(_emit(pool, "left")), draw(_emit(pool, "right"))]})
        else:
            when.append(draw(_emit(pool)))
    if _now_and_then(draw, 4):
        now = draw(st.sampled_from(("2026-11-28T10:00:00+00:00", "2026-11-30T10:00:00+00:00")))
        given: Json = {"envelope": {"now": now}, "middleware": middleware}
    else:
        given = {"middleware": middleware}
    if _now_and_then(draw, 8):  # a hook point's chain deadline (I26)
        given["deadlines"] = {draw(st.sampled_from(pool)): draw(st.sampled_from(HOOK_DEADLINES))}
    if _now_and_then(draw, 4):  # content identities on hook records (I27)
        given["identity"] = "jcs-sha256"
    return {
        "id": "fuzz.generated",
        "description": "A generated case.",
        # What a generated case exercises in general; refine before committing one.
        "rules": ["rule-1", "rule-3", "rule-4"],
        "given": given,
        "when": when,
        "then": {"emits": []},
    }
