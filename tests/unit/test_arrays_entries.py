"""read_arrays and ArrayReader parse mdstat entry by entry through one shared cache of the last text's
entries (issue 17: `advise` scans and then samples, and a host of 20,000 arrays parsed its mdstat
twice): hypothesis holds the entries' arrays, first read and cached, to parse_mdstat of the whole text,
on texts built from real entries, damaged lines and odd whitespace."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from mdtui.probe import arrays
from mdtui.probe.arrays import _parse_entries
from mdtui.probe.mdstat import parse_mdstat

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
REAL = [
    (FIXTURES / "trees" / "lab-standard" / "proc" / "mdstat").read_text(),
    (FIXTURES / "trees" / "real-links" / "proc" / "mdstat").read_text(),
    (FIXTURES / "procfs" / "proc" / "mdstat").read_text(),
]
LINES = [
    *sorted({line for text in REAL for line in text.splitlines()}),
    "md9 : active raid1 sda[0] sdb[1](F)",
    "md9 : inactive sdc[0](S)",
    "      [==>.................]  resync = 10.0% (1563774745/15625747456) finish=1171.8min speed=200000K/sec",
    "      resync=DELAYED",
    "md10 : active raid6 " + " ".join(f"sd{c}[{i}]" for i, c in enumerate("abcdefghij")),
    "\t1024 blocks super 1.2 [1/1] [U]",
    "\x0cformfeed detail",
    "\u00a0nbsp detail",
    "junk at column zero",
    "[junk] #at column zero",
    "md : broken header",
    "",
    "   ",
]


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(LINES), max_size=40), st.sampled_from(["\n", "\r\n"]), st.booleans())
def test_entries_read_as_the_whole_text(lines: list[str], newline: str, final: bool) -> None:
    text = newline.join(lines) + (newline if final else "")
    whole = parse_mdstat(text)
    first = [array for _, found in _parse_entries(text) for array in found]
    again = [array for _, found in _parse_entries(text) for array in found]  # every entry from the cache
    assert first == whole and again == whole


def test_the_cache_holds_one_text() -> None:
    _parse_entries(REAL[0])
    _parse_entries(REAL[1])
    assert set(arrays._parsed_entries) == {entry for entry, _ in _parse_entries(REAL[1])}
