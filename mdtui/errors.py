"""Typed errors that carry a message a user can act on."""

from __future__ import annotations

from mdtui.text import clean_text


class MdtuiError(Exception):
    """Base of every error mdtui raises on purpose; its message is shown to the user as is."""


class ProbeError(MdtuiError):
    """The system could not be read the way the tool needs."""


class ParseError(ProbeError):
    """A file (or a program's output) could not be read or understood; names the source and what was wrong."""

    def __init__(self, source: str, problem: str) -> None:
        self.source = source
        self.problem = problem
        super().__init__(f"{source}: {problem}")

    def __reduce__(self) -> tuple[type[ParseError], tuple[str, str]]:
        return type(self), (self.source, self.problem)


class PlanError(MdtuiError):
    """A requested plan is invalid; the message says what to change."""


class CommandError(MdtuiError):
    """An external command failed; holds argv, exit code and stderr."""

    def __init__(self, argv: list[str], returncode: int, stderr: str) -> None:
        self.argv = list(argv)
        self.returncode = returncode
        self.stderr = stderr
        tail = clean_text(stderr.strip().splitlines()[-1], one_line=True) if stderr.strip() else "no error output"
        super().__init__(f"{argv[0]} exited with code {returncode}: {tail}")


class SafetyError(MdtuiError):
    """A destructive action was refused by the in-use rules or an identity check."""


class ReadOnlyRootError(SafetyError):
    """An action that changes the live system was asked for while reading a captured tree (``--root DIR``)."""
