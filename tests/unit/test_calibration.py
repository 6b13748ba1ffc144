"""md's ceilings calibrated on this host: the kernel's parity lines, the stored file (and attacks on it), which
ceilings a prediction uses, and calibrate's plan, leftovers and teardown (never anyone else's devices)."""

from __future__ import annotations

import dataclasses
import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

import mdtui.execute.calibrate as calibrate
import mdtui.execute.null_blk as null_blk
from mdtui import actionlog
from mdtui.cli.main import main
from mdtui.command import CommandResult
from mdtui.execute.argv import fio_argv
from mdtui.execute.calibrate import layer_latency, parity_speeds, plan_calibration
from mdtui.execute.null_blk import Paths, remove_devices
from mdtui.execute.record import system_context
from mdtui.plan.figures import FIELD, MemberFigures
from mdtui.plan.forecast import MemberSource, forecast, forecast_lines
from mdtui.plan.levels import level_from_name
from mdtui.probe.kernel_log import parse_kernel_log
from mdtui.probe.root import SystemRoot
from mdtui.probe.system import cpu_model, parse_cpu_model
from mdtui.store.calibration import (
    CALIBRATION_FILE,
    Calibration,
    HostId,
    LevelCeilings,
    choose_ceilings,
    field_ceilings,
    host_ceilings,
    load_calibration,
    save_calibration,
    this_host,
)

# A 6.1 kernel's boot log (the form Debian 12 prints): one line per raid6 candidate, then the choice.
LOG_NEW = """\
raid6: avx2x4   gen() 17190 MB/s
raid6: avx2x2   gen() 16384 MB/s
raid6: using algorithm avx2x4 gen() 17190 MB/s
raid6: .... xor() 10234 MB/s, rmw enabled
xor: automatically using best checksumming function   avx
xor: using function: avx (24000 MB/sec)
"""
# A 4.x kernel's: xor lists each routine's speed, then names the best without a figure.
LOG_OLD = """\
xor: measuring software checksum speed
   prefetch64-sse: 11436.000 MB/sec
   generic_sse:  9936.000 MB/sec
xor: using function: prefetch64-sse (11436.000 MB/sec)
raid6: sse2x4   gen()  9510 MB/s
raid6: sse2x2   gen()  7621 MB/s
"""
MEMBER = MemberFigures(
    seq_read_bytes_per_s=3000e6,
    seq_write_bytes_per_s=3000e6,
    rand_read_iops=500e3,
    rand_write_iops=400e3,
    q1_read_latency_s=80e-6,
    basis="given",
)


def calibration(host: HostId | None = None, days: float = 3) -> Calibration:
    return Calibration(
        host=host or this_host(),
        measured_at=datetime.now(UTC) - timedelta(days=days, minutes=5),
        levels={
            "raid0": LevelCeilings(None, None, None, 9e9, 900e3, 8e9, 800e3),
            "raid5": LevelCeilings(1.5e9, 90e3, 24e9, 7e9, 600e3, write_latency_s=30e-6),
            "raid6": LevelCeilings(1.2e9, 70e3, 18e9, 6e9, 550e3, write_latency_s=35e-6),
        },
        layer_latency_s=12e-6,
    )


# The field's ceilings a prediction on this host gets without a calibration of it (this kernel's).
FIELD_HERE = field_ceilings(this_host().kernel)


# --- the kernel's lines ------------------------------------------------------------------------------


def test_parity_speeds_new_kernel() -> None:
    xor, raid6 = parity_speeds(parse_kernel_log(LOG_NEW))
    assert xor == pytest.approx(24000 * 1000 * 1024)
    assert raid6 == pytest.approx(17190 * (1 << 20))


def test_parity_speeds_old_kernel_takes_the_chosen_or_best() -> None:
    xor, raid6 = parity_speeds(parse_kernel_log(LOG_OLD))
    assert xor == pytest.approx(11436 * 1000 * 1024)
    assert raid6 == pytest.approx(9510 * (1 << 20))


def test_parity_speeds_not_in_the_log_are_none_never_zero() -> None:
    assert parity_speeds(None) == (None, None) and parity_speeds(parse_kernel_log("")) == (None, None)
    zeros = "raid6: using algorithm avx2x4 gen() 0 MB/s\nxor: using function: avx (0 MB/sec)\n"
    assert parity_speeds(parse_kernel_log(zeros)) == (
        None,
        None,
    )


def test_layer_latency_never_negative() -> None:
    assert layer_latency(10e-6, 25e-6) == pytest.approx(15e-6)
    assert layer_latency(30e-6, 25e-6) == 0.0  # noise: md cannot make a read faster
    assert layer_latency(None, 25e-6) is None


def test_cpu_model() -> None:
    assert parse_cpu_model("processor\t: 0\nmodel name\t: AMD  EPYC 7302\n") == "AMD EPYC 7302"
    assert parse_cpu_model("") == "unknown"


# /proc/cpuinfo as three kernels print it (the fields arch/*/kernel/*proc.c writes; values made up).
MIPS_CPUINFO = "system type\t\t: MT7621\nmachine\t\t\t: ER-X\nprocessor\t\t: 0\ncpu model\t\t: MIPS 1004Kc V2.15\n"
ARM32_CPUINFO = "Processor\t: ARMv7 Processor rev 10 (v7l)\nprocessor\t: 0\nBogoMIPS\t: 1996.00\n"
ARM64_CPUINFO = "processor\t: 0\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\nCPU part\t: 0xd0c\n"


@pytest.mark.parametrize(
    ("cpuinfo", "model"),
    [(MIPS_CPUINFO, "MIPS 1004Kc V2.15"), (ARM32_CPUINFO, "ARMv7 Processor rev 10 (v7l)"), (ARM64_CPUINFO, "0xd0c")],
)
def test_a_calibration_and_a_stored_run_name_the_same_cpu(cpuinfo: str, model: str, tmp_path: Path) -> None:
    """One reader (probe.system): a MIPS host's calibration said "unknown" while its runs named the CPU."""
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc" / "cpuinfo").write_text(cpuinfo)
    root = SystemRoot(tmp_path)
    assert parse_cpu_model(cpuinfo) == model
    assert system_context(root)["cpu_model"] == model == cpu_model(root) == this_host(root=root).cpu_model


# --- the stored file ---------------------------------------------------------------------------------


def test_stored_calibration_round_trips(tmp_path: Path) -> None:
    stored = calibration()
    save_calibration(stored, tmp_path)
    assert oct((tmp_path / CALIBRATION_FILE).stat().st_mode & 0o777) == "0o600"
    assert load_calibration(tmp_path) == stored


def test_a_layer_latency_of_zero_is_kept_and_used(tmp_path: Path) -> None:
    # The lab's calibration measured the raid0 a hair faster than one member at Q1 and stored md's layer as 0
    # (never negative); loading refused 0 as "not a positive number" and every prediction fell back to the
    # field figures. A stripe figure of 0 is still refused: md cannot write nothing a second.
    stored = dataclasses.replace(calibration(), layer_latency_s=0.0)
    save_calibration(stored, tmp_path)
    assert load_calibration(tmp_path) == stored
    choice = host_ceilings(tmp_path)
    assert choice.note == "" and choice.for_level("raid5").layer_latency_s == 0.0
    document: Any = stored.as_json()
    document["levels"]["raid5"]["stripe_write_bytes_per_s"] = 0
    (tmp_path / CALIBRATION_FILE).write_text(json.dumps(document))
    assert "not a positive number" in host_ceilings(tmp_path).note


def test_a_link_in_place_of_the_file_is_not_followed(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    planted = tmp_path / "planted.json"
    # The attack: a link to a file claiming md is 100x faster here than it is.
    planted.write_text(json.dumps(calibration().as_json()))
    (state / CALIBRATION_FILE).symlink_to(planted)
    choice = host_ceilings(state)
    assert choice.for_level("raid5") == FIELD_HERE
    assert "symbolic link" in choice.note and "field figures" in choice.note
    # Writing replaces the link itself; the file it pointed at is left as it was.
    before = planted.read_text()
    save_calibration(calibration(days=0), state)
    assert planted.read_text() == before
    assert not (state / CALIBRATION_FILE).is_symlink()


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        "[]",
        '{"version": 1}',
        "tampered-negative",
        "tampered-nan",
        "tampered-cpus",
        "tampered-level",
    ],
)
def test_a_malformed_file_is_one_line_and_field_figures(tmp_path: Path, text: str) -> None:
    document: Any = calibration().as_json()
    if text == "tampered-negative":
        document["levels"]["raid5"]["stripe_write_bytes_per_s"] = -1
    elif text == "tampered-nan":
        document["layer_latency_s"] = float("nan")
    elif text == "tampered-cpus":
        document["host"]["cpus"] = "many"
    elif text == "tampered-level":
        document["levels"]["raid7"] = document["levels"]["raid5"]
    data = json.dumps(document) if text.startswith("tampered") else text
    tmp_path.chmod(0o700)
    (tmp_path / CALIBRATION_FILE).write_text(data)
    (tmp_path / CALIBRATION_FILE).chmod(0o600)
    choice = host_ceilings(tmp_path)
    assert choice.for_level("raid5") == FIELD_HERE
    assert "not used" in choice.note
    assert "\n" not in choice.note


def test_a_calibration_of_another_kernel_is_not_used() -> None:
    here = this_host()
    other = HostId(here.cpu_model, here.cpus, "5.10.0-99-amd64")
    choice = choose_ceilings(calibration(other), here)
    assert choice.for_level("raid6") == FIELD_HERE
    assert "calibrated for kernel 5.10.0-99-amd64, not this one: run `mdtui calibrate`" in choice.note


def test_a_calibration_of_another_cpu_is_not_used() -> None:
    here = this_host()
    choice = choose_ceilings(calibration(HostId("Some Other CPU", here.cpus + 1, here.kernel)), here)
    assert choice.for_level("raid5") == FIELD_HERE
    assert "Some Other CPU" in choice.note


def test_no_calibration_says_field_figures() -> None:
    choice = choose_ceilings(None, this_host())
    assert choice.for_level("raid5") == FIELD_HERE
    assert choice.note == "md's ceilings are field figures: run `mdtui calibrate`"


# --- the choice in predictions -----------------------------------------------------------------------


def test_a_calibration_here_caps_the_prediction_with_its_basis() -> None:
    choice = choose_ceilings(calibration(), this_host())
    members = [MemberSource(f"d{i}", MEMBER, "given", md=choice) for i in range(4)]
    raid5 = forecast(level_from_name("5"), members, layout=None, chunk_bytes=None)
    raid6 = forecast(level_from_name("6"), members, layout=None, chunk_bytes=None)
    assert raid5 is not None and raid6 is not None
    # Members could write 3 x 3000 MB/s; the stripe thread measured here writes 1.5 GB/s (raid6: 1.2).
    assert raid5.seq_write_bytes_per_s.value == pytest.approx(1.5e9)
    assert raid6.seq_write_bytes_per_s.value == pytest.approx(1.2e9)
    assert raid5.seq_write_bytes_per_s.basis == "calibrated here 3 d ago"
    assert raid5.q1_read_latency_s.value == pytest.approx(80e-6 + 12e-6)
    field = forecast(level_from_name("5"), [MemberSource("d", MEMBER, "given")] * 4, layout=None, chunk_bytes=None)
    assert field is not None and field.seq_write_bytes_per_s.basis == FIELD
    lines = forecast_lines(forecast(level_from_name("5"), members, layout=None, chunk_bytes=None), members)
    assert not any("field figures" in line for line in lines)


def test_field_ceilings_say_so_in_the_forecast() -> None:
    members = [MemberSource(f"d{i}", MEMBER, "given", md=choose_ceilings(None, this_host())) for i in range(4)]
    lines = forecast_lines(forecast(level_from_name("5"), members, layout=None, chunk_bytes=None), members)
    assert "  note: md's ceilings are field figures: run `mdtui calibrate`" in lines


def test_predict_cli_names_the_calibrated_basis(capsys: pytest.CaptureFixture[str]) -> None:
    figures = "seq-read=3000MB/s,seq-write=3000MB/s,rand-read=500k,rand-write=400k,q1-read=80us,rotational=no"
    assert main(["predict", "--level", "5", "--members", "4", "--member-figures", figures, "--json"]) == 0
    before = json.loads(capsys.readouterr().out)
    assert before["basis"]["seq_write_mb_s"] == "field figure"
    assert main(["predict", "--level", "5", "--members", "4", "--member-figures", figures]) == 0
    assert "note: md's ceilings are field figures: run `mdtui calibrate`" in capsys.readouterr().out
    save_calibration(calibration())  # the test's own state directory (tests/conftest.py)
    assert main(["predict", "--level", "5", "--members", "4", "--member-figures", figures, "--json"]) == 0
    after = json.loads(capsys.readouterr().out)
    assert after["predicted"]["seq_write_mb_s"] == 1500
    assert after["basis"]["seq_write_mb_s"].startswith("calibrated here")
    assert main(["predict", "--level", "5", "--members", "4", "--member-figures", figures]) == 0
    assert "field figures" not in capsys.readouterr().out


# --- calibrate's plan, leftovers and teardown --------------------------------------------------------


def fake_kernel(tmp_path: Path) -> Paths:
    paths = Paths(configfs=tmp_path / "config", sys_block=tmp_path / "sys" / "block", proc=tmp_path / "proc")
    (paths.nullb).mkdir(parents=True)
    paths.sys_block.mkdir(parents=True)
    (tmp_path / "sys" / "module" / "null_blk").mkdir(parents=True)
    (paths.proc / "self").mkdir(parents=True)
    (paths.proc / "self" / "mounts").write_text(f"sysfs /sys sysfs rw 0 0\nconfigfs {paths.configfs} configfs rw 0 0\n")
    return paths


def dead_pid() -> int:
    pid = 4_000_000  # above any pid_max: no such process
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    return pid


def test_plan_names_only_our_own_devices_and_the_predictions_jobs(tmp_path: Path) -> None:
    paths = fake_kernel(tmp_path)
    (paths.nullb / "nullb0").mkdir()  # someone else's
    (paths.nullb / f"mdtui-cal-{os.getppid()}-0").mkdir()  # a calibration still running
    (paths.nullb / f"mdtui-cal-{dead_pid()}-2").mkdir()  # a killed one's
    (paths.sys_block / "md126").mkdir()
    plan = plan_calibration(paths, pid=4242)
    assert plan.names == tuple(f"mdtui-cal-4242-{i}" for i in range(4))
    assert plan.leftovers == (f"mdtui-cal-{dead_pid()}-2",)
    assert plan.md_device.startswith("/dev/md") and plan.md_device != "/dev/md126"
    assert not plan.load_module
    argv = plan.create_argv("raid5", ["/dev/nullb1", "/dev/nullb2", "/dev/nullb3", "/dev/nullb4"])
    assert argv[:3] == ["mdadm", "--create", plan.md_device]
    assert "--bitmap=none" not in plan.create_argv("raid0", ["/dev/a", "/dev/b", "/dev/c", "/dev/d"])
    for option in ("--run", "--assume-clean", "--bitmap=none", "--metadata=1.2", "--chunk=512", "--raid-devices=4"):
        assert option in argv
    found = {m.key: m.spec for m in calibrate.measurements(plan.md_device, "/dev/nullb1", "raid5")}
    assert set(found) == {"raid5 seq read", "raid5 random read", "raid5 seq write", "raid5 random write",
                          "raid5 Q1 write"}  # fmt: skip
    assert "--chunk=512" not in plan.create_argv("raid1", ["/dev/a", "/dev/b", "/dev/c", "/dev/d"])
    seq = found["raid5 seq write"]
    seq_argv = fio_argv(seq)
    # SEQ1MQ8T8 with each job in its own region, as execute.argv builds it for the predictions.
    assert {"--bs=1m", "--iodepth=8", "--numjobs=8", "--rw=write", "--offset_increment=12%"} <= set(seq_argv)
    text = "\n".join(plan.lines())
    assert "mdadm --create" in text and "fio" in text and "nullb0" not in text


def test_plan_refuses_without_configfs_in_one_line(tmp_path: Path) -> None:
    paths = fake_kernel(tmp_path)
    # The directory is there (configfs is built in) but nothing is mounted on it.
    (paths.proc / "self" / "mounts").write_text("sysfs /sys sysfs rw 0 0\n")
    with pytest.raises(calibrate.MdtuiError, match="configfs is not mounted"):
        plan_calibration(paths)


def test_teardown_leaves_an_array_with_someone_elses_member(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = fake_kernel(tmp_path)
    ours = paths.nullb / "mdtui-cal-7-0"
    ours.mkdir()
    (ours / "power").write_text("1\n")
    (ours / "index").write_text("3\n")
    # md5 holds our nullb3 and the admin's sdb: not ours to stop.
    (paths.sys_block / "md5" / "slaves").mkdir(parents=True)
    (paths.sys_block / "md5" / "slaves" / "nullb3").touch()
    (paths.sys_block / "md5" / "slaves" / "sdb").touch()
    # md9 is only ours (a killed run's array): stopped.
    (paths.sys_block / "md9" / "slaves").mkdir(parents=True)
    (paths.sys_block / "md9" / "slaves" / "nullb3").touch()
    theirs = paths.nullb / "nullb0"
    theirs.mkdir()
    (theirs / "power").write_text("1\n")
    ran: list[list[str]] = []

    def fake_run(argv: list[str], **_: Any) -> CommandResult:
        ran.append(list(argv))
        return CommandResult(tuple(argv), 0, "", "", 0.0)

    removed: list[str] = []
    monkeypatch.setattr(calibrate, "run_command", fake_run)
    monkeypatch.setattr(actionlog, "run_command", fake_run)  # the commands that change things are logged
    monkeypatch.setattr(calibrate.os, "rmdir", lambda path: removed.append(str(path)))
    problems = remove_devices(paths, ["mdtui-cal-7-0"], lambda line: None)
    assert ran == [["mdadm", "--stop", "/dev/md9"]]
    assert any("/dev/md5 holds devices that are not ours" in p for p in problems)
    assert removed == [str(ours)]
    assert (ours / "power").read_text() == "0"
    assert (theirs / "power").read_text() == "1\n"


def test_calibrate_is_refused_under_root_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--root", str(tmp_path), "calibrate", "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mdtui: --root") and err.count("\n") == 1


def test_calibrate_is_refused_without_root(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert main(["calibrate", "--dry-run"]) == 2
    assert "run it as root" in capsys.readouterr().err


def test_the_device_is_named_after_its_directory_on_new_kernels(tmp_path: Path) -> None:
    paths = fake_kernel(tmp_path)
    ours = paths.nullb / "mdtui-cal-7-0"
    ours.mkdir()
    (ours / "power").write_text("1\n")
    (ours / "index").write_text("0\n")
    # 4.x-5.18: nullb<index>; 6.1 (the lab's): the directory's name ("null_blk: disk x created").
    assert null_blk.device_of(paths, "mdtui-cal-7-0") == "/dev/nullb0"
    (paths.sys_block / "mdtui-cal-7-0").mkdir()
    assert null_blk.device_of(paths, "mdtui-cal-7-0") == "/dev/mdtui-cal-7-0"
    (ours / "power").write_text("0\n")
    assert null_blk.device_of(paths, "mdtui-cal-7-0") is None


@pytest.mark.parametrize("how", ["error", "sigterm"])
def test_everything_made_is_removed_on_error_and_on_sigterm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    import signal

    paths = fake_kernel(tmp_path)
    theirs = paths.nullb / "nullb0"
    theirs.mkdir()
    real_write = null_blk._write

    def kernel_write(path: Path, value: str) -> None:
        real_write(path, value)
        if path.name == "power" and value == "1":
            real_write(path.parent / "index", str(len(os.listdir(paths.nullb))))

    def fake_run(argv: list[str], **_: Any) -> CommandResult:
        if argv[0] == "fio":  # the members alone run before any array: a fio document for each
            job = {"read": {"lat_ns": {"mean": 9000}}, "write": {"lat_ns": {"mean": 11000}}}
            return CommandResult(tuple(argv), 0, json.dumps({"jobs": [job]}), "", 0.0)
        if argv[:2] == ["mdadm", "--create"]:
            if how == "sigterm":
                os.kill(os.getpid(), signal.SIGTERM)
            raise calibrate.MdtuiError("mdadm exited with code 1")
        return CommandResult(tuple(argv), 0, "", "", 0.0)

    monkeypatch.setattr(null_blk, "_write", kernel_write)
    monkeypatch.setattr(calibrate, "run_command", fake_run)
    monkeypatch.setattr(actionlog, "run_command", fake_run)  # the commands that change things are logged
    real_rmdir = os.rmdir

    def configfs_rmdir(path: Path) -> None:
        # configfs removes a device's attribute files with its directory; a plain directory needs them gone.
        for child in Path(path).iterdir():
            child.unlink()
        real_rmdir(path)

    monkeypatch.setattr(calibrate.os, "rmdir", configfs_rmdir)
    monkeypatch.setattr(null_blk.time, "sleep", lambda seconds: None)
    plan = plan_calibration(paths, pid=4242)
    lines: list[str] = []
    with pytest.raises(calibrate.MdtuiError, match="SIGTERM" if how == "sigterm" else "mdadm exited"):
        calibrate.execute(plan, paths, lines.append, confirmed=plan.confirmation)
    assert sorted(os.listdir(paths.nullb)) == ["nullb0"]
    assert sum(line.startswith("made ") for line in lines) == 4
    assert signal.getsignal(signal.SIGTERM) is not None


def test_seconds_out_of_range_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["calibrate", "--dry-run", "--seconds", "0"])
    err = capsys.readouterr().err
    assert "1 to 60 seconds" in err and "Traceback" not in err


def test_the_plan_runs_each_fio_for_the_seconds_asked(tmp_path: Path) -> None:
    plan = plan_calibration(fake_kernel(tmp_path), pid=1, runtime_s=2)
    fio_lines = [line for line in plan.lines() if " fio --" in line]
    # Two on one member alone; four on each of five levels; raid0's Q1 read, raid1's and raid5's Q1 write.
    assert len(fio_lines) == 2 + 5 * 4 + 3 and all("--runtime=2" in line for line in fio_lines)


def test_a_level_not_measured_keeps_the_field_ceiling() -> None:
    stored = calibration()
    stored.levels["raid6"] = LevelCeilings(None, 70e3, None)
    choice = choose_ceilings(stored, this_host())
    assert choice.for_level("raid6") == FIELD_HERE
    assert choice.for_level("raid5").stripe_write_bytes_per_s == pytest.approx(1.5e9)
