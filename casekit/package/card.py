"""The dataset card: Hugging Face front matter plus the Datasheet-for-Datasets sections."""

from __future__ import annotations

import statistics
from typing import Any


def card(name: str, version: str, records: list[dict[str, Any]], libraries: list[str], license_id: str) -> str:
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
    return f"""---
pretty_name: {name}
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
configs:
- config_name: agent
  data_files:
  - split: test
    path: agent.jsonl
  default: true
- config_name: cases
  data_files:
  - split: test
    path: cases.jsonl
---

# {name} {version}

A benchmark of {n} cases in which an agent must write a finite-element solver ({", ".join(libraries)}) for a
PDE on a given domain; built, validated and packaged with casekit. It has one split, `test`: it is for
evaluation, not training. `agent.jsonl` holds exactly what an agent
is given; `cases.jsonl` holds the evaluator-side records (thresholds, calibration, provenance);
`references/` the reference fields on the evaluation grids; `prompts/` the rendered prompts;
`manifest.json` the sha256 of every file (check with `casekit verify`).

| family | cases |
|---|---|
{rows}

| domain | cases |
|---|---|
{drows}

Median calibration error e_base: {median}.

## Motivation
To measure whether agents can turn a precise PDE specification into a correct and efficient finite-element
solver, with gates calibrated per case (accuracy threshold max(alpha_acc e_base, tau_min), runtime threshold
alpha_time t_base).

## Composition
Each case: a PDE family and parameters, a domain template with named boundary parts, boundary and initial
data, an evaluation grid and an output field. Manufactured cases hide their solution; the agent view never
contains the solution, references, calibration settings, e_base, t_base or thresholds.

## Collection process
Synthetic. Design points are sampled over each family's axes; data are derived symbolically; references
are the manufactured solution on the grid or refined numerical solves; calibration solves are timed as the
median of repeated isolated runs, each from a fresh state, on the machine recorded in each record (evaluations
re-time the calibration solver beside each submission: the runtime gate is a ratio).

## Preprocessing, cleaning, labelling
Every case passed static validation (schema, residual of the strong form, boundary and initial data,
leak checks), the refinement check for numerical references, and trial execution: the calibration solver
passes and trivial submissions (zero field, boundary data everywhere, initial data, forcing) fail.

## Uses
Evaluating agents and solvers with `casekit evaluate`. Not for training on the references.

## Distribution
This directory; verify integrity with `casekit verify`. License: {license_id}.

## Maintenance
Releases follow semantic versioning (`casekit release`): new cases are minor, changed references, grids,
thresholds or contracts are major; see CHANGELOG.md.
"""
