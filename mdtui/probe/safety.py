"""An array's write safety as the kernel reports it (bitmap location and chunk, consistency policy), and where a
bitmap file would land: what mdtui checks before mdadm writes one."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable

from mdtui.ascii_numbers import parse_int
from mdtui.model.safety import LiveSafety
from mdtui.probe.blocktree import BlockTree
from mdtui.probe.root import SystemRoot
from mdtui.rootsafe import path_problem

_ROOT = frozenset({0})  # mdadm writes the bitmap as root: only root may own the way to it


def bitmap_kind(root: SystemRoot, array: str) -> str | None:
    """``array``'s bitmap as sysfs says it: none, internal, file (sysfs does not name it) or lockless; None
    when sysfs does not say (no md/bitmap/location and no lockless bitmap). The one reading of these files,
    for the scan and the safety plan alike.

    md/bitmap/location is "none", "file" or the bitmap's signed offset from the superblock ("+8": internal);
    kernel 6.18's md/bitmap_type lists the bitmap types with the array's in brackets ("none bitmap [llbitmap]").
    """
    base = f"/sys/block/{array}/md"
    if _chosen(root.read_text(f"{base}/bitmap_type")) == "llbitmap":
        return "lockless"
    location = root.read_text(f"{base}/bitmap/location")
    if not location:
        return None
    # Anything but none and file is an offset from the superblock: the bitmap lives in the metadata.
    return location if location in ("none", "file") else "internal"


def _chosen(types: str | None) -> str | None:
    """The bracketed word of a sysfs choice list ("none [bitmap] llbitmap"), or the lone word written alone."""
    words = (types or "").split()
    chosen = [word[1:-1] for word in words if len(word) > 2 and word[0] == "[" and word[-1] == "]"]
    if chosen:
        return chosen[0]
    return words[0] if len(words) == 1 else None


def read_live_safety(root: SystemRoot, array: str, *, bitmap: str | None = None) -> LiveSafety | None:
    """``array``'s bitmap and policy from /sys/block/<array>/md; None when md does not answer for it.

    bitmap: the array's bitmap as a scan just read it (MdArray.bitmap, a file's path for a file), so the plan
    and the scan say one thing; read here (bitmap_kind) when None. md/consistency_policy is resync, bitmap, ppl
    or journal.
    """
    base = f"/sys/block/{array}/md"
    policy = root.read_text(f"{base}/consistency_policy")
    if policy is None:
        return None
    if bitmap is None:
        bitmap = bitmap_kind(root, array)
    kind = "file" if bitmap is not None and bitmap.startswith("/") else (bitmap or "none")
    chunk = parse_int((root.read_text(f"{base}/bitmap/chunksize") or "").strip(), hi=1 << 50)
    return LiveSafety(kind, chunk if kind != "none" else None, policy.strip())


def bitmap_file_problems(root: SystemRoot, path: str, members: Iterable[str]) -> list[str]:
    """Why mdadm must not write a bitmap file at ``path`` for an array of ``members`` (kernel names).

    The file must be new (mdtui never overwrites a file it did not create), in a directory no one but root can
    write, below directories no one but root can change (rootsafe.path_problem), and reached through no link
    (else another user could plant a link between this check and mdadm's write, and mdadm would follow it),
    and not on the array's members or any md array (the bitmap must survive what it protects against).
    """
    found: list[str] = []
    if not root.is_live:
        return ["a bitmap file is written by mdadm on the live system: refused under --root"]
    if os.path.lexists(path):
        return [f"{path} exists: mdtui writes a bitmap file only where there is none (it never overwrites a file)"]
    directory = os.path.dirname(path) or "/"
    if os.path.realpath(directory) != directory:
        found.append(f"{directory} is reached through a link: name the directory itself")
    try:
        info = os.stat(directory)
    except OSError as exc:
        return [*found, f"{directory}: {exc.strerror or exc}"]
    if not stat.S_ISDIR(info.st_mode):
        return [*found, f"{directory} is not a directory"]
    if info.st_uid != 0 or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        found.append(
            f"{directory} may be written by someone other than root (owner uid {info.st_uid}, mode "
            f"{stat.S_IMODE(info.st_mode):o}): another user could put a link where the bitmap goes"
        )
    elif problem := path_problem(directory, owners=_ROOT):
        # The directory is root's, but a directory above it (or where a link leads) is not: its owner could
        # swap the way to it.
        found.append(f"{problem}: another user could change the way to {directory} and where the bitmap goes")
    device = f"{os.major(info.st_dev)}:{os.minor(info.st_dev)}"
    tree = BlockTree.read(root)
    holder = tree.node_by_major_minor(device)
    if holder is not None:
        under = tree.nodes_under(holder)
        if any(name.startswith("md") for name in under):
            found.append(f"{directory} is on an md array ({holder}): a bitmap must not live on an array")
        shared = sorted(under & set(members))
        if shared:
            found.append(f"{directory} is on {', '.join(shared)}, a member of this array: the bitmap must outlive it")
    return found
