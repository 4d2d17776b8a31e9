"""``casekit verify``: checksums, schemas and cross-references of a packaged dataset."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from casekit import schema
from casekit.errors import CasekitError, Problem
from casekit.evaluate.references import MANUFACTURED_REFERENCE
from casekit.jsonio import sha256_file
from casekit.model.record import CaseRecord
from casekit.package.build_dist import MANIFEST
from casekit.package.subsets import Subset, clashes, of_manifest
from casekit.prompts import libraries
from casekit.unscored import scored_mask


def verify(root: Path) -> list[Problem]:
    out: list[Problem] = []

    def bad(message: str, file: str = "", case_id: str | None = None) -> None:
        out.append(Problem(message, "", case_id, file or None, check="verify"))

    if not (root / MANIFEST).is_file():
        return [Problem("manifest.json is missing: not a casekit dataset", file=str(root), check="verify")]
    manifest = json.loads((root / MANIFEST).read_text())
    listed = {f["path"]: f for f in manifest["files"]}
    for path, entry in listed.items():
        p = root / path
        if not p.is_file():
            bad("listed in the manifest but missing", path)
        elif p.stat().st_size != entry["bytes"] or sha256_file(p) != entry["sha256"]:
            bad("does not match its sha256/size in the manifest", path)
    for p in sorted(q for q in root.rglob("*") if q.is_file() and q.name != MANIFEST):
        if p.relative_to(root).as_posix() not in listed:
            bad("not listed in the manifest", p.relative_to(root).as_posix())
    sets = of_manifest(manifest)
    by_set = {s.name: _records(root, s.records_file(s.tracks[0]), bad) for s in sets}
    for x, names in clashes({name: list(rs) for name, rs in by_set.items()}).items():
        bad(f"the case is in more than one set of cases ({', '.join(names)})", "", x)
    records = {cid: r for rs in by_set.values() for cid, r in rs.items()}
    for s in sets:
        path = s.agent_file
        if not (root / path).is_file():
            bad("the agent views are missing", path)
            continue
        public = {r.get("public_id"): r for r in by_set[s.name].values()}
        for lineno, line in enumerate((root / path).read_text().splitlines(), start=1):
            view = json.loads(line)
            for problem in schema.validate(view, "agent_view"):
                bad(f"line {lineno}: {problem.render()}", path)
            rec = public.get(view.get("id"))
            if rec is None or rec["case_spec"] != view.get("case_spec"):
                bad(f"line {lineno}: an agent view of no record", path)
        _check_case_specs(root, s, public, bad)
    by_public = {r.get("public_id"): r for r in records.values()}
    for lib in libraries():
        for p in sorted((root / "prompts" / lib).glob("*.md")) if (root / "prompts" / lib).is_dir() else []:
            rec = by_public.get(p.stem)
            if rec is None:
                bad("a prompt of no record", p.relative_to(root).as_posix())
            elif json.dumps(rec["case_spec"], indent=2, ensure_ascii=False) not in p.read_text():
                bad("the prompt does not carry its record's case_spec", p.relative_to(root).as_posix(), p.stem)
        for s in sets:
            for rec in by_set[s.name].values():
                if lib in rec["supported_libraries"] and lib in s.tracks and \
                        not (root / "prompts" / lib / f"{rec['public_id']}.md").is_file():
                    bad(f"no {lib} prompt", f"prompts/{lib}/{rec['public_id']}.md", rec["id"])
    for message in _card_problems(root / "README.md", sets):
        bad(message, "README.md")
    return out


def _check_case_specs(root: Path, s: Subset, public: dict[Any, dict[str, Any]], bad: Callable[..., None]) -> None:
    """Each case of the set has ``case_specs/<public id>.json`` holding its record's case_spec, and
    the directory holds nothing else."""
    folder = root / s.case_specs_dir
    for pid, rec in public.items():
        rel = f"{s.case_specs_dir}/{pid}.json"
        if not (root / rel).is_file():
            bad("its case_spec file is missing", rel, rec["id"])
            continue
        try:
            same = json.loads((root / rel).read_text()) == rec["case_spec"]
        except (ValueError, UnicodeDecodeError):
            same = False
        if not same:
            bad("the case_spec file is not its record's case_spec", rel, rec["id"])
    for p in sorted(folder.iterdir()) if folder.is_dir() else []:
        if p.suffix != ".json" or p.stem not in public:
            bad("a case_spec file of no case of the set", p.relative_to(root).as_posix())


def _records(root: Path, path: str, bad: Callable[..., None]) -> dict[str, dict[str, Any]]:
    """The records of the JSONL file ``path``, each checked (schema, content hash, reference)."""
    records: dict[str, dict[str, Any]] = {}
    if not (root / path).is_file():
        bad("the records are missing", path)
        return records
    for lineno, line in enumerate((root / path).read_text().splitlines(), start=1):
        rec = json.loads(line)
        for problem in schema.validate(rec, "case_record"):
            bad(f"line {lineno}: {problem.render()}", path, rec.get("id"))
        if CaseRecord.from_dict(rec).compute_hash() != rec.get("content_hash"):
            bad("content_hash does not match the record", path, rec.get("id"))
        try:  # the unscored points are what the case's Dirichlet data give (casekit.unscored)
            scored_mask(rec["case_spec"], rec.get("id"))
        except CasekitError as exc:
            bad(f"{exc.pointer or ''}: {exc.message}" if exc.pointer else exc.message, path, rec.get("id"))
        except (KeyError, TypeError, ValueError) as exc:  # a malformed case_spec (its schema problems are listed)
            bad(f"its case_spec cannot be scored: {type(exc).__name__}: {exc}", path, rec.get("id"))
        records[rec["id"]] = rec
        meta = rec.get("evaluation_metadata") or {}
        if meta.get("reference_path") == MANUFACTURED_REFERENCE:  # sampled at evaluation: nothing shipped
            if meta.get("construction_method") != "manufactured" or not meta.get("manufactured_solution"):
                bad("its reference is its manufactured solution, and it has none", path, rec["id"])
        elif not (root / str(meta.get("reference_path"))).is_file():
            bad("its reference is missing", str(meta.get("reference_path")), rec["id"])
    return records


def _card_problems(path: Path, sets: list[Subset]) -> list[str]:
    """The dataset card as the Hugging Face Hub reads it: front matter with a license, every
    configuration's files in the ``test`` split, and each set of cases' configurations
    (:mod:`casekit.package.subsets`) declared on its files."""
    from huggingface_hub import DatasetCard

    if not path.is_file():
        return ["the dataset card is missing"]
    try:
        data = DatasetCard(path.read_text(encoding="utf-8")).data.to_dict()
    except Exception as exc:  # the Hub's parser raises several types for a malformed card
        return [f"the dataset card does not parse as a Hugging Face card: {exc}"]
    out = [] if data.get("license") else ["the dataset card has no license"]
    configs = data.get("configs") or []
    if not configs:
        out.append("the dataset card declares no configurations")
    for c in configs:
        splits = {f.get("split") for f in c.get("data_files") or [] if isinstance(f, dict)}
        if splits != {"test"}:
            found = sorted(map(str, splits))
            out.append(f"configuration {c.get('config_name')!r} is not in the test split (has {found})")
    declared = {c.get("config_name"): [f.get("path") for f in c.get("data_files") or [] if isinstance(f, dict)]
                for c in configs}
    for s in sets:
        expected = {s.agent_config: s.agent_file, **{s.records_config(t): s.records_file(t) for t in s.tracks}}
        for cname, file in expected.items():
            if declared.get(cname) != [file]:
                out.append(f"the configuration {cname!r} is not declared on {file} (declared: {declared.get(cname)})")
    return out
