#!/usr/bin/env bash
# Create (or reuse) the project's virtualenv in .venv and install mdtui into it, editable, with every
# dependency at the version requirements.lock pins (the set the suite was last run with).
#   venv.sh          the app
#   venv.sh --test   the app and its test tools
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
cd "$here"
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
extra=""
if [ "${1:-}" = "--test" ]; then extra="[test]"; fi
stamp=".venv/.installed${extra}"
# Reinstall only when pyproject.toml or the lock changed since the last install.
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ requirements.lock -nt "$stamp" ]; then
  .venv/bin/python -m pip install -q --upgrade pip
  # The lock as constraints: it pins what is installed without installing the test tools for the app alone.
  .venv/bin/python -m pip install -q -c requirements.lock -e ".${extra}"
  touch "$stamp"
fi
