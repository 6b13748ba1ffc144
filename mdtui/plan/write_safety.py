"""Write safety chosen knowingly: the write-intent bitmap and the consistency policy, what each protects and
costs, whether md and mdadm accept it, and the mdadm options that set it (at create, and on a live array).

The choices (mdadm(8), md(4), the kernel's raid5-ppl.c and raid5-cache.c):

- bitmap **none**: nothing extra is written; after a crash or an unclean stop the whole array resyncs, and a
  member that drops out and comes back is rebuilt whole.
- bitmap **internal**: one bit a chunk, beside the superblock on every member; a bit is set (and written, with
  a cache flush and FUA, before the data) when its chunk is first written after being clean, so a resync or a
  re-added member covers only the dirty chunks. A small chunk makes more writes find a clean bit.
- bitmap **file**: the same bitmap in a file outside the array (mdadm writes it; the file must not be on the
  array or its members). The kernel marks bitmap files deprecated; a kernel built without them refuses one.
- bitmap **lockless** (kernel 6.18): the same protection with a lock-free write path; a new array skips the
  initial sync.
- policy **resync** (md's default): nothing but the bitmap; a raid5/6 that crashes mid-write may hold a stripe
  whose parity no longer matches (the write hole) until it is resynced, and a member failing before then
  rebuilds wrong data there.
- policy **ppl** (raid5 only, no bitmap): the partial parity of every stripe write is logged on its parity
  member first; after a crash md recovers those stripes from the log: no write hole, no full resync.
- policy **journal** (raid4/5/6, a journal device): every write goes to the journal first; closes the write
  hole; the journal device carries every byte written and parity, so its speed bounds the array's writes.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from mdtui.model.safety import LiveSafety
from mdtui.plan.figures import Figure, MemberFigures, Prediction
from mdtui.plan.forecast import shown
from mdtui.plan.levels import RaidLevel
from mdtui.plan.md_limits import FIELD_CEILINGS, LOCKLESS_BITMAP, MdCeilings, kernel_version
from mdtui.plan.md_model import predict
from mdtui.plan.safety_cost import NO_SAFETY, WriteSafety

BITMAP_KINDS = ("none", "internal", "lockless")  # or an absolute path: a bitmap file
POLICIES = ("resync", "ppl", "journal")
# mdadm wants a power of two; below 4 KiB a bit covers less than md's own page of I/O.
MIN_BITMAP_CHUNK_KIB = 4
MAX_BITMAP_CHUNK_KIB = 1 << 30


@dataclass(frozen=True)
class SafetyChoice:
    """What the user asked for. ``bitmap``: none, internal, lockless or an absolute file path."""

    bitmap: str = "none"
    bitmap_chunk_kib: int | None = None
    policy: str = "resync"
    journal_device: str | None = None  # the journal disk's path (create only)

    @property
    def bitmap_kind(self) -> str:
        return "file" if self.bitmap.startswith("/") else self.bitmap

    def model(self, array_bytes: int | None = None, journal: MemberFigures | None = None) -> WriteSafety:
        """The choice as the md model costs it."""
        chunk = None if self.bitmap_chunk_kib is None else self.bitmap_chunk_kib * 1024
        return WriteSafety(self.bitmap_kind, chunk, self.policy, journal, array_bytes)

    def describe(self) -> str:
        """ "bitmap internal (chunk 64 MiB), policy resync"."""
        bitmap = "bitmap file " + self.bitmap if self.bitmap_kind == "file" else f"bitmap {self.bitmap}"
        if self.bitmap_chunk_kib is not None:
            bitmap += f" (chunk {_kib(self.bitmap_chunk_kib)})"
        policy = f"policy {self.policy}" + (f" on {self.journal_device}" if self.journal_device else "")
        return f"{bitmap}, {policy}"


def _kib(kib: int) -> str:
    for unit, size in (("GiB", 1 << 20), ("MiB", 1 << 10)):
        if kib % size == 0:
            return f"{kib // size} {unit}"
    return f"{kib} KiB"


def problems(level: RaidLevel, choice: SafetyChoice, *, kernel: str | None, metadata: str | None = None) -> list[str]:
    """Every reason md or mdadm would refuse ``choice`` for ``level``, each one line; [] when it is fine."""
    found = []
    kind = choice.bitmap_kind
    if kind not in (*BITMAP_KINDS, "file"):
        found.append(f"--bitmap {choice.bitmap!r}: give none, internal, lockless or an absolute file path")
    if kind == "file" and (os.path.normpath(choice.bitmap) != choice.bitmap or "\n" in choice.bitmap):
        found.append(f"bitmap file {choice.bitmap!r}: give it as a plain absolute path (no .., //, or line breaks)")
    if kind != "none" and not level.redundant:
        found.append(f"{level.name} has no redundancy to resync: it takes no bitmap")
    if kind == "lockless":
        version = kernel_version(kernel)
        if version is None or version < LOCKLESS_BITMAP:
            found.append(
                f"the lockless bitmap needs kernel 6.18 or newer (this is {kernel or 'an unknown kernel'}) and an "
                "mdadm that knows it"
            )
    chunk = choice.bitmap_chunk_kib
    if chunk is not None:
        if kind == "none":
            found.append("--bitmap-chunk needs a bitmap (internal, lockless or a file)")
        elif chunk < MIN_BITMAP_CHUNK_KIB or chunk > MAX_BITMAP_CHUNK_KIB or chunk & (chunk - 1):
            found.append(f"--bitmap-chunk {chunk} KiB: give a power of two from {MIN_BITMAP_CHUNK_KIB} KiB to 1 TiB")
    if choice.policy not in POLICIES:
        found.append(f"consistency policy {choice.policy!r}: give resync, ppl or journal")
    if choice.policy == "ppl":
        if level.name != "raid5":
            found.append("the partial parity log (ppl) is raid5's only")
        if kind != "none":
            found.append("md refuses ppl with a bitmap (the log replaces it): choose --bitmap none")
        if metadata == "0.90":
            found.append("ppl needs metadata 1.x")
    if choice.policy == "journal":
        if not level.parity:
            found.append("a write journal is for raid4, raid5 and raid6 only")
        if not choice.journal_device:
            found.append("a journal policy needs the journal device (--write-journal DISK)")
    elif choice.journal_device:
        found.append("--write-journal makes the policy journal: give --policy journal or leave it out")
    return found


def create_options(choice: SafetyChoice, level: RaidLevel) -> list[str]:
    """mdadm --create options for ``choice`` (journal device included); redundant levels always say which
    bitmap they get, since mdadm adds an internal one by itself on members of 100 GB or more."""
    if not level.redundant:
        return []
    options = [f"--bitmap={choice.bitmap}"]
    if choice.bitmap_chunk_kib is not None:
        options.append(f"--bitmap-chunk={choice.bitmap_chunk_kib}K")
    if choice.policy == "ppl":
        options.append("--consistency-policy=ppl")
    if choice.policy == "journal" and choice.journal_device:
        options.append(f"--write-journal={choice.journal_device}")
    return options


# How long one of change_steps' mdadm --grow commands may take (a bitmap is written or dropped on every member).
GROW_TIMEOUT_S = 300


def change_steps(device: str, now: LiveSafety, want: SafetyChoice) -> list[tuple[str, ...]]:
    """mdadm --grow commands that take ``device`` from ``now`` to ``want``, in order; [] when nothing changes.

    mdadm changes a bitmap alone (`--grow --bitmap` refuses other changes with it) and only from none, so a
    bitmap of another kind or chunk is removed first; ppl needs the bitmap gone, so the bitmap goes before and
    comes after the policy. A journal cannot be added to a live array (md needs it at assembly).
    """
    steps: list[tuple[str, ...]] = []
    want_kind = want.bitmap_kind
    bitmap_changes = (
        want_kind != now.bitmap
        or (
            want_kind != "none"
            and want.bitmap_chunk_kib is not None
            and now.bitmap_chunk_bytes != want.bitmap_chunk_kib * 1024
        )
        or want_kind == "file"
    )  # a file's path is not readable back: naming one always sets it
    if bitmap_changes and now.bitmap != "none":
        steps.append(("mdadm", "--grow", device, "--bitmap=none"))
    policy_changes = want.policy != now.choice_policy
    if policy_changes:
        steps.append(("mdadm", "--grow", device, f"--consistency-policy={want.policy}"))
    if bitmap_changes and want_kind != "none":
        add = ["mdadm", "--grow", device, f"--bitmap={want.bitmap}"]
        if want.bitmap_chunk_kib is not None:
            add.append(f"--bitmap-chunk={want.bitmap_chunk_kib}K")
        steps.append(tuple(add))
    return steps


def live_problems(level: RaidLevel, now: LiveSafety, want: SafetyChoice, *, kernel: str | None) -> list[str]:
    """Why ``want`` cannot be set on a live array of ``level`` (beyond what create would refuse)."""
    if want.policy == "journal" and now.choice_policy != "journal":
        return ["a write journal cannot be added to a running array: mdadm sets one only at create"]
    if now.choice_policy == "journal" and want.policy != "journal":
        return ["this array has a write journal: removing it is not a live change mdadm makes"]
    if want.policy == "journal":
        # The journal the array already has stays; only the bitmap can change beside it.
        return problems(level, SafetyChoice(want.bitmap, want.bitmap_chunk_kib), kernel=kernel)
    return problems(level, want, kernel=kernel)


# What each choice protects, and what it costs where the model does not say it in a figure.
PROTECTS = {
    "none": "nothing: a crash resyncs the whole array; a member that drops out and returns is rebuilt whole",
    "internal": "a crash resyncs only the dirty chunks; a member re-added after dropping out catches up on them",
    "file": "the same as internal, kept outside the members (the file must outlive the array's crashes)",
    "lockless": "the same as internal, and a new array skips its initial sync",
    "resync": "no write hole protection: a crash mid-write can leave a stripe's parity wrong until the resync",
    "ppl": "the raid5 write hole: the partial parity log rebuilds stripes a crash caught mid-write",
    "journal": "the write hole, and every write is on the journal before the array: a crash replays it",
}


def protects(choice: SafetyChoice, level: RaidLevel) -> list[str]:
    lines = [f"bitmap {choice.bitmap_kind}: {PROTECTS[choice.bitmap_kind]}"] if level.redundant else []
    if level.parity:
        lines.append(f"policy {choice.policy}: {PROTECTS[choice.policy]}")
    return lines


def array_bytes_of(member_bytes: list[int | None], level: RaidLevel, layout: str | None) -> int | None:
    """The array's data size from its members' whole sizes, as the level lays them out (what the bitmap's chunks
    divide, where no plan or array says its size); None if one is unknown."""
    known = [size for size in member_bytes if size is not None]
    if not known or len(known) != len(member_bytes):
        return None
    return level.usable_bytes(known, layout)


# The workloads a bitmap or a policy changes: (name, the Prediction's figure).
COSTED = (
    ("random write", "rand_write_iops"),
    ("sequential write", "seq_write_bytes_per_s"),
    ("Q1 write latency", "q1_write_latency_s"),
)


@dataclass(frozen=True)
class SafetyCost:
    """One workload with and without the choice, as the model predicts it (a figure's value None: not predicted)."""

    workload: str
    key: str  # the Prediction's field: what unit it is in, and how forecast.shown words it
    without_figure: Figure
    with_figure: Figure

    @property
    def without(self) -> float | None:
        return self.without_figure.value

    @property
    def with_choice(self) -> float | None:
        return self.with_figure.value

    @property
    def ratio(self) -> float | None:
        """with / without, higher is better (for latency: without / with)."""
        if not self.without or not self.with_choice:
            return None
        return self.without / self.with_choice if self.key.endswith("_s") else self.with_choice / self.without

    def text(self) -> str:
        """Both figures as every prediction is shown (forecast.shown: its unit, two significant figures)."""

        def worded(figure: Figure) -> str:
            return "not predicted" if figure.value is None else shown(figure, self.key)

        ratio = self.ratio
        keeps = "" if ratio is None else f" ({ratio:.2f}× the speed without it)"
        return f"{self.workload}: {worded(self.with_figure)} vs {worded(self.without_figure)} without{keeps}"


def costs(
    level: RaidLevel,
    members: Sequence[MemberFigures],
    choice: SafetyChoice,
    *,
    layout: str | None = None,
    chunk_bytes: int | None = None,
    ceilings: MdCeilings = FIELD_CEILINGS,
    array_bytes: int | None = None,
    journal: MemberFigures | None = None,
) -> tuple[list[SafetyCost], Prediction]:
    """What ``choice`` costs each write workload against no bitmap and md's resync policy, from one model."""
    plain = predict(level, members, layout=layout, chunk_bytes=chunk_bytes, ceilings=ceilings, safety=NO_SAFETY)
    chosen = predict(
        level,
        members,
        layout=layout,
        chunk_bytes=chunk_bytes,
        ceilings=ceilings,
        safety=choice.model(array_bytes, journal),
    )
    found = []
    for name, key in COSTED:
        found.append(SafetyCost(name, key, getattr(plain, key), getattr(chosen, key)))
    return found, chosen


def cost_lines(
    level: RaidLevel,
    members: Sequence[MemberFigures] | None,
    choice: SafetyChoice,
    *,
    layout: str | None = None,
    chunk_bytes: int | None = None,
    ceilings: MdCeilings = FIELD_CEILINGS,
    array_bytes: int | None = None,
) -> list[str]:
    """The choice, what it protects, and (with every member's figures) what it costs, predicted, as plan lines."""
    lines = [f"write safety      {choice.describe()}"]
    lines += [f"  protects        {line}" for line in protects(choice, level)]
    if members is None or (choice.bitmap_kind == "none" and choice.policy == "resync"):
        return lines
    found, _ = costs(
        level, members, choice, layout=layout, chunk_bytes=chunk_bytes, ceilings=ceilings, array_bytes=array_bytes
    )
    lines += [f"  costs           {cost.text()}" for cost in found if cost.ratio is not None]
    return lines
