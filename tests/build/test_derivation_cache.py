"""The machine cache of source keys: derived once per source file and casekit code."""

from __future__ import annotations

from pathlib import Path

import pytest

from casekit import yamlio
from casekit.build import derivation_cache, shards
from tests.helpers import build_source


def test_a_source_key_is_derived_once_and_never_served_for_other_code_or_bytes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CASEKIT_CACHE_DIR", str(tmp_path / "cache"))
    src = build_source("poisson", "unit_square", {}, 3)
    path = tmp_path / "cases" / "poisson" / f"{src['id']}.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(yamlio.dumps(src))
    (s,) = shards.read_sources([tmp_path / "cases"])
    derived = s.source_key
    assert derivation_cache.get(path) == derived
    derives: list[Path] = []
    monkeypatch.setattr(shards.Source, "_derived", property(lambda self: derives.append(self.path) or ("x", None)))
    (again,) = shards.read_sources([tmp_path / "cases"])
    assert again.source_key == derived and derives == []  # served from the cache
    path.write_text(path.read_text() + "# another byte\n")  # other bytes: derived again
    (edited,) = shards.read_sources([tmp_path / "cases"])
    assert edited.source_key == "x" and derives == [path]
    monkeypatch.setattr(derivation_cache, "code_digest", lambda: "other code")  # other code: derived again
    (other,) = shards.read_sources([tmp_path / "cases"])
    assert other.source_key == "x" and len(derives) == 2
    monkeypatch.setenv("CASEKIT_DERIVATION_CACHE", "0")
    assert derivation_cache.get(path) is None


def test_the_code_digest_covers_the_data_directories(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A schema edited outside the package changes the digest (validation reads it)."""
    import casekit.resources

    schemas = tmp_path / "schemas"
    schemas.mkdir()
    (schemas / "case_source.schema.json").write_text("{}")
    monkeypatch.setattr(casekit.resources, "data_dir", lambda name: tmp_path / name)
    derivation_cache.code_digest.cache_clear()
    try:
        before = derivation_cache.code_digest()
        (schemas / "case_source.schema.json").write_text('{"type": "object"}')
        derivation_cache.code_digest.cache_clear()
        assert derivation_cache.code_digest() != before
    finally:
        derivation_cache.code_digest.cache_clear()


def test_the_code_digest_leaves_out_only_the_sandbox_runtime_of_the_tracks() -> None:
    """A track's solver package runs in the sandbox, keyed by the track's code hash: editing it
    must not make every source derive again -- except a module casekit itself imports."""
    from casekit.tracks import TRACKS

    skipped = derivation_cache.sandbox_only()
    for name, track in TRACKS.items():
        solvers = track.directory() / "solvers"
        assert (solvers / "__init__.py").resolve() in skipped or name == "dealii", name
        assert (track.directory() / "__init__.py").resolve() not in skipped  # the registration is digested
    dealii = TRACKS.get("dealii").directory() / "solvers" / "targets.py"
    assert dealii.resolve() not in skipped  # imported by the deal.II track's registration
    assert not any("derive" in p.name or "validate" in p.parts for p in skipped)


def test_no_derivation_imports_the_packages_the_digest_leaves_out() -> None:
    """Deriving sources of every family (authored and imported) in a fresh process imports none of
    :data:`derivation_cache.NOT_DERIVATION` and no module of the tracks' sandbox runtime that
    registering the tracks had not imported (else an edit there could change a key unseen)."""
    import subprocess
    import sys

    script = (
        "import sys, glob\n"
        "from pathlib import Path\n"
        "from casekit.build.shards import derive_key\n"
        "from casekit.build.derivation_cache import sandbox_only\n"
        "before = sandbox_only()\n"
        "for family in sorted(p.name for p in Path('cases').iterdir() if p.is_dir() and p.name != 'pdeagent-bench'):\n"
        "    for pattern in (f'cases/{family}/*.yaml', f'cases/pdeagent-bench/{family}/*.yaml'):\n"
        "        files = sorted(glob.glob(pattern))\n"
        "        if files:\n"
        "            derive_key(Path(files[0]))\n"
        "assert sandbox_only() == before, sorted(str(p) for p in before - sandbox_only())\n"
        "print(sorted({m.split('.')[1] for m in sys.modules if m.startswith('casekit.')}))\n")
    repo = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", script], cwd=repo, capture_output=True, text=True, timeout=1200,
                          env={**__import__("os").environ, "CASEKIT_DERIVATION_CACHE": "0"})
    assert done.returncode == 0, done.stderr[-2000:]
    loaded = set(eval(done.stdout.strip().splitlines()[-1]))
    assert "derive" in loaded and "expr" in loaded  # it derived
    assert not loaded & set(derivation_cache.NOT_DERIVATION), loaded & set(derivation_cache.NOT_DERIVATION)


def _fake_key(path: Path) -> str:
    """A stand-in derivation (module level: it runs in worker processes)."""
    return "key-" + path.name


@pytest.mark.parametrize("jobs", [1, 2])
def test_priming_reports_its_count_first_then_each_source_and_nothing_once_cached(
        jobs: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CASEKIT_CACHE_DIR", str(tmp_path / "cache"))
    paths = []
    for i in range(derivation_cache.PARALLEL_FROM + 1):
        p = tmp_path / f"case{i}.yaml"
        p.write_text(f"id: case{i}\n")
        paths.append(p)
    calls: list[tuple[int, int]] = []
    derivation_cache.prime(paths, _fake_key, jobs, lambda done, total: calls.append((done, total)))
    n = len(paths)
    assert calls == [(i, n) for i in range(n + 1)]  # the count first (0 done), then one by one
    assert [derivation_cache.get(p) for p in paths] == [f"key-{p.name}" for p in paths]
    calls.clear()
    derivation_cache.prime(paths, _fake_key, jobs, lambda done, total: calls.append((done, total)))
    assert calls == []  # all cached: nothing to derive, nothing said
