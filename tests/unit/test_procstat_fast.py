"""parse_pid_stat splits no further than the processor field, and parse_int reads plain ASCII digits
without its pattern (issue 17): hypothesis tests hold them to the full split and to the pattern on
generated stat lines and words, regular and damaged (short, long, odd pids and words, Unicode digits,
signs, underscores, spaces and parentheses in comm)."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from mdtui.ascii_numbers import MAX_DIGITS, U64_MAX, parse_int
from mdtui.probe.procstat import MAX_CPUS as STAT_MAX_CPUS
from mdtui.probe.procstat import PID_MAX, PidStat, parse_pid_stat


def reference(text: str) -> PidStat | None:
    """parse_pid_stat as it was: every field split, the pid through parse_int."""
    open_paren = text.find("(")
    close_paren = text.rfind(")")
    if open_paren < 0 or close_paren < open_paren:
        return None
    rest = text[close_paren + 1 :].split()
    if len(rest) < 13:
        return None
    pid = parse_int(text[:open_paren], lo=1, hi=PID_MAX)
    utime, stime = parse_int(rest[11]), parse_int(rest[12])
    processor = parse_int(rest[36], hi=STAT_MAX_CPUS) if len(rest) > 36 else None
    if pid is None or utime is None or stime is None:
        return None
    return PidStat(pid, text[open_paren + 1 : close_paren], rest[0], utime, stime, processor)


WORDS = st.one_of(
    st.integers(0, 10**6).map(str),
    st.sampled_from(["0", "-1", "+5", "1_0", "٤", "x", "18446744073709551616", "4194304", "4194305", ""]),
    # Around the processor field's ceiling (65536) and the 20-digit edge of u64.
    st.sampled_from(["65535", "65536", "65537", "99999", "100000", "9" * 19, "1" * 20, "18446744073709551615"]),
    st.text(max_size=4),
)
PIDS = st.one_of(
    st.integers(-2, PID_MAX + 2).map(str),
    st.sampled_from(["", " 12", "12 ", "0", "٤٢", "+7", "1" * 31, "1" * 30, "\t9\n", " 4000 "]),
    st.text(max_size=5),
)
SPACES = st.sampled_from([" ", "  ", "\t", " \n", ""])


@settings(max_examples=3000, deadline=None)
@given(PIDS, st.text(max_size=12), st.lists(WORDS, max_size=56), SPACES, SPACES)
def test_parse_pid_stat_is_the_full_split(pid: str, comm: str, words: list[str], gap: str, end: str) -> None:
    text = f"{pid}{gap}({comm}) {' '.join(words)}{end}"
    assert parse_pid_stat(text) == reference(text)


@settings(max_examples=500, deadline=None)
@given(st.integers(1, PID_MAX), st.integers(0, 10**9), st.integers(0, 10**9), st.integers(0, 300), st.integers(30, 60))
def test_regular_lines_of_any_length(pid: int, utime: int, stime: int, processor: int, fields: int) -> None:
    words = ["S"] + ["0"] * (fields - 3)
    words[11:13] = [str(utime), str(stime)]
    if len(words) > 36:
        words[36] = str(processor)
    text = f"{pid} (md0_raid6) {' '.join(words)}\n"
    assert parse_pid_stat(text) == reference(text)


def pattern_int(text: str, lo: int, hi: int) -> int | None:
    """parse_int as it was: every word through the pattern."""
    text = text.strip()
    if re.fullmatch(rf"[+-]?[0-9]{{1,{MAX_DIGITS}}}", text, re.ASCII) is None:
        return None
    value = int(text)
    return value if lo <= value <= hi else None


@settings(max_examples=3000, deadline=None)
@given(
    st.one_of(
        WORDS,
        PIDS,
        st.integers(0, 10**40).map(str),
        st.text(alphabet="0123456789+-_ ٤²x", max_size=35),
        st.text(max_size=40),
    ),
    st.sampled_from([(0, U64_MAX), (0, 1 << 16), (1, PID_MAX), (-5, 5)]),
)
def test_parse_int_is_the_pattern(word: str, bounds: tuple[int, int]) -> None:
    assert parse_int(word, lo=bounds[0], hi=bounds[1]) == pattern_int(word, *bounds)


def test_fields_at_their_edges() -> None:
    """The fast path's edges, each held to the reference: processor around 65536, times around 20 digits."""
    edges = ["0", "65535", "65536", "65537", "99999", "100000", "9" * 19, "1" * 20, "18446744073709551615",
             "18446744073709551616", "٤", "+5", "1_0"]  # fmt: skip
    for word in edges:
        for position in (11, 12, 36):
            words = ["S"] + ["0"] * 40
            words[position] = word
            text = f"4000 (md0_raid6) {' '.join(words)}\n"
            assert parse_pid_stat(text) == reference(text), (position, word)
