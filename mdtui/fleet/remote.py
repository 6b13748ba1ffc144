"""What is known about a remote host: its own `mdtui scan --json` over SSH, and the in-use rules on it.

fio's server runs whatever job it is sent, as the user it runs as, with no authentication; mdtui is the
only thing between a typo and a remote disk's data. So a job that writes to a remote device runs only
when the host's own inventory (read by mdtui on that host, as root) says the device is free; without
one, writes to remote devices are refused and reads run with --readonly.
"""

from __future__ import annotations

import ipaddress
import json
from dataclasses import dataclass, field
from typing import Any

from mdtui.command import run_command
from mdtui.errors import MdtuiError
from mdtui.fleet.hosts import Host

SSH_CONNECT_TIMEOUT_S = 5
SSH_COMMAND_TIMEOUT_S = 60.0
REMOTE_SCAN_MAX_CHARS = 16 << 20
# In-use reasons of an array's members that mean the array itself is in use (a mount or swap on the
# array traces down to its members); md-member is what every member has and says nothing.
_ARRAY_BLOCKING = frozenset({"root-filesystem", "mounted", "swap", "holder", "open-exclusive"})
_CONTEXT_SCRIPT = (
    "uname -r; cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor 2>/dev/null || echo 'not available'"
)


def ssh_argv(host: Host, command: str) -> list[str]:
    """ssh that never asks for a password and gives up on an unreachable host quickly."""
    return [
        "ssh",
        "-o",
        "BatchMode=yes",
        "-o",
        f"ConnectTimeout={SSH_CONNECT_TIMEOUT_S}",
        "--",
        host.name,
        command,
    ]


def is_loopback(host: Host) -> bool:
    if host.name.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.name).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class RemoteInventory:
    """A host's `mdtui scan --json`, with its kernel and governor."""

    host: Host
    data: dict[str, Any]
    kernel: str = ""
    governor: str = ""

    @property
    def privileged(self) -> bool:
        return bool(self.data.get("privileged"))

    def _list(self, key: str) -> list[dict[str, Any]]:
        value = self.data.get(key)
        return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []

    def disks(self) -> list[dict[str, Any]]:
        return self._list("disks")

    def arrays(self) -> list[dict[str, Any]]:
        return self._list("arrays")

    def disk(self, path: str) -> dict[str, Any] | None:
        name = path.removeprefix("/dev/")
        for disk in self.disks():
            if path in (disk.get("dev_path"), disk.get("by_id_path")) or name == disk.get("name"):
                return disk
        return None

    def array(self, path: str) -> dict[str, Any] | None:
        name = path.removeprefix("/dev/")
        for array in self.arrays():
            if name == array.get("name") or path == array.get("dev_path"):
                return array
        return None

    def active_members(self, array: dict[str, Any]) -> list[str]:
        members = array.get("members")
        names = []
        for member in members if isinstance(members, list) else []:
            if not isinstance(member, dict) or not isinstance(member.get("name"), str):
                continue
            states = member.get("states") if isinstance(member.get("states"), list) else []
            if "spare" in states or "faulty" in states:
                continue
            names.append(f"/dev/{member['name']}")
        return names

    def array_config(self, array: dict[str, Any]) -> dict[str, Any]:
        """The array as the store keeps it (level, chunk, layout, members with model, serial and link)."""
        config = {
            key: array[key]
            for key in ("level", "raid_disks", "chunk_bytes", "layout", "bitmap", "metadata", "uuid")
            if array.get(key) is not None
        }
        members = []
        for path in self.active_members(array):
            disk = self.disk(path) or {}
            info: dict[str, Any] = {"name": path.removeprefix("/dev/")}
            for key in ("model", "serial"):
                if disk.get(key):
                    info[key] = disk[key]
            if disk.get("link"):
                info["link"] = json.dumps(disk["link"], sort_keys=True)
            members.append(info)
        config["members"] = members
        return config

    def context(self) -> dict[str, Any]:
        context: dict[str, Any] = {"remote_scan": "ssh"}
        if self.kernel:
            context["kernel"] = self.kernel
        if self.governor:
            context["governor"] = self.governor
        return context


def remote_scan(host: Host) -> RemoteInventory | str:
    """The host's inventory through `ssh HOST mdtui scan --json`, or a sentence saying why there is none."""
    if is_loopback(host):
        return (
            f"{host.name} is a loopback address (an SSH tunnel or a forwarded port), so ssh to it would reach "
            "this machine, not the one the fio server runs on"
        )
    try:
        result = run_command(ssh_argv(host, "mdtui scan --json"), timeout_s=SSH_COMMAND_TIMEOUT_S)
    except MdtuiError as exc:
        return f"`ssh {host.name} mdtui scan --json` could not run: {exc}"
    if not result.ok:
        tail = result.stderr.strip().splitlines()[-1] if result.stderr.strip() else f"exit code {result.returncode}"
        return f"`ssh {host.name} mdtui scan --json` failed: {tail}"
    if len(result.stdout) > REMOTE_SCAN_MAX_CHARS:
        return f"`ssh {host.name} mdtui scan --json` printed more than {REMOTE_SCAN_MAX_CHARS} characters"
    try:
        data = json.loads(result.stdout)
    except (ValueError, RecursionError):
        return f"`ssh {host.name} mdtui scan --json` did not print JSON"
    if not isinstance(data, dict) or not isinstance(data.get("disks"), list):
        return f"`ssh {host.name} mdtui scan --json` printed JSON that is not mdtui's inventory"
    kernel = governor = ""
    try:
        extra = run_command(ssh_argv(host, _CONTEXT_SCRIPT), timeout_s=SSH_COMMAND_TIMEOUT_S)
        if extra.ok:
            lines = extra.stdout.strip().splitlines()
            kernel, governor = [*lines, "", ""][:2]
    except MdtuiError:
        pass
    return RemoteInventory(host, data, kernel.strip()[:200], governor.strip()[:200])


@dataclass(frozen=True)
class RemoteCheck:
    """Why writes may not run on a host's target (empty when they may), and what is known about it."""

    refusals: tuple[str, ...] = ()
    array: dict[str, Any] = field(default_factory=dict)
    devices: tuple[dict[str, Any], ...] = ()


def _reasons(disk: dict[str, Any]) -> list[str]:
    found = []
    for item in disk.get("in_use") or []:
        if isinstance(item, dict):
            found.append(f"{item.get('kind', '?')} ({item.get('detail', '')})".replace(" ()", ""))
    for problem in disk.get("problems") or []:
        found.append(f"could not be checked: {problem}")
    return found


def check_target(host: Host, path: str, inventory: RemoteInventory | str | None, *, writes: bool) -> RemoteCheck:
    """The in-use rules on the host's own inventory; a write without an inventory is refused, naming why."""
    if isinstance(inventory, RemoteInventory):
        array = inventory.array(path)
        disk = inventory.disk(path)
        config = inventory.array_config(array) if array is not None else {}
        devices = (disk,) if disk is not None else ()
    else:
        array, disk, config, devices = None, None, {}, ()
    if not writes:
        return RemoteCheck((), config, devices)
    where = f"{host.label}: {path}"
    if not isinstance(inventory, RemoteInventory):
        why = inventory or "no remote inventory was asked for (--no-ssh)"
        return RemoteCheck(
            (
                f"{where}: writes to a remote target need the host's own inventory to check the in-use rules, "
                f"and there is none: {why}",
            ),
        )
    if not inventory.privileged:
        return RemoteCheck((f"{where}: mdtui scan ran without root there, so not every in-use rule was checked",))
    if not path.startswith("/dev/"):
        return RemoteCheck((), config, devices)  # a file, as locally: fio creates or overwrites it
    if array is not None:
        refusals = []
        for member in inventory.active_members(array):
            member_disk = inventory.disk(member)
            if member_disk is None:
                continue
            for item in member_disk.get("in_use") or []:
                if isinstance(item, dict) and item.get("kind") in _ARRAY_BLOCKING:
                    refusals.append(
                        f"{where} is in use: member {member} is {item.get('kind')} ({item.get('detail', '')})"
                    )
        return RemoteCheck(tuple(dict.fromkeys(refusals)), config, devices)
    if disk is not None:
        reasons = _reasons(disk)
        return RemoteCheck(tuple(f"{where} is in use: {reason}" for reason in reasons), config, devices)
    return RemoteCheck(
        (
            f"{where} is neither a whole disk nor an md array in the host's inventory, so mdtui cannot check "
            "what uses it",
        ),
    )
