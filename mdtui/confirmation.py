"""The one confirmation rule: nothing is written or destroyed unless the user typed the action's token.

Every plan that writes names its token (``plan.confirmation``: the device, the array, the disk overwritten,
or a word for a configuration file). The CLI asks for it (``--yes`` stands for it), the app's ConfirmScreen
asks for it, and the core function that acts takes what was typed and checks it here, right before it acts:
a front end that forgot to ask, or asked for the wrong word, is refused by the core, never trusted.
"""

from __future__ import annotations

from mdtui.columns import cut_end
from mdtui.errors import SafetyError
from mdtui.text import clean_line


def confirms(typed: str | None, token: str) -> bool:
    """Whether ``typed`` (what the user typed, or the token itself for --yes) confirms an action named ``token``.

    Blanks around what was typed do not count; case does (``/dev/md0`` is not ``/dev/MD0``). An empty token
    confirms nothing: a plan that cannot name what it writes cannot be confirmed.
    """
    # Not a str (a bool from an old caller, None): nothing was typed, so nothing is confirmed.
    return bool(token) and isinstance(typed, str) and typed.strip() == token


def require_confirmed(typed: str | None, token: str, what: str) -> None:
    """Raise SafetyError unless ``typed`` confirms ``token``; ``what`` says what would have run."""
    if not confirms(typed, token):
        raise SafetyError(f"{what}: confirm by naming it (type {token}, or pass --yes); nothing was run")


def mismatch_line(typed: str, token: str) -> str:
    """One line for a confirmation that does not match (nothing was done), in the CLI and the app."""
    shown = clean_line(typed.strip())
    if not shown:
        return f"Nothing typed: type {token} to go ahead."
    shown = cut_end(shown, 40)
    return f'"{shown}" does not match {token}: type it exactly to go ahead.'
