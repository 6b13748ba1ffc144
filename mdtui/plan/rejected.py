"""The PlanError that carries every problem found in a request, so a user can fix them all at once."""

from __future__ import annotations

from collections.abc import Sequence

from mdtui.errors import PlanError


class PlanRejected(PlanError):
    """A request failed validation; ``problems`` holds one sentence per thing to change."""

    def __init__(self, subject: str, problems: Sequence[str]) -> None:
        self.subject = subject
        self.problems: list[str] = list(problems)
        lines = "\n".join(f"- {problem}" for problem in self.problems)
        super().__init__(f"cannot {subject}:\n{lines}")
