"""``casekit track new``: a working skeleton of a track, in a casekit checkout.

The skeleton is a real track from the start -- registration, environment recipe, container
recipe, guide, scaffold, a second-order finite-difference Poisson solver and an end-to-end test
-- so a contributor begins from green tests and replaces the parts with their library's
(docs/adding-a-track.md).  Two languages: ``python`` (submissions are ``solve(case_spec)``; the
solver in NumPy/SciPy) and ``cpp`` (submissions are C++ programs built with CMake in the sandbox,
:mod:`casekit.tracks.compiled`; the solver in plain C++17).  The files go into the casekit
checkout that holds the current directory (the one the contributor works in, not the one
casekit happens to be installed from), or ``root``.  Files are written aside and moved in only
when all are written; an existing track or test directory is never overwritten.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path

import jinja2

from casekit.errors import UsageError

SKELETON = Path(__file__).resolve().parent / "_skeleton"
LANGUAGES = ("python", "cpp")
NAME = re.compile(r"[a-z][a-z0-9_]{1,30}")


def is_checkout(path: Path) -> bool:
    """Whether ``path`` is the root of a casekit checkout (where a new track's package goes)."""
    return (path / "casekit" / "tracks" / "base.py").is_file() and (path / "tests" / "tracks").is_dir()


def checkout_root(start: Path | None = None) -> Path:
    """The casekit checkout that holds ``start`` (default: the current directory): the nearest
    directory at or above it that is one.  Refused -- naming the project found instead, if any --
    when there is none: a track's package belongs in a checkout of casekit, or in a package of its
    own registered through the ``casekit.tracks`` entry-point group."""
    start = (start or Path.cwd()).resolve()
    project = None
    for d in (start, *start.parents):
        if is_checkout(d):
            return d
        if project is None and ((d / ".git").exists() or (d / "pyproject.toml").is_file()):
            project = d
    where = f"{start} (in the project {project}, which is not one)" if project else str(start)
    raise UsageError(f"{where} is not in a casekit checkout (casekit/tracks/ and tests/tracks/)",
                     valid="run it inside a clone of casekit, or pass --root CHECKOUT; a track outside casekit "
                           "registers through the casekit.tracks entry-point group (docs/adding-a-track.md)")


def new_track(name: str, language: str = "python", title: str = "", root: Path | None = None) -> list[Path]:
    from casekit.tracks import TRACKS

    if not NAME.fullmatch(name) or name in ("base", "new"):
        raise UsageError(f"{name!r} is not a usable track name", valid="a lower-case identifier such as 'ngsolve'")
    if name in TRACKS:
        raise UsageError(f"a track named {name!r} is registered already", valid=", ".join(TRACKS.names()) +
                         " are taken")
    if language not in LANGUAGES:
        raise UsageError(f"no {language!r} skeleton", valid=", ".join(LANGUAGES))
    root = Path(root).resolve() if root is not None else checkout_root()
    package, tests = root / "casekit" / "tracks" / name, root / "tests" / "tracks" / name
    if not is_checkout(root):
        raise UsageError(f"{root} is not a casekit checkout (casekit/tracks/ and tests/tracks/)",
                         valid="run it in a clone of casekit, or register an external package through the "
                               "casekit.tracks entry-point group (docs/adding-a-track.md)")
    for d in (package, tests):
        if d.exists():
            raise UsageError(f"{d} exists already; choose another name or remove it")
    context = {"name": name, "title": title or f"{name} (skeleton)",
               "class_name": "".join(p.title() for p in name.split("_"))}
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(SKELETON)), keep_trailing_newline=True,
                             undefined=jinja2.StrictUndefined, autoescape=False)
    staging = Path(tempfile.mkdtemp(prefix=f".track-{name}-", dir=root))
    try:
        written = []
        for template in sorted((SKELETON / language).rglob("*.j2")):
            rel = template.relative_to(SKELETON / language).with_suffix("")
            target = staging / "package" / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(env.get_template(template.relative_to(SKELETON).as_posix()).render(context))
            written.append(package / rel)
        (staging / "tests").mkdir()
        (staging / "tests" / "__init__.py").write_text("")
        test = env.get_template(f"tests/test_track_{language}.py.j2").render(context)
        (staging / "tests" / f"test_{name}.py").write_text(test)
        written += [tests / "__init__.py", tests / f"test_{name}.py"]
        shutil.move(str(staging / "package"), package)
        shutil.move(str(staging / "tests"), tests)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return written
