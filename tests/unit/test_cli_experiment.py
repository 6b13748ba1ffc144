"""`mdtui experiment` on a captured tree: parsing, refusals, the plan printout, and the sweep reaching mdadm confirmed.

mdadm and fio are stood in for here (a recorder for execute_create, a runner that stores figures); the real md
runs are in the lab (tests/lab/test_experiments.py).
"""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

import mdtui.cli.experiment_context as experiment_context
from mdtui.advise.experiments import ExperimentCancelled
from mdtui.cli.main import main
from mdtui.execute import mdadm
from mdtui.plan.create import CreatePlan
from mdtui.store.records import Metrics, RunSetup, RunStatus
from mdtui.store.runs import ResultsStore

TREE = str(Path(__file__).resolve().parents[1] / "fixtures" / "trees" / "real-links")
# The tree stands for a live host here: mdadm's create and every runner are recorders that touch nothing.
pytestmark = pytest.mark.usefixtures("tree_stands_for_live")
# The two free disks of the captured tree (everything else is an md member, mounted or an LVM PV).
FREE = ("nvme4n1", "loop0")


class CreateRecorder:
    """Stands in for mdadm.execute_create: records each plan and whether it came confirmed."""

    def __init__(self) -> None:
        self.calls: list[tuple[CreatePlan, bool]] = []

    def __call__(self, plan: CreatePlan, *, confirmed: str | None, **kwargs: Any) -> mdadm.CreateOutcome:
        self.calls.append((plan, confirmed))
        return mdadm.CreateOutcome(plan.request.device, None, (), None)


class FakeRunner:
    """Stands in for BenchRunner: stores one complete run per call with a figure that grows with each call."""

    instances: list[FakeRunner] = []

    def __init__(
        self,
        store: ResultsStore,
        root: Any,
        *,
        allow_writes_to: Sequence[str] = (),
        cancel: threading.Event | None = None,
        on_event: Any = None,
        fixed_time: bool = False,
    ) -> None:
        self.fixed_time = fixed_time
        self.store = store
        self.allow_writes_to = frozenset(allow_writes_to)
        self.cancel = cancel
        self.calls: list[tuple[str, str, str, dict[str, Any]]] = []
        FakeRunner.instances.append(self)

    def __call__(self, preset_key: str, target: str, *, quick: bool, label: str, **options: Any) -> Sequence[int]:
        self.calls.append((preset_key, target, label, options))
        moment = datetime(2026, 5, 1, tzinfo=UTC)
        figure = 100e6 * (len(self.calls) + 1)
        steps = ("SEQ1MQ8T1 read", "RND4KQ1T1 read") if preset_key == "disk-mark" else ("read",)
        return [
            self.store.add_run(
                RunSetup(preset=preset_key, target=target, label=label, params={"step": step}),
                status=RunStatus.COMPLETE,
                started_at=moment,
                ended_at=moment,
                metrics=Metrics(read_bw_bytes_per_s=figure, read_iops=figure / 4096),
            )
            for step in steps
        ]


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch) -> CreateRecorder:
    recording = CreateRecorder()
    monkeypatch.setattr(mdadm, "execute_create", recording)
    return recording


@pytest.fixture
def runner(monkeypatch: pytest.MonkeyPatch) -> type[FakeRunner]:
    FakeRunner.instances = []
    monkeypatch.setattr(experiment_context, "BenchRunner", FakeRunner)
    return FakeRunner


@pytest.fixture
def no_tty(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(""))


def experiment(tmp_path: Path, *args: str) -> int:
    return main(["--root", TREE, "experiment", *args, "--db", str(tmp_path / "results.db")])


def test_help_lists_the_four_experiments(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["experiment", "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    for name in ("governor-ab", "parallelism", "chunk-sweep", "levels"):
        assert name in out


@pytest.mark.parametrize(
    "args",
    [
        ["chunk-sweep", "--chunks", "64,512", "nvme4n1"],  # --level missing
        ["chunk-sweep", "--level", "0", "--chunks", "64,abc", "nvme4n1"],
        ["levels", "--levels", "0,7", "nvme4n1"],
        ["parallelism", "--target", "md0", "--numjobs", "0"],
        ["governor-ab"],  # --target missing
    ],
)
def test_bad_arguments_are_usage_errors(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["experiment", *args])
    assert exit_info.value.code == 2
    assert "error:" in capsys.readouterr().err


def test_parsing_fills_defaults() -> None:
    from mdtui.cli.main import build_parser

    args = build_parser().parse_args(["experiment", "levels", "--chunk", "128", "sdb", "sdc"])
    assert [level.name for level in args.levels] == ["raid0", "raid10", "raid5", "raid6"]
    assert (args.chunk, args.preset, args.members, args.yes) == (128, "disk-mark", ["sdb", "sdc"], False)
    args = build_parser().parse_args(["experiment", "chunk-sweep", "--level", "5", "--chunks", "64,2048", "a", "b"])
    assert (args.chunks, args.preset) == ((64, 2048), "offset-sweep")


def test_refuses_without_yes_and_without_a_tty(
    tmp_path: Path,
    recorder: CreateRecorder,
    runner: type[FakeRunner],
    no_tty: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = experiment(tmp_path, "chunk-sweep", "--level", "0", "--chunks", "64,512", *FREE)
    captured = capsys.readouterr()
    assert code == 2
    assert "refusing" in captured.err and "--yes" in captured.err
    assert "Traceback" not in captured.err
    assert recorder.calls == []
    assert all(not r.calls for r in runner.instances)


def test_the_plan_lists_every_chunk_points_argv(
    tmp_path: Path,
    recorder: CreateRecorder,
    runner: type[FakeRunner],
    no_tty: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    experiment(tmp_path, "chunk-sweep", "--level", "0", "--chunks", "64,512,2048", "--device", "md9", *FREE)
    out = capsys.readouterr().out
    for chunk in (64, 512, 2048):
        assert f"mdadm --create /dev/md9 --run --level=0 --raid-devices=2 --chunk={chunk}K" in out
    assert "Members that will be overwritten: nvme4n1 (/dev/nvme4n1), loop0 (/dev/loop0)" in out


def test_an_unknown_member_is_named(
    tmp_path: Path, recorder: CreateRecorder, runner: type[FakeRunner], capsys: pytest.CaptureFixture[str]
) -> None:
    code = experiment(tmp_path, "levels", "--yes", "nvme4n1", "nvme9n1")
    err = capsys.readouterr().err
    assert code == 2
    assert "no disk 'nvme9n1' found" in err and "Traceback" not in err
    assert recorder.calls == []


def test_a_member_in_use_is_refused_before_anything_runs(
    tmp_path: Path, recorder: CreateRecorder, runner: type[FakeRunner], capsys: pytest.CaptureFixture[str]
) -> None:
    # nvme0n1 is an active member of md0 in the captured tree.
    code = experiment(tmp_path, "chunk-sweep", "--level", "0", "--yes", "nvme4n1", "nvme0n1")
    assert code == 2
    assert "nvme0n1" in capsys.readouterr().err
    assert recorder.calls == []
    assert all(not r.calls for r in runner.instances)


def test_a_wrong_typed_confirmation_runs_nothing(
    tmp_path: Path,
    recorder: CreateRecorder,
    runner: type[FakeRunner],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    monkeypatch.setattr("builtins.input", lambda prompt: "/dev/md8")
    code = experiment(tmp_path, "chunk-sweep", "--level", "0", "--chunks", "64", "--device", "md9", *FREE)
    assert code == 1
    assert "Cancelled; nothing was run." in capsys.readouterr().out
    assert recorder.calls == []


def test_with_yes_the_chunk_sweep_creates_each_point_confirmed(
    tmp_path: Path, recorder: CreateRecorder, runner: type[FakeRunner], capsys: pytest.CaptureFixture[str]
) -> None:
    code = experiment(
        tmp_path,
        "chunk-sweep",
        "--level",
        "0",
        "--chunks",
        "64,512",
        "--device",
        "md9",
        "--preset",
        "custom",
        "--runtime",
        "5",
        "--yes",
        *FREE,
    )
    out = capsys.readouterr().out
    assert code == 0, out
    created = [(plan.chunk_bytes, confirmed) for plan, confirmed in recorder.calls]
    assert created == [(64 << 10, "/dev/md9"), (512 << 10, "/dev/md9")]
    measuring = runner.instances[-1]
    assert measuring.allow_writes_to == {"/dev/md9", "/dev/nvme4n1"}  # only what the user confirmed
    assert [(target, label) for _, target, label, _ in measuring.calls] == [
        ("/dev/nvme4n1", "raw member nvme4n1"),
        ("/dev/md9", "raid0 chunk 64 KiB"),
        ("/dev/md9", "raid0 chunk 512 KiB"),
    ]
    assert all(options == {"runtime_s": 5} for *_, options in measuring.calls)
    assert "raid0 chunk 64 KiB: #2" in out and "raid0 chunk 512 KiB: #3" in out
    # The normalised table: each array ÷ (raw member × 2 data disks): 300e6 / (200e6 × 2) = 0.75.
    assert "0.75" in out and "|" in out
    with ResultsStore(tmp_path / "results.db") as store:
        assert [run.label for run in store.get_runs([1, 2, 3])] == [
            "raw member nvme4n1",
            "raid0 chunk 64 KiB",
            "raid0 chunk 512 KiB",
        ]


def test_levels_prints_ratio_tables_and_skips_what_two_members_cannot_make(
    tmp_path: Path, recorder: CreateRecorder, runner: type[FakeRunner], capsys: pytest.CaptureFixture[str]
) -> None:
    code = experiment(tmp_path, "levels", "--levels", "0,5,6", "--device", "md9", "--yes", "--json", *FREE)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "raid5 skipped" in captured.err and "raid6 skipped" in captured.err
    assert [(plan.level.name, confirmed) for plan, confirmed in recorder.calls] == [("raid0", "/dev/md9")]
    assert runner.instances[-1].allow_writes_to == {"/dev/md9"}
    report = json.loads(captured.out)
    assert [point["label"] for point in report["points"]] == ["raid0"]
    assert len(report["tables"]) == 2  # one per disk-mark step the fake stored


def test_a_level_the_members_cannot_make_is_refused_before_any_create(
    tmp_path: Path, recorder: CreateRecorder, runner: type[FakeRunner], capsys: pytest.CaptureFixture[str]
) -> None:
    # raid10 over a 1 GiB and a 256 MiB disk would waste 60%: every plan is checked before the first create.
    code = experiment(tmp_path, "levels", "--levels", "0,10", "--yes", *FREE)
    err = capsys.readouterr().err
    assert code == 2
    assert "differ so much in size" in err and "Traceback" not in err
    assert recorder.calls == []


def test_ctrl_c_between_runs_exits_130_with_a_message(
    tmp_path: Path, recorder: CreateRecorder, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    class Stopped(FakeRunner):
        def __call__(self, preset_key: str, target: str, *, quick: bool, label: str, **options: Any) -> Sequence[int]:
            ids = super().__call__(preset_key, target, quick=quick, label=label, **options)
            assert self.cancel is not None
            self.cancel.set()  # as the SIGINT handler does
            return ids

    monkeypatch.setattr(experiment_context, "BenchRunner", Stopped)
    code = experiment(tmp_path, "chunk-sweep", "--level", "0", "--chunks", "64,512", "--yes", *FREE)
    err = capsys.readouterr().err
    assert code == 130
    assert "experiment stopped" in err and "#1" in err and "Traceback" not in err
    assert recorder.calls == []  # stopped after the baseline, before the first array


def test_a_run_that_stops_inside_the_engine_exits_130(
    tmp_path: Path, recorder: CreateRecorder, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    class Cancelled(FakeRunner):
        def __call__(self, *args: Any, **kwargs: Any) -> Sequence[int]:
            raise ExperimentCancelled("offset-sweep on /dev/nvme4n1 was stopped; runs kept: [1]")

    monkeypatch.setattr(experiment_context, "BenchRunner", Cancelled)
    code = experiment(tmp_path, "parallelism", "--target", "nvme4n1", "--quick")
    assert code == 130
    assert "was stopped" in capsys.readouterr().err


def test_fixed_time_reaches_the_runner_and_runs_every_sweep_point(
    tmp_path: Path, runner: type[FakeRunner], capsys: pytest.CaptureFixture[str]
) -> None:
    assert experiment(tmp_path, "parallelism", "--target", "nvme4n1", "--quick", "--fixed-time") == 0
    assert runner.instances and all(instance.fixed_time for instance in runner.instances)
    assert [call[2] for call in runner.instances[-1].calls] == ["numjobs 1", "numjobs 4", "numjobs 16", "numjobs 64"]
    assert experiment(tmp_path, "parallelism", "--target", "nvme4n1", "--quick") == 0
    assert not runner.instances[-1].fixed_time
