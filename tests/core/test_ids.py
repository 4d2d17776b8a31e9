"""Public ids and the authoring salt: nothing agent-side spells the case, and a salted split
cannot be regenerated from casekit's code."""

from __future__ import annotations

from pathlib import Path

import pytest

from casekit.authoring.builder import build_source
from casekit.errors import UsageError
from casekit.ids import PUBLIC_ID, public_id, read_salt


def test_public_ids_are_opaque_and_keyed() -> None:
    pid = public_id("poisson_l_shape_variable_smooth_mixed_s3")
    assert PUBLIC_ID.fullmatch(pid) and "poisson" not in pid
    assert pid == public_id("poisson_l_shape_variable_smooth_mixed_s3")
    assert public_id("poisson_l_shape_variable_smooth_mixed_s3", b"0123456789abcdef-secret") != pid


def test_a_salt_changes_the_draws_and_writes_the_public_id() -> None:
    plain = build_source("poisson", "unit_square", {}, 7)
    again = build_source("poisson", "unit_square", {}, 7)
    salted = build_source("poisson", "unit_square", {}, 7, salt=b"0123456789abcdef-secret")
    other = build_source("poisson", "unit_square", {}, 7, salt=b"another-secret-salt-value")
    assert plain == again and "public_id" not in plain
    assert salted["id"] == plain["id"]  # the maintainer's id is the same...
    assert salted["manufactured_solution"] != plain["manufactured_solution"]  # ...the hidden solution is not
    assert salted["manufactured_solution"] != other["manufactured_solution"]
    assert salted["public_id"] == public_id(salted["id"], b"0123456789abcdef-secret")


def test_salt_files_must_hold_a_real_secret(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    short = tmp_path / "short"
    short.write_text("abc")
    with pytest.raises(UsageError, match="at least 16"):
        read_salt(short)
    with pytest.raises(UsageError, match="cannot read"):
        read_salt(tmp_path / "missing")
    good = tmp_path / "salt"
    good.write_text("k" * 32 + "\n")
    monkeypatch.setenv("CASEKIT_SALT_FILE", str(good))
    assert read_salt() == b"k" * 32
    monkeypatch.delenv("CASEKIT_SALT_FILE")
    assert read_salt() is None
