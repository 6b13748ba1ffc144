"""parse_progress_line reads the usual progress line (bar, action, percentage, counts, finish, speed as
md prints them) with one match, and anything else pattern by pattern (issue 17): hypothesis holds the
two equal on generated lines, usual and bent (other spacing, actions, huge or zero figures, more
decimals, extra text), and the edges by hand."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from mdtui.probe.mdstat import _USUAL_PROGRESS_RE, MAX_KIB, _progress_by_patterns, parse_progress_line

USUAL = "      [==>.................]  resync = 10.0% (1563774745/15625747456) finish=1171.8min speed=200000K/sec"

NUMBERS = st.one_of(
    st.integers(0, 10**12).map(str),
    st.sampled_from([str(MAX_KIB), str(MAX_KIB + 1), "9" * 19, "1" * 20, "0", "00", "٤", "", "1_0", "-1"]),
)
MINUTES = st.one_of(
    st.sampled_from(["0.0", "0.1", "1171.8", "999999999999.9", "1000000000000.0", "5", "1.25", ".5", "inf"]),
    st.floats(0, 1e13, allow_nan=False).map(lambda f: f"{f:.1f}"),
)
SPACE = st.sampled_from([" ", "  ", "\t", ""])
ACTIONS = st.sampled_from(["resync", "recovery", "recover", "reshape", "check", "repair", "RESYNC", "sync", "xresync"])


@settings(max_examples=4000, deadline=None)
@given(
    st.tuples(st.sampled_from(["", "  ", "      ", "\t"]), st.text(alphabet="=>.x", max_size=22), SPACE),
    ACTIONS,
    st.tuples(SPACE, SPACE, st.sampled_from(["10.0", "100.0", "1000.0", "5", "0.05"])),
    st.tuples(NUMBERS, NUMBERS, SPACE),
    st.tuples(MINUTES, st.sampled_from(["min", "minutes", "m"]), SPACE),
    st.tuples(NUMBERS, st.sampled_from(["K/sec", "K/s", "M/sec"]), st.sampled_from(["", " ", "  \n", "x", " (tail)"])),
)
def test_usual_line_is_read_as_the_patterns_read_it(head, action, percent, counts, finish, speed) -> None:
    indent, bar, gap = head
    before, after, pct = percent
    done, total, count_gap = counts
    minutes, unit, finish_gap = finish
    kib, speed_unit, tail = speed
    line = (
        f"{indent}[{bar}]{gap}{action}{before}={after}{pct}% ({done}/{total}){count_gap}"
        f"finish={minutes}{unit}{finish_gap}speed={kib}{speed_unit}{tail}"
    )
    assert parse_progress_line(line) == _progress_by_patterns(line)


def test_edges() -> None:
    assert _USUAL_PROGRESS_RE.fullmatch(USUAL) is not None
    lines = [USUAL, USUAL + "  ", USUAL.replace("resync", "recovery"), USUAL.replace("resync", "check")]
    lines += [USUAL.replace("1171.8", "0.0"), USUAL.replace("1171.8", "999999999999.9")]
    lines += [USUAL.replace("(1563774745/", f"({MAX_KIB}/"), USUAL.replace("(1563774745/", f"({MAX_KIB + 1}/")]
    lines += [USUAL.replace("200000K", f"{MAX_KIB}K"), USUAL.replace("200000K", f"{MAX_KIB + 1}K")]
    lines += [USUAL.replace("/15625747456)", f"/{MAX_KIB + 1})"), "      resync=DELAYED", "  recovery = PENDING"]
    for line in lines:
        assert parse_progress_line(line) == _progress_by_patterns(line), line
    assert parse_progress_line(USUAL.replace("1171.8", "0.0")).eta_seconds is None
    assert parse_progress_line(USUAL.replace("200000K", f"{MAX_KIB + 1}K")).speed_bytes_per_s is None
