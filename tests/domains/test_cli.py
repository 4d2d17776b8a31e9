"""casekit domain list / show / gallery."""

from __future__ import annotations

from pathlib import Path

import meshio
from typer.testing import CliRunner

from casekit.cli import app

runner = CliRunner()


def test_list_names_every_template() -> None:
    result = runner.invoke(app, ["domain", "list"])
    assert result.exit_code == 0
    for name in ("t_junction", "periodic_square", "unit_cube", "dumbbell"):
        assert name in result.output


def test_show_draws_and_writes_meshes(tmp_path: Path) -> None:
    png, msh, vtu = tmp_path / "a.png", tmp_path / "a.msh", tmp_path / "a.vtu"
    result = runner.invoke(app, ["domain", "show", "annulus", "--param", "inner_radius=0.1", "--cells-across", "10",
                                 "--png", str(png), "--out", str(msh)])
    assert result.exit_code == 0, result.output
    assert "tag outer" in result.output and "inverted" in result.output
    assert png.stat().st_size > 10_000
    mesh = meshio.read(msh)
    assert "triangle" in mesh.cells_dict and "line" in mesh.cells_dict
    result = runner.invoke(app, ["domain", "show", "unit_cube", "--cell", "quad", "--cells-across", "4",
                                 "--out", str(vtu)])
    assert result.exit_code == 0, result.output
    assert "hexahedron" in meshio.read(vtu).cells_dict


def test_a_flat_domain_gets_a_flat_picture_without_an_empty_band(tmp_path: Path) -> None:
    """The dumbbell (twice as wide as tall) was drawn in a square figure: a band of white between the
    title and the drawing.  The figure follows the domain's aspect, the title sits on the axes."""
    import matplotlib.image

    png = tmp_path / "d.png"
    assert runner.invoke(app, ["domain", "show", "dumbbell", "--cells-across", "8", "--png", str(png)]).exit_code == 0
    image = matplotlib.image.imread(png)[..., :3]
    white = (image > 0.97).all(axis=(1, 2))
    longest = run = 0
    for row in white:
        run = run + 1 if row else 0
        longest = max(longest, run)
    assert image.shape[0] < 0.6 * image.shape[1]
    assert longest < 0.06 * image.shape[0], f"{longest} empty rows of {image.shape[0]}"


def test_bad_parameters_are_one_clear_line(tmp_path: Path) -> None:
    result = runner.invoke(app, ["domain", "show", "star", "--param", "inner_radius=0.9"])
    # a refused --param is a usage error named by its option, not by a case source's JSON pointer
    assert result.exit_code == 2, result.output
    assert "error: --param inner_radius: the inner radius must be smaller than the outer radius" in result.output
    assert "/params" not in result.output
    result = runner.invoke(app, ["domain", "show", "circle", "--param", "center=[0, 0, 0]"])
    assert result.exit_code == 2 and "--param center: a list of exactly 2 components" in result.output
    assert "Traceback" not in result.output
    result = runner.invoke(app, ["domain", "show", "torus"])
    # an unknown name is a usage error (README: exit status 2), named as itself, not at a JSON pointer
    assert result.exit_code == 2 and "error: unknown domain template 'torus'" in result.output
    assert "annulus" in result.output
    result = runner.invoke(app, ["domain", "show", "star", "--param", "points"])
    assert result.exit_code == 2


def test_gallery(tmp_path: Path) -> None:
    result = runner.invoke(app, ["domain", "gallery", str(tmp_path), "--cells-across", "6"])
    assert result.exit_code == 0, result.output
    from casekit.domains import DOMAINS

    assert len(list(tmp_path.glob("*.png"))) == len(DOMAINS)
    assert "| `gear` |" in (tmp_path / "README.md").read_text()


def test_the_demo_writes_under_build_which_git_ignores() -> None:
    result = runner.invoke(app, ["demo", "--help"])
    assert result.exit_code == 0 and "build/demo" in result.output
    from tests.conftest import REPO

    assert "/build/" in (REPO / ".gitignore").read_text().split()
