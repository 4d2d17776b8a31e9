"""Inspect's mock model, offline.

``mockllm/model`` answers without a network, but it fills in the token usage of every answer it
is not given usage for by counting tokens with tiktoken's ``o200k_base`` table, which tiktoken
downloads on first use: a smoke run of the task with the mock model (``inspect eval
casekit/benchmark --model mockllm/model``, in CI or on an offline machine) failed on that download.
The task's setup step makes the mock model estimate tokens from the text's length instead (its
counts are placeholders: nothing is billed or truncated by them); every other model counts as
Inspect and its provider do.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.model import get_model
from inspect_ai.solver import Generate, TaskState, solver

#: Inspect's provider name of the mock model
MOCK_PROVIDER = "mockllm"
#: characters per token of the estimate (the usual rule of thumb for English and code)
CHARS_PER_TOKEN = 4


async def estimate_tokens(text: str) -> int:
    """A local token count: the text's length over :data:`CHARS_PER_TOKEN`, at least 1."""
    return max(1, len(text) // CHARS_PER_TOKEN)


def is_mock(model: Any) -> bool:
    return str(model).partition("/")[0] == MOCK_PROVIDER


@solver
def local_token_counts() -> Any:
    """The task's setup step: the mock model counts tokens locally (:func:`estimate_tokens`)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        model = get_model()
        if is_mock(model):
            model.api.count_text_tokens = estimate_tokens  # type: ignore[method-assign]  # this instance only
        return state

    return solve
