"""``casekit campaign new`` and ``casekit campaign report``: fresh private campaigns."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from casekit.cli.app import (
    EXECUTOR_HELP,
    SCHEDULER_HELP,
    Output,
    app,
    command_group,
    console_err,
    executor_options,
    jobs_option,
    json_option,
)
from casekit.cli.build import MemoryOption, RunnerOption, TimeoutOption
from casekit.cli.output import print_tables

campaign_app = command_group("Fresh private campaigns: new cases drawn with a secret in a release's distribution, "
                             "scored beside the release.")
app.add_typer(campaign_app, name="campaign")


@campaign_app.command("new")
def new(
    like: Path = typer.Option(..., "--like", help="The release whose distribution the campaign follows "
                              "(releases/<name>/<version>)."),
    n: int = typer.Option(..., "--n", help="Cases to draw, stratified over the release's family x math type x "
                          "domain template in proportion."),
    secret_file: Path = typer.Option(..., "--secret-file", help="A file of at least 16 random bytes that seeds the "
                                     "draws; never copied, logged or written (keep it out of the repository)."),
    out: Path = typer.Option(..., "--out", help="The campaign directory to write (new or empty; outside any git "
                             "work tree unless --allow-git)."),
    sources: list[Path] = typer.Option([Path("cases")], "--sources", help="Where the release's case sources are "
                                       "(the anchors of the draws)."),
    track: list[str] = typer.Option([], "--track", "-t", help="Tracks to build on (the first is primary; default: "
                                    "the release's primary track)."),
    name: str = typer.Option("", "--name", help="The private dataset's name (default: <release name>-campaign)."),
    jobs: int = jobs_option(1, "Strata drawn and cases built concurrently."),
    rounds: int = typer.Option(3, "--rounds", min=1, help="Draw-and-build rounds: a case the build refuses is "
                               "replaced by its stratum's next draw."),
    repeats: int = typer.Option(1, "--repeats", min=1, help="Timed calibration runs per case (t_base is "
                                "metadata under the paired runtime gate)."),
    timeout: TimeoutOption = 600.0,
    memory_mb: MemoryOption = 4096,
    runner: RunnerOption = "local",
    executor: Annotated[str, typer.Option("--executor", help=EXECUTOR_HELP)] = "local",
    scheduler: Annotated[str | None, typer.Option("--scheduler", help=SCHEDULER_HELP)] = None,
    allow_git: bool = typer.Option(False, "--allow-git", help="Write the campaign inside a git work tree (its "
                                   "sources hold the hidden solutions: make sure the directory is ignored)."),
    as_json: bool = json_option("the campaign (campaign.json)"),
) -> None:
    """Draw N cases in the release's distribution with seeds derived from the secret, validate
    them with every rule a release case passes, build them, and package a private dataset in the
    release's format (DIR/dataset) whose card says it is private, what it follows and its
    distribution; DIR/campaign.json lists each case's anchor and draw (never a seed)."""
    from casekit.campaign.new import Options, new_campaign, release_of
    from casekit.campaign.secret import read_keys
    from casekit.cli.build import _check_usable

    keys = read_keys(secret_file)
    tracks = list(track) or release_of(like)[0]["tracks"][:1]
    for t in tracks:
        _check_usable([like], repeats, jobs, runner, t)
    opts = Options(like, list(sources), n, out, tracks, name, jobs, rounds, repeats, timeout, memory_mb, runner,
                   executor_options(executor, scheduler, jobs), allow_git)

    def drawn(d) -> None:  # type: ignore[no-untyped-def]
        console_err.print(f"{d.id} ({d.stratum.label}): " + ("drawn" if d.source is not None else
                                                              "left out: no recipe validated"),
                          markup=False, highlight=False)

    data = new_campaign(opts, keys, say=lambda s: console_err.print(s, markup=False, highlight=False), drawn=drawn)
    shown = Output(as_json)
    f = data["follows"]
    shown.say(f"{out}: {len(data['cases'])} case(s) following {f['name']} {f['version']} "
              f"({len(data['left_out'])} draw(s) left out); the private dataset is {out / 'dataset'}: "
              f"casekit evaluate --release {out / 'dataset'} ...")
    shown.result(data)


@campaign_app.command("report")
def report(
    evals: list[Path] = typer.Argument(..., help="verdicts.jsonl files or evaluation directories: the systems' "
                                       "verdicts on the release and on the campaign (in any files)."),
    release: Path = typer.Option(..., "--release", help="The public release (releases/<name>/<version>)."),
    campaign: Path = typer.Option(..., "--campaign", help="The campaign directory (casekit campaign new --out)."),
    alpha: float = typer.Option(0.05, "--alpha", min=1e-6, max=0.5, help="Significance level of the flags."),
    html: Path | None = typer.Option(None, "--html", help="Write the report as one web page (a .html file)."),
    as_json: bool = json_option("the report's data"),
) -> None:
    """The same systems on the public release and on the campaign, side by side per family: pass
    rates with Wilson 95 % intervals and a two-proportion test (Fisher's exact test for small
    counts); a system whose public rate exceeds its fresh one beyond chance is flagged as possibly
    contaminated.  Difficulty parity: the baselines' rates (calibration, cheaters) and, per family,
    the e_base and t_base distributions (Mann-Whitney U) of release and campaign."""
    from casekit.campaign.compare import compare
    from casekit.campaign.render import html_page, tables
    from casekit.cli.output import print_json

    data = compare(release, campaign, evals, alpha)
    if as_json:
        print_json(data)
    else:
        print_tables(tables(data))
    if html is not None:
        html_page(data, html)
        console_err.print(f"wrote {html}", markup=False)
