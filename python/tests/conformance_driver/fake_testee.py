"""A scripted testee for the driver's tests (run with ``sys.executable fake_testee.py``).

It speaks the protocol of INTERPRETING.md §9. What it answers for a case is written in the
case itself under ``x-fake`` (the driver sends cases as written):

    {"actual": OBS}          answer with this observation (the default is an empty one)
    {"skipped": REASON}      answer skipped
    {"errored": MESSAGE}     answer errored
    {"crash": CODE}          write to stderr and exit with CODE without answering
    {"hang": SECONDS}        sleep without answering
    {"garbage": TEXT}        write a line that is not JSON
    {"wrong_seq": true}      answer with another seq
    {"stderr_flood": BYTES, "actual": OBS}   write BYTES to stderr first, then answer
    {"env": NAME}            answer an empty observation whose task.start chain holds the
                             variable's value (none when it is not set)
    {"variants": {NAME: SPEC}, ...}          use SPEC when started with --variant NAME

Options: --variant NAME, --features a,b, --log FILE (one line per hello: "hello PID"),
--hello ok|exit|hang|garbage|badproto|nocore|extra, --name NAME.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

from harnessweaver._pycore.catalogue import HOOKS as _CATALOGUE

HOOKS = tuple(name for name, _ in _CATALOGUE)
# An observation lists the chain of every hook point (INTERPRETING.md §6.1).
EMPTY: dict[str, Any] = {
    "error": None,
    "chains": {hook: [] for hook in HOOKS},
    "emits": [],
    "traces": {},
}


def write(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def hello(args: argparse.Namespace) -> None:
    if args.log:
        with open(args.log, "a", encoding="utf-8") as log:
            log.write(f"hello {os.getpid()}\n")
    if args.hello == "exit":
        sys.stderr.write("cannot start: missing core\n")
        sys.exit(3)
    if args.hello == "hang":
        time.sleep(3600)
    if args.hello == "garbage":
        sys.stdout.write("Welcome!\n")
        sys.stdout.flush()
        return
    implementation = {"name": args.name, "language": "python", "version": "0.0.1", "core": "fake"}
    if args.hello == "nocore":
        del implementation["core"]
    protocol = 2 if args.hello == "badproto" else 1
    features = [tag for tag in args.features.split(",") if tag]
    message = {"protocol": protocol, "implementation": implementation, "features": features}
    if args.hello == "extra":
        message["backends"] = ["asyncio"]  # belongs inside "implementation"
    write(message)


def answer(args: argparse.Namespace, seq: int, case: dict[str, Any]) -> None:
    spec = dict(case.get("x-fake", {}))
    variants = spec.pop("variants", {})
    spec = variants.get(args.variant, spec)
    if "crash" in spec:
        sys.stderr.write(f"fatal: crashing on {case['id']}\n")
        sys.stderr.flush()
        os._exit(int(spec["crash"]))
    if "hang" in spec:
        time.sleep(float(spec["hang"]))
    if "garbage" in spec:
        sys.stdout.write(str(spec["garbage"]) + "\n")
        sys.stdout.flush()
        return
    if "stderr_flood" in spec:
        sys.stderr.write("x" * int(spec["stderr_flood"]))
        sys.stderr.flush()
    if "env" in spec:
        value = os.environ.get(spec["env"])
        chains = {**EMPTY["chains"], "task.start": [] if value is None else [value]}
        write({"seq": seq, "actual": {**EMPTY, "chains": chains}})
    elif spec.get("wrong_seq"):
        write({"seq": seq + 100, "actual": EMPTY})
    elif "skipped" in spec:
        write({"seq": seq, "skipped": True, "reason": spec["skipped"]})
    elif "errored" in spec:
        write({"seq": seq, "errored": True, "message": spec["errored"]})
    else:
        write({"seq": seq, "actual": spec.get("actual", EMPTY)})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--variant", default="")
    parser.add_argument("--features", default="concurrency,timeouts")
    parser.add_argument("--log", default="")
    parser.add_argument("--hello", default="ok")
    parser.add_argument("--name", default="fake")
    args = parser.parse_args()
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        if message["cmd"] == "hello":
            hello(args)
        elif message["cmd"] == "run":
            answer(args, message["seq"], message["case"])
        elif message["cmd"] == "stop":
            return


if __name__ == "__main__":
    main()
