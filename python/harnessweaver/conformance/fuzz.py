"""Differential testing: generated cases through every implementation, compared with each other.

``harnessweaver fuzz [--count 2000] [--seed N] [--impl NAME ...]`` draws cases from
``generate.cases`` with hypothesis, runs each through every implementation (in parallel, one
testee process each, kept alive), and compares their canonical observations. A divergence (or
an implementation erroring, or the secret of a ``raise`` showing up anywhere: R9) is shrunk by
hypothesis to a minimal case, printed as a ready-to-commit case file whose ``then`` is the
first implementation's observation, and fails the run. The seed is printed so a run can be
reproduced exactly.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from harnessweaver.conformance.canonical import canonical_json, case_file_json, strip_timings
from harnessweaver.conformance.driver import Implementation
from harnessweaver.conformance.matchers import first_difference
from harnessweaver.conformance.protocol import Observed, ProtocolSchema, Testee

__all__ = ["Divergence", "FuzzRun", "fuzz"]

SECRET = "sk-secret-1"


@dataclass(frozen=True, slots=True)
class Divergence:
    """What the implementations did differently on one case."""

    case: dict[str, Any]
    answers: dict[str, str]  # implementation → canonical observation (or the problem)
    problem: str


@dataclass(slots=True)
class FuzzRun:
    seed: int
    count: int = 0
    divergence: Divergence | None = None


class _Pool:
    """One running testee per implementation; a case goes to all of them at once."""

    def __init__(
        self,
        impls: Sequence[Implementation],
        stack: ExitStack,
        corpus: Path | None,
        schema: ProtocolSchema | None,
    ):
        self.names = [impl.name for impl in impls]
        self.testees = [
            stack.enter_context(
                Testee(impl.command, timeout=60.0, env=impl.environment(corpus), schema=schema)
            )
            for impl in impls
        ]
        for testee in self.testees:
            testee.start()
        self.executor = stack.enter_context(ThreadPoolExecutor(len(self.testees)))

    def answers(self, case: dict[str, Any]) -> dict[str, str]:
        results = list(self.executor.map(lambda t: t.run(case), self.testees))
        return dict(zip(self.names, map(_describe, results), strict=True))


def _describe(answer: object) -> str:
    if isinstance(answer, Observed):
        return canonical_json(strip_timings(answer.actual))
    return f"!{type(answer).__name__}: {answer}"


def _problem(answers: dict[str, str]) -> str | None:
    texts = list(answers.values())
    broken = [name for name, text in answers.items() if text.startswith("!")]
    if broken:
        return f"{', '.join(broken)} did not answer with an observation"
    leaked = [name for name, text in answers.items() if SECRET in text]
    if leaked:
        return f"an exception message reached the observation of {', '.join(leaked)} (R9)"
    if len(set(texts)) > 1:
        first = json.loads(texts[0])
        for name, text in list(answers.items())[1:]:
            where = first_difference(first, json.loads(text))
            if where is not None:
                return f"{next(iter(answers))} and {name} differ at {where}"
    return None


def fuzz(
    impls: Sequence[Implementation],
    *,
    count: int,
    seed: int,
    corpus: Path | None = None,
    progress: TextIO | None = None,
    schema: ProtocolSchema | None = None,
) -> FuzzRun:
    """Run ``count`` generated cases through ``impls``; stop at the first divergence. With
    ``schema`` every message a testee sends is checked against the protocol schema (a message
    that breaks it is that testee's crash, so a divergence)."""
    from hypothesis import HealthCheck, Phase, find, settings
    from hypothesis.errors import NoSuchExample

    from harnessweaver.conformance.generate import cases

    run = FuzzRun(seed)
    problems: dict[str, tuple[dict[str, str], str]] = {}
    with ExitStack() as stack:
        pool = _Pool(impls, stack, corpus, schema)

        def diverges(case: dict[str, Any]) -> bool:
            run.count += 1
            if progress is not None and run.count % 100 == 0:
                progress.write(f"  {run.count} cases\n")
                progress.flush()
            answers = pool.answers(case)
            problem = _problem(answers)
            if problem is not None:
                problems[canonical_json(case)] = (answers, problem)
            return problem is not None

        config = settings(
            max_examples=count,
            database=None,
            deadline=None,
            phases=[Phase.generate, Phase.shrink],
            suppress_health_check=list(HealthCheck),
        )
        try:
            minimal = find(cases(), diverges, settings=config, random=random.Random(seed))
        except NoSuchExample:
            return run
        answers, problem = problems[canonical_json(minimal)]
        run.divergence = Divergence(minimal, answers, problem)
    return run


def _digest(case: dict[str, Any]) -> str:
    return hashlib.sha256(canonical_json(case).encode()).hexdigest()[:10]


def case_file(divergence: Divergence) -> dict[str, Any]:
    """The minimal case as a topic file, expecting what the first implementation observed.

    Its id is stable for the same case (a digest of it); rename it to say what it pins.
    """
    first = next(iter(divergence.answers.values()))
    then = json.loads(first) if not first.startswith("!") else {"emits": []}
    if then.get("error") is None:
        then.pop("error", None)
    case = {
        **divergence.case,
        "id": f"fuzz.divergence-{_digest(divergence.case)}",
        "description": f"Found by harnessweaver fuzz: {divergence.problem}.",
        "then": then,
    }
    return {
        "$schema": "../../schema/case.schema.json",
        "topic": "fuzz",
        "description": "Divergences found by differential testing.",
        "cases": [case],
    }


def report(run: FuzzRun, out: TextIO = sys.stdout, case_out: Path | None = None) -> int:
    """Print the outcome; 0 when every generated case agreed. ``case_out`` also gets the file."""
    if run.divergence is None:
        out.write(f"FUZZ PASSED: {run.count} generated cases agreed (seed {run.seed})\n")
        return 0
    found = run.divergence
    out.write(f"FUZZ FAILED after {run.count} cases (seed {run.seed}): {found.problem}\n")
    for name, text in found.answers.items():
        out.write(f"--- {name}\n{text}\n")
    text = case_file_json(case_file(found)) + "\n"
    out.write("--- ready-to-commit case file (check which side is right first):\n" + text)
    if case_out is not None:
        case_out.write_text(text, encoding="utf-8")
        out.write(f"written to {case_out}\n")
    return 1


def configure(parser: argparse.ArgumentParser) -> None:
    """The options of ``harnessweaver fuzz``."""
    parser.add_argument("--count", type=int, default=2000, help="cases to generate (default 2000)")
    parser.add_argument("--seed", type=int, help="reproduce a run (default: a random seed)")
    parser.add_argument(
        "--out", type=Path, metavar="FILE", help="also write a divergence's case file here"
    )
    parser.add_argument(
        "--impl",
        action="append",
        default=[],
        metavar="NAME[=COMMAND]",
        help="implementations to compare, as for `harnessweaver conformance` (default: all)",
    )


def run_command(args: argparse.Namespace) -> int:
    """``harnessweaver fuzz``: exit 0 when everything agreed, 1 on a divergence, 2 on misuse."""
    from harnessweaver.conformance.cases import CorpusNotFound, find_corpus
    from harnessweaver.conformance.driver import ImplementationError, resolve_implementations
    from harnessweaver.conformance.protocol import ProtocolSchemaError

    try:
        impls = resolve_implementations(args.impl)
        corpus = find_corpus()
        schema = ProtocolSchema.load(corpus)
    except (ImplementationError, CorpusNotFound, ProtocolSchemaError) as exc:
        print(f"harnessweaver fuzz: error: {exc}", file=sys.stderr)
        return 2
    if len(impls) < 2 or args.count < 1:
        print(
            "harnessweaver fuzz: error: needs two implementations and --count >= 1", file=sys.stderr
        )
        return 2
    try:
        import hypothesis  # noqa: F401
    except ImportError:
        print(
            "harnessweaver fuzz: error: needs hypothesis, the `fuzz` extra"
            " (from a clone: pip install '.[fuzz]')",
            file=sys.stderr,
        )
        return 2
    seed = random.randrange(2**32) if args.seed is None else args.seed
    names = ", ".join(impl.name for impl in impls)
    print(f"fuzzing {names} with {args.count} cases, seed {seed}", file=sys.stderr, flush=True)
    run = fuzz(
        impls, count=args.count, seed=seed, corpus=corpus, progress=sys.stderr, schema=schema
    )
    return report(run, sys.stdout, args.out)
