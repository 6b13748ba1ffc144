"""What mdtui believes, as another local user would forge it (issue 40, cases 7, 8 and 12; MAILFROM): a PROGRAM
path through a link the user can re-point, a process of theirs that looks like mdadm's monitor, and kernel
log lines that carry md's words inside a message of theirs (a real segfault of nobody's in a file they named).
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from unprivileged import Attacker, drop_privileges, give_to_nobody, python_for_nobody, users_home

from mdtui.errors import MdtuiError
from mdtui.keep import alerts, schedule
from mdtui.keep.boot import monitor_pids
from mdtui.keep.conf import parse_conf
from mdtui.keep.health import failures_in_kernel_log
from mdtui.probe.kernel_log import parse_kernel_log
from mdtui.probe.root import SystemRoot

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="the attacks need root's files and another user")

REPO = Path(__file__).resolve().parents[2]
LIVE = SystemRoot("/")


# --- case 7: PROGRAM through a link the user controls -----------------------------------------------------
# On a host of its own (``place`` as its root: /tmp above it is no place for a program root runs).


def _root_program(place: Path) -> Path:
    sbin = place / "sbin"
    sbin.mkdir(mode=0o755)
    program = sbin / "md-alert"
    program.write_text("#!/bin/sh\nexit 0\n")
    program.chmod(0o755)
    return program


@needs_root
def test_a_program_path_through_a_link_the_user_owns_is_refused(place: Path) -> None:
    _root_program(place)
    users = users_home(place)
    with Attacker() as attacker:
        # Leads to root's own program, for now; mdadm.conf would say PROGRAM /home-nobody/alert.
        assert attacker.ask("symlink", "../sbin/md-alert", users / "alert") == "ok"
        with pytest.raises(MdtuiError, match="link of uid 65534"):
            alerts.validate_program("/home-nobody/alert", SystemRoot(place))
        # What 3b6999e let happen next: the user re-points it, and mdadm runs their program as root.
        assert attacker.ask("symlink", "/bin/true", users / "theirs") == "ok"
        assert attacker.ask("replace-with-link", users / "alert", users / "theirs") == "ok"


@needs_root
def test_a_link_of_roots_in_a_directory_the_user_can_write_is_refused(place: Path) -> None:
    _root_program(place)
    shared = place / "shared"
    shared.mkdir()
    give_to_nobody(shared, 0o755)  # the user can rename the link away and put theirs in its place
    (shared / "alert").symlink_to("../sbin/md-alert")  # root's own link
    with pytest.raises(MdtuiError, match="link in a directory of uid 65534"):
        alerts.validate_program("/shared/alert", SystemRoot(place))


@needs_root
def test_roots_own_program_and_links_are_accepted(place: Path) -> None:
    _root_program(place)
    (place / "sbin" / "md-alert-link").symlink_to("md-alert")
    (place / "usr").mkdir(mode=0o755)
    (place / "usr" / "sbin").symlink_to("/sbin")  # an absolute link, read inside this host's root
    for path in ("/sbin/md-alert", "/sbin/md-alert-link", "/usr/sbin/md-alert"):
        assert alerts.validate_program(path, SystemRoot(place)) == path


# --- case 8: a process of the user's that looks like the monitor ---------------------------------------


@needs_root
def test_a_users_process_named_mdadm_monitor_is_not_the_monitor(place: Path) -> None:
    users = users_home(place)
    fake = users / "mdadm"  # a copy of a shell named mdadm: its executable, its name, its command line
    shutil.copy("/bin/sh", fake)
    give_to_nobody(fake, 0o755)
    process = subprocess.Popen(drop_privileges([str(fake), "-c", "sleep 60; :", "--monitor", "--scan"]), cwd="/")
    try:
        deadline = time.monotonic() + 10
        while f"{fake}".encode() not in Path(f"/proc/{process.pid}/cmdline").read_bytes():
            assert time.monotonic() < deadline, "the fake monitor did not start"
            time.sleep(0.05)
        assert process.pid not in monitor_pids(LIVE), "a process of nobody's was taken for mdadm's monitor"
    finally:
        process.kill()
        process.wait()


# --- case 12: md's words inside another message --------------------------------------------------------

# What kernels print for a user's segfault (arch/x86/mm/fault.c, show_signal_msg): the name of the file the
# fault was in, which the user chooses, comes after the kernel's own words; on 6.x " likely on CPU" follows.
FORGED = [
    "2026-11-26T22:18:58,000000+00:00 python3[4242]: segfault at 0 ip 00007f41dd597000 sp 00007fff2de05f58 "
    "error 4 in md: data-check of RAID array md0[0,7f41dd597000+1000] likely on CPU 0 (core 0, socket 0)",
    "2026-11-26T22:18:59,000000+00:00 x[1]: segfault at 0 ip 0 sp 0 error 4 in md: md0: data-check done.",
    # a file name with a line break: dmesg prints the rest of the message indented, beginning nothing
    "2026-11-26T22:19:00,000000+00:00 x[1]: segfault at 0 ip 0 sp 0 error 4 in x",
    "                                 md: data-check of RAID array md1",
]


def test_md_s_words_inside_another_message_are_not_a_scrub() -> None:
    scrubs = schedule.scrubs_in_log(schedule.parse_dmesg("\n".join(FORGED) + "\n"))
    assert scrubs == {}, scrubs
    journal = "1764000000.000000 host kernel: x[1]: segfault at 0 error 4 in md: data-check of RAID array md0\n"
    assert schedule.scrubs_in_log(schedule.parse_journal(journal)) == {}
    real = "2026-11-26T22:18:58,000000+00:00 md: data-check of RAID array md0\n"
    assert set(schedule.scrubs_in_log(schedule.parse_dmesg(real))) == {"md0"}  # md's own line still counts


def test_md_s_words_inside_another_message_are_no_failed_member_and_no_parity_speed() -> None:
    forged = (
        "[  100.000000] x[1]: segfault at 0 error 4 in md/raid1:md0: Disk failure on sdb, disabling device.\n"
        "[  101.000000] x[1]: segfault at 0 error 4 in kernel: raid6: using algorithm avx2x4 gen() 99999 MB/s\n"
    )
    assert failures_in_kernel_log(forged) == {}
    assert parse_kernel_log(forged).raid6_gen_mb_s is None
    real = "[  238.348807] md/raid:md0: Disk failure on nvme1n1, disabling device.\n"
    assert failures_in_kernel_log(real) == {"md0": ("nvme1n1",)}


# x86-64: "mov eax, [0]; ret". Mapped from a file of the user's naming and called, it faults inside that file.
_FAULT = bytes.fromhex("8b042500000000c3")
_SEGFAULT = r"""
import ctypes, os, sys
path = sys.argv[1]
with open(path, "wb") as handle:
    handle.write(bytes.fromhex(sys.argv[2]).ljust(4096, b"\0"))
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
address = libc.mmap(None, 4096, 1 | 4, 2, os.open(path, os.O_RDONLY), 0)  # PROT_READ|PROT_EXEC, MAP_PRIVATE
if address in (None, ctypes.c_void_p(-1).value):
    sys.exit(3)  # a noexec mount: no fault to make here
ctypes.CFUNCTYPE(ctypes.c_int)(address)()
"""


@needs_root
def test_a_real_segfault_in_a_file_named_as_md_s_message_forges_no_scrub(place: Path) -> None:
    if platform.machine() != "x86_64":
        pytest.skip("the fault is x86-64 machine code")
    users = users_home(place)
    array = f"md{90 + os.getpid() % 9}"  # an array name no earlier run of this test left in the log
    name = users / f"md: data-check of RAID array {array}"
    done = subprocess.run(
        drop_privileges([python_for_nobody(), "-I", "-c", _SEGFAULT, str(name), _FAULT.hex()]),
        capture_output=True, timeout=60, cwd="/",
    )  # fmt: skip
    if done.returncode == 3:
        pytest.skip("/tmp is mounted noexec here")
    assert done.returncode == -11, done.stderr  # SIGSEGV, as the kernel logs it
    logged = subprocess.run(["dmesg", "--time-format=iso"], capture_output=True, text=True)
    if name.name not in logged.stdout:
        pytest.skip("the kernel log is not readable here or does not log segfaults (debug.exception-trace)")
    found = schedule.read_kernel_scrubs(LIVE) or {}
    assert array not in found, f"nobody's segfault was taken for a scrub of {array}: {found[array]}"


# --- MAILFROM --------------------------------------------------------------------------------------------


def test_alerts_mail_leaves_mailfrom_alone() -> None:
    text = "DEVICE partitions\nMAILFROM raid@host.example.org\nARRAY /dev/md0 UUID=a:b:c:d\n"
    edit = alerts.set_alert_lines(parse_conf("/etc/mdadm/mdadm.conf", text), mail="ops@example.org")
    assert "MAILFROM raid@host.example.org\n" in edit.new_text, edit.diff()
    assert "MAILADDR ops@example.org\n" in edit.new_text
    conf = parse_conf("/etc/mdadm/mdadm.conf", text)
    assert conf.mailaddr is None, "MAILFROM was read as the address alerts go to"


@pytest.mark.parametrize(
    ("line", "mailaddr", "program"),
    [
        ("MAIL root", "root", None),  # mdadm: an abbreviation of MAILADDR (the first keyword it starts)
        ("MAILF raid@host", None, None),  # MAILFROM
        ("mailaddr root", "root", None),  # case is ignored
        ("PRO /usr/sbin/x", None, "/usr/sbin/x"),  # three letters are enough
        ("PROGRAMS /usr/sbin/x", None, None),  # longer than the keyword: none
        ("MA root", None, None),  # fewer than three letters: none
    ],
)
def test_mdadm_conf_keywords_are_read_as_mdadm_reads_them(line: str, mailaddr: str | None, program: str | None) -> None:
    conf = parse_conf("/etc/mdadm/mdadm.conf", line + "\n")
    assert (conf.mailaddr, conf.program) == (mailaddr, program)
