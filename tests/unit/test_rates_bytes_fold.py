"""device_rates_columns' bytes per second, delta / (interval / 512), equal to device_rates' delta * 512 / interval
to the last bit for any counter delta and interval (issue 17)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from mdtui.probe.diskstats import SECTOR_BYTES
from mdtui.sample.rates import _NORMAL_INTERVAL, _bytes_per_s

DELTAS = st.lists(st.one_of(st.integers(0, 1 << 64), st.integers(0, 1 << 20), st.just(0)), min_size=1, max_size=8)
INTERVALS = st.one_of(
    st.floats(min_value=5e-324, max_value=1e9, allow_nan=False, allow_infinity=False),
    st.floats(min_value=0.05, max_value=10.0),
    st.sampled_from([1.0, 0.1, 0.25, 1.0000000000000002, 0.9999999999999999, 3.0, _NORMAL_INTERVAL, 1e-300]),
)


@settings(max_examples=2000, deadline=None)
@given(DELTAS, INTERVALS)
def test_bytes_per_second_is_the_reference_to_the_last_bit(deltas: list[int], interval: float) -> None:
    per_sector = interval / SECTOR_BYTES if interval >= _NORMAL_INTERVAL else None
    folded = list(_bytes_per_s(deltas, interval, per_sector))
    reference = [delta * SECTOR_BYTES / interval for delta in deltas]
    assert [value.hex() for value in folded] == [value.hex() for value in reference]


def test_a_subnormal_divisor_is_not_used() -> None:
    # Below the bound interval / 512 loses bits; there the figures are computed as the reference does.
    interval = 1e-310
    assert interval < _NORMAL_INTERVAL
    assert list(_bytes_per_s([3, 1 << 60], interval, None)) == [3 * 512 / interval, (1 << 60) * 512 / interval]
