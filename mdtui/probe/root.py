"""A system root: every /sys and /proc path is built from it, so tests can read captured trees."""

from __future__ import annotations

import os
from pathlib import Path


class SystemRoot:
    """Reads files below a root directory ("/" on a live system) and never raises on a missing one."""

    def __init__(self, root: str | os.PathLike[str] = "/") -> None:
        self.root = Path(root)

    @property
    def is_live(self) -> bool:
        return self.root.resolve() == Path("/")

    def path(self, absolute: str) -> Path:
        """Map an absolute system path such as "/sys/block" into this root."""
        return self.root / absolute.lstrip("/")

    def to_system(self, path: Path) -> str:
        """Map a path inside this root back to the absolute path the system would use."""
        for base in (self.root, Path(os.path.realpath(self.root))):
            try:
                return "/" + str(path.relative_to(base)).lstrip("./")
            except ValueError:
                continue
        return str(path)

    def read_text(self, absolute: str | Path) -> str | None:
        path = absolute if isinstance(absolute, Path) else self.path(absolute)
        try:
            return path.read_text(errors="replace").strip()
        except (OSError, ValueError):
            return None

    def read_int(self, absolute: str | Path) -> int | None:
        text = self.read_text(absolute)
        if text is None:
            return None
        try:
            return int(text.split()[0], 0) if text.startswith("0x") else int(text.split()[0])
        except (ValueError, IndexError):
            return None

    def listdir(self, absolute: str | Path) -> list[str]:
        path = absolute if isinstance(absolute, Path) else self.path(absolute)
        try:
            return sorted(os.listdir(path))
        except OSError:
            return []

    def link_name(self, absolute: str | Path) -> str | None:
        """Last component of where a link chain points, whether or not the target exists.

        Captured trees keep links such as ``driver -> ../../bus/pci/drivers/nvme`` whose empty target
        directory a git checkout does not keep; the name is all that is needed.
        """
        path = absolute if isinstance(absolute, Path) else self.path(absolute)
        if not path.is_symlink():
            return None
        return Path(os.path.realpath(path)).name

    def resolve(self, absolute: str | Path) -> Path | None:
        """Resolve symlinks inside the root; captured trees keep sysfs's relative links."""
        path = absolute if isinstance(absolute, Path) else self.path(absolute)
        try:
            return path.resolve(strict=True)
        except (OSError, RuntimeError):
            return None
