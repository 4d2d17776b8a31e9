"""A command killed by SIGTERM cleans up as after Ctrl-C (the import's staging directory)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

#: a command as casekit's entry point runs it: it stages a directory, is killed mid-way, and its
#: ``finally`` removes the directory (what `casekit import` does with its staging)
_KILLED = textwrap.dedent("""
    import os, shutil, signal, sys, time
    from pathlib import Path
    import casekit.cli as cli

    staging = Path(sys.argv[1])

    def command():
        staging.mkdir()
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(60)
        finally:
            shutil.rmtree(staging)

    cli.app = command
    cli.main()
""")


def test_a_command_killed_by_sigterm_runs_its_cleanup(tmp_path: Path) -> None:
    staging = tmp_path / ".cases-import-x"
    done = subprocess.run([sys.executable, "-c", _KILLED, str(staging)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 143, (done.returncode, done.stderr)  # cancelled, as a killed process says
    assert not staging.exists()  # and its cleanup ran, well before the 60 s
