"""Errors and problems.

A :class:`Problem` is one finding about one input: where it is (file, case id, JSON pointer),
what is wrong and what would be valid.  Validators collect problems; commands print them.
A :class:`CasekitError` is raised when work cannot go on; it carries the same parts, so the CLI
prints it the same way and never shows a traceback for bad input.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Problem:
    message: str
    pointer: str = ""
    case_id: str | None = None
    file: str | None = None
    valid: str | None = None
    check: str = "general"

    def located(self, *, file: str | None = None, case_id: str | None = None,
                prefix: str = "") -> Problem:
        """The same problem placed in a file / case / under a pointer prefix."""
        return Problem(
            message=self.message,
            pointer=prefix + self.pointer,
            case_id=self.case_id if self.case_id is not None else case_id,
            file=self.file if self.file is not None else file,
            valid=self.valid,
            check=self.check,
        )

    def render(self) -> str:
        parts = [p for p in (self.file, self.case_id, self.pointer) if p]
        text = ": ".join([*parts, self.message])
        if self.valid:
            text += f" (valid: {self.valid})"
        return text

    def to_dict(self) -> dict[str, str | None]:
        return {
            "file": self.file,
            "case_id": self.case_id,
            "pointer": self.pointer or "/",
            "check": self.check,
            "message": self.message,
            "valid": self.valid,
        }


@dataclass(eq=False)
class CasekitError(Exception):
    """A failure with a clear reason; the CLI prints it and exits non-zero.

    Compared and hashed by identity, as every exception is (``eq=False``: a dataclass with ``eq``
    is unhashable, and tracebacks -- Inspect's, ``traceback`` with chained exceptions -- keep the
    exceptions they have seen in a set); ``str()`` is the rendered message.
    """

    message: str
    pointer: str = ""
    case_id: str | None = None
    file: str | None = None
    valid: str | None = None
    problems: list[Problem] = field(default_factory=list)

    def __post_init__(self) -> None:
        super().__init__(self.message)

    def __str__(self) -> str:
        return self.as_problem().render()

    def as_problem(self, check: str = "general") -> Problem:
        return Problem(self.message, self.pointer, self.case_id, self.file, self.valid, check)


class UsageError(CasekitError):
    """The command was called wrongly (exit status 2)."""


class UnknownName(UsageError):
    """A name that is not registered (a family, domain template, track, tier, ...): at the
    command line a usage error; inside a case source, validation reports it as a problem."""


def pointer_join(*parts: object) -> str:
    """A JSON pointer (RFC 6901) from path parts."""
    out = ""
    for p in parts:
        out += "/" + str(p).replace("~", "~0").replace("/", "~1")
    return out
