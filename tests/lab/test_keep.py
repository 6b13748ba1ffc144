"""Keeping arrays on a real kernel (issue 16): persistence through mdadm.conf and `mdadm --assemble --scan`,
SMART from the guest's NVMe and SATA drives in `scan --json`, and a member hot-unplugged during a write
benchmark: degraded seen, the advisor's advice, a new disk added and the recovery followed, the data written
before the fault unchanged, a check counting no mismatches and a `--replace` that keeps redundancy.

One guest of its own for the module (the unplug breaks its machine description), small disks so recoveries
take seconds.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mdtui.model.array import normalize_uuid

from .harness import CommandResult, Guest, Machine, boot, nvme, sata

KEEP = Machine(
    name="keep",
    cpus=2,
    memory_mb=1024,
    disks=(
        *(nvme(f"KEEP{i}", "96M") for i in range(5)),  # raid5 over 0-2; 3 the new disk, 4 the replace target
        nvme("KEEPA", "32M"),  # the persisted raid1
        nvme("KEEPB", "32M"),
        sata("KEEPSATA", "32M", rotation_rate=1),  # SMART over ATA
    ),
)
STATE_ENV = {"MDTUI_STATE_DIR": "/tmp/mdtui-keep-state"}
CONF = "/etc/mdadm/mdadm.conf"
PATTERN_MIB = 32  # data written before the fault and checksummed after the recovery
BENCH_OFFSET = "64m"  # the write benchmark stays clear of the checksummed region
FIO_STARTS_WITHIN_S = 90.0  # mdtui bench's start in the guest (imports, scan, plan) before fio runs
DEGRADED_WITHIN_S = 60.0  # md notices a vanished NVMe member within this (measured: see the timeline)
TIMELINE: dict[str, float | str] = {}


@pytest.fixture(scope="module")
def guest() -> Iterator[Guest]:
    guest = boot(KEEP)
    try:
        yield guest
    finally:
        if TIMELINE:
            print("fault timeline (s from unplug):", json.dumps(TIMELINE))
        guest.close()


def mdtui(guest: Guest, *args: str, check: bool = True, timeout: float = 180) -> CommandResult:
    return guest.run([guest.python_exe, "-m", "mdtui", *args], env=STATE_ENV, check=check, timeout=timeout)


def by_id(guest: Guest, serial: str) -> str:
    return guest.device(serial)


def advise_ids(guest: Guest) -> dict[str, dict[str, Any]]:
    findings = json.loads(mdtui(guest, "advise", "--json", "--samples", "1").stdout)
    items = findings["findings"] if isinstance(findings, dict) else findings
    return {f["id"]: f for f in items}


# update-initramfs inside the TCG guest did not finish in 300-400 s; natively on the host mkinitramfs takes ~4 s
# with MODULES=list and gzip (measured), so the host builds the image the guest's mdtui then reads.
MKINITRAMFS_TIMEOUT_S = 180


def build_initramfs(guest: Guest, conf_text: str, version: str) -> Path:
    """An initramfs built by the host's mkinitramfs with ``conf_text`` as /etc/mdadm/mdadm.conf, in the share.

    The conf is bound over /etc/mdadm/mdadm.conf in a private mount namespace: the host's own file, /etc
    and /boot are never written. The image goes to the guest's share (/lab-out), where its mdtui reads it.
    """
    for tool in ("mkinitramfs", "unshare"):
        assert shutil.which(tool), f"{tool} is missing (scripts/install-deps.sh --lab installs initramfs-tools)"
    assert Path(CONF).is_file(), f"{CONF} is missing on the host (mdadm's package makes it)"
    work = Path(tempfile.mkdtemp(prefix="mdtui-initramfs-"))
    try:
        (work / "mdadm.conf").write_text(conf_text)
        shutil.copytree("/etc/initramfs-tools", work / "conf")
        settings = work / "conf" / "initramfs.conf"
        text = re.sub(r"(?m)^MODULES=.*$", "MODULES=list", settings.read_text())
        settings.write_text(re.sub(r"(?m)^COMPRESS=.*$", "COMPRESS=gzip", text))
        (work / "conf" / "modules").write_text("")
        image = guest.out_path("initrd-persisted.img")
        script = 'mount --bind "$1" /etc/mdadm/mdadm.conf && exec mkinitramfs -d "$2" -o "$3" "$4"'
        argv = ["unshare", "-m", "sh", "-c", script, "sh", str(work / "mdadm.conf"), str(work / "conf"),
                str(image), version]  # fmt: skip
        started = time.monotonic()
        done = subprocess.run(argv, capture_output=True, text=True, timeout=MKINITRAMFS_TIMEOUT_S, check=False)
        assert done.returncode == 0 and image.is_file(), done.stderr[-2000:]
        TIMELINE["mkinitramfs on the host (s)"] = round(time.monotonic() - started, 1)
        return image
    finally:
        shutil.rmtree(work, ignore_errors=True)


def test_persist_then_assemble_scan_brings_the_array_back(guest: Guest) -> None:
    original = guest.read_file(CONF)
    a, b = by_id(guest, "KEEPA"), by_id(guest, "KEEPB")
    mdtui(guest, "create", "--level", "1", "--device", "/dev/md1", "--name", "kept", "--assume-clean", "--yes", a, b)
    try:
        uuid = guest.read_file("/sys/block/md1/md/uuid").strip()
        assert "boot-unlisted:md1" in advise_ids(guest), "an array missing from mdadm.conf must be a finding"

        dry = json.loads(mdtui(guest, "persist", "md1", "--dry-run", "--json").stdout)
        assert dry["conf"] == CONF and dry["initramfs"] == ["update-initramfs", "-u"]
        assert guest.read_file(CONF) == original, "a dry run wrote mdadm.conf"
        refused = mdtui(guest, "persist", "md1", "--no-initramfs", check=False)
        assert refused.rc == 2 and "without confirmation" in refused.stderr, refused.stderr

        done = json.loads(mdtui(guest, "persist", "md1", "--no-initramfs", "--yes", "--json").stdout)
        conf = guest.read_file(CONF)
        assert conf.startswith(original) and done["array_line"] in conf, conf
        again = json.loads(mdtui(guest, "persist", "md1", "--no-initramfs", "--yes", "--json").stdout)
        assert "wrote" not in again and guest.read_file(CONF) == conf, "persist twice added a second line"

        findings = advise_ids(guest)
        assert "boot-unlisted:md1" not in findings
        # The guest boots the host's initramfs, built before md1 existed: the copy inside it lacks the line.
        assert "boot-initramfs:md1" in findings, sorted(findings)

        # The refreshed initramfs lists it: the distribution's own mkinitramfs (what update-initramfs runs)
        # builds an image from the mdadm.conf persist wrote, and mdtui's boot check reads md1 in it.
        image = build_initramfs(guest, conf, guest.kernel.version)
        checked = guest.python(
            "import json; from mdtui.keep.boot import read_boot_state; from mdtui.probe.inventory import scan; "
            "from mdtui.probe.root import SystemRoot; root = SystemRoot('/'); "
            f"state = read_boot_state(root, arrays=scan(root).arrays, initramfs={guest.guest_out(image.name)!r}); "
            "print(json.dumps({a.name: a.initramfs_line and a.initramfs_line.uuid for a in state.arrays}))",
            env=STATE_ENV, timeout=120,
        )  # fmt: skip
        assert json.loads(checked.stdout).get("md1") == normalize_uuid(uuid), (checked.stdout, uuid)

        guest.run(["mdadm", "--stop", "/dev/md1"])
        assert "md1" not in guest.read_file("/proc/mdstat")
        assembled = guest.run(["mdadm", "--assemble", "--scan"], check=False)
        guest.run(["udevadm", "settle"])
        mdstat = guest.read_file("/proc/mdstat")
        # md starts an array nobody has written to since assembly as "active (auto-read-only)".
        assert re.search(r"^md1 : active (\(auto-read-only\) )?raid1 ", mdstat, re.MULTILINE), (
            f"assemble --scan: {assembled.stderr}\n{mdstat}"
        )
        assert guest.read_file("/sys/block/md1/md/uuid").strip() == uuid
    finally:
        guest.sh(f"cat > {CONF} <<'EOF'\n{original}EOF\n", check=False)
        guest.sh(f"mdadm --stop /dev/md1; mdadm --zero-superblock {a} {b}; true", check=False)


def test_smart_of_nvme_and_sata_in_scan_json(guest: Guest) -> None:
    data = json.loads(mdtui(guest, "scan", "--json").stdout)
    names = {d["serial"]: d["name"] for d in data["disks"] if d.get("serial")}
    nvme_health = data["smart"][names["KEEP0"]]
    sata_health = data["smart"][names["KEEPSATA"]]
    for health, protocol in ((nvme_health, "NVMe"), (sata_health, "ATA")):
        assert health["protocol"] == protocol and health["passed"] is True, health
        assert isinstance(health["temperature_c"], int) and health["temperature_c"] > 0, health
        assert health["media_errors"] == 0 and health["problems"] == [], health
    assert nvme_health["percentage_used"] == 0 and nvme_health["serial"] == "KEEP0"


def _mdstat_md0(guest: Guest) -> str:
    text = guest.read_file("/proc/mdstat")
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("md0 ")), None)
    return "\n".join(lines[start : start + 3]) if start is not None else ""


def test_unplug_during_a_write_benchmark_then_repair(guest: Guest) -> None:
    members = [by_id(guest, f"KEEP{i}") for i in range(3)]
    victim_dev = guest.device("KEEP1").rsplit("/", 1)[-1]
    mdtui(guest, "create", "--level", "5", "--device", "/dev/md0", "--chunk", "64", "--assume-clean", "--yes",
          *members)  # fmt: skip
    try:
        guest.sh(f"dd if=/dev/urandom of=/dev/md0 bs=1M count={PATTERN_MIB} oflag=direct status=none")
        checksum = f"dd if=/dev/md0 bs=1M count={PATTERN_MIB} iflag=direct status=none | sha256sum"
        before = guest.sh(checksum).stdout.split()[0]

        bench = guest.spawn(
            [guest.python_exe, "-m", "mdtui", "bench", "--preset", "custom", "--target", "md0", "--rw", "write",
             "--bs", "1m", "--iodepth", "4", "--runtime", "8", "--offset", BENCH_OFFSET, "--yes", "--json",
             "--db", "/tmp/keep.db"],
            env=STATE_ENV, timeout=120,
        )  # fmt: skip
        # Unplug while fio writes (mdtui's start in the guest takes seconds under TCG): the loss is during the run.
        waited = time.monotonic()
        while guest.run(["pgrep", "-x", "fio"], check=False).rc != 0:
            assert time.monotonic() - waited < FIO_STARTS_WITHIN_S and not bench.done(), "fio never started"
            time.sleep(0.2)
        time.sleep(1.0)
        unplugged = time.monotonic()
        guest.unplug("KEEP1")
        TIMELINE["unplug"] = 0.0
        # The kernel's view first (cheap to poll), then mdtui's: scan --json names the array degraded.
        while not re.search(r"\[U*_[U_]*\]|\(F\)", _mdstat_md0(guest)):  # [U_U] or a member marked (F)
            assert time.monotonic() - unplugged < DEGRADED_WITHIN_S, f"md0 not degraded: {_mdstat_md0(guest)}"
            time.sleep(0.25)
        TIMELINE["md degraded"] = round(time.monotonic() - unplugged, 1)
        data = json.loads(mdtui(guest, "scan", "--json", "--no-smart").stdout)
        md0 = next(a for a in data["arrays"] if a["name"] == "md0")
        TIMELINE["degraded seen by scan"] = round(time.monotonic() - unplugged, 1)
        assert md0["degraded"] == 1, md0
        print("md0 after the unplug:", json.dumps(md0["members"]))
        result = bench.wait()
        TIMELINE["benchmark ended"] = round(time.monotonic() - unplugged, 1)
        document = json.loads(result.stdout)
        step = document["steps"][0]
        TIMELINE["benchmark status"] = step["status"]
        TIMELINE["benchmark write MB/s"] = round((step["write_bytes_per_s"] or 0) / 1e6, 1)
        # md hides a lost member from the writer: the run goes on degraded and is stored with its figures.
        assert step["run_id"] is not None and step["write_bytes_per_s"], f"no stored figures: {step}"
        # ... and says so: the sampler saw md0 lose a member while the run measured it (stored with the run too).
        lost = [n for n in document["notes"] if n.startswith("md0 lost a member during this run")]
        assert lost, document["notes"]
        TIMELINE["run marked degraded"] = 1.0

        watch = json.loads(mdtui(guest, "watch", "--json", "md0", "--count", "1", "--interval", "0.5").stdout)
        watched = next(a for a in watch["arrays"] if a["name"] == "md0")
        assert watched["degraded"] == 1, watched
        kernel_log = guest.run(["dmesg"]).stdout
        assert victim_dev in kernel_log, "the kernel log does not name the lost member"

        findings = advise_ids(guest)
        degraded = findings.get("degraded:md0")
        assert degraded is not None and degraded["severity"] == "critical", sorted(findings)
        assert "mdtui repair md0" in degraded["what_to_do"], degraded
        assert victim_dev in degraded["title"], f"the advisor does not name the lost member: {degraded['title']}"

        new_disk = by_id(guest, "KEEP3")
        TIMELINE["repair started"] = round(time.monotonic() - unplugged, 1)
        added = json.loads(mdtui(guest, "repair", "md0", "--add", new_disk, "--yes", "--json", timeout=300).stdout)
        TIMELINE["recovery done"] = round(time.monotonic() - unplugged, 1)
        [argv] = added["plan"]
        assert argv[:4] == ["mdadm", "--manage", "/dev/md0", "--add"] and argv[4].endswith("_KEEP3"), added
        assert added["recovery"]["degraded"] == 0, added
        assert "recover" in added["recovery"]["actions"], added
        after = guest.sh(checksum).stdout.split()[0]
        TIMELINE["checksum equal"] = float(after == before)
        assert after == before, "data written before the fault changed"

        scrub = json.loads(mdtui(guest, "scrub", "md0", "--json", timeout=300).stdout)
        TIMELINE["check done"] = round(time.monotonic() - unplugged, 1)
        assert scrub["mismatch_sectors"] == 0, scrub

        spare = by_id(guest, "KEEP4")
        keep_member = guest.device("KEEP0").rsplit("/", 1)[-1]
        replace = ("repair", "md0", "--replace", keep_member, "--with", spare, "--yes", "--json")
        replaced = json.loads(mdtui(guest, *replace, timeout=300).stdout)
        assert [argv[3] for argv in replaced["plan"]] == ["--add", "--replace"], replaced
        assert "replace" in replaced["recovery"]["actions"] or "recover" in replaced["recovery"]["actions"], replaced
        assert replaced["recovery"]["degraded"] == 0
        TIMELINE["replace done"] = round(time.monotonic() - unplugged, 1)
        assert guest.sh(checksum).stdout.split()[0] == before
    finally:
        guest.sh("mdadm --stop /dev/md0; true", check=False)
        guest.sh("for d in $(lsblk -dnpo NAME -e 9); do mdadm --zero-superblock --force $d 2>/dev/null; done; true",
                 check=False)  # fmt: skip
