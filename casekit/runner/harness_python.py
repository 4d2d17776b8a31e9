"""The harness that runs a Python submission: ``solve(case_spec)`` in a fresh interpreter.

This file is executed (not imported) inside the sandbox, so it imports nothing from casekit.
It imports the track's libraries first (``CASEKIT_PRELOAD``); a staged run
(``CASEKIT_GO_FD``) then writes a ready byte on the timing descriptor and waits for one byte on
the go descriptor (its end of file means the run was cancelled: exit untouched); then it signals
the start of the timed region on the inherited timing descriptor (or the timing FIFO a container runner
mounts) and closes it (so the submission cannot write
to it), then imports ``solver.py`` and calls ``solve``.  The end of the timed region is taken
by the trusted sandbox wrapper when this process exits, so neither the submission's own
``meta.json`` nor anything it does in-process can change the measured time.

Exit status: 0 solve returned, 1 solve raised, 3 the submission has no usable ``solve``, 4 the
run was cancelled before it started.
"""

import importlib
import importlib.util
import json
import os
import sys
import traceback


def main() -> int:
    fd = int(os.environ.pop("CASEKIT_TIMING_FD", "-1"))
    timing_path = os.environ.pop("CASEKIT_TIMING_PATH", "")  # container runners: a FIFO
    go = int(os.environ.pop("CASEKIT_GO_FD", "-1"))
    # the working directory (this script's) holds the submission: not importable before it runs
    sys.path[:] = [p for p in sys.path if os.path.realpath(p or ".") != os.path.realpath(os.getcwd())]
    for name in filter(None, os.environ.pop("CASEKIT_PRELOAD", "").split(",")):
        importlib.import_module(name)
    with open("case_spec.json", encoding="utf-8") as fh:
        case_spec = json.load(fh)
    sys.path.insert(0, os.getcwd())
    if fd < 0 and timing_path:
        fd = os.open(timing_path, os.O_WRONLY)
    if go >= 0:
        if fd >= 0:
            os.write(fd, b"r")
        word = os.read(go, 1)
        os.close(go)
        if word != b"g":
            return 4
    if fd >= 0:
        os.write(fd, b"s")
        os.close(fd)
    try:
        spec = importlib.util.spec_from_file_location("solver", os.path.join(os.getcwd(), "solver.py"))
        if spec is None or spec.loader is None:
            print("casekit harness: solver.py cannot be loaded", file=sys.stderr)
            return 3
        module = importlib.util.module_from_spec(spec)
        sys.modules["solver"] = module
        spec.loader.exec_module(module)
        solve = getattr(module, "solve", None)
        if not callable(solve):
            print("casekit harness: solver.py defines no function solve(case_spec)", file=sys.stderr)
            return 3
        solve(case_spec)
    except BaseException:
        traceback.print_exc()
        return 1
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
