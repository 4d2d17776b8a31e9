"""casekit's exceptions behave as exceptions do: hashable (by identity), pickled whole, and shown
with their message -- by str(), by tracebacks of chained exceptions and by Inspect (issue 27:
Inspect showed ``TypeError: unhashable type: 'UsageError'``)."""

from __future__ import annotations

import pickle
import traceback

import pytest

from casekit.errors import CasekitError, UnknownName, UsageError
from casekit.expr.syntax import ExpressionError
from casekit.scoring.artifacts import ArtifactError
from casekit.scoring.metrics import ScoringError

Raised = CasekitError | ArtifactError | ScoringError
EXCEPTIONS: list[Raised] = [
    CasekitError("the build failed", case_id="poisson_x"), UsageError("no such option", valid="--out DIR"),
    UnknownName("unknown track 'x'", valid="dolfinx"), ExpressionError("unexpected token"),
    ArtifactError("invalid_artifact", "solution.npz is truncated"), ScoringError("the error is not finite")]


@pytest.mark.parametrize("exc", EXCEPTIONS, ids=lambda e: type(e).__name__)
def test_exceptions_are_hashable_and_show_their_message(exc: Raised) -> None:
    message = exc.message
    assert hash(exc) == hash(exc) and exc in {exc} and exc != type(exc)(*exc.args)
    assert message in str(exc)
    try:
        try:
            raise ValueError("the cause")
        except ValueError as cause:
            raise exc from cause
    except type(exc) as caught:
        text = "".join(traceback.format_exception(caught))
    assert "the cause" in text and message in text
    again = pickle.loads(pickle.dumps(exc))  # Dask returns a worker's exception pickled
    assert type(again) is type(exc) and str(again) == str(exc)


def test_inspect_shows_the_message() -> None:
    error = pytest.importorskip("inspect_ai._util.error")
    for exc in EXCEPTIONS:
        assert exc.message in error.exception_message(exc)
