"""casekit: build, validate, package and score FEM-solver benchmarks for AI agents."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("casekit")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.0.0+source"

SCHEMA_VERSION = "1.0"
