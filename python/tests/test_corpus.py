"""The conformance corpus, in process: every case under asyncio and trio, on this core.

``nox -s conformance`` runs the same cases through the driver and the testee protocol; this
is the fast developer loop, and the way the test suite covers both cores.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harnessweaver.conformance.cases import load_cases
from harnessweaver.conformance.matchers import compare_observation
from harnessweaver.conformance.testee import observe

CORPUS = Path(__file__).resolve().parents[2] / "conformance"
CASES = load_cases(CORPUS / "cases")
SAMPLES: dict[str, Any] = json.loads((CORPUS / "catalogue.json").read_text())["samples"]


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_case(case: Any, backend: str) -> None:
    actual = observe(dict(case.data), SAMPLES, backend)
    differences = compare_observation(case.data["then"], actual)
    assert not differences, "\n".join(map(str, differences))


def test_the_corpus_is_not_empty() -> None:
    assert len(CASES) >= 60
