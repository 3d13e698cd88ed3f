"""Shared settings of the hostile-value property tests (issue 28).

Each module here generates one class of hostile Python value (type names, codes and reasons,
warnings, modified events, nesting, plugin imports, threads, odd API values) and checks that the
bus answers with the one documented outcome or error, on whichever core the process runs
(``HARNESSWEAVER_CORE``). Both cores are held to the same expected answer, so a divergence
between them fails one of the two runs. ``HARNESSWEAVER_HOSTILE_EXAMPLES`` sets how many
examples each property tries: a few in ``nox -s tests``, many in ``nox -s fuzz``.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

__all__ = ["EXAMPLES", "hostile_settings"]

EXAMPLES = int(os.environ.get("HARNESSWEAVER_HOSTILE_EXAMPLES", "25"))

hostile_settings = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
