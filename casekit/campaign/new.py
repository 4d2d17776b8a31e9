"""``casekit campaign new``: draw, validate, build and package a private campaign.

A campaign directory holds ``sources/`` (the drawn case sources: their hidden solutions, so it is
private), ``build/`` (the build, as ``casekit build`` writes it), ``dataset/`` (the packaged
dataset in a release's format, whose card says it is private, what it follows and its
distribution; ``casekit evaluate --release DIR/dataset`` scores against it) and ``campaign.json``
(what the campaign follows, each case's anchor, draw and stratum, and every draw left out with
its reason).  Neither the secret nor any seed is written anywhere (:mod:`casekit.campaign.secret`).

Drawing and building alternate for at most ``rounds`` rounds: a case the build rejects (a
calibration too coarse for its gates, an inverter within its threshold, ...) is removed with its
source, and its stratum's next draw takes its place.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from casekit import yamlio
from casekit.campaign.draw import Drawn, Stratum, StratumDraw, allocate, distribution, draw_all, stratum_of
from casekit.campaign.secret import Keys
from casekit.errors import UsageError
from casekit.jsonio import atomic_write_text, read_json, write_json

CAMPAIGN_FILE = "campaign.json"
SOURCES, BUILD, DATASET = "sources", "build", "dataset"


@dataclass
class Options:
    release: Path
    sources: list[Path]
    n: int
    out: Path
    tracks: list[str] = field(default_factory=list)  # default: the release's primary track
    name: str = ""  # default: <release name>-campaign
    jobs: int = 1
    rounds: int = 3
    repeats: int = 1
    timeout: float = 600.0
    memory_mb: int = 4096
    runner: str = "local"
    executor: Any = None  # casekit.executors.ExecutorOptions
    allow_git: bool = False


def git_work_tree(path: Path) -> Path | None:
    """The git work tree holding ``path`` (which may not exist yet), or None."""
    here = Path(path).resolve()
    for p in (here, *here.parents):
        if (p / ".git").exists():
            return p
    return None


def release_of(path: Path) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """A release's manifest and its primary track's records by id, refused unless it verifies."""
    from casekit.package.reproduce import released_records
    from casekit.package.verify import verify

    if not (Path(path) / "manifest.json").is_file():
        raise UsageError(f"--like {path} is not a casekit release (no manifest.json)",
                         valid="releases/<name>/<version>, written by casekit release")
    problems = verify(Path(path))
    if problems:
        raise UsageError(f"--like {path} does not verify: {problems[0].render()}", valid=f"casekit verify {path}")
    manifest = read_json(Path(path) / "manifest.json")
    return manifest, released_records(Path(path), manifest["tracks"][0])


def anchor_sources(records: dict[str, dict[str, Any]], roots: list[Path]) -> dict[str, dict[str, Any]]:
    """The case source of every released case, by id, from ``roots``; a case without one, or
    whose source is of another family or domain than its record, is refused by name."""
    from casekit.model.source import load_source_dict
    from casekit.package.reproduce import sources_by_id

    found = sources_by_id(roots)
    missing = sorted(set(records) - set(found))
    if missing:
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        raise UsageError(f"{len(missing)} released case(s) have no source under {', '.join(map(str, roots))}: "
                         + ", ".join(missing[:5]) + more,
                         valid="--sources the directories the release was built from (default: cases)")
    out = {}
    for cid, rec in records.items():
        src = load_source_dict(found[cid])
        family, domain = rec["pde_classification"]["equation_family"], rec["case_spec"]["domain"]["type"]
        if src.get("family") != family or (src.get("domain") or {}).get("template") != domain:
            raise UsageError(f"{found[cid]}: the source of {cid} is not the released case ({src.get('family')} on "
                             f"{(src.get('domain') or {}).get('template')}, released: {family} on {domain})",
                             valid="--sources the directories the release was built from")
        out[cid] = src
    return out


def _refuse_out(out: Path, allow_git: bool) -> None:
    if (out / CAMPAIGN_FILE).exists():
        raise UsageError(f"{out} already holds a campaign ({out / CAMPAIGN_FILE})",
                         valid="a new --out directory for a new campaign")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UsageError(f"--out {out} exists and is not empty", valid="a new or empty directory")
    tree = git_work_tree(out)
    if tree is not None and not allow_git:
        raise UsageError(f"--out {out} is inside the git work tree {tree}: the campaign's sources hold its hidden "
                         "solutions and would be one `git add` from being published",
                         valid="a directory outside any git work tree, or --allow-git if it is ignored there")


def follows_label(manifest: dict[str, Any]) -> str:
    return f"{manifest['name']} {manifest['version']}"


def new_campaign(opts: Options, keys: Keys, say: Callable[[str], None] = lambda s: None,
                 drawn: Callable[[Drawn], None] = lambda d: None) -> dict[str, Any]:
    """Draw, validate, build and package the campaign; returns what ``campaign.json`` holds."""
    from casekit.build.pipeline import BuildOptions
    from casekit.build.run import build
    from casekit.package.build_dist import package

    out = Path(opts.out)
    _refuse_out(out, opts.allow_git)
    if opts.n < 1:
        raise UsageError(f"--n {opts.n}: a campaign draws at least one case")
    manifest, records = release_of(opts.release)
    tracks = opts.tracks or [manifest["tracks"][0]]
    follows = follows_label(manifest)
    sources = anchor_sources(records, opts.sources)
    counts = distribution(records.values())
    need = allocate(counts, opts.n, keys)
    by_stratum: dict[Stratum, dict[str, dict[str, Any]]] = {}
    for cid, rec in sorted(records.items()):
        by_stratum.setdefault(stratum_of(rec), {})[cid] = sources[cid]
    say(f"{follows}: {len(records)} case(s) in {len(counts)} strata (family x math type x domain); drawing {opts.n} "
        f"case(s) over {len(need)} of them")
    out.mkdir(parents=True, exist_ok=True)
    kept: dict[str, Drawn] = {}
    left_out: list[dict[str, Any]] = []
    start = dict.fromkeys(need, 0)
    for round_no in range(1, opts.rounds + 1):
        jobs = [StratumDraw(s, k, by_stratum[s], start[s]) for s, k in need.items() if k > 0]
        if not jobs:
            break
        results = draw_all(jobs, keys, follows, opts.jobs, drawn)
        new_paths = []
        for s, (ds, nxt) in results.items():
            start[s] = nxt
            for d in ds:
                if d.source is None:
                    left_out.append(_left_out(d, "no recipe validated: " + "; ".join(d.failures[-2:])))
                    continue
                path = out / SOURCES / d.source["family"] / f"{d.id}.yaml"
                atomic_write_text(path, yamlio.dumps(d.source))
                kept[d.id] = d
                new_paths.append(path)
        if not new_paths:
            break
        say(f"round {round_no}: {len(new_paths)} new case(s) drawn and validated; building on {', '.join(tracks)}")
        rejected: dict[str, str] = {}
        for track in tracks:
            opts_b = BuildOptions(out / BUILD, track, opts.repeats, runner=opts.runner,
                                  limits=BuildOptions.solve_limits(opts.timeout, opts.memory_mb))
            for o in build(new_paths, opts_b, opts.jobs, executor=opts.executor):
                if o.status != "built":
                    rejected.setdefault(o.case_id, f"{track}: {o.status}: {o.reason}")
        need = dict.fromkeys(need, 0)
        for cid, why in sorted(rejected.items()):
            d = kept.pop(cid)
            (out / SOURCES / d.stratum.family / f"{cid}.yaml").unlink()
            left_out.append(_left_out(d, "the build refused it: " + why))
            need[d.stratum] += 1
        if rejected:
            for track in tracks:  # the refused cases leave the build's records
                from casekit.build.run import write_records

                for cid in rejected:
                    shutil.rmtree(out / BUILD / track / cid, ignore_errors=True)
                write_records(out / BUILD, track)
        if not any(need.values()):
            break
    if not kept:
        raise UsageError(f"no case of the campaign passed validation and the build ({len(left_out)} draw(s) left out; "
                         f"see {out})")
    data = summary(manifest, opts.release, tracks, opts.n, kept, left_out, counts)
    name = opts.name or f"{manifest['name']}-campaign"
    package(out / BUILD, tracks, out / DATASET, name=name, version=str(manifest["version"]), license_id="other",
            notice=card_section(data))
    write_json(out / CAMPAIGN_FILE, data)
    return data


def _left_out(d: Drawn, why: str) -> dict[str, Any]:
    return {"id": d.id, "anchor": d.anchor, "draw": d.draw, "stratum": d.stratum.to_dict(), "why": why[:600]}


def summary(manifest: dict[str, Any], release: Path, tracks: list[str], n: int, kept: dict[str, Drawn],
            left_out: list[dict[str, Any]], counts: dict[Stratum, int]) -> dict[str, Any]:
    """``campaign.json``: private, what it follows, its cases and their distribution beside the
    release's.  No secret, no seed: a case's ``draw`` and ``recipe`` redo it only with the secret."""
    mine: dict[Stratum, int] = {}
    for d in kept.values():
        mine[d.stratum] = mine.get(d.stratum, 0) + 1
    return {
        "private": True,
        "follows": {"name": manifest["name"], "version": manifest["version"], "path": str(release),
                    "tracks": manifest["tracks"]},
        "requested": n,
        "tracks": tracks,
        "cases": [{"id": cid, "public_id": d.source["public_id"] if d.source else None, "anchor": d.anchor,
                   "draw": d.draw, "recipe": d.attempt, "stratum": d.stratum.to_dict()}
                  for cid, d in sorted(kept.items())],
        "left_out": left_out,
        "distribution": [{**s.to_dict(), "release": counts.get(s, 0), "campaign": mine.get(s, 0)}
                         for s in sorted(set(counts) | set(mine))],
    }


def card_section(data: dict[str, Any]) -> str:
    """The card's section on the campaign (markdown): private, what it follows, its distribution."""
    f = data["follows"]
    rows = "\n".join(f"| {r['family']} | {r['math_type'] or '-'} | {r['domain']} | {r['release']} | {r['campaign']} |"
                     for r in data["distribution"] if r["campaign"])
    missed = sum(1 for r in data["distribution"] if not r["campaign"])
    return f"""## A private campaign

**Private: do not publish, share or train on this dataset.** It is a fresh campaign of {len(data['cases'])} case(s)
drawn with a secret seed in the distribution of the release **{f['name']} {f['version']}** (its cases per family x
math type x domain template, in proportion), so that a system can be scored on cases it cannot have seen: each
case is the problem of one released case (family, domain, parameters, boundary kinds, time window, grid, solve
settings) with a new manufactured solution, validated and built by the same rules. Score it beside the release
with `casekit campaign report`.

| family | math type | domain | release | campaign |
|---|---|---|---|---|
{rows}

{missed} stratum(s) of the release got no case at this size; {len(data['left_out'])} draw(s) were left out (failed
validation or the build) and replaced by the next draw of their stratum.
"""


def load(campaign: Path) -> dict[str, Any]:
    """A campaign directory's ``campaign.json`` (refused with the reason if it is not one)."""
    path = Path(campaign) / CAMPAIGN_FILE
    if not path.is_file():
        raise UsageError(f"{campaign} is not a campaign directory (no {CAMPAIGN_FILE})",
                         valid="the --out directory of casekit campaign new")
    data = read_json(path)
    if not isinstance(data, dict) or not data.get("private") or "follows" not in data:
        raise UsageError(f"{path} is not a campaign file", valid="the --out directory of casekit campaign new")
    return data
