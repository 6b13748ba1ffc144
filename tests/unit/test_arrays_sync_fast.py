"""_sync converts sync_completed's two numbers without parse_int (the pattern already matched ASCII
digits, issue 17): hypothesis holds what it reads to parse_int's reading of the same words, around the
30-digit and MAX_SECTORS edges."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from mdtui.ascii_numbers import parse_int
from mdtui.probe.arrays import MAX_SECTORS, _sync
from mdtui.probe.root import SystemRoot

DIGITS = st.one_of(
    st.integers(0, 10**12).map(str),
    st.sampled_from([str(MAX_SECTORS), str(MAX_SECTORS + 1), "0" * 30, "0" * 31, "1" * 30, "0" * 29 + "7", "9" * 20]),
    st.text(alphabet="0123456789", min_size=1, max_size=35),
)


@settings(max_examples=1500, deadline=None)
@given(DIGITS, DIGITS, st.sampled_from(["/", " / ", "/ ", "  /"]))
def test_sync_completed_reads_as_parse_int(done: str, total: str, slash: str) -> None:
    files = {
        "/md/sync_action": "resync",
        "/md/sync_completed": f"{done}{slash}{total}",
        "/md/sync_speed": "1000",
    }
    sync = _sync(SystemRoot("/nonexistent"), "/md", None, files.get)
    assert sync is not None
    expected_done, expected_total = parse_int(done, hi=MAX_SECTORS), parse_int(total, hi=MAX_SECTORS)
    if expected_done is None or expected_total is None:
        expected_done = expected_total = None
    assert (sync.done_sectors, sync.total_sectors) == (expected_done, expected_total)
