"""``python -m casekit.cli``: the command line."""

from casekit.cli import main

main()
