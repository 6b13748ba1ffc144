"""The one shape of mdtui's JSON output: every document a verb prints or exports carries the schema version.

Scripts read `schema_version` first (as OpenZFS scripts read `output_version`): it is bumped when a field
of any document changes meaning or goes away; fields are only ever added within one version.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

SCHEMA_VERSION = 1
SCHEMA_KEY = "schema_version"


def versioned(document: Mapping[str, Any]) -> dict[str, Any]:
    """The document with the schema version as its first key (a document's own key of that name is replaced)."""
    return {SCHEMA_KEY: SCHEMA_VERSION, **{key: value for key, value in document.items() if key != SCHEMA_KEY}}


def dumps(
    document: Mapping[str, Any],
    *,
    compact: bool = False,
    default: Callable[[Any], Any] | None = None,
    ensure_ascii: bool = True,
) -> str:
    """The document as JSON text, versioned; ``compact``: one line without spaces (JSON lines)."""
    if compact:
        return json.dumps(versioned(document), separators=(",", ":"), default=default, ensure_ascii=ensure_ascii)
    return json.dumps(versioned(document), indent=2, default=default, ensure_ascii=ensure_ascii)
