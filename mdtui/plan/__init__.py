"""Pure planning: a request becomes a validated plan (argv, predicted size and speed, warnings)."""

from mdtui.plan.create import CreatePlan, CreateRequest, member_path, plan_create
from mdtui.plan.destroy import DestroyPlan, DestroyStep, plan_destroy
from mdtui.plan.levels import (
    LEVELS,
    LINEAR,
    RAID0,
    RAID1,
    RAID4,
    RAID5,
    RAID6,
    RAID10,
    RaidLevel,
    level_from_name,
)
from mdtui.plan.rejected import PlanRejected

__all__ = [
    "LEVELS",
    "LINEAR",
    "RAID0",
    "RAID1",
    "RAID4",
    "RAID5",
    "RAID6",
    "RAID10",
    "CreatePlan",
    "CreateRequest",
    "DestroyPlan",
    "DestroyStep",
    "PlanRejected",
    "RaidLevel",
    "level_from_name",
    "member_path",
    "plan_create",
    "plan_destroy",
]
