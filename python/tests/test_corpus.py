"""The conformance corpus, in process: every case under asyncio and trio, on this core.

``nox -s conformance`` runs the same cases through the driver and the testee protocol; this
is the fast developer loop, and the way the test suite covers both cores.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from checkout import CORPUS

from harnessweaver.conformance.cases import load_cases
from harnessweaver.conformance.matchers import compare_observation
from harnessweaver.conformance.testee import FEATURES, observe

CASES = load_cases(CORPUS / "cases")
SAMPLES: dict[str, Any] = json.loads((CORPUS / "catalogue.json").read_text())["samples"]


SUPPORTED = set(FEATURES)  # what the Python testee declares in its hello
RUNNABLE = [case for case in CASES if set(case.data.get("features", ())) <= SUPPORTED]


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@pytest.mark.parametrize("case", RUNNABLE, ids=[case.id for case in RUNNABLE])
def test_case(case: Any, backend: str) -> None:
    actual = observe(dict(case.data), SAMPLES, backend)
    differences = compare_observation(case.data["then"], actual)
    assert not differences, "\n".join(map(str, differences))


def test_the_corpus_is_not_empty() -> None:
    assert len(CASES) >= 60


@pytest.mark.parametrize(
    "does",
    [{"unregister": "nobody", "then": {"return": "none"}}, {"dance": True}],
    ids=["refused-unregister", "unknown-behaviour"],
)
def test_a_behaviour_the_runner_cannot_carry_out_faults_the_case(does: dict[str, Any]) -> None:
    from harnessweaver.conformance.behaviours import CaseFault

    case = {
        "given": {
            "middleware": [
                {"name": "a", "hooks": ["tool.before"], "fail_mode": "open", "does": does}
            ]
        },
        "when": [{"emit": "tool.before"}],
    }
    with pytest.raises(CaseFault):
        observe(case, SAMPLES, "asyncio")
