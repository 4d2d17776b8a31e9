"""Running any model on a casekit benchmark through Inspect AI.

The task ``casekit/benchmark`` has one sample per built case: the input is the case's prompt for
the track (the tier's text, exactly what ``casekit prompt`` renders), the model answers with its
``solver.py`` (or ``solver.cpp``) in a fenced code block, and the scorer runs casekit's own
evaluator on it -- the same sandbox, gates and verdict as ``casekit evaluate`` (the verdict is in
the score's metadata and in ``OUT/verdicts.jsonl`` for ``casekit report``).  With ``attempts``
above 1 the feedback tier runs: after a failed attempt the model gets casekit's feedback as the
next turn of the chat -- only the verdict (its error value or runtime, the failure category and
message, never thresholds): the task and its answer are in the chat already -- and tries again.

The score has two values, as ``casekit report`` counts them: ``first_attempt`` (the headline:
the first attempt passed) and ``pass_at_k`` (an attempt within ``attempts`` passed).  A task that
cannot start (no built cases, an unknown track or tier) stops ``inspect eval`` with a one-line
error and exit status 1; Inspect's mock model (``mockllm/model``) runs offline
(:mod:`casekit.inspect.mock`).
With ``state_thresholds`` the prompts (and the feedback) are the thresholds variant
(``casekit.prompts.variants``: the case's accuracy threshold and the runtime rule stated
numerically; off by default, as in the PDEAgent-Bench paper); every verdict records the variant.

    inspect eval casekit/benchmark --model openai/gpt-4o -T cases=build -T track=dolfinx -T attempts=3
"""

from __future__ import annotations

import asyncio
import re
import tempfile
import threading
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai._util.error import PrerequisiteError
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageUser
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Target, accuracy, scorer, stderr
from inspect_ai.solver import Generate, TaskState, solver

from casekit.errors import CasekitError, UsageError
from casekit.inspect.mock import local_token_counts

#: fenced code blocks; the language tag is optional
_BLOCK = re.compile(r"```([A-Za-z0-9+_-]*)[ \t]*\n(.*?)```", re.S)
_MARKERS = {"python": ("def solve",), "cpp": ("int main", "main(")}
TIERS = ("single", "plan")


def extract_code(text: str, language: str) -> str:
    """The submission in a model's answer: the last fenced block that defines the entry point
    (``def solve`` for Python, ``main`` for C++), else the last fenced block, else nothing."""
    blocks = [body for _, body in _BLOCK.findall(text or "")]
    marked = [b for b in blocks if any(m in b for m in _MARKERS.get(language, ()))]
    return (marked or blocks or [""])[-1]


class _Bench:
    """The dataset and evaluator a task scores against (one per task)."""

    def __init__(self, cases: str, track: str, repeats: int, out: str, state_thresholds: bool = False) -> None:
        from casekit.evaluate.store import open_store
        from casekit.tracks import TRACKS

        self.track = TRACKS.get(track)
        self.store = open_store(Path(cases), track)
        if not self.store.records:
            raise UsageError(f"{cases} holds no built cases for the {track} track")
        self.repeats = repeats
        self.state_thresholds = state_thresholds
        self.prompt_variant = "thresholds" if state_thresholds else "standard"
        self.out = Path(out) if out else Path(tempfile.mkdtemp(prefix="casekit-inspect-"))
        #: Inspect runs samples concurrently; their evaluations run one at a time, as in
        #: ``casekit evaluate`` (timed runs never overlap, and the journal has one writer)
        self._lock = threading.Lock()

    def score(self, case_id: str, code: str, attempt: int, system: str, epoch: int = 1) -> dict[str, Any]:
        from casekit.evaluate.run import evaluate_attempt

        with self._lock:
            return evaluate_attempt(self.store, case_id, code, self.out, track=self.track.name, system=system,
                                    attempt=attempt, repeats=self.repeats, epoch=epoch,
                                    prompt_variant=self.prompt_variant)

    def thresholds(self, case_id: str) -> Any:
        """What the prompts of ``case_id`` state in the thresholds variant (None: standard)."""
        from casekit.prompts.variants import StatedThresholds

        return StatedThresholds.of_record(self.store.records[case_id]) if self.state_thresholds else None


def _system(state: TaskState) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", str(state.model))[:80] or "model"


@solver
def attempt_loop(bench: _Bench, attempts: int) -> Any:
    """Generate, score with casekit's evaluator, and (feedback tier) feed the verdict back until
    the attempt passes or ``attempts`` are used; the verdicts go into the sample's store."""
    from casekit.prompts import feedback

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        case_id = state.metadata["case_id"]
        spec = bench.store.records[case_id]["case_spec"]
        verdicts: list[dict[str, Any]] = []
        for n in range(1, attempts + 1):
            state = await generate(state)
            code = extract_code(state.output.completion, bench.track.language)
            verdict = await asyncio.to_thread(bench.score, case_id, code, n, _system(state), state.epoch)
            verdicts.append(verdict)
            state.store.set("casekit_verdicts", verdicts)
            if verdict["passed"] or n == attempts:
                break
            # the chat holds the task and this answer: the next turn is the verdict alone
            state.messages.append(ChatMessageUser(content=feedback(spec, bench.track.name, verdict, code, attempts,
                                                                   bench.thresholds(case_id), in_chat=True)))
        return state

    return solve


#: the score's values, the headline first: as ``casekit report`` leads with first attempts and
#: gives pass@k beside them (k: the task's ``attempts``)
SCORES = ("first_attempt", "pass_at_k")


@scorer(metrics={name: [accuracy(), stderr()] for name in SCORES})
def verdict_scorer(bench: _Bench) -> Any:
    """``first_attempt``: the first attempt passed; ``pass_at_k``: an attempt passed; the answer
    is the last attempt's stage; the verdicts are the metadata."""

    async def score(state: TaskState, target: Target) -> Score:
        verdicts = state.store.get("casekit_verdicts") or []
        if not verdicts:  # a plain generate() plan: score the final answer
            code = extract_code(state.output.completion, bench.track.language)
            verdicts = [await asyncio.to_thread(bench.score, state.metadata["case_id"], code, 1, _system(state),
                                                state.epoch)]
        v = verdicts[-1]
        failure = v.get("failure") or {}
        passed = {"first_attempt": verdicts[0]["passed"], "pass_at_k": any(x["passed"] for x in verdicts)}
        return Score(value={k: CORRECT if passed[k] else INCORRECT for k in SCORES}, answer=v["stage"],
                     explanation=failure.get("message") or f"error {v['error']}",
                     metadata={"verdict": v, "verdicts": verdicts, "attempts": len(verdicts)})

    return score


@task
def benchmark(cases: str = "build", track: str = "dolfinx", tier: str = "single", attempts: int = 1,
              repeats: int = 3, out: str = "", state_thresholds: bool = False) -> Task:
    """A casekit benchmark as an Inspect task: ``cases`` a build directory or packaged dataset,
    ``track`` the library, ``tier`` single or plan (the first prompt), ``attempts`` > 1 for the
    feedback loop, ``repeats`` timed runs per attempt, ``out`` where verdicts and artifacts go,
    ``state_thresholds`` the thresholds prompt variant (off by default)."""
    try:
        return _benchmark(cases, track, tier, attempts, repeats, out, state_thresholds)
    except CasekitError as exc:  # Inspect prints the message alone and exits with status 1
        raise PrerequisiteError(f"casekit/benchmark: {exc}") from exc


def _benchmark(cases: str, track: str, tier: str, attempts: int, repeats: int, out: str,
               state_thresholds: bool) -> Task:
    from casekit.prompts import render

    if tier not in TIERS:
        raise UsageError(f"unknown tier {tier!r} for the Inspect task", valid=", ".join(TIERS))
    if attempts < 1 or repeats < 1:
        raise UsageError("attempts and repeats must be at least 1")
    bench = _Bench(cases, track, repeats, out, state_thresholds)
    samples = [Sample(id=str(r.get("public_id") or cid),
                      input=render(r["case_spec"], track, tier, thresholds=bench.thresholds(cid)),
                      metadata={"case_id": cid, "family": r["case_spec"]["pde"]["type"],
                                "domain": r["case_spec"]["domain"]["type"]})
               for cid, r in sorted(bench.store.records.items())]
    return Task(dataset=MemoryDataset(samples, name=f"casekit-{track}"), setup=local_token_counts(),
                solver=attempt_loop(bench, attempts), scorer=verdict_scorer(bench),
                metadata={"track": track, "tier": tier, "attempts": attempts,
                          "prompt_variant": bench.prompt_variant})
