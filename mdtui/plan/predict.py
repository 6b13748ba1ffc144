"""Predicting an array's large-block throughput from its members' measured or link speeds."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from mdtui.model.disk import Disk
from mdtui.plan.levels import LINEAR, RaidLevel
from mdtui.plan.request import (
    SLOW_MEMBER_RATIO,
    factor_text,
    mbps,
)


@dataclass(frozen=True)
class ThroughputPrediction:
    """Large-block throughput expected from the slowest member's speed × how many members serve it.

    Figures assume enough parallel I/O to keep every member busy: finding 1 (docs/findings.md) needed 16 jobs
    (4989 MB/s) to 64 jobs (5872 MB/s) to saturate an md device. None means a member's speed is unknown.
    """

    slowest_members: tuple[str, ...] = ()
    slowest_member_bytes_per_s: int | None = None
    basis: str = "unknown"  # "measured", "link", "measured and link" or "unknown"
    read_factor: float = 0.0
    write_factor: float = 0.0
    seq_read_bytes_per_s: int | None = None
    seq_write_bytes_per_s: int | None = None  # an upper bound for parity levels (full stripes)
    notes: tuple[str, ...] = ()


def _member_speeds(members: Sequence[Disk], measured: Mapping[str, int]) -> list[tuple[Disk, int | None, str]]:
    speeds: list[tuple[Disk, int | None, str]] = []
    for disk in members:
        if disk.dev_path in measured:
            speeds.append((disk, measured[disk.dev_path], "measured"))
        elif disk.link is not None and disk.link.bandwidth_bytes_per_s is not None:
            speeds.append((disk, disk.link.bandwidth_bytes_per_s, "link"))
        else:
            speeds.append((disk, None, "unknown"))
    return speeds


def predict(
    members: Sequence[Disk], level: RaidLevel, layout: str | None, measured: Mapping[str, int]
) -> ThroughputPrediction:
    n = len(members)
    read_factor = level.seq_read_factor(n, layout)
    write_factor = level.seq_write_factor(n, layout)
    speeds = _member_speeds(members, measured)
    unknown = [disk.name for disk, speed, _ in speeds if speed is None]
    if unknown:
        return ThroughputPrediction(
            read_factor=float(read_factor),
            write_factor=float(write_factor),
            notes=(
                f"no throughput prediction: the speed of {', '.join(unknown)} is unknown "
                "(no measurement and no link speed); measure each member alone first",
            ),
        )
    known = [(disk, speed, basis) for disk, speed, basis in speeds if speed is not None]
    slowest = min(speed for _, speed, _ in known)
    slow_names = tuple(disk.name for disk, speed, _ in known if speed == slowest)
    bases = {basis for _, _, basis in known}
    basis = "measured and link" if len(bases) > 1 else bases.pop()

    notes = [
        f"read: slowest member × {factor_text(read_factor)} = {mbps(slowest)} × {factor_text(read_factor)} "
        f"= {mbps(int(slowest * read_factor))}; write: × {factor_text(write_factor)} = "
        f"{mbps(int(slowest * write_factor))} (docs/findings.md, finding 1: a stripe runs at slowest member × N, "
        "832 MB/s × 4 = 3,328 MB/s predicted, 3,322 MB/s measured)"
    ]
    notes += _level_notes(level, n, layout, slowest)
    if basis != "measured":
        notes.append(
            "link bandwidth is only an upper bound the drives may not reach; measure each member "
            "alone (the weakest-link run) for a real prediction"
        )
    notes.append(
        "md needs more parallel I/O than one disk to reach this (docs/findings.md, finding 1: 4989 MB/s with 16 "
        "jobs, 5872 MB/s with 64)"
    )
    return ThroughputPrediction(
        slowest_members=slow_names,
        slowest_member_bytes_per_s=slowest,
        basis=basis,
        read_factor=float(read_factor),
        write_factor=float(write_factor),
        seq_read_bytes_per_s=int(slowest * read_factor),
        seq_write_bytes_per_s=int(slowest * write_factor),
        notes=tuple(notes),
    )


def _level_notes(level: RaidLevel, members: int, layout: str | None, slowest: int) -> list[str]:
    if level.name == "raid1":
        return [
            f"raid1 read × {members} needs parallel readers: one sequential stream reads one member "
            f"({mbps(slowest)}); every write goes to all members"
        ]
    if level.name == "raid10":
        return [
            f"raid10 read × {members} needs parallel readers (f2 spreads even one stream; n2 and o2 "
            f"do not); writes go to {level.copies(members, layout)} members each"
        ]
    if level is LINEAR:
        return ["linear reads and writes one member at a time: a stream never spans members"]
    if level.parity:
        return [
            "parity write is an upper bound for full-stripe writes; partial-stripe writes read before "
            "they write and parity costs CPU (docs/findings.md, finding 3: raid6 ~400 MB/s of 64k writes; finding 4: "
            "RAID5 wrote 985 MB/s where one disk wrote 1,123 MB/s)"
        ]
    return []


def speed_warnings(
    members: Sequence[Disk], level: RaidLevel, layout: str | None, measured: Mapping[str, int]
) -> list[str]:
    warnings: list[str] = []
    for disk in members:
        finding = disk.link.finding() if disk.link is not None else None
        if finding:
            warnings.append(f"{disk.name}: {finding}")
    speeds = _member_speeds(members, measured)
    if any(speed is None for _, speed, _ in speeds) or len(speeds) < 2:
        return warnings
    slowest = min(speed for _, speed, _ in speeds if speed is not None)
    faster = [speed for _, speed, _ in speeds if speed is not None and speed > slowest]
    if not faster or slowest >= SLOW_MEMBER_RATIO * min(faster):
        return warnings
    next_speed = min(faster)
    slow = [(disk, basis) for disk, speed, basis in speeds if speed == slowest]
    described = ", ".join(_describe_speed(disk, basis, slowest) for disk, basis in slow)
    verb = "limits" if len(slow) == 1 else "limit"
    factor = level.seq_read_factor(len(members), layout)
    f = factor_text(factor)
    warnings.append(
        f"{described} {verb} the array to {f} × {mbps(slowest)} = {mbps(int(slowest * factor))}; "
        f"the others would allow {f} × {mbps(next_speed)} = {mbps(int(next_speed * factor))} "
        "(docs/findings.md, finding 1: a stripe runs at slowest member × N)"
    )
    return warnings


def _describe_speed(disk: Disk, basis: str, speed: int) -> str:
    if basis == "link" and disk.link is not None:
        return f"{disk.name} at {disk.link.describe_current()} ({mbps(speed)})"
    return f"{disk.name} measured at {mbps(speed)}"


__all__ = ["ThroughputPrediction", "predict", "speed_warnings"]
