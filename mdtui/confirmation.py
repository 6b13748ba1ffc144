"""The typed confirmation every destructive action asks for, in the CLI and the app: what matches, and the line
said when what was typed does not."""

from __future__ import annotations

from mdtui.text import clean_line


def typed_matches(typed: str, token: str) -> bool:
    """Whether ``typed`` confirms: the token exactly, blanks around it ignored."""
    return typed.strip() == token


def mismatch_line(typed: str, token: str) -> str:
    """One line for a confirmation that does not match (nothing was done)."""
    shown = clean_line(typed.strip())
    if not shown:
        return f"Nothing typed: type {token} to go ahead."
    if len(shown) > 40:
        shown = shown[:39] + "…"
    return f'"{shown}" does not match {token}: type it exactly to go ahead.'
