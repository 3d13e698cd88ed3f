"""A deliberately wrong implementation for the fuzz tests: the Python testee, except that it
reports the first two middleware of an emit in swapped order."""

from __future__ import annotations

import json
import sys

from harnessweaver.conformance.testee import _catalogue, observe


def main() -> None:
    samples = _catalogue()["samples"]
    for line in sys.stdin:
        message = json.loads(line)
        if message["cmd"] == "hello":
            reply = {
                "protocol": 1,
                "implementation": {"name": "mutant", "language": "python"},
                "features": ["timeouts", "concurrency"],
            }
        elif message["cmd"] == "run":
            actual = observe(message["case"], samples, "asyncio")
            for emit in actual["emits"]:
                emit["ran"][:2] = emit["ran"][:2][::-1]
            reply = {"seq": message["seq"], "actual": actual}
        else:
            return
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
