"""Hostile plugin imports through ``hw.load`` (issue 28): generated plugin modules whose import
raises each kind of ``BaseException`` (``SystemExit`` from ``sys.exit()``, ``GeneratorExit``,
``CancelledError``, a subclass of ``BaseException`` or of ``Exception``), from the module's body,
a function it calls or its ``__getattr__``, with a secret message, an odd type name (set on the
class, or a metaclass's ``__name__``) or a ``__str__`` that raises. Each is a ``SpecError`` whose
one problem is ``plugin_import_error`` naming the plugin and the type (docs/harness-spec.md,
"Plugins"), never the message; ``KeyboardInterrupt`` propagates. The same on both cores."""

from __future__ import annotations

import asyncio
import itertools
import re
import sys
import tempfile
from pathlib import Path

import pytest
from hostile_support import hostile_settings
from hypothesis import given
from hypothesis import strategies as st

import harnessweaver as hw

SECRET = "sk-hostile-plugin-7f3a9c"
UNNAMABLE = "UnnamedException"
DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_modules = itertools.count()

# What the module raises: (the code of its class, the name the problem shows).
BUILTIN = {
    "SystemExit": SystemExit,
    "GeneratorExit": GeneratorExit,
    "BaseException": BaseException,
    "CancelledError": asyncio.CancelledError,
    "Exception": Exception,
    "ValueError": ValueError,
    "RuntimeError": RuntimeError,
    "ImportError": ImportError,
    "ModuleNotFoundError": ModuleNotFoundError,
    "RecursionError": RecursionError,
    "MemoryError": MemoryError,
}


def shown(name: str) -> str:
    """The name a problem shows for a type named ``name`` (importfail.py's rule)."""
    return name if len(name) <= 128 and DOTTED.fullmatch(name) else UNNAMABLE


names = st.one_of(
    st.from_regex(DOTTED, fullmatch=True).filter(lambda n: len(n) <= 40),
    # empty, spaces, newlines, JSON... (a type's name holds no NUL and no lone surrogate)
    st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=60),
    st.just(f'{SECRET}\n{{"x": 1}}'),
    st.just("A" * 129),
)
messages = st.one_of(st.text(max_size=40), st.just("")).map(lambda text: f"{SECRET} {text}")


@st.composite
def modules(draw: st.DrawFn) -> tuple[str, str]:
    """A plugin module's code and the type name its failure shows."""
    base = draw(st.sampled_from(sorted(BUILTIN)))
    message = draw(messages)
    how = draw(st.sampled_from(["builtin", "subclass", "renamed", "metaclass", "bad str"]))
    lines = ["import asyncio", "import sys", ""]
    parent = "asyncio.CancelledError" if base == "CancelledError" else base
    expected = base
    if how == "builtin":
        lines.append(f"E = {parent}")
    elif how == "subclass":
        name = draw(st.from_regex(r"[A-Z][A-Za-z0-9_]{0,20}", fullmatch=True))
        lines += [f"class {name}({parent}):", "    pass", "", f"E = {name}"]
        expected = name
    elif how == "renamed":
        name = draw(names)
        lines += [f"class E({parent}):", "    pass", "", f"E.__name__ = {name!r}"]
        expected = shown(name)
    elif how == "metaclass":  # its __name__ property answers the secret: never read
        lines += [
            "class Meta(type):",
            f"    __name__ = property(lambda cls: {SECRET!r})",
            "",
            f"class E({parent}, metaclass=Meta):",
            "    pass",
        ]
        expected = "E"
    else:
        lines += [
            f"class E({parent}):",
            "    def __str__(self):",
            f"        raise RuntimeError({SECRET!r})",
            "",
            "    __repr__ = __str__",
        ]
        expected = "E"
    where = draw(st.sampled_from(["body", "function", "getattr", "sys.exit"]))
    if where == "sys.exit":
        return "\n".join(["import sys", f"sys.exit({message!r})", ""]), "SystemExit"
    raising = f"raise E({message!r})"
    if where == "body":
        lines.append(raising)
    elif where == "function":
        lines += ["def setup():", f"    {raising}", "", "setup()"]
    else:
        lines += ["def __getattr__(name):", f"    {raising}"]
    return "\n".join(lines) + "\n", expected


def load_plugin(code: str) -> tuple[str, BaseException | None]:
    """``hw.load`` of a spec listing one new module holding ``code``: its name, what it
    raised (``None``: it loaded)."""
    module = f"hw_hostile_plugin_{next(_modules)}"
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / f"{module}.py").write_text(code, encoding="utf-8")
        spec = Path(folder) / "harness.yaml"
        spec.write_text(f"plugins: {{local: [{module}]}}\n", encoding="utf-8")
        try:
            hw.load(spec)
        except BaseException as exc:  # what escaped is the observation
            return module, exc
        finally:
            sys.modules.pop(module, None)
    return module, None


@hostile_settings
@given(modules())
def test_a_plugin_whose_import_raises_is_a_spec_error_naming_it(module: tuple[str, str]) -> None:
    code, expected = module
    name, raised = load_plugin(code)
    assert isinstance(raised, hw.SpecError), repr(raised)
    (problem,) = raised.problems
    assert (problem.kind, problem.rule, problem.item) == (
        "plugin_import_error",
        "plugins",
        "plugins.local[0]",
    )
    assert problem.message == (
        f"cannot import {name}: {expected} (its message is not shown) (plugins)"
    )
    assert SECRET not in str(raised)


@hostile_settings
@given(where=st.sampled_from(["body", "function", "getattr"]), subclass=st.booleans())
def test_keyboard_interrupt_propagates(where: str, subclass: bool) -> None:
    lines = (
        ["class Stop(KeyboardInterrupt):", "    pass", ""]
        if subclass
        else ["Stop = KeyboardInterrupt"]
    )
    raising = f"raise Stop({SECRET!r})"
    lines += {
        "body": [raising],
        "function": ["def setup():", f"    {raising}", "", "setup()"],
        "getattr": ["def __getattr__(name):", f"    {raising}"],
    }[where]
    _, raised = load_plugin("\n".join(lines) + "\n")
    assert isinstance(raised, KeyboardInterrupt)


def test_the_generated_kinds_are_the_ones_python_has() -> None:
    """Guards the table above: each kind is what its name says (CancelledError is a
    BaseException since Python 3.8: it would escape an ``except Exception``)."""
    assert all(kind.__name__ == name for name, kind in BUILTIN.items())
    assert not issubclass(asyncio.CancelledError, Exception)
    with pytest.raises(SystemExit):
        sys.exit(SECRET)
