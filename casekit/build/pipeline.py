"""One case through the build: derive -> validate -> mesh -> reference -> calibration -> trial.

Each stage's output is cached under a content hash of its inputs (case source, casekit version,
track name and library versions, settings, machine for timings), so a rebuild redoes only what
changed and a killed build resumes.  A case that fails a check is rejected with the reason,
never given a fallback value.
"""

from __future__ import annotations

import dataclasses
import json
import math
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from casekit import SCHEMA_VERSION, __version__
from casekit.build import cheaters, exactness, references
from casekit.build.cache import StageCache, key
from casekit.build.machine import environment, machine
from casekit.errors import CasekitError
from casekit.execution import execute
from casekit.ids import public_id
from casekit.jsonio import atomic_write_text, dumps, read_json, write_json
from casekit.model.record import CaseRecord, EvaluationMetadata, PdeClassification, Refinement, Thresholds
from casekit.model.source import CaseSource, EvaluationConfig, load_source_dict
from casekit.runner.limits import Limits
from casekit.scoring import metrics
from casekit.scoring.artifacts import ArtifactError, load_meta, load_solution, load_targets, save_reference
from casekit.solvers.settings import SolveSettings
from casekit.solvers.targets import from_grid as target_estimates
from casekit.thresholds import E_BASE_RANGE, target_thresholds, thresholds
from casekit.tracks import TRACKS
from casekit.tracks.base import Track
from casekit.validate import check_and_derive, inversion, span, taylor

#: the calibration timing protocol (part of the calibration stage's cache key): 2 = every timed run
#: from a fresh state (JIT compilation inside it), no warm-up, every run checked; 3 = the DOLFINx
#: harness imports sympy before the timed region, with the track's other libraries; 4 = it no longer
#: does (the calibration solvers import no sympy; a submission that does pays for it); 5 = the runs
#: of a series are staged: started together up to the end of their imports, then timed one by one
TIMING_PROTOCOL = 5

STAGES = ("derive", "validate", "reference", "calibration", "trial", "agreement", "record")

#: a calibration error at least this large is reported with the calibration solver's own info
WRONG_FIELD = 0.5


@dataclass
class BuildOptions:
    build_dir: Path
    track: str = "dolfinx"
    repeats: int = 3
    runner: str = "local"
    limits: Limits = field(default_factory=Limits)
    #: host paths hidden from every solve (the build dir and the case sources are added)
    hide: tuple[Path, ...] = ()
    #: the memory of one reference solve (MiB); None: ``limits.memory_mb``.  casekit's own solver
    #: on the numerical reference's finer levels needs more than a calibration (13 Stokes cases of
    #: PDEAgent-Bench ran out of 4 GiB in MUMPS): casekit.build.run.build sets it from the machine
    reference_memory_mb: int | None = None

    @staticmethod
    def solve_limits(cpu_seconds: float, memory_mb: int) -> Limits:
        """The limits of a build's solves (casekit's own solvers, not a submission's): bounded by
        CPU time, which a busy machine does not stretch, so a loaded build refuses the same solves
        as a quiet one (a reference level that took 160 s timed out at a wall limit of 600 s on a
        machine four times oversubscribed); the wall clock is a backstop :data:`WALL_BACKSTOP`
        times longer, so a solve that hangs without using the CPU still ends."""
        cpu = max(1, math.ceil(cpu_seconds))
        return Limits(timeout_sec=WALL_BACKSTOP * cpu, cpu_sec=cpu, memory_mb=memory_mb)

    def reference_limits(self) -> Limits:
        """A reference level's limits: more memory (``reference_memory_mb``) and
        :data:`REFERENCE_CPU_FACTOR` times a calibration solve's CPU time (and wall backstop)."""
        cpu = self.limits.cpu * REFERENCE_CPU_FACTOR
        return dataclasses.replace(self.limits, memory_mb=max(self.limits.memory_mb, self.reference_memory_mb or 0),
                                   cpu_sec=cpu, timeout_sec=self.limits.timeout_sec * REFERENCE_CPU_FACTOR)


#: a build solve's wall-clock limit over its CPU-time limit (:meth:`BuildOptions.solve_limits`)
WALL_BACKSTOP = 8.0
#: a reference level's CPU-time limit over a calibration solve's: its levels are finer in space and
#: time than the calibration the build may refine (PDEAgent-Bench's reference resolutions, steps
#: 2^3 finer): reaction_diffusion_no_exact_oscillatory_rhs_cubic's L2 (P2 at 368 cells across,
#: 960 BDF2 steps) needs about 2000 s of CPU and was killed at the 600 s of a calibration solve.
#: Still a bound: casekit's own solvers, but never unbounded time
REFERENCE_CPU_FACTOR = 4


@dataclass
class CaseOutcome:
    case_id: str
    path: Path
    status: str  # built | rejected | failed | skipped
    reason: str = ""
    e_base: float | None = None
    t_base: float | None = None
    family: str = ""
    domain: str = ""
    cached: list[str] = field(default_factory=list)
    stage_seconds: dict[str, float] = field(default_factory=dict)
    #: seconds inside the FEM solves (the calibration and reference runs' timed solves)
    solve_seconds: float = 0.0
    #: seconds of the sandboxed solver runs, set-up to exit (the timed solves plus the sandbox,
    #: the interpreter's start and the track libraries' import, which every isolated solve pays)
    process_seconds: float = 0.0
    #: other track -> its calibration's relative L2 distance from this track's, and the bound
    agreement: dict[str, dict[str, float]] = field(default_factory=dict)
    #: other track -> target name -> the two calibrations' relative distance in that value, and the bound
    target_agreement: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    #: what the build decided on the way (e.g. a lowered calibration degree)
    notes: list[str] = field(default_factory=list)
    #: what this build's keys were made of: :func:`record_key`'s arguments (source_key, track,
    #: versions, code); empty when it stopped before knowing them
    key_parts: dict[str, Any] = field(default_factory=dict)

    @property
    def fully_cached(self) -> bool:
        return self.status == "built" and {"reference", "calibration", "trial"} <= set(self.cached)


class Rejected(Exception):
    def __init__(self, status: str, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


class TooCoarse(Rejected):
    """The calibration is too coarse for the case's gates: ``shortfall`` is the factor by which
    its error would have to shrink (e_base over its limit, or the span margin over the ratio)."""

    def __init__(self, reason: str, shortfall: float) -> None:
        super().__init__("rejected", reason)
        self.shortfall = shortfall
        #: the calibration's runtime at the level found too coarse (seconds), and whether it is the
        #: CPU time of its timed region (else its wall time)
        self.runtime = 0.0
        self.cpu = False


#: the version of the build's acceptance rules: a change that may turn a rejection into a record
#: (or the reverse) bumps it, and a committed rejection of other rules is built again
#: (casekit.build.shards).  2: a calibration too coarse for the gates is refined (MAX_REFINEMENTS);
#: 3: a forcing exact to 40 digits is not 'inexact' for cancelling in double precision, and a
#: threshold an inverter passes is refined like one short of the span margin; 4: the span margin is
#: capped halfway from tau_acc to 1 (span.largest_threshold: five thresholds above 0.2 exceed any
#: residual), and a numerical reference that every level reproduces to round-off is answerable;
#: 5: a calibration stays coarser than its reference level L1 by nodes across (cells x degree), not
#: cells alone, so a P1 calibration below a P2 reference may be refined; 6: a case whose time-Taylor
#: expansion from t0 (casekit.validate.taylor) passes the accuracy gate is answerable; 7: the span
#: check also fits the components behind a magnitude output (casekit.validate.span; the 7 built
#: records of earlier rules near such a span were removed and rebuilt), and a refinement is refused
#: by its projected CPU time, not wall time (REFINE_SECONDS)
REJECTION_RULES = 7
#: the rules from which a build's trial gates the time-Taylor expansion itself (an entry built under
#: them needs no audit of it: casekit.build.answerable.near_taylor)
TAYLOR_GATED_RULES = 6

#: how the rejections of a case that can be answered without solving begin (an inverter passes, a
#: target is guessed, the reference lies near a span of visible fields): casekit.build.answerable
#: lists such cases so that the dataset replaces them
ANSWERED_BY_INVERTERS = "inverters answer the case"
TARGETS_GUESSED = "inverters pass target gates"
NEAR_A_SPAN = "the reference is within "
NEAR_A_TAYLOR = "the time-Taylor expansion of order "
EXACT_AT_EVERY_LEVEL = "every level of the reference ladder gives the calibration's field"
#: a drawn solution the calibration's space holds at every degree the family allows (its sibling's
#: next draw is not a polynomial of that degree)
IN_THE_SPACE = "the manufactured solution lies in the calibration's finite-element space"
ANSWERABLE = (ANSWERED_BY_INVERTERS, TARGETS_GUESSED, NEAR_A_SPAN, NEAR_A_TAYLOR, EXACT_AT_EVERY_LEVEL,
              IN_THE_SPACE)
#: how the rejection of a calibration whose error is over its limit begins (after refining it as far
#: as the rules allow), and those of a calibration or a target's out of the thresholds' sanity range
TOO_COARSE = "the calibration error e_base="
OUT_OF_RANGE = "calibration out of its sanity range"
TARGET_OUT_OF_RANGE = "a target's calibration is out of its sanity range"
#: the rejections that say what is wrong with a drawn manufactured solution, not with the problem:
#: another sibling draw may well pass (its time rates, its shapes, its size are its own), so a
#: sibling so rejected is drawn again (casekit.build.answerable)
REDRAWN = (*ANSWERABLE, TOO_COARSE, OUT_OF_RANGE, TARGET_OUT_OF_RANGE)
#: how the rejection of a numerical reference whose ladder does not converge begins
GAPS_DO_NOT_SHRINK = "refinement gaps do not shrink"
#: how a too-coarse rejection says why the calibration was not refined further: the refinements its
#: shortfall needs exceed the rules' count, or the reference's L1 would not be finer -- properties of
#: the case -- or the refined run would take too long on this machine, which is not (its CPU time,
#: where the runner accounts it: a machine's speed, not how busy it is)
REFUSED_BY_COUNT = " more refinement(s), each halving e_base"
REFUSED_BY_LEVEL = "the calibration cannot be refined to "
REFUSED_BY_TIME = " a refined calibration may take"


def uncertified(reason: str) -> bool:
    """Whether a rejection says the build cannot certify a numerical reference for the case as it
    is: its ladder does not converge, or its calibration stays far from it after the refinements
    the rules allow (refused by count or by the ladder, not by this machine's speed) with an error
    below :data:`WRONG_FIELD` (a larger one may be a solve that did not solve: a solver's defect,
    not the case's).  A record without a manufactured solution so rejected cannot be released as it
    is, and a sibling, whose manufactured solution needs no ladder, replaces it
    (casekit.build.answerable)."""
    if reason.startswith(GAPS_DO_NOT_SHRINK):
        return True
    if not reason.startswith(TOO_COARSE) or not (REFUSED_BY_COUNT in reason or REFUSED_BY_LEVEL in reason):
        return False
    try:
        e_base = float(reason[len(TOO_COARSE):].split()[0])
    except (ValueError, IndexError):
        return False
    return math.isfinite(e_base) and e_base < WRONG_FIELD


#: refinement gaps at or below this are round-off: the levels agree exactly
ROUND_OFF = 1e-10

#: refinements of the calibration a build may make when it is too coarse for the case's gates
MAX_REFINEMENTS = 3
#: the longest a refined calibration run may be projected to take, in CPU seconds of its timed region
#: where the runner accounts them (else wall seconds; each refinement multiplies the run by about
#: 2^(dim/2), twice that for a transient case: reaction_diffusion_cubic_manufactured, refined without
#: this bound, took 314 s a run and 1254 s to build)
REFINE_SECONDS = 120.0


def refine(settings: dict[str, Any]) -> dict[str, Any]:
    """Settings one refinement finer: cells across x sqrt(2), the time step halved -- a P1 /
    first-order calibration's error roughly halves (a higher order's more)."""
    known = set(SolveSettings().to_dict())
    out = {k: v for k, v in settings.items() if k in known}  # what the solver reads, no build notes
    out["cells_across"] = math.ceil(int(settings["cells_across"]) * math.sqrt(2))
    if settings.get("dt") is not None:
        out["dt"] = float(f"{float(settings['dt']) / 2:.6g}")
    return out


def coarser(calibration: SolveSettings, level: SolveSettings) -> bool:
    """Whether a calibration is coarser than a reference level, as a ladder needs: in space by
    nodes across (cells x degree: a P2 level at 127 cells across is finer than a P1 calibration at
    170), and in time by its step (where both step)."""
    return calibration.cells_across * calibration.degree < level.cells_across * level.degree and (
        level.dt is None or calibration.dt is None or calibration.dt > level.dt)


def _level(settings: dict[str, Any]) -> str:
    return (f"P{settings['degree']} at " if settings.get("degree") is not None else "") + \
        f"{settings.get('cells_across')} cells across" + (
        f", dt {settings['dt']:g}" if settings.get("dt") is not None else "")


class CaseBuild:
    def __init__(self, path: Path, opts: BuildOptions, timing_lock: AbstractContextManager[Any],
                 progress: Callable[[str, str], None] = lambda case, stage: None) -> None:
        self.path = Path(path)
        self.opts = opts
        self.cache = StageCache(opts.build_dir)
        self.lock = timing_lock
        self.progress = progress
        self.track: Track = TRACKS.get(opts.track)
        self.outcome = CaseOutcome(self.path.stem, self.path, "failed")
        self.hide = (opts.build_dir.resolve(), self.path.parent.parent.resolve(), *opts.hide)
        #: the source's degree when a probe lowered it (:meth:`_probe_degree`)
        self.probed_from: int | None = None
        #: the numerical reference's target values (cases without a manufactured solution)
        self.reference_targets: dict[str, float] = {}

    # -- driver --------------------------------------------------------------------------
    def run(self) -> CaseOutcome:
        o = self.outcome
        try:
            self._run()
            o.status = "built"
        except Rejected as exc:
            o.status, o.reason = exc.status, exc.reason
        except CasekitError as exc:
            o.status, o.reason = "rejected", str(exc)
        except Exception:  # a bug or an unexpected failure: this case fails, the build goes on
            import traceback

            log = self.case_dir() / "error.txt"
            log.parent.mkdir(parents=True, exist_ok=True)
            log.write_text(traceback.format_exc())
            o.status, o.reason = "failed", f"internal error (traceback in {log})"
        self._write_status()
        return o

    def _stage(self, name: str) -> Any:
        self.progress(self.outcome.case_id, name)
        return _Timer(self.outcome.stage_seconds, name)

    def _run(self) -> None:
        o = self.outcome
        with self._stage("derive"):
            data = load_source_dict(self.path)
        with self._stage("validate"):  # derives the case: the checks are made on what it derives
            problems, d = check_and_derive(data, self.path)
            if problems:
                raise Rejected("rejected", f"invalid: {problems[0].render()}"
                               + (f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""))
            assert d is not None
        source = d.source
        o.case_id, o.family, o.domain = source.id, source.family, source.domain.template
        if self.opts.track not in source.tracks:
            raise Rejected("skipped", f"the case does not list track {self.opts.track!r}")
        if not self.track.supports(source.family, source.domain.template):
            raise Rejected("rejected", f"track {self.opts.track!r} does not support {source.family} on "
                           f"{source.domain.template}")
        self.source, self.d, self.spec = source, d, d.case_spec()
        self.mask = references.grid_mask(d)  # every error: inside, less eval_grid.unscored
        self.inside = d.grid.mask(d.domain.inside)  # where a solution must be finite
        self.versions = self.track.versions()
        self.code = self.track.code_hash()
        self.source_key = source_key(source, self.spec)
        o.key_parts = {"source_key": self.source_key, "track": self.opts.track, "versions": self.versions,
                       "code": self.code}
        self.settings = source_settings(source)
        with self._stage("reference"):
            ref, intermediate, ref_config = self._reference()
        first = dict(self.settings)
        why: list[str] = []  # the reason of each refinement
        while True:  # refined while too coarse for the case's gates (at most MAX_REFINEMENTS times)
            try:
                cal, e_base, tau, targets, trial, refinement = self._calibrated(ref, intermediate)
                break
            except TooCoarse as exc:
                finer = self._refined(exc, len(why))
                if isinstance(finer, str):
                    raise Rejected(exc.status, exc.reason + finer) from None
                self.settings = finer
                why.append(exc.reason)
        if why:
            self.outcome.notes.append(f"calibrated {len(why)} refinement(s) finer than the source asks "
                                      f"({_level(first)} -> {_level(self.settings)}): {why[0]}")
            self.settings = {**self.settings, "refined_from": {k: first.get(k) for k in ("cells_across", "dt")}}
        with self._stage("agreement"):
            self._agreement(cal["arrays"], tau["tau_acc"], targets)
        with self._stage("record"):
            self._record(ref, cal, e_base, tau, refinement, ref_config, trial, targets)

    def _calibrated(self, ref: dict[str, np.ndarray], intermediate: dict[str, np.ndarray] | None
                    ) -> tuple[dict[str, Any], float, dict[str, float], dict[str, dict[str, float]], dict[str, Any],
                               dict[str, float] | None]:
        """The calibration at the current settings and what the case's gates make of it: e_base,
        thresholds, targets, the trial.  :class:`TooCoarse` when the calibration is too coarse
        for the case's gates (its error, or its threshold against the span margin)."""
        with self._stage("calibration"):
            if intermediate is None:
                self._probe_degree(ref)
            cal = self._calibration(ref if intermediate is None else None)
            e_base = metrics.rel_l2(cal["arrays"], ref, self.mask)
            if intermediate is None:
                cal, e_base = self._discretization_level(cal, e_base, ref)
        try:
            return self._gated(cal, e_base, ref, intermediate)
        except TooCoarse as exc:
            # what a refinement would multiply: CPU time where the runner accounts it (a busy machine
            # stretched the wall time of a 3-D Navier-Stokes calibration past REFINE_SECONDS and its
            # refinement was refused, where a quiet one refined it), else the wall time
            cpu = cal.get("cpu_runtime")
            exc.runtime, exc.cpu = float(cpu if cpu is not None else cal["runtime"]), cpu is not None
            raise

    def _gated(self, cal: dict[str, Any], e_base: float, ref: dict[str, np.ndarray],
               intermediate: dict[str, np.ndarray] | None
               ) -> tuple[dict[str, Any], float, dict[str, float], dict[str, dict[str, float]], dict[str, Any],
                          dict[str, float] | None]:
        o, source = self.outcome, self.source
        refinement = None
        if intermediate is not None:  # no-exact case: L0 calibration, L1 intermediate, L2 reference
            refinement = {"g01": metrics.rel_l2(cal["arrays"], intermediate, self.mask),
                          "g12": metrics.rel_l2(intermediate, ref, self.mask)}
            if max(refinement.values()) <= ROUND_OFF:  # the discrete spaces hold the solution (Poiseuille
                # flow on Taylor-Hood): e_base is round-off, a threshold of 10 x it unmeetable, and the
                # answer a low-degree polynomial the boundary data give away
                raise Rejected("rejected", f"{EXACT_AT_EVERY_LEVEL} to round-off (g01={refinement['g01']:.1e}, "
                               f"g12={refinement['g12']:.1e}): its solution lies in the calibration's discrete space")
            if not refinement["g12"] < refinement["g01"]:
                raise Rejected("rejected", f"{GAPS_DO_NOT_SHRINK}: g01={refinement['g01']:.3e}, "
                               f"g12={refinement['g12']:.3e}")
        o.e_base, o.t_base = e_base, cal["runtime"]
        limit = (source.reference.max_e_base if source.reference and source.reference.max_e_base
                 else E_BASE_RANGE[1])
        if not e_base < limit:
            # an error near 1 is a field unrelated to the reference more often than a coarse mesh
            # (stokes_3d_basic: GMRES + ILU(0) "converged" on a wrong field, e_base 0.998): say
            # what the solver reported, so that the one is told from the other
            solver = ("; an error this large may also be a solve that did not solve -- the calibration "
                      f"solver reported {cal.get('meta', {}).get('solver_info', {})}" if e_base >= WRONG_FIELD else "")
            raise TooCoarse(f"{TOO_COARSE}{e_base:.3e} is not below {limit:g}: "
                            f"the calibration settings are too coarse for this case{solver}", e_base / limit)
        config = self.d.evaluation
        try:
            tau = thresholds(config, e_base, cal["runtime"])
        except CasekitError as exc:
            raise Rejected("rejected", f"{OUT_OF_RANGE}: {exc}") from None
        targets = self._targets(cal, tau["tau_acc"])
        with self._stage("trial"):
            trial = self._trial(ref, tau["tau_acc"], targets)
        return cal, e_base, tau, targets, trial, refinement

    def _refined(self, coarse: TooCoarse, done: int) -> dict[str, Any] | str:
        """The calibration settings one refinement finer (:func:`refine`), or why there are none:
        the refinements the shortfall needs (each roughly halves e_base) exceed what is left of
        :data:`MAX_REFINEMENTS`, or a numerical reference's L1 is not finer any more (the
        calibration must stay the coarsest level of its ladder)."""
        needed = math.ceil(math.log2(coarse.shortfall)) if coarse.shortfall > 1 else 1
        if needed > MAX_REFINEMENTS - done:
            return (f" (refining the calibration would take about {needed}{REFUSED_BY_COUNT}; at most "
                    f"{MAX_REFINEMENTS} in all, {done} done)")
        grow = 2 ** (self.d.dim / 2) * (2 if self.settings.get("dt") is not None else 1)  # cells, steps
        projected = coarse.runtime * grow ** needed
        if projected > REFINE_SECONDS:
            unit = "CPU s" if coarse.cpu else "s"
            return (f" (refining the calibration about {needed} time(s) would take about {projected:.0f} {unit} "
                    f"per run, over the {REFINE_SECONDS:.0f} s{REFUSED_BY_TIME})")
        finer = refine(self.settings)
        levels = self.source.reference.levels if self.source.reference and not self.source.manufactured else []
        if levels:
            l1 = SolveSettings.from_dict(levels[0])
            if not coarser(SolveSettings.from_dict(finer), l1):
                return (f" ({REFUSED_BY_LEVEL}{_level(finer)}: its reference level L1 "
                        f"{_level(l1.to_dict())} would not be finer)")
        return finer

    # -- stages --------------------------------------------------------------------------
    def _reference(self) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray] | None, dict[str, Any]]:
        """(reference, intermediate level or None, reference_config)."""
        if self.source.manufactured:
            k = key("reference", self.source_key)

            def write(tmp: Path) -> None:
                save_reference(tmp / "reference.npz", self.spec, references.manufactured(self.d))

            entry, cached = self.cache.get_or_put("reference", k, write)
            self._cached("reference", cached)
            return references.load(entry / "reference.npz"), None, references.describe_manufactured()
        # reference levels are not timed: a nonlinear one keeps its factorised Jacobian (SolveSettings.newton)
        levels = [SolveSettings.from_dict({**lv, "newton": "modified"}).to_dict()
                  for lv in self.source.reference.levels]  # type: ignore[union-attr]
        k = key("reference", self.source_key, self.opts.track, self.versions, self.code, levels)

        def write_levels(tmp: Path) -> None:
            for i, lv in enumerate(levels, start=1):
                arrays, _ = self._solve(lv, tmp / f"L{i}", repeats=0, limits=self.opts.reference_limits())
                save_reference(tmp / f"L{i}.npz", self.spec, arrays)
                write_json(tmp / f"L{i}_targets.json", load_targets(tmp / f"L{i}", self.spec))

        entry, cached = self.cache.get_or_put("reference", k, write_levels)
        self._cached("reference", cached)
        self.reference_targets = read_json(entry / "L2_targets.json")
        l1, l2 = references.load(entry / "L1.npz"), references.load(entry / "L2.npz")
        return l2, l1, {"method": "numerical", "levels": levels, "track": self.opts.track, "libraries": self.versions}

    def _solve(self, settings: dict[str, Any], artifacts: Path, repeats: int,
               stop: Callable[[Path], bool] | None = None, limits: Limits | None = None
               ) -> tuple[dict[str, np.ndarray], Any]:
        files = self.track.calibration_files(settings, self.spec)
        ex = execute(self.track, files, self.spec, artifacts, repeats=repeats, limits=limits or self.opts.limits,
                     hide=self.hide, runner=self.opts.runner, stop=stop)
        if ex.failure:
            logs = self.case_dir() / "logs" / artifacts.name
            if logs.exists():
                shutil.rmtree(logs)
            shutil.copytree(artifacts, logs)
            raise Rejected("failed", f"the {self.opts.track} solve failed ({ex.failure[0]}): {ex.failure[1]} "
                           f"[log: {logs / 'stderr.txt'}]")
        try:
            arrays = load_solution(artifacts, self.spec, self.inside)
            load_meta(artifacts)
            load_targets(artifacts, self.spec)
        except ArtifactError as exc:
            raise Rejected("failed", f"the {self.opts.track} solver wrote invalid artifacts: {exc}") from None
        self.outcome.solve_seconds += sum(r.solve_seconds or 0.0 for r in ex.runs)
        self.outcome.process_seconds += sum(r.wall_seconds for r in ex.runs)
        return arrays, ex

    def _calibration(self, exact: dict[str, np.ndarray] | None = None) -> dict[str, Any]:
        """The timed calibration at the current settings (``opts.repeats`` runs).  With the
        manufactured reference ``exact``, a level whose first run reproduces the solution (see
        :meth:`_discretization_level`) stops there: it is discarded, so its other timed runs
        would be wasted (at the anchor's resolution a P2 biharmonic solve takes 10-30 s); its
        cache entry holds that one run and is completed if a later build keeps the level."""
        k = key("calibration", self.source_key, self.opts.track, self.versions, self.code, self.settings,
                self.opts.repeats, machine(), TIMING_PROTOCOL)

        def write(tmp: Path, done: list[float] | None = None) -> None:
            times, isolation = list(done or []), ""
            cpu: list[float] = []  # of the runs made here (a completed entry's earlier runs have none)
            wanted = max(self.opts.repeats, 1)

            def reproduces(artifacts: Path) -> bool:
                try:
                    return exact is not None and self._reproduces(artifacts, exact)
                except ArtifactError:
                    return False  # _solve says what is wrong with the artifacts

            with self.lock:  # timed runs never overlap
                while not isolation or len(times) < wanted:
                    _, ex = self._solve(self.settings, tmp / "artifacts", max(wanted - len(times), 1),
                                        stop=reproduces)
                    if ex.runtime is None:
                        raise Rejected("failed", "the calibration runs produced no timing")
                    times.extend(ex.solve_times)
                    cpu.extend(r.solve_cpu_seconds for r in ex.runs if r.solve_cpu_seconds is not None)
                    isolation = ex.runs[-1].isolation
                    if reproduces(tmp / "artifacts"):
                        break
            shutil.copy2(tmp / "artifacts" / "solution.npz", tmp / "calibration.npz")
            write_json(tmp / "targets.json", load_targets(tmp / "artifacts", self.spec))
            write_json(tmp / "runs.json", {"solve_seconds": times, "runtime": statistics.median(times),
                                           "cpu_seconds": cpu,
                                           "cpu_runtime": statistics.median(cpu) if len(cpu) == len(times) else None,
                                           "isolation": isolation})

        entry, cached = self.cache.get_or_put("calibration", k, write)
        runs = read_json(entry / "runs.json")
        if len(runs["solve_seconds"]) < self.opts.repeats and not (
                exact is not None and self._reproduces(entry / "artifacts", exact)):
            # a level stopped after one run under other accuracy settings: time it fully
            entry = self.cache.put("calibration", k, lambda tmp: write(tmp, runs["solve_seconds"]))
            runs, cached = read_json(entry / "runs.json"), False
        self._cached("calibration", cached)
        if runs["runtime"] is None:
            raise Rejected("failed", "the calibration runs produced no timing")
        arrays = references.load(entry / "calibration.npz")
        return {"arrays": arrays, "runtime": runs["runtime"], "runs": runs["solve_seconds"], "entry": entry,
                "cpu_runtime": runs.get("cpu_runtime"),
                "meta": read_json(entry / "artifacts" / "meta.json"),
                "targets": read_json(entry / "targets.json") if (entry / "targets.json").is_file() else {}}

    def _targets(self, cal: dict[str, Any], field_tau: float) -> dict[str, dict[str, float]]:
        """Per target: the hidden value (exact from the manufactured solution, else the reference
        solve's), the calibration's value and relative error (its e_base) and the threshold."""
        if not self.d.targets:
            return {}
        exact = self.d.target_values if self.source.manufactured else self.reference_targets
        errors = {name: metrics.rel_scalar(cal["targets"][name], value) for name, value in exact.items()}
        try:
            taus = target_thresholds(self.d.evaluation, errors, field_tau)
        except CasekitError as exc:
            raise Rejected("rejected", f"{TARGET_OUT_OF_RANGE}: {exc}") from None
        return {name: {"value": exact[name], "e_base": errors[name], "tau": taus[name],
                       "calibration": float(cal["targets"][name])} for name in exact}

    def _at_floor(self, e: float) -> bool:
        """Whether an error ``e`` would set the accuracy threshold at the floor ``tau_min``."""
        config = self.d.evaluation
        return bool(config["alpha_acc"] * e < config["tau_min"])

    def _reproduces(self, artifacts: Path, exact: dict[str, np.ndarray]) -> bool:
        """Whether the solution in ``artifacts`` reproduces the manufactured one at a degree that
        can still be lowered (see :meth:`_discretization_level`)."""
        e = metrics.rel_l2(load_solution(artifacts, self.spec, self.inside), exact, self.mask)
        return int(self.settings.get("degree", 2)) > self.d.family.min_degree and self._at_floor(e)

    def _probe_degree(self, ref: dict[str, np.ndarray]) -> None:
        """Lower the calibration's degree before its run while a probe on a coarse mesh
        (:data:`exactness.PROBE_CELLS` across, the same step) reproduces the manufactured solution
        to round-off: the space holds it at any mesh (:mod:`casekit.build.exactness`), and the run
        at the source's resolution would be thrown away.  Only a solution that is a polynomial of
        low enough degree is probed; a probe that does not reproduce it changes nothing."""
        asked = int(self.settings.get("degree", 2))
        while exactness.may_hold(self.d.solution, self.d.dim, int(self.settings.get("degree", 2)),
                                 self.d.family.min_degree):
            probe = {**self.settings, "cells_across": min(exactness.PROBE_CELLS, self.settings["cells_across"])}
            self.case_dir().mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryDirectory(prefix="probe-", dir=self.case_dir()) as tmp:
                try:
                    arrays, _ = self._solve(probe, Path(tmp) / "probe", repeats=0)
                except Rejected:
                    return  # the run at the source's resolution says what is wrong, if anything
            if not self._at_floor(metrics.rel_l2(arrays, ref, self.mask)):
                return
            self.settings = {**self.settings, "degree": int(self.settings["degree"]) - 1}
            self.probed_from = asked

    def _discretization_level(self, cal: dict[str, Any], e_base: float, ref: dict[str, np.ndarray]
                              ) -> tuple[dict[str, Any], float]:
        """Honest thresholds: the accuracy threshold must be set by discretization error, never
        by the floor ``tau_min`` because the calibration reproduces the manufactured solution
        (a polynomial in its finite-element space).  When ``alpha_acc * e_base < tau_min``, the
        calibration is redone one degree lower on the same mesh, down to the family's lowest
        (``Family.min_degree``: 2 for a Taylor-Hood pair), and the first
        level whose error is discretization error becomes the calibration; if none is, the case
        is rejected."""
        degree = int(self.settings.get("degree", 2))
        original = self.probed_from or degree
        lowest = self.d.family.min_degree
        while self._at_floor(e_base):
            if degree <= lowest:
                raise Rejected("rejected", f"{IN_THE_SPACE} at every degree down to {lowest} "
                               f"(e_base={e_base:.1e}): its threshold would be the floor tau_min, not "
                               "discretization error; choose a solution outside low-degree polynomials")
            degree -= 1
            self.settings = {**self.settings, "degree": degree}
            cal = self._calibration(ref)
            e_base = metrics.rel_l2(cal["arrays"], ref, self.mask)
        if degree != original:
            self.outcome.notes.append(f"calibrated at degree {degree} instead of {original}: degree {original} "
                                      "reproduces the manufactured solution to round-off" + (
                                          f" (a probe {exactness.PROBE_CELLS} cells across showed it)"
                                          if self.probed_from else ""))
            self.settings = {**self.settings, "degree_lowered_from": original}
        return cal, e_base

    def _trial(self, ref: dict[str, np.ndarray], tau_acc: float, targets: dict[str, dict[str, float]]
               ) -> dict[str, Any]:
        """The inversion battery and the span check against the reference: a case that an
        inverter answers within tau_acc (or any target within its tau), whose reference lies
        within SPAN_MARGIN x tau_acc of a small span of visible fields, or whose time-Taylor expansion
        from t0 of order 1 or 2 (casekit.validate.taylor) passes the accuracy gate, is rejected."""
        k = key("trial", self.source_key, self.opts.track, self.versions, self.code, cheaters.KINDS, tau_acc,
                {n: (t["value"], t["tau"]) for n, t in targets.items()}, span.SPAN_MARGIN, span.METHOD,
                taylor.TAYLOR_ORDER)
        points = self.d.grid.points()

        def write(tmp: Path) -> None:
            # casekit's own inverters, scored in this process (no FEM library, no sandbox: they are
            # trusted code); an inverter that cannot be scored stops the case (fail closed)
            try:
                scored = inversion.score(self.spec, ref, self.mask)
            except inversion.InverterError as exc:
                raise Rejected("failed", str(exc)) from None
            results: dict[str, Any] = {}
            for kind, (arrays, e) in scored.items():
                if e is None:  # as a submission it fails the artifact check (non-finite values)
                    results[kind] = {"stage": "F-Exec", "reason": "non-finite values inside the domain"}
                    continue
                results[kind] = {"stage": "F-Acc" if e > tau_acc else "passes accuracy", "error": e}
                if targets:  # what the inverter reports as target values, from its grid values
                    values = target_estimates(self.spec, arrays, points)
                    results[kind]["targets"] = {
                        n: {"error": metrics.rel_scalar(values[n], t["value"]),
                            "passed": bool(metrics.rel_scalar(values[n], t["value"]) <= t["tau"])}
                        for n, t in targets.items()}
            vector = (inversion.magnitude_components(self.d.solution[self.d.output.of], self.d.output.kind,
                                                     self.d.t_out, points, self.mask, self.d.dim)
                      if self.d.solution is not None else None)  # a numerical reference keeps only its output
            fit = span.of_arrays(self.spec, ref, self.mask, vector)
            orders = taylor.of_reference(self.d, self.spec, ref, self.mask)
            write_json(tmp / "trial.json", {"inverters": results,
                                            "span": {**fit.to_dict(), "ratio": fit.residual / tau_acc},
                                            "taylor": None if orders is None else {
                                                "residuals": orders, "ratio": min(orders[1:]) / tau_acc}})

        entry, cached = self.cache.get_or_put("trial", k, write)
        self._cached("trial", cached)
        trial = read_json(entry / "trial.json")
        results = trial["inverters"]
        passing = {kind: r["error"] for kind, r in results.items() if r["stage"] == "passes accuracy"}
        if passing:  # a threshold that a coarse calibration made lax is refined; a real leak is far below
            leaks = ", ".join(f"{kind} (e={e:.2e})" for kind, e in passing.items())
            raise TooCoarse(f"{ANSWERED_BY_INVERTERS} from the agent view alone: {leaks}",
                            tau_acc / max(min(passing.values()), 1e-300))
        guessed = [f"{kind} gets {n} (relative error {t['error']:.2e})" for kind, r in results.items()
                   for n, t in (r.get("targets") or {}).items() if t["passed"]]
        if guessed:
            raise Rejected("rejected", f"{TARGETS_GUESSED}: {', '.join(guessed)}; choose "
                           "targets that need a solve")
        fit = trial["span"]
        allowed = span.largest_threshold(fit["residual"])
        if not tau_acc <= allowed:
            raise TooCoarse(f"{NEAR_A_SPAN}{fit['residual']:.3g} of the {fit['span']} span "
                           f"(led by {', '.join(fit['leading'])}): {fit['ratio']:.3g} x tau_acc, less than the margin "
                           f"{span.SPAN_MARGIN:g} (or halfway from tau_acc to 1)", tau_acc / max(allowed, 1e-300))
        taylor_passes = taylor.passes((trial.get("taylor") or {}).get("residuals"), tau_acc)
        if taylor_passes is not None:  # an answer computed without a solve, refused like an inverter's
            n, e = taylor_passes
            raise TooCoarse(f"{NEAR_A_TAYLOR}{n} from t0 passes the accuracy gate (relative L2 {e:.3g}, "
                            f"tau_acc {tau_acc:.3g})", tau_acc / max(e, 1e-300))
        return trial

    def _record(self, ref: dict[str, np.ndarray], cal: dict[str, Any], e_base: float, tau: dict[str, float],
                refinement: dict[str, Any] | None, ref_config: dict[str, Any], trial: dict[str, Any],
                targets: dict[str, dict[str, float]]) -> None:
        d, source = self.d, self.source
        out_dir = self.case_dir()
        out_dir.mkdir(parents=True, exist_ok=True)
        save_reference(out_dir / "reference.npz", self.spec, ref)
        shutil.copy2(cal["entry"] / "calibration.npz", out_dir / "calibration.npz")
        meta = EvaluationMetadata(
            construction_method="manufactured" if source.manufactured else "numerical_reference",
            reference_config=ref_config,
            calibration_config={**self.settings, "track": self.opts.track, "repeats": self.opts.repeats,
                                "mesh": solver_mesh(cal["meta"])},
            reference_path=f"{source.id}/reference.npz",
            calibration_path=f"{source.id}/calibration.npz",
            thresholds=Thresholds(**tau),
            e_base=e_base,
            t_base=cal["runtime"],
            environment=environment(self.opts.track, self.versions),
            manufactured_solution=d.hidden_solution_text(),
            t_base_runs=cal["runs"],
            refinement=Refinement(refinement["g01"], refinement["g12"]) if refinement else None,
            track=self.opts.track,
            source_hash=self.source_key,
            design=source.design,
            provenance=source.provenance,
            targets=targets or None,
        )
        record = CaseRecord(
            id=source.id,
            public_id=source.public_id or public_id(source.id),
            pde_classification=PdeClassification(d.family.name, d.family.math_types(d.transient)),
            case_spec=self.spec,
            evaluation_config=EvaluationConfig.from_dict(d.evaluation),
            evaluation_metadata=meta,
            tags=list(source.tags or []),
            supported_libraries=list(source.tracks),
            schema_version=SCHEMA_VERSION,
        ).sealed()
        atomic_write_text(out_dir / "record.json", dumps(record.to_dict(), indent=2))
        write_json(out_dir / "trial.json", trial)

    def _agreement(self, arrays: dict[str, np.ndarray], tau_acc: float,
                   targets: dict[str, dict[str, float]] | None = None) -> None:
        """Cross-track agreement: against every other track of the case already built in this
        build dir from the same case source, the two calibration solutions must agree on the grid
        within the larger of the two accuracy thresholds (relative L2 over the in-domain points),
        and their target values each within the larger of the two thresholds of that target
        (:meth:`_target_agreement`)."""
        for other in self.source.tracks:
            other_dir = self.opts.build_dir / other / self.source.id
            if other == self.opts.track or not (other_dir / "record.json").is_file():
                continue
            record = read_json(other_dir / "record.json")
            if record.get("evaluation_metadata", {}).get("source_hash") != self.source_key:
                continue  # built from another version of the case: not comparable
            other_tau = float(record["evaluation_metadata"]["thresholds"]["tau_acc"])
            other_arrays = references.load(other_dir / "calibration.npz")
            distance = metrics.rel_l2(arrays, other_arrays, self.mask)
            bound = max(tau_acc, other_tau)
            self.outcome.agreement[other] = {"distance": distance, "bound": bound}
            if not distance <= bound:
                raise Rejected("failed", f"cross-track disagreement: the {self.opts.track} and {other} calibration "
                               f"solutions differ by {distance:.3e} (relative L2), more than the larger accuracy "
                               f"threshold {bound:.3e} ({self.opts.track} tau_acc={tau_acc:.3e}, {other} "
                               f"tau_acc={other_tau:.3e})")
            self._target_agreement(other, targets or {}, record["evaluation_metadata"].get("targets") or {})

    def _target_agreement(self, other: str, mine: dict[str, dict[str, float]],
                          theirs: dict[str, dict[str, float]]) -> None:
        """The two tracks' calibration values of each target, as a relative distance
        |a - b| / |hidden value| (what the gate measures: relative errors against the hidden value,
        here this track's), must be at most the larger of the two tracks' thresholds of that target.

        The bound is the field's rule applied per target, because a target is gated exactly like the
        field: tau = max(alpha_acc * e_base, the field's tau_acc).  Two sound calibrations of the
        same value each lie within their own e_base of it, so they differ by at most
        e_a + e_b <= (tau_a + tau_b) / alpha_acc -- far inside max(tau_a, tau_b).  A distance beyond
        it is no discretisation error these gates allow: one track computes another quantity (a
        wrong sign, time, coefficient or boundary part) or the tracks' numerical references disagree
        about the value, and an agent's answer would pass or fail by the library it was given.
        Anything tighter (the e_base of either) would fail sound tracks whose errors merely differ in
        size; the larger tau is the loosest gate either track applies, as for the field."""
        for name, t in mine.items():
            if name not in theirs:
                continue  # the other record predates this target: nothing to compare
            value, ours, other_value = float(t["value"]), float(t["calibration"]), float(theirs[name]["calibration"])
            distance = abs(ours - other_value) / abs(value)
            bound = max(float(t["tau"]), float(theirs[name]["tau"]))
            self.outcome.target_agreement.setdefault(other, {})[name] = {"distance": distance, "bound": bound}
            if not distance <= bound:
                raise Rejected("failed", f"cross-track disagreement in target {name!r}: the {self.opts.track} and "
                               f"{other} calibrations give {ours:.6g} and {other_value:.6g}, a relative distance "
                               f"{distance:.3e} (of the hidden value), more than the larger threshold of that "
                               f"target {bound:.3e} ({self.opts.track} tau={float(t['tau']):.3e}, {other} "
                               f"tau={float(theirs[name]['tau']):.3e})")

    # -- helpers -------------------------------------------------------------------------
    def case_dir(self) -> Path:
        return self.opts.build_dir / self.opts.track / self.outcome.case_id

    def _cached(self, stage: str, cached: bool) -> None:
        if cached:
            self.outcome.cached.append(stage)

    def _write_status(self) -> None:
        o = self.outcome
        status = {"case_id": o.case_id, "source": str(o.path), "status": o.status, "reason": o.reason,
                  "e_base": o.e_base, "t_base": o.t_base, "cached": o.cached, "stage_seconds": o.stage_seconds,
                  "agreement": o.agreement, "target_agreement": o.target_agreement,
                  "solve_seconds": o.solve_seconds,
                  "process_seconds": o.process_seconds, "family": o.family,
                  "domain": o.domain, "notes": o.notes,
                  "record_key": record_key(**o.key_parts) if o.key_parts else None}
        write_json(self.opts.build_dir / self.opts.track / o.case_id / "status.json", status)
        if o.status != "built":
            record = self.case_dir() / "record.json"
            if record.exists():
                record.unlink()


class _Timer:
    def __init__(self, into: dict[str, float], name: str) -> None:
        self.into, self.name = into, name

    def __enter__(self) -> None:
        self.t0 = time.perf_counter()

    def __exit__(self, *exc: object) -> None:
        self.into[self.name] = self.into.get(self.name, 0.0) + time.perf_counter() - self.t0


def source_key(source: CaseSource, spec: dict[str, Any]) -> str:
    """The key of a case's content (every stage's key starts from it): the source and the derived
    case_spec, so a change in derivation invalidates the stages; not the list of tracks (adding a
    track to a case keeps its other tracks' builds)."""
    content = {k: v for k, v in source.to_dict().items() if k != "tracks"}
    return key("source", content, spec, __version__)


def record_key(source_key: str, track: str, versions: dict[str, str], code: str) -> str:
    """The identity of a case's build on a track: its :func:`source_key`, the track's library
    versions and its solver code (``Track.code_hash``).  Not the machine nor the calibration
    repeats (under the paired gate ``t_base`` is metadata): the committed build area
    (:mod:`casekit.build.shards`) treats a record of the same key as done on any machine."""
    return key("record", source_key, track, versions, code)


def solver_mesh(meta: dict[str, Any]) -> dict[str, Any]:
    """What the calibration solver reports of the mesh it solved on (cells, degrees of freedom):
    the record describes the calibration's own discretisation, whichever mesher made it."""
    info = meta.get("solver_info") or {}
    return {k: info[k] for k in ("cells", "dofs") if isinstance(info.get(k), int | float)}


def source_settings(source: CaseSource) -> dict[str, Any]:
    """The calibration's private settings: the case source's ``calibration`` block, with the mesh
    graded towards re-entrant corners only where a solution may be singular there -- a
    manufactured solution is smooth everywhere, so its calibration refines no corner unless the
    source asks (an engineer who knows the solution is smooth would not spend degrees of freedom
    there; a no-exact case's solution has the corner singularity)."""
    given = dict(source.calibration or {})
    if source.manufactured:
        given.setdefault("corner_refinement", False)
    return SolveSettings.from_dict(given).to_dict()


def collect_records(build_dir: Path, track: str) -> list[dict[str, Any]]:
    """The built records of a track, sorted by id."""
    out = []
    for p in sorted((build_dir / track).glob("*/record.json")):
        out.append(json.loads(p.read_text()))
    return sorted(out, key=lambda r: r["id"])
