"""Turns core objects (Disk, MdArray, Inventory) into table cells and detail renderables; no widgets here."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.cells import cell_len
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from mdtui.format import duration, ident_text, iec_bytes, plural, rate_mb_s
from mdtui.model.array import ArrayMember, MdArray, SyncStatus
from mdtui.model.disk import Disk
from mdtui.model.link import Link

if TYPE_CHECKING:  # only named in annotations: the first screen's launch need not load smartctl's reader
    from textual.app import App

    from mdtui.probe.smart import SmartHealth

WARNING_SIGN = "⚠"
MISSING = "-"


@dataclass(frozen=True)
class Palette:
    """Rich styles for states, taken from the active Textual theme so every theme colours them."""

    good: str = "green"
    warning: str = "yellow"
    error: str = "red"
    muted: str = "dim"
    label: str = "bold"


# Under NO_COLOR Textual draws every colour as the grey of its brightness: a degraded array's red became the
# dimmest row of the table. There the states keep the text's own colour; their words, signs and bold tell them.
NO_COLOR_PALETTE = Palette(good="", warning="", error="")


def app_db_path(app: App[Any]) -> Path | None:
    """The results database the running app was started with (--db), None for the default one: what every
    screen reads stored runs and member figures from (a test's bare App has none)."""
    path = getattr(app, "db_path", None)
    return Path(path) if path is not None else None


def app_palette(app: App[Any]) -> Palette:
    """The running app's palette: its theme's colours, or none under NO_COLOR (every screen asks here)."""
    return palette_from_variables(app.get_css_variables(), no_color=app.no_color)


def palette_from_variables(variables: Mapping[str, str], *, no_color: bool = False) -> Palette:
    """A Palette from a Textual theme's CSS variables, keeping the defaults for anything not a colour;
    ``no_color`` (the app's NO_COLOR): no colours at all."""

    def pick(name: str, default: str) -> str:
        value = variables.get(name, "")
        return value if value.startswith("#") and len(value) in (4, 7) else default

    if no_color:
        return NO_COLOR_PALETTE
    base = Palette()
    return Palette(
        good=pick("text-success", base.good),
        warning=pick("text-warning", base.warning),
        error=pick("text-error", base.error),
        muted=base.muted,
        label=base.label,
    )


# -- disks -------------------------------------------------------------------------------------

DISK_COLUMNS: tuple[tuple[str, str], ...] = (
    ("name", "Disk"),
    ("transport", "Bus"),
    ("size", "Size"),
    ("kind", "Type"),
    ("link", "Link"),
    ("ident", "Model / serial"),
    ("state", "State"),
)


def disk_state(disk: Disk) -> str:
    """'free', 'unknown', or the first in-use reason's kind (with a count of the others): Disk.state_word."""
    return disk.state_word


def disk_state_cell(disk: Disk, palette: Palette) -> Text:
    text = disk_state(disk)
    if disk.in_use:
        return Text(text, style=palette.warning)
    if disk.problems:
        return Text(text, style=palette.muted)
    return Text(text, style=palette.good)


def link_label(link: Link | None) -> str:
    """Compact current link for a table cell: 'Gen3 x4', '6 Gbps', '12 Gbit x4' (Link.label)."""
    return MISSING if link is None else link.label()


class SortedText(Text):
    """A cell that sorts by a figure rather than by its words (ui.common.table.sort_key); None sorts last."""

    def __init__(self, text: str, *, sort_value: float | None, **kwargs: Any) -> None:
        super().__init__(text, **kwargs)
        self.sort_value = sort_value


def link_cell(link: Link | None, palette: Palette) -> Text:
    """The link as it trained, sorted by the bandwidth it carries: "Gen1 x1" (250 MB/s) sorts before "12 Gbit"
    (1,200 MB/s), which a sort by the words put it after."""
    bandwidth = link.bandwidth_bytes_per_s if link is not None else None
    text = SortedText(link_label(link), sort_value=bandwidth)
    if link is not None and link.downgraded:
        text.append(f" {WARNING_SIGN}", style=palette.warning)
    return text


def disk_ident(disk: Disk) -> str:
    return ident_text(disk.model, disk.serial)


def truncate(text: str, width: int) -> str:
    """Cut text to ``width`` terminal cells, marking the cut with an ellipsis."""
    if width <= 0:
        return ""
    if cell_len(text) <= width:
        return text
    out = ""
    for char in text:
        if cell_len(out + char) > width - 1:
            break
        out += char
    return out + "…"


def disk_cells(disk: Disk, palette: Palette, ident_width: int | None = None) -> tuple[Text, ...]:
    ident = disk_ident(disk)
    if ident_width is not None:
        ident = truncate(ident, ident_width)
    return (
        Text(disk.name, style=palette.label),
        Text(disk.transport.value),
        Text(iec_bytes(disk.size_bytes) if disk.size_bytes is not None else "?", justify="right"),
        Text(disk.kind_label),
        link_cell(disk.link, palette),
        Text(ident),
        disk_state_cell(disk, palette),
    )


def _grid() -> Table:
    grid = Table.grid(padding=(0, 2, 0, 0))
    grid.add_column(no_wrap=True)
    grid.add_column(overflow="fold")
    return grid


def _row(grid: Table, label: str, value: str | Text, palette: Palette) -> None:
    grid.add_row(Text(label, style=palette.muted), value if isinstance(value, Text) else Text(value))


def _sector_sizes(disk: Disk) -> str:
    logical, physical = disk.logical_sector_bytes, disk.physical_sector_bytes
    if logical is None and physical is None:
        return "unknown"
    return f"{logical or '?'} B logical, {physical or '?'} B physical"


def _link_line(link: Link, current: bool) -> str:
    text = link.describe_current() if current else link.describe_max()
    bandwidth = link.bandwidth_bytes_per_s if current else link.max_bandwidth_bytes_per_s
    if bandwidth is not None:
        text += f" = {rate_mb_s(bandwidth)}"
    return text


SMART_PENDING = "reading SMART (smartctl -j -a)…"


def smart_text(health: SmartHealth, palette: Palette) -> Text:
    """One line of a disk's SMART health: the verdict and what an admin weighs, problems first in warning colour."""
    if health.error and health.passed is None and health.temperature_c is None:
        return Text(f"not available: {health.error}", style=palette.muted)
    problems = health.problems
    verdict = {True: "PASSED", False: "FAILED", None: "no verdict"}[health.passed]
    parts = [verdict]
    if health.temperature_c is not None:
        parts.append(f"{health.temperature_c} °C")
    if health.power_on_hours is not None:
        parts.append(f"{health.power_on_hours:,} h on")
    if health.media_errors is not None:
        parts.append(f"media errors {health.media_errors:,}")
    if health.crc_errors is not None:
        parts.append(f"CRC errors {health.crc_errors:,}")
    if health.percentage_used is not None:
        parts.append(f"{health.percentage_used}% of its endurance used")
    text = Text(" · ".join(parts), style=palette.warning if problems else palette.good)
    for problem in problems:
        text.append(f"\n{WARNING_SIGN} {problem}", style=palette.warning)
    return text


def disk_detail(
    disk: Disk, palette: Palette, health: SmartHealth | None = None, *, health_pending: bool = False
) -> RenderableType:
    """Every field of a disk, what decides its state first: in-use reasons, problems, the link; then SMART
    health when it was read (live, as root: the inventory reads it for the disk shown)."""
    title = Text.assemble((disk.name, palette.label), "  ", disk.dev_path, "  ", disk_state_cell(disk, palette))
    grid = _grid()
    if disk.in_use:
        for index, reason in enumerate(disk.in_use):
            _row(grid, "In use" if index == 0 else "", Text(str(reason), style=palette.warning), palette)
    elif disk.problems:
        _row(grid, "In use", Text("unknown: see problems; not offered for new arrays", style=palette.muted), palette)
    else:
        _row(grid, "In use", Text("no: free to use in a new array", style=palette.good), palette)
    for index, problem in enumerate(disk.problems):
        _row(grid, "Problems" if index == 0 else "", Text(problem, style=palette.muted), palette)
    if disk.link is None:
        _row(grid, "Link", "not reported (no PCIe, SATA or SAS link in sysfs)", palette)
    else:
        link = disk.link
        current = Text(_link_line(link, current=True))
        if link.downgraded:
            current.append(f"  {WARNING_SIGN} downgraded", style=palette.warning)
        _row(grid, "Link now", current, palette)
        _row(grid, "Link max", _link_line(link, current=False), palette)
        finding = link.finding()
        if finding:
            _row(grid, "Finding", Text(f"{WARNING_SIGN} {finding}", style=palette.warning), palette)
        elif link.slot_limited:
            _row(grid, "Slot", Text("the slot cannot run this device's maximum link", style=palette.warning), palette)
    if health is not None:
        _row(grid, "Health", smart_text(health, palette), palette)
    elif health_pending:
        _row(grid, "Health", Text(SMART_PENDING, style=palette.muted), palette)
    _row(grid, "Bus", disk.transport.value, palette)
    size = iec_bytes(disk.size_bytes) + (f" ({disk.size_bytes:,} bytes)" if disk.size_bytes else "")
    _row(grid, "Size", size, palette)
    rotational = {None: "unknown", True: "HDD (rotational)", False: "SSD (non-rotational)"}[disk.rotational]
    _row(grid, "Type", rotational, palette)
    _row(grid, "Model", disk.model or "unknown", palette)
    _row(grid, "Serial", disk.serial or "unknown", palette)
    _row(grid, "WWN", disk.wwn or "unknown", palette)
    _row(grid, "By-id", disk.by_id_path or "none", palette)
    _row(grid, "Sectors", _sector_sizes(disk), palette)
    _row(grid, "Driver", disk.driver or "unknown", palette)
    if disk.major_minor:
        _row(grid, "Dev", disk.major_minor, palette)
    _row(grid, "Partitions", ", ".join(disk.partitions) or "none", palette)
    return Group(title, grid)


# -- arrays ------------------------------------------------------------------------------------

ARRAY_COLUMNS: tuple[tuple[str, str], ...] = (
    ("name", "Array"),
    ("level", "Level"),
    ("state", "State"),
    ("size", "Size"),
    ("members", "Members"),
    ("sync", "Sync"),
    ("chunk", "Chunk"),
    ("layout", "Layout"),
)


AT_RISK_SIGN = "✗"


def array_state_text(array: MdArray, palette: Palette) -> Text:
    """The array's state as the inventory shows it: a degraded one marked ✗ and bold as well as red.

    In red alone it read as the dimmest row under NO_COLOR (a grey darker than a healthy array's): a state
    is told by its words and sign, never by colour or dimness alone."""
    if array.degraded:
        return Text(f"{AT_RISK_SIGN} {array.state_text}", style=f"bold {palette.error}")
    return Text(array.state_text, style=palette.muted if array.state == "inactive" else "")


def members_summary(array: MdArray) -> str:
    """'3/4' (in-sync of raid disks) plus spare and faulty counts."""
    active = sum(1 for m in array.members if not m.spare and not m.faulty)
    spares = sum(1 for m in array.members if m.spare)
    faulty = sum(1 for m in array.members if m.faulty)
    text = f"{active}/{array.raid_disks}" if array.raid_disks else str(active)
    if spares:
        text += f" +{spares}S"
    if faulty:
        text += f" {faulty}F"
    return text


def members_detail(array: MdArray) -> str:
    """'3 in sync of 4 raid disks, 1 spare, 1 faulty' for the detail pane."""
    active = sum(1 for m in array.members if not m.spare and not m.faulty)
    text = f"{active} active" + (f" of {plural(array.raid_disks, 'raid disk')}" if array.raid_disks else "")
    spares = sum(1 for m in array.members if m.spare)
    faulty = sum(1 for m in array.members if m.faulty)
    if spares:
        text += f", {spares} spare"
    if faulty:
        text += f", {faulty} faulty"
    return text


def sync_summary(sync: SyncStatus | None) -> str:
    if sync is None:
        return MISSING
    if sync.state != "running":
        return f"{sync.action} {sync.state}"
    if sync.fraction is not None:
        return f"{sync.action} {sync.fraction * 100:.1f}%"
    return sync.action


def array_cells(array: MdArray, palette: Palette) -> tuple[Text, ...]:
    sync_style = palette.warning if array.sync is not None else palette.muted
    return (
        Text(array.name, style=palette.label),
        Text(array.level or MISSING),
        array_state_text(array, palette),
        Text(iec_bytes(array.size_bytes) if array.size_bytes is not None else "?", justify="right"),
        Text(members_summary(array)),
        Text(sync_summary(array.sync), style=sync_style),
        Text(iec_bytes(array.chunk_bytes) if array.chunk_bytes else MISSING, justify="right"),
        Text(array.layout or MISSING),
    )


def member_role(member: ArrayMember) -> str:
    if member.faulty:
        return "faulty"
    if member.spare:
        return "spare"
    if member.slot is not None:
        return f"slot {member.slot}"
    return "member"


def _members_table(members: Iterable[ArrayMember], palette: Palette) -> Table:
    table = Table(box=None, padding=(0, 2, 0, 0), show_edge=False, header_style=palette.muted)
    table.add_column("Role", no_wrap=True)
    table.add_column("Device", no_wrap=True)
    table.add_column("States", overflow="fold")
    ordered = sorted(members, key=lambda m: (m.slot is None, m.slot if m.slot is not None else 0, m.name))
    for member in ordered:
        style = f"bold {palette.error}" if member.faulty else (palette.muted if member.spare else "")
        table.add_row(
            Text(member_role(member), style=style),
            Text(member.name, style=palette.label),
            Text(", ".join(member.states) or "unknown", style=style),
        )
    return table


def sync_detail(sync: SyncStatus) -> str:
    parts = [f"{sync.action} {sync.state}"]
    if sync.fraction is not None:
        parts.append(f"{sync.fraction * 100:.1f}% ({sync.done_sectors:,} of {sync.total_sectors:,} sectors)")
    if sync.speed_bytes_per_s is not None:
        parts.append(rate_mb_s(sync.speed_bytes_per_s))
    if sync.eta_seconds is not None:
        parts.append(f"ETA {duration(sync.eta_seconds)}")
    return ", ".join(parts)


def array_detail(array: MdArray, palette: Palette, keep: Sequence[tuple[str, str, bool]] = ()) -> RenderableType:
    """An array's health first (degraded, sync with speed and ETA), then members and geometry; ``keep`` adds
    (label, text, problem) rows about reboot, monitoring and checks (mdtui.keep.summary)."""
    title = Text.assemble(
        (array.name, palette.label),
        "  ",
        array.dev_path,
        "  ",
        array.level or "no level",
        "  ",
        array_state_text(array, palette),
    )
    grid = _grid()
    if array.degraded:
        missing = f"{AT_RISK_SIGN} {plural(array.degraded, 'member')} missing"
        _row(grid, "Degraded", Text(missing, style=f"bold {palette.error}"), palette)
    if array.sync is not None:
        _row(grid, "Sync", Text(sync_detail(array.sync), style=palette.warning), palette)
    else:
        _row(grid, "Sync", "idle", palette)
    for label, text, problem in keep:
        _row(grid, label, Text(("⚠ " if problem else "") + text, style=palette.warning if problem else ""), palette)
    _row(grid, "Members", members_detail(array), palette)
    size = iec_bytes(array.size_bytes) + (f" ({array.size_bytes:,} bytes)" if array.size_bytes else "")
    _row(grid, "Size", size, palette)
    _row(grid, "Chunk", iec_bytes(array.chunk_bytes) if array.chunk_bytes else MISSING, palette)
    _row(grid, "Layout", array.layout or MISSING, palette)
    _row(grid, "Metadata", array.metadata or "unknown", palette)
    _row(grid, "Bitmap", array.bitmap or "unknown", palette)
    if array.uuid:
        _row(grid, "UUID", array.uuid, palette)
    parts: list[RenderableType] = [title, grid]
    if array.members:
        parts += [Text(""), _members_table(array.members, palette)]
    return Group(*parts)
