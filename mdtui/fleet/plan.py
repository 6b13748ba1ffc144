"""A fleet plan: one preset, the same steps on every host, each host's target checked on the host itself."""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from mdtui.bench.plan import members_presets, preset_steps
from mdtui.bench.requests import BenchRequest
from mdtui.errors import PlanError, SafetyError
from mdtui.execute.presets import PRESETS, PresetTarget, Step
from mdtui.execute.presets import preset as find_preset
from mdtui.execute.record import step_title
from mdtui.fleet.client import client_argv, job_file, sandbox_ids
from mdtui.fleet.hosts import Host
from mdtui.fleet.remote import RemoteCheck, RemoteInventory, check_target, remote_path, remote_scan
from mdtui.format import plural

# What fio's server can run: the registry's presets but those it marks local_only.
FLEET_PRESETS = tuple(sorted(p.key for p in PRESETS if not p.local_only))

Scanner = Callable[[Host], RemoteInventory | str]
# Hosts are scanned over ssh at once, this many at a time: a host that hangs costs its own timeout, not
# every later host's turn.
MAX_PARALLEL_SCANS = 16


@dataclass(frozen=True)
class HostPlan:
    host: Host
    target: str
    steps: tuple[Step, ...]
    members: tuple[str, ...] = ()
    inventory: RemoteInventory | None = None
    no_inventory: str = ""  # why there is no remote inventory
    check: RemoteCheck = field(default_factory=RemoteCheck)

    @property
    def refusals(self) -> tuple[str, ...]:
        return self.check.refusals


@dataclass(frozen=True)
class FleetPlan:
    request: BenchRequest
    preset_key: str
    hosts: tuple[HostPlan, ...]
    serial: bool = False
    slack_s: float = 30.0

    @property
    def writes(self) -> bool:
        return any(step.writes for plan in self.hosts for step in plan.steps)

    @property
    def label(self) -> str:
        return self.request.label or f"{self.preset_key} {self.request.target}"

    @property
    def refusals(self) -> tuple[str, ...]:
        return tuple(refusal for plan in self.hosts for refusal in plan.refusals)

    @property
    def confirmation(self) -> str:
        """What a user types to let the fleet's writes go ahead: the target as given."""
        return self.request.target

    def ensure_allowed(self) -> None:
        if self.refusals:
            raise SafetyError(
                f"refusing to run {self.preset_key} on {plural(len(self.hosts), 'host')}: it writes, and\n  - "
                + "\n  - ".join(self.refusals)
            )

    def describe(self) -> list[str]:
        mode = "one host at a time" if self.serial else "all hosts at once"
        first = self.hosts[0]
        lines = [
            f"{self.preset_key} on {self.request.target} on {plural(len(self.hosts), 'host')}, {mode}: "
            f"{plural(len(first.steps), 'step')} each",
            f"WRITES to {self.request.target} on every host: its data will be overwritten"
            if self.writes
            else "read-only (fio's server gets --readonly)",
        ]
        for plan in self.hosts:
            known = "inventory over ssh" if plan.inventory is not None else f"no inventory: {plan.no_inventory}"
            members = f", members {', '.join(plan.members)}" if plan.members else ""
            lines.append(f"  {plan.host.label}: {plan.target}{members} ({known})")
        lines.append("  steps (the same job file goes to each host):")
        for index, step in enumerate(first.steps, 1):
            lines.append(f"  {index}. {step_title(step)}")
            for spec in step.jobs:
                argv = client_argv(first.host, f"{spec.name}.fio", writes=spec.writes)
                options = " ".join(line for line in job_file(spec).splitlines()[1:])
                lines.append(f"     {shlex.join(argv)}   # {options}")
        lines += [f"✖ {refusal}" for refusal in self.refusals]
        return lines


def _steps(request: BenchRequest, target: str, members: Sequence[str]) -> tuple[Step, ...]:
    # Fixed-time steps: a fleet's job files carry no steady-state criterion, so every host runs as long.
    on = PresetTarget(target, members=tuple(members), quick=request.quick)
    return preset_steps(find_preset(request.preset), on, request.options)


def scan_hosts(hosts: Sequence[Host], scanner: Scanner = remote_scan) -> list[RemoteInventory | str]:
    """Every host's inventory (or why none), in the hosts' order, at most MAX_PARALLEL_SCANS at once."""
    if not hosts:
        return []

    def scan(host: Host) -> RemoteInventory | str:
        try:
            return scanner(host)
        except Exception as exc:  # one host's surprise refuses that host, not the whole fleet
            return f"the scan of {host.label} failed: {exc}"

    with ThreadPoolExecutor(max_workers=min(MAX_PARALLEL_SCANS, len(hosts)), thread_name_prefix="ssh-scan") as pool:
        return list(pool.map(scan, hosts))


def plan_fleet(
    request: BenchRequest,
    hosts: Sequence[Host],
    *,
    serial: bool = False,
    ssh: bool = True,
    slack_s: float = 30.0,
    scanner: Scanner = remote_scan,
) -> FleetPlan:
    """The preset on every host; each host's target (and members) from its own inventory when ssh reaches it."""
    if not hosts:
        raise PlanError("no host given: --host HOST[:PORT] (repeatable) or --hosts FILE")
    chosen = find_preset(request.preset)
    key = chosen.key
    if chosen.local_only:
        raise PlanError(
            f"{key} cannot run through fio's server: {chosen.local_only}; on many hosts run " + ", ".join(FLEET_PRESETS)
        )
    if request.members and not chosen.needs_members:
        raise PlanError(f"--members only applies to {members_presets()}")
    sandbox_ids()  # no unprivileged user to run fio's client as: refused before anything runs
    target = remote_path(request.target)
    given_members = tuple(remote_path(m) for m in request.members)
    plans = []
    for host, found in zip(hosts, scan_hosts(hosts, scanner) if ssh else [None] * len(hosts), strict=True):
        inventory: RemoteInventory | None = None
        why = "not asked for (--no-ssh)"
        if found is not None:
            if isinstance(found, RemoteInventory):
                inventory = found
            else:
                why = found
        members: tuple[str, ...] = ()
        if chosen.needs_members:
            members = given_members
            if not members and inventory is not None and (array := inventory.array(target)) is not None:
                members = tuple(inventory.active_members(array))
            if not members:
                raise PlanError(
                    f"{host.label}: the weakest-link run needs the array's members: list them with --members "
                    f"(no inventory of {host.label}: {why})"
                    if inventory is None
                    else f"{host.label}: {target} is not an array there; list the devices with --members"
                )
            if target in members:
                raise PlanError(f"{target} is both the target and one of its members")
        steps = _steps(request, target, members)
        writes = any(step.writes for step in steps)
        check = check_target(host, target, inventory if inventory is not None else why, writes=writes)
        plans.append(HostPlan(host, target, steps, members, inventory, "" if inventory else why, check))
    return FleetPlan(request, key, tuple(plans), serial=serial, slack_s=slack_s)


def host_context(plan: HostPlan, fleet_id: str, hosts: Sequence[Host]) -> dict[str, Any]:
    """What is stored with each of a host's runs: the host, the fleet, and the host's own inventory."""
    context: dict[str, Any] = {
        "host": plan.host.label,
        "fleet": {"id": fleet_id, "host": plan.host.label, "hosts": [h.label for h in hosts]},
    }
    if plan.inventory is not None:
        context.update(plan.inventory.context())
        if plan.check.devices:
            context["devices"] = list(plan.check.devices)
    else:
        context["remote_scan"] = f"none: {plan.no_inventory}"
    return context
