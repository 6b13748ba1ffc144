"""Snapshots as plain JSON objects, one per line for `mdtui watch --json`."""

from __future__ import annotations

from typing import Any

from mdtui.format import to_jsonable
from mdtui.model.snapshot import Snapshot


def _rounded(value: Any) -> Any:
    # Three decimals keep lines short; no rate here is meaningful beyond a thousandth.
    if isinstance(value, float):
        return round(value, 3)
    if isinstance(value, dict):
        return {key: _rounded(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_rounded(item) for item in value]
    return value


def to_json(snapshot: Snapshot) -> dict[str, Any]:
    """A JSON-ready dict; devices are keyed by name so `jq .devices.sda` works. Unknown rates are null."""
    cpu = to_jsonable(snapshot.cpu)
    cpu["governors"] = list(snapshot.cpu.governors)
    return _rounded(
        {
            "timestamp": snapshot.timestamp,
            "interval": snapshot.interval,
            "devices": {
                device.name: {key: value for key, value in to_jsonable(device).items() if key != "name"}
                for device in snapshot.devices
            },
            "cpu": cpu,
            "arrays": to_jsonable(snapshot.arrays),
            "md_threads": to_jsonable(snapshot.md_threads),
        }
    )
