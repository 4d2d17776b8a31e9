"""Static validation of case sources and case records.

:func:`validate_paths` accepts case source files (``*.yaml``), directories of them, and JSONL
files of case records.  Every finding is a :class:`~casekit.errors.Problem` naming the file, the
case, the JSON pointer of the field, what is wrong and what would be valid; ``check`` classifies
it (``schema``, ``naming``, ``leak.symbolic``, ``residual``, ...) for the per-class summary.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from casekit import schema
from casekit.derive import Derived, derive
from casekit.errors import CasekitError, Problem, UsageError
from casekit.families import FAMILIES
from casekit.families.base import DATA_BC_KINDS
from casekit.jsonio import iter_jsonl
from casekit.model.record import CaseRecord
from casekit.model.source import CaseSource, load_source_dict
from casekit.tracks import TRACKS
from casekit.validate.case_checks import Settings, run_all
from casekit.validate.view import CaseView, view_of_record

SOURCE_SUFFIXES = (".yaml", ".yml")


@dataclass
class Report:
    problems: list[Problem] = field(default_factory=list)
    files: int = 0
    cases: int = 0
    #: (file, case id) -> what the checks measured (``span``: the span leak check's fit)
    measures: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.problems

    def by_check(self) -> dict[str, tuple[int, int]]:
        """check class -> (problems, distinct cases)."""
        counts = Counter(p.check for p in self.problems)
        cases: dict[str, set] = {}
        for p in self.problems:
            cases.setdefault(p.check, set()).add((p.file, p.case_id))
        return {k: (counts[k], len(cases[k])) for k in sorted(counts)}

    def failed_cases(self) -> int:
        return len({(p.file, p.case_id) for p in self.problems})


def collect(paths: Iterable[Path]) -> list[Path]:
    """The files to validate; a path that does not exist or has an unknown kind is a usage error."""
    out: list[Path] = []
    for path in paths:
        path = Path(path)
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.suffix in (*SOURCE_SUFFIXES, ".jsonl"))
            out.extend(found)
        elif path.is_file():
            if path.suffix not in (*SOURCE_SUFFIXES, ".jsonl"):
                raise UsageError(f"cannot validate {path}: not a case source or a JSONL of records",
                                 valid="*.yaml, *.yml, *.jsonl or a directory")
            out.append(path)
        else:
            raise UsageError(f"{path} does not exist")
    if not out:
        raise UsageError(f"no case sources or records under {', '.join(str(p) for p in paths)}",
                         valid="*.yaml, *.yml or *.jsonl files, or directories holding them")
    return out


Item = tuple[str | None, list[Problem], dict[str, Any]]


def _file_items(path: Path, settings: Settings) -> list[Item]:
    return list(_records(path, settings) if path.suffix == ".jsonl" else _sources(path, settings))


def validate_paths(paths: Iterable[Path], settings: Settings | None = None, jobs: int = 1,
                   progress: Callable[[int, int], None] = lambda done, total: None) -> Report:
    """Validate every file; ``jobs`` > 1 checks files in that many processes; ``progress(done,
    total)`` after each file."""
    settings = settings or Settings()
    report = Report()
    ids: dict[str, str] = {}
    files = collect(paths)
    results = []
    if jobs > 1 and len(files) > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=jobs) as pool:
            for items in pool.map(_file_items, files, [settings] * len(files), chunksize=4):
                results.append(items)
                progress(len(results), len(files))
    else:
        for f in files:
            results.append(_file_items(f, settings))
            progress(len(results), len(files))
    for path, items in zip(files, results, strict=True):
        report.files += 1
        for case_id, problems, measures in items:
            report.cases += 1
            if measures and case_id is not None:
                report.measures[(str(path), case_id)] = measures
            if case_id is not None:
                if case_id in ids:
                    problems.append(Problem(f"duplicate case id (also in {ids[case_id]})", "/id",
                                            case_id, check="unique_id"))
                else:
                    ids[case_id] = str(path)
            report.problems.extend(p.located(file=str(path)) for p in problems)
    return report


def classify(p: Problem) -> Problem:
    """Refine the class of unknown-field problems by where they are: foreign tolerance keys,
    domain schema variants, and other fields that no casekit code reads."""
    if not p.message.startswith("unknown field") or p.check not in ("schema", "domain"):
        return p
    if p.pointer.startswith(("/evaluation/", "/evaluation_config/")):
        check = "tolerance_keys"
    elif p.pointer.startswith(("/domain", "/case_spec/domain")):
        check = "domain_schema"
    else:
        check = "unknown_field"
    return Problem(p.message, p.pointer, p.case_id, p.file, p.valid, check)


# --------------------------------------------------------------------------- sources
def _sources(path: Path, settings: Settings) -> Iterator[Item]:
    try:
        data = load_source_dict(path)
    except CasekitError as exc:
        yield None, [Problem(exc.message, exc.pointer, check="yaml")], {}
        return
    case_id = data.get("id") if isinstance(data.get("id"), str) else None
    measures: dict[str, Any] = {}
    try:
        problems, _ = check_and_derive(data, path, settings, measures)
    except Exception as exc:  # a defect of casekit's: reported for this case, the others are still checked
        problems = [Problem(f"casekit could not check this case (a casekit defect, please report it): {exc!r}"[:500],
                            case_id=case_id, check="internal")]
    yield case_id, problems, measures


def check_source(data: dict[str, Any], path: Path | None = None,
                 settings: Settings | None = None) -> list[Problem]:
    """Every problem of one case source (as loaded from YAML), classified."""
    return check_and_derive(data, path, settings)[0]


def check_and_derive(data: dict[str, Any], path: Path | None = None, settings: Settings | None = None,
                     measures: dict[str, Any] | None = None) -> tuple[list[Problem], Derived | None]:
    """:func:`check_source`, and the derived case the checks were made on (None when it could not
    be derived), so that a caller that goes on with it (the build) derives it once; ``measures``
    receives what the checks measured (the span residual)."""
    problems, derived = _check_source(data, path, settings, measures if measures is not None else {})
    return [classify(p) for p in problems], derived


def _check_source(data: dict[str, Any], path: Path | None, settings: Settings | None, measures: dict[str, Any]
                  ) -> tuple[list[Problem], Derived | None]:
    case_id = data.get("id") if isinstance(data.get("id"), str) else None
    problems = [p.located(case_id=case_id) for p in schema.validate(data, "case_source")]
    if any(not p.message.startswith("unknown field") for p in problems):
        return problems, None  # structurally broken: deeper checks would only repeat it
    source = CaseSource.from_dict(data)
    source.path = path
    problems += _naming(source, path)
    problems += _tracks(source.tracks, "/tracks", source.id)
    problems += _time_steps(source)
    try:
        derived = derive(source)
        view = _view_of_derived(derived)  # renders the case_spec, which can fail too
    except CasekitError as exc:
        problems += [p.located(case_id=source.id) for p in (exc.problems or [exc.as_problem()])]
        return problems + _typed_leaks(source), None
    problems += _typed(derived)
    problems += run_all(view, settings)
    measures.update(view.measures)
    problems += _targets(derived, settings or Settings())
    return problems, derived


def _time_steps(source: CaseSource) -> list[Problem]:
    """A transient case's calibration (and every numerical reference level) needs a time step:
    without one every track's solve stops at build time."""
    if source.pde.time is None:
        return []
    settings = [("/calibration/dt", source.calibration or {})]
    if source.reference is not None:
        settings += [(f"/reference/levels/{i}/dt", lv) for i, lv in enumerate(source.reference.levels)]
    span = float(source.pde.time.t_end) - float(source.pde.time.t0)
    return [Problem("a transient case needs a time step here", pointer, source.id,
                    valid=f"a step that divides the interval, e.g. {span / 100:g}", check="calibration")
            for pointer, lv in settings if not isinstance(lv, dict) or lv.get("dt") is None]


def _targets(d: Derived, settings: Settings) -> list[Problem]:
    """Targets: every listed track computes their kinds; their exact values can be gated (not
    near zero, maxima inside); no agent-visible number is one of them, and no inverter reads one
    off the agent view."""
    if not d.targets:
        return []
    kinds = {t.kind for t in d.targets}
    able = [n for n, t in TRACKS.items() if kinds <= set(t.target_kinds)]
    out = []
    for i, name in enumerate(d.source.tracks):
        missing = kinds - set(TRACKS.get(name).target_kinds) if name in TRACKS else set()
        if missing:
            out.append(Problem(f"track {name!r} does not compute target values of kind(s) {', '.join(sorted(missing))}",
                               f"/tracks/{i}", d.case_id, valid=", ".join(able) or "(no track computes them)",
                               check="targets"))
    try:
        values = d.target_values
    except CasekitError as exc:
        return out + [p.located(case_id=d.case_id) for p in (exc.problems or [exc.as_problem("targets")])]
    return out + visible_target_values(d.case_spec(), values, d.case_id) + guessed_targets(d, values, settings)


def guessed_targets(d: Derived, values: dict[str, float], settings: Settings) -> list[Problem]:
    """A target value that an inverter of the battery (the trivial baselines among them) reports
    from the agent view alone, within the gap validation asks of the field (no threshold is
    known before the build; the build's trial refuses it within the target's own threshold):
    the case would be rejected by the build, so it is refused here, by ``casekit new`` (which
    draws again) and ``casekit validate``."""
    from casekit.evaluate.verdicts import grid_mask
    from casekit.validate.inversion import InverterError, target_errors

    spec = d.case_spec()
    try:
        errors = target_errors(spec, values, grid_mask(spec), d.grid.points())
    except InverterError as exc:
        return [Problem(str(exc), "/targets", d.case_id, check="leak.target")]
    gap = settings.span_gap_min
    return [Problem(f"target {name!r} needs no solve: the inverter {kind!r} reports it from the agent view alone "
                    f"within a relative error of {e:.2e} (the build would reject the case)", "/targets", d.case_id,
                    valid=f"targets that every inverter misses by at least {gap:g} (another kind or quantity, or "
                          "another draw: casekit new --seed)", check="leak.target")
            for (kind, name), e in sorted(errors.items(), key=lambda kv: kv[1]) if e < gap]


def visible_target_values(spec: dict[str, Any], values: dict[str, float], case_id: str) -> list[Problem]:
    """A hidden target value written anywhere in the case_spec (as a number or inside an
    expression, with more digits than a round number has) is a leak."""
    import json
    import re

    numbers = [float(m) for m in re.findall(r"[-+]?\d+\.\d*(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+", json.dumps(spec))]
    out = []
    for name, v in values.items():
        if float(f"{v:.3g}") == v:
            continue  # a round value (1, 0.25) is written everywhere without telling anything
        if any(abs(n - v) <= 1e-9 * abs(v) or abs(abs(n) - abs(v)) <= 1e-9 * abs(v) for n in numbers):
            out.append(Problem(f"the hidden value of target {name!r} ({v!r}) appears in the agent-visible case_spec",
                               "/targets", case_id, valid="no agent-visible number equal to a target value",
                               check="leak.target"))
    return out


def _typed_leaks(source: CaseSource) -> list[Problem]:
    """When a case cannot be derived, typed boundary values can still be compared with the
    manufactured solution: a value that is the solution itself is a leak whatever else is wrong."""
    from casekit.expr import ExpressionError, as_expr
    from casekit.leak import symbolically_equal

    if not source.manufactured_solution:
        return []
    variables = ("x", "y", "z", "t")

    def expr(v: Any) -> Any:
        return tuple(as_expr(c, variables=variables) for c in v) if isinstance(v, list) else as_expr(
            v, variables=variables)

    try:
        solution = {k: expr(v) for k, v in source.manufactured_solution.items()}
    except ExpressionError:
        return []
    out = []
    for tag, spec in source.boundary.items():
        if spec.kind != "dirichlet" or spec.value is None:
            continue
        try:
            value = expr(spec.value)
        except ExpressionError:
            continue
        if any(symbolically_equal(value, u) for u in solution.values()):
            out.append(Problem(f"the dirichlet value on {tag!r} is the hidden solution itself: evaluating it "
                               "everywhere reproduces the reference", f"/boundary/{tag}", source.id,
                               valid="data restricted to the boundary (casekit derives them)", check="leak.symbolic"))
    return out


def _naming(source: CaseSource, path: Path | None) -> list[Problem]:
    out = []
    if not source.id.startswith(source.family + "_"):
        out.append(Problem(f"case id must start with its family name {source.family + '_'!r}", "/id",
                           source.id, valid=f"{source.family}_<name>", check="naming"))
    if path is not None:
        if path.stem != source.id:
            out.append(Problem(f"file name {path.name!r} must be the case id", "/id", source.id,
                               valid=f"{source.id}.yaml", check="naming"))
        if path.parent.parent.name == "cases" and path.parent.name != source.family:
            out.append(Problem(f"case sources live under cases/<family>/; this one is under "
                               f"{path.parent.name!r}", "/family", source.id,
                               valid=f"cases/{source.family}/{path.name}", check="naming"))
    return out


def _tracks(names: list[str], pointer: str, case_id: str) -> list[Problem]:
    return [Problem(f"unknown track {t!r}", f"{pointer}/{i}", case_id, valid=", ".join(TRACKS.names()),
                    check="tracks") for i, t in enumerate(names) if t not in TRACKS]


def _typed(d: Derived) -> list[Problem]:
    if not d.source.manufactured:
        return []
    where = {"forcing": "/pde/forcing", "initial": "/initial"}
    return [Problem(f"{what.replace('/', ' ')} data are typed although casekit derives them from the "
                    "manufactured solution", where.get(what, "/" + what), d.case_id,
                    valid="remove them (forcing, boundary and initial data are derived)",
                    check="typed_data") for what in d.typed]


def _view_of_derived(d: Derived) -> CaseView:
    tags = {}
    spec = d.case_spec()
    for kind in DATA_BC_KINDS:
        for i, entry in enumerate(spec["bc"].get(kind, [])):
            tags[f"/bc/{kind}/{i}"] = entry["tag"]
    typed = set(d.typed)

    def locate(pointer: str) -> str:
        parts = pointer.split("/")
        if pointer.startswith("/bc/") and len(parts) >= 4 and "/".join(parts[:4]) in tags:
            return f"/boundary/{tags['/'.join(parts[:4])]}"
        if pointer.startswith("/pde/forcing"):
            return pointer if "forcing" in typed else "/manufactured_solution"
        if pointer.startswith("/ic/"):
            return "/initial/" + parts[2] if "initial" in typed else "/manufactured_solution"
        if pointer.startswith("/bc"):
            return "/boundary"
        if pointer.startswith("/domain"):
            return "/domain"
        return "/manufactured_solution" if pointer in ("/", "") else pointer

    return CaseView(d.case_id, d.family, d.domain, spec, d.hidden_solution_text(), locate)


# --------------------------------------------------------------------------- records
def _records(path: Path, settings: Settings) -> Iterator[Item]:
    try:
        for lineno, data in iter_jsonl(path):
            case_id = data.get("id") if isinstance(data, dict) and isinstance(data.get("id"), str) else None
            problems = check_record(data, settings) if isinstance(data, dict) else [
                Problem("a record must be a JSON object", check="schema")]
            yield case_id, [Problem(p.message, p.pointer, p.case_id, f"{path}:{lineno}", p.valid, p.check)
                            for p in problems], {}
    except CasekitError as exc:
        yield None, [Problem(exc.message, check="jsonl")], {}


def check_record(data: dict[str, Any], settings: Settings | None = None) -> list[Problem]:
    """Every problem of one built case record, classified."""
    return [classify(p) for p in _check_record(data, settings)]


def _check_record(data: dict[str, Any], settings: Settings | None) -> list[Problem]:
    case_id = data.get("id") if isinstance(data.get("id"), str) else None
    problems = [p.located(case_id=case_id) for p in schema.validate(data, "case_record")]
    if problems:
        return problems
    record = CaseRecord.from_dict(data)
    if record.compute_hash() != record.content_hash:
        problems.append(Problem("content_hash does not match the record", "/content_hash", record.id,
                                valid=record.compute_hash(), check="integrity"))
    fam_name = record.pde_classification.equation_family
    if fam_name not in FAMILIES:
        return [*problems, Problem(f"unknown family {fam_name!r}", "/pde_classification/equation_family", record.id,
                                   valid=", ".join(FAMILIES.names()), check="family")]
    family = FAMILIES.get(fam_name)
    if not record.id.startswith(fam_name + "_"):
        problems.append(Problem(f"case id must start with its family name {fam_name + '_'!r}", "/id",
                                record.id, check="naming"))
    allowed = family.allowed_math_types()
    for i, m in enumerate(record.pde_classification.math_type):
        if m not in allowed:
            problems.append(Problem(f"math type {m!r} does not fit family {fam_name!r}",
                                    f"/pde_classification/math_type/{i}", record.id,
                                    valid=", ".join(sorted(allowed)), check="family"))
    problems += _tracks(record.supported_libraries, "/supported_libraries", record.id)
    try:
        view = view_of_record(data)
    except CasekitError as exc:
        return problems + [Problem(p.message, p.pointer, record.id, valid=p.valid, check="domain")
                           for p in (exc.problems or [exc.as_problem()])]
    return problems + run_all(view, settings)
