"""Make the pure-Python wheel (``py3-none-any``) from a built wheel: the same package without
the compiled core.

pip prefers a platform wheel when one fits and otherwise takes this one over the sdist, so
on a platform or CPython without a wheel ``pip install harnessweaver`` installs the
pure-Python core, which the package selects automatically, with a warning, when
``harnessweaver._core`` cannot be imported: the same behaviour, only slower. Everything but
the extension module and the Rust SBOM is copied unchanged; ``WHEEL`` and ``RECORD`` are
rewritten.

    python tools/purewheel.py dist/harnessweaver-0.1.0-cp311-cp311-*.whl --out dist
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import re
import sys
import zipfile
from pathlib import Path

EXTENSION = re.compile(r"^harnessweaver/_core\.[^/]*\.(so|pyd)$")


def record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return f"sha256={digest.decode()}"


def make_pure(binary: Path, out_dir: Path) -> Path:
    name, version = binary.name.split("-")[:2]
    dist_info = f"{name}-{version}.dist-info"
    target = out_dir / f"{name}-{version}-py3-none-any.whl"
    entries: list[tuple[str, bytes]] = []
    dropped: list[str] = []
    with zipfile.ZipFile(binary) as source:
        for info in source.infolist():
            path = info.filename
            if path.endswith("/") or path in (f"{dist_info}/RECORD", f"{dist_info}/WHEEL"):
                continue
            if EXTENSION.match(path) or path.startswith(f"{dist_info}/sboms/"):
                dropped.append(path)
                continue
            entries.append((path, source.read(info)))
        wheel = source.read(f"{dist_info}/WHEEL").decode()
    if not any(EXTENSION.match(path) for path in dropped):
        raise SystemExit(f"{binary.name}: no compiled core in it; is it a platform wheel?")
    generator = next(line for line in wheel.splitlines() if line.startswith("Generator:"))
    wheel = (
        f"Wheel-Version: 1.0\n{generator} (+ tools/purewheel.py)\n"
        "Root-Is-Purelib: true\nTag: py3-none-any\n"
    )
    entries.append((f"{dist_info}/WHEEL", wheel.encode()))
    record = "".join(f"{path},{record_hash(data)},{len(data)}\n" for path, data in entries)
    record += f"{dist_info}/RECORD,,\n"
    entries.append((f"{dist_info}/RECORD", record.encode()))
    out_dir.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as out:
        for path, data in entries:
            info = zipfile.ZipInfo(path, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            out.writestr(info, data)
    print(f"{target} (from {binary.name}, without {', '.join(dropped)})")
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("wheel", type=Path, help="a platform wheel of harnessweaver")
    parser.add_argument("--out", type=Path, default=Path("dist"), help="where to write it")
    args = parser.parse_args(argv)
    make_pure(args.wheel, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
