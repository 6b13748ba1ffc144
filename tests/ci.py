"""The one rule for "are we in CI" (and "must the lab run"), shared by every test that asks.

Importable as ``ci`` from any test: tests/ has no ``__init__.py``, so pytest puts it on ``sys.path``
when it loads tests/conftest.py.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

# Values that leave a flag unset, compared after strip() and lower(): CI=false turns CI off.
FALSE_VALUES = ("", "0", "false", "no")
# scripts/test exports this: under the README's test command a lab that cannot boot is a failure.
LAB_REQUIRED_VAR = "MDTUI_LAB_REQUIRED"


def env_flag(name: str, environ: Mapping[str, str] | None = None) -> bool:
    """True when the variable is set to anything but empty, 0, false or no (any case, any spaces)."""
    env = os.environ if environ is None else environ
    return env.get(name, "").strip().lower() not in FALSE_VALUES


def in_ci(environ: Mapping[str, str] | None = None) -> bool:
    """True under CI: the ``CI`` variable is set to anything but empty, 0, false or no."""
    return env_flag("CI", environ)


def lab_required(environ: Mapping[str, str] | None = None) -> str | None:
    """Why a missing lab must fail rather than skip (scripts/test or CI), or None if it may skip."""
    if env_flag(LAB_REQUIRED_VAR, environ):
        return f"{LAB_REQUIRED_VAR} is set (scripts/test sets it)"
    if in_ci(environ):
        return "CI is set"
    return None
