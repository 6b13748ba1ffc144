"""Which findings are an array's own, what limits it, and the command that runs a finding's experiment."""

from __future__ import annotations

from mdtui.advise.about import about_array, array_of, experiment_command, host_wide, limiting, subjects
from mdtui.advise.findings import Finding, Severity, Topic, short_title
from mdtui.model.array import ArrayMember, MdArray

MD0 = MdArray("md0", "active", "raid6", (ArrayMember("sdb", 0), ArrayMember("sdc", 1)))


def finding(id: str, topic: Topic = Topic.PERFORMANCE, experiment: str | None = None, title: str = "t") -> Finding:
    return Finding(id, Severity.WARNING, title, (), "why", "do", experiment=experiment, topic=topic)


def test_subjects_come_from_the_id() -> None:
    assert subjects(finding("busy-member:md0:sdc")) == ("md0", "sdc")
    assert subjects(finding("unsteady-write:/dev/md10")) == ("md10",)
    assert subjects(finding("monitor")) == ()
    assert array_of(finding("knob-sweep:md3:stripe_cache_size")) == "md3"
    assert array_of(finding("link-downgraded:sdc")) is None


def test_an_arrays_own_findings_include_its_members_and_not_a_lookalike() -> None:
    found = [
        finding("boot-unlisted:md0", Topic.KEEPING),
        finding("link-downgraded:sdc"),
        finding("slow-member:md01"),  # another array's name that starts alike
        finding("degraded:md10", Topic.KEEPING),
        finding("monitor", Topic.KEEPING),
        finding("governor-powersave"),
    ]
    assert [f.id for f in about_array(found, MD0)] == ["boot-unlisted:md0", "link-downgraded:sdc"]
    assert [f.id for f in host_wide(found)] == ["monitor", "governor-powersave"]
    # What limits it: the first about performance, not the first of all.
    assert limiting(about_array(found, MD0)) is found[1]
    assert limiting([found[0]]) is None


def test_the_experiment_command_names_the_array() -> None:
    assert experiment_command(finding("slow-member:md6", experiment="weakest-link")) == (
        "mdtui bench --preset weakest-link --target md6"
    )
    assert experiment_command(finding("knob-sweep:md0:group_thread_cnt", experiment="knob-sweep")) == (
        "mdtui experiment knob --knob group_thread_cnt --values A,B --target md0"
    )
    assert experiment_command(finding("governor-powersave", experiment="governor-ab")) == (
        "mdtui experiment governor-ab --target ARRAY"
    )
    assert experiment_command(finding("degraded:md0")) is None


def test_a_short_title_is_a_first_clause_that_says_something() -> None:
    assert short_title(finding("x", title="md0 is not in /etc/mdadm.conf: after a reboot")) == (
        "md0 is not in /etc/mdadm.conf"
    )
    assert short_title(finding("x", title="sda: link trained at 3 Gbps: 300 MB/s usable")) == (
        "sda: link trained at 3 Gbps"
    )
    assert short_title(finding("x", title="sdan limits md6 to 8 × 600 MB/s")) == "sdan limits md6 to 8 × 600 MB/s"
