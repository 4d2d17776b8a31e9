"""What a case batch of deal.II attempts keeps is bounded: every attempt's program stays on disk
(never as bytes in the evaluator), a program over the size cap fails while the compiler writes
it and never reaches the host, nothing of a rejected compile is left behind, and the batch's
programs together stay within its disk budget -- the attempt that would go over fails with the
reason, the others still get their verdicts.  Small caps are patched in, so the programs are a
few MiB (a padded static array, no deal.II code: quick to compile)."""

from __future__ import annotations

import tempfile
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

import casekit.tracks.dealii as dealii
from casekit.evaluate import pairing
from casekit.evaluate.run import EvalOptions, evaluate
from casekit.evaluate.store import open_store
from casekit.runner.limits import Limits
from casekit.tracks import TRACKS
from tests.helpers import build_source, coarse_case

pytestmark = pytest.mark.dealii

MIB = 1 << 20
CAP = 8 * MIB  # the patched program size cap
UNDER = 6  # MiB: a program under it
OVER = 10  # MiB: a program over it


@pytest.fixture(scope="module")
def built(tmp_path_factory):  # type: ignore[no-untyped-def]
    from casekit.build.pipeline import BuildOptions
    from casekit.build.run import build
    from casekit.envs import ENVIRONMENTS

    env = ENVIRONMENTS.get("dealii").check()
    if not env.usable:
        pytest.skip(f"deal.II is not installed here: {env.reason} (casekit env install dealii)")
    root = tmp_path_factory.mktemp("dealii-resources")
    src = build_source("poisson", "unit_square", {}, 5)
    path = coarse_case(root, src, ["dealii"], 8)
    [o] = build([path], BuildOptions(root / "build", "dealii", repeats=1, limits=Limits(timeout_sec=300)))
    assert o.status == "built", o.reason
    return root / "build", src["id"]


def _padded(mib: int, attempt: int) -> str:
    return f"static volatile char pad[{mib} << 20] = {{{attempt}}};\nint main() {{ return pad[12345]; }}\n"


def _submissions(root: Path, case_id: str, sizes: list[int]) -> Path:
    for n, mib in enumerate(sizes, start=1):
        d = root / case_id / f"attempt_{n}"
        d.mkdir(parents=True)
        (d / "solver.cpp").write_text(_padded(mib, n))
    return root


def _watch_prepare(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, list[tuple[str, int]]]]:
    """Each prepare's result (or its exception) and the files its work directory holds right after."""
    seen: list[tuple[Any, list[tuple[str, int]]]] = []
    track = TRACKS.get("dealii")
    original = type(track).prepare

    def prepare(self, files, work, **kwargs):  # type: ignore[no-untyped-def]
        try:
            out: Any = original(self, files, work, **kwargs)
        except Exception as exc:
            out = exc
        left = sorted((str(p.relative_to(work)), p.stat().st_size) for p in work.rglob("*") if p.is_file()) \
            if work.exists() else []
        seen.append((out, left))
        if isinstance(out, Exception):
            raise out
        return out

    monkeypatch.setattr(type(track), "prepare", prepare)
    return seen


def test_programs_stay_on_disk_and_an_oversized_one_fails_while_it_is_written(built, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    build_dir, case_id = built
    monkeypatch.setattr(dealii, "MAX_BINARY_BYTES", CAP)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    seen = _watch_prepare(monkeypatch)
    sizes = [UNDER, UNDER, UNDER, OVER]
    subs = _submissions(tmp_path / "subs", case_id, sizes)
    tracemalloc.start()
    try:
        verdicts = evaluate(EvalOptions(store=open_store(build_dir, "dealii"), submissions=subs,
                                        out=tmp_path / "out", track="dealii", repeats=1, timing="build"))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [v["attempt"] for v in verdicts] == [1, 2, 3, 4]
    # the programs under the cap: paths to one file each, the compile's directory gone
    for out, left in seen[:3]:
        assert isinstance(out, dict) and isinstance(out["solver"], Path), out
        assert len(left) == 1 and left[0][0] == "solver" and UNDER * MIB <= left[0][1] <= CAP
    # the evaluator never held them as bytes: its Python allocations peak below one program
    assert peak < UNDER * MIB, f"{peak / MIB:.1f} MiB allocated at the peak for {len(sizes)} attempts"
    # the one over the cap fails at the file-size limit, and nothing of it is left
    out, left = seen[3]
    assert isinstance(out, dealii.PrepareError) and left == []
    over = verdicts[3]
    assert over["stage"] == "F-Exec" and over["failure"]["category"] == "compile_error"
    assert "file-size limit" in over["failure"]["message"] and "at most 8 MiB" in over["failure"]["message"]
    for v in verdicts[:3]:  # they ran (and wrote nothing): their own verdicts
        assert v["failure"]["category"] == "missing_artifact", v["failure"]
    assert list((tmp_path / "tmp").iterdir()) == []


def test_a_batch_over_its_disk_budget_fails_only_the_attempt_that_would_exceed_it(built, tmp_path,  # type: ignore[no-untyped-def]
                                                                                 monkeypatch) -> None:
    build_dir, case_id = built
    monkeypatch.setattr(dealii, "MAX_BINARY_BYTES", CAP)
    monkeypatch.setattr(pairing, "BATCH_DISK_BYTES", 2 * UNDER * MIB + MIB)  # room for two programs
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    subs = _submissions(tmp_path / "subs", case_id, [UNDER, UNDER, UNDER])
    held: list[int] = []
    original = pairing.run_series

    def run_series(*args, **kwargs):  # type: ignore[no-untyped-def]  # what the batch keeps as the rounds run
        held.append(sum(p.stat().st_size for p in (tmp_path / "tmp").rglob("*") if p.is_file()))
        return original(*args, **kwargs)

    monkeypatch.setattr(pairing, "run_series", run_series)
    verdicts = evaluate(EvalOptions(store=open_store(build_dir, "dealii"), submissions=subs,
                                    out=tmp_path / "out", track="dealii", repeats=1, timing="build"))
    assert [v["attempt"] for v in verdicts] == [1, 2, 3]
    third = verdicts[2]["failure"]
    assert third["category"] == "compile_error" and "MiB of disk one case's attempts may take" in third["message"]
    for v in verdicts[:2]:
        assert v["failure"]["category"] == "missing_artifact", v["failure"]
    assert held and max(held) <= 2 * UNDER * MIB + MIB
