"""Whatever bytes a submission leaves, loading its artifacts raises ArtifactError or succeeds:
never another exception, never an unbounded allocation."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from casekit.scoring.artifacts import ArtifactError, load_meta, load_solution

SPEC = {"eval_grid": {"nx": 4, "ny": 3, "bbox": [0.0, 1.0, 0.0, 1.0]}, "output": {"field": "u"}}
MASK = np.ones((3, 4), dtype=bool)


def _npz(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def _npy(a: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, a, allow_pickle=True)
    return buf.getvalue()


GOOD = {"x.npy": _npy(np.linspace(0, 1, 4)), "y.npy": _npy(np.linspace(0, 1, 3)), "u.npy": _npy(np.ones((3, 4)))}


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=3000))
def test_random_solution_bytes(tmp_path: Path, data: bytes) -> None:
    (tmp_path / "solution.npz").write_bytes(data)
    with pytest.raises(ArtifactError):
        load_solution(tmp_path, SPEC, MASK)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(sorted(GOOD)), st.binary(max_size=400), st.integers(0, 200))
def test_corrupted_members(tmp_path: Path, member: str, junk: bytes, cut: int) -> None:
    members = dict(GOOD)
    members[member] = members[member][:cut] + junk
    (tmp_path / "solution.npz").write_bytes(_npz(members))
    try:
        out = load_solution(tmp_path, SPEC, MASK)
    except ArtifactError:
        return
    assert out["u"].shape == (3, 4)


def test_pickled_objects_and_strings_are_refused(tmp_path: Path) -> None:
    for bad in (np.array([[{"a": 1}] * 4] * 3, dtype=object), np.full((3, 4), "1.0"), np.ones((3, 4), dtype=int)):
        (tmp_path / "solution.npz").write_bytes(_npz({**GOOD, "u.npy": _npy(bad)}))
        with pytest.raises(ArtifactError, match="dtype"):
            load_solution(tmp_path, SPEC, MASK)
    (tmp_path / "solution.npz").write_bytes(_npz(GOOD))
    assert load_solution(tmp_path, SPEC, MASK)["u"].sum() == 12


def test_a_declared_size_larger_than_the_grid_is_never_inflated(tmp_path: Path) -> None:
    with zipfile.ZipFile(tmp_path / "solution.npz", "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("x.npy", GOOD["x.npy"])
        zf.writestr("y.npy", GOOD["y.npy"])
        with zf.open("u.npy", "w", force_zip64=True) as fh:
            fh.write(GOOD["u.npy"][:128])
            for _ in range(64):
                fh.write(b"\0" * (1 << 20))
    with pytest.raises(ArtifactError, match="declares"):
        load_solution(tmp_path, SPEC, MASK)


def test_a_header_length_bomb_is_refused_before_the_header_is_read(tmp_path: Path) -> None:
    """A v2 .npy header declaring ~4 GiB (numpy reads the declared length before checking its
    limit): refused from the length field, whatever the archive's compression."""
    import tracemalloc

    bomb = b"\x93NUMPY\x02\x00" + (0xFFFFFFF0).to_bytes(4, "little") + b" " * 1000
    with zipfile.ZipFile(tmp_path / "solution.npz", "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("x.npy", bomb)
        zf.writestr("y.npy", GOOD["y.npy"])
        zf.writestr("u.npy", GOOD["u.npy"])
    tracemalloc.start()
    with pytest.raises(ArtifactError, match="declares a 4294967280-byte header"):
        load_solution(tmp_path, SPEC, MASK)
    assert tracemalloc.get_traced_memory()[1] < 20 << 20
    tracemalloc.stop()


def test_only_numpys_compression_methods_are_read(tmp_path: Path) -> None:
    with zipfile.ZipFile(tmp_path / "solution.npz", "w", zipfile.ZIP_BZIP2) as zf:
        for name, data in GOOD.items():
            zf.writestr(name, data)
    with pytest.raises(ArtifactError, match="compressed with method"):
        load_solution(tmp_path, SPEC, MASK)


def test_a_member_larger_than_the_grid_can_need_is_never_opened(tmp_path: Path) -> None:
    big = b"\x93NUMPY\x02\x00" + (0xFFFFFFF0).to_bytes(4, "little")
    with zipfile.ZipFile(tmp_path / "solution.npz", "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("x.npy", GOOD["x.npy"])
        zf.writestr("y.npy", GOOD["y.npy"])
        with zf.open("u.npy", "w", force_zip64=True) as fh:
            fh.write(big)
            for _ in range(32):
                fh.write(b" " * (1 << 20))
    with pytest.raises(ArtifactError, match="more than a 3x4 float array needs"):
        load_solution(tmp_path, SPEC, MASK)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(st.binary(max_size=500), st.text(max_size=500).map(str.encode),
                 st.recursive(st.none() | st.booleans() | st.floats() | st.integers() | st.text(max_size=5),
                              lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3),
                              max_leaves=20).map(lambda o: __import__("json").dumps(o).encode())))
def test_random_meta(tmp_path: Path, data: bytes) -> None:
    (tmp_path / "meta.json").write_bytes(data)
    try:
        load_meta(tmp_path)
    except ArtifactError:
        pass


def test_deep_and_huge_meta(tmp_path: Path) -> None:
    for text in ("[" * 100000 + "]" * 100000, '{"a":' * 40 + "1" + "}" * 40, "1" * 2_000_000):
        (tmp_path / "meta.json").write_text(text)
        with pytest.raises(ArtifactError):
            load_meta(tmp_path)


def test_a_directory_of_many_members_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    """The zip central-directory bomb: members are counted from the end records (zip64 too)."""
    with zipfile.ZipFile(tmp_path / "solution.npz", "w") as zf:
        for name, data in GOOD.items():
            zf.writestr(name, data)
        for i in range(70000):  # more than 65535: zipfile writes zip64 end records
            zf.writestr(f"p{i}", b"")
    big = {"eval_grid": {"nx": 600, "ny": 600, "bbox": [0.0, 1.0, 0.0, 1.0]}, "output": {"field": "u"}}
    with pytest.raises(ArtifactError, match="70003 members"):
        load_solution(tmp_path, big, np.ones((600, 600), dtype=bool))


_BOUNDS = st.floats(-10, 10).flatmap(lambda lo: st.tuples(st.just(lo), st.floats(0.1, 100).map(lambda w: lo + w)))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(nx=st.integers(2, 300), ny=st.integers(2, 300), bx=_BOUNDS, by=_BOUNDS, dtype=st.sampled_from(["<f4", ">f4"]))
def test_float32_axes_of_the_evaluation_grid_are_accepted(tmp_path: Path, nx: int, ny: int, bx: tuple[float, float],
                                                          by: tuple[float, float], dtype: str) -> None:
    """A solution whose axes are the grid's rounded to float32 matches the grid; shifted by half a
    cell (more than float32 rounding), it does not."""
    spec = {"eval_grid": {"nx": nx, "ny": ny, "bbox": [*bx, *by]}, "output": {"field": "u"}}
    x, y = np.linspace(*bx, nx), np.linspace(*by, ny)
    u = np.zeros((ny, nx), dtype=np.float32)
    np.savez(tmp_path / "solution.npz", x=x.astype(dtype), y=y.astype(dtype), u=u)
    assert load_solution(tmp_path, spec, np.ones((ny, nx), dtype=bool))["u"].shape == (ny, nx)
    shifted = x + (x[1] - x[0]) / 2
    np.savez(tmp_path / "solution.npz", x=shifted.astype(dtype), y=y.astype(dtype), u=u)
    with pytest.raises(ArtifactError, match="axis 'x' does not match"):
        load_solution(tmp_path, spec, np.ones((ny, nx), dtype=bool))


def test_an_axis_dtype_too_coarse_for_the_grid_is_refused(tmp_path: Path) -> None:
    spec = {"eval_grid": {"nx": 2000, "ny": 3, "bbox": [0.0, 1.0, 0.0, 1.0]}, "output": {"field": "u"}}
    np.savez(tmp_path / "solution.npz", x=np.linspace(0, 1, 2000).astype(np.float16), y=np.linspace(0, 1, 3),
             u=np.zeros((3, 2000)))
    with pytest.raises(ArtifactError, match="too coarse"):
        load_solution(tmp_path, spec, np.ones((3, 2000), dtype=bool))
