"""An unknown name -- domain, family, design axis or level, baseline kind -- is one error type
(UnknownName): exit status 2, one line naming it, the valid names, and the close ones first."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from casekit.cli import app
from casekit.suggest import close_matches, did_you_mean

runner = CliRunner()


@pytest.mark.parametrize(("argv", "named", "suggested", "valid"), [
    (["new", "--family", "heat", "--domain", "lshape"], "'lshape'", "l_shape", "unit_square"),
    (["domain", "show", "anulus"], "'anulus'", "annulus", "unit_square"),
    (["new", "--family", "stokes", "--axis", "viscosty=small"], "'viscosty'", "viscosity", "viscosity, solution"),
    (["new", "--family", "heat", "--axis", "viscosty=small"], "'viscosty'", None, "coefficient, horizon"),
    (["new", "--family", "stokes", "--axis", "viscosity=tiny"], "'tiny'", None, "unit, small"),
    (["family", "show", "heet"], "'heet'", "heat", "poisson"),
    (["sample", "--family", "heat", "--axis", "horizon=longg"], "'longg'", "long", "short"),
    (["baselines", "--cases", ".", "--kind", "zeros"], "'zeros'", "zero", "calibration"),
])
def test_an_unknown_name_exits_2_with_the_valid_names_and_the_close_ones(
        argv: list[str], named: str, suggested: str | None, valid: str, tmp_path: object) -> None:
    r = runner.invoke(app, argv)
    assert r.exit_code == 2, r.output
    line = r.output.strip()
    assert len(line.splitlines()) == 1, line
    assert line.startswith("error: ") and not line.startswith("error: /"), line  # no internal JSON pointer
    assert named in line and valid in line, line
    assert (f"did you mean {suggested}?" in line) if suggested else "did you mean" not in line, line


@given(st.sampled_from(["annulus", "l_shape", "unit_square", "eccentric_annulus", "periodic_square"]),
       st.integers(0, 30), st.sampled_from(["drop", "swap", "double", "case"]))
def test_a_one_letter_slip_suggests_the_name(name: str, at: int, slip: str) -> None:
    valid = ["annulus", "circle", "eccentric_annulus", "l_shape", "periodic_square", "unit_cube", "unit_square"]
    i = at % len(name)
    typo = {"drop": name[:i] + name[i + 1:], "double": name[:i] + name[i] + name[i:],
            "swap": name[:i] + name[i + 1:i + 2] + name[i] + name[i + 2:] if i + 1 < len(name) else name + "x",
            "case": name.upper()}[slip]
    if typo == name:
        return
    assert name in close_matches(typo, valid)


@given(st.text(max_size=30), st.lists(st.text(alphabet="abc_", min_size=1, max_size=8), max_size=6))
def test_suggestions_never_fail_and_only_name_valid_names(message: str, valid: list[str]) -> None:
    out = did_you_mean(message, ", ".join(valid))
    assert out == "" or out.startswith("; did you mean ")
    for name in out.removeprefix("; did you mean ").removesuffix("?").split(" or ") if out else []:
        assert name in valid
