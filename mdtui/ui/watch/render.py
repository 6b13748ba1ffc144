"""Turns the dashboard's core views (TargetView, CpuState) into rich renderables; no widgets here."""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text

from mdtui.format import duration, plural
from mdtui.model.array import MdArray
from mdtui.model.snapshot import CpuState, DeviceRates, MdThreadCpu
from mdtui.sample.dashboard import TargetView
from mdtui.sample.members import MemberLoad, MemberPage, MemberSort, member_page
from mdtui.sample.series import ALL_DISKS
from mdtui.ui.common.render import MISSING, WARNING_SIGN, Palette, array_state_text

NO_CPUFREQ = "CPU frequency: not available (no cpufreq in this kernel/VM)"
# Finding 2 (docs/findings.md): md RAID10 lost 14-20% under the powersave governor against performance.
POWERSAVE_NOTE = "powersave can cost md 15-20% (docs/findings.md, finding 2)"
BAR_CELLS = 10


def mb_s(value: float | None) -> str:
    """Decimal MB/s as fio prints it; one decimal below 100 so a trickle is not shown as 0."""
    if value is None:
        return MISSING
    mb = value / 1e6
    return f"{mb:,.1f}" if mb < 99.95 else f"{mb:,.0f}"


def per_s(value: float | None) -> str:
    return MISSING if value is None else f"{value:,.0f}"


def percent(value: float | None) -> str:
    return MISSING if value is None else f"{value:.0f}%"


def ms(value: float | None) -> str:
    return MISSING if value is None else f"{value:.1f}"


def bar(value: float | None, cells: int = BAR_CELLS) -> str:
    """A utilisation bar in eighths of a cell: 0-100 % over `cells` cells."""
    if value is None:
        return " " * cells
    eighths = round(max(0.0, min(100.0, value)) / 100 * cells * 8)
    full, part = divmod(eighths, 8)
    return ("█" * full + (" ▏▎▍▌▋▊▉"[part] if part else "")).ljust(cells)


def ghz(mhz: float | None) -> str:
    return MISSING if mhz is None else f"{mhz / 1000:.2f}"


# mdstat's action words as a user reads them ("recover" is what md calls a rebuild onto a new member).
SYNC_NAMES = {"recover": "recovery"}
SYNC_BAR_CELLS = 24


def progress_bar(fraction: float, cells: int) -> str:
    """A bar in characters, the done part solid and the rest a visible track, so it reads without colour."""
    eighths = round(max(0.0, min(1.0, fraction)) * cells * 8)
    full, part = divmod(eighths, 8)
    done = "█" * full + (" ▏▎▍▌▋▊▉"[part] if part else "")
    return done + "░" * (cells - len(done))


def sync_text(array: MdArray, cells: int = SYNC_BAR_CELLS) -> str | None:
    """A resync, recovery, check or reshape as a bar with percent, speed and ETA (what is known of them)."""
    sync = array.sync
    if sync is None:
        return None
    action = SYNC_NAMES.get(sync.action, sync.action)
    parts = [action if sync.state == "running" else f"{action} {sync.state}"]
    if sync.fraction is not None:
        parts.append(f"▕{progress_bar(sync.fraction, cells)}▏ {sync.fraction * 100:.1f}%")
    if sync.speed_bytes_per_s is not None:
        parts.append(f"{mb_s(sync.speed_bytes_per_s)} MB/s")
    if sync.eta_seconds is not None:
        parts.append(f"ETA {duration(sync.eta_seconds)}")
    return " · ".join(parts)


def with_io(view: TargetView) -> int:
    """Devices that read or wrote in the last interval: an idle host counts 0, whatever it did before."""
    count = 0
    for member in view.members:
        rates = member.rates
        if rates is None:
            continue
        moved = (rates.read_bytes_per_s or 0) + (rates.write_bytes_per_s or 0)
        requests = (rates.read_iops or 0) + (rates.write_iops or 0)
        count += moved > 0 or requests > 0
    return count


def _rates_text(label: str, byte_rate: float | None, iops: float | None) -> str:
    return f"{label} {mb_s(byte_rate)} MB/s {per_s(iops)} IOPS"


def summary(view: TargetView, palette: Palette, paused: bool = False, forecast: str | None = None) -> Text:
    """One line on top: what is watched, its state and its traffic right now."""
    text = Text()
    total = view.total
    if view.array is not None:
        array = view.array
        active = sum(1 for m in view.members if m.role not in ("spare", "faulty"))
        text.append(f"{array.name} ", style=palette.label)
        text.append(f"{array.level or '-'} · {active} members · ")
        text.append_text(array_state_text(array, palette))  # a degraded array marked ✗ and bold, as everywhere
    else:
        text.append("all disks", style=palette.label)
        text.append(f" · {with_io(view)} with I/O")
    text.append("  ")
    text.append(_rates_text("read", total.read_bytes_per_s if total else None, total.read_iops if total else None))
    text.append(" · ")
    text.append(_rates_text("write", total.write_bytes_per_s if total else None, total.write_iops if total else None))
    if paused:
        text.append("  ⏸ paused", style=palette.warning)
    # The sync on a line of its own, so its bar is never cut off by the traffic figures.
    if view.array is not None and (sync := sync_text(view.array)) is not None:
        text.append(f"\n{WARNING_SIGN} {sync}", style=palette.warning)
        if forecast:  # the prediction beside md's own figures, and what holds the sync now
            text.append(f"\n  {forecast}")
    return text


MEMBER_COLUMNS_WIDE = ("Member", "Role", "Read MB/s", "Write MB/s", "r/s", "w/s", "Busy", "", "Queue", "r ms", "w ms")
MEMBER_COLUMNS_NARROW = ("Member", "Read MB/s", "Write MB/s", "r/s", "w/s", "Busy", "", "Queue")


def _member_cells(member: MemberLoad, wide: bool) -> list[str]:
    # A member without a diskstats line (just removed, or not yet seen) shows dashes, never zeros.
    rates = member.rates if member.rates is not None else DeviceRates(member.name)
    cells = [
        member.name,
        mb_s(rates.read_bytes_per_s),
        mb_s(rates.write_bytes_per_s),
        per_s(rates.read_iops),
        per_s(rates.write_iops),
        percent(rates.utilisation_percent),
        bar(rates.utilisation_percent, BAR_CELLS if wide else 6),
        MISSING if rates.average_queue is None else f"{rates.average_queue:.1f}",
    ]
    if wide:
        cells.insert(1, member.role)
        cells += [ms(rates.read_await_ms), ms(rates.write_await_ms)]
    return cells


def _ratio(members: float | None, array: float | None) -> str | None:
    if members is None or not array or array < 1e5:  # below 0.1 MB/s the ratio is noise
        return None
    return f"{members / array:.2f}×"


def traffic_check(view: TargetView) -> str | None:
    """The members' traffic against the array's, next to what a clean array of this level implies."""
    if view.array is None or view.total is None:
        return None
    parts = []
    for label, members, array, expected in (
        ("read", view.member_read_bytes_per_s, view.total.read_bytes_per_s, view.expected_read_factor),
        ("write", view.member_write_bytes_per_s, view.total.write_bytes_per_s, view.expected_write_factor),
    ):
        ratio = _ratio(members, array)
        if ratio is None:
            continue
        hint = f" ({view.array.level}: {expected:.2f}×)" if expected is not None else ""
        parts.append(f"{label} {ratio}{hint}")
    return "members/array " + ", ".join(parts) if parts else None


def _aligned(rows: list[tuple[list[str], str]], left_columns: int) -> Text:
    """Rows of cells as aligned text lines, one style per row; the first left_columns are left-aligned.

    A plain Text costs a fraction of a rich Table to lay out and draw, and this redraws every tick.
    """
    widths = [max(cell_len(cells[i]) if i < len(cells) else 0 for cells, _ in rows) for i in range(len(rows[0][0]))]
    text = Text(no_wrap=True, overflow="ellipsis")
    for number, (cells, style) in enumerate(rows):
        parts = []
        for index, cell in enumerate(cells):
            pad = " " * (widths[index] - cell_len(cell))
            parts.append(cell + pad if index < left_columns or not cell.strip(" ▏▎▍▌▋▊▉█") else pad + cell)
        text.append(("\n" if number else "") + "  ".join(parts).rstrip(), style=style or None)
    return text


def members_table(view: TargetView, palette: Palette, wide: bool, page: MemberPage | None = None) -> Text:
    """Each member's load; one that stands out from its peers is drawn in the warning colour with ⚠.

    page: the rows a pane of limited height shows (sample.members.member_page: standouts pinned on top,
    then a window of the others in the chosen order); None shows every member, busiest first. Only the
    rows shown are laid out, so each tick of a host with hundreds of disks lays out a screenful.
    """
    if not view.members:
        return Text("No block device has done any I/O yet." if view.name == ALL_DISKS else "No members.")
    if page is None:
        page = member_page(view.members, MemberSort.BUSY, False, 0, None)
    header = list(MEMBER_COLUMNS_WIDE if wide else MEMBER_COLUMNS_NARROW)
    header[0] = "Member" if view.array is not None else "Disk"
    rows: list[tuple[list[str], str]] = [(header, palette.muted)]
    for member in (*page.pinned, *page.rows):
        cells = _member_cells(member, wide)
        if member.standout:
            style = f"bold {palette.warning}"
            cells[0] = f"{WARNING_SIGN} {member.name}"
        elif member.role in ("spare", "faulty"):
            style = palette.error if member.role == "faulty" else palette.muted
        else:
            style = ""
        rows.append((cells, style))
    # Narrow terminals leave the sum to the pane's title (members/array ratio) to keep the chart tall.
    if wide and view.array is not None and len(view.members) > 1:
        total = ["Σ members", "", mb_s(view.member_read_bytes_per_s), mb_s(view.member_write_bytes_per_s)]
        rows.append((total + [""] * (len(header) - len(total)), palette.muted))
    text = _aligned(rows, 2 if wide else 1)
    if page.hidden:
        # No room for the standouts' reasons either; their rows carry the ⚠ (and the summary counts them).
        text.append("\n" + scroll_line(page), style=palette.muted)
        return text
    for member in page.pinned:
        text.append(f"\n{WARNING_SIGN} {member.name}: {member.standout}", style=palette.warning)
    return text


def scroll_line(page: MemberPage) -> str:
    """Where the window is among the members that do not stand out, and the keys that move it."""
    below = page.others - page.offset - len(page.rows)
    where = [f"{below} more below" if below else "", f"{page.offset} above" if page.offset else ""]
    return "… " + ", ".join(part for part in where if part) + " · ↑↓ PgDn scroll · s sort"


def members_title(view: TargetView, by: MemberSort, reverse: bool, page: MemberPage | None) -> str:
    """The pane's title: what it lists, which rows of how many, the order, and the members/array check."""
    title = "Members" if view.array is not None else "Disks"
    if page is not None and (page.hidden or page.offset):
        first = page.offset + 1
        title += f" {first}-{page.offset + len(page.rows)} of {page.others}"
        if page.pinned:
            title += f" + {len(page.pinned)} {WARNING_SIGN}"
    title += f" · {by.words}" + (", reversed" if reverse else "")
    check = traffic_check(view)
    return title + (f" · {check}" if check else "")


def governor_line(cpu: CpuState, palette: Palette, explain: bool = True) -> Text:
    """Governor, driver, pstate mode and EPP; powersave flagged (finding 2, docs/findings.md), with why when explain."""
    if not cpu.cpufreq_available:
        return Text(NO_CPUFREQ, style=palette.muted)
    text = Text("Governor ")
    governors = cpu.governors
    text.append(", ".join(governors) or "unknown", style=palette.label)
    details = [cpu.driver] if cpu.driver and cpu.driver != cpu.pstate_driver else []
    if cpu.pstate_driver:
        details.append(f"{cpu.pstate_driver} {cpu.pstate_status}")
    epps = sorted({core.epp for core in cpu.cores if core.epp})
    if epps:
        details.append("EPP " + ", ".join(epps))
    if details:
        text.append(" · " + " · ".join(details))
    if "powersave" in governors:
        text.append(f"  {WARNING_SIGN} " + (POWERSAVE_NOTE if explain else "powersave"), style=palette.warning)
    return text


def frequency_line(cpu: CpuState, max_cores: int = 8) -> Text | None:
    """Current GHz per core (or min/mean/max past max_cores) against the hardware's maximum."""
    known = [core for core in cpu.cores if core.freq_mhz is not None]
    if not cpu.cpufreq_available or not known:
        return None
    tops = {core.max_freq_mhz for core in known if core.max_freq_mhz}
    top = f" (max {ghz(max(tops))})" if tops else ""
    if len(known) <= max_cores:
        cores = " ".join(f"cpu{core.cpu} {ghz(core.freq_mhz)}" for core in known)
        return Text(f"GHz {cores}{top}")
    values = [core.freq_mhz for core in known if core.freq_mhz is not None]
    return Text(f"GHz min {ghz(min(values))} mean {ghz(sum(values) / len(values))} max {ghz(max(values))}{top}")


def threads_line(threads: tuple[MdThreadCpu, ...], view: TargetView, palette: Palette) -> Text:
    if not threads:
        if view.array is not None and view.array.level in ("raid0", "linear"):
            return Text(f"md threads: none ({view.array.level} has no kernel thread)", style=palette.muted)
        return Text("md threads: none", style=palette.muted)
    text = Text("md threads: ")
    _append_threads(text, threads, palette)
    return text


def _append_threads(text: Text, threads: tuple[MdThreadCpu, ...], palette: Palette) -> None:
    for index, thread in enumerate(threads):
        if index:
            text.append(" · ")
        text.append(thread.name, style=palette.label)
        text.append(f" {percent(thread.cpu_percent)}")


def cpu_panel(cpu: CpuState, view: TargetView, palette: Palette, with_frequencies: bool, wide: bool = True) -> Text:
    """Total CPU and iowait, governor and pstate, md kernel threads; GHz per core when no chart shows them.

    Narrow terminals get it in fewer lines: md threads join the load line, and only when there are any.
    """
    load = Text("CPU ")
    load.append(percent(cpu.total_busy_percent), style=palette.label)
    load.append(" busy · iowait ")
    load.append(percent(cpu.iowait_percent), style=palette.label)
    load.append(f" · {plural(len(cpu.cores), 'core')}")
    if not wide and view.threads:
        load.append(" · ")
        _append_threads(load, view.threads, palette)
    lines = [load, governor_line(cpu, palette, explain=wide)]
    if with_frequencies and (frequencies := frequency_line(cpu)) is not None:
        lines.append(frequencies)
    if wide:
        lines.append(threads_line(view.threads, view, palette))
    return Text("\n").join(lines)
