"""The hook's fastest start: ``python -S -P .../harnessweaver/hookcmd/hook.py ARGS`` is
``harnessweaver hook ARGS`` (:func:`harnessweaver.hookcmd.warm.command_line`).

A script is compiled from source at every start, and the client (``warm.py``) is long enough
for that to cost a third of a bare interpreter's start-up: this file only imports it, from its
cached bytecode, as a top-level module of this folder (so without the ``harnessweaver``
package, which the client needs only when it answers in-process).
"""

import os
import sys

__all__: list[str] = []

if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    while here in sys.path:  # run without -P: this folder's modules must not shadow others
        sys.path.remove(here)
    sys.path.insert(0, here)
    import warm  # type: ignore[import-not-found,unused-ignore]

    del sys.path[0]
    raise SystemExit(warm.main(sys.argv[1:]))
