"""The layers of a harness spec and the band each gives the middleware it declares.

hook-bus.md, "Where bands come from": the layer that declares a middleware sets its band (the
decorator's band is only the default for direct registration); a spec item may restate it or
move it inward, never outward (ruling 16); only profiles put middleware in baseline (S8,
ruling 17). The same rules as the Rust core's ``layer.rs``; I13 names the layers.
"""

from __future__ import annotations

from typing import Final

from .._plain import plain_str
from ..errors import error_for
from .declaration import BAND_INDEX, BandRule, Declaration, override_from
from .error import shown, value_error

__all__ = ["LAYERS", "declare_in"]

LAYERS: Final = {
    "org_profile": "baseline",
    "plugin_profile": "baseline",
    "profile_file": "baseline",
    "builtin_profile": "platform",
    "framework": "platform",
    "app": "app",
    "env": "app",
    "task": "task",
}
"""Every layer and the band it gives (I13)."""


def check_layer(layer: object) -> str:
    layer = plain_str(layer)
    if not isinstance(layer, str) or layer not in LAYERS:
        raise value_error("register", "unknown_layer", "layer", shown(layer))
    return layer


def band_rule(layer: str) -> BandRule:
    """Ruling 16 and S8 for spec items of ``layer``: a function of (name, band)."""
    own = LAYERS[layer]

    def allow(name: str, band: str) -> None:
        if BAND_INDEX[band] >= BAND_INDEX[own]:
            return
        if band == "baseline":
            raise error_for(
                "register",
                "baseline_outside_profile",
                "S8",
                f"middleware '{name}' declared in the {layer} layer cannot be placed in band "
                "'baseline': only profiles (org profiles, plugin profiles, profile files) put "
                "middleware in baseline (S8)",
            )
        raise error_for(
            "register",
            "band_outward",
            "ruling-16",
            f"middleware '{name}' declared in the {layer} layer (band {own}) cannot move out to "
            f"band '{band}': a spec item may restate its layer's band or move it inward, never "
            "outward (ruling 16)",
        )

    return allow


def declare_in(
    decl: Declaration,
    layer: object,
    *,
    name: object = None,
    band: object = None,
    hooks: object = None,
    fail_mode: object = None,
    timeout: object = None,
    match: object = None,
    mode: object = None,
) -> Declaration:
    """A middleware as a spec item of ``layer`` declares it, without registering it."""
    checked = check_layer(layer)
    allow = band_rule(checked)
    org = checked == "org_profile"
    return override_from(
        decl, LAYERS[checked], name, hooks, band, fail_mode, timeout, allow, match, mode, org
    )
