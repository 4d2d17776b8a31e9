"""``casekit track new``: a working skeleton of a track, in a casekit checkout.

The skeleton is a real track from the start -- registration, environment recipe, container
recipe, guide, scaffold, a second-order finite-difference Poisson solver (NumPy/SciPy) and an
end-to-end test -- so a contributor begins from green tests and replaces the parts with their
library's (docs/adding-a-track.md).  Files are written aside and moved in only when all are
written; an existing track or test directory is never overwritten.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path

import jinja2

from casekit.errors import UsageError

SKELETON = Path(__file__).resolve().parent / "_skeleton"
LANGUAGES = ("python",)
NAME = re.compile(r"[a-z][a-z0-9_]{1,30}")


def checkout_root() -> Path:
    """The casekit checkout this casekit runs from (where a new track's package goes)."""
    return Path(__file__).resolve().parents[2]


def new_track(name: str, language: str = "python", title: str = "", root: Path | None = None) -> list[Path]:
    from casekit.tracks import TRACKS

    if not NAME.fullmatch(name) or name in ("base", "new"):
        raise UsageError(f"{name!r} is not a usable track name", valid="a lower-case identifier such as 'ngsolve'")
    if name in TRACKS:
        raise UsageError(f"a track named {name!r} is registered already", valid=", ".join(TRACKS.names()) +
                         " are taken")
    if language not in LANGUAGES:
        raise UsageError(f"no {language!r} skeleton", valid=", ".join(LANGUAGES) + " (a compiled track: start from "
                         "casekit/tracks/dealii, see docs/adding-a-track.md)")
    root = Path(root) if root is not None else checkout_root()
    package, tests = root / "casekit" / "tracks" / name, root / "tests" / "tracks" / name
    if not (root / "casekit" / "tracks" / "base.py").is_file() or not (root / "tests" / "tracks").is_dir():
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
        (staging / "tests" / f"test_{name}.py").write_text(env.get_template("tests/test_track.py.j2").render(context))
        written += [tests / "__init__.py", tests / f"test_{name}.py"]
        shutil.move(str(staging / "package"), package)
        shutil.move(str(staging / "tests"), tests)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return written
