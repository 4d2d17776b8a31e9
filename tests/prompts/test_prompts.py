"""Prompts: the six parts in order, determinism, feedback tiers, and no hidden value anywhere."""

from __future__ import annotations

import itertools
import json
import re
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from casekit.derive import derive
from casekit.model.source import CaseSource, load_source_dict
from casekit.prompts import FEEDBACK_CODE_LIMIT, feedback, render, scaffold

REPO = Path(__file__).resolve().parents[2]
#: casekit's own sample (cases/<family>/).  The imported records (cases/pdeagent-bench/) keep their
#: authors' solutions, often a product of sines that any expanded forcing contains as one of its
#: terms; validation gates them (numeric, symbolic and constant-multiple leak checks).
CASES = sorted((REPO / "cases").glob("*/*.yaml"))


def spec_and_hidden(path: Path) -> tuple[dict, CaseSource]:
    source = CaseSource.from_dict(load_source_dict(path))
    return derive(source).case_spec(), source


def test_single_prompt_has_the_six_parts_in_order() -> None:
    spec, _ = spec_and_hidden(next(p for p in CASES if p.parent.name == "stokes"))
    text = render(spec, "dolfinx")
    heads = ["# Task", "## Stokes flow", "## case_spec (authoritative)", "## Implementation contract",
             "## Output and sandbox", "## DOLFINx 0.11 API guide"]
    positions = [text.index(h) for h in heads]
    assert positions == sorted(positions)
    assert json.dumps(spec, indent=2) in text
    assert render(spec, "dolfinx") == text  # deterministic


def _hidden_strings(source: CaseSource) -> list[str]:
    out = []
    for value in (source.manufactured_solution or {}).values():
        out += value if isinstance(value, list) else [value]
    return [str(v) for v in out if len(str(v)) > 4]


@pytest.mark.parametrize("path", CASES[::7], ids=lambda p: p.stem[:40])
def test_no_tier_reveals_the_solution_or_the_calibration(path: Path) -> None:
    spec, source = spec_and_hidden(path)
    hidden = _hidden_strings(source)
    from casekit.expr import parse, to_text

    hidden += [to_text(parse(h)) for h in hidden]
    verdicts = [{"attempt": 1, "stage": s, "error": 0.0123, "runtime": {"median": 4.2, "runs": [4.2]},
                 "failure": {"category": c, "message": m}, "stderr_tail": "Traceback: boom"}
                for s, c, m in (("F-Exec", "crash", "exit status 1: boom"),
                                ("F-Acc", "accuracy", "error 1.230e-02 exceeds the accuracy threshold"),
                                ("F-Time", "runtime", "runtime 4.200 s exceeds the runtime threshold"))]
    texts = [render(spec, lib, tier) for lib in ("dolfinx",) for tier in ("single", "plan", "scaffold")]
    texts += [render(spec, "dolfinx", "feedback", verdict=v, previous_code="def solve(s): pass") for v in verdicts]
    for text in texts:
        for h in hidden:
            assert h not in text, f"{path.name}: the hidden solution {h[:60]} leaks"
        for key in ("cells_across", "e_base", "t_base", "tau_acc", "tau_time", "manufactured", "calibration"):
            assert key not in text, f"{path.name}: {key} appears"
        for k, _v in (source.calibration or {}).items():
            assert f"{k}" not in text or k in ("degree", "scheme", "dt", "cell")


def _significant_digits(form: str) -> int:
    return len(re.sub(r"[^0-9]", "", form.split("e")[0]).strip("0"))


@pytest.mark.dolfinx
def test_no_hidden_number_of_a_built_case_appears(store) -> None:  # type: ignore[no-untyped-def]
    for rec in store.records.values():
        meta = rec["evaluation_metadata"]
        numbers = [meta["e_base"], meta["t_base"], meta["thresholds"]["tau_acc"], meta["thresholds"]["tau_time"]]
        for tier in ("single", "plan", "scaffold"):
            text = render(rec["case_spec"], "dolfinx", tier)
            for n in numbers:
                for form in (repr(n), f"{n:.3e}", f"{n:.2e}", f"{n:.4g}", f"{n:.3g}"):
                    if _significant_digits(form) >= 3:  # "2" or "1e-06" (a floor, alpha x 1 s) is no secret
                        assert form not in text, (rec["id"], tier, form)


def test_feedback_prompt_structure() -> None:
    spec, _ = spec_and_hidden(CASES[0])
    code = "x = 1\n" * 1000
    v = {"attempt": 1, "stage": "F-Exec", "error": None, "runtime": None, "stderr_tail": "Traceback\nValueError: bad",
         "failure": {"category": "crash", "message": "exit status 1: ValueError: bad"}}
    text = render(spec, "dolfinx", "feedback", verdict=v, previous_code=code)
    assert text.startswith("# Attempt 2 of 3")
    assert f"first {FEEDBACK_CODE_LIMIT} characters" in text and code[:FEEDBACK_CODE_LIMIT] in text
    assert "crash" in text and "ValueError: bad" in text and "# The original task" in text
    original = render(spec, "dolfinx")
    assert original.startswith("# Task\n") and text.endswith(original.removeprefix("# Task\n").lstrip("\n"))
    acc = render(spec, "dolfinx", "feedback", previous_code="pass",
                 verdict={**v, "stage": "F-Acc", "error": 0.0123, "failure": {"category": "accuracy", "message": ""}})
    assert "1.230e-02" in acc and "not accurate enough" in acc
    slow = render(spec, "dolfinx", "feedback", previous_code="pass",
                  verdict={**v, "stage": "F-Time", "error": 1e-5, "runtime": {"median": 7.5, "runs": [7.5]},
                           "failure": {"category": "runtime", "message": ""}})
    assert "7.500 s" in slow and "too slow" in slow


def test_feedback_in_a_chat_is_the_verdict_alone() -> None:
    """A turn of a conversation that holds the task and the previous answer repeats neither: it is
    the standalone prompt with the previous code and the original task left out, and small."""
    spec, _ = spec_and_hidden(CASES[0])
    v = {"attempt": 1, "stage": "F-Exec", "error": None, "runtime": None, "stderr_tail": "Traceback\nValueError: bad",
         "failure": {"category": "crash", "message": "exit status 1: ValueError: bad"}}
    code = "def solve(case_spec):\n    raise ValueError('bad')\n"
    alone, turn = feedback(spec, "dolfinx", v, code), feedback(spec, "dolfinx", v, code, in_chat=True)
    task = render(spec, "dolfinx")
    assert alone.endswith(task.partition("\n")[2].lstrip("\n")) and code.strip() in alone  # under "# The original task"
    assert turn.startswith("# Attempt 2 of 3") and "crash" in turn and "ValueError: bad" in turn
    assert code.strip() not in turn and "# The original task" not in turn and "case_spec (authoritative)" not in turn
    assert len(turn) < len(task) / 5 < len(alone) / 5


@pytest.mark.dolfinx
def test_a_built_case_is_named_by_its_public_id_or_its_id(store) -> None:  # type: ignore[no-untyped-def]
    """``casekit prompt CASE_ID --cases build``: agents' submissions are named by the public id."""
    from typer.testing import CliRunner

    from casekit.cli import app

    rec = next(iter(store.records.values()))
    for name in (rec["public_id"], rec["id"]):
        result = CliRunner().invoke(app, ["prompt", name, "--cases", str(store.root)])
        assert result.exit_code == 0 and result.output.strip() == render(rec["case_spec"], "dolfinx").strip(), name
    result = CliRunner().invoke(app, ["prompt", "case-0000000000000000", "--cases", str(store.root)])
    assert result.exit_code == 2 and "no case 'case-0000000000000000'" in result.output


POISSON_NUMERICS = textwrap.dedent('''
    V = fem.functionspace(mesh, ("Lagrange", 2))
    u, v = ufl.TrialFunction(V), ufl.TestFunction(V)
    kappa = expression(params["kappa"], x, t)
    a = kappa * ufl.inner(ufl.grad(u), ufl.grad(v)) * ufl.dx
    L = forcing * v * ufl.dx
    for e in bc.get("neumann", []):
        L += expression(e["value"], x, t) * v * ds(tags[e["tag"]])
    for e in bc.get("robin", []):
        a += e["alpha"] * u * v * ds(tags[e["tag"]])
        L += expression(e["value"], x, t) * v * ds(tags[e["tag"]])
    bcs = [fem.dirichletbc(interpolate(V, e["value"], x, t),
                           fem.locate_dofs_topological(V, DIM - 1, facet_tags.find(tags[e["tag"]])))
           for e in bc.get("dirichlet", [])]
    uh = LinearProblem(a, L, bcs=bcs, petsc_options_prefix="s_",
                       petsc_options={"ksp_type": "preonly", "pc_type": "lu"}).solve()
''')


@pytest.mark.dolfinx
def test_the_scaffold_with_numerics_filled_in_passes_the_evaluator(tmp_path: Path, store) -> None:  # type: ignore[no-untyped-def]
    from casekit.evaluate.run import EvalOptions, evaluate
    from tests.helpers import record, write_submission

    rec = record(store, "poisson")
    code = scaffold(rec["case_spec"], "dolfinx")
    begin, end = "# --- numerics: begin ---", "# --- numerics: end ---"
    head, rest = code.split(begin)
    _, tail = rest.split(end)
    filled = head + begin + "\n" + textwrap.indent(POISSON_NUMERICS, "    ") + "    " + end + tail
    subs = tmp_path / "subs"
    write_submission(subs, rec["id"], filled)
    verdicts = evaluate(EvalOptions(store, subs, tmp_path / "out", repeats=1))
    (v,) = [v for v in verdicts if v["case_id"] == rec["id"]]
    assert v["stage"] in ("Pass", "F-Time") and v["error"] <= v["tau_acc"], v


def test_the_contract_states_what_an_honest_agent_needs() -> None:
    spec, _ = spec_and_hidden(next(p for p in CASES if "periodic_square" in p.stem))
    text = render(spec, "dolfinx")
    g = spec["eval_grid"]
    assert f"`x` of shape ({g['nx']},), `y` of shape ({g['ny']},)" in text  # 1-D axes
    assert f"each of shape ({g['ny']}, {g['nx']})" in text
    assert "on the boundary" in text and "count as inside" in text
    assert "defined\non their own boundary part only" in text or "defined on their own boundary part only" in text
    assert "Not available: dolfinx_mpc" in text and "scipy" in text
    assert "Periodic boundaries" in text and "zeroRowsColumns" in text  # the guide shows how without MPC
    assert "every run's runtime" in text and "nothing is cached between runs" in text


def test_accuracy_feedback_says_where_the_error_is_and_quotes_the_warnings() -> None:
    spec, _ = spec_and_hidden(CASES[0])
    v = {"attempt": 1, "stage": "F-Acc", "error": 1.44, "runtime": {"median": 1.0, "max": 1.1, "runs": [1.0]},
         "failure": {"category": "accuracy", "message": "error 1.440e+00 exceeds the accuracy threshold"},
         "stderr_tail": "UserWarning: integer constant is too large",
         "error_profile": {"boundary_band_share": 0.12, "by_boundary_part": {"left": 0.1}}}
    text = render(spec, "dolfinx", "feedback", verdict=v, previous_code="pass")
    assert "88% of the squared error is in the interior" in text
    assert "integer constant is too large" in text
    edge = render(spec, "dolfinx", "feedback", previous_code="pass", verdict={
        **v, "error_profile": {"boundary_band_share": 0.9, "by_boundary_part": {"left": 0.8, "top": 0.1},
                               "by_component": {"ux": 0.95, "uy": 0.05}}})
    assert "90% of the squared error is at grid points within two grid spacings of the boundary" in edge
    assert "mostly near `left` (80%)" in edge and "component `ux` carries 95%" in edge
    assert "threshold" not in edge.split("# The original task")[0].replace("accuracy threshold", "")


def test_accuracy_feedback_quotes_each_target_s_error_and_never_its_threshold() -> None:
    """Issue 31: an attempt whose field passed but a target did not was told only the field's
    error; now every target's relative error is quoted, which failed, and (thresholds variant only)
    its threshold."""
    from casekit.prompts.variants import StatedThresholds

    path = next(p for p in CASES if "targets" in load_source_dict(p))
    spec, _ = spec_and_hidden(path)
    names = [e["name"] for e in spec["targets"]]
    targets = [{"name": n, "kind": e["kind"], "error": 0.0234 * (i + 1), "tau": 0.0377, "passed": i > 0}
               for i, (n, e) in enumerate(zip(names, spec["targets"], strict=True))]
    v = {"attempt": 1, "stage": "F-Acc", "error": 1.5e-4, "runtime": {"median": 1.0, "max": 1.1, "runs": [1.0]},
         "targets": targets, "failure": {"category": "target_accuracy", "message": f"target {names[0]!r} has "
                                         "relative error 2.340e-02, above its accuracy threshold"}}
    text = render(spec, "dolfinx", "feedback", verdict=v, previous_code="pass").split("# The original task")[0]
    assert "the field was accurate enough, a target value was not" in text
    assert f"`{names[0]}` ({spec['targets'][0]['kind']}): 2.340e-02, not accurate enough" in text
    for i, n in enumerate(names[1:], start=1):
        assert f"`{n}` ({spec['targets'][i]['kind']}): {0.0234 * (i + 1):.3e}, accurate enough" in text
    assert "0.0377" not in text and "threshold" not in text.replace("accuracy threshold", "")
    stated = StatedThresholds(tau_acc=1e-3, alpha_time=3.0, t_base=1.0, targets=((names[0], 0.0377),))
    with_tau = render(spec, "dolfinx", "feedback", verdict=v, previous_code="pass", thresholds=stated)
    assert f"`{names[0]}` ({spec['targets'][0]['kind']}): 2.340e-02 (the threshold: 0.0377), not accurate" in with_tau
    unscored = {**v, "targets": [{**t, "error": None, "passed": False} for t in targets]}
    assert "n/a (not scored)" in render(spec, "dolfinx", "feedback", verdict=unscored, previous_code="pass")


@pytest.mark.parametrize("name", [pytest.param("dolfinx", marks=pytest.mark.dolfinx),
                                  pytest.param("firedrake", marks=pytest.mark.firedrake)])
def test_the_packages_a_prompt_lists_are_in_the_environment(name: str) -> None:
    import subprocess

    from casekit.tracks import TRACKS

    track = TRACKS.get(name)
    if not track.status()[0]:
        pytest.skip(f"the {name} environment is not installed")
    code = ("import importlib.util, json\n"
            f"have = {[m for m, _ in track.packages]!r}\nmissing = {[m for m, _ in track.unavailable]!r}\n"
            "print(json.dumps([[m for m in have if importlib.util.find_spec(m) is None],"
            " [m for m in missing if importlib.util.find_spec(m) is not None]]))")
    r = subprocess.run([str(track.python()), "-c", code], capture_output=True, text=True, timeout=120)  # type: ignore[attr-defined]
    absent, present = json.loads(r.stdout)
    assert absent == [] and present == [], (absent, present)


@pytest.mark.dealii
def test_the_deal_ii_features_a_prompt_lists_are_configured() -> None:
    from casekit.tracks import TRACKS

    config = Path("/usr/include/deal.II/base/config.h")
    if not config.exists():
        pytest.skip("deal.II is not installed")
    text = config.read_text()
    for feature, _ in TRACKS.get("dealii").packages:
        ok = Path("/usr/include/boost").is_dir() if feature == "BOOST" else f"DEAL_II_WITH_{feature}" in text
        assert ok, feature


def _verdict_of(system: str, case_id: str, attempt: int, error: float, track: str = "dolfinx") -> dict:
    return {"case_id": case_id, "track": track, "system": system, "attempt": attempt, "stage": "F-Acc",
            "error": error, "runtime": None, "stderr_tail": "", "paths": {},
            "failure": {"category": "accuracy", "message": ""}}


def test_feedback_from_a_file_of_several_systems_needs_system(tmp_path: Path) -> None:
    """A verdict file of three systems gave the first one's feedback silently: now ``--system``
    names the one, and without it the prompt is refused, naming the systems the file holds."""
    from typer.testing import CliRunner

    from casekit.cli import app

    case_id = spec_and_hidden(CASES[0])[1].id
    errors = {"sys_a": 0.0111, "sys_b": 0.0222, "sys_c": 0.0333}
    verdicts = tmp_path / "verdicts.jsonl"
    verdicts.write_text("".join(json.dumps(_verdict_of(s, case_id, 1, e)) + "\n" for s, e in errors.items()))
    (tmp_path / "solver.py").write_text("pass\n")
    base = ["prompt", str(CASES[0]), "--tier", "feedback", "--verdict", str(verdicts), "--code",
            str(tmp_path / "solver.py")]
    runner = CliRunner()
    r = runner.invoke(app, base)
    assert r.exit_code == 2
    assert "3 systems" in r.output and all(s in r.output for s in errors) and "--system" in r.output
    for system, error in errors.items():
        r = runner.invoke(app, [*base, "--system", system])
        assert r.exit_code == 0, r.output
        assert f"{error:.3e}" in r.output and all(f"{e:.3e}" not in r.output for e in errors.values() if e != error)
    r = runner.invoke(app, [*base, "--system", "nobody"])
    assert r.exit_code == 2 and "nobody" in r.output and "sys_a" in r.output
    verdicts.write_text(json.dumps(_verdict_of("sys_b", case_id, 1, 0.0222)) + "\n")
    r = runner.invoke(app, base)  # one system: no --system needed
    assert r.exit_code == 0 and "2.220e-02" in r.output


@settings(deadline=None)
@given(rows=st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), st.integers(1, 3), st.sampled_from(["x", "y"]),
                               st.sampled_from(["dolfinx", "dealii"])), min_size=1, max_size=12),
       system=st.sampled_from(["a", "b", "c"]))
def test_the_previous_verdict_is_the_named_systems_last_attempt(rows: list[tuple[str, int, str, str]],
                                                                 system: str) -> None:
    from casekit.errors import UsageError
    from casekit.prompts import previous_verdict

    verdicts = [{**_verdict_of(s, c, n, 0.0, t), "line": i} for i, (s, n, c, t) in enumerate(rows)]
    mine = [v for v in verdicts if v["case_id"] == "x" and v["track"] == "dolfinx" and v["system"] == system]
    if mine:
        got = previous_verdict(verdicts, "x", "dolfinx", system)
        best = max(v["attempt"] for v in mine)
        assert got == [v for v in mine if v["attempt"] == best][-1]  # the last line of the last attempt
    else:
        with pytest.raises(UsageError):
            previous_verdict(verdicts, "x", "dolfinx", system)
    systems = {v["system"] for v in verdicts if v["case_id"] == "x" and v["track"] == "dolfinx"}
    if len(systems) > 1:
        with pytest.raises(UsageError, match="systems"):
            previous_verdict(verdicts, "x", "dolfinx")


def _headings(text: str) -> list[tuple[int, str, bool]]:
    """(level, text, whether text follows it before the next heading) of the markdown headings
    outside fenced code blocks."""
    out: list[list] = []
    fenced = False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        if not fenced and re.match(r"#+ ", line):
            level = len(line) - len(line.lstrip("#"))
            out.append([level, line[level:].strip(), False])
        elif line.strip() and out:
            out[-1][2] = True
    return [(a, b, c) for a, b, c in out]


@pytest.mark.parametrize("library", ["dealii", "dolfinx", "firedrake", "ngsolve", "numpy"])
def test_every_heading_of_a_prompt_appears_once_and_nests(library: str) -> None:
    """Issue 30: "## deal.II 9.4 API guide" was followed by the guide's own "## deal.II 9.4 notes",
    and the feedback tier's "# The original task" by the original's "# Task".  Every tier that
    holds the guide, for every track: each heading once, no level skipped."""
    from casekit.tracks import TRACKS

    if library not in TRACKS:
        pytest.skip(f"no {library} track registered")
    spec, _ = spec_and_hidden(next(p for p in CASES if "periodic_square" in p.stem))
    verdict = {"attempt": 1, "stage": "F-Acc", "error": 0.5, "runtime": None, "stderr_tail": "",
               "failure": {"category": "accuracy", "message": ""}}
    for tier in ("single", "plan", "modelspecs", "feedback"):
        text = render(spec, library, tier, verdict=verdict, previous_code="# a comment, not a heading\npass")
        heads = _headings(text)
        names = [h for _, h, _ in heads]
        assert len(names) == len(set(names)), f"{library} {tier}: repeated headings {names}"
        assert heads[0][0] == 1, f"{library} {tier}: starts at level {heads[0][0]}"
        for (a, ta, body), (b, tb, _) in itertools.pairwise(heads):
            assert b <= a + 1, f"{library} {tier}: {tb!r} (level {b}) under {ta!r} (level {a})"
            assert body or b == a + 1, f"{library} {tier}: {ta!r} is empty, {tb!r} (level {b}) follows it"
        if tier == "single":
            assert f"## {TRACKS.get(library).title} API guide" in text


def test_the_task_sentence_keeps_the_familys_title() -> None:
    """Issue 30: "solves the stokes flow" -- the title lower-cased into a sentence.  The summary
    states the problem by the family's own title (proper names kept) for every family."""
    from casekit.families import FAMILIES
    from casekit.prompts import _summary

    spec, _ = spec_and_hidden(CASES[0])
    for name in FAMILIES.names():
        family = FAMILIES.get(name)
        first = _summary(spec, family, "the unit square", "DOLFINx 0.11", ["dirichlet on all"]).splitlines()[0]
        assert first.startswith(f"Problem: {family.title} on the unit square"), first
