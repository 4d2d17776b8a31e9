"""``casekit evaluate`` refuses, before any work, to start more workers than this machine's memory
holds: jobs x the memory one worker may need (a run's limit, or the track's compile limit when
that is larger), with one line saying so."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

import casekit.build.machine as machine
from casekit.build.machine import available_memory_mb
from casekit.errors import UsageError
from casekit.evaluate.run import EvalOptions, evaluate
from casekit.executors import ExecutorOptions
from casekit.tracks import TRACKS


def _opts(tmp_path: Path, **kw: object) -> EvalOptions:
    store = SimpleNamespace(records={"case": {}}, root=tmp_path / "build")  # never read: refused first
    return EvalOptions(store=store, submissions=tmp_path, out=tmp_path / "out", **kw)  # type: ignore[arg-type]


def test_the_available_memory_is_read_from_this_machine() -> None:
    have = available_memory_mb()
    assert have is not None and have > 0


def test_jobs_times_memory_over_what_the_machine_has_is_one_clear_line(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(machine, "available_memory_mb", lambda: 6000)
    with pytest.raises(UsageError) as err:
        evaluate(_opts(tmp_path, track="numpy", jobs=2, memory_mb=4096))
    text = str(err.value)
    assert "\n" not in text
    assert "--jobs 2" in text and "8192 MiB" in text and "6000 MiB" in text and "at most 1 job" in text
    assert not (tmp_path / "out").exists()  # nothing was started


def test_a_compiling_track_counts_its_compile_limit(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    compile_mb = TRACKS.get("dealii").prepare_memory_mb
    assert compile_mb > 1024
    monkeypatch.setattr(machine, "available_memory_mb", lambda: 2 * compile_mb - 1)
    with pytest.raises(UsageError) as err:
        evaluate(_opts(tmp_path, track="dealii", jobs=2, memory_mb=1024))
    assert "compile limit" in str(err.value) and f"{2 * compile_mb} MiB" in str(err.value)


def test_what_fits_and_workers_elsewhere_are_not_refused(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from casekit.evaluate.run import check_memory

    monkeypatch.setattr(machine, "available_memory_mb", lambda: 9000)
    check_memory(_opts(tmp_path, track="numpy", jobs=2, memory_mb=4096))
    check_memory(_opts(tmp_path, track="numpy", jobs=8, memory_mb=4096,
                       executor=ExecutorOptions(kind="dask", jobs=8, scheduler="tcp://elsewhere:8786")))
    monkeypatch.setattr(machine, "available_memory_mb", lambda: None)  # unknown: not refused
    check_memory(_opts(tmp_path, track="numpy", jobs=64, memory_mb=4096))
