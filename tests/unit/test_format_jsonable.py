"""to_jsonable looks each dataclass's attributes up once per type (issue 17: `watch --json` on a host of
20,000 arrays spent more in dataclasses.fields() than in the conversion): held equal to the per-value
walk it replaced on whole inventories, snapshots and odd values."""

from __future__ import annotations

import dataclasses
import enum
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from mdtui.format import to_jsonable
from mdtui.model.array import MdArray
from mdtui.probe.inventory import scan
from mdtui.probe.root import SystemRoot
from mdtui.sample.sampler import Sampler

TREES = Path(__file__).resolve().parents[1] / "fixtures" / "trees"


def reference(value: Any) -> Any:
    """to_jsonable as it was: dataclasses.fields() and __json_extras__ looked up for every value."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {f.name: reference(getattr(value, f.name)) for f in dataclasses.fields(value)}
        for extra in getattr(type(value), "__json_extras__", ()):
            out[extra] = reference(getattr(value, extra))
        return out
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return {name: reference(item) for name, item in zip(value._fields, value, strict=True)}
    if isinstance(value, (list, tuple)):
        return [reference(v) for v in value]
    if isinstance(value, dict):
        return {str(k): reference(v) for k, v in value.items()}
    return value


@pytest.mark.parametrize("tree", sorted(path.name for path in TREES.iterdir() if path.is_dir()))
def test_inventories_and_snapshots_convert_as_before(tree: str) -> None:
    root = SystemRoot(TREES / tree)
    inventory = scan(root)
    assert to_jsonable(inventory) == reference(inventory)
    with Sampler(root) as sampler:
        snapshot = sampler.sample(now=1.0)
    assert to_jsonable(snapshot) == reference(snapshot)


class Colour(enum.Enum):
    RED = "red"


class Level(enum.IntEnum):
    ONE = 1


class Pair(NamedTuple):
    left: Any
    right: Any


@dataclasses.dataclass
class WithExtras:
    value: int
    __json_extras__ = ("double",)

    @property
    def double(self) -> int:
        return self.value * 2


def test_odd_values_convert_as_before() -> None:
    values = [
        None, True, 3, 2.5, "text", Colour.RED, Level.ONE, MdArray, WithExtras, WithExtras(4),
        Pair(Colour.RED, [WithExtras(1), (Level.ONE, {"k": Pair(1, 2)})]), {1: (), Level.ONE: [None]},
        [MdArray(name="md0", state="active", level="raid1")],
    ]  # fmt: skip
    for value in values:
        assert to_jsonable(value) == reference(value), value
