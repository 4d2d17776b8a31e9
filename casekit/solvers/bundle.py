"""Self-contained submissions written by casekit: its runtime modules travel inside ``solver.py``.

A sandboxed run never sees the casekit package (it holds the authoring code and the generator
from which a hidden solution could be regenerated).  casekit's own submissions -- calibration
solvers and the trivial baselines -- therefore carry what they need: a zip of the *runtime*
modules (expressions, domain geometry and meshing, the evaluation grid, the track's solvers),
base64-encoded in ``solver.py`` and put on ``sys.path`` from the run's private scratch.  Nothing
from authoring, derivation, validation, building or evaluation is in it (a test checks).
"""

from __future__ import annotations

import base64
import importlib.util
import io
import marshal
import zipfile
from functools import cache
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent

#: what every bundle holds (paths under the casekit package; a trailing / is a subpackage)
RUNTIME = ("__init__.py", "errors.py", "registry.py", "grid.py", "jsonio.py", "resources.py", "schema.py",
           "expr/", "domains/", "solvers/__init__.py", "solvers/artifacts.py", "solvers/settings.py",
           "solvers/ufl_expr.py", "solvers/baselines/", "solvers/forms.py", "solvers/targets.py")
#: subpackages and modules that must never reach a sandbox
NEVER = ("derive", "authoring", "build", "validate", "leak", "evaluate", "importers", "families", "cli",
         "package", "prompts", "report", "demo", "model")

_LOADER = '''import sys as _sys


def _casekit_runtime():
    """Put the casekit runtime carried by this file on sys.path (once per process); its
    temporary directory is removed when the process exits."""
    import atexit
    import base64
    import os
    import shutil
    import tempfile

    if getattr(_sys, "_casekit_runtime", None):
        return
    folder = tempfile.mkdtemp(prefix="casekit-runtime-")
    atexit.register(shutil.rmtree, folder, True)
    path = os.path.join(folder, "casekit_runtime.zip")
    with open(path, "wb") as fh:
        fh.write(base64.b64decode(_RUNTIME))
    _sys.path.insert(0, path)
    _sys._casekit_runtime = path


_RUNTIME = (
{chunks}
)
'''


def runtime_files() -> list[tuple[str, bytes]]:
    """(path in the zip, content) of the runtime modules every bundle carries."""
    return _files(None)


def _files(solver_module: str | None) -> list[tuple[str, bytes]]:
    """(path in the zip, content): the runtime modules and the solver package; the packages
    above the solver package get empty ``__init__.py`` files (a track's own ``__init__`` registers
    it, which needs the whole of casekit)."""
    out: list[tuple[str, bytes]] = []
    for entry in RUNTIME:
        p = _PACKAGE / entry
        files = sorted(q for q in p.rglob("*.py") if "__pycache__" not in q.parts) if entry.endswith("/") else [p]
        out.extend(("casekit/" + f.relative_to(_PACKAGE).as_posix(), f.read_bytes()) for f in files)
    if solver_module:  # a package of casekit's or of an installed track plugin
        import importlib.util

        parts = solver_module.split(".")
        spec = importlib.util.find_spec(parts[0])
        if spec is None or not spec.submodule_search_locations:
            raise ValueError(f"the solver module {solver_module!r} is not in an importable package")
        top = Path(next(iter(spec.submodule_search_locations))).resolve()
        package = top.joinpath(*parts[1:])
        files = sorted(q for q in package.rglob("*.py") if "__pycache__" not in q.parts) if package.is_dir() \
            else [package.with_suffix(".py")]
        out.extend((f"{parts[0]}/" + f.relative_to(top).as_posix(), f.read_bytes()) for f in files)
        have = {name for name, _ in out}
        stubs = ["/".join(parts[:i]) + "/__init__.py" for i in range(1, len(parts))]
        out.extend((stub, b"") for stub in stubs if stub not in have)
    return sorted(out)


def bytecode(name: str, source: bytes) -> bytes:
    """``source`` compiled for this interpreter as an unchecked hash-based ``.pyc`` (PEP 552): no
    timestamp, so the zip stays deterministic, and zipimport loads it without compiling the
    source inside the timed region of every run.  An interpreter of another version finds the
    wrong magic number and falls back to the ``.py`` beside it."""
    code = compile(source, name, "exec", dont_inherit=True)
    flags = (0b01).to_bytes(4, "little")  # hash-based, not checked against the source
    return importlib.util.MAGIC_NUMBER + flags + importlib.util.source_hash(source) + marshal.dumps(code)


@cache
def runtime_zip(solver_module: str | None = None) -> bytes:
    """A deterministic zip of the runtime modules (plus the package ``solver_module``), each
    with its bytecode for this interpreter."""
    files = _files(solver_module)
    files += [(name + "c", bytecode(name, data)) for name, data in files if name.endswith(".py")]
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in sorted(files):
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, data)
    return buf.getvalue()


def solver_source(doc: str, body: str, solver_module: str | None = None) -> str:
    """``solver.py``: a docstring, the runtime loader and ``body`` (which calls
    ``_casekit_runtime()`` before importing casekit)."""
    text = base64.b64encode(runtime_zip(solver_module)).decode()
    chunks = "\n".join(f'    "{text[i:i + 100]}"' for i in range(0, len(text), 100))
    return f'"""{doc}"""\n\n' + _LOADER.replace("{chunks}", chunks) + "\n\n" + body
