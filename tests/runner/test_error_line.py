"""A crashed run's reason is the line of its error output that says what went wrong -- what a
build records for a failed calibration and what an agent's feedback quotes for its crash."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from casekit.execution import error_line

#: the shape of deal.II 9.4's exception block (a FunctionParser refusing a long expression):
#: its last line is a separator, before it a stack trace
DEALII = """Message:  <Expression too long.>
Formula:  <>
casekit_dealii:
--------------------------------------------------------
An error occurred in line <366> of file <./source/base/mu_parser_internal.cc> in function
    void dealii::internal::FunctionParser::ParserImplementation<dim, Number>::init_muparser() const
The violated condition was:
    false
Additional information:
    Parsing Error at Column 37. The parser said: Expression too long.

Stacktrace:
-----------
#0  /lib/x86_64-linux-gnu/libdeal.ii.so.9.4.1: dealii::internal::FunctionParser::init_muparser() const
#6  ./casekit_dealii: main
--------------------------------------------------------
"""


def test_a_dealii_exception_gives_its_additional_information() -> None:
    assert error_line(DEALII) == "Parsing Error at Column 37. The parser said: Expression too long."


def test_a_cpp_exception_gives_its_what() -> None:
    text = "terminate called after throwing an instance of 'std::runtime_error'\n  what():  mesh file not found\n"
    assert error_line(text) == "mesh file not found"


def test_a_python_traceback_gives_its_exception() -> None:
    text = 'Traceback (most recent call last):\n  File "solver.py", line 3, in <module>\nValueError: bad dt\n'
    assert error_line(text) == "ValueError: bad dt"


@given(st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=80), max_size=12))
def test_the_line_is_bounded_and_never_a_separator(lines: list[str]) -> None:
    line = error_line("\n".join(lines))
    assert len(line) <= 500
    assert line == "no error output" or any(c.isalnum() for c in line)
