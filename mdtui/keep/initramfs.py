"""Read one file out of an initramfs image, as lsinitramfs/lsinitrd do: uncompressed early cpio archives
(microcode), then the main archive through the distribution's own decompressor (zstd, gzip, xz, lz4, bzip2)."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import IO

from mdtui.probe.root import SystemRoot
from mdtui.probe.system import kernel_release

_NEWC = (b"070701", b"070702")
_HEADER = 110
_TRAILER = "TRAILER!!!"
# An initramfs member we want to read (mdadm.conf) is small; a larger one is not read into memory.
WANTED_LIMIT = 1 << 20
# Names longer than this are damage, not a path.
NAME_LIMIT = 4096
DECOMPRESS_TIMEOUT_S = 120.0
_DECOMPRESSORS: tuple[tuple[bytes, tuple[str, ...]], ...] = (
    (b"\x28\xb5\x2f\xfd", ("zstd", "-dcq")),
    (b"\x1f\x8b", ("gzip", "-dc")),
    (b"\xfd7zXZ\x00", ("xz", "-dc")),
    (b"\x02\x21\x4c\x18", ("lz4", "-dc")),
    (b"BZh", ("bzip2", "-dc")),
    (b"\x5d\x00\x00", ("xz", "--format=lzma", "-dc")),
)
# Where each distribution's initramfs keeps mdadm.conf.
CONF_PATHS = ("etc/mdadm/mdadm.conf", "etc/mdadm.conf")


class InitramfsError(Exception):
    """The image could not be read (damaged, an unknown compression, a missing decompressor)."""


@dataclass
class InitramfsContents:
    path: str
    names: list[str] = field(default_factory=list)
    files: dict[str, bytes] = field(default_factory=dict)  # the wanted members that were found
    compression: str | None = None  # the decompressor used for the main archive


def initramfs_path(root: SystemRoot, family: str, release: str | None = None) -> str | None:
    """The running kernel's initramfs: /boot/initrd.img-REL (Debian) or /boot/initramfs-REL.img (dracut)."""
    release = release or kernel_release(root)
    if release == "unknown":
        return None
    candidates = [f"/boot/initrd.img-{release}", f"/boot/initramfs-{release}.img"]
    if family != "debian":
        candidates.reverse()
    for candidate in candidates:
        if root.path(candidate).is_file():
            return candidate
    return candidates[0]


def _read_exact(stream: IO[bytes], size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = stream.read(size - len(data))
        if not chunk:
            break
        data += chunk
    return data


def _skip(stream: IO[bytes], size: int) -> bool:
    while size > 0:
        chunk = stream.read(min(size, 1 << 16))
        if not chunk:
            return False
        size -= len(chunk)
    return True


def _pad(n: int) -> int:
    return (4 - n % 4) % 4


def _read_archive(stream: IO[bytes], wanted: set[str], contents: InitramfsContents, first: bytes = b"") -> int:
    """Members of one newc archive up to its trailer; returns the bytes consumed (including ``first``)."""
    consumed = 0
    pending = first
    while True:
        header = pending + _read_exact(stream, _HEADER - len(pending))
        pending = b""
        consumed += len(header)
        if len(header) < _HEADER:
            raise InitramfsError(f"{contents.path}: the archive ends before its trailer (truncated?)")
        if header[:6] not in _NEWC:
            raise InitramfsError(f"{contents.path}: not a newc cpio header at byte {consumed - _HEADER}")
        try:
            fields = [int(header[6 + 8 * i : 14 + 8 * i], 16) for i in range(13)]
        except ValueError:
            raise InitramfsError(f"{contents.path}: a damaged cpio header") from None
        size, name_size = fields[6], fields[11]
        if name_size > NAME_LIMIT:
            raise InitramfsError(f"{contents.path}: a cpio name of {name_size} bytes")
        raw_name = _read_exact(stream, name_size + _pad(_HEADER + name_size))
        consumed += len(raw_name)
        name = raw_name[:name_size].rstrip(b"\x00").decode("utf-8", "replace")
        if name == _TRAILER:
            return consumed
        name = name.removeprefix("./").lstrip("/")
        contents.names.append(name)
        padded = size + _pad(size)
        if name in wanted and size <= WANTED_LIMIT:
            data = _read_exact(stream, padded)
            contents.files[name] = data[:size]
            consumed += len(data)
        else:
            if not _skip(stream, padded):
                raise InitramfsError(f"{contents.path}: the archive ends inside {name}")
            consumed += padded


def read_initramfs(path: str, wanted: Iterable[str] = CONF_PATHS, *, host_path: str | None = None) -> InitramfsContents:
    """Every member name of the image at ``path`` and the bytes of the ``wanted`` members.

    ``host_path`` is where the image is on this machine (a captured root); ``path`` names it in messages.
    """
    contents = InitramfsContents(path)
    wanted_set = set(wanted)
    try:
        handle = open(host_path or path, "rb")  # noqa: SIM115 - handed to the decompressor below
    except OSError as exc:
        raise InitramfsError(f"cannot read {path}: {exc.strerror}") from None
    with handle:
        while True:
            # Early archives are padded with zeros up to the next one.
            magic = handle.read(6)
            while magic and not magic.strip(b"\x00"):
                magic = handle.read(6)
            if not magic:
                return contents
            stripped = magic.lstrip(b"\x00")
            if stripped != magic:
                magic = stripped + _read_exact(handle, 6 - len(stripped))
            if magic in _NEWC:
                _read_archive(handle, wanted_set, contents, magic)
                continue
            _decompress(handle, magic, path, wanted_set, contents)
            return contents


def _decompress(handle: IO[bytes], magic: bytes, path: str, wanted: set[str], contents: InitramfsContents) -> None:
    argv = next((argv for prefix, argv in _DECOMPRESSORS if magic.startswith(prefix)), None)
    if argv is None:
        raise InitramfsError(f"{path}: unknown compression (starts with {magic.hex()})")
    if shutil.which(argv[0]) is None:
        raise InitramfsError(f"{path} is {argv[0]}-compressed and {argv[0]} is not installed")
    contents.compression = argv[0]
    # The decompressor reads the file descriptor itself: put it where the compressed archive starts.
    os.lseek(handle.fileno(), handle.tell() - len(magic), os.SEEK_SET)
    with subprocess.Popen(argv, stdin=handle, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL) as proc:
        assert proc.stdout is not None
        try:
            _read_archive(proc.stdout, wanted, contents)
        finally:
            proc.stdout.close()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=DECOMPRESS_TIMEOUT_S)
            if proc.poll() is None:
                proc.kill()
