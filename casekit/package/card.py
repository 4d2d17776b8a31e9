"""The dataset card, in the sections of Hugging Face's dataset card template: front matter (language,
license, task categories, configurations and their features), description, uses, structure with a
loading snippet and every field described from the schemas, creation (the Datasheet-for-Datasets
answers), limitations, citation (BibTeX) and maintenance."""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence
from typing import Any

from casekit.package import numbers
from casekit.package.citation import bibtex
from casekit.package.fields import PROMPT, described
from casekit.package.subsets import Packaged, Subset
from casekit.solvers.baselines import kinds
from casekit.validate.span import SPAN_MARGIN

#: the agent views' columns (``schemas/agent_view.schema.json``) as Hugging Face features
AGENT_FEATURES: list[dict[str, Any]] = [{"name": "id", "dtype": "string"}, {"name": "case_spec", "dtype": "json"},
                                        {"name": "target_library", "dtype": "string"}]


def features(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Hugging Face ``datasets`` features of JSONL ``rows``, declared in the card so that
    ``load_dataset`` never infers a type from the first part of a file: by column in order of
    appearance, a column of strings is ``string``, of lists of strings a list of ``string``, and
    anything else -- nested objects whose keys and value types differ from row to row (a
    parameter that is a number here and an expression there) -- ``json`` (``datasets.Json``),
    which loads as the object it is."""
    names: list[str] = []
    for r in rows:
        names += [k for k in r if k not in names]
    out: list[dict[str, Any]] = []
    for k in names:
        values = [r[k] for r in rows if r.get(k) is not None]
        if values and all(isinstance(v, str) for v in values):
            out.append({"name": k, "dtype": "string"})
        elif values and all(isinstance(v, list) and all(isinstance(x, str) for x in v) for v in values):
            out.append({"name": k, "list": "string"})
        else:
            out.append({"name": k, "dtype": "json"})
    return out


def configs_yaml(libraries: list[str], by_track: dict[str, list[dict[str, Any]]], agent_rows: int | None = None,
                 digests: dict[str, str] | None = None, others: Sequence[Packaged] = ()) -> str:
    """The card's ``configs`` (every one in the ``test`` split: ``agent``, the default, the agent
    views of every track; ``cases``, the primary track's evaluator records; ``cases_<track>``,
    every further track's; and the same for each further set of cases in ``others``,
    ``<set>_agent``, ``<set>`` and ``<set>_<track>``: :mod:`casekit.package.subsets`) and their
    ``dataset_info``: features and the number of rows (which ``load_dataset`` checks; no
    ``num_bytes``, which is the size of the prepared Arrow data, not of the file, and optional).  Each
    configuration's description names its file's sha256 (``digests``): ``datasets`` caches a
    local dataset by directory name and card metadata, so two releases ``<name>/1.0.0`` must not
    read alike."""
    import yaml

    primary = libraries[0]
    records = by_track.get(primary, [])
    n_agent = agent_rows if agent_rows is not None else \
        sum(len(set(r["supported_libraries"]) & set(libraries)) for r in records)
    sets = [(Subset("", tuple(libraries)), by_track, n_agent), *((p.subset, p.by_track, p.agent_rows) for p in others)]
    configs = []
    for s, tracks, n in sets:
        configs.append((s.agent_config, s.agent_file, AGENT_FEATURES, n))
        configs += [(s.records_config(t), s.records_file(t), features(tracks.get(t, [])), len(tracks.get(t, [])))
                    for t in s.tracks]
    entries, infos = [], []
    for cname, path, feats, n in configs:
        entry: dict[str, Any] = {"config_name": cname, "data_files": [{"split": "test", "path": path}]}
        if digests and path in digests:
            entry["description"] = f"{path}, sha256 {digests[path]}"
        if cname == "agent":
            entry["default"] = True
        entries.append(entry)
        infos.append({"config_name": cname, "features": feats,
                      "splits": [{"name": "test", "num_examples": n}]})
    return yaml.safe_dump({"configs": entries, "dataset_info": infos}, sort_keys=False, width=1000).rstrip()


def references_text(references: Sequence[tuple[Subset, dict[str, int]]] | None) -> str:
    """What the card says of the reference fields, set by set (``references``: each set with what
    :func:`casekit.package.build_dist.reference_sizes` gives for its cases)."""
    if not references:
        return "`references/` the reference fields on the evaluation grids"
    each = []
    for s, r in references:
        where = f"the set `{s.name}`" if s.name else "the main set" if len(references) > 1 else "the dataset"
        each.append(f"{r['shipped']} of the {r['shipped'] + r['sampled']} case(s) of {where}"
                    + (f" ({r['bytes']:,} bytes compressed, {r['raw_bytes']:,} bytes of arrays)" if r["shipped"]
                       else ""))
    return ("`references/` the reference fields of the cases without a manufactured solution (numerical "
            f"references): {'; '.join(each)} -- the reference of every other case is its manufactured "
            "solution (in its record), sampled on the evaluation grid when it is evaluated "
            "(`casekit evaluate --release`)")


def card(name: str, version: str, records: list[dict[str, Any]], libraries: list[str], license_id: str,
         by_track: dict[str, list[dict[str, Any]]] | None = None, about: str = "",
         references: Sequence[tuple[Subset, dict[str, int]]] | None = None, agent_rows: int | None = None,
         digests: dict[str, str] | None = None, machine: dict[str, dict[str, Any]] | None = None,
         others: Sequence[Packaged] = (), notice: str = "") -> str:
    """The card, in the sections of Hugging Face's dataset card template; ``by_track`` (every
    track's records) adds the per-family calibration table beside the paper's
    (:mod:`casekit.package.numbers`), ``machine`` (the build's machine time per track) its table,
    and ``about`` (markdown: provenance, attribution, repairs) its own section; ``references``
    (what the dataset ships of its references, per set: :func:`references_text`) is stated in its
    description; ``agent_rows`` and
    ``digests`` (the sha256 of each JSONL file) go into the configurations (:func:`configs_yaml`);
    ``others`` are further sets of cases (the authored sample), each with its configurations and
    its own calibration table.  Every field of every configuration is described from the schemas
    (:func:`fields_markdown`).  ``notice`` (markdown) comes first, under the title: what a reader
    must know before anything else (a private campaign says so there)."""
    from casekit import __version__

    families: dict[str, int] = {}
    domains: dict[str, int] = {}
    for r in records:
        f = r["pde_classification"]["equation_family"]
        families[f] = families.get(f, 0) + 1
        d = r["case_spec"]["domain"]["type"]
        domains[d] = domains.get(d, 0) + 1
    e = sorted(r["evaluation_metadata"]["e_base"] for r in records)
    n = len(records)
    size = "n<1K" if n < 1000 else "1K<n<10K"
    rows = "\n".join(f"| {f} | {c} |" for f, c in sorted(families.items()))
    drows = "\n".join(f"| {d} | {c} |" for d, c in sorted(domains.items()))
    median = f"{statistics.median(e):.2e}" if e else "n/a"
    calib = (f"\n## Calibration per family and track\n\n{numbers.markdown(by_track, machine)}\n"
             if by_track else "")
    calib += "".join(_other_set(p) for p in others)
    about = f"\n## Provenance\n\n{_demote(about.strip())}\n" if about.strip() else ""
    inverters, margin = ", ".join(kinds()), SPAN_MARGIN
    sets = [Subset("", tuple(libraries)), *(p.subset for p in others)]
    every = [*records, *(r for p in others for r in p.records)]
    return f"""---
pretty_name: {name}
language:
- en
license: {license_id}
size_categories:
- {size}
task_categories:
- text-generation
tags:
- pde
- finite-element
- benchmark
- scientific-computing
- code-generation
{configs_yaml(libraries, by_track or {libraries[0]: records}, agent_rows, digests, others)}
---

# Dataset Card for {name} {version}
{f"{chr(10)}{notice.strip()}{chr(10)}" if notice.strip() else ""}
A benchmark of {n} cases{_more_text(others)} in which an agent must write a finite-element solver
({", ".join(libraries)}) for a PDE on a given domain; built, validated and packaged with casekit. Each case
is scored by staged gates: the solver runs and writes valid output, its error on the evaluation grid is
within the case's accuracy threshold, and it is fast enough beside the calibration solver timed on the same machine.

## Dataset Details

### Dataset Description

It has one split, `test`: it is for evaluation, not training. `agent.jsonl` holds exactly what an agent
is given; `cases.jsonl` holds the evaluator-side records (thresholds, calibration, provenance);
`case_specs/` each case's case_spec as JSON text{_also_text(others)};
{references_text(references)}; `prompts/` the rendered prompts;
`manifest.json` the sha256 of every file (check with `casekit verify`).

{"The main set's cases:" + chr(10) + chr(10) if others else ""}| family | cases |
|---|---|
{rows}

| domain | cases |
|---|---|
{drows}

Median calibration error e_base{" of the main set" if others else ""}: {median}.

- **Curated by:** built, validated and packaged with casekit {__version__}
- **Language(s) (NLP):** English (the prompts); the case specifications are JSON, their expressions in
  Python syntax
- **License:** {license_id}

### Dataset Sources

- **Design anchor:** PDEAgent-Bench (arXiv 2605.09636; see the citation below): its record schema,
  gates and calibration

## Uses

### Direct Use

Evaluating agents and solvers: `casekit evaluate --release DIR --track TRACK --submissions S` scores
submissions with the case's gates in an isolated sandbox, and `inspect eval casekit/benchmark -T cases=DIR`
runs any model through Inspect AI; `casekit report` tabulates the verdicts.

### Out-of-Scope Use

Training on the references or the evaluator-side records of these test cases; ranking solvers by the
build's `t_base` (a timing on the build's machine: the runtime gate compares with the calibration solver
re-timed beside each submission).

## Dataset Structure

Configurations, each one split `test`: {_configs_text(sets, others)}. `datasets` reads the
nested columns as JSON and rounds the numbers of such rows to 10 decimal places -- `casekit evaluate` reads
the JSONL files exactly. The Croissant metadata
(`croissant.json`) has record sets named as the configurations; its agent record sets give one row per case
and library with the `case_spec` as JSON text and the `prompt`.

```python
import datasets
import mlcroissant as mlc

DIR = "{LOAD_DIR.format(name=name)}"  # this directory, or the dataset's repository on the Hugging Face Hub
agent = datasets.load_dataset(DIR, "agent", split="test")  # what an agent is given: id, case_spec, target_library
cases = datasets.load_dataset(DIR, "cases", split="test")  # the evaluator's records
print(agent[0]["target_library"], sorted(agent[0]["case_spec"]))
# Croissant: the same agent rows with the prompt (a Hub repository: its Croissant URL)
task = next(iter(mlc.Dataset(jsonld=f"{{DIR}}/croissant.json").records("agent")))
print(task["agent/target_library"].decode(), task["agent/prompt"].decode().splitlines()[0])
```

{fields_markdown(sets, _tagged(sets, by_track or {libraries[0]: records}, others))}
## Dataset Creation

### Curation Rationale

To measure whether agents can turn a precise PDE specification into a correct and efficient finite-element
solver, with gates calibrated per case (accuracy threshold max(alpha_acc e_base, tau_min), runtime threshold
alpha_time times the calibration solver's runtime).

### Source Data

#### Data Collection and Processing

Each case: a PDE family and parameters, a domain template with named boundary parts, boundary and initial
data, an evaluation grid and an output field. Manufactured cases hide their solution; the agent view never
contains the solution, references, calibration settings, e_base, t_base or thresholds.

Synthetic. {_origin_text(every)}; data are derived symbolically; references
are the manufactured solution on the grid or refined numerical solves; calibration solves are timed
{_timing_text(every)}, from a fresh state, on the machine recorded in each record (evaluations
re-time the calibration solver beside each submission: the runtime gate is a ratio).

Every case passed static validation (schema, residual of the strong form, boundary and initial data,
leak checks), the refinement check for numerical references, and trial execution: the calibration solver
passes and trivial submissions (zero field, boundary data everywhere, initial data, forcing) fail.

#### Validity: no case can be answered without solving

A case whose answer can be read off what the agent sees measures transcription, not solving. PDEAgent-Bench
v2 has that flaw: of its transient records that casekit could import leak-free, 62 of 126 were answered to
1e-6 by the initial data times a ratio read off a boundary datum (every separable solution is). Every case
here was refused unless (1) no inverter of casekit's battery ({inverters}), each a function of the agent
view alone, came within its accuracy threshold (or a target's),
and (2) the reference lies at least {margin:g} times its accuracy threshold (for a threshold above 0.11, halfway
from it to 1) away from every linear
combination of each small span of visible fields (initial data, forcing at three times, the forcing's time
coefficients, the function atoms it prints, the boundary data extended as given). A solve in a basis read
off the forcing (a spectral or collocation method) is a solve and is not counted as inversion.

#### Who are the source data producers?

casekit's generators and solvers: no person is described; the provenance section (where there is one)
names the published records a case adapts.

### Annotations

#### Annotation process

None by people: every label (family, mathematical types, tags, thresholds) is computed by casekit from the
case source and the build.

#### Who are the annotators?

No one: casekit's build.

#### Personal and Sensitive Information

None: the data are synthetic mathematics.
{calib}{about}
## Bias, Risks, and Limitations

Cases cover the families, domains and regimes of the design matrix only, which over-represents smooth
manufactured solutions; runtime thresholds are relative to the calibration solver timed beside each
submission, so a pass rate depends on the library and machine only through that ratio.

### Recommendations

Report the first-attempt pass rate with its interval (`casekit report`), compare systems evaluated by the
same casekit version on the same release, and do not train on these cases.

## Citation

**BibTeX:**

```bibtex
{bibtex()}
```

## More Information

### Distribution

This directory; verify integrity with `casekit verify`. License: {license_id}.

### Maintenance

Releases follow semantic versioning (`casekit release`), by what an agent or a score sees: a changed or
removed case (its specification, reference, accuracy thresholds or gates) is major, new cases or tracks are
minor, new calibration timings, machine or library patch versions are patch; a release is never edited
afterwards. See CHANGELOG.md.

## Dataset Card Contact

The maintainers of the release this directory comes from (`CHANGELOG.md` lists its releases); a case's
`evaluation_metadata.provenance` names the record it adapts.
"""


#: where the card's loading snippet says the dataset is (a placeholder the reader replaces)
LOAD_DIR = "path/to/{name}"


def fields_markdown(sets: Sequence[Subset], tagged: dict[str, tuple[int, int]] | None = None) -> str:
    """The card's field tables: every column of every configuration of ``sets`` (agent views and
    records, each kind once with the configurations it describes) and the keys of the case_spec,
    each with its description from the schemas (:mod:`casekit.package.fields`); ``tagged``
    (records configuration -> records with tags, records) says which records carry ``tags``."""
    kinds = {"agent": ("Agent views", [s.agent_config for s in sets]),
             "cases": ("Evaluator records", [s.records_config(t) for s in sets for t in s.tracks])}
    out = ["### Fields\n"]
    for kind, (title, configs) in kinds.items():
        names = ", ".join(f"`{c}`" for c in configs)
        out.append(f"{title} -- configurations {names}:\n\n| field | description |\n|---|---|")
        out += [f"| `{k}` | {_cell(doc)} |" for k, doc in described(kind).items()]
        if kind == "cases" and tagged:
            out.append("\nWhich records carry `tags` here: " + "; ".join(
                f"all {n} of `{c}`" if k == n else f"{'none' if k == 0 else k} of the {n} of `{c}`"
                for c, (k, n) in tagged.items()) + ".")
        out.append("")
    out.append("The `case_spec` object (in both):\n\n| key | description |\n|---|---|")
    out += [f"| `{k}` | {_cell(doc)} |" for k, doc in described("case_spec").items()]
    out.append(f"\nThe Croissant agent record sets add `prompt`: {PROMPT}.\n")
    return "\n".join(out)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _more_text(others: Sequence[Packaged]) -> str:
    """The further sets' cases beside the main set's count, in the card's first sentence."""
    return "".join(f" (and {len(p.records)} more in the set `{p.subset.name}`, its own configurations)"
                   for p in others)


def _also_text(others: Sequence[Packaged]) -> str:
    """Where the further sets' files are, beside the main set's."""
    return "".join(f" (the set `{p.subset.name}`'s are `{p.subset.agent_file}`, "
                   f"`{p.subset.records_file(p.subset.tracks[0])}` and `{p.subset.case_specs_dir}/`)" for p in others)


def _configs_text(sets: Sequence[Subset], others: Sequence[Packaged]) -> str:
    """The card's list of the configurations this dataset has, set by set."""
    def each(s: Subset) -> str:
        return ", ".join([f"`{s.agent_config}` ({'the default: ' if not s.name else ''}its agent views, one per "
                          "case and track)", *(f"`{s.records_config(t)}` (its {t} records, `{s.records_file(t)}`)"
                                               for t in s.tracks)])
    sizes = {p.subset.name: len(p.records) for p in others}
    return "; ".join(f"the main set: {each(s)}" if not s.name else
                     f"the set `{s.name}` ({sizes[s.name]} cases, not counted above, in `{s.prefix}`): {each(s)}"
                     for s in sets)


def _tagged(sets: Sequence[Subset], by_track: dict[str, list[dict[str, Any]]], others: Sequence[Packaged]
            ) -> dict[str, tuple[int, int]]:
    """Records configuration -> (its records with tags, its records)."""
    tracks = {s.name: (by_track if not s.name else next(p.by_track for p in others if p.subset == s)) for s in sets}
    return {s.records_config(t): (sum(1 for r in rs if r.get("tags")), len(rs))
            for s in sets for t in s.tracks if (rs := tracks[s.name].get(t)) is not None}


def _origin_text(records: Sequence[dict[str, Any]]) -> str:
    """Where the cases' design points come from: drawn over a family's axes, or adapted from a
    published record (``evaluation_metadata.provenance``)."""
    adapted = sum(1 for r in records if r.get("evaluation_metadata", {}).get("provenance"))
    drawn = len(records) - adapted
    parts = ([f"{drawn} case(s) are design points sampled over each family's axes"] if drawn else []) + \
        ([f"{adapted} adapt a published record (see Provenance)"] if adapted else [])
    return "; ".join(parts) or "Design points are sampled over each family's axes"


def _timing_text(records: Sequence[dict[str, Any]]) -> str:
    """How the calibration's t_base was timed: the number of timed runs the records hold."""
    runs = sorted({len(r["evaluation_metadata"]["t_base_runs"]) for r in records
                   if r.get("evaluation_metadata", {}).get("t_base_runs")})
    if not runs:
        return "in isolated runs"
    if runs == [1]:
        return "in one isolated run per case (t_base is that run; `t_base_runs` holds it)"
    if len(runs) == 1:
        return f"as the median of {runs[0]} isolated runs per case (`t_base_runs`)"
    return f"as the median of {runs[0]} to {runs[-1]} isolated runs per case (`t_base_runs`)"


def _other_set(p: Packaged) -> str:
    """A further set's section: its cases per family and its calibration (and machine time)."""
    s = p.subset
    rows = "\n".join(f"| {f} | {n} |" for f, n in sorted(_count(p.records).items()))
    machine = f"\n\n{numbers.machine_table(p.machine)}" if p.machine else ""
    return (f"\n## The set `{s.name}`\n\n{len(p.records)} case(s) in `{s.prefix}` (configurations "
            f"`{s.agent_config}`, " + ", ".join(f"`{s.records_config(t)}`" for t in s.tracks) + ").\n\n"
            f"| family | cases |\n|---|---|\n{rows}\n\n{numbers.table(p.by_track, paper=False)}{machine}\n")


def _count(records: list[dict[str, Any]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in records:
        f = r["pde_classification"]["equation_family"]
        out[f] = out.get(f, 0) + 1
    return out


def _demote(markdown: str, top: int = 3) -> str:
    """``markdown`` with its headings below the card's section: its highest at level ``top``, and
    each at most one level below the heading before it (no level skipped); fenced code is left as
    it is."""
    lines = markdown.splitlines()
    fenced, levels = False, []
    for i, line in enumerate(lines):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and (m := re.match(r"(#{1,6}) ", line)):
            levels.append((i, len(m.group(1))))
    if not levels:
        return markdown
    shift, previous = top - min(n for _, n in levels), top - 1
    for i, n in levels:
        level = min(n + shift, previous + 1, 6)
        lines[i] = "#" * level + lines[i][n:]
        previous = level
    return "\n".join(lines)
