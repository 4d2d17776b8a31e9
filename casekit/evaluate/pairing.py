"""Evaluating one case: every attempt submitted for it, with paired timing.

The case's calibration solver (the submission ``casekit baselines`` writes) runs on this
machine in the same evaluation, interleaved with the attempts: in each of ``repeats`` rounds it
runs once, and every attempt still in the race runs once, in an order that turns by one place
every round; a round's runs are staged together and timed one after the other
(:func:`casekit.execution.run_series`).  The runtime gate divides each of an
attempt's runs by the calibration run of its round and takes the largest ratio, so the machine,
its load and the evaluation's conditions cancel out (``t_r / c_r <= alpha_time`` in every round
r); the calibration's cost is shared by all attempts of the batch.  Each worker of a distributed
evaluation pairs on itself.

What a batch keeps on disk is bounded: every attempt is prepared (compiled) before the rounds
start and its program stays on disk -- never in memory -- until its verdict; together they may
take at most :data:`BATCH_DISK_BYTES` (an attempt whose program would go over fails with the
reason); a run's directory goes as soon as its artifacts are kept.
"""

from __future__ import annotations

import dataclasses
import math
import shutil
import statistics
import tempfile
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from casekit.build.machine import machine_label as machine
from casekit.errors import CasekitError
from casekit.evaluate.baselines import calibration_settings
from casekit.evaluate.convergence import self_convergence
from casekit.evaluate.references import Reference
from casekit.evaluate.verdicts import RunScorer, Timing, exact_targets, grid_mask, verdict
from casekit.execution import Execution, Failure, Planned, PrepareError, keep, run_label, run_once, run_series
from casekit.runner.base import RunResult
from casekit.runner.limits import Limits
from casekit.scoring.artifacts import load_reference
from casekit.tracks.base import Track

#: the disk every prepared attempt of one case batch may take together (compiled programs)
BATCH_DISK_BYTES = 2 << 30


@dataclass
class Attempt:
    system: str
    attempt: int
    files: dict[str, bytes]
    sha256: str
    artifacts: Path
    #: a failure known before running (no submission, too large, ...)
    failure: tuple[str, str] | None = None
    #: the prompt variant the submission was written from (casekit.prompts.variants)
    prompt_variant: str = "standard"


@dataclass
class CaseBatch:
    record: dict[str, Any]
    #: the reference's file, or where it comes from (a packaged file checked against its sha256,
    #: a manufactured solution sampled on the grid): loaded on the worker that scores the batch
    reference: Path | Reference
    attempts: list[Attempt] = field(default_factory=list)


def evaluate_case(batch: CaseBatch, track: Track, *, repeats: int, limits: Limits, hide: tuple[Path, ...],
                  runner: str, timing: str, t_file: float | None, calibration_dir: Path,
                  convergence: tuple[int, ...] = ()) -> list[dict[str, Any]]:
    """Verdicts for every attempt of one case (``timing``: paired, build or file); with
    ``convergence`` resolutions, every attempt that ran also gets the self-convergence diagnostic
    (extra runs after the timed rounds, never gating)."""
    record = batch.record
    spec = record["case_spec"]
    if any(a.failure is None for a in batch.attempts):
        mask = grid_mask(spec, record.get("id"))
        reference = batch.reference.load(spec) if isinstance(batch.reference, Reference) else \
            load_reference(batch.reference, spec)
    else:  # nothing will run (no submission): nothing is scored, the reference is not sampled
        mask, reference = np.zeros(0, dtype=bool), {}
    states: list[tuple[Attempt, Execution, RunScorer, dict[str, bytes | Path] | None]] = []
    with tempfile.TemporaryDirectory(prefix="casekit-eval-") as tmp:
        work = Path(tmp)
        on_disk = 0  # bytes of the prepared programs kept for the rounds
        for i, a in enumerate(batch.attempts):
            ex, scorer = Execution(), RunScorer(spec, reference, mask, exact=exact_targets(record))
            prepared = None
            if a.failure is not None:
                ex.failure = a.failure
            else:
                try:
                    prepared = track.prepare(a.files, work / f"prep{i}", runner=runner, hide=hide)
                    size = _disk_bytes(prepared)
                    if on_disk + size > BATCH_DISK_BYTES:
                        shutil.rmtree(work / f"prep{i}", ignore_errors=True)
                        raise PrepareError("compile_error", f"the compiled program takes {size >> 20} MiB and the "
                                           f"earlier attempts of this case {on_disk >> 20} MiB: over the "
                                           f"{BATCH_DISK_BYTES >> 20} MiB of disk one case's attempts may take")
                    on_disk += size
                except PrepareError as exc:
                    prepared, ex.failure = None, (exc.category, exc.message)
            states.append((a, ex, scorer, prepared))
        cal_times: list[float] = []
        cal_prepared = None
        if timing == "paired" and any(p is not None for *_, p in states):
            cal_files = track.calibration_submission(calibration_settings(record), spec)
            try:
                cal_prepared = track.prepare(cal_files, work / "prep-calibration", runner=runner, hide=hide)
            except PrepareError as exc:
                raise CasekitError(f"the calibration solver of {record['id']} cannot be prepared on this machine: "
                                   f"{exc.message}", case_id=record["id"]) from None
        for r in range(repeats):
            live = [i for i, (_, ex, _, p) in enumerate(states) if p is not None and ex.ok]
            if not live:
                break
            plan: list[tuple[int, Planned]] = []  # -1: the round's calibration run
            if cal_prepared is not None:
                cal_check = RunScorer(spec, reference, mask, exact=exact_targets(record))
                plan.append((-1, Planned(cal_prepared, spec, work / f"cal{r}", cal_check,
                                         calibration_limits(limits, record))))
            for i in live:
                plan.append((i, Planned(states[i][3] or {}, spec, work / f"a{i}-run{r}", states[i][2])))
            turn = r % len(plan)  # every run takes every place in the order, round by round
            plan = plan[turn:] + plan[:turn]
            series = run_series(track, [p for _, p in plan], limits=limits, hide=hide, runner=runner)
            with closing(series):
                for (i, planned), (result, failure) in zip(plan, series, strict=True):
                    if i < 0:
                        cal_times.append(_calibration_time(planned, result, failure, record, calibration_dir,
                                                           run_label(r, repeats)))
                        continue
                    a, ex = states[i][0], states[i][1]
                    ex.runs.append(result)
                    keep(planned.dest, a.artifacts)
                    shutil.rmtree(planned.dest, ignore_errors=True)
                    if failure:
                        ex.failure, ex.failed_run = failure, run_label(r, repeats)
        out = []
        tm = _timing(timing, cal_times, record, t_file)
        for i, (a, ex, scorer, prepared) in enumerate(states):
            ex.artifacts = a.artifacts if a.artifacts.exists() else None
            conv = None
            if convergence and prepared is not None and ex.ok:
                def run(spec_n: dict[str, Any], dest: Path,
                        prepared: dict[str, bytes | Path] = prepared) -> tuple[float | None, str]:
                    check = RunScorer(spec, reference, mask)  # the same grid and reference
                    _, failure = run_once(track, prepared, spec_n, dest, limits=limits, hide=hide, runner=runner,
                                          check=check)
                    shutil.rmtree(dest, ignore_errors=True)
                    if failure is not None:
                        return None, failure[1]
                    return (check.errors[-1], "") if check.errors else (None, "no error was scored")
                conv = self_convergence(convergence, run, spec, work / f"a{i}-convergence")
            shutil.rmtree(work / f"prep{i}", ignore_errors=True)  # its program is not run again
            # an attempt that never ran beside the calibration was paired with nothing: its
            # runtime threshold is the build's (no attempt's gate was reached)
            timed = tm if ex.runs or tm.mode != "paired" else _timing("build", [], record, None)
            out.append(verdict(record, ex, scorer if prepared is not None else None, timed, track=track.name,
                               system=a.system, attempt=a.attempt, submission_sha256=a.sha256, convergence=conv,
                               prompt_variant=a.prompt_variant))
    return out


#: a paired calibration run may take this many times its build-time t_base before it counts as
#: failed (casekit's own solver: its limit guards against a hang, not against a busy machine --
#: a fresh burgers draw of t_base 5 s ran past a 60 s case timeout on a loaded 2-core machine)
CALIBRATION_TIMEOUT_FACTOR = 20.0


def calibration_limits(limits: Limits, record: dict[str, Any]) -> Limits:
    """The limits of a paired calibration run: the case's, with the timeout raised to
    :data:`CALIBRATION_TIMEOUT_FACTOR` x its build-time t_base where that is longer (a submission
    keeps the case's timeout: it is the agent's contract)."""
    t_base = float(record.get("evaluation_metadata", {}).get("t_base") or 0.0)
    timeout = max(limits.timeout_sec, CALIBRATION_TIMEOUT_FACTOR * t_base)
    return limits if timeout == limits.timeout_sec else dataclasses.replace(limits, timeout_sec=timeout, cpu_sec=None)


def _calibration_time(planned: Planned, result: RunResult, failure: Failure | None, record: dict[str, Any],
                      keep_dir: Path, label: str) -> float:
    """The time of one paired calibration run; it must succeed and be as accurate as at build
    time, or the evaluation of this case stops (the machine cannot evaluate it; no submission is
    blamed)."""
    keep(planned.dest, keep_dir)
    shutil.rmtree(planned.dest, ignore_errors=True)
    scorer = planned.check
    assert isinstance(scorer, RunScorer)
    tau_acc = float(record["evaluation_metadata"]["thresholds"]["tau_acc"])
    if failure is None and scorer.errors and not scorer.errors[-1] <= tau_acc:
        failure = ("accuracy", f"error {scorer.errors[-1]:.3e} above tau_acc {tau_acc:.3e}")
    seconds = result.solve_seconds
    if failure is None and seconds is not None and not (math.isfinite(seconds) and seconds > 0):
        failure = ("timing", f"its time {seconds} is not a positive finite number")
    if failure is not None or seconds is None:
        why = failure[1] if failure else "no timing"
        raise CasekitError(f"the calibration solver of {record['id']} fails on this machine ({label}): "
                           f"{why} [log: {keep_dir / 'stderr.txt'}]", case_id=record["id"])
    return float(seconds)


def _disk_bytes(prepared: dict[str, bytes | Path]) -> int:
    """The disk a prepared attempt keeps: its files that are paths (bytes are small sources)."""
    return sum(f.stat().st_size for f in prepared.values() if isinstance(f, Path))


def _timing(mode: str, cal_times: list[float], record: dict[str, Any], t_file: float | None) -> Timing:
    if mode == "paired" and cal_times:
        return Timing("paired", statistics.median(cal_times), cal_times, machine())
    if mode == "paired":  # no attempt ran, so nothing was paired: the gate is never reached
        return Timing("build", float(record["evaluation_metadata"]["t_base"]), [], "")
    if mode == "file":
        assert t_file is not None
        return Timing("file", t_file, [], machine())
    return Timing("build", float(record["evaluation_metadata"]["t_base"]), [], "")
