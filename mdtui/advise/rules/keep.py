"""Rules about keeping arrays: will they come back after a reboot, and will anyone hear when one fails."""

from __future__ import annotations

from mdtui.advise.findings import Evidence, Finding, Severity, Topic
from mdtui.advise.rules.inputs import AdviceInput
from mdtui.advise.rules.measured import judge_weakest_link
from mdtui.advise.rules.resync import resync_run_ids
from mdtui.format import plural
from mdtui.keep.boot import END_METADATA, ESP_MOUNTS, BootState

TOPIC = Topic.KEEPING
BOOT_WHY = (
    "At boot the initramfs assembles arrays from its own copy of mdadm.conf. An array no ARRAY line names is "
    "assembled by auto-detection, if at all: it comes up as md127 (or md126...) instead of its name, and "
    "fstab or a bootloader entry that names /dev/md0 fails. The copy inside the initramfs is the one that "
    "counts, and it only changes when the initramfs is rebuilt."
)
MONITOR_WHY = (
    "A redundant array hides its first failure: it keeps serving data, degraded, until the next member fails "
    "and the data is gone. `mdadm --monitor` (the mdmonitor service) sends mail to MAILADDR or runs PROGRAM "
    "on Fail, DegradedArray and SparesMissing events; without it, or with nowhere to send them, nobody hears."
)


def _refresh(state: BootState) -> str:
    return " ".join(state.distribution.initramfs_argv)


def rule_boot(inp: AdviceInput) -> list[Finding]:
    """Every running array named in mdadm.conf and in the initramfs's copy, no stale lines, no md127 surprise,
    metadata a bootloader can read where it holds /boot."""
    state = inp.boot
    if state is None:
        return []
    findings: list[Finding] = []
    conf = state.conf
    image_read = state.initramfs_conf is not None
    for array in state.arrays:
        if array.uuid is None:
            continue  # a built array: nothing to persist
        base = [Evidence("array", array.dev_path), Evidence("UUID", array.uuid)]
        if array.conf_line is None:
            unnamed = array.name.startswith("md12")
            findings.append(
                Finding(
                    topic=TOPIC,
                    id=f"boot-unlisted:{array.name}",
                    severity=Severity.CRITICAL if array.holds else Severity.WARNING,
                    title=(
                        f"{array.name} is not in {conf.path}: after a reboot it may come back under another "
                        "name (md127) or not at all"
                        if not unnamed
                        else f"{array.name} was assembled without an ARRAY line in {conf.path} (hence md12x)"
                    ),
                    evidence=(
                        *base,
                        Evidence(conf.path, plural(len(conf.arrays), "ARRAY line") if conf.exists else "missing"),
                    ),
                    why=BOOT_WHY,
                    what_to_do=(
                        f"`mdtui persist {array.name}`: adds the line `mdadm --detail --brief {array.dev_path}` "
                        f"prints to {conf.path} (shown as a diff first), then runs `{_refresh(state)}`."
                    ),
                )
            )
        elif image_read and array.initramfs_line is None:
            findings.append(
                Finding(
                    topic=TOPIC,
                    id=f"boot-initramfs:{array.name}",
                    severity=Severity.WARNING,
                    title=f"{array.name} is in {conf.path} but not in the initramfs's copy of it",
                    evidence=(*base, Evidence("initramfs", state.initramfs or "unknown")),
                    why=BOOT_WHY,
                    what_to_do=(
                        f"Rebuild the initramfs: `{_refresh(state)}` (or `mdtui persist {array.name}`, which "
                        "does it after checking the line)."
                    ),
                )
            )
        if array.named_elsewhere is not None:
            findings.append(
                Finding(
                    topic=TOPIC,
                    id=f"boot-name:{array.name}",
                    severity=Severity.WARNING,
                    title=f"{array.name} is assembled as {array.dev_path} but {conf.path} names it "
                    f"{array.named_elsewhere}",
                    evidence=(
                        *base,
                        Evidence(f"{conf.path} line {array.conf_line.line_no}", array.named_elsewhere)
                        if array.conf_line
                        else Evidence("conf", array.named_elsewhere),
                    ),
                    why=BOOT_WHY + " A different name at assembly means the copy in the initramfs is older than "
                    "the file, or the superblock's home host does not match HOMEHOST.",
                    what_to_do=(
                        f"Rebuild the initramfs (`{_refresh(state)}`) and reboot; if it stays "
                        f"{array.name}, check HOMEHOST in {conf.path} against the name= in the line."
                    ),
                )
            )
        findings += _metadata_findings(state, array.name, array.metadata, array.holds, base)
    for line in state.stale:
        short = (line.uuid or "")[:8]
        findings.append(
            Finding(
                topic=TOPIC,
                id=f"boot-stale:{short}",
                severity=Severity.WARNING,
                title=f"{conf.path} line {line.line_no} names an array that does not exist here",
                evidence=(Evidence("line", line.text), Evidence("UUID", line.uuid or "")),
                why=(
                    "At boot mdadm looks for every array the file names; one whose disks are gone can hold "
                    "the boot on a timeout or drop to the initramfs shell, and a new array may be refused a "
                    "name the stale line still claims."
                ),
                what_to_do=(
                    f"If its disks are gone for good, delete line {line.line_no} of {conf.path}, then run "
                    f"`{_refresh(state)}`."
                ),
            )
        )
    return findings


def _metadata_findings(
    state: BootState, name: str, metadata: str | None, holds: tuple[str, ...], base: list[Evidence]
) -> list[Finding]:
    if not holds or metadata is None or metadata in END_METADATA:
        return []
    esp = [point for point in holds if point in ESP_MOUNTS]
    if esp:
        return [
            Finding(
                topic=TOPIC,
                id=f"boot-metadata:{name}",
                severity=Severity.CRITICAL,
                title=f"{name} holds the EFI system partition ({esp[0]}) with metadata {metadata}",
                evidence=(*base, Evidence("metadata", metadata), Evidence("holds", ", ".join(holds))),
                why=(
                    "The firmware reads the EFI system partition as a plain FAT filesystem. Metadata 1.1 and 1.2 "
                    "put the superblock at the start, so the filesystem does not start where the firmware looks; "
                    "only 1.0 and 0.90 (superblock at the end) leave each member readable on its own."
                ),
                what_to_do="Recreate the ESP mirror with --metadata=1.0 (back up its files first).",
            )
        ]
    if state.bootloader in ("grub2", "systemd-boot"):
        return []
    loader = state.bootloader or "an unknown bootloader"
    return [
        Finding(
            topic=TOPIC,
            id=f"boot-metadata:{name}",
            severity=Severity.WARNING,
            title=f"{name} holds /boot with metadata {metadata}, which {loader} may not read",
            evidence=(*base, Evidence("metadata", metadata), Evidence("bootloader", loader)),
            why=(
                "GRUB 2 reads md metadata 1.x itself; older loaders (GRUB legacy, syslinux/extlinux) read one member "
                "as a plain filesystem, which only works with the superblock at the end (1.0 or 0.90)."
            ),
            what_to_do="Use GRUB 2, or recreate the /boot mirror with --metadata=1.0.",
        )
    ]


def rule_monitoring(inp: AdviceInput) -> list[Finding]:
    """Arrays exist and nobody will hear about a failure: no `mdadm --monitor`, or nowhere to send its alerts."""
    state = inp.boot
    if state is None or not state.arrays:
        return []
    mon = state.monitoring
    problems = []
    if not mon.running:
        problems.append("no `mdadm --monitor` process runs")
    if not mon.mailaddr and not mon.program:
        problems.append(f"neither MAILADDR nor PROGRAM is set in {state.conf.path}")
    elif mon.mailaddr and not mon.program and mon.mailer is None:
        problems.append(f"MAILADDR {mon.mailaddr} is set but no sendmail is installed to deliver it")
    if not problems:
        return []
    return [
        Finding(
            topic=TOPIC,
            id="monitor",
            severity=Severity.WARNING,
            title="Nobody will hear when an array loses a member: " + "; ".join(problems),
            evidence=(
                Evidence("mdadm --monitor", ", ".join(str(p) for p in mon.monitor_pids) or "not running"),
                Evidence("MAILADDR", mon.mailaddr or "unset"),
                Evidence("PROGRAM", mon.program or "unset"),
            ),
            why=MONITOR_WHY,
            what_to_do=(
                "`mdtui alerts --mail ADDRESS` (or `--program /path/to/handler`) sets MAILADDR or PROGRAM in "
                f"{state.conf.path} after showing the diff, starts mdadm's monitor and sends a test alert. By "
                "hand: set one of them, `systemctl enable --now mdmonitor` (or `mdadm --monitor --scan "
                "--daemonise`), then `mdadm --monitor --scan --test --oneshot`."
            ),
        )
    ]


DEGRADED_WHY = (
    "A degraded array has no redundancy left (or less than it was built with): one more failure, or one "
    "unreadable sector on a remaining member during the rebuild, loses data. The rebuild reads every "
    "remaining member in full, the heaviest load they will see."
)
SMART_WHY = (
    "Media errors and reallocated or pending sectors grow as a drive wears out; a member with them is the "
    "likeliest to fail next, and a slow one often retries reads inside the drive. CRC errors point at the "
    "cable or backplane instead. Replacing a member before it fails keeps the array redundant throughout "
    "(`mdadm --replace` copies onto the spare while the old member still serves)."
)


def _measured_slow(inp: AdviceInput, disk: str) -> tuple[str, float, int] | None:
    """(array, read bytes/s alone, run id) when a stored weakest-link run named ``disk`` as what its array runs
    at (rules/measured.py): the slowest of healthy members scattering from run to run is not "the slow one"."""
    during_resync = resync_run_ids(inp)
    for figures in reversed(inp.weakest_link):
        verdict, _ = judge_weakest_link(inp, figures, during_resync)
        member = next((m for m in figures.alone if m.name == disk), None)
        if member is not None and disk in verdict.named:
            return figures.array.rsplit("/", 1)[-1], member.read_bytes_per_s, member.run_id
    return None


def rule_health(inp: AdviceInput) -> list[Finding]:
    """Degraded arrays and failed members, mismatches found by a check, members whose SMART reports trouble."""
    health = inp.health
    if health is None:
        return []
    findings: list[Finding] = []
    member_of: dict[str, str] = {}
    for array in health.arrays:
        for disk in array.member_disks:
            member_of.setdefault(disk, array.name)
        if array.degraded or array.failed:
            evidence = [Evidence("missing members", array.degraded)]
            if array.failed:
                evidence.append(Evidence("failed (faulty)", ", ".join(array.failed)))
            if array.lost:
                evidence.append(Evidence("lost (kernel log)", ", ".join(array.lost)))
            if array.spares:
                evidence.append(Evidence("spares", ", ".join(array.spares)))
            if array.sync_action in ("recover", "resync"):
                evidence.append(Evidence("now", array.sync_action))
            steps = []
            for failed in array.failed:
                steps.append(f"`mdtui repair {array.name} --remove {failed}`")
            if array.sync_action == "recover":
                todo = "A recovery onto a spare is running: let it finish (`mdtui watch " + array.name + "`)."
            elif array.spares:
                todo = "md should be rebuilding onto the spare; check `cat /proc/mdstat`."
            else:
                steps.append(f"`mdtui repair {array.name} --add DISK` with a free disk of at least the member size")
                todo = "Remove the failed member and add a new disk: " + ", then ".join(steps) + "."
            findings.append(
                Finding(
                    topic=TOPIC,
                    id=f"degraded:{array.name}",
                    severity=Severity.CRITICAL,
                    title=f"{array.name} is degraded"
                    + (
                        f": {', '.join(array.failed)} failed"
                        if array.failed
                        else f": {', '.join(array.lost)} failed and is gone"
                        if array.lost
                        else f" ({array.degraded} missing)"
                    ),
                    evidence=tuple(evidence),
                    why=DEGRADED_WHY,
                    what_to_do=todo,
                )
            )
        if array.mismatch_sectors and array.last_check in ("check", "repair"):
            findings.append(
                Finding(
                    topic=TOPIC,
                    id=f"mismatch:{array.name}",
                    severity=Severity.WARNING,
                    title=f"The last {array.last_check} of {array.name} found {array.mismatch_sectors} "
                    "mismatched sectors",
                    evidence=(
                        Evidence("mismatch_cnt", array.mismatch_sectors, "sectors"),
                        Evidence("last action", array.last_check),
                    ),
                    why=(
                        "A check reads every stripe and counts sectors whose copies or parity disagree. On raid1/10 "
                        "a few can be harmless (swap or O_DIRECT pages rewritten in flight); on raid5/6, or many, "
                        "a member returned wrong data or a write was torn."
                    ),
                    what_to_do=(
                        f"Check the members' SMART and the kernel log; then `mdtui scrub {array.name} --repair` "
                        "rewrites parity/copies from the data, and a second check should count 0."
                    ),
                )
            )
    for disk, smart in sorted(health.smart.items()):
        problems = smart.problems
        if not problems:
            continue
        member_array = member_of.get(disk)
        slow = _measured_slow(inp, disk)
        evidence = [Evidence(p.split(":")[0] if ":" in p else "SMART", p) for p in problems]
        if smart.temperature_c is not None:
            evidence.append(Evidence("temperature", smart.temperature_c, "°C"))
        if smart.power_on_hours is not None:
            evidence.append(Evidence("power-on", smart.power_on_hours, "h"))
        explains: tuple[str, ...] = ()
        if slow is not None:
            evidence.append(Evidence(f"read alone (run {slow[2]})", round(slow[1] / 1e6, 1), "MB/s"))
            title = f"{disk}, the measured slow member of {slow[0]}, has SMART errors: " + "; ".join(problems)
            explains = (f"measured-slow-member:{slow[0]}",)
        else:
            title = f"{disk}{f' ({member_array} member)' if member_array else ''}: " + "; ".join(problems)
        findings.append(
            Finding(
                topic=Topic.PERFORMANCE if explains else TOPIC,
                data_at_risk=True,  # a disk reporting trouble endangers its array's data, whatever else it explains
                id=f"smart:{disk}",
                severity=Severity.CRITICAL if smart.failing or smart.media_errors else Severity.WARNING,
                title=title,
                evidence=tuple(evidence),
                why=SMART_WHY,
                what_to_do=(
                    f"Replace it while the array is still redundant: add a spare, then "
                    f"`mdtui repair {member_array} --replace {disk} --with SPARE`."
                    if member_array
                    else "Do not use it as an array member; `smartctl -x /dev/" + disk + "` shows the full logs."
                ),
                explains=explains,
            )
        )
    return findings


RESHAPE_WHY = (
    "A reshape rewrites every stripe of the array. md records how far it got in the members' superblocks and "
    "takes it up again when the array is assembled, but mdadm --incremental (udev, at boot) does not start an "
    "interrupted reshape that keeps its critical section in a backup file, and an array md assembled read-only "
    "waits for its first write: until then the array runs in the middle of two shapes."
)


def rule_reshape(inp: AdviceInput) -> list[Finding]:
    """A reshape pending or interrupted (critical: the array is between two shapes), or running (info, with its
    backup file to keep)."""
    findings = []
    for state in inp.reshapes:
        if state.state == "finished":
            continue
        evidence = [Evidence("array", state.device), Evidence("state", state.state)]
        if state.fraction is not None and state.state == "running":
            evidence.append(Evidence("done", round(state.fraction * 100, 1), "%"))
        if state.backup_file:
            evidence.append(Evidence("backup file", state.backup_file))
        running = state.state == "running"
        keep = f": keep {state.backup_file} until it ends" if state.backup_file else ""
        findings.append(
            Finding(
                topic=TOPIC,
                id=f"reshape:{state.name}",
                severity=Severity.INFO if running else Severity.CRITICAL,
                title=(
                    f"{state.name} is reshaping{keep}"
                    if running
                    else f"{state.name}'s reshape is {state.state}: it needs {state.needs}"
                ),
                evidence=tuple(evidence),
                why=RESHAPE_WHY,
                what_to_do=state.needs if not running else f"`mdtui grow {state.device} --follow` follows it",
            )
        )
    return findings
