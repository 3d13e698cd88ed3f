"""Which core runs the bus: the compiled Rust core, or the pure-Python reference core.

``HARNESSWEAVER_CORE=rust`` insists on the compiled core, ``python`` selects the pure-Python
one, and unset (or ``auto``) prefers the compiled core and falls back, with a warning, when it
cannot be imported (a platform without a wheel). Both behave identically.
"""

from __future__ import annotations

import os
import warnings
from types import ModuleType
from typing import TYPE_CHECKING

__all__ = ["CORE", "core"]


def _load() -> ModuleType:
    wanted = os.environ.get("HARNESSWEAVER_CORE", "").strip().lower() or "auto"
    if wanted == "python":
        from . import _pycore

        return _pycore
    if wanted not in ("rust", "auto"):
        raise ImportError(f"HARNESSWEAVER_CORE must be 'rust', 'python' or 'auto', got {wanted!r}")
    try:
        from . import _core
    except ImportError as exc:
        if wanted == "rust":
            raise ImportError(
                "HARNESSWEAVER_CORE=rust, but the compiled core harnessweaver._core cannot be "
                f"imported ({exc}); install a wheel for this platform or build from source"
            ) from exc
        warnings.warn(
            f"harnessweaver: the compiled core cannot be imported ({exc}); using the "
            "pure-Python core, which behaves identically but is slower",
            RuntimeWarning,
            stacklevel=3,
        )
        from . import _pycore

        return _pycore
    return _core


if TYPE_CHECKING:
    from . import _pycore as core
else:
    core = _load()

CORE: str = core.CORE
"""``"rust"`` or ``"python"``: the core this process runs."""
