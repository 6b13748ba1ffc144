"""The block-device graph from /sys/block: partitions, holders, slaves, and device numbers."""

from __future__ import annotations

from dataclasses import dataclass, field

from mdtui.probe.root import SystemRoot


@dataclass
class BlockTree:
    """Who sits on top of whom, so a mount or swap on dm-0 can be traced down to its disks."""

    major_minor: dict[str, str] = field(default_factory=dict)  # node name -> "8:0"
    parent: dict[str, str] = field(default_factory=dict)  # partition -> whole disk
    partitions: dict[str, list[str]] = field(default_factory=dict)
    slaves: dict[str, list[str]] = field(default_factory=dict)
    holders: dict[str, list[str]] = field(default_factory=dict)
    dm_names: dict[str, str] = field(default_factory=dict)
    top_level: list[str] = field(default_factory=list)

    @classmethod
    def read(cls, root: SystemRoot) -> BlockTree:
        tree = cls()
        for name in root.listdir("/sys/block"):
            base = f"/sys/block/{name}"
            tree.top_level.append(name)
            mm = root.read_text(f"{base}/dev")
            if mm:
                tree.major_minor[name] = mm
            tree.slaves[name] = root.listdir(f"{base}/slaves")
            tree.holders[name] = root.listdir(f"{base}/holders")
            dm_name = root.read_text(f"{base}/dm/name")
            if dm_name:
                tree.dm_names[name] = dm_name
            parts = []
            for entry in root.listdir(base):
                # The kernel names a partition after its disk (sda1, nvme0n1p1): other entries need no stat.
                if entry.startswith(name) and root.path(f"{base}/{entry}/partition").exists():
                    parts.append(entry)
                    tree.parent[entry] = name
                    part_mm = root.read_text(f"{base}/{entry}/dev")
                    if part_mm:
                        tree.major_minor[entry] = part_mm
                    tree.holders[entry] = root.listdir(f"{base}/{entry}/holders")
            tree.partitions[name] = parts
        return tree

    def node_by_major_minor(self, mm: str) -> str | None:
        return next((name for name, value in self.major_minor.items() if value == mm), None)

    def node_for_source(self, source: str) -> str | None:
        """Map a mount or swap source such as /dev/sda1 or /dev/mapper/vg-root to a node name."""
        if not source.startswith("/dev/"):
            return None
        tail = source[len("/dev/") :]
        if tail.startswith("mapper/"):
            wanted = tail[len("mapper/") :]
            return next((dm for dm, name in self.dm_names.items() if name == wanted), None)
        if tail in self.major_minor or tail in self.partitions:
            return tail
        return None

    def disks_under(self, node: str, _seen: set[str] | None = None) -> set[str]:
        """Whole disks that a node (partition, dm, md or disk) is built from."""
        seen = _seen if _seen is not None else set()
        if node in seen:
            return set()
        seen.add(node)
        if node in self.parent:
            return self.disks_under(self.parent[node], seen)
        slaves = self.slaves.get(node, [])
        if not slaves:
            return {node}
        disks: set[str] = set()
        for slave in slaves:
            disks |= self.disks_under(slave, seen)
        return disks

    def nodes_under(self, node: str) -> set[str]:
        """Every node ``node`` is built from, itself included: a partition's disk, a dm or md device's slaves, on
        down to the whole disks (a file on md0p1 sits on md0p1, md0, and md0's members)."""
        found: set[str] = set()
        pending = [node]
        while pending:
            current = pending.pop()
            if current in found:
                continue
            found.add(current)
            if current in self.parent:
                pending.append(self.parent[current])
            pending.extend(self.slaves.get(current, []))
        return found

    def describe(self, node: str) -> str:
        name = self.dm_names.get(node)
        return f"{node} ({name})" if name else node
