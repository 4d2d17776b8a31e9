"""``casekit reproduce``: rebuild cases of a released dataset and check they are the released ones.

A release is reproducible when the same case sources, built again with the same casekit, give
the same cases: the identical agent view (case_spec and public id), the same source, the same
reference (a manufactured case's: its released solution sampled on the grid; a numerical one's:
the shipped arrays, or their sha256 in the release's manifest when the library versions are the
released ones) and a calibration error within a factor of the released
one (meshes and iterative solves may move in the last digits across library versions; a changed
discretization moves it by far more).  Times are machine-dependent and never compared.

The check runs on a *stratified sample* (:func:`stratified`): cheap cases that together cover
every family, domain template and math type of the release, so CI rebuilds a release in
minutes; ``--sample all`` rebuilds everything.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from casekit import schema
from casekit.errors import CasekitError, Problem, UsageError
from casekit.evaluate.references import MANUFACTURED_REFERENCE
from casekit.jsonio import iter_jsonl, sha256_file
from casekit.model.source import load_source_dict
from casekit.validate import SOURCE_SUFFIXES

#: a rebuilt calibration error must be within this factor of the released one
E_BASE_FACTOR = 1.5


def released_records(release: Path, track: str) -> dict[str, dict[str, Any]]:
    """The released records of ``track`` (``cases.jsonl`` for the primary track, else
    ``tracks/<track>.jsonl``), by id."""
    manifest = _manifest(release)
    if track not in manifest.get("tracks", []):
        raise UsageError(f"{release} has no {track} records", valid=", ".join(manifest.get("tracks", [])))
    path = release / ("cases.jsonl" if track == manifest["tracks"][0] else f"tracks/{track}.jsonl")
    if not path.is_file():
        raise UsageError(f"{path} is missing", valid="a release directory written by casekit package")
    out: dict[str, dict[str, Any]] = {}
    for lineno, rec in iter_jsonl(path):
        problems = schema.validate(rec, "case_record") if isinstance(rec, dict) else []
        if not isinstance(rec, dict) or problems:
            why = problems[0].render() if problems else "not a JSON object"
            raise UsageError(f"{path}: line {lineno} is not a case record: {why}",
                             valid="records written by casekit package")
        out[rec["id"]] = rec
    return out


def _manifest(release: Path) -> dict[str, Any]:
    path = release / "manifest.json"
    if not path.is_file():
        raise UsageError(f"{release} is not a casekit release (no manifest.json)",
                         valid="a directory written by casekit package / casekit release")
    try:
        data = json.loads(path.read_text())
    except ValueError as exc:
        raise UsageError(f"{path} is not JSON: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("tracks"), list) or not data["tracks"]:
        raise UsageError(f"{path} is not a manifest")
    return data


def strata(record: dict[str, Any]) -> tuple[str, ...]:
    """What a stratified sample must cover, for one record."""
    c = record["pde_classification"]
    return (f"family:{c['equation_family']}", f"domain:{record['case_spec']['domain']['type']}",
            *(f"math:{m}" for m in c.get("math_type") or []))


def cost(record: dict[str, Any]) -> float:
    """What rebuilding a record costs, relatively: its calibration time (released records of
    the anchor's resolution take 0.5-15 s per solve; a sample of the cheap ones stays minutes)."""
    t = record.get("evaluation_metadata", {}).get("t_base")
    return float(t) if isinstance(t, (int, float)) and t > 0 else 1.0


def stratified(records: Iterable[dict[str, Any]]) -> list[str]:
    """The ids of a cheap sample covering every stratum (family, domain template, math type):
    greedy weighted set cover -- repeatedly the record with the most uncovered strata per unit
    of :func:`cost`, ties broken by id (deterministic)."""
    pool = sorted(records, key=lambda r: r["id"])
    todo = {s for r in pool for s in strata(r)}
    out: list[str] = []
    while todo:
        best = max(pool, key=lambda r: (len(todo & set(strata(r))) / cost(r), -pool.index(r)))
        out.append(best["id"])
        todo -= set(strata(best))
    return sorted(out)


def sources_by_id(roots: Iterable[Path]) -> dict[str, Path]:
    """Case source files under ``roots``, by the id they declare."""
    out: dict[str, Path] = {}
    for root in roots:
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.suffix in SOURCE_SUFFIXES)
        for p in files:
            try:
                data = load_source_dict(p)
            except CasekitError:  # not a case source (another YAML file): not one of the release's
                continue
            cid = data.get("id")
            if isinstance(cid, str):
                if cid in out and out[cid] != p:
                    raise UsageError(f"two case sources declare the id {cid!r}: {out[cid]} and {p}",
                                     valid="one source per id under --sources")
                out[cid] = p
    return out


def compare(release: Path, build_dir: Path, track: str, ids: list[str]) -> list[Problem]:
    """What differs between the released records ``ids`` and the ones rebuilt in ``build_dir``."""
    released = released_records(release, track)
    manifest = _manifest(release)
    digests = {f["path"]: f["sha256"] for f in manifest.get("files", [])}
    rebuilt_path = build_dir / track / "records.jsonl"
    rebuilt = {rec["id"]: rec for _, rec in iter_jsonl(rebuilt_path)} if rebuilt_path.is_file() else {}
    out: list[Problem] = []

    def bad(cid: str, message: str, pointer: str = "") -> None:
        out.append(Problem(message, pointer, cid, check="reproduce"))

    for cid in ids:
        old, new = released.get(cid), rebuilt.get(cid)
        if old is None:
            bad(cid, "not in the release")
            continue
        if new is None:
            bad(cid, f"was not rebuilt on {track} (see {build_dir / track / 'build-report.json'})")
            continue
        if new["case_spec"] != old["case_spec"]:
            bad(cid, "the agent view differs from the released one", "/case_spec")
        if new.get("public_id") != old.get("public_id"):
            bad(cid, "the public id differs from the released one", "/public_id")
        m_old, m_new = old["evaluation_metadata"], new["evaluation_metadata"]
        if m_new.get("source_hash") != m_old.get("source_hash"):
            bad(cid, "built from a different case source than the released case", "/evaluation_metadata/source_hash")
        e_old, e_new = float(m_old["e_base"]), float(m_new["e_base"])
        if not (e_old / E_BASE_FACTOR <= e_new <= e_old * E_BASE_FACTOR):
            bad(cid, f"calibration error {e_new:.3e} is not within a factor {E_BASE_FACTOR} of the released "
                f"{e_old:.3e}", "/evaluation_metadata/e_base")
        if new["evaluation_config"] != old["evaluation_config"]:
            bad(cid, "the threshold settings differ from the released ones", "/evaluation_config")
        mine = build_dir / track / cid / "reference.npz"
        if track != manifest["tracks"][0] or not mine.is_file():
            continue
        shipped = release / "references" / f"{cid}.npz"
        if m_old.get("reference_path") == MANUFACTURED_REFERENCE:  # sampled from the released solution
            from casekit.evaluate.references import read_arrays, sample_manufactured

            sampled = sample_manufactured(old["pde_classification"]["equation_family"],
                                          m_old["manufactured_solution"], old["case_spec"])
            rebuilt_arrays = read_arrays(mine)
            gap = _gap(sampled, {k: rebuilt_arrays[k] for k in sampled if k in rebuilt_arrays})
            if gap > REFERENCE_GAP:
                bad(cid, f"the reference differs from the released manufactured solution on the grid (relative "
                    f"gap {gap:.2e})", "/evaluation_metadata/manufactured_solution")
        elif shipped.is_file():  # arrays at hand: equal to round-off (SIMD libm, BLAS) on any machine
            gap = _array_gap(shipped, mine)
            if gap > REFERENCE_GAP:
                bad(cid, f"the reference differs from the released one (relative gap {gap:.2e})",
                    "/evaluation_metadata/reference_path")
        elif (ref := digests.get(f"references/{cid}.npz")) is not None and _same_environment(old, new) \
                and sha256_file(mine) != ref:
            bad(cid, "the reference's sha256 differs from the released one (same casekit, libraries and CPU)",
                "/evaluation_metadata/reference_path")
    return out


#: largest relative L2 gap between a rebuilt and a released reference array
REFERENCE_GAP = 1e-9


def _array_gap(a: Path, b: Path) -> float:
    """The largest relative L2 gap over the arrays of two .npz files (inf if their names,
    shapes or NaN masks differ)."""
    from casekit.evaluate.references import read_arrays

    return _gap(read_arrays(a), read_arrays(b))


def _gap(x: dict[str, Any], y: dict[str, Any]) -> float:
    """The largest relative L2 gap over two sets of arrays (inf if their names, shapes or NaN
    masks differ)."""
    import numpy as np

    if set(x) != set(y):
        return float("inf")
    worst = 0.0
    for k in x:
        u, v = np.asarray(x[k], dtype=float), np.asarray(y[k], dtype=float)
        if u.shape != v.shape or not np.array_equal(np.isnan(u), np.isnan(v)):
            return float("inf")
        ok = ~np.isnan(u)
        worst = max(worst, float(np.linalg.norm(u[ok] - v[ok]) / max(np.linalg.norm(u[ok]), 1e-300)))
    return worst


def _same_environment(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Both built by the same casekit with the same libraries on the same CPU model (where a
    byte-identical reference is expected)."""
    ea, eb = a["evaluation_metadata"].get("environment") or {}, b["evaluation_metadata"].get("environment") or {}
    keys = ("casekit_version", "libraries", "cpu_model")
    return all(ea.get(k) for k in keys) and all(ea.get(k) == eb.get(k) for k in keys)
