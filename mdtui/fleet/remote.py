"""What is known about a remote host: its own `mdtui scan --json` over SSH, and the in-use rules on it.

fio's server runs whatever job it is sent, as the user it runs as, with no authentication; mdtui is the
only thing between a typo and a remote disk's data. So a job that writes to a remote device runs only
when the host's own inventory (read by mdtui on that host, as root) says the device is free; without
one, writes to remote devices are refused and reads run with --readonly.
"""

from __future__ import annotations

import contextlib
import ipaddress
import itertools
import json
import os
import posixpath
import re
import selectors
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mdtui.errors import PlanError
from mdtui.fleet.hosts import Host
from mdtui.text import clean_line, clean_strings

SSH_CONNECT_TIMEOUT_S = 5
SSH_COMMAND_TIMEOUT_S = 60.0
REMOTE_SCAN_MAX_BYTES = 16 << 20
SSH_STDERR_MAX_BYTES = 64 << 10
_READ_CHUNK = 1 << 16
_KERNEL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:!+-]{0,63}")
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


def remote_path(text: str) -> str:
    """A target on a remote host as one canonical absolute path: `md0` is /dev/md0; relative paths refused.

    `//dev/sda`, `/./dev/sda` and `/dev/../dev/sda` are all /dev/sda, so the in-use rules, which key on
    /dev/, see every spelling of a device.
    """
    text = text.strip()
    if not text:
        raise PlanError("no target given: name the device or file on the hosts (md0, /dev/nvme0n1, /srv/x.dat)")
    if any(ord(c) < 32 or ord(c) == 127 for c in text):
        raise PlanError(f"{text!r}: a remote target may not hold control characters")
    if "/" not in text:
        if not _KERNEL_NAME.fullmatch(text):
            raise PlanError(f"{text!r} is not a device name: give /dev/NAME or an absolute path")
        return f"/dev/{text}"
    if not text.startswith("/"):
        raise PlanError(f"{text!r} is a relative path: on a remote host give an absolute path (/srv/x.dat)")
    path = posixpath.normpath(text)
    return "/" + path.lstrip("/")


Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def _own_addresses() -> set[Address]:
    """This machine's addresses: the kernel's local routes (IPv4), its IPv6 addresses, its own name's."""
    found: set[Address] = set()
    with contextlib.suppress(OSError):
        lines = Path("/proc/net/fib_trie").read_text().splitlines()
        for previous, line in itertools.pairwise(lines):
            if line.strip() == "/32 host LOCAL" and "--" in previous:
                with contextlib.suppress(ValueError):
                    found.add(ipaddress.ip_address(previous.split("--")[-1].strip()))
    with contextlib.suppress(OSError):
        for line in Path("/proc/net/if_inet6").read_text().splitlines():
            with contextlib.suppress(ValueError, IndexError):
                found.add(ipaddress.IPv6Address(int(line.split()[0], 16)))
    with contextlib.suppress(OSError, UnicodeError):
        found |= {address for address, _ in _resolve(socket.gethostname())}
    return found


def _resolve(name: str) -> list[tuple[Address, str]]:
    infos = socket.getaddrinfo(name, None, proto=socket.IPPROTO_TCP)
    out = []
    for info in infos:
        text = str(info[4][0]).split("%", 1)[0]
        with contextlib.suppress(ValueError):
            out.append((ipaddress.ip_address(text), text))
    return out


def _this_machine(address: Address, own: set[Address]) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback or address.is_unspecified or address in own


def loopback_reason(host: Host) -> str | None:
    """Why ssh to ``host`` could reach this machine (None when it cannot), from every address it resolves to.

    The host is resolved once, here: 127.1, 2130706433, 0.0.0.0, ``localhost.``, ::ffff:127.0.0.1 and
    this machine's own name or addresses all lead back to this machine (an SSH tunnel, a forwarded port),
    so the inventory ssh would bring back describes this machine, not the fio server's.
    """
    try:
        addresses = _resolve(host.name)
    except (OSError, UnicodeError) as exc:
        return f"{host.name} does not resolve ({clean_line(str(exc))}), so ssh cannot reach it to check its disks"
    if not addresses:
        return f"{host.name} does not resolve to any address, so ssh cannot reach it to check its disks"
    own = _own_addresses()
    local = sorted({text for address, text in addresses if _this_machine(address, own)})
    if local:
        return (
            f"{host.name} is a loopback address or this machine ({', '.join(local)}: an SSH tunnel or a "
            "forwarded port), so ssh to it would reach this machine, not the one the fio server runs on"
        )
    return None


def is_loopback(host: Host) -> bool:
    return loopback_reason(host) is not None


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

    def parent_disk(self, path: str) -> dict[str, Any] | None:
        """The whole disk ``path`` is, or the one it is a partition of (sdc1 -> sdc); None when neither."""
        disk = self.disk(path)
        if disk is not None:
            return disk
        name = path.removeprefix("/dev/")
        for disk in self.disks():
            if name in (disk.get("partitions") or []):
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
            states = member.get("states")
            states = states if isinstance(states, list) else []
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


@dataclass(frozen=True)
class _Output:
    returncode: int
    stdout: bytes
    stderr: bytes


def read_capped(argv: list[str], *, timeout_s: float, max_bytes: int) -> _Output | str:
    """Run argv and read its output, stopping it at ``max_bytes`` of stdout or ``timeout_s``: never more.

    A remote host decides what ssh prints; the cap holds while reading, so a host printing without end
    costs at most ``max_bytes`` of memory and ``timeout_s`` of time. A sentence when it did not finish.
    """
    if shutil.which(argv[0]) is None:
        return f"{argv[0]} is not installed"
    try:
        process = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
        )
    except OSError as exc:
        return f"{argv[0]} could not start: {exc.strerror or exc}"
    assert process.stdout is not None and process.stderr is not None
    out_fd, err_fd = process.stdout.fileno(), process.stderr.fileno()
    buffers = {out_fd: bytearray(), err_fd: bytearray()}
    limits = {out_fd: max_bytes, err_fd: SSH_STDERR_MAX_BYTES}
    deadline = time.monotonic() + timeout_s
    failure = ""
    with selectors.DefaultSelector() as selector:
        for stream in (process.stdout, process.stderr):
            selector.register(stream, selectors.EVENT_READ)
        while selector.get_map() and not failure:
            left = deadline - time.monotonic()
            if left <= 0:
                failure = f"did not finish within {timeout_s:g} s"
                break
            for key, _ in selector.select(left):
                chunk = os.read(key.fd, _READ_CHUNK)
                if not chunk:
                    selector.unregister(key.fileobj)
                    continue
                buffer = buffers[key.fd]
                buffer += chunk[: max(0, limits[key.fd] - len(buffer))]
                if key.fd == out_fd and len(buffer) >= max_bytes:
                    failure = f"printed more than {max_bytes} bytes"
                    break
    if failure:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    try:
        returncode = process.wait(timeout=max(0.1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        returncode = process.wait()
        failure = failure or f"did not finish within {timeout_s:g} s"
    process.stdout.close()
    process.stderr.close()
    if failure:
        return failure
    return _Output(returncode, bytes(buffers[out_fd]), bytes(buffers[err_fd]))


def _is_str_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _disk_problem(disk: Any) -> str | None:
    if not isinstance(disk, dict):
        return "a disk entry is not an object"
    name = disk.get("name")
    if not isinstance(name, str) or not _KERNEL_NAME.fullmatch(name):
        return f"a disk's name {str(name)[:40]!r} is not a kernel device name"
    for key in ("dev_path", "by_id_path", "model", "serial"):
        if not (disk.get(key) is None or isinstance(disk.get(key), str)):
            return f"disk {name}: {key} is not text"
    if not (disk.get("link") is None or isinstance(disk.get("link"), dict)):
        return f"disk {name}: link is not an object"
    partitions = disk.get("partitions", [])
    if not _is_str_list(partitions) or not all(_KERNEL_NAME.fullmatch(p) for p in partitions):
        return f"disk {name}: partitions is not a list of device names"
    if not _is_str_list(disk.get("problems", [])):
        return f"disk {name}: problems is not a list of text"
    return _reasons_problem(disk.get("in_use", []), f"disk {name}")


def _reasons_problem(in_use: Any, where: str) -> str | None:
    if not isinstance(in_use, list):
        return f"{where}: in_use is not a list"
    for item in in_use:
        if not isinstance(item, dict) or not isinstance(item.get("kind"), str):
            return f"{where}: an in_use entry has no kind"
        if not isinstance(item.get("detail", ""), str):
            return f"{where}: an in_use detail is not text"
    return None


def _array_problem(array: Any) -> str | None:
    if not isinstance(array, dict):
        return "an array entry is not an object"
    name = array.get("name")
    if not isinstance(name, str) or not _KERNEL_NAME.fullmatch(name):
        return f"an array's name {str(name)[:40]!r} is not a kernel device name"
    members = array.get("members", [])
    if not isinstance(members, list):
        return f"array {name}: members is not a list"
    for member in members:
        if not isinstance(member, dict) or not isinstance(member.get("name"), str):
            return f"array {name}: a member has no name"
        if not _KERNEL_NAME.fullmatch(member["name"]) or not _is_str_list(member.get("states", [])):
            return f"array {name}: member {member['name'][:40]!r} is not a device name with a list of states"
    for key in ("level", "layout", "metadata", "bitmap", "uuid", "dev_path"):
        if not (array.get(key) is None or isinstance(array.get(key), str)):
            return f"array {name}: {key} is not text"
    for key in ("raid_disks", "chunk_bytes"):
        value = array.get(key)
        if not (value is None or (isinstance(value, int) and not isinstance(value, bool))):
            return f"array {name}: {key} is not a whole number"
    if "in_use" in array:
        return _reasons_problem(array["in_use"], f"array {name}")
    return None


def inventory_problem(data: Any) -> str | None:
    """What makes ``data`` not mdtui's `scan --json` inventory, checked by type before any of it is used."""
    if not isinstance(data, dict):
        return "not an object"
    if not isinstance(data.get("disks"), list) or not isinstance(data.get("arrays", []), list):
        return "no list of disks and arrays"
    if not isinstance(data.get("privileged", False), bool):
        return "privileged is not true or false"
    for disk in data["disks"]:
        if (problem := _disk_problem(disk)) is not None:
            return problem
    for array in data.get("arrays", []):
        if (problem := _array_problem(array)) is not None:
            return problem
    return None


def remote_scan(host: Host) -> RemoteInventory | str:
    """The host's inventory through `ssh HOST mdtui scan --json`, or a sentence saying why there is none."""
    if (local := loopback_reason(host)) is not None:
        return local
    command = f"`ssh {host.name} mdtui scan --json`"
    result = read_capped(
        ssh_argv(host, "mdtui scan --json"), timeout_s=SSH_COMMAND_TIMEOUT_S, max_bytes=REMOTE_SCAN_MAX_BYTES
    )
    if isinstance(result, str):
        return f"{command} {result}"
    if result.returncode != 0:
        lines = result.stderr.decode("utf-8", "replace").strip().splitlines()
        tail = clean_line(lines[-1])[:300] if lines else f"exit code {result.returncode}"
        return f"{command} failed: {tail}"
    try:
        data = json.loads(result.stdout.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return f"{command} did not print JSON"
    if (problem := inventory_problem(data)) is not None:
        return f"{command} printed JSON that is not mdtui's inventory: {clean_line(problem)}"
    kernel = governor = ""
    extra = read_capped(ssh_argv(host, _CONTEXT_SCRIPT), timeout_s=SSH_COMMAND_TIMEOUT_S, max_bytes=4096)
    if isinstance(extra, _Output) and extra.returncode == 0:
        lines = extra.stdout.decode("utf-8", "replace").strip().splitlines()
        kernel, governor = [*lines, "", ""][:2]
    return RemoteInventory(host, clean_strings(data), clean_line(kernel)[:200], clean_line(governor)[:200])


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
    path = remote_path(path)
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
        refusals = [f"{where} is in use: {reason}" for reason in _reasons(array) if not reason.startswith("md-member")]
        for member in inventory.active_members(array):
            # A member may be a partition (md1 on sdc1): the rules are the whole disk's, whose in-use reasons
            # trace a mount or swap on anything stacked on it (the array included) down to it.
            member_disk = inventory.parent_disk(member)
            if member_disk is None:
                refusals.append(
                    f"{where}: member {member} is neither a disk nor a partition in the host's inventory, so "
                    "mdtui cannot check what uses it"
                )
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
